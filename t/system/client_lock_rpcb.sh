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
# names no NLM over TCP at first, and once B holds that entry, it names B's
# callback service, which refuses lock calls: B passes it over. TAP output.
. "$(dirname "$0")/client_lib.sh"

need_fuse
command -v rpcbind > /dev/null || skip_all "rpcbind is not installed"
command -v rpcinfo > /dev/null || skip_all "rpcinfo is not installed (Debian: rpcbind)"
command -v python3 > /dev/null || skip_all "python3 is missing (it holds a TCP port)"
[ -e /proc/net/if_inet6 ] || skip_all "this host has no IPv6 (the entries checked are udp6 and tcp6 too)"
enter_private_ns "$@"
# Inside the namespaces from here on.
scratch
E=$T_SCRATCH/export
mkdir -p "$E" "$T_SCRATCH/a" "$T_SCRATCH/b"
start_rpcbind || skip_all "rpcbind did not start"
S=$top_builddir/server/nfsrdma-server
LP=$top_builddir/t/system/lockprog
[ -x "$S" ] && [ -x "$LP" ] || skip_all "nfsrdma-server or t/system/lockprog is not built"
TCP=$(free_port) RDMA=$(free_port)
mkdir -p "$T_SCRATCH/sm"
daemon_conf "$T_SCRATCH/srv.conf" "$T_SCRATCH" "
	rpcbind = false;
	nlm = { enable = true; grace_s = 0; };
	nsm = { state_dir = \"$T_SCRATCH/sm\"; };
	exports = ( { path = \"$E\"; clients = [\"127.0.0.1\"]; access = \"rw\"; root_squash = false; } );"
if ! "$S" -f "$T_SCRATCH/srv.conf" 2> "$T_SCRATCH/srv.log"; then
	echo "Bail out! nfsrdma-server did not start: $(tr '\n' ' ' < "$T_SCRATCH/srv.log")"
	exit 1
fi
T_PIDS="$T_PIDS $(cat "$T_SCRATCH/server.pid")"

# nlm_entries: this host's NLM version 4 entries, "netid:port" sorted
nlm_entries() {
	rpcinfo 127.0.0.1 2> /dev/null | awk '$1 == 100021 && $2 == 4 {
		n = split($4, a, "."); print $3 ":" a[n - 1] * 256 + a[n] }' | sort | tr '\n' ' '
}

# hold_tcp NAME PORT...: listeners on those ports over TCP (IPv6 taking
# IPv4 too, without SO_REUSEADDR), held by a process in T_PIDS until the
# test ends; HELD: how many it holds (a port taken already is left out).
hold_tcp() {
	local name=$1 i
	shift
	python3 -c "
import signal, socket, sys
held = []
for p in sys.argv[1:]:
    try:
        s = socket.socket(socket.AF_INET6)
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        s.bind(('::', int(p))); s.listen(1); held.append(s)
    except OSError:
        pass
print('held', len(held), flush=True)
signal.pause()" "$@" > "$T_SCRATCH/$name.out" 2> "$T_SCRATCH/$name.err" &
	T_PIDS="$T_PIDS $!"
	for i in $(seq 100); do
		grep -q '^held' "$T_SCRATCH/$name.out" && break
		sleep 0.1
	done
	HELD=$(sed -n 's/^held //p' "$T_SCRATCH/$name.out")
}

plan 8
CBA=$(free_port)
CBB=$(free_port)
# a listener on A's port over TCP, so that A takes callbacks over UDP only
hold_tcp hold "$CBA"
if [ "$HELD" != 1 ]; then
	echo "Bail out! cannot hold TCP port $CBA: $(cat "$T_SCRATCH/hold.err")"
	exit 1
fi
do_mount "proto=tcp,port=$TCP,lockcbport=$CBA" "127.0.0.1:$E" "$T_SCRATCH/a" 2> "$T_SCRATCH/a.err"
got=$(nlm_entries)
check "mount A holds NLM over udp and udp6 at its port ($got)" \
	[ "$got" = "udp6:$CBA udp:$CBA " ]
got=$("$LP" "$T_SCRATCH/a/f" w 0 1 2>&1)
check "a lock through A is granted: NLM found on the NFS port ($got)" [ "$got" = ok ]
fg_mount "proto=tcp,port=$TCP,lockcbport=$CBB,debug" "127.0.0.1:$E" "$T_SCRATCH/b"
got=$(nlm_entries)
check "mount B adds tcp and tcp6 at its own port ($got)" \
	[ "$got" = "tcp6:$CBB tcp:$CBB udp6:$CBA udp:$CBA " ]
# B's lock goes first to what rpcbind names now, B's own callback port, which
# refuses it, then to the NFS port; held 3 s, over a check of the reclaimer
# (every 2 s), which must not take the new connection for a server restart
# (B logs at debug level, so that the pass-over's notice and a reclaim's info
# line, "reclaimed N locks after the server restarted", are there)
got=$("$LP" "$T_SCRATCH/b/g" w 0 1 s 3000 2>&1)
msgs=$(grep -c "port $CBB on 127.0.0.1 refuses lock calls" "$T_SCRATCH/fg.err")
msgs=$msgs/$(grep -c "the server restarted" "$T_SCRATCH/fg.err")
check "a lock through B is granted on the NFS port, B's callback port passed over, no reclaim ($got, $msgs)" \
	[ "$got $msgs" = "ok 1/0" ]
fg_umount "$T_SCRATCH/b"
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
range=/proc/sys/net/ipv4/ip_local_port_range
echo "40000 40255" > $range 2> /dev/null
if [ "$(tr -s ' \t' '  ' < $range)" != "40000 40255" ]; then
	skip "cannot narrow this namespace's $range"
	exit 0
fi
hold_tcp half $(seq 40000 2 40254)
if [ "${HELD:-0}" -lt 100 ]; then
	skip "only ${HELD:-0} of 128 ports could be held over TCP"
	exit 0
fi
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
