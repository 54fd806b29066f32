#!/bin/bash
# server_storage_stall.sh: an export whose storage stops answering holds only
# what it has (server/call_gate.c). A head exports a throwaway CephFS and a
# tmpfs directory with 3 workers and server.storage_timeout_s = 4; the
# cluster's only OSD is stopped (SIGSTOP) while three clients read a CephFS
# file: two calls are held in the cluster, the third waits for the export's
# share of the workers (2 of 3), 1 s at most, and is answered
# NFS3ERR_JUKEBOX. The tmpfs export keeps answering; a reload waits for the
# held calls no longer than the storage timeout and is refused, naming the
# export; after it the CephFS export counts as stalled (said in the log), its
# calls are answered NFS3ERR_JUKEBOX at once and a reload is refused at once.
# When the OSD goes on, the held calls finish with the right bytes, the log
# says the storage answers again, and reads and the reload work. TAP output.
set -u
B=${top_builddir:-.}
S=$B/server/nfsrdma-server
. "$(dirname "$0")/../test-lib.sh"
. "$(dirname "$0")/ceph_lib.sh"

ceph_need
for tool in nfs-cp nfs-cat; do
	command -v $tool >/dev/null || skip_all "$tool missing (Debian: libnfs-utils)"
done

T=$(mktemp -d /tmp/nfsrdma-stall.XXXXXX)
OSD=""
SPID=""
cleanup() {
	[ -n "$OSD" ] && kill -CONT "$OSD" 2>/dev/null
	if [ -n "$SPID" ]; then
		kill -TERM "$SPID" 2>/dev/null
		timeout 60 tail --pid="$SPID" -f /dev/null
	fi
	ceph_stop
	rm -rf "$T"
}
trap cleanup EXIT

plan 16
if ! ceph_start; then
	echo "not ok 1 - the mini cluster starts"
	exit 1
fi
ok 0 "a throwaway CephFS started ($CEPH_DIR)"
OSD=$(cat "$CEPH_DIR/run/osd.0.pid")
# no object cacher: every READ goes to the OSD
{ cat "$CEPH_CONF"; printf '\n[client]\nclient_oc = false\n'; } >"$T/ceph.conf"
mkdir "$T/posix" && chmod 777 "$T/posix"

TCP=$(free_port)
cat >"$T/A.conf" <<EOF
log = { level = "info"; };
rdma = { provider = "soft"; };
server = {
	listen = ["127.0.0.1"];
	rdma_port = $(free_port);
	tcp_port = $TCP;
	threads = 3;
	storage_timeout_s = 4;
	pidfile = "$T/A.pid";
	control_socket = "$T/A.sock";
	handle_key_file = "$T/handle.key";
	exports = (
		{ path = "/ceph"; clients = ["127.0.0.1"]; access = "rw"; root_squash = false;
		  backend = "cephfs";
		  ceph = { conf_file = "$T/ceph.conf"; client_id = "$CEPH_CLIENT_ID";
			   keyring = "$CEPH_KEYRING"; mount_timeout_s = 5; }; },
		{ path = "$T/posix"; clients = ["127.0.0.1"]; access = "rw"; root_squash = false; }
	);
};
EOF
# in the foreground, so that its log stays in A.log
"$S" -F -f "$T/A.conf" 2>"$T/A.log" &
SPID=$!
for i in $(seq 100); do [ -S "$T/A.sock" ] && break; sleep 0.1; done
# reload: nfsrdma-server -r; its exit status in rc, its seconds in took
reload() {
	local start=$(date +%s)
	timeout 30 "$S" -r -f "$T/A.conf" >"$T/r.out" 2>&1
	rc=$?
	took=$(($(date +%s) - start))
	echo "# reload: exit $rc after $took s"
}
url() { echo "nfs://127.0.0.1$1?version=3&nfsport=$TCP&mountport=$TCP"; }

head -c 1000000 /dev/urandom >"$T/data.bin"
nfs-cp "$T/data.bin" "$(url /ceph/data.bin)" >/dev/null 2>&1 &&
	nfs-cp "$T/data.bin" "$(url "$T/posix/data.bin")" >/dev/null 2>&1
ok $? "a file written to both exports"

kill -STOP "$OSD"
HELD=()
for k in 1 2 3; do
	timeout 60 nfs-cat "$(url /ceph/data.bin)" >"$T/held.$k" 2>"$T/held.$k.err" &
	HELD+=($!)
done
sleep 0.5
# a worker stays free: the third call past the share waits at most 1 s
t0=$(date +%s%N)
timeout 10 nfs-cat "$(url "$T/posix/data.bin")" >"$T/posix.out" 2>&1
ms=$((($(date +%s%N) - t0) / 1000000))
echo "# the tmpfs export answered in $ms ms"
check "the tmpfs export answers while calls are held in the cluster, within the storage timeout" \
	bash -c "cmp -s '$T/data.bin' '$T/posix.out' && [ $ms -lt 2500 ]"
# a reload without the CephFS export opens at once, then waits for the held
# calls, no longer than the storage timeout
cp "$T/A.conf" "$T/A.conf.orig"
awk '/path = "\/ceph"/ {skip = 4} skip {skip--; next} {print}' "$T/A.conf.orig" >"$T/A.conf"
reload
check "a reload waits the storage timeout for the held calls, no longer, and says why" \
	bash -c "[ $rc -eq 1 ] && [ $took -ge 2 ] && [ $took -le 7 ] && grep -q 'calls are still in storage that does not answer' '$T/r.out'"
check "the log names the export that holds them" \
	grep -q "reload refused: 2 calls still in export '/ceph', whose storage does not answer within 4 s" "$T/A.log"
start=$(date +%s)
timeout 20 nfs-cat "$(url /ceph/data.bin)" >"$T/jb.out" 2>&1
rc=$?
check "after the storage timeout, a client of the export is answered NFS3ERR_JUKEBOX at once" \
	bash -c "[ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $(($(date +%s) - start)) -le 5 ] && grep -q JUKEBOX '$T/jb.out'"
check "and the log says the export has stalled" \
	grep -q "export '/ceph': none of its 2 calls has finished in 4 s" "$T/A.log"
# which of the three got in first is the workers' race: one was answered (its
# error names the status only for some calls), two still wait
alive=0
for pid in "${HELD[@]}"; do kill -0 "$pid" 2>/dev/null && alive=$((alive + 1)); done
check "so was the one of the three that waited for the export's share" test $alive -eq 2
cat "$T"/held.?.err | sed 's/^/# /' | head -3

reload
check "a reload does not wait at all for a stalled export" \
	bash -c "[ $rc -eq 1 ] && [ $took -le 2 ] && grep -q 'calls are still in storage that does not answer' '$T/r.out'"
cp "$T/A.conf.orig" "$T/A.conf"
timeout 10 nfs-cat "$(url "$T/posix/data.bin")" >"$T/posix.out" 2>&1
check "after the refused reload, the tmpfs export answers" cmp -s "$T/data.bin" "$T/posix.out"
check "the server's figures (-s) answer while calls are held in the cluster" \
	bash -c "timeout 5 '$S' -s -f '$T/A.conf' | grep -q '^reply_cache.hits '"

kill -CONT "$OSD"
held=0
for k in 1 2 3; do
	wait "${HELD[$((k - 1))]}"
	r=$?
	[ $r -eq 124 ] && echo "# nfs-cat $k still waited after 60 s"
	[ $r -eq 0 ] && cmp -s "$T/data.bin" "$T/held.$k" && held=$((held + 1))
done
check "the two held calls finish when the OSD goes on, with the right bytes" test $held -eq 2
check "the log says the storage answers again" \
	grep -q "export '/ceph': its storage answers again" "$T/A.log"
timeout 20 nfs-cat "$(url /ceph/data.bin)" >"$T/after.out" 2>&1
check "the CephFS export serves again" cmp -s "$T/data.bin" "$T/after.out"
timeout 30 "$S" -r -f "$T/A.conf" >"$T/r.out" 2>&1
check "and a reload works" grep -qxF "reloaded $T/A.conf" "$T/r.out"
check "the head did not crash" kill -0 "$SPID"
