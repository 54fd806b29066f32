#!/bin/bash
# client_lock_rpcb.sh: the lock callback port of each mount in this host's
# rpcbind (a private one, in network and mount namespaces of the test's own).
# The first mount holds the NLM entries it could register; a second one
# registers what is left; each takes out only its own entries when it ends.
# Mount A cannot listen on TCP (its port is taken), so it holds udp and udp6;
# mount B gets tcp and tcp6. When B ends, A's udp entry stays (PMAP's UNSET,
# which B once used, takes out udp and tcp at once, so servers could no
# longer call A back). The server, nfsrdma-server with NLM but not
# registered with rpcbind, is found on its NFS port: the server's rpcbind
# names no NLM over TCP. TAP output.
. "$(dirname "$0")/client_lib.sh"

need_fuse
command -v rpcbind > /dev/null || skip_all "rpcbind is not installed"
command -v rpcinfo > /dev/null || skip_all "rpcinfo is not installed (Debian: rpcbind)"
command -v python3 > /dev/null || skip_all "python3 is missing (it holds a TCP port)"
if [ -z "${NFSRDMA_RPCB_NS:-}" ]; then
	command -v unshare > /dev/null || skip_all "no unshare(1) for private namespaces"
	unshare --net --mount --propagation private true 2> /dev/null ||
		skip_all "cannot make private network and mount namespaces here"
	NFSRDMA_RPCB_NS=1 exec unshare --net --mount --propagation private bash "$0" "$@"
fi

# Inside the namespaces from here on.
ip link set lo up
mount -t tmpfs tmpfs /run && mkdir -p /run/rpcbind
scratch
E=$T_SCRATCH/export
mkdir -p "$E" "$T_SCRATCH/a" "$T_SCRATCH/b"
rpcbind -f &
T_PIDS="$T_PIDS $!"
for _ in $(seq 50); do rpcinfo -p 127.0.0.1 > /dev/null 2>&1 && break; sleep 0.1; done
rpcinfo -p 127.0.0.1 > /dev/null 2>&1 || skip_all "rpcbind did not start"
S=$top_builddir/server/nfsrdma-server
LP=$top_builddir/t/system/lockprog
[ -x "$S" ] && [ -x "$LP" ] || skip_all "nfsrdma-server or t/system/lockprog is not built"
TCP=$(free_port)
mkdir -p "$T_SCRATCH/sm"
cat > "$T_SCRATCH/srv.conf" << EOF
log = { level = "info"; };
rdma = { provider = "soft"; };
server = {
	listen = ["127.0.0.1"];
	rdma_port = $(free_port);
	tcp_port = $TCP;
	rpcbind = false;
	pidfile = "$T_SCRATCH/srv.pid";
	control_socket = "$T_SCRATCH/srv.sock";
	handle_key_file = "$T_SCRATCH/handle.key";
	nlm = { enable = true; grace_s = 0; };
	nsm = { state_dir = "$T_SCRATCH/sm"; };
	exports = ( { path = "$E"; clients = ["127.0.0.1"]; access = "rw"; root_squash = false; } );
};
EOF
"$S" -f "$T_SCRATCH/srv.conf" 2> "$T_SCRATCH/srv.log" ||
	skip_all "nfsrdma-server did not start: $(cat "$T_SCRATCH/srv.log")"
T_PIDS="$T_PIDS $(cat "$T_SCRATCH/srv.pid")"

# nlm_entries: this host's NLM version 4 entries, "netid:port" sorted
nlm_entries() {
	rpcinfo 127.0.0.1 2> /dev/null | awk '$1 == 100021 && $2 == 4 {
		n = split($4, a, "."); print $3 ":" a[n - 1] * 256 + a[n] }' | sort | tr '\n' ' '
}

plan 7
CBA=$(free_port)
CBB=$(free_port)
# a listener on A's port over TCP, so that A takes callbacks over UDP only
python3 -c "
import socket, sys, time
s = socket.socket(socket.AF_INET6)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
s.bind(('::', $CBA)); s.listen(1); print('ready', flush=True); time.sleep(120)" \
	> "$T_SCRATCH/hold.out" 2> "$T_SCRATCH/hold.err" &
T_PIDS="$T_PIDS $!"
for _ in $(seq 50); do grep -q ready "$T_SCRATCH/hold.out" && break; sleep 0.1; done

do_mount "proto=tcp,port=$TCP,lockcbport=$CBA" "127.0.0.1:$E" "$T_SCRATCH/a" 2> "$T_SCRATCH/a.err"
got=$(nlm_entries)
check "mount A holds NLM over udp and udp6 at its port ($got)" \
	[ "$got" = "udp6:$CBA udp:$CBA " ]
got=$("$LP" "$T_SCRATCH/a/f" w 0 1 2>&1)
check "a lock through A is granted: NLM found on the NFS port ($got)" [ "$got" = ok ]
do_mount "proto=tcp,port=$TCP,lockcbport=$CBB" "127.0.0.1:$E" "$T_SCRATCH/b" 2> "$T_SCRATCH/b.err"
got=$(nlm_entries)
check "mount B adds tcp and tcp6 at its own port ($got)" \
	[ "$got" = "tcp6:$CBB tcp:$CBB udp6:$CBA udp:$CBA " ]
"$CLIENT" umount "$T_SCRATCH/b"
ok $? "mount B unmounted"
for _ in $(seq 100); do [ "$(nlm_entries)" = "udp6:$CBA udp:$CBA " ] && break; sleep 0.1; done
got=$(nlm_entries)
check "B took out its own entries, A's stay ($got)" [ "$got" = "udp6:$CBA udp:$CBA " ]
"$CLIENT" umount "$T_SCRATCH/a"
for _ in $(seq 100); do [ -z "$(nlm_entries)" ] && break; sleep 0.1; done
got=$(nlm_entries)
check "and A took out its own when it ended ($got)" [ -z "$got" ]

# The port left to the kernel: one whose number is taken over TCP is given
# back for another, so that every mount takes callbacks over TCP too. Here
# half of the ports the kernel hands out are held over TCP; before, a mount
# kept the first UDP port it was given, and half of them had no TCP listener.
echo "40000 40255" > /proc/sys/net/ipv4/ip_local_port_range
python3 -c "
import socket, time
held = []
for p in range(40000, 40256, 2):
    s = socket.socket(socket.AF_INET6)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    s.bind(('::', p)); s.listen(1); held.append(s)
print('ready', flush=True); time.sleep(120)" > "$T_SCRATCH/half.out" 2> "$T_SCRATCH/half.err" &
T_PIDS="$T_PIDS $!"
for _ in $(seq 50); do grep -q ready "$T_SCRATCH/half.out" && break; sleep 0.1; done
bad=""
for k in 1 2 3 4 5 6; do
	do_mount "proto=tcp,port=$TCP" "127.0.0.1:$E" "$T_SCRATCH/a" 2> "$T_SCRATCH/c.err"
	got=$(nlm_entries)
	ports=$(echo "$got" | tr ' ' '\n' | cut -s -d: -f2 | sort -u | tr '\n' ' ')
	set -- $got
	[ $# -eq 4 ] && [ "$ports" = "${1#*:} " ] || bad="$bad [$got]"
	"$CLIENT" umount "$T_SCRATCH/a"
	for _ in $(seq 100); do [ -z "$(nlm_entries)" ] && break; sleep 0.1; done
done
check "6 mounts with ports the kernel chose take callbacks over UDP and TCP on one port${bad:+:$bad}" \
	[ -z "$bad" ]
