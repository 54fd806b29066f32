#!/bin/bash
# bench_compare.sh OUTDIR: make bench-compare (issue 12). In one run: the soft
# provider's own limits (nfsrdma-vbench) and a local read of as much file data
# (4 threads, pread from the same tmpfs), then nfsrdma-server (threads = 4,
# tmpfs export) measured by `nfsrdma-client bench` over RPC/RDMA read-write,
# read-read and TCP: the bare NULL-call rate, READ and WRITE 1 MiB x 4
# threads, READ 128 KiB x 1, 4 KiB random READ x 1 and x 16 threads, 4 KiB
# random WRITE x 1, and the
# server's CPU time (user + system,
# /proc/PID/stat, sampled by bench's --hook exactly around the pass) per 4 KiB
# READ. Each variant (VARIANTS below: calls through the worker pool, on the
# event loop (both with the server's adaptive polling, the default), on the
# event loop without it, on the event loop with a fixed busy poll on both
# sides, on the event loop with 8 KiB inline sizes on both sides, and on the
# event loop with the calls root-squashed, as a user's) runs as
# its own daemon; rounds interleave the variants so that they share the
# machine's load. Prints the
# median and the spread (min..max) of every figure and the issue's ratios,
# with NFS over TCP against nfs-ganesha on the same machine where it is
# installed (t/bench/ganesha_compare.sh, soft provider only);
# writes OUTDIR/compare.csv (every sample) and OUTDIR/compare.png (gnuplot).
# Figures only: nothing here is a timed assertion.
# Environment: BENCH_ROUNDS (3), BENCH_QUICK=1 (smaller files),
# BENCH_PROVIDER (soft; rxe0 in the lab: make lab-bench-compare) and
# BENCH_ADDR (127.0.0.1; the device's address for another provider),
# BENCH_VARIANTS="inline nopoll" (those variants only, by name, separated by
# spaces: pool, inline, nopoll, spin, inline8k, squash),
# BENCH_BASE_SERVER=PATH (another build's nfsrdma-server, e.g. main before a
# change: measured first, with inline calls, as variant "base", so that the
# side-by-side ratios are the change's effect).
. "$(dirname "$0")/../system/client_lib.sh"
. "$(dirname "$0")/bench_lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "needs root (the server opens files by handle)"
SERVER=$top_builddir/server/nfsrdma-server
VBENCH=$top_builddir/nfsrdma-vbench
[ -x "$SERVER" ] && [ -x "$CLIENT" ] && [ -x "$VBENCH" ] || skip_all "needs nfsrdma-server, -client, -vbench"
out=${1:-bench-compare}
mkdir -p "$out"
out=$(cd "$out" && pwd)
rounds=${BENCH_ROUNDS:-3}
[ "$rounds" -ge 3 ] || rounds=3
if [ "${BENCH_QUICK:-0}" = 1 ]; then
	s_null=8m s_1m=32m s_128k=16m s_4k1=8m s_4k16=8m
else
	s_null=32m s_1m=128m s_128k=64m s_4k1=32m s_4k16=32m
fi
# name|lines added to the server section|lines added to the rdma sections
# of the server's and the client's configurations[|the export's squashing,
# root_squash = false without]: the variants measured
# side by side (server.inline_calls: every call through the worker pool, or
# cheap ones run on the event loop that received them; the server's loops
# adapt their busy polling by default, server.adaptive_poll_us = 0 turns it
# off; rdma.poll_spin_us and server.tcp_poll_spin_us: a fixed busy poll before
# sleeping, RPC/RDMA on both sides, the server's NFS/TCP loops;
# rdma.inline_send and inline_recv at 8 KiB: 4 KiB of READ or WRITE data
# travels in the Send instead of a chunk; root_squash: the bench's calls,
# made as root, mapped to 65534, as a user's are not root)
VARIANTS=(
	"pool|inline_calls = false;|"
	"inline|inline_calls = true;|"
	"nopoll|inline_calls = true; adaptive_poll_us = 0;|"
	"spin|inline_calls = true; tcp_poll_spin_us = 50;|poll_spin_us = 50;"
	"inline8k|inline_calls = true;|inline_send = 8192; inline_recv = 8192;"
	"squash|inline_calls = true;||root_squash = true;"
)
if [ -n "${BENCH_VARIANTS:-}" ]; then
	for i in "${!VARIANTS[@]}"; do
		case " $BENCH_VARIANTS " in *" ${VARIANTS[$i]%%|*} "*) ;; *) unset "VARIANTS[$i]" ;; esac
	done
	VARIANTS=("${VARIANTS[@]}")
	[ ${#VARIANTS[@]} -gt 0 ] || skip_all "BENCH_VARIANTS=$BENCH_VARIANTS names no variant"
fi
SERVERS=()
for v in "${VARIANTS[@]}"; do SERVERS+=("$SERVER"); done # each variant's daemon
prov=${BENCH_PROVIDER:-soft} addr=${BENCH_ADDR:-127.0.0.1}
if [ -n "${BENCH_BASE_SERVER:-}" ]; then
	[ -x "$BENCH_BASE_SERVER" ] || skip_all "BENCH_BASE_SERVER=$BENCH_BASE_SERVER is not a program"
	VARIANTS=("base|inline_calls = true;|" "${VARIANTS[@]}")
	SERVERS=("$BENCH_BASE_SERVER" "${SERVERS[@]}")
fi
scratch
T_SCRATCH_EXP=$(mktemp -d /dev/shm/nfsrdma-bc.XXXXXX) || skip_all "no tmpfs at /dev/shm"
chmod 755 "$T_SCRATCH_EXP"
trap 'cleanup; rm -rf "$T_SCRATCH_EXP"' EXIT # client_lib's cleanup stops the daemons
raw=$out/compare.csv
echo "variant,transport,figure,round,value" > "$raw"
tick=$(getconf CLK_TCK)

# start_variant I NAME LINES RDMA_LINES [EXPORT_LINES]: a daemon of its own; sets PID_I
# RPORT_I TPORT_I; the client's configuration for it is $T_SCRATCH/vI/client.conf.
start_variant() {
	local i=$1 name=$2 lines=$3 rlines=$4 xlines=${5:-root_squash = false;} rport tport
	local dir=$T_SCRATCH/v$1
	rport=$(free_port)
	tport=$(free_port)
	mkdir -p "$dir" "$T_SCRATCH_EXP/v$i"
	chmod 777 "$T_SCRATCH_EXP/v$i" # a squashed caller creates its files too
	echo "rdma = { $rlines };" > "$dir/client.conf"
	cat > "$dir/srv.conf" << CONF
rdma = { provider = "$prov"; $rlines };
server = {
	listen = ["$addr"];
	rdma_port = $rport;
	tcp_port = $tport;
	threads = 4;
	modes = ["read-write", "read-read"];
	trusted_peers = true; # loopback: the registration cache in read-read too
	pidfile = "$dir/server.pid";
	control_socket = "$dir/ctl.sock";
	handle_key_file = "$dir/handle.key";
	$lines
	exports = ( { path = "$T_SCRATCH_EXP/v$i"; clients = ["$addr"]; access = "rw"; $xlines } );
};
CONF
	"${SERVERS[$i]}" -f "$dir/srv.conf" || return 1
	T_PIDS="$T_PIDS $(cat "$dir/server.pid")"
	eval "PID_$i=$(cat "$dir/server.pid") RPORT_$i=$rport TPORT_$i=$tport"
	echo "# variant $name: ${SERVERS[$i]} pid $(cat "$dir/server.pid")${lines:+, $lines}${rlines:+ $rlines}"
}

# record VARIANT TRANSPORT FIGURE ROUND VALUE
record() {
	echo "$1,$2,$3,$4,$5" >> "$raw"
}

# The hook bench runs around each pass: the server's utime + stime in ticks.
cat > "$T_SCRATCH/hook.sh" << 'HOOK'
#!/bin/sh
# hook.sh PID FILE start|end TEST THREADS RECORD
set -- "$@"
t=$(sed 's/.*) //' /proc/$1/stat | awk '{print $12 + $13}')
echo "$3 $4 $5 $6 $t" >> "$2"
HOOK
chmod 755 "$T_SCRATCH/hook.sh"

# bench_one I VARIANT TRANSPORT OPTS ROUND: every client workload against one daemon.
bench_one() {
	local i=$1 v=$2 tr=$3 opts=$4 r=$5 pid cpu=$T_SCRATCH/cpu.$$ csv=$T_SCRATCH/b.csv
	pid=$(eval echo "\$PID_$i")
	run() { # run FIGURE FIELD bench-args...: FIELD 8 = MB/s, 9 = IOPS
		local fig=$1 field=$2
		shift 2
		rm -f "$csv" "$cpu"
		if ! "$CLIENT" bench "$addr:$T_SCRATCH_EXP/v$i" -o "$opts" -q --csv "$csv" \
			--hook "$T_SCRATCH/hook.sh $pid $cpu" "$@" > "$T_SCRATCH/b.out" 2>&1; then
			diag "$v $tr $fig: $(tail -3 "$T_SCRATCH/b.out")"
			return 1
		fi
		record "$v" "$tr" "$fig" "$r" "$(awk -F, -v f="$field" 'NR == 2 {print $f}' "$csv")"
		# server CPU microseconds per call over the timed pass
		awk -v tick="$tick" -v ops="$(awk -F, 'NR == 2 {print $6}' "$csv")" \
			'$1 == "start" {s = $5} $1 == "end" {e = $5}
			END {if (ops > 0) printf "%.1f\n", (e - s) * 1e6 / tick / ops}' "$cpu" > "$cpu.us"
		record "$v" "$tr" "$fig cpu_us" "$r" "$(cat "$cpu.us")"
	}
	run null_rate 9 -t null -r 4k -s $s_null -j 1 &&
		run read1m_x4_MBps 8 -t read -r 1m -s $s_1m -j 4 &&
		run write1m_x4_MBps 8 -t write -r 1m -s $s_1m -j 4 &&
		run read128k_x1_MBps 8 -t read -r 128k -s $s_128k -j 1 &&
		run rand4k_x1_iops 9 -t randread -r 4k -s $s_4k1 -j 1 &&
		run rand4k_x16_iops 9 -t randread -r 4k -s $s_4k16 -j 16 &&
		run rand4kw_x1_iops 9 -t randwrite -r 4k -s $s_4k1 -j 1
}

plan 3
echo "# bench-compare: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $rounds rounds"
case "$prov/$addr/${VB_SOFT_LOCAL_UNIX:-1}" in
soft/127.0.0.1/0 | soft/::1/0) echo "# soft provider on $addr: over TCP (VB_SOFT_LOCAL_UNIX=0)" ;;
soft/127.0.0.1/* | soft/::1/*)
	if [ "${VB_SOFT_CMA:-1}" = 0 ]; then
		echo "# soft provider on $addr: over AF_UNIX, the local carrier; RDMA data through the socket (VB_SOFT_CMA=0)"
	else
		echo "# soft provider on $addr: over AF_UNIX, the local carrier; RDMA Writes and Reads from 16 KiB copied between the processes"
	fi
	;;
esac
# A local reference for READ 1 MiB x 4: as much file data, read from the same
# tmpfs by 4 threads with 1 MiB preads into buffers of their own: the one
# copy out of the page cache that the server's READ makes before the
# transport's. The raw Write below copies one buffer that stays in the CPU's
# caches; a READ's file data comes from memory.
mkdir -p "$T_SCRATCH_EXP/local"
for k in 0 1 2 3; do
	dd if=/dev/zero of="$T_SCRATCH_EXP/local/f$k" bs=1M count="${s_1m%m}" status=none
done
local_read() {
	python3 -c '
import os, sys, threading, time
def read(path):
    fd, buf, off = os.open(path, os.O_RDONLY), memoryview(bytearray(1 << 20)), 0
    while (n := os.preadv(fd, [buf], off)) > 0:
        off += n
    os.close(fd)
ts = [threading.Thread(target=read, args=(p,)) for p in sys.argv[1:]]
t0 = time.perf_counter()
for t in ts:
    t.start()
for t in ts:
    t.join()
total = sum(os.path.getsize(p) for p in sys.argv[1:])
print("%.1f" % (total / 1e6 / (time.perf_counter() - t0)))
' "$T_SCRATCH_EXP"/local/f[0-3]
}
# the provider's limits: RDMA Write 1 MiB qd 4 and Send 4 KiB qd 16 (message rate)
for r in $(seq 1 "$rounds"); do
	record raw local read1m_x4_MBps "$r" "$(local_read)"
	"$VBENCH" --device "$prov" --addr "$addr" --sizes 4k,1m --depths 4,16 --time 0.3 --reps 1 \
		--csv "$T_SCRATCH/vb.csv" > /dev/null 2>&1 || continue
	record raw "$prov" write1m_qd4_MBps "$r" \
		"$(awk -F, '$2 == "bandwidth" && $3 == "write" && $4 == 1048576 && $5 == 4 {print $6}' "$T_SCRATCH/vb.csv")"
	record raw "$prov" send4k_qd16_msgps "$r" \
		"$(awk -F, '$2 == "bandwidth" && $3 == "send" && $4 == 4096 && $5 == 16 {printf "%.0f", $6 * 1e6 / 4096}' "$T_SCRATCH/vb.csv")"
	record raw "$prov" tcp1m_MBps "$r" \
		"$(awk -F, '$2 == "bandwidth" && $3 == "tcp" && $4 == 1048576 {print $6}' "$T_SCRATCH/vb.csv")"
done
rm -rf "$T_SCRATCH_EXP/local"

nv=${#VARIANTS[@]}
for i in $(seq 0 $((nv - 1))); do
	v=${VARIANTS[$i]}
	IFS='|' read -r name lines rlines xlines <<< "$v"
	start_variant "$i" "$name" "$lines" "$rlines" "$xlines" || skip_all "nfsrdma-server does not start"
done
failed=0
for r in $(seq 1 "$rounds"); do
	for i in $(seq 0 $((nv - 1))); do
		v=${VARIANTS[$i]%%|*}
		rport=$(eval echo "\$RPORT_$i") tport=$(eval echo "\$TPORT_$i")
		ro="port=$rport,provider=$prov,config=$T_SCRATCH/v$i/client.conf"
		bench_one "$i" "$v" rdma-rw "$ro,mode=read-write" "$r" || failed=1
		bench_one "$i" "$v" rdma-rr "$ro,mode=read-read" "$r" || failed=1
		bench_one "$i" "$v" tcp "proto=tcp,port=$tport" "$r" || failed=1
	done
	echo "# round $r of $rounds done, load $(cut -d' ' -f1-3 /proc/loadavg)"
done
ok $failed "every bench run finished: every sample in $raw"
# NFS over TCP against nfs-ganesha, in namespaces of its own (rpcbind)
why=
if [ "$prov" != soft ]; then
	why="on the soft provider only"
elif ! command -v ganesha.nfsd > /dev/null || ! command -v rpcbind > /dev/null; then
	why="nfs-ganesha or rpcbind is not installed (scripts/install-deps.sh)"
elif ! unshare --net --mount --propagation private true 2> /dev/null; then
	why="cannot make private network and mount namespaces here"
fi
if [ -n "$why" ]; then
	skip "NFS/TCP against nfs-ganesha: $why"
else
	unshare --net --mount --propagation private bash "$(dirname "$0")/ganesha_compare.sh" \
		"$raw" "$rounds" "${BENCH_QUICK:-0}"
	ok $? "nfsrdma-server and nfs-ganesha over TCP side by side, every run finished"
fi
# each daemon's own counters after the run: where its calls ran, and that no
# registration was left reachable by a client (0 in Read-Write)
for i in $(seq 0 $((nv - 1))); do
	python3 -c "
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b'stats\\n')
s.shutdown(socket.SHUT_WR)
print(s.makefile().read(), end='')
" "$T_SCRATCH/v$i/ctl.sock" 2>/dev/null |
		awk -v v="${VARIANTS[$i]%%|*}" '$1 ~ /^rdma\.(calls|calls_inline|inline_declined|remote_regs_now)$/ {
			printf "%s %s %s", (n++ ? "," : "bench-compare: [" v "] server counters:"), $1, $2}
			END {print ""}'
done

# median and spread of every (variant, transport, figure)
medians "$raw" "$T_SCRATCH/stats"

echo "bench-compare: figure                      variant    transport    median   (min..max, n)"
while IFS=, read -r v tr fig m lo hi n; do
	printf "bench-compare: %-27s %-10s %-10s %9s   (%s..%s, %s)\n" "$fig" "$v" "$tr" "$m" "$lo" "$hi" "$n"
done < "$stats"
w=$(med raw "$prov" write1m_qd4_MBps)
echo "bench-compare: ratios of medians (issue 12's table; goal in brackets)"
for i in $(seq 0 $((nv - 1))); do
	v=${VARIANTS[$i]%%|*}
	printf "bench-compare: [%s] READ 1m x4 rdma-rw / raw Write 1m qd4 (>= 0.9): %s\n" "$v" \
		"$(ratio "$(med "$v" rdma-rw read1m_x4_MBps)" "$w")"
	printf "bench-compare: [%s] READ 1m x4 rdma-rw / local read 1m x4 (pread from the same tmpfs; no goal): %s\n" \
		"$v" "$(ratio "$(med "$v" rdma-rw read1m_x4_MBps)" "$(med raw local read1m_x4_MBps)")"
	printf "bench-compare: [%s] READ 1m x4 rdma-rw / tcp (>= 1.0): %s   WRITE 1m x4: %s\n" "$v" \
		"$(ratio "$(med "$v" rdma-rw read1m_x4_MBps)" "$(med "$v" tcp read1m_x4_MBps)")" \
		"$(ratio "$(med "$v" rdma-rw write1m_x4_MBps)" "$(med "$v" tcp write1m_x4_MBps)")"
	printf "bench-compare: [%s] READ 128k x1 rdma-rw / rdma-rr (>= 1.4): %s\n" "$v" \
		"$(ratio "$(med "$v" rdma-rw read128k_x1_MBps)" "$(med "$v" rdma-rr read128k_x1_MBps)")"
	for j in 1 16; do
		printf "bench-compare: [%s] 4k randread x%s rdma-rw / tcp (>= 1.0): %s   rdma-rr / tcp: %s\n" "$v" $j \
			"$(ratio "$(med "$v" rdma-rw rand4k_x${j}_iops)" "$(med "$v" tcp rand4k_x${j}_iops)")" \
			"$(ratio "$(med "$v" rdma-rr rand4k_x${j}_iops)" "$(med "$v" tcp rand4k_x${j}_iops)")"
	done
	printf "bench-compare: [%s] 4k randwrite x1 rdma-rw / tcp (no goal): %s\n" "$v" \
		"$(ratio "$(med "$v" rdma-rw rand4kw_x1_iops)" "$(med "$v" tcp rand4kw_x1_iops)")"
	for tr in rdma-rw rdma-rr tcp; do
		printf "bench-compare: [%s] %s: 4k READ x1 rate / NULL rate (>= 0.8): %s; server CPU us per 4k READ (x16): %s\n" \
			"$v" $tr "$(ratio "$(med "$v" $tr rand4k_x1_iops)" "$(med "$v" $tr null_rate)")" \
			"$(med "$v" $tr "rand4k_x16_iops cpu_us")"
	done
done
for j in 1 4; do
	printf "bench-compare: 4k randread x%s over TCP, nfsrdma-server / nfs-ganesha (>= 1.5): %s   without adaptive polling: %s\n" $j \
		"$(ratio "$(med nfsrdma tcp rand4k_x${j}_iops)" "$(med ganesha tcp rand4k_x${j}_iops)")" \
		"$(ratio "$(med nfsrdma-nopoll tcp rand4k_x${j}_iops)" "$(med ganesha tcp rand4k_x${j}_iops)")"
done
if [ "$nv" -gt 1 ]; then
	echo "bench-compare: variants side by side, ratio of medians to ${VARIANTS[0]%%|*}"
	for i in $(seq 1 $((nv - 1))); do
		v=${VARIANTS[$i]%%|*} b=${VARIANTS[0]%%|*}
		for tr in rdma-rw rdma-rr tcp; do
			printf "bench-compare: %s / %s, %s: NULL %s, READ 1m x4 %s, 4k x1 %s, 4k x16 %s, CPU/READ %s, 4k WRITE x1 %s\n" \
				"$v" "$b" $tr \
				"$(ratio "$(med "$v" $tr null_rate)" "$(med "$b" $tr null_rate)")" \
				"$(ratio "$(med "$v" $tr read1m_x4_MBps)" "$(med "$b" $tr read1m_x4_MBps)")" \
				"$(ratio "$(med "$v" $tr rand4k_x1_iops)" "$(med "$b" $tr rand4k_x1_iops)")" \
				"$(ratio "$(med "$v" $tr rand4k_x16_iops)" "$(med "$b" $tr rand4k_x16_iops)")" \
				"$(ratio "$(med "$v" $tr "rand4k_x16_iops cpu_us")" "$(med "$b" $tr "rand4k_x16_iops cpu_us")")" \
				"$(ratio "$(med "$v" $tr rand4kw_x1_iops)" "$(med "$b" $tr rand4kw_x1_iops)")"
		done
	done
fi
cp "$stats" "$out/compare-medians.csv"
if command -v gnuplot > /dev/null; then
	# 4 KiB random READ IOPS (x1, x16) and NULL rate per variant and transport, medians
	awk -F, '$3 == "null_rate" || $3 == "rand4k_x1_iops" || $3 == "rand4k_x16_iops" {
		k = $1 " " $2; if (!(k in row)) {row[k] = ++n; name[n] = k}
		val[k, $3] = $4}
		END {for (i = 1; i <= n; i++) printf "\"%s\" %s %s %s\n", name[i],
			val[name[i], "null_rate"], val[name[i], "rand4k_x1_iops"], val[name[i], "rand4k_x16_iops"]}' \
		"$stats" > "$out/compare.dat"
	gnuplot << GP > /dev/null 2>&1
set terminal png size 900,500
set output "$out/compare.png"
set title "nfsrdma bench-compare: calls/s, medians of $rounds rounds"
set style data histograms
set style histogram clustered
set style fill solid border -1
set xtics rotate by -30
set ylabel "calls/s"
set yrange [0:*]
plot "$out/compare.dat" using 2:xtic(1) title "NULL", "" using 3 title "4k READ x1", "" using 4 title "4k READ x16"
GP
	check "the chart is a PNG: $out/compare.png" bash -c "head -c 8 '$out/compare.png' | grep -q PNG"
else
	skip "no gnuplot"
fi
exit 0
