#!/bin/bash
# ganesha_compare.sh RAW ROUNDS QUICK: bench-compare's NFS/TCP against
# nfs-ganesha (issue 12: "4 KiB random READ over TCP / nfs-ganesha, same
# machine and client"). Run by bench_compare.sh in private network and mount
# namespaces (ganesha needs rpcbind for NFSv3; a private /run keeps the host's
# out of it, as t/system/client_ganesha.sh does; both start it with
# client_lib.sh's start_ganesha). nfs-ganesha (VFS FSAL), nfsrdma-server
# (threads = 4; its loops' adaptive polling on, the default) and a second
# nfsrdma-server whose loops do not poll (server.adaptive_poll_us = 0) each
# export a tmpfs directory; every round
# runs nfsrdma-client bench over TCP, 4 KiB random READ at 1 and 4 threads,
# against the three, the order rotating. Appends CSV rows to RAW
# (ganesha|nfsrdma|nfsrdma-nopoll,tcp,FIGURE,ROUND,VALUE); prints "# " lines only.
. "$(dirname "$0")/../system/client_lib.sh"
raw=$1 rounds=$2 quick=$3
SERVER=$top_builddir/server/nfsrdma-server
ip link set lo up
mount -t tmpfs tmpfs /run && mkdir -p /run/rpcbind
scratch
G=$(mktemp -d /dev/shm/nfsrdma-gc.XXXXXX) || exit 1
trap 'cleanup; rm -rf "$G"' EXIT
mkdir -p "$G/g" "$G/n" "$G/s"
chmod 755 "$G" "$G/g" "$G/n" "$G/s"
size=32m
[ "$quick" = 1 ] && size=8m
if ! start_ganesha "$G/g" 32049 32048; then
	echo "# $ganesha_why"
	exit 1
fi
# start_nfsrdma NAME PORT EXPORT LINES: an nfsrdma-server, TCP (and MOUNT) on PORT
start_nfsrdma() {
	local d=$T_SCRATCH/$1
	mkdir -p "$d"
	cat > "$d/srv.conf" << CONF
rdma = { provider = "soft"; };
server = {
	listen = ["127.0.0.1"];
	rdma_port = $(($2 + 10));
	tcp_port = $2;
	threads = 4;
	$4
	pidfile = "$d/server.pid";
	control_socket = "$d/ctl.sock";
	handle_key_file = "$d/handle.key";
	nsm = { state_dir = "$d/sm"; };
	exports = ( { path = "$3"; clients = ["127.0.0.1"]; access = "rw"; root_squash = false; } );
};
CONF
	"$SERVER" -f "$d/srv.conf" 2> "$d/server.log" || {
		echo "# nfsrdma-server ($1) did not start: $(tail -n 2 "$d/server.log" | tr '\n' ' ')"
		exit 1
	}
	T_PIDS="$T_PIDS $(cat "$d/server.pid")"
}
start_nfsrdma nfsrdma 32050 "$G/n" ""
start_nfsrdma nfsrdma-nopoll 32052 "$G/s" "adaptive_poll_us = 0;"
# one SERVER ROUND: 4 KiB random READ at 1 and 4 threads over TCP
one() {
	local who=$1 r=$2 opts=proto=tcp,port=32049,mountport=32048 dir=$G/g
	[ "$who" = nfsrdma ] && opts=proto=tcp,port=32050,mountport=32050 dir=$G/n
	[ "$who" = nfsrdma-nopoll ] && opts=proto=tcp,port=32052,mountport=32052 dir=$G/s
	if ! "$CLIENT" bench "127.0.0.1:$dir" -o "$opts" -q --csv "$T_SCRATCH/b.csv" \
		-t randread -r 4k -s "$size" -j 1,4 > "$T_SCRATCH/b.out" 2>&1; then
		echo "# $who round $r: $(tail -n 2 "$T_SCRATCH/b.out" | tr '\n' ' ')"
		return 1
	fi
	awk -F, -v w="$who" -v r="$r" 'NR > 1 {printf "%s,tcp,rand4k_x%s_iops,%s,%s\n", w, $2, r, $9}' \
		"$T_SCRATCH/b.csv" >> "$raw"
}
failed=0
orders=("ganesha nfsrdma nfsrdma-nopoll" "nfsrdma nfsrdma-nopoll ganesha" "nfsrdma-nopoll ganesha nfsrdma")
for r in $(seq 1 "$rounds"); do
	for w in ${orders[$((r % 3))]}; do
		one "$w" "$r" || failed=1
	done
done
exit $failed
