#!/bin/bash
# systemd_notify.sh: nfsrdma-server -F under a fake service manager: a Unix
# datagram socket in NOTIFY_SOCKET, read by python3, which on READY=1 checks at
# once that the server's TCP port takes connections. READY=1 with a STATUS=,
# RELOADING=1 then READY=1 on SIGHUP, STOPPING=1 on SIGTERM, in that order; and
# without NOTIFY_SOCKET the server starts and stops the same way. TAP output.
set -u
B=${top_builddir:-.}
S=$B/server/nfsrdma-server
. "$(dirname "$0")/../test-lib.sh"

[ "$(id -u)" -eq 0 ] || skip_all "the server opens files by handle: needs root"
command -v python3 >/dev/null || skip_all "python3 missing"
grep -q "^#define HAVE_LIBSYSTEMD 1" "$B/config.h" 2>/dev/null ||
	skip_all "built without libsystemd: no sd_notify (Debian: libsystemd-dev, then configure)"

T=$(mktemp -d /tmp/nfsrdma-notify.XXXXXX)
SRV=
READER=
cleanup() {
	[ -n "$SRV" ] && kill -TERM "$SRV" 2>/dev/null
	[ -n "$READER" ] && kill "$READER" 2>/dev/null
	sleep 0.2
	rm -rf "$T"
}
trap cleanup EXIT
mkdir -p "$T/export"

write_conf() {
	daemon_conf "$T/srv.conf" "$T" "	exports = ( { path = \"$T/export\"; clients = [\"127.0.0.1\"]; } );"
}

# The fake manager: each message on one line ("\n" inside shown as "|"); on
# READY=1, "tcp-up" or "tcp-down" after it, from a connect made at once.
reader() {
	python3 - "$T/notify.sock" "$TCP" "$T/notify.log" <<'EOF' &
import socket, sys
path, port, log = sys.argv[1], int(sys.argv[2]), sys.argv[3]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
s.settimeout(60)
with open(log, "w", buffering=1) as out:
    while True:
        try:
            msg = s.recv(4096).decode()
        except socket.timeout:
            break
        line = msg.replace("\n", "|")
        if "READY=1" in msg.split("\n"):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=2).close()
                line += " tcp-up"
            except OSError:
                line += " tcp-down"
        out.write(line + "\n")
        if "STOPPING=1" in msg.split("\n"):
            break
EOF
	READER=$!
	for _ in $(seq 50); do [ -S "$T/notify.sock" ] && return; sleep 0.1; done
}
# wait_for PATTERN: until the log has a line matching it (10 s at most)
wait_for() {
	for _ in $(seq 100); do grep -q "$1" "$T/notify.log" 2>/dev/null && return 0; sleep 0.1; done
	return 1
}

plan 9
for attempt in 1 2 3; do
	TCP=$(free_port)
	RDMA=$(free_port)
	write_conf
	rm -f "$T/notify.sock"
	reader
	NOTIFY_SOCKET=$T/notify.sock "$S" -F -f "$T/srv.conf" 2>"$T/srv.log" &
	SRV=$!
	wait_for "READY=1" && break
	grep -q "Address already in use" "$T/srv.log" || break
	kill "$READER" 2>/dev/null
	wait "$SRV" 2>/dev/null
done
check "READY=1 arrives" wait_for "^READY=1"
check "after the listeners are up (the TCP port took a connection at once)" \
	grep -q "^READY=1.* tcp-up$" "$T/notify.log"
check "with a STATUS= line saying what is served" \
	grep -qF "READY=1|STATUS=serving 1 export on RPC/RDMA port $RDMA and TCP port $TCP" "$T/notify.log"
kill -HUP "$SRV"
wait_for "RELOADING=1"
check "SIGHUP: RELOADING=1" grep -q "^RELOADING=1|STATUS=" "$T/notify.log"
two_ready() { [ "$(grep -c '^READY=1' "$T/notify.log")" -ge 2 ]; }
for _ in $(seq 100); do two_ready && break; sleep 0.1; done
check "then READY=1 again" two_ready
[ "$(grep -n '^READY=1' "$T/notify.log" | tail -1 | cut -d: -f1)" -gt \
	"$(grep -n '^RELOADING=1' "$T/notify.log" | cut -d: -f1)" ]
ok $? "the second READY=1 comes after RELOADING=1"
kill -TERM "$SRV"
wait_bounded 30 "$SRV"
st=$?
SRV=
check "SIGTERM: STOPPING=1" wait_for "^STOPPING=1|STATUS="
check "and the server exits 0" [ $st -eq 0 ]
sed 's/^/# /' "$T/notify.log"

# without NOTIFY_SOCKET: the same start and stop, nothing else to say
"$S" -F -f "$T/srv.conf" 2>"$T/plain.log" &
SRV=$!
up=1
for _ in $(seq 100); do
	python3 -c "import socket; socket.create_connection(('127.0.0.1', $TCP), timeout=1)" 2>/dev/null && { up=0; break; }
	sleep 0.1
done
kill -TERM "$SRV"
wait_bounded 30 "$SRV"
st=$?
SRV=
[ $up -eq 0 ] && [ $st -eq 0 ] && ! grep -q "cannot notify" "$T/plain.log"
ok $? "without NOTIFY_SOCKET it serves, stops with exit 0 and warns of nothing"
[ $up -eq 0 ] && [ $st -eq 0 ] || diag "up $up, exit $st"
grep "cannot notify" "$T/plain.log" | sed 's/^/# /'
exit $T_FAILED
