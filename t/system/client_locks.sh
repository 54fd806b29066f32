#!/bin/bash
# client_locks.sh: fcntl and flock locks across two FUSE mounts of one export
# of the real nfsrdma-server (client_testsrv has no lock manager), over TCP
# and over RPC/RDMA (soft provider; NLM then goes over TCP): exclusion, a
# blocked F_SETLKW granted by the server's GRANTED callback (to mount A's
# callback port, where the server is told to ask; forwarded to mount B),
# F_GETLK naming the holder, a lock held by a process on the server, locks
# dropped at close, nolock mounts keeping local locks, a lock as a point of
# coherence (the file's cached pages dropped), and a server without
# NLM giving ENOLCK at once. The same over IPv6 (mounts of [::1]: NLM over
# TCP/IPv6, the server asking for the callback port with rpcbind version 4
# and calling back over UDP/IPv6, the forward between the two mounts) where
# the host has IPv6 loopback. A lock goes out as the user who takes it, whose
# right to the file the server checks (on an export that squashes root) and
# whose reclaim after a server restart is made as that user. Locks on an
# export that requires integrity, from a mount that signs its calls. TAP output.
. "$(dirname "$0")/client_lib.sh"

S=$top_builddir/server/nfsrdma-server
LP=$top_builddir/t/system/lockprog
need_fuse
[ -x "$S" ] && [ -x "$LP" ] || skip_all "nfsrdma-server or t/system/lockprog is not built"

scratch
T=$T_SCRATCH
# the server listens on ::1 too, and takes calls from it, where there is one
V6=""
grep -q '^0\{31\}1 ' /proc/net/if_inet6 2>/dev/null && V6=', "::1"'
PER_TR=19 # checks in each transport's round
mkdir -p "$T/export" "$T/squash" "$T/signed" "$T/a" "$T/b" "$T/n" "$T/sm"
chmod 777 "$T/export" "$T/squash"
head -c 32 /dev/urandom > "$T/hmac.key"
chmod 600 "$T/hmac.key"

# srv_conf NAME NLM_ENABLE: a configuration whose clients' rpcbind is mount A's
# callback port (mount A answers GETPORT there for its NLM service).
srv_conf() {
	cat > "$T/$1.conf" << EOF
log = { level = "info"; };
rdma = { provider = "soft"; };
server = {
	listen = ["127.0.0.1"$V6];
	rdma_port = $RDMA;
	tcp_port = $TCP;
	pidfile = "$T/$1.pid";
	control_socket = "$T/$1.sock";
	handle_key_file = "$T/handle.key";
	nlm = { enable = $2; grace_s = ${3:-0}; client_rpcbind_port = $CBA; };
	nsm = { state_dir = "$T/sm"; };
	integrity = { mode = "hmac-sha256"; key_file = "$T/hmac.key"; };
	exports = ( { path = "$T/export"; clients = ["127.0.0.1"$V6]; access = "rw"; root_squash = false; },
		{ path = "$T/squash"; clients = ["127.0.0.1"]; access = "rw"; },
		{ path = "$T/signed"; clients = ["127.0.0.1"]; access = "rw"; root_squash = false;
		  integrity_required = true; } );
};
EOF
}

start_real() {
	local attempt
	for attempt in 1 2 3; do
		TCP=$(free_port)
		RDMA=$(free_port)
		CBA=$(free_port)
		CBB=$(free_port)
		CBN=$(free_port)
		srv_conf "$1" "$2" "${3:-0}"
		"$S" -f "$T/$1.conf" 2> "$T/$1.log" && return 0
		grep -q "Address already in use" "$T/$1.log" || break
	done
	diag "nfsrdma-server did not start: $(cat "$T/$1.log")"
	return 1
}

stop_real() {
	[ -f "$T/$1.pid" ] && kill -TERM "$(cat "$T/$1.pid")" 2>/dev/null
	sleep 0.3
}

# Unmount A, B and N, and wait (10 s at most) until their client daemons
# have exited: the next mounts take the same callback ports and host name,
# and a daemon still going (its lock manager's last calls, its port) must
# not meet them.
umount_all() {
	local m i
	for m in "$T/a" "$T/b" "$T/n"; do
		is_mounted "$m" && { "$CLIENT" umount "$m" || umount -l "$m"; }
	done
	for i in $(seq 100); do
		pgrep -f "nfsrdma-client mount .* $T/[abn]\$" > /dev/null || return 0
		sleep 0.1
	done
	diag "client daemons still running after unmount: $(pgrep -af "nfsrdma-client mount .* $T/")"
}

# bg NAME ARGS...: lockprog in the background, its output in $T/NAME.out, its pid in NAME_PID.
bg() {
	local name=$1
	shift
	"$LP" "$@" > "$T/$name.out" 2>&1 &
	eval "${name}_PID=$!"
}

# wait_line FILE N: until FILE has N lines (at most 10 s).
wait_line() {
	local i
	for i in $(seq 100); do
		[ "$(wc -l < "$1" 2>/dev/null)" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

# out ARGS...: lockprog's lines on one line.
out() { "$LP" "$@" 2>&1 | tr '\n' ' ' | sed 's/ $//'; }

plan $((19 + 3 * PER_TR))

start_real srv true
ok $? "nfsrdma-server starts with NLM"

for tr in tcp rdma tcp6; do
	h=127.0.0.1
	case $tr in
	tcp) o="proto=tcp,port=$TCP" ;;
	rdma) o="proto=rdma,port=$RDMA,lockport=$TCP" ;;
	tcp6) o="proto=tcp,port=$TCP" h="[::1]" ;;
	esac
	if [ $tr = tcp6 ] && [ -z "$V6" ]; then
		for i in $(seq $PER_TR); do skip "$tr: this host has no IPv6 loopback"; done
		continue
	fi
	do_mount "$o,lockcbport=$CBA" "$h:$T/export" "$T/a" 2> "$T/mount-a.err" &&
		do_mount "$o,lockcbport=$CBB" "$h:$T/export" "$T/b" 2> "$T/mount-b.err"
	ok $? "$tr: two mounts of the export"
	: > "$T/export/f"

	bg A "$T/a/f" w 0 100 s 4000 u 0 100
	wait_line "$T/A.out" 1
	check "$tr: mount A takes a write lock" [ "$(cat "$T/A.out")" = ok ]
	check "$tr: mount B's F_SETLK on the range is refused" [ "$(out "$T/b/f" w 50 10)" = busy ]
	check "$tr: mount B's F_SETLK on another range is granted" [ "$(out "$T/b/f" w 200 100)" = ok ]
	got=$(out "$T/b/f" t 0 0)
	check "$tr: mount B's F_GETLK names A's lock, range and pid ($got)" \
		[ "$got" = "locked w 0 100 $A_PID" ]
	t0=$(date +%s%N)
	got=$(out "$T/b/f" W 10 10)
	ms=$((($(date +%s%N) - t0) / 1000000))
	wait "$A_PID"
	check "$tr: mount B's F_SETLKW waits for A's unlock, then is granted ($got after $ms ms)" \
		test "$got" = ok -a "$ms" -ge 1500 -a "$ms" -lt 15000

	# the other way: B holds, A waits (the callback comes to A's own port)
	bg B "$T/b/f" w 0 0 s 2000
	wait_line "$T/B.out" 1
	t0=$(date +%s%N)
	got=$(out "$T/a/f" W 0 1)
	ms=$((($(date +%s%N) - t0) / 1000000))
	wait "$B_PID"
	check "$tr: B's exit (no unlock) lets A's F_SETLKW be granted ($got after $ms ms)" \
		test "$got" = ok -a "$ms" -ge 1000 -a "$ms" -lt 15000

	# a signal to a waiting F_SETLKW: FUSE's interrupt, then CANCEL to the server
	bg A "$T/a/f" w 0 0 s 3000
	wait_line "$T/A.out" 1
	"$LP" "$T/b/f" W 0 1 > /dev/null 2>&1 &
	ipid=$!
	sleep 1
	n1=$("$S" -s -f "$T/srv.conf" 2>&1 | awk '$1 == "nlm.blocked" { print $2 }')
	kill -INT $ipid
	wait $ipid
	sleep 0.5
	n2=$("$S" -s -f "$T/srv.conf" 2>&1 | awk '$1 == "nlm.blocked" { print $2 }')
	check "$tr: the server queues a waiting F_SETLKW (${n1:-none})" [ "${n1:-0}" = 1 ]
	check "$tr: a signal to it cancels it there (${n2:-none})" [ "${n2:-x}" = 0 ]
	wait "$A_PID"

	# close drops the locks of the closing process
	got=$(out "$T/a/f" w 0 10 c s 3000) &
	sleep 1
	check "$tr: a close in A lets B lock at once (A still runs)" [ "$(out "$T/b/f" w 0 10)" = ok ]
	wait

	# a process on the server
	bg L "$T/export/f" w 0 0 s 3000
	wait_line "$T/L.out" 1
	check "$tr: a lock taken on the server's own file blocks the mount's F_SETLK" \
		[ "$(out "$T/a/f" w 5 5)" = busy ]
	wait "$L_PID"
	check "$tr: and is granted once the local process let go" [ "$(out "$T/a/f" w 5 5)" = ok ]

	# flock(2) goes through NLM too (whole-file locks)
	bg F "$T/a/f" f ex s 2000
	wait_line "$T/F.out" 1
	check "$tr: flock on A, then a non-blocking flock on B is refused" \
		[ "$(cat "$T/F.out")" = ok ] && [ "$(out "$T/b/f" f exnb)" = busy ]
	got=$(out "$T/b/f" f ex)
	wait "$F_PID"
	check "$tr: a blocking flock on B is granted when A closes ($got)" [ "$got" = ok ]

	# nolock: the kernel's own locks, local to the mount
	do_mount "$o,nolock" "$h:$T/export" "$T/n" 2> "$T/mount-n.err"
	bg A "$T/a/f" w 0 0 s 2000
	wait_line "$T/A.out" 1
	check "$tr: nolock: a lock held through A does not stop one on the nolock mount" \
		[ "$(out "$T/n/f" w 0 10)" = ok ]
	bg N "$T/n/f" w 0 0 s 2000
	wait_line "$T/N.out" 1
	check "$tr: nolock: two processes on that mount still exclude each other" \
		[ "$(out "$T/n/f" w 0 10)" = busy ]
	wait "$A_PID" "$N_PID"

	# a lock is a point of coherence: A, which read the file before B wrote
	# it, reads what B wrote once it has taken a lock
	printf old1 > "$T/a/f"
	bg C "$T/a/f" p 4 s 1500 W 0 0 p 4 u 0 0
	wait_line "$T/C.out" 1
	printf new2 | dd of="$T/b/f" conv=notrunc status=none
	wait "$C_PID"
	got=$(tr '\n' ' ' < "$T/C.out")
	check "$tr: after its lock, A reads what B wrote while A had the file open ($got)" \
		[ "$got" = "data old1 ok data new2 ok " ]

	"$S" -s -f "$T/srv.conf" > "$T/stats" 2>&1
	blocked=$(awk '$1 == "nlm.blocked_total" { print $2 }' "$T/stats")
	failed=$(awk '$1 == "nlm.callbacks_failed" { print $2 }' "$T/stats")
	check "$tr: the server counts the blocked requests (${blocked:-none})" [ "${blocked:-0}" -ge 3 ]
	check "$tr: and no GRANTED callback failed (${failed:-none})" [ "${failed:-x}" = 0 ]
	umount_all
	sleep 0.2
done

# a lock goes out as the process that takes it, whose right to the file the
# server checks: on an export that squashes root, a user locks its own file
# (as the mounting root it would be refused), and another user, who may
# write the file but not read it, may not
user() { setpriv --reuid="$1" --regid="$1" --clear-groups "${@:2}"; }
HAVE_SETPRIV=$(command -v setpriv)
if [ -n "$HAVE_SETPRIV" ]; then
	do_mount "proto=tcp,port=$TCP,lockcbport=$CBA" "127.0.0.1:$T/squash" "$T/a" 2> "$T/mount-s.err"
	ok $? "a mount of an export that squashes root"
	user 1000 sh -c ": > '$T/a/own' && chmod 602 '$T/a/own'"
	got=$(user 1000 "$LP" "$T/a/own" w 0 1 2>&1)
	check "a user's F_SETLK on its own file (mode 0602) is granted ($got)" [ "$got" = ok ]
	got=$(user 2000 "$LP" "$T/a/own" w 0 1 2>&1)
	check "another user, who may write it but not read it, is refused ($got)" \
		[ "$got" = "error No locks available" ]
	umount_all
else
	for i in 1 2 3; do skip "setpriv is missing (util-linux)"; done
fi

# an export that requires integrity: the lock manager's calls are signed
# with the mount's key, as its NFS calls, and the server takes them
do_mount "proto=tcp,port=$TCP,lockcbport=$CBA,integrity=hmac-sha256,keyfile=$T/hmac.key" \
	"127.0.0.1:$T/signed" "$T/a" 2> "$T/mount-i.err"
ok $? "a signed mount of an export that requires integrity"
bg I "$T/a/f" w 0 10 s 2000
wait_line "$T/I.out" 1
check "a F_SETLK there is granted ($(cat "$T/I.out"))" [ "$(cat "$T/I.out")" = ok ]
got=$(out "$T/a/f" w 5 1)
check "and held on the server: another process's is refused ($got)" [ "$got" = busy ]
t0=$(date +%s%N)
got=$(out "$T/a/f" W 5 1)
ms=$((($(date +%s%N) - t0) / 1000000))
wait_bounded 10 "$I_PID"
# the GRANTED callback is not signed: the request asks the server again
check "its F_SETLKW is granted once the first lets go ($got after $ms ms)" \
	test "$got" = ok -a "$ms" -ge 1000 -a "$ms" -lt 15000
umount_all

# the server restarts while A and B hold locks: A hears SM_NOTIFY (the server
# asks at A's port), B sees its connection made again; both reclaim in the
# grace period, so after it each still excludes the other. So does a user's
# lock on the export that squashes root, reclaimed as that user
stop_real srv
start_real gr true 6
ok $? "nfsrdma-server starts with a grace period of 6 s"
do_mount "proto=tcp,port=$TCP,lockcbport=$CBA" "127.0.0.1:$T/export" "$T/a" 2> "$T/mount-a.err" &&
	do_mount "proto=tcp,port=$TCP,lockcbport=$CBB" "127.0.0.1:$T/export" "$T/b" 2> "$T/mount-b.err"
ok $? "two mounts for the restart"
bg A "$T/a/f" w 0 10 s 40000
bg B "$T/b/f" w 20 10 s 40000
if [ -n "$HAVE_SETPRIV" ] &&
	do_mount "proto=tcp,port=$TCP,lockcbport=$CBN" "127.0.0.1:$T/squash" "$T/n" 2> "$T/mount-n.err"; then
	# setpriv itself, not the function: $! is then the lock's process
	setpriv --reuid=1000 --regid=1000 --clear-groups "$LP" "$T/n/own" w 0 10 s 40000 \
		> "$T/U.out" 2>&1 &
	U_PID=$!
	wait_line "$T/U.out" 1
fi
wait_line "$T/A.out" 1
wait_line "$T/B.out" 1
check "A and B hold their locks (after the first grace period)" \
	[ "$(cat "$T/A.out" "$T/B.out" | tr '\n' ' ')" = "ok ok " ]
kill -TERM "$(cat "$T/gr.pid")"
for _ in $(seq 50); do kill -0 "$(cat "$T/gr.pid")" 2>/dev/null || break; sleep 0.1; done
"$S" -f "$T/gr.conf" 2>> "$T/gr.log"
ok $? "the server starts again on the same ports"
t0=$(date +%s%N)
got="$(out "$T/b/f" w 0 1) $(out "$T/a/f" w 20 1)"
ms=$((($(date +%s%N) - t0) / 1000000))
check "after the grace period ($ms ms) A's and B's locks are still held ($got)" \
	test "$got" = "busy busy" -a "$ms" -ge 3000
check "the server took the reclaims" \
	bash -c "'$S' -s -f '$T/gr.conf' | awk '\$1 == \"nlm.owners\" { exit !(\$2 >= 2) }'"
if [ -n "$HAVE_SETPRIV" ]; then
	got="$(cat "$T/U.out") $(user 1000 "$LP" "$T/n/own" w 5 1 2>&1)"
	check "a user's lock on the export that squashes root is reclaimed as the user ($got)" \
		[ "$got" = "ok busy" ]
else
	skip "setpriv is missing (util-linux)"
fi
kill "$A_PID" "$B_PID" ${U_PID:-} 2>/dev/null
wait "$A_PID" "$B_PID" ${U_PID:-} 2>/dev/null
check "and once they let go, the other mount locks" [ "$(out "$T/b/f" w 0 1)" = ok ]
umount_all
stop_real gr

# a server without a lock manager: ENOLCK at once, and one line saying why
start_real old false
ok $? "nfsrdma-server starts with NLM off"
"$CLIENT" mount -o "proto=tcp,port=$TCP,foreground" "127.0.0.1:$T/export" "$T/a" \
	2> "$T/mount-old.err" &
T_PIDS="$T_PIDS $!"
T_MOUNTS="$T_MOUNTS $T/a"
for _ in $(seq 50); do is_mounted "$T/a" && break; sleep 0.1; done
t0=$(date +%s%N)
got=$(out "$T/a/f" w 0 1)
ms=$((($(date +%s%N) - t0) / 1000000))
check "no NLM on the server: F_SETLK fails with ENOLCK ($got) in $ms ms" \
	test "$got" = "error No locks available" -a "$ms" -lt 5000
out "$T/a/f" w 0 1 > /dev/null
check "and the client says why, once" [ "$(grep -c 'no lock manager' "$T/mount-old.err")" = 1 ]
umount_all
stop_real old
