#!/bin/bash
# metrics.sh: server.metrics.listen: the real nfsrdma-server serves GET
# /metrics in the Prometheus text format while I/O runs (libnfs's nfs-cp over
# TCP, nfsrdma-client bench over RPC/RDMA): promtool check metrics finds
# nothing to say (SKIP where promtool is missing), every family has # HELP and
# # TYPE and an nfsrdma_ name, per-procedure call counts and latency
# histograms per transport grow with the I/O, RDMA chunk bytes and
# registrations count; other paths are 404, other methods 405; a bad address
# and a port in use are refused with the reason. TAP output.
set -u
B=${top_builddir:-.}
S=$B/server/nfsrdma-server
CLIENT=$B/nfsrdma-client
. "$(dirname "$0")/../test-lib.sh"

[ "$(id -u)" -eq 0 ] || skip_all "the server opens files by handle: needs root"
grep -q "^#define HAVE_LIBMICROHTTPD 1" "$B/config.h" 2>/dev/null ||
	skip_all "built without libmicrohttpd: no /metrics (Debian: libmicrohttpd-dev, then configure)"
for tool in nfs-cp curl; do
	command -v $tool >/dev/null || skip_all "$tool missing (Debian: libnfs-utils, curl)"
done

T=$(mktemp -d /tmp/nfsrdma-metrics.XXXXXX)
chmod 755 "$T"
IO=
cleanup() {
	[ -n "$IO" ] && kill "$IO" 2>/dev/null
	[ -f "$T/server.pid" ] && kill -TERM "$(cat "$T/server.pid")" 2>/dev/null
	sleep 0.2
	rm -rf "$T"
}
trap cleanup EXIT
mkdir -p "$T/export"
chmod 777 "$T/export"

write_conf() { # write_conf FILE METRICS-LISTEN
	daemon_conf "$1" "$T" "	metrics = { listen = \"$2\"; };
	exports = ( { path = \"$T/export\"; clients = [\"127.0.0.1\"]; access = \"rw\"; } );"
}
scrape() { # scrape FILE: GET /metrics into FILE; the HTTP status and type on stdout
	curl -s -o "$1" -w '%{http_code} %{content_type}' "http://127.0.0.1:$MPORT/metrics"
}
# value FILE SAMPLE: the value of the sample whose name and labels are SAMPLE (0 if none)
value() {
	awk -v s="$2" '$1 == s { v = $2 } END { print v + 0 }' "$1"
}

plan 18
for attempt in 1 2 3; do
	TCP=$(free_port)
	RDMA=$(free_port)
	MPORT=$(free_port)
	write_conf "$T/srv.conf" "127.0.0.1:$MPORT"
	"$S" -f "$T/srv.conf" 2>"$T/start.log"
	started=$?
	grep -q "Address already in use" "$T/start.log" || break
done
check "starts with server.metrics.listen set" [ $started -eq 0 ]
[ $started -eq 0 ] || sed 's/^/# /' "$T/start.log"

# I/O over TCP in the background while we scrape
# (a new file each time: nfs-cp does not overwrite; old ones removed behind it)
head -c 262144 /dev/urandom >"$T/blob"
(
	for i in $(seq 1000); do
		nfs-cp "$T/blob" "nfs://127.0.0.1$T/export/f$i?version=3&nfsport=$TCP&mountport=$TCP" \
			>/dev/null 2>&1
		rm -f "$T/export/f$((i - 4))"
	done
) &
IO=$!
W='nfsrdma_calls_total{transport="tcp",program="nfs",procedure="WRITE"}'
for _ in $(seq 100); do
	scrape "$T/m1" >/dev/null
	[ "$(value "$T/m1" "$W")" -gt 0 ] && break
	sleep 0.1
done
# the second scrape once another WRITE has run (10 s at most: a busy machine is slow)
w1=$(value "$T/m1" "$W")
for _ in $(seq 100); do
	st=$(scrape "$T/m2")
	[ "$(value "$T/m2" "$W")" -gt "$w1" ] && break
	sleep 0.1
done
check "GET /metrics while I/O runs: 200, text/plain; version=0.0.4" \
	[ "$st" = "200 text/plain; version=0.0.4; charset=utf-8" ]
[ "$st" = "200 text/plain; version=0.0.4; charset=utf-8" ] || diag "got: $st"
kill -0 "$IO" 2>/dev/null
ok $? "the I/O was still running at the second scrape"
w2=$(value "$T/m2" "$W")
check "WRITE calls over TCP are counted and grow between scrapes ($w1, then $w2)" \
	[ "$w1" -gt 0 -a "$w2" -gt "$w1" ]
check "their latency histogram counts them too" \
	[ "$(value "$T/m2" 'nfsrdma_call_duration_seconds_count{transport="tcp",program="nfs",procedure="WRITE"}')" -ge "$w2" ]
check "and MOUNT's calls, by procedure" \
	[ "$(value "$T/m2" 'nfsrdma_calls_total{transport="tcp",program="mount",procedure="MNT"}')" -gt 0 ]
if command -v promtool >/dev/null; then
	promtool check metrics <"$T/m2" >"$T/lint" 2>&1
	check "promtool check metrics finds nothing to say" \
		bash -c "[ $? -eq 0 ] && [ ! -s '$T/lint' ]"
	sed 's/^/# promtool: /' "$T/lint"
else
	skip "promtool is not installed (Debian: prometheus)"
fi
# our own check, promtool or not: every family named nfsrdma_*, with HELP and TYPE
awk '/^# HELP /{h[$3]=1} /^# TYPE /{t[$3]=$4}
	!/^#/ { n=$1; sub(/\{.*/, "", n); f=n; if (!(f in t)) sub(/_(bucket|sum|count)$/, "", f);
		if (!(f in h) || !(f in t) || f !~ /^nfsrdma_/) { print "bad sample: " $0; bad=1 } }
	END { exit bad }' "$T/m2" >"$T/bad"
check "every sample belongs to an nfsrdma_* family with # HELP and # TYPE" [ ! -s "$T/bad" ]
head -3 "$T/bad" | sed 's/^/# /'
# and every family is in nfsrdma-metrics(7)
man7=${top_srcdir:-$(dirname "$0")/../..}/man/nfsrdma-metrics.7
awk '/^# TYPE /{print $3}' "$T/m2" | sort -u | while read -r fam; do
	grep -qx "\.BR\? $fam\( :\)\?" "$man7" || echo "$fam"
done >"$T/undoc"
check "every family is documented in nfsrdma-metrics(7)" [ ! -s "$T/undoc" ]
sed 's/^/# not in the man page: /' "$T/undoc"
kill "$IO" 2>/dev/null
wait "$IO" 2>/dev/null
IO=

# RPC/RDMA: the client's bench writes and reads (verified) through chunks
if [ -x "$CLIENT" ]; then
	"$CLIENT" bench "127.0.0.1:$T/export" -o "port=$RDMA" -r 1m -j 1 -s 4m >"$T/bench.out" 2>&1
	ok $? "nfsrdma-client bench runs over RPC/RDMA"
	scrape "$T/m3" >/dev/null
	check "READ and WRITE over RPC/RDMA are counted" \
		[ "$(value "$T/m3" 'nfsrdma_calls_total{transport="rdma",program="nfs",procedure="WRITE"}')" -gt 0 \
		-a "$(value "$T/m3" 'nfsrdma_calls_total{transport="rdma",program="nfs",procedure="READ"}')" -gt 0 ]
	check "chunk bytes in (RDMA Read of WRITE data) are counted" \
		[ "$(value "$T/m3" 'nfsrdma_rdma_bytes_total{direction="in",path="chunk"}')" -ge 4194304 ]
	check "chunk bytes out (RDMA Write of READ data) are counted" \
		[ "$(value "$T/m3" 'nfsrdma_rdma_bytes_total{direction="out",path="chunk"}')" -ge 4194304 ]
else
	skip "nfsrdma-client was not built"
	skip "nfsrdma-client was not built"
	skip "nfsrdma-client was not built"
	skip "nfsrdma-client was not built"
fi

python3 -c "
import socket
s = socket.socket(socket.AF_UNIX)
s.connect('$T/ctl.sock')
s.sendall(b'metrics\\n')
s.shutdown(socket.SHUT_WR)
print(s.makefile().read(), end='')
" >"$T/ctl.out" 2>&1
check "the control socket's 'metrics' answers the same families" \
	bash -c "[ \"\$(grep '^# TYPE' '$T/ctl.out')\" = \"\$(grep '^# TYPE' '$T/m3')\" ] && grep -qx 'nfsrdma_exports 1' '$T/ctl.out'"
check "another path is 404" \
	[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$MPORT/")" = 404 ]
check "another method is 405" \
	[ "$(curl -s -X POST -o /dev/null -w '%{http_code}' "http://127.0.0.1:$MPORT/metrics")" = 405 ]

# refused with the reason: a bad address (-t), a port in use (start-up)
write_conf "$T/bad.conf" "localhost:9101"
"$S" -t -f "$T/bad.conf" >"$T/t.out" 2>&1
check "-t: an address that is not ADDR:PORT is named" \
	grep -qF "$T/bad.conf:10: server.metrics.listen: \"localhost:9101\": \"localhost\" is not an IPv4 address or a bracketed IPv6 one" "$T/t.out"
grep -q "server.metrics.listen" "$T/t.out" || sed 's/^/# /' "$T/t.out"
TCP2=$(free_port)
sed -e "s|$T/server.pid|$T/second.pid|" -e "s|$T/ctl.sock|$T/ctl2.sock|" \
	-e "s|tcp_port = $TCP;|tcp_port = $TCP2;|" -e "s|rdma_port = $RDMA;|rdma_port = $(free_port);|" \
	"$T/srv.conf" >"$T/second.conf"
"$S" -f "$T/second.conf" >"$T/second.log" 2>&1
st=$?
check "a metrics port in use stops start-up, saying so" \
	bash -c "[ $st -ne 0 ] && grep -q 'server.metrics.listen: cannot listen on 127.0.0.1:$MPORT: Address already in use' '$T/second.log'"
[ -f "$T/second.pid" ] && kill "$(cat "$T/second.pid")" 2>/dev/null
exit $T_FAILED
