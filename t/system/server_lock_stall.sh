#!/bin/bash
# server_lock_stall.sh: lock calls into storage that stops answering hold only
# what they have (server/call_gate.c, nfs_backend_lock_enter). A head exports
# a throwaway CephFS and a tmpfs directory with 3 workers and
# server.storage_timeout_s = 3; three clients mount the CephFS export with
# locks (FUSE; each has its own connection to the lock manager), a fourth
# the tmpfs export, and the
# cluster's MDS, which CephFS locks go to, is stopped (SIGSTOP) while each
# asks for a lock there: one lock call is held in the cluster, the others
# wait for it a second at most and are answered NLM4_DENIED_GRACE_PERIOD (the
# client asks again). The tmpfs export
# keeps answering (before, the three took every worker, one in the cluster
# and two waiting for the lock manager behind it), and its locks are granted
# at once (each export has its own turn in the lock manager: before, one
# turn for all, and the tmpfs export's lock calls were refused while the
# CephFS call held it); after the storage timeout
# the log says the lock manager's storage does not answer, and the server's
# figures (-s, /metrics), which read the lock manager's state, answer (before, they
# waited for the call in the cluster, which held that state). When the MDS goes
# on, all three locks are granted and the log says the storage answers
# again. Then a lock call held there longer than the client waits for one
# (10 s) fails with ENOLCK; the server grants it when the MDS goes on, and its
# owner's close releases it (the client counts it as held), so that another
# client gets the range instead of finding it taken for ever. TAP output.
set -u
B=${top_builddir:-.}
S=$B/server/nfsrdma-server
CLIENT=$B/nfsrdma-client
LP=$B/t/system/lockprog
. "$(dirname "$0")/../test-lib.sh"
. "$(dirname "$0")/ceph_lib.sh"

ceph_need
command -v nfs-cat >/dev/null || skip_all "nfs-cat missing (Debian: libnfs-utils)"
[ -x "$CLIENT" ] && [ -x "$LP" ] || skip_all "nfsrdma-client or t/system/lockprog is not built"
[ -c /dev/fuse ] && grep -qw fuse /proc/filesystems || skip_all "no FUSE here"
"$CLIENT" mount -h 2>&1 | grep -q 'built without libfuse3' && skip_all "built without libfuse3"

T=$(mktemp -d /tmp/nfsrdma-lstall.XXXXXX)
MDS=""
SPID=""
LPS=()
cleanup() {
	[ -n "$MDS" ] && kill -CONT "$MDS" 2>/dev/null
	for pid in "${LPS[@]}"; do kill "$pid" 2>/dev/null; done
	for m in "$T"/m?; do
		grep -q " $m fuse.nfsrdma " /proc/mounts && { umount "$m" 2>/dev/null || umount -l "$m"; }
	done
	if [ -n "$SPID" ]; then
		kill -TERM "$SPID" 2>/dev/null
		timeout 60 tail --pid="$SPID" -f /dev/null
	fi
	ceph_stop
	rm -rf "$T"
}
trap cleanup EXIT

plan 14
if ! ceph_start; then
	echo "not ok 1 - the mini cluster starts"
	exit 1
fi
ok 0 "a throwaway CephFS started ($CEPH_DIR)"
MDS=$(cat "$CEPH_DIR/run/mds.a.pid")
mkdir "$T/posix" "$T/m1" "$T/m2" "$T/m3" "$T/m4" "$T/sm" && chmod 777 "$T/posix"

TCP=$(free_port) RDMA=$(free_port) CB=$(free_port) MP=$(free_port)
# /metrics where the build serves it (libmicrohttpd)
METRICS=""
grep -q "^#define HAVE_LIBMICROHTTPD 1" "$B/config.h" 2>/dev/null &&
	METRICS="metrics = { listen = \"127.0.0.1:$MP\"; };"
cat >"$T/A.conf" <<EOF
log = { level = "info"; };
rdma = { provider = "soft"; };
server = {
	listen = ["127.0.0.1"];
	rdma_port = $RDMA;
	tcp_port = $TCP;
	threads = 3;
	storage_timeout_s = 3;
	pidfile = "$T/A.pid";
	control_socket = "$T/A.sock";
	handle_key_file = "$T/handle.key";
	$METRICS
	nlm = { enable = true; grace_s = 0; client_rpcbind_port = $CB; };
	nsm = { state_dir = "$T/sm"; };
	exports = (
		{ path = "/ceph"; clients = ["127.0.0.1"]; access = "rw"; root_squash = false;
		  backend = "cephfs";
		  ceph = { conf_file = "$CEPH_CONF"; client_id = "$CEPH_CLIENT_ID";
			   keyring = "$CEPH_KEYRING"; mount_timeout_s = 5; }; },
		{ path = "$T/posix"; clients = ["127.0.0.1"]; access = "rw"; root_squash = false; }
	);
};
EOF
# in the foreground, so that its log stays in A.log
"$S" -F -f "$T/A.conf" 2>"$T/A.log" &
SPID=$!
for i in $(seq 100); do [ -S "$T/A.sock" ] && break; sleep 0.1; done
url() { echo "nfs://127.0.0.1$1?version=3&nfsport=$TCP&mountport=$TCP"; }
# posix_read NAME MS: check NAME: the tmpfs export's file reads back right within MS ms
posix_read() {
	local t0=$(date +%s%N) ms
	timeout 10 nfs-cat "$(url "$T/posix/data.bin")" >"$T/posix.out" 2>&1
	ms=$((($(date +%s%N) - t0) / 1000000))
	echo "# the tmpfs export answered in $ms ms"
	check "$1" bash -c "cmp -s '$T/posix/data.bin' '$T/posix.out' && [ $ms -lt $2 ]"
}
head -c 100000 /dev/urandom >"$T/posix/data.bin"

mounted=0
for k in 1 2 3; do
	"$CLIENT" mount -o "port=$RDMA,lockport=$TCP,lockcbport=$(free_port)" 127.0.0.1:/ceph \
		"$T/m$k" 2>"$T/m$k.log" && mounted=$((mounted + 1))
done
[ $mounted -eq 3 ] && : >"$T/m1/locked" &&
	[ "$("$LP" "$T/m2/locked" w 0 1 u 0 1 | tr '\n' ' ')" = "ok ok " ]
ok $? "three mounts of the CephFS export with locks; one takes and releases a lock"
"$CLIENT" mount -o "port=$RDMA,lockport=$TCP,lockcbport=$(free_port)" "127.0.0.1:$T/posix" \
	"$T/m4" 2>"$T/m4.log" && : >"$T/m4/locked"
ok $? "a mount of the tmpfs export with locks"

# each opens the file now and asks for its own range once the MDS is stopped
for k in 1 2 3; do
	"$LP" "$T/m$k/locked" s 3000 w $((k * 10)) 5 >"$T/lp.$k" 2>&1 &
	LPS+=($!)
done
for i in $(seq 100); do
	open=0
	for pid in "${LPS[@]}"; do ls -l "/proc/$pid/fd" 2>/dev/null | grep -q locked && open=$((open + 1)); done
	[ $open -eq 3 ] && break
	sleep 0.1
done
kill -STOP "$MDS"
sleep 4
posix_read "the tmpfs export answers while lock calls are held in the cluster" 2500
t0=$(date +%s%N)
got=$(timeout -k 5 15 "$LP" "$T/m4/locked" w 0 5 u 0 5 | tr '\n' ' ')
ms=$((($(date +%s%N) - t0) / 1000000))
check "and its locks are taken and released at once ($got, $ms ms)" \
	test "$got" = "ok ok " -a "$ms" -lt 2000
granted=$(cat "$T"/lp.? | grep -c '^ok$')
check "no lock is granted while the MDS is stopped ($granted)" test "$granted" -eq 0
for i in $(seq 100); do
	grep -q "the lock manager '/ceph': none of its 1 calls has finished in 3 s" "$T/A.log" && break
	sleep 0.1
done
check "after the storage timeout, the log says the lock manager's storage does not answer" \
	grep -q "the lock manager '/ceph': none of its 1 calls has finished in 3 s" "$T/A.log"
posix_read "and the tmpfs export answers at once" 1500
# the call held in the cluster holds no lock of the lock manager's tables:
# the server's figures (control socket, /metrics) answer
check "the server's figures answer while a lock call is held in the cluster" \
	bash -c "timeout 5 '$S' -s -f '$T/A.conf' | grep -q '^nlm.owners '"
if [ -n "$METRICS" ] && command -v curl >/dev/null; then
	check "and so does /metrics" \
		bash -c "curl -s -m 5 http://127.0.0.1:$MP/metrics | grep -q '^nfsrdma_nlm_owners '"
else
	skip "and so does /metrics: built without libmicrohttpd, or no curl"
fi

kill -CONT "$MDS"
t0=$(date +%s%N)
for pid in "${LPS[@]}"; do timeout 60 tail --pid="$pid" -f /dev/null; done
echo "# the three lock requests ended $((($(date +%s%N) - t0) / 1000000)) ms after the MDS went on"
granted=$(cat "$T"/lp.? | grep -c '^ok$')
cat "$T"/lp.? | grep -v '^ok$' | sed 's/^/# /' | head -3
check "when the MDS goes on, all three locks are granted ($granted)" test "$granted" -eq 3
check "and the log says the lock manager's storage answers again" \
	grep -q "the lock manager '/ceph': its storage answers again" "$T/A.log"

kill -STOP "$MDS"
"$LP" "$T/m1/locked" w 100 5 s 4000 >"$T/lp.4" 2>&1 &
LPS+=($!)
for i in $(seq 200); do [ -s "$T/lp.4" ] && break; sleep 0.1; done
kill -CONT "$MDS"
got=$(head -1 "$T/lp.4")
check "a lock call held in the cluster past the client's 10 s fails there ($got)" \
	[ "$got" = "error No locks available" ]
timeout 30 tail --pid="${LPS[3]}" -f /dev/null
got=$("$LP" "$T/m2/locked" w 100 5)
check "once its owner has closed the file, another client gets the range ($got)" [ "$got" = ok ]
