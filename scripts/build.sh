#!/bin/bash
# build.sh [BUILDDIR] [configure options...]: generate, configure and build out of tree.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$top/build}
shift || true
cd "$top"
[ -x configure ] && [ configure -nt configure.ac ] || ./autogen.sh
mkdir -p "$dir"
cd "$dir"
if [ ! -f Makefile ] || [ "$*" != "$(cat .nfsrdma-configure-args 2>/dev/null)" ]; then
	"$top/configure" "$@"
	echo "$*" > .nfsrdma-configure-args
fi
make -j"$(nproc)"
