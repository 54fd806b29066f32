#!/bin/bash
# server_listen.sh: nfsrdma-server's listen addresses. ["0.0.0.0", "::"],
# ["::", "127.0.0.1"] and ["::ffff:127.0.0.1", "::"] start (an IPv4 address,
# or an IPv4-mapped one, beside "::" is already taken by it: the daemon says
# so and listens once) and serve NFS over RPC/RDMA and
# TCP at 127.0.0.1 and at ::1; as many addresses as server.listen takes (17
# and more, where the daemon stopped at 16) start and serve at the last one.
# On this host's net.ipv6.bindv6only and the soft provider only: the rdma-core
# provider's "::" (rdma_cm AFONLY off) is shown by make lab-locks.
. "$(dirname "$0")/client_lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "needs root (the server opens files by handle)"
SERVER=$top_builddir/server/nfsrdma-server
[ -x "$SERVER" ] || skip_all "nfsrdma-server was not built"
ip -6 addr show dev lo 2> /dev/null | grep -q '::1/128' || skip_all "no IPv6 loopback (::1) here"
scratch
mkdir -p "$T_SCRATCH/exp"

# serve LISTEN...: start the daemon on those addresses; ports in RPORT TPORT
serve() {
	local list
	list=$(printf '"%s", ' "$@")
	RPORT=$(free_port) TPORT=$(free_port)
	while [ "$TPORT" = "$RPORT" ]; do TPORT=$(free_port); done
	cat > "$T_SCRATCH/srv.conf" << CONF
rdma = { provider = "soft"; };
server = {
	listen = [${list%, }];
	rdma_port = $RPORT;
	tcp_port = $TPORT;
	pidfile = "$T_SCRATCH/server.pid";
	control_socket = "$T_SCRATCH/ctl.sock";
	handle_key_file = "$T_SCRATCH/handle.key";
	exports = ( { path = "$T_SCRATCH/exp"; clients = ["127.0.0.0/8", "::1"]; access = "rw"; root_squash = false; } );
};
CONF
	rm -f "$T_SCRATCH/server.pid"
	"$SERVER" -f "$T_SCRATCH/srv.conf" 2> "$T_SCRATCH/server.err" || return 1
	T_PIDS="$T_PIDS $(cat "$T_SCRATCH/server.pid")"
}
stop() {
	kill "$(cat "$T_SCRATCH/server.pid")" 2> /dev/null
	for _ in $(seq 1 50); do kill -0 "$(cat "$T_SCRATCH/server.pid")" 2> /dev/null || return 0; sleep 0.1; done
}
# reads HOST OPTS: a small verified bench (writes, then reads back) through HOST
reads() {
	"$CLIENT" bench "$1:$T_SCRATCH/exp" -o "$2" -t write,read -r 64k -s 256k --verify -q \
		> "$T_SCRATCH/bench.out" 2>&1 || { sed 's/^/# /' "$T_SCRATCH/bench.out"; return 1; }
}

plan 20
for list in "0.0.0.0 ::" ":: 127.0.0.1" "::ffff:127.0.0.1 ::"; do
	# shellcheck disable=SC2086 # the list's words are the addresses
	serve $list
	ok $? "listen = [$list] starts"
	sed 's/^/# /' "$T_SCRATCH/server.err"
	check "[$list]: the IPv4 address is said to be taken by \"::\"" \
		grep -q 'takes IPv4 too' "$T_SCRATCH/server.err"
	for host in 127.0.0.1 "[::1]"; do
		check "[$list]: RPC/RDMA at $host" reads "$host" "port=$RPORT"
		check "[$list]: TCP at $host" reads "$host" "proto=tcp,port=$TPORT,mountport=$TPORT"
	done
	stop
done

many=()
for i in $(seq 1 20); do many+=("127.0.0.$i"); done
serve "${many[@]}"
ok $? "20 listen addresses start"
check "RPC/RDMA and TCP at the 20th" eval 'reads 127.0.0.20 "port=$RPORT" && reads 127.0.0.20 "proto=tcp,port=$TPORT,mountport=$TPORT"'
stop
exit 0
