#!/bin/bash
# client-knfsd.sh: nfsrdma-client against the Linux kernel's nfsd, inside the
# Soft-RoCE lab (../shared/rdmalab): over TCP, and over RPC/RDMA on rxe0 when
# this build has the rdma-core provider (MOUNT goes to rpc.mountd over TCP).
# TAP; "1..0 # SKIP reason" when the lab cannot boot here. The guest half is
# client-knfsd-guest.sh.
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$(pwd)}"
lab=${RDMALAB:-$top_srcdir/../shared/rdmalab}
[ -x "$lab/lab-run.sh" ] || lab=/work/shared/rdmalab
if [ ! -x "$lab/lab-run.sh" ]; then
	echo "1..0 # SKIP no rdmalab (set RDMALAB to ../shared/rdmalab)"
	exit 0
fi
if [ ! -x "$top_builddir/nfsrdma-client" ]; then
	echo "1..0 # SKIP nfsrdma-client is not built in $top_builddir"
	exit 0
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$lab/lab-run.sh" -t "${LAB_TIMEOUT:-800}" -C "$top_builddir" -e "top_builddir=$top_builddir" \
	-e "top_srcdir=$top_srcdir" -f "$top_srcdir/t/lab/client-knfsd-guest.sh" > "$out" 2>&1
st=$?
case $st in
125)
	echo "1..0 # SKIP the lab did not boot: $(grep -v '^$' "$out" | tail -n 3 | tr '\n' ' ')"
	exit 0
	;;
124)
	cat "$out"
	echo "not ok - the lab timed out"
	exit 1
	;;
esac
cat "$out"
exit 0
