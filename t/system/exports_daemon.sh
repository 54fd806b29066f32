#!/bin/bash
# exports_daemon.sh: the real nfsrdma-server serving exports defined only in
# an exports(5) file (server.exports_file), reached by libnfs's tools over TCP:
# each client's own options (rw, ro, no_root_squash, all_squash with anonuid,
# secure against a port above 1023), a mount by nfsrdma-client over RPC/RDMA,
# nfsrdma-server -e (the exportfs -v view and the clients connected now, per
# transport), and SIGHUP and the control socket (-r) rereading the file, a
# broken one leaving the running exports in place. TAP output.
set -u
B=${top_builddir:-.}
S=$B/server/nfsrdma-server
. "$(dirname "$0")/../test-lib.sh"

[ "$(id -u)" -eq 0 ] || skip_all "the server opens files by handle and switches identities: needs root"
for tool in nfs-ls nfs-cp setpriv python3; do
	command -v $tool >/dev/null || skip_all "$tool missing (Debian: libnfs-utils, util-linux, python3)"
done

T=$(mktemp -d /tmp/nfsrdma-xdaemon.XXXXXX)
chmod 755 "$T"
HOLD=
CLIENT=$B/nfsrdma-client
cleanup() {
	[ -n "$HOLD" ] && kill "$HOLD" 2>/dev/null
	mountpoint -q "$T/mnt" 2>/dev/null && { "$CLIENT" umount "$T/mnt" || umount -l "$T/mnt"; }
	[ -f "$T/server.pid" ] && kill -TERM "$(cat "$T/server.pid")" 2>/dev/null
	sleep 0.2
	rm -rf "$T"
}
trap cleanup EXIT

mkdir -p "$T/pub" "$T/sec" "$T/squash" "$T/later" "$T/viar" "$T/mnt"
chmod 777 "$T/pub" "$T/squash"
echo "secure data" >"$T/sec/s.txt"
echo "later data" >"$T/later/l.txt"
write_conf() { daemon_conf "$T/srv.conf" "$T" '	exports_file = "srv.exports";'; }
cat >"$T/srv.exports" <<EOF
# only here: the configuration has no exports list
$T/pub     127.0.0.1(rw,no_root_squash,insecure)
$T/sec     *(ro)
$T/squash  127.0.0.1(rw,all_squash,anonuid=4321,anongid=4322,insecure)
EOF
Q() { echo "?version=3&nfsport=$TCP&mountport=$TCP"; }
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

plan 23
for attempt in 1 2 3; do
	TCP=$(free_port)
	RDMA=$(free_port)
	write_conf
	"$S" -f "$T/srv.conf" 2>"$T/start.log"
	started=$?
	grep -q "Address already in use" "$T/start.log" || break
done
check "starts with exports from the exports file only" [ $started -eq 0 ]
[ $started -eq 0 ] || sed 's/^/# /' "$T/start.log"

echo "hello" >"$T/pub/hello.txt"
check "nfs-ls lists an export defined only in the exports file" \
	bash -c "nfs-ls 'nfs://127.0.0.1$T/pub/$(Q)' | grep -q hello.txt"
head -c 300000 /dev/urandom >"$T/up.bin"
nfs-cp "$T/up.bin" "nfs://127.0.0.1$T/pub/up.bin$(Q)" >/dev/null 2>&1
check "rw: nfs-cp uploads and the copy matches" cmp -s "$T/up.bin" "$T/pub/up.bin"
check "no_root_squash: root's file stays root's" [ "$(stat -c %u "$T/pub/up.bin" 2>/dev/null)" = 0 ]
nfs-cp "$T/up.bin" "nfs://127.0.0.1$T/squash/sq.bin$(Q)" >/dev/null 2>&1
check "all_squash,anonuid=4321,anongid=4322: the file belongs to 4321:4322" \
	[ "$(stat -c %u:%g "$T/squash/sq.bin" 2>/dev/null)" = 4321:4322 ]
check "secure: root (a port below 1024) lists the export" \
	bash -c "nfs-ls 'nfs://127.0.0.1$T/sec/$(Q)' | grep -q s.txt"
as_nobody nfs-ls "nfs://127.0.0.1$T/sec/$(Q)" >"$T/nobody.out" 2>&1
check "secure: a client on a port above 1023 is refused" grep -q "MNT3ERR_ACCES" "$T/nobody.out"
check "insecure: the same client may use the insecure export" \
	bash -c "setpriv --reuid=65534 --regid=65534 --clear-groups nfs-ls 'nfs://127.0.0.1$T/pub/$(Q)' | grep -q hello.txt"
nfs-cp "$T/up.bin" "nfs://127.0.0.1$T/sec/no.bin$(Q)" >/dev/null 2>&1
check "ro: an upload is refused" [ ! -e "$T/sec/no.bin" ]

# -e while a client holds a TCP connection open
python3 -c "
import socket, sys, time
s = socket.create_connection(('127.0.0.1', $TCP))
print(s.getsockname()[1], flush=True)
time.sleep(30)
" >"$T/hold.port" &
HOLD=$!
for _ in $(seq 50); do [ -s "$T/hold.port" ] && break; sleep 0.1; done
sleep 0.2
"$S" -e -f "$T/srv.conf" >"$T/e.out" 2>&1
check "-e shows each client with its options, as exportfs -v" \
	grep -qxF "$(printf '%s\n\t\t127.0.0.1(rw,sync,no_subtree_check,sec=sys,insecure,no_root_squash,no_all_squash,anonuid=65534,anongid=65534)' "$T/pub" | tail -1)" "$T/e.out"
check "-e shows defaults filled in (ro, secure, root_squash)" \
	grep -qF "*(ro,sync,no_subtree_check,sec=sys,secure,root_squash,no_all_squash,anonuid=65534,anongid=65534)" "$T/e.out"
check "-e shows the client connected now, per transport" \
	grep -qxF "$(printf 'tcp\t127.0.0.1:%s' "$(cat "$T/hold.port")")" "$T/e.out"
grep -q "all_squash,anonuid=4321,anongid=4322" "$T/e.out" || sed 's/^/# /' "$T/e.out"
kill "$HOLD" 2>/dev/null
wait "$HOLD" 2>/dev/null
HOLD=

# the client over RPC/RDMA (FUSE), seen by -e
if [ -c /dev/fuse ] && grep -qw fuse /proc/filesystems && [ -x "$CLIENT" ] &&
	! "$CLIENT" mount -h 2>&1 | grep -q 'built without libfuse3'; then
	"$CLIENT" mount -o "port=$RDMA" "127.0.0.1:$T/pub" "$T/mnt" 2>"$T/mount.err"
	check "nfsrdma-client mounts the file's export over RPC/RDMA and reads it" \
		[ "$(cat "$T/mnt/hello.txt" 2>/dev/null)" = hello ]
	"$S" -e -f "$T/srv.conf" >"$T/e.out" 2>&1
	check "-e shows the RPC/RDMA client connected now" grep -qP '^rdma\t127\.0\.0\.1:[0-9]+$' "$T/e.out"
	grep -qP '^rdma\t' "$T/e.out" || sed 's/^/# /' "$T/e.out" "$T/mount.err"
	"$CLIENT" umount "$T/mnt"
else
	skip "FUSE or nfsrdma-client's mount is missing: no RPC/RDMA mount"
	skip "FUSE or nfsrdma-client's mount is missing: no RPC/RDMA client for -e"
fi

# SIGHUP rereads the file
echo "$T/later 127.0.0.1(ro,insecure)" >>"$T/srv.exports"
kill -HUP "$(cat "$T/server.pid")"
for _ in $(seq 50); do
	"$S" -e -f "$T/srv.conf" 2>/dev/null | grep -qF "$T/later" && break
	sleep 0.1
done
check "SIGHUP: an export added to the file shows in -e" \
	bash -c "'$S' -e -f '$T/srv.conf' | grep -qF '$T/later'"
check "and can be used" bash -c "nfs-ls 'nfs://127.0.0.1$T/later/$(Q)' | grep -q l.txt"

# the control socket's reload: nfsrdma-server -r
echo "via -r" >"$T/viar/r.txt"
echo "$T/viar 127.0.0.1(ro,insecure)" >>"$T/srv.exports"
"$S" -r -f "$T/srv.conf" >"$T/r.out" 2>&1
check "-r: the server reloads through its control socket and says so" \
	bash -c "[ $? -eq 0 ] && grep -qxF 'reloaded $T/srv.conf' '$T/r.out'"
check "-r: the new export is served" bash -c "nfs-ls 'nfs://127.0.0.1$T/viar/$(Q)' | grep -q r.txt"

echo "$T/pub *(rw,bogus)" >>"$T/srv.exports"
kill -HUP "$(cat "$T/server.pid")"
sleep 1
check "a broken file on SIGHUP: the server keeps running" kill -0 "$(cat "$T/server.pid")"
check "with the exports it had" bash -c "nfs-ls 'nfs://127.0.0.1$T/viar/$(Q)' | grep -q r.txt"
"$S" -t -f "$T/srv.conf" >"$T/t.out" 2>&1
check "-t names the broken line" grep -qxF "$T/srv.exports:7: unknown export option 'bogus'" "$T/t.out"
"$S" -r -f "$T/srv.conf" >"$T/r.out" 2>&1
check "-r on a broken file exits 1, naming the line" \
	bash -c "[ $? -eq 1 ] && grep -qxF \"$T/srv.exports:7: unknown export option 'bogus'\" '$T/r.out'"
# the server's own answer (-r checks the file first and does not ask)
python3 -c "
import socket
s = socket.socket(socket.AF_UNIX)
s.connect('$T/ctl.sock')
s.sendall(b'reload\n')
s.shutdown(socket.SHUT_WR)
print(s.makefile().read(), end='')
" >"$T/ctl.out" 2>&1
check "the control socket refuses a broken file, naming the line" \
	bash -c "grep -qxF \"$T/srv.exports:7: unknown export option 'bogus'\" '$T/ctl.out' &&
		grep -qx 'reload refused: the running configuration stays' '$T/ctl.out'"
exit $T_FAILED
