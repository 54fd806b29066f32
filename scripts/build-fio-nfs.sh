#!/bin/bash
# build-fio-nfs.sh [DIR]: build fio with its libnfs engine (Debian's fio package
# is built without it) from Debian's own fio source package, into DIR (default
# build/tools). The tests use it as an NFS client nobody here wrote. Idempotent.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$top/build/tools}
if [ -x "$dir/fio" ] && "$dir/fio" --enghelp 2>/dev/null | grep -qw nfs; then
	exit 0
fi
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
ver=$(apt-cache policy fio | sed -n 's/ *Candidate: *//p')   # e.g. 3.33-3
up=${ver%-*}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
for f in "fio_$ver.dsc" "fio_$up.orig.tar.gz"; do
	curl -fsS --retry 3 -o "$f" "$mirror/pool/main/f/fio/$f"
done
# the tarball must be the one the package's .dsc names
want=$(awk '/^Checksums-Sha256:/ {s = 1; next} /^[^ ]/ {s = 0} s && $3 == "fio_'"$up"'.orig.tar.gz" {print $1}' "fio_$ver.dsc")
echo "$want  fio_$up.orig.tar.gz" | sha256sum -c --quiet
tar xzf "fio_$up.orig.tar.gz"
cd "fio-$up"
./configure --enable-libnfs --disable-native > configure.log 2>&1
grep -q "NFS engine *yes" configure.log || { echo "build-fio-nfs: libnfs not found (libnfs-dev)" >&2; exit 1; }
make -j"$(nproc)" fio > make.log 2>&1
mkdir -p "$dir"
install -m 755 fio "$dir/fio"
echo "build-fio-nfs: $dir/fio $("$dir/fio" --version) with the nfs engine"
