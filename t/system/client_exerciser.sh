#!/bin/bash
# client_exerciser.sh: t/system/fsexer (random reads, writes, mapped reads and
# writes, truncates, fsyncs, reopens, every read checked against a shadow
# copy) on the mount over RPC/RDMA read-write, read-read and TCP, each file
# also read through a second mount of the same export after every close.
# EXER_SEEDS seeds (default 2, each printed) of EXER_OPS operations (1500) per
# transport; make check-posix runs 20 seeds of more.
. "$(dirname "$0")/client_lib.sh"
need_fuse
EXER=$top_builddir/t/system/fsexer
[ -x "$EXER" ] || skip_all "t/system/fsexer was not built (make check builds it)"
scratch
E=$T_SCRATCH/exp
mkdir -p "$E"
start_server S -d "$E" -m both || skip_all "the test server does not start"
seeds=${EXER_SEEDS:-2}
ops=${EXER_OPS:-1500}
base=${EXER_SEED_BASE:-$(date +%s)}

plan 3
for tr in rdma-rw rdma-rr tcp; do
	case $tr in
	rdma-rw) o="port=$S_RDMA,mode=read-write" ;;
	rdma-rr) o="port=$S_RDMA,mode=read-read" ;;
	tcp) o="proto=tcp,port=$S_TCP" ;;
	esac
	A=$T_SCRATCH/$tr-a B=$T_SCRATCH/$tr-b
	mkdir -p "$A" "$B"
	if ! do_mount "$o" "127.0.0.1:$E" "$A" || ! do_mount "$o" "127.0.0.1:$E" "$B"; then
		ok 1 "fsexer over $tr: cannot mount"
		continue
	fi
	failed=0
	for i in $(seq 1 "$seeds"); do
		seed=$((base + i))
		"$EXER" -s "$seed" -n "$ops" -2 "$B/exer-$tr" "$A/exer-$tr" > "$T_SCRATCH/exer.out" 2>&1 ||
			{ failed=$((failed + 1)); sed 's/^/# /' "$T_SCRATCH/exer.out"; }
	done
	check "fsexer over $tr: $seeds seeds from $((base + 1)), $ops operations each" test $failed -eq 0
	umount "$A" "$B"
done
exit 0
