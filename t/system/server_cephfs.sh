#!/bin/bash
# server_cephfs.sh: two nfsrdma-server heads exporting one CephFS (a
# throwaway cluster started here, stopped at the end), driven by libnfs's
# tools over TCP and, where FUSE works, by nfsrdma-client mounts over
# RPC/RDMA: a file written and committed through head A reads back byte for
# byte through head B, a handle from A works on B (and on B after a restart),
# each head start has its own write verifier, squashing reaches the cluster,
# the configuration and start-up errors name what is wrong, NLM locks taken
# through one head are the cluster's and exclude the clients of the other, and
# a client mounted with both heads (heads=) carries on through B when A is
# killed during its writes. TAP output.
set -u
B=${top_builddir:-.}
S=$B/server/nfsrdma-server
CLIENT=$B/nfsrdma-client
LP=$B/t/system/lockprog
. "$(dirname "$0")/../test-lib.sh"
. "$(dirname "$0")/ceph_lib.sh"

ceph_need
for tool in nfs-ls nfs-cp nfs-cat; do
	command -v $tool >/dev/null || skip_all "$tool missing (Debian: libnfs-utils)"
done

T=$(mktemp -d /tmp/nfsrdma-cephd.XXXXXX)
MOUNTS=()
cleanup() {
	local m h
	for m in "${MOUNTS[@]}"; do
		grep -q " $m fuse.nfsrdma " /proc/mounts && { umount "$m" 2>/dev/null || umount -l "$m"; }
	done
	for h in A B C; do
		[ -f "$T/$h.pid" ] && kill -TERM "$(cat "$T/$h.pid")" 2>/dev/null
	done
	sleep 0.5
	ceph_stop
	rm -rf "$T"
}
trap cleanup EXIT

plan 31
if ! ceph_start; then
	echo "not ok 1 - the mini cluster starts"
	exit 1
fi
ok 0 "a throwaway CephFS started ($CEPH_DIR)"

# write_conf HEAD [CONF_FILE]: head HEAD's configuration; the heads share the
# handle key file, each has its own ports, pidfile and control socket, and its
# lock manager calls back to the port of the mount that uses it (CB_HEAD).
write_conf() {
	local h=$1 conf=${2:-$CEPH_CONF}
	eval "local tcp=\$TCP_$h rdma=\$RDMA_$h cb=\$CB_$h"
	cat >"$T/$h.conf" <<EOF
log = { level = "info"; };
rdma = { provider = "${PROVIDER:-soft}"; };
server = {
	listen = ["127.0.0.1"];
	rdma_port = $rdma;
	tcp_port = $tcp;
	pidfile = "$T/$h.pid";
	control_socket = "$T/$h.sock";
	handle_key_file = "$T/handle.key";
	nlm = { enable = true; grace_s = 0; client_rpcbind_port = $cb; };
	nsm = { state_dir = "$T/sm-$h"; };
	exports = (
		{ path = "/ceph"; clients = ["127.0.0.1"]; access = "rw"; root_squash = false;
		  backend = "cephfs";
		  ceph = { conf_file = "$conf"; client_id = "$CEPH_CLIENT_ID";
			   keyring = "$CEPH_KEYRING"; mount_timeout_s = 5; }; },
		{ path = "/ceph-squashed"; clients = ["127.0.0.1"]; access = "rw";
		  backend = "cephfs";
		  ceph = { conf_file = "$conf"; client_id = "$CEPH_CLIENT_ID";
			   keyring = "$CEPH_KEYRING"; mount_timeout_s = 5; }; }
	);
};
EOF
}

# start_head HEAD: start (detached) with fresh ports; 0 when it serves.
start_head() {
	local h=$1 attempt rc
	for attempt in 1 2 3; do
		eval "TCP_$h=$(free_port) RDMA_$h=$(free_port) CB_$h=$(free_port)"
		write_conf "$h"
		"$S" -f "$T/$h.conf" 2>"$T/$h.log"
		rc=$?
		grep -q "Address already in use" "$T/$h.log" || break
	done
	[ $rc -eq 0 ] || sed 's/^/# /' "$T/$h.log"
	return $rc
}

stop_head() {
	local i
	kill -TERM "$(cat "$T/$1.pid")" 2>/dev/null
	for i in $(seq 100); do [ -e "$T/$1.pid" ] || return 0; sleep 0.1; done
	return 1
}

url() { eval "echo \"nfs://127.0.0.1$2?version=3&nfsport=\$TCP_$1&mountport=\$TCP_$1\""; }

TCP_A=$(free_port) RDMA_A=$(free_port) CB_A=$(free_port)
write_conf A
"$S" -t -f "$T/A.conf" >"$T/t.log" 2>&1
check "-t accepts a cephfs export with its ceph group" grep -q "configuration ok" "$T/t.log"
sed -e 's|backend = "cephfs";||' "$T/A.conf" >"$T/posix.conf"
"$S" -t -f "$T/posix.conf" >"$T/t2.log" 2>&1
check "-t refuses ceph settings on a posix export, naming them" \
	grep -q 'server.exports.\[0\].ceph.conf_file: only for backend = "cephfs"' "$T/t2.log"
sed -e "s|conf_file = \"$CEPH_CONF\"|conf_file = \"$T/nope.conf\"|" "$T/A.conf" >"$T/nope.conf.conf"
"$S" -t -f "$T/nope.conf.conf" >"$T/t3.log" 2>&1
check "-t names a ceph.conf it cannot read" \
	bash -c "[ $? -ne 0 ] && grep -q 'ceph.conf_file: $T/nope.conf: cannot open' '$T/t3.log'"

check "head A starts on the CephFS" start_head A
check "head B starts on the same CephFS" start_head B
check "start-up names the backend" grep -q "export '/ceph': cephfs" "$T/B.log"

head -c 3000000 /dev/urandom >"$T/up.bin"
nfs-cp "$T/up.bin" "$(url A /ceph/up.bin)" >/dev/null 2>&1
ok $? "nfs-cp writes 3 MB through head A"
nfs-cp "$(url B /ceph/up.bin)" "$T/down-b.bin" >/dev/null 2>&1
check "head B reads it back byte for byte" cmp -s "$T/up.bin" "$T/down-b.bin"
echo "from head B" >"$T/small.txt"
nfs-cp "$T/small.txt" "$(url B /ceph/small.txt)" >/dev/null 2>&1
check "a file written through B reads through A" \
	bash -c "[ \"\$(nfs-cat '$(url A /ceph/small.txt)')\" = 'from head B' ]"

# nfsprobe: CREATE + UNSTABLE WRITE through A; GETATTR/READ/COMMIT with A's
# handle through B
"$B/t/system/nfsprobe" before 127.0.0.1 "$TCP_A" /ceph "$T/probe.state" >"$T/probe1" 2>&1
check "an UNSTABLE write through head A" grep -q "wrote 37 bytes UNSTABLE" "$T/probe1"
"$B/t/system/nfsprobe" after 127.0.0.1 "$TCP_B" /ceph "$T/probe.state" >"$T/probe2" 2>&1
check "head A's file handle works on head B, with A's data" \
	bash -c "grep -q 'still resolves' '$T/probe2' && grep -q 'reads back' '$T/probe2'"
check "and B's write verifier is not A's" grep -q "verifier changed" "$T/probe2"
stop_head B
start_head B
"$B/t/system/nfsprobe" after 127.0.0.1 "$TCP_B" /ceph "$T/probe.state" >"$T/probe3" 2>&1
check "the handle still works on B after B restarts (ceph_ll_lookup_inode)" \
	grep -q 'still resolves' "$T/probe3"

# squashing reaches the cluster: root squashed to 65534 may not write into
# the root (0755, root's), root unsquashed may
nfs-cp "$T/small.txt" "$(url A /ceph-squashed/squashed.txt)" >"$T/squash.log" 2>&1
squash_rc=$?
nfs-cp "$T/small.txt" "$(url A /ceph/unsquashed.txt)" >/dev/null 2>&1
check "a squashed root cannot create in root's directory, an unsquashed one can" \
	bash -c "[ $squash_rc -ne 0 ] && [ $? -eq 0 ] && ! nfs-ls '$(url A /ceph/)' | grep -q ' squashed.txt\$'"

# lock_tests: NLM through both heads (mounts over RPC/RDMA, NLM over TCP, each
# head's GRANTED callbacks to its own mount): a range one client locks
# through head A is the cluster's, so head B refuses it to another client,
# names it in F_GETLK, and grants it once A's client unlocks.
lock_tests() {
	local f out got t0 ms
	mkdir -p "$T/la" "$T/lb"
	MOUNTS+=("$T/la" "$T/lb")
	"$CLIENT" mount -o "port=$RDMA_A,lockport=$TCP_A,lockcbport=$CB_A" 127.0.0.1:/ceph \
		"$T/la" 2>"$T/la.log" &&
		"$CLIENT" mount -o "port=$RDMA_B,lockport=$TCP_B,lockcbport=$CB_B" 127.0.0.1:/ceph \
			"$T/lb" 2>"$T/lb.log"
	check "two mounts with locks, one through each head" [ $? -eq 0 ]
	: >"$T/la/locked"
	out() { "$LP" "$@" 2>&1 | tr '\n' ' ' | sed 's/ $//'; }
	"$LP" "$T/la/locked" w 0 100 s 4000 u 0 100 >"$T/lock-a.out" 2>&1 &
	local apid=$!
	for f in $(seq 100); do [ -s "$T/lock-a.out" ] && break; sleep 0.1; done
	check "a write lock through head A" [ "$(head -1 "$T/lock-a.out")" = ok ]
	got=$(out "$T/lb/locked" w 50 10)
	check "head B refuses the range to its client ($got)" [ "$got" = busy ]
	check "and grants another range" [ "$(out "$T/lb/locked" w 200 100)" = ok ]
	got=$(out "$T/lb/locked" t 0 0)
	check "head B's F_GETLK names the lock taken through A ($got)" \
		bash -c "[[ '$got' == 'locked w 0 100 '* ]]"
	t0=$(date +%s%N)
	got=$(out "$T/lb/locked" W 10 10)
	ms=$((($(date +%s%N) - t0) / 1000000))
	wait "$apid"
	check "head B's F_SETLKW is granted once A's client unlocks ($got after $ms ms)" \
		[ "$got" = ok ] && [ $ms -ge 1500 ] && [ $ms -lt 20000 ]
	# a reload while a lock is held: the lock stays, on the export's old
	# mount, which goes with its last owner (the unlock uses it: under ASan
	# a freed mount would end the daemon); the new one serves new locks
	: >"$T/lock-a2.out"
	"$LP" "$T/la/locked" w 0 100 s 6000 u 0 100 >"$T/lock-a2.out" 2>&1 &
	apid=$!
	for f in $(seq 100); do [ -s "$T/lock-a2.out" ] && break; sleep 0.1; done
	"$S" -r -f "$T/A.conf" >"$T/reload.out" 2>&1
	got=$(out "$T/lb/locked" w 50 10)
	check "head A reloads with a lock held through it, which still holds ($got)" \
		bash -c "grep -q reloaded '$T/reload.out' && [ '$got' = busy ]"
	wait "$apid"
	check "after its owner unlocks, the reloaded head A grants the range again" \
		[ "$(out "$T/la/locked" w 0 100)" = ok ]
	umount "$T/la" 2>/dev/null
	umount "$T/lb" 2>/dev/null
}

# RPC/RDMA and FUSE: nfsrdma-client mounts of both heads
have_fuse=no
[ -c /dev/fuse ] && grep -qw fuse /proc/filesystems && [ -x "$CLIENT" ] && [ -x "$LP" ] &&
	! "$CLIENT" mount -h 2>&1 | grep -q 'built without libfuse3' && have_fuse=yes
if [ $have_fuse = yes ]; then
	mkdir -p "$T/ma" "$T/mb"
	MOUNTS=("$T/ma" "$T/mb")
	"$CLIENT" mount -o "port=$RDMA_A" 127.0.0.1:/ceph "$T/ma" 2>"$T/ma.log" &&
		"$CLIENT" mount -o "port=$RDMA_B" 127.0.0.1:/ceph "$T/mb" 2>"$T/mb.log"
	check "nfsrdma-client mounts head A and head B over RPC/RDMA" [ $? -eq 0 ]
	head -c 2000000 /dev/urandom >"$T/fuse.bin"
	cp "$T/fuse.bin" "$T/ma/fuse.bin" && sync "$T/ma/fuse.bin"
	check "a file copied into A's mount and synced reads back through B's" \
		cmp -s "$T/fuse.bin" "$T/mb/fuse.bin"
	umount "$T/ma" 2>/dev/null
	umount "$T/mb" 2>/dev/null
	lock_tests
else
	skip "no FUSE here: the RPC/RDMA mounts are not tried"
	skip "no FUSE here"
	for i in 1 2 3 4 5 6 7 8; do skip "no FUSE here: locks are not tried"; done
fi

# a cluster that does not answer: start-up says so and fails
sed -e 's/^mon_host.*/mon_host = v2:127.0.0.1:9/' "$CEPH_CONF" >"$T/dead.conf"
TCP_C=$(free_port) RDMA_C=$(free_port) CB_C=$(free_port)
write_conf C "$T/dead.conf"
"$S" -F -f "$T/C.conf" >"$T/C.log" 2>&1
check "a head whose cluster does not answer does not start, and says why" \
	bash -c "[ $? -ne 0 ] && grep -q \"export '/ceph': cannot reach the Ceph cluster of $T/dead.conf as client.$CEPH_CLIENT_ID\" '$T/C.log'"

# failover: a client mounted with both heads writes a stream of UNSTABLE
# data through A; A is killed on the way; the client carries on through B
# (resending what A had not committed) and the file is complete and correct
if [ "$have_fuse" = yes ]; then
	mkdir -p "$T/mf"
	MOUNTS+=("$T/mf")
	head -c 60000000 /dev/urandom >"$T/fo.bin"
	"$CLIENT" mount -o "foreground,port=$RDMA_A,heads=127.0.0.1:$RDMA_B" 127.0.0.1:/ceph \
		"$T/mf" 2>"$T/mf.log" &
	MPID=$!
	for i in $(seq 100); do grep -q " $T/mf fuse.nfsrdma " /proc/mounts && break; sleep 0.1; done
	(cp "$T/fo.bin" "$T/mf/fo.bin" && sync "$T/mf/fo.bin"; echo $? >"$T/fo.done") &
	CPID=$!
	for i in $(seq 100); do
		[ "$(stat -c %s "$T/mf/fo.bin" 2>/dev/null || echo 0)" -gt 8000000 ] && break
		sleep 0.1
	done
	kill -KILL "$(cat "$T/A.pid")"
	rm -f "$T/A.pid"
	wait_bounded 180 $CPID
	check "a copy through a mount of both heads completes after head A is killed" \
		[ "$(cat "$T/fo.done" 2>/dev/null)" = 0 ]
	check "the client moved to head B" grep -q "moving to head 127.0.0.1:$RDMA_B" "$T/mf.log"
	"$CLIENT" stats "$T/mf" >"$T/mf.stats" 2>&1
	check "nfsrdma-client stats says head B is in use" \
		grep -q "^heads: 2 in use 127.0.0.1:$RDMA_B (head 1) switches [1-9]" "$T/mf.stats"
	nfs-cp "$(url B /ceph/fo.bin)" "$T/fo-b.bin" >/dev/null 2>&1
	check "and the file read through head B is the one written" cmp -s "$T/fo.bin" "$T/fo-b.bin"
	umount "$T/mf"
	wait_bounded 30 $MPID
else
	skip "no FUSE here: failover is not tried"
	skip "no FUSE here"
	skip "no FUSE here"
	skip "no FUSE here"
	stop_head A
fi
# the cluster goes first: a stop still ends, within ceph.mount_timeout_s (5)
"$MINI_CEPH" stop "$CEPH_DIR" >/dev/null 2>&1
check "SIGTERM stops head B within 10 s though its cluster is gone" stop_head B
exit $T_FAILED
