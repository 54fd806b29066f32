#!/bin/bash
# ceph_bench.sh OUTDIR: make bench-ceph (issue 16). 1 MiB (BENCH_CEPH_RECORD) WRITE (UNSTABLE,
# then COMMIT) and READ by 4 client threads on a throwaway one-node CephFS
# (t/system/ceph_lib.sh), three ways side by side in every round:
#   direct  libcephfs driven directly (t/bench/ceph_direct: one mount, 4
#           threads, ll_write + ll_fsync, then ll_read), nothing of NFS
#   1head   two nfsrdma-client bench processes of 2 threads each, both
#           through head A (nfsrdma-server, RPC/RDMA read-write on the soft
#           provider, a cephfs export)
#   2heads  the same two processes, one through head A, one through head B
#   1proc   one nfsrdma-client bench process of 4 threads through head A:
#           one client of 4 threads, as ceph_direct is (two processes
#           pay for two clients' loops on the same two cores)
#   posix   the same two processes through head A to a tmpfs export beside
#           the CephFS one: what the RPC/RDMA path alone gives here
# Every libcephfs client here (the heads and ceph_direct) runs without its
# object cacher (client_oc = false): reads and writes go to the OSD, the
# same work for both ways (with it, ceph_direct reads back what it has just
# written from its own memory, at memcpy speed), and without gathering
# libcephfs's debug log in memory (debug_client and debug_objecter 0/0; Ceph's
# defaults, 0/5 and 0/1, take a lock and wake its log thread on every call,
# which more than doubled the head's context switches per READ; both ways
# pay or save it alike: BENCH_CEPH_DEBUG=default keeps Ceph's levels).
# Figures: MB/s of all threads per pass (the two processes start each pass
# together; all bytes over the time to the last one's end); CPU per
# MiB of the process that drives libcephfs (ceph_direct; head A, the soft
# provider's copies included, which run in its threads and which a NIC would
# do; and head A's context switches per MiB), and of the whole machine
# (/proc/stat busy time: the cluster's daemons and the bench clients too; on
# a machine this small, what the ways compete for); medians of the rounds
# with min..max; OUTDIR/ceph.csv has every sample. Ratios: 1head / direct (the
# issue's goal: >= 0.8), 1proc / direct, 2heads / 1head and 1head / posix.
# Figures only: nothing here is a timed assertion.
# Environment: BENCH_ROUNDS (5: with 3, single ratios moved by 0.1 between runs
# minutes apart), BENCH_CEPH_MIB (256: MiB per thread; with
# 32, passes of a tenth of a second, what each pass pays once weighed enough
# to make one head write at 0.35 of libcephfs and two heads at twice one),
# BENCH_CEPH_RECORD (1m: the record size, 4k to 1m, for both ways),
# BENCH_CEPH_SERVER (settings added to the heads' server section, e.g.
# "adaptive_poll_us = 0;"), BENCH_CEPH_CLIENT (mount options added to the
# bench clients' -o, e.g. "reg=zerocopy").
. "$(dirname "$0")/../system/client_lib.sh"
. "$(dirname "$0")/bench_lib.sh"
. "$(dirname "$0")/../system/ceph_lib.sh"
ceph_need
SERVER=$top_builddir/server/nfsrdma-server
DIRECT=$top_builddir/t/bench/ceph_direct
[ -x "$SERVER" ] && [ -x "$CLIENT" ] || skip_all "needs nfsrdma-server and nfsrdma-client"
[ -x "$DIRECT" ] || skip_all "t/bench/ceph_direct is not built (make bench-ceph builds it)"
out=${1:-bench-ceph}
mkdir -p "$out"
out=$(cd "$out" && pwd)
rounds=${BENCH_ROUNDS:-5}
[ "$rounds" -ge 3 ] || rounds=3
mib=${BENCH_CEPH_MIB:-256}
rec=${BENCH_CEPH_RECORD:-1m}
case $rec in
4k | 8k | 16k | 32k | 64k | 128k | 256k | 512k) rec_kib=${rec%k} ;;
1m) rec_kib=1024 ;;
*) skip_all "BENCH_CEPH_RECORD=$rec: not one of 4k 8k ... 512k 1m" ;;
esac
scratch
trap 'cleanup; ceph_stop; rm -rf "${EXP:-}"' EXIT
raw=$out/ceph.csv
echo "way,pass,figure,round,value" > "$raw"

plan 2
ceph_start || { ok 1 "the mini cluster starts"; exit 1; }
CCONF=$T_SCRATCH/ceph.conf
{
	cat "$CEPH_CONF"
	printf '\n[client]\nclient_oc = false\n'
	[ "${BENCH_CEPH_DEBUG:-}" = default ] || printf 'debug_client = 0/0\ndebug_objecter = 0/0\n'
} > "$CCONF"
EXP=$(mktemp -d /dev/shm/nfsrdma-cb.XXXXXX) || skip_all "no tmpfs at /dev/shm"
chmod 777 "$EXP"

# head H: a cephfs export /ceph on its own ports; 0 when it serves
head_start() {
	local h=$1 tcp rdma
	tcp=$(free_port) rdma=$(free_port)
	eval "RDMA_$h=$rdma"
	cat > "$T_SCRATCH/$h.conf" << CONF
log = { level = "warning"; };
rdma = { provider = "soft"; };
server = {
	listen = ["127.0.0.1"];
	rdma_port = $rdma;
	tcp_port = $tcp;
	threads = 4; ${BENCH_CEPH_SERVER:-}
	pidfile = "$T_SCRATCH/$h.pid";
	control_socket = "$T_SCRATCH/$h.sock";
	handle_key_file = "$T_SCRATCH/handle.key";
	exports = ( { path = "/ceph"; clients = ["127.0.0.1"]; access = "rw"; root_squash = false;
		backend = "cephfs";
		ceph = { conf_file = "$CCONF"; client_id = "$CEPH_CLIENT_ID";
			 keyring = "$CEPH_KEYRING"; mount_timeout_s = 30; }; },
		{ path = "$EXP"; clients = ["127.0.0.1"]; access = "rw"; root_squash = false; } );
};
CONF
	"$SERVER" -f "$T_SCRATCH/$h.conf" 2> "$T_SCRATCH/$h.log" || {
		sed 's/^/# /' "$T_SCRATCH/$h.log"
		return 1
	}
	T_PIDS="$T_PIDS $(cat "$T_SCRATCH/$h.pid")"
}
head_start A && head_start B
ok $? "two heads serve the same CephFS"

record() { echo "$1,$2,$3,$4,$5" >> "$raw"; }
pid_a=$(cat "$T_SCRATCH/A.pid")

# Around each pass of bench (both processes call it): the pass, the time,
# head A's CPU nanoseconds and context switches (timeslices), all its threads
# (schedstat), and the machine's busy
# CPU in clock ticks (/proc/stat: all but idle and iowait). At its start, a pass
# waits (up to 60 s) for the other process to get there too, so that the four
# threads start together as ceph_direct's do.
cat > "$T_SCRATCH/hook.sh" << 'HOOK'
#!/bin/sh
# hook.sh PID FILE start|end TEST THREADS RECORD
[ "$3" = start ] && sh "$BENCH_START_TOGETHER" "$2.$4" "$BENCH_PROCS"
busy=$(awk '$1 == "cpu" {print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat)
cat /proc/$1/task/*/schedstat | awk -v when="$3" -v test="$4" -v now="$(date +%s.%N)" \
	-v busy="$busy" '{ns += $1; sw += $3} END {print when, test, now, ns + 0, busy, sw + 0}' >> "$2"
HOOK
chmod 755 "$T_SCRATCH/hook.sh"

# direct ROUND
direct() {
	"$DIRECT" "$CCONF" "$CEPH_CLIENT_ID" "$CEPH_KEYRING" 4 "$mib" "$rec_kib" > "$T_SCRATCH/d.out" \
		2>&1 || { diag "direct: $(tail -1 "$T_SCRATCH/d.out")"; return 1; }
	while read -r pass mbps cpu machine; do
		record direct "$pass" mb_s "$1" "$mbps"
		record direct "$pass" cpu_us_mib "$1" "$cpu"
		record direct "$pass" machine_us_mib "$1" "$machine"
	done < "$T_SCRATCH/d.out"
}

# heads WAY ROUND EXPORT PORT...: a bench process per port, 4 threads among them, at once
heads() {
	local way=$1 r=$2 exp=$3 k=0 port failed=0 pass
	shift 3
	export BENCH_PROCS=$#
	rm -rf "$T_SCRATCH"/h.*.csv "$T_SCRATCH"/cpu*
	for port in "$@"; do
		k=$((k + 1))
		"$CLIENT" bench "127.0.0.1:$exp" -q -t write,read -r "$rec" \
			-o "port=$port,provider=soft${BENCH_CEPH_CLIENT:+,$BENCH_CEPH_CLIENT}" \
			-j $((4 / BENCH_PROCS)) -s "${mib}m" --csv "$T_SCRATCH/h.$k.csv" \
			--hook "$T_SCRATCH/hook.sh $pid_a $T_SCRATCH/cpu" > "$T_SCRATCH/h.$k.out" 2>&1 &
	done
	for port in "$@"; do wait -n || failed=1; done
	[ "$failed" = 0 ] || { diag "$way: $(tail -n 2 "$T_SCRATCH"/h.*.out)"; return 1; }
	for pass in write read; do
		# MB/s of all four threads: every byte of the pass over the time from
		# its start to the last end (not the sum of the processes' own rates,
		# which counts the time one runs alone at its rate alone); head A's and
		# the machine's CPU per MiB over the same time (head A's only for the
		# ways through A alone)
		sort -k3 -g "$T_SCRATCH/cpu" | awk -v p="$pass" -v mib=$((4 * mib)) -v w="$way" -v r="$r" \
			-v hz="$(getconf CLK_TCK)" \
			'$2 == p && $1 == "start" && !s {s = 1; t0 = $3; c0 = $4; m0 = $5; w0 = $6}
			$2 == p && $1 == "end" {t1 = $3; c1 = $4; m1 = $5; w1 = $6}
			END {printf "%s,%s,mb_s,%s,%.1f\n", w, p, r, mib * 1048576 / 1e6 / (t1 - t0)
			if (w == "2heads") exit
			printf "%s,%s,cpu_us_mib,%s,%.1f\n", w, p, r, (c1 - c0) / 1e3 / mib
			printf "%s,%s,machine_us_mib,%s,%.1f\n", w, p, r, (m1 - m0) * 1e6 / hz / mib
			printf "%s,%s,head_switches_mib,%s,%.1f\n", w, p, r, (w1 - w0) / mib}' >> "$raw"
	done
}

echo "# bench-ceph: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $rounds rounds, 4 threads x $mib MiB, records of $rec"
failed=0
for r in $(seq 1 "$rounds"); do
	direct "$r" || failed=1
	heads 1head "$r" /ceph "$RDMA_A" "$RDMA_A" || failed=1
	heads 2heads "$r" /ceph "$RDMA_A" "$RDMA_B" || failed=1
	heads 1proc "$r" /ceph "$RDMA_A" || failed=1
	heads posix "$r" "$EXP" "$RDMA_A" "$RDMA_A" || failed=1
	echo "# round $r of $rounds done, load $(cut -d' ' -f1-3 /proc/loadavg)"
done
ok $failed "every run finished: every sample in $raw"

medians "$raw" "$T_SCRATCH/stats"
echo "bench-ceph: way    pass  figure            median (min..max, n)"
while IFS=, read -r w p fig md lo hi k; do
	printf "bench-ceph: %-6s %-5s %-14s %9s   (%s..%s, %s)\n" "$w" "$p" "$fig" "$md" "$lo" "$hi" "$k"
done < "$stats"
# vs WAY1 WAY2: the ratio of their MB/s in pass $p
vs() { ratio "$(med "$1" "$p" mb_s)" "$(med "$2" "$p" mb_s)"; }
for p in write read; do
	cpu_head=$(med 1head "$p" cpu_us_mib) cpu_direct=$(med direct "$p" cpu_us_mib)
	echo "bench-ceph: $p: one head / libcephfs $(vs 1head direct) (goal >= 0.8)," \
		"one process of 4 threads through it / libcephfs $(vs 1proc direct)," \
		"two heads / one head $(vs 2heads 1head)," \
		"one head / the same head's tmpfs export $(vs 1head posix);" \
		"CPU per MiB: head $cpu_head us = libcephfs alone $cpu_direct" \
		"+ $(awk -v a="$cpu_head" -v b="$cpu_direct" 'BEGIN {printf "%.0f", a - b}') (NFS, RPC/RDMA, soft provider);" \
		"tmpfs export $(med posix "$p" cpu_us_mib) us;" \
		"the machine's CPU per MiB: one head $(med 1head "$p" machine_us_mib) us, libcephfs alone $(med direct "$p" machine_us_mib) us;" \
		"head A's context switches per MiB: one head $(med 1head "$p" head_switches_mib)," \
		"one process $(med 1proc "$p" head_switches_mib)"
done
