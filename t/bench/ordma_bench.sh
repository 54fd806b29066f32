#!/bin/bash
# ordma_bench.sh OUTDIR: make bench-ordma (issue 23). 4 KiB random READs of a
# working set the server's cache holds, over RPC/RDMA read-write on the soft
# provider, against nfsrdma-server (threads = 4, inline calls on, a tmpfs
# export with ordma = true and a 256 MiB cache), by 1 and by 4 client
# processes: plain READ against -o ordma, side by side in every round, with
# the provider run two ways (see "engine" and "driven" below). Each client writes its 16 MiB file, reads it once in order
# (warming the server's cache, and the client's references with ordma), then
# is measured reading it in a shuffled order. Figures per (mode, clients,
# provider way):
# READs per second (all clients: every READ of the measured passes, which
# start together, over the time from their start to the last one's end), the
# median and 99th percentile latency
# (the clients' medians), and the server's CPU per READ over the measured
# passes, split into the soft provider's engine thread (RDMA work a real
# RNIC does in hardware) and everything else (the RPC work). Median of the
# rounds, with min..max; OUTDIR/ordma.csv has every sample. Figures only:
# nothing here is a timed assertion.
# Environment: BENCH_ROUNDS (3), BENCH_QUICK=1 (4 MiB files).
. "$(dirname "$0")/../system/client_lib.sh"
. "$(dirname "$0")/bench_lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "needs root (the server opens files by handle)"
SERVER=$top_builddir/server/nfsrdma-server
[ -x "$SERVER" ] && [ -x "$CLIENT" ] || skip_all "needs nfsrdma-server and nfsrdma-client"
out=${1:-bench-ordma}
mkdir -p "$out"
out=$(cd "$out" && pwd)
rounds=${BENCH_ROUNDS:-3}
[ "$rounds" -ge 3 ] || rounds=3
size=16m
[ "${BENCH_QUICK:-0}" = 1 ] && size=4m
scratch
EXP=$(mktemp -d /dev/shm/nfsrdma-ob.XXXXXX) || skip_all "no tmpfs at /dev/shm"
chmod 777 "$EXP"
trap 'cleanup; rm -rf "$EXP"' EXIT
raw=$out/ordma.csv
echo "mode,clients,figure,round,value" > "$raw"
tick=$(getconf CLK_TCK)
# One server per way the soft provider runs (both processes alike):
#   engine  VB_SOFT_CQ_DRIVE=0: its engine thread does all the RDMA work, on
#           its own thread, as a NIC would (the CPU split below is clean)
#   driven  the default: the RPC/RDMA loop does the receive side itself, the
#           fastest RPC path here, but an RDMA Read's answer then runs on the
#           server's loop too and counts as "RPC" CPU
# server PROV: start it; its port in RPORT_PROV, its pid in PID_PROV
server() {
	local prov=$1 rport tport
	rport=$(free_port) tport=$(free_port)
	cat > "$T_SCRATCH/$prov.conf" << CONF
log = { level = "warning"; };
rdma = { provider = "soft"; };
server = {
	listen = ["127.0.0.1"];
	rdma_port = $rport;
	tcp_port = $tport;
	threads = 4;
	trusted_peers = true;
	ordma = { cache = "256M"; };
	pidfile = "$T_SCRATCH/$prov.pid";
	control_socket = "$T_SCRATCH/$prov.sock";
	handle_key_file = "$T_SCRATCH/handle.key";
	exports = ( { path = "$EXP"; clients = ["127.0.0.1"]; access = "rw"; root_squash = false; ordma = true; } );
};
CONF
	env VB_SOFT_CQ_DRIVE="$(drive "$prov")" "$SERVER" -f "$T_SCRATCH/$prov.conf" ||
		skip_all "nfsrdma-server does not start"
	eval "RPORT_$prov=$rport PID_$prov=$(cat "$T_SCRATCH/$prov.pid")"
	T_PIDS="$T_PIDS $(cat "$T_SCRATCH/$prov.pid")"
}
drive() { [ "$1" = engine ] && echo 0 || echo 1; }
server engine
server driven

# The hook around each pass: at randread's start and end, the server's CPU
# ticks in its soft-engine thread and in all the others, and the time, taken
# at the last moment of the start hook and the first of the end hook (the
# pass is short: the hooks' own time would count in it). At its start, the
# measured pass waits (up to 60 s) for the other clients to get there too,
# so that all of them run it together.
cat > "$T_SCRATCH/hook.sh" << 'HOOK'
#!/bin/sh
# hook.sh PID FILE CLIENTS start|end TEST THREADS RECORD
[ "$5" = randread ] || exit 0
[ "$4" = end ] && now=$(date +%s.%N)
cpu=$(for t in /proc/$1/task/*; do
	printf '%s %s\n' "$(cat "$t/comm")" "$(sed 's/.*) //' "$t/stat" | awk '{print $12 + $13}')"
done | awk '$1 == "soft-engine" {e += $2; next} {o += $2} END {print e + 0, o + 0}')
if [ "$4" = start ]; then
	sh "$BENCH_START_TOGETHER" "$2.at" "$3"
	now=$(date +%s.%N)
fi
echo "$4 $now $cpu" >> "$2"
HOOK
chmod 755 "$T_SCRATCH/hook.sh"

record() { echo "$1,$2,$3,$4,$5" >> "$raw"; }

# run MODE CLIENTS PROV ROUND: CLIENTS bench processes at once against
# server PROV; their figures, keyed MODE,CLIENTS/PROV.
run() {
	local mode=$1 n=$2 prov=$3 r=$4 k cpu=$T_SCRATCH/cpu failed=0 port pid key
	eval "port=\$RPORT_$prov pid=\$PID_$prov"
	local opts="port=$port,provider=soft"
	key="$n/$prov"
	[ "$mode" = ordma ] && opts="$opts,ordma"
	rm -rf "$cpu" "$cpu".at.* "$T_SCRATCH"/b.*.csv
	for k in $(seq 1 "$n"); do
		env VB_SOFT_CQ_DRIVE="$(drive "$prov")" "$CLIENT" bench "127.0.0.1:$EXP" -o "$opts" -q \
			-t read,randread -r 4k -s $size --csv "$T_SCRATCH/b.$k.csv" \
			--hook "$T_SCRATCH/hook.sh $pid $cpu $n" > "$T_SCRATCH/b.$k.out" 2>&1 &
	done
	for k in $(seq 1 "$n"); do
		wait -n || failed=1
	done
	[ "$failed" = 0 ] || { diag "$mode x$n $prov: $(tail -2 "$T_SCRATCH"/b.*.out)"; return 1; }
	record "$mode" "$key" p50_us "$r" "$(cat "$T_SCRATCH"/b.*.csv | awk -F, '$1 == "randread" {print $13}' | sort -n | awk '{x[NR] = $1} END {print x[int((NR + 1) / 2)]}')"
	record "$mode" "$key" p99_us "$r" "$(cat "$T_SCRATCH"/b.*.csv | awk -F, '$1 == "randread" {print $14}' | sort -n | tail -1)"
	ops=$(cat "$T_SCRATCH"/b.*.csv | awk -F, '$1 == "randread" {s += $6} END {print s}')
	# the first start and the last end of the clients' measured passes: all
	# READs over that time (not the sum of the clients' own rates, which
	# counts the time one runs alone at its rate alone), and the server's CPU
	sort -k2 -g "$cpu" | awk -v tick="$tick" -v ops="$ops" -v m="$mode" -v k="$key" -v r="$r" \
		'$1 == "start" && !s {s = 1; t0 = $2; e0 = $3; o0 = $4} $1 == "end" {t1 = $2; e1 = $3; o1 = $4}
		END {printf "%s,%s,iops,%s,%.0f\n", m, k, r, ops / (t1 - t0)
		printf "%s,%s,cpu_rpc_us,%s,%.2f\n%s,%s,cpu_engine_us,%s,%.2f\n",
			m, k, r, (o1 - o0) * 1e6 / tick / ops, m, k, r, (e1 - e0) * 1e6 / tick / ops}' >> "$raw"
	if [ "$mode" = ordma ]; then
		record ordma "$key" hit_pct "$r" "$(cat "$T_SCRATCH"/b.*.csv | awk -F, '$1 == "randread" {h += $10; t += $6} END {printf "%.1f", t ? 100 * h / t : 0}')"
	fi
}

plan 1
echo "# bench-ordma: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $rounds rounds, $size per client"
failed=0
for r in $(seq 1 "$rounds"); do
	for prov in engine driven; do
		for n in 1 4; do
			run rpc "$n" "$prov" "$r" || failed=1
			run ordma "$n" "$prov" "$r" || failed=1
		done
	done
	echo "# round $r of $rounds done, load $(cut -d' ' -f1-3 /proc/loadavg)"
done
ok $failed "every bench run finished: every sample in $raw"
for prov in engine driven; do
	"$SERVER" -s -f "$T_SCRATCH/$prov.conf" 2>/dev/null | grep '^ordma\.' | tr '\n' ' ' |
		sed "s/^/bench-ordma: server cache ($prov): /; s/ \$/\n/"
done

medians "$raw" "$T_SCRATCH/stats"
echo "bench-ordma: mode  clients/provider figure       median   (min..max, n)"
while IFS=, read -r m k fig md lo hi c; do
	printf "bench-ordma: %-5s %-8s %-14s %9s   (%s..%s, %s)\n" "$m" "$k" "$fig" "$md" "$lo" "$hi" "$c"
done < "$stats"
for prov in engine driven; do
	for n in 1 4; do
		k=$n/$prov
		printf "bench-ordma: x%s %s: ordma / rpc: READs/s %s (goal >= 1.32), p50 %s (goal <= 0.64), p99 %s, server RPC CPU per READ %s, engine CPU per READ %s\n" \
			"$n" "$prov" "$(ratio "$(med ordma $k iops)" "$(med rpc $k iops)")" \
			"$(ratio "$(med ordma $k p50_us)" "$(med rpc $k p50_us)")" \
			"$(ratio "$(med ordma $k p99_us)" "$(med rpc $k p99_us)")" \
			"$(ratio "$(med ordma $k cpu_rpc_us)" "$(med rpc $k cpu_rpc_us)")" \
			"$(ratio "$(med ordma $k cpu_engine_us)" "$(med rpc $k cpu_engine_us)")"
	done
done
cp "$stats" "$out/ordma-medians.csv"
