#!/bin/bash
# kclient-bench.sh: make lab-bench-server (issue 12). The Linux kernel's NFSv3
# client over RPC/RDMA on Soft-RoCE (rxe0) in front of the kernel's nfsd and
# of nfsrdma-server, both serving in one guest boot, rounds interleaved:
# sequential write and read of 1 MiB records and 4 KiB random reads (fio,
# O_DIRECT, so that every record is a call), medians, spread, and the ratios
# nfsrdma-server / nfsd. The guest half is kclient-bench-guest.sh. A
# benchmark, not a test: it prints figures, and fails only when a run fails.
# TAP; "1..0 # SKIP reason" when the lab cannot boot.
# Environment: see lab-common.sh; LAB_TIMEOUT (default 1200), BENCH_ROUNDS (5),
# BENCH_MB (file size, 16), BENCH_RAND_S (seconds of random reads, 4),
# BENCH_SPIN_US (the third server's rdma.poll_spin_us, 1000),
# BENCH_ADAPTIVE_US (the fourth's server.adaptive_poll_us, 5000),
# BENCH_BASE_SERVER (another build's nfsrdma-server: a fifth server, compared
# with the first in the same rounds).
# The whole test: nfsrdma-test-deadline: 1300
. "$(dirname "$0")/lab-common.sh"
lab_require
[ -x "$top_builddir/server/nfsrdma-server" ] || skip_all "server/nfsrdma-server is not built in $top_builddir"
grep -q '^#define HAVE_RDMACORE 1' "$top_builddir/config.h" ||
	skip_all "built without rdma-core: nothing can talk to rxe0"
command -v fio > /dev/null || skip_all "fio is not installed (scripts/install-deps.sh)"
if [ -n "${BENCH_BASE_SERVER:-}" ]; then
	[ -x "$BENCH_BASE_SERVER" ] || skip_all "BENCH_BASE_SERVER=$BENCH_BASE_SERVER is not a program"
	BENCH_BASE_SERVER=$(realpath "$BENCH_BASE_SERVER") # the guest starts elsewhere
fi
mkdir -p "$top_builddir/t/lab/bench" || exit 1
lab_guest_tap "$top_srcdir/t/lab/kclient-bench-guest.sh" "${LAB_TIMEOUT:-1200}" \
	-e "BENCH_ROUNDS=${BENCH_ROUNDS:-5}" -e "BENCH_MB=${BENCH_MB:-16}" \
	-e "BENCH_RAND_S=${BENCH_RAND_S:-4}" -e "BENCH_SPIN_US=${BENCH_SPIN_US:-1000}" \
	-e "BENCH_ADAPTIVE_US=${BENCH_ADAPTIVE_US:-5000}" -e "BENCH_OUT=$top_builddir/t/lab/bench" \
	-e "BENCH_BASE_SERVER=${BENCH_BASE_SERVER:-}" \
	-s "$top_builddir/t/lab/bench"
