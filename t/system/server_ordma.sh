#!/bin/bash
# server_ordma.sh: Optimistic RDMA through the real nfsrdma-server (soft
# provider) and nfsrdma-client bench (issue 23): what -t refuses, the cache
# the daemon exposes and counts (-s), verified reads that hit it, REMOVE
# emptying the slots of the file it removes, a reload
# that empties it, and a server without an ordma export that exposes nothing
# while an ordma client still reads right. TAP output.
set -u
B=${top_builddir:-.}
S=$B/server/nfsrdma-server
C=$B/nfsrdma-client
. "$(dirname "$0")/../test-lib.sh"

[ "$(id -u)" -eq 0 ] || skip_all "the server opens files by handle: needs root"
[ -x "$C" ] || skip_all "nfsrdma-client was not built"

T=$(mktemp -d /tmp/nfsrdma-ordma.XXXXXX)
cleanup() {
	[ -f "$T/server.pid" ] && kill -TERM "$(cat "$T/server.pid")" 2>/dev/null
	sleep 0.2
	rm -rf "$T"
}
trap cleanup EXIT
mkdir -p "$T/export"
chmod 777 "$T/export"

conf() { # conf FILE TRUSTED ORDMA
	daemon_conf "$1" "$T" "	trusted_peers = $2;
	ordma = { cache = \"32M\"; };
	exports = ( { path = \"$T/export\"; clients = [\"127.0.0.1\"]; access = \"rw\"; ordma = $3; } );"
}
stat_of() { "$S" -s -f "$T/srv.conf" 2>/dev/null | awk -v k="$1" '$1 == k {print $2}'; }
bench() { # bench LOG [HOOK]: 4 MiB read in order, then shuffled, every block checked
	"$C" bench "127.0.0.1:$T/export" -o "port=$RDMA,provider=soft,ordma" -q \
		-t read,randread -r 4k -s 4m --verify ${2:+--hook "$2"} > "$1" 2>&1
}
# After the shuffled pass, while bench's file is still there: the slots in
# use, a reload, the slots in use again.
cat > "$T/reload-hook.sh" << HOOK
#!/bin/sh
[ "\$1 \$2" = "end randread" ] || exit 0
"$S" -s -f "$T/srv.conf" | awk '\$1 == "ordma.used" {print \$2}' > "$T/used-before"
kill -HUP "\$(cat "$T/server.pid")"
sleep 1
"$S" -s -f "$T/srv.conf" | awk '\$1 == "ordma.used" {print \$2}' > "$T/used-after"
HOOK
chmod 755 "$T/reload-hook.sh"

plan 11
TCP=$(free_port)
RDMA=$(free_port)
conf "$T/untrusted.conf" false true
"$S" -t -f "$T/untrusted.conf" > "$T/t.out" 2>&1
rc=$?
check "-t refuses ordma without trusted_peers, naming the setting" \
	bash -c "[ $rc -ne 0 ] && grep -q 'exports.\[0\].ordma: every client' '$T/t.out'"
conf "$T/srv.conf" true true
"$S" -f "$T/srv.conf" 2> "$T/start.log"
check "starts with an ordma export" [ $? -eq 0 ]
check "exposes a cache (-s ordma.slots)" [ "$(stat_of ordma.slots)" -gt 0 ]
bench "$T/b1.out"
check "bench -o ordma --verify reads every block right" [ $? -eq 0 ]
hits=$(awk '/^ordma: / {h = $2} END {print h + 0}' "$T/b1.out")
check "the shuffled pass hits the cache (ordma: $hits hits)" [ "$hits" -gt 0 ]
check "the server filled slots and handed out references" \
	bash -c "[ '$(stat_of ordma.fills)' -gt 0 ] && [ '$(stat_of ordma.refs)' -gt 0 ]"
check "bench's REMOVE at the end emptied its file's slots" \
	bash -c "[ '$(stat_of ordma.forgets)' -gt 0 ] && [ '$(stat_of ordma.used)' = 0 ]"
bench "$T/b2.out" "$T/reload-hook.sh"
check "it fills again, read right" [ $? -eq 0 ]
check "a reload empties the cache ($(cat "$T/used-before" 2>/dev/null) slots used, then $(cat "$T/used-after" 2>/dev/null))" \
	bash -c "[ '$(cat "$T/used-before" 2>/dev/null)' -gt 0 ] && [ '$(cat "$T/used-after" 2>/dev/null)' = 0 ]"
kill -TERM "$(cat "$T/server.pid")"
for i in $(seq 50); do [ -f "$T/server.pid" ] || break; sleep 0.1; done
conf "$T/srv.conf" true false
"$S" -f "$T/srv.conf" 2> "$T/start2.log"
check "without an ordma export nothing is exposed (ordma.slots 0)" [ "$(stat_of ordma.slots)" = 0 ]
bench "$T/b3.out"
check "and an ordma client reads right with READ alone" \
	bash -c "[ $? -eq 0 ] && grep -q '^ordma: 0 hits' '$T/b3.out'"
[ -f "$T/b1.out" ] && sed 's/^/# /' "$T/b1.out" | grep '# ordma'
