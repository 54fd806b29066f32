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
lab_guest_tap "$top_srcdir/t/lab/client-knfsd-guest.sh" "${LAB_TIMEOUT:-800}"
