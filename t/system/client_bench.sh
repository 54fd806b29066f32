#!/bin/bash
# client_bench.sh: nfsrdma-client bench against the in-process test server on
# the soft provider: every test, two record sizes, two threads, data
# verified; the table, the CSV (one row per point) and the gnuplot chart.
#   client_bench.sh                 the quick check make check runs
#   client_bench.sh --full DIR      the measurement (make bench-client), against
#                                   nfsrdma-server if built: over RPC/RDMA both
#                                   modes and TCP, 4k..1m, 1 and 2 threads, 64
#                                   MiB files; table, CSV and PNG in DIR
. "$(dirname "$0")/client_lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "needs root (the test server opens files by handle)"
[ -x "$TESTSRV" ] || skip_all "t/system/client_testsrv was not built (make check builds it)"
scratch
mkdir -p "$T_SCRATCH/exp"
start_server S -d "$T_SCRATCH/exp" || skip_all "the test server does not start"

if [ "${1:-}" = --full ]; then
	# the measurement runs against the real daemon when it is built
	out=${2:-bench-client}
	mkdir -p "$out"
	SERVER=$top_builddir/server/nfsrdma-server
	rport=$S_RDMA tport=$S_TCP where="the in-process test server"
	if [ -x "$SERVER" ]; then
		rport=$(free_port) tport=$(free_port) where="nfsrdma-server"
		cat > "$T_SCRATCH/srv.conf" << CONF
rdma = { provider = "soft"; };
server = {
	listen = ["127.0.0.1"];
	rdma_port = $rport;
	tcp_port = $tport;
	modes = ["read-write", "read-read"];
	trusted_peers = true; # loopback: the registration cache in read-read too
	pidfile = "$T_SCRATCH/server.pid";
	control_socket = "$T_SCRATCH/ctl.sock";
	handle_key_file = "$T_SCRATCH/handle.key";
	exports = ( { path = "$T_SCRATCH/exp"; clients = ["127.0.0.1"]; access = "rw"; root_squash = false; } );
};
CONF
		"$SERVER" -f "$T_SCRATCH/srv.conf" || skip_all "nfsrdma-server does not start"
		T_PIDS="$T_PIDS $(cat "$T_SCRATCH/server.pid")"
	fi
	plan 3
	echo "# against $where on the soft provider"
	for run in "rdma-rw|port=$rport,mode=read-write" "rdma-rr|port=$rport,mode=read-read" \
		"tcp|proto=tcp,port=$tport"; do
		name=${run%%|*}
		"$CLIENT" bench "127.0.0.1:$T_SCRATCH/exp" -o "${run#*|}" -r 4k,16k,64k,256k,1m -j 1,2 \
			-s 64m --csv "$out/bench-$name.csv" --plot "$out/bench-$name.png" |
			tee "$out/bench-$name.txt" | sed 's/^/bench: /'
		ok "${PIPESTATUS[0]}" "bench over $name: $out/bench-$name.csv"
	done
	exit 0
fi

plan 6
out=$("$CLIENT" bench "127.0.0.1:$T_SCRATCH/exp" -o "port=$S_RDMA,reg=cache" -r 4k,1m -j 2 -s 2m \
	--verify --csv "$T_SCRATCH/b.csv" --plot "$T_SCRATCH/b.png" 2>&1)
ok $? "bench runs (RPC/RDMA, reads verified)"
echo "$out" | sed 's/^/# /'
check "a table row per test and record size" test "$(echo "$out" | grep -cE '^(write|read|randwrite|randread) +2 ')" = 8
check "no progress output when stdout is not a terminal" bash -c "! grep -q \$'\\r' <<< \"\$1\"" _ "$out"
check "CSV: header and 8 rows" test "$(wc -l < "$T_SCRATCH/b.csv")" = 9
check "CSV rows carry MB/s and IOPS above zero" \
	awk -F, 'NR > 1 && !($8 > 0 && $9 > 0) {bad = 1} END {exit bad}' "$T_SCRATCH/b.csv"
if command -v gnuplot > /dev/null; then
	check "the plot is a PNG" bash -c "head -c 8 '$T_SCRATCH/b.png' | grep -q PNG"
else
	skip "no gnuplot"
fi
exit 0
