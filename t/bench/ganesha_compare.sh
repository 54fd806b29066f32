#!/bin/bash
# ganesha_compare.sh RAW ROUNDS QUICK: bench-compare's NFS/TCP against
# nfs-ganesha (issue 12: "4 KiB random READ over TCP / nfs-ganesha, same
# machine and client"). Run by bench_compare.sh in private network and mount
# namespaces (ganesha needs rpcbind for NFSv3; a private /run keeps the host's
# out of it, as t/system/client_ganesha.sh does; both start it with
# client_lib.sh's start_ganesha). nfs-ganesha (VFS FSAL) and
# nfsrdma-server (threads = 4) each export a tmpfs directory; every round
# runs nfsrdma-client bench over TCP, 4 KiB random READ at 1 and 4 threads,
# against both, the order alternating. Appends CSV rows to RAW
# (ganesha|nfsrdma,tcp,FIGURE,ROUND,VALUE); prints "# " lines only.
. "$(dirname "$0")/../system/client_lib.sh"
raw=$1 rounds=$2 quick=$3
SERVER=$top_builddir/server/nfsrdma-server
ip link set lo up
mount -t tmpfs tmpfs /run && mkdir -p /run/rpcbind
scratch
G=$(mktemp -d /dev/shm/nfsrdma-gc.XXXXXX) || exit 1
trap 'cleanup; rm -rf "$G"' EXIT
mkdir -p "$G/g" "$G/n"
chmod 755 "$G" "$G/g" "$G/n"
size=32m
[ "$quick" = 1 ] && size=8m
if ! start_ganesha "$G/g" 32049 32048; then
	echo "# $ganesha_why"
	exit 1
fi
cat > "$T_SCRATCH/srv.conf" << CONF
rdma = { provider = "soft"; };
server = {
	listen = ["127.0.0.1"];
	rdma_port = 32051;
	tcp_port = 32050;
	threads = 4;
	pidfile = "$T_SCRATCH/server.pid";
	control_socket = "$T_SCRATCH/ctl.sock";
	handle_key_file = "$T_SCRATCH/handle.key";
	nsm = { state_dir = "$T_SCRATCH/sm"; };
	exports = ( { path = "$G/n"; clients = ["127.0.0.1"]; access = "rw"; root_squash = false; } );
};
CONF
"$SERVER" -f "$T_SCRATCH/srv.conf" 2> "$T_SCRATCH/server.log" || {
	echo "# nfsrdma-server did not start: $(tail -n 2 "$T_SCRATCH/server.log" | tr '\n' ' ')"
	exit 1
}
T_PIDS="$T_PIDS $(cat "$T_SCRATCH/server.pid")"
# one SERVER ROUND: 4 KiB random READ at 1 and 4 threads over TCP
one() {
	local who=$1 r=$2 opts=proto=tcp,port=32049,mountport=32048 dir=$G/g
	[ "$who" = nfsrdma ] && opts=proto=tcp,port=32050,mountport=32050 dir=$G/n
	if ! "$CLIENT" bench "127.0.0.1:$dir" -o "$opts" -q --csv "$T_SCRATCH/b.csv" \
		-t randread -r 4k -s "$size" -j 1,4 > "$T_SCRATCH/b.out" 2>&1; then
		echo "# $who round $r: $(tail -n 2 "$T_SCRATCH/b.out" | tr '\n' ' ')"
		return 1
	fi
	awk -F, -v w="$who" -v r="$r" 'NR > 1 {printf "%s,tcp,rand4k_x%s_iops,%s,%s\n", w, $2, r, $9}' \
		"$T_SCRATCH/b.csv" >> "$raw"
}
failed=0
for r in $(seq 1 "$rounds"); do
	order="ganesha nfsrdma"
	[ $((r % 2)) = 0 ] && order="nfsrdma ganesha"
	for w in $order; do
		one "$w" "$r" || failed=1
	done
done
exit $failed
