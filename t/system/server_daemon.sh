#!/bin/bash
# server_daemon.sh: the real nfsrdma-server on the soft provider, driven by
# libnfs's tools (an NFS client nobody here wrote) over TCP: files moved with
# checksums, access rules, reload, start-up failures with clear messages, and
# SIGTERM under load without losing an upload that completed. TAP output.
set -u
B=${top_builddir:-.}
S=$B/server/nfsrdma-server
. "$(dirname "$0")/../test-lib.sh"

[ "$(id -u)" -eq 0 ] || skip_all "the server opens files by handle and switches identities: needs root"
for tool in nfs-ls nfs-cp nfs-cat; do
	command -v $tool >/dev/null || skip_all "$tool missing (Debian: libnfs-utils)"
done

T=$(mktemp -d /tmp/nfsrdma-daemon.XXXXXX)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	[ -f "$T/server.pid" ] && kill -TERM "$(cat "$T/server.pid")" 2>/dev/null
	sleep 0.2
	rm -rf "$T"
}
trap cleanup EXIT

TCP=$(free_port)
RDMA=$(free_port)
mkdir -p "$T/export" "$T/locked"
chmod 777 "$T/export"

write_conf() { # write_conf FILE ACCESS [EXTRA-EXPORT]
	daemon_conf "$1" "$T" "	exports = (
		{ path = \"$T/export\"; clients = [\"127.0.0.1\"]; access = \"$2\"; root_squash = false; },
		{ path = \"$T/locked\"; clients = [\"192.0.2.99\"]; access = \"rw\"; }
		$3
	);"
}
URL="nfs://127.0.0.1$T/export"
Q="?version=3&nfsport=$TCP&mountport=$TCP"

plan 31
write_conf "$T/srv.conf" rw ""
# a port may be taken between choosing and binding it: choose again then
for attempt in 1 2 3; do
	"$S" -f "$T/srv.conf" 2>"$T/start.log"
	started=$?
	grep -q "Address already in use" "$T/start.log" || break
	TCP=$(free_port)
	RDMA=$(free_port)
	write_conf "$T/srv.conf" rw ""
	Q="?version=3&nfsport=$TCP&mountport=$TCP"
done
check "starts, detaches and says so with exit 0" [ $started -eq 0 ]
[ $started -eq 0 ] || sed 's/^/# /' "$T/start.log"
check "writes its pidfile" test -s "$T/server.pid"
"$S" -s -f "$T/srv.conf" >"$T/stats" 2>&1
check "-s prints the running server's counters" grep -q "^rdma.device soft" "$T/stats"
check "and its reply cache (4096 entries by default)" grep -q "^reply_cache.capacity 4096" "$T/stats"
check "and the poller its event loops wait in (NFSRDMA_POLLER)" \
	grep -q "^server.poller ${NFSRDMA_POLLER:-epoll}\$" "$T/stats"
check "made its file handle key, readable by its owner only" [ "$(stat -c %a "$T/handle.key" 2>/dev/null)" = 600 ]
if [[ ${DAEMON_EXTRA_CONF:-} == *portable* ]]; then
	check "keeps portable handles' indexes beside the key (server.handles = portable)" \
		bash -c "ls '$T'/handles/*.lmdb >/dev/null 2>&1 && grep -q '^handles.portable_exports 2\$' '$T/stats'"
else
	check "keeps no portable handles' index with native handles" \
		bash -c "test ! -e '$T/handles' && grep -q '^handles.portable_exports 0\$' '$T/stats'"
fi
if [[ ${DAEMON_EXTRA_CONF:-} == *userspace* ]]; then
	check "checks callers' permissions in user space (server.identity = userspace)" \
		grep -q '^identity.userspace_exports 2$' "$T/stats"
else
	check "lets the kernel check callers' permissions (server.identity = native)" \
		grep -q '^identity.userspace_exports 0$' "$T/stats"
fi

echo "hello over nfsrdma" >"$T/export/hello.txt"
check "nfs-ls lists the export" bash -c "nfs-ls '$URL/$Q' | grep -q hello.txt"
check "nfs-cat reads a file" bash -c "[ \"\$(nfs-cat '$URL/hello.txt$Q')\" = 'hello over nfsrdma' ]"
head -c 5000000 /dev/urandom >"$T/up.bin"
nfs-cp "$T/up.bin" "$URL/up.bin$Q" >/dev/null 2>&1
check "nfs-cp uploads 5 MB and the server's copy matches" cmp -s "$T/up.bin" "$T/export/up.bin"
nfs-cp "$URL/up.bin$Q" "$T/down.bin" >/dev/null 2>&1
check "nfs-cp downloads it back intact" cmp -s "$T/up.bin" "$T/down.bin"
"$S" -s -f "$T/srv.conf" >"$T/stats2" 2>&1
diag "$(grep '^handles\.' "$T/stats2" | tr '\n' ' ')"
check "an export whose client list leaves us out refuses us" \
	bash -c "! nfs-ls 'nfs://127.0.0.1$T/locked/$Q' >/dev/null 2>&1"

# SIGHUP: the export turns read-only
write_conf "$T/srv.conf" ro ""
kill -HUP "$(cat "$T/server.pid")"
sleep 0.5
echo x >"$T/x.txt"
nfs-cp "$T/x.txt" "$URL/after-reload.txt$Q" >"$T/ro.log" 2>&1
check "after SIGHUP the export is read-only (NFS3ERR_ROFS)" grep -q ROFS "$T/ro.log"
check "reads still work after the reload" bash -c "nfs-cat '$URL/hello.txt$Q' | grep -q hello"

# idle after that traffic, its loops do not spin (server.adaptive_poll_us
# shrinks to nothing; a fixed spin, in server_daemon_poll.sh, spins once per wait)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$(cat "$T/server.pid")/stat"; }
sleep 0.5
idle0=$(cpu_ticks)
sleep 2
idle=$(($(cpu_ticks) - idle0))
diag "CPU over 2 s idle: $idle of $((2 * $(getconf CLK_TCK))) ticks"
check "an idle server does not spin (at most a tenth of a CPU over 2 s)" \
	[ "$idle" -le $((2 * $(getconf CLK_TCK) / 10)) ]

# start-up failures, each with its message
"$S" -f "$T/srv.conf" >"$T/twice.log" 2>&1
check "a second instance on the same pidfile is refused" \
	bash -c "[ $? -ne 0 ] && grep -q 'already running' '$T/twice.log'"
sed -e "s|$T/server.pid|$T/other.pid|" -e "s|$T/ctl.sock|$T/other.sock|" "$T/srv.conf" >"$T/taken.conf"
"$S" -F -f "$T/taken.conf" >"$T/taken.log" 2>&1
check "a port in use stops start-up with a clear message" \
	bash -c "[ $? -ne 0 ] && grep -q 'cannot listen on TCP 127.0.0.1:$TCP' '$T/taken.log'"
sed -e "s|$T/server.pid|$T/other.pid|" -e "s|rdma_port = $RDMA|rdma_port = $(free_port)|" \
	-e "s|tcp_port = $TCP|tcp_port = $(free_port)|" "$T/srv.conf" >"$T/sock.conf"
state0=$(cat "$T/sm/state" 2>&1)
timeout 20 "$S" -F -f "$T/sock.conf" >"$T/sock.log" 2>&1
check "a second server on the same control socket is refused and says so" \
	bash -c "[ $? -ne 0 ] && grep -q 'control socket $T/ctl.sock: another server answers there' '$T/sock.log'"
check "before it touched the first one's NSM state (no restart told to its clients)" \
	bash -c "[ -s '$T/sm/state' ] && [ \"\$(cat '$T/sm/state')\" = '$state0' ]"
check "and the first one still answers on it" \
	bash -c "'$S' -s -f '$T/srv.conf' 2>&1 | grep -q '^rdma.device soft'"
sed -e "s|$T/export\"|$T/missing\"|" -e "s|rdma_port = $RDMA|rdma_port = $(free_port)|" \
	-e "s|tcp_port = $TCP|tcp_port = $(free_port)|" "$T/taken.conf" >"$T/missing.conf"
"$S" -F -f "$T/missing.conf" >"$T/missing.log" 2>&1
check "a missing export path stops start-up and is named" \
	bash -c "[ $? -ne 0 ] && grep -q '$T/missing' '$T/missing.log'"
sed -e 's|provider = "soft"|provider = "nosuchdev9"|' -e "s|tcp_port = $TCP|tcp_port = 0|" \
	"$T/taken.conf" >"$T/noprov.conf"
"$S" -F -f "$T/noprov.conf" >"$T/noprov.log" 2>&1
check "a provider that cannot start stops start-up and says why" \
	bash -c "[ $? -ne 0 ] && grep -q \"cannot open RDMA provider 'nosuchdev9'\" '$T/noprov.log'"
head -c 32 /dev/urandom >"$T/loose.key"
chmod 644 "$T/loose.key"
sed -e "s|$T/handle.key|$T/loose.key|" "$T/taken.conf" >"$T/loose.conf"
"$S" -F -f "$T/loose.conf" >"$T/loose.log" 2>&1
check "a file handle key others can read stops start-up and is named" \
	bash -c "[ $? -ne 0 ] && grep -q 'file handle key: $T/loose.key' '$T/loose.log'"

# SIGTERM under load: every upload that reported success is complete on disk
kill -TERM "$(cat "$T/server.pid")"
for i in $(seq 50); do [ -e "$T/server.pid" ] || break; sleep 0.1; done
check "SIGTERM stops it and removes the pidfile" test ! -e "$T/server.pid"
write_conf "$T/srv.conf" rw ""

# a restart: handles stay valid, the write verifier changes (so clients resend)
"$S" -f "$T/srv.conf" 2>/dev/null
"$B/t/system/nfsprobe" before 127.0.0.1 $TCP "$T/export" "$T/probe.state" >"$T/probe1" 2>&1
check "an UNSTABLE write before the restart" grep -q "wrote 37 bytes UNSTABLE" "$T/probe1"
kill -TERM "$(cat "$T/server.pid")"
for i in $(seq 50); do [ -e "$T/server.pid" ] || break; sleep 0.1; done
"$S" -f "$T/srv.conf" 2>/dev/null
"$B/t/system/nfsprobe" after 127.0.0.1 $TCP "$T/export" "$T/probe.state" >"$T/probe2" 2>&1
check "after a restart the old file handle still resolves and the data is there" \
	bash -c "grep -q 'still resolves' '$T/probe2' && grep -q 'reads back' '$T/probe2'"
check "and the write verifier changed" grep -q "verifier changed" "$T/probe2"
kill -TERM "$(cat "$T/server.pid")"
for i in $(seq 50); do [ -e "$T/server.pid" ] || break; sleep 0.1; done
"$S" -F -f "$T/srv.conf" 2>"$T/load.log" &
SPID=$!
PIDS+=($SPID)
for i in $(seq 50); do [ -S "$T/ctl.sock" ] && break; sleep 0.1; done
head -c 4000000 /dev/urandom >"$T/load.bin"
# An upload the stop cuts short never ends on its own (libnfs reconnects for
# ever): each has 30 s, and only one that reported success is checked.
UPLOADS=()
for i in $(seq 8); do
	(timeout 30 nfs-cp "$T/load.bin" "$URL/load$i.bin$Q" >/dev/null 2>&1 && echo ok >"$T/load$i.done") &
	UPLOADS+=($!)
done
PIDS+=("${UPLOADS[@]}")
sleep 0.3
kill -TERM $SPID
wait_bounded 30 $SPID
check "SIGTERM under load exits 0 after finishing the calls in flight" [ $? -eq 0 ]
for p in "${UPLOADS[@]}"; do wait_bounded 40 "$p"; done
done_ok=0
bad=0
for i in $(seq 8); do
	if [ -e "$T/load$i.done" ]; then
		done_ok=$((done_ok + 1))
		cmp -s "$T/load.bin" "$T/export/load$i.bin" || bad=$((bad + 1))
	fi
done
echo "# $done_ok of 8 uploads completed before the server stopped"
check "no completed upload lost a byte" [ $bad -eq 0 ]
check "the control socket is gone after exit" test ! -e "$T/ctl.sock"
exit $T_FAILED
