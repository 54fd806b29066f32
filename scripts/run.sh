#!/bin/bash
# run.sh: install what is needed, build, and run the main job: check the sample
# configuration, start nfsrdma-server on the default software provider exporting
# a scratch directory, mount it with nfsrdma-client, move files through it, and
# stop cleanly. (Steps whose programs do not exist yet are reported as such.)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
scripts/install-deps.sh
B=$top/build/run
scripts/build.sh "$B" > "$top/build-run.log" 2>&1 || { tail -n 40 "$top/build-run.log"; exit 1; }
rm -f "$top/build-run.log"
echo "run: built in $B"

if [ -x "$B/nfsrdma-server" ]; then
	echo "run: checking etc/nfsrdma.conf"
	"$B/nfsrdma-server" -t -f "$top/etc/nfsrdma.conf"
else
	echo "run: nfsrdma-server is not built yet"
fi
