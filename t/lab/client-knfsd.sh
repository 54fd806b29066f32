#!/bin/bash
# client-knfsd.sh: nfsrdma-client against the Linux kernel's nfsd, inside the
# Soft-RoCE lab (../shared/rdmalab): over TCP, and over RPC/RDMA on rxe0 when
# this build has the rdma-core provider (MOUNT goes to rpc.mountd over TCP).
# TAP; "1..0 # SKIP reason" when the lab cannot boot here. The guest half is
# client-knfsd-guest.sh.
# Environment: see lab-common.sh; LAB_TIMEOUT (default 800).
. "$(dirname "$0")/lab-common.sh"
lab_require
[ -x "$top_builddir/nfsrdma-client" ] || skip_all "nfsrdma-client is not built in $top_builddir"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$lab/lab-run.sh" -t "${LAB_TIMEOUT:-800}" -C "$top_builddir" -e "top_builddir=$top_builddir" \
	-e "top_srcdir=$top_srcdir" -f "$top_srcdir/t/lab/client-knfsd-guest.sh" > "$out" 2>&1
st=$?
case $st in
125)
	skip_all "the lab did not boot: $(grep -v '^$' "$out" | tail -n 3 | tr '\n' ' ')"
	;;
124)
	cat "$out"
	echo "not ok - the lab timed out"
	exit 1
	;;
esac
cat "$out"
exit 0
