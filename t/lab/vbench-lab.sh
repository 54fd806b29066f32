#!/bin/bash
# vbench-lab.sh OUTDIR: the verbs microbenchmark (nfsrdma-vbench) on Soft-RoCE
# (rxe0) inside the rdmalab guest; writes OUTDIR/vbench-rxe.csv and the table
# in OUTDIR/vbench-rxe.txt. The figures measure TCG emulation, not RDMA.
# rxe0 cannot reach 127.0.0.1: vbench listens and connects at the guest's
# RDMALAB_IP (--addr), as verbs_conformance does at VB_ADDR.
# Environment: see lab-common.sh; LAB_TIMEOUT (seconds, default 540);
# VBENCH_ARGS (default --quick).
set -u
out=${1:?usage: vbench-lab.sh OUTDIR}
. "$(dirname "$0")/lab-common.sh"
why=$(lab_skip_reason)
if [ -n "$why" ]; then
	echo "lab-bench-verbs: skipped: $why"
	exit 0
fi
bin=$top_builddir/nfsrdma-vbench
[ -x "$bin" ] || { echo "lab-bench-verbs: $bin is not built" >&2; exit 1; }
mkdir -p "$out" || exit 1
rm -f "$out/vbench-rxe.csv" "$out/vbench-rxe.txt"
start=$(date +%s)
"$lab/lab-run.sh" -t "$(lab_secs "${LAB_TIMEOUT:-540}")" -s "$out" -C "$top_builddir" \
	"'$bin' --device rxe0 --addr \$RDMALAB_IP ${VBENCH_ARGS:---quick} --csv '$out/vbench-rxe.csv' > '$out/vbench-rxe.txt'"
rc=$?
sed 's/^/lab-bench-verbs: /' "$out/vbench-rxe.txt" 2> /dev/null
echo "lab-bench-verbs: lab-run.sh exit $rc after $(($(date +%s) - start)) s; CSV in $out/vbench-rxe.csv"
[ $rc -eq 0 ] && [ -s "$out/vbench-rxe.csv" ]
