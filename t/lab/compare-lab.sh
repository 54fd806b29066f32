#!/bin/bash
# compare-lab.sh OUTDIR: make lab-bench-compare (issue 12). bench-compare
# (t/bench/bench_compare.sh) inside the rdmalab guest on Soft-RoCE: the same
# figures and ratios as on the soft provider, with nfsrdma-client and
# nfsrdma-server on rxe0 at the guest's RDMALAB_IP (BENCH_QUICK sizes, the
# inline variant only). Under TCG only the ratios mean anything. Passes the
# bench's TAP on; "1..0 # SKIP reason" when the lab cannot boot.
# Environment: see lab-common.sh; LAB_TIMEOUT (default 1200), BENCH_ROUNDS (3).
# The whole test: nfsrdma-test-deadline: 1300
set -u
out=${1:?usage: compare-lab.sh OUTDIR}
. "$(dirname "$0")/lab-common.sh"
lab_require
grep -q '^#define HAVE_RDMACORE 1' "$top_builddir/config.h" ||
	skip_all "built without rdma-core: nothing can talk to rxe0"
mkdir -p "$out" || exit 1
out=$(cd "$out" && pwd)
cat > "$out/guest.sh" << 'GUEST'
mountpoint -q /dev/shm || mount -t tmpfs shm /dev/shm
BENCH_ADDR=$RDMALAB_IP bash "$top_srcdir/t/bench/bench_compare.sh" "$BENCH_OUT"
GUEST
lab_guest_tap "$out/guest.sh" "${LAB_TIMEOUT:-1200}" -s "$out" -e "BENCH_OUT=$out" \
	-e BENCH_PROVIDER=rxe0 -e BENCH_QUICK=1 -e BENCH_VARIANTS=inline \
	-e "BENCH_ROUNDS=${BENCH_ROUNDS:-3}"
