#!/bin/bash
# kclient-suites.sh: the Linux kernel's NFSv3 client over RPC/RDMA (rxe0, in
# ../shared/rdmalab) run the way users run it, against the kernel's own nfsd
# and against nfsrdma-server in the same guest, each exporting a tmpfs:
#   - a non-root user's `touch` (it wedged the mount when a worker that took
#     on a caller's identity posted to the device);
#   - Connectathon basic, general and special, as root;
#   - pjdfstest files, as root; the files that use -u/-g switch to other users
#     themselves. PJD_FILES: globs under tests/ ("*/*.t" for all of them;
#     "ug" for every file that uses -u/-g in the directories below); by
#     default the first three files that use -u/-g in each of chmod,
#     ftruncate, link, mkdir, mkfifo, open, rmdir, symlink, truncate and
#     unlink (about 30 files, some 12 minutes a server under the lab's
#     emulation, where a pjdfstest file takes 10 to 40 s).
# TAP: per server, how many passed; every suite and file that passes on knfsd
# must pass on nfsrdma-server (the files that differ are listed); no "cannot
# post" in the server's log; no reconnect after the first mount but after the
# kernel client closed an idle transport itself (its transport events are
# traced, and printed with the server's log when it reconnected).
# Prints "1..0 # SKIP reason" when the lab cannot run here.
#
# Environment: see lab-common.sh; LAB_TIMEOUT (default 2400 s for the guest).
# The whole test: nfsrdma-test-deadline: 2500
set -u
timeout=${LAB_TIMEOUT:-2400}
. "$(dirname "$0")/lab-common.sh"

lab_require
[ -x "$top_builddir/server/nfsrdma-server" ] || skip_all "server/nfsrdma-server is not built"
grep -q '^#define HAVE_RDMACORE 1' "$top_builddir/config.h" ||
	skip_all "built without rdma-core: nothing can talk to rxe0"
logs=$top_builddir/t/lab/suites-run
rm -rf "$logs"
mkdir -p "$logs" || exit 1
[ -d "$top_srcdir/../shared/suites/cthon04" ] && [ -d "$top_srcdir/../shared/suites/pjdfstest" ] ||
	skip_all "no test suites in $top_srcdir/../shared/suites"
if ! "$top_srcdir/scripts/build-suites.sh" "$top_builddir/t/lab/suites" > "$logs/build.log" 2>&1; then
	echo "1..1"
	echo "not ok 1 - the suites build: $(tail -n 1 "$logs/build.log")"
	exit 1
fi
suites=$top_builddir/t/lab/suites
per_dir=3
case ${PJD_FILES:-} in
ug) per_dir=1000 ;;
?*) files=$PJD_FILES ;;
esac
if [ -z "${files:-}" ]; then
	files=$(cd "$suites/pjdfstest/tests" && for d in chmod ftruncate link mkdir mkfifo open \
		rmdir symlink truncate unlink; do
		grep -l -e '-u ' -e '-g ' $d/*.t | head -n $per_dir
	done | tr '\n' ' ')
fi

cat > "$logs/guest.sh" << 'EOF'
# Runs in the guest: $1 build dir, $2 suites dir, $3 logs, $4 pjdfstest files, $5 source dir.
B=$1 SU=$2 L=$3 FILES=$4 SRC=$5 IP=$RDMALAB_IP
. "$SRC/t/lab/lab-guest.sh"
M=/mnt/s
modprobe nfsv3 && modprobe rpcrdma
pidof rpcbind > /dev/null || rpcbind -w
mkdir -p $M
opts=vers=3,proto=rdma,port=20049,nolock

start_nfsrdma() { # the export in /export
	mkdir -p /export && mount -t tmpfs -o size=512m nfsrdma-export /export
	nfsrdma_conf "$L/server.conf"
	# in the foreground, so that its log (connections, errors) is ours
	"$B/server/nfsrdma-server" -F -f "$L/server.conf" 2> "$L/nfsrdma/server.log" &
	for i in $(seq 100); do [ -S /run/nfsrdma-server.sock ] && break; sleep 0.1; done
}
stop_nfsrdma() {
	"$B/server/nfsrdma-server" -s -f "$L/server.conf" > "$L/nfsrdma/server.stats" 2>&1
	kill -TERM "$(cat /run/nfsrdma-server.pid)"
	for i in $(seq 100); do [ -e /run/nfsrdma-server.pid ] || break; sleep 0.1; done
}
start_knfsd() { lab-knfsd -d /export -s 512m -p 20049 2> "$L/knfsd/server.log"; }
stop_knfsd() { :; }

# The kernel client's transport events (connects, disconnects and why,
# timeouts, retransmissions, RPC/RDMA errors) while a server is mounted, so
# that a reconnect says who closed and after what.
T=/sys/kernel/tracing
EVENTS="sunrpc/xprt_connect sunrpc/xprt_disconnect_auto sunrpc/xprt_disconnect_done
	sunrpc/xprt_disconnect_force sunrpc/xprt_retransmit sunrpc/xprt_timer
	sunrpc/rpc_timeout_status sunrpc/rpc_task_timeout rpcrdma/xprtrdma_op_connect
	rpcrdma/xprtrdma_connect rpcrdma/xprtrdma_disconnect rpcrdma/xprtrdma_op_inject_dsc
	rpcrdma/xprtrdma_err_chunk rpcrdma/xprtrdma_err_vers rpcrdma/xprtrdma_err_unrecognized
	rpcrdma/xprtrdma_reply_hdr_err rpcrdma/xprtrdma_reply_rqst_err
	rpcrdma/xprtrdma_reply_short_err rpcrdma/xprtrdma_reply_vers_err
	rpcrdma/xprtrdma_post_send_err rpcrdma/xprtrdma_post_recvs_err
	rpcrdma/xprtrdma_prepsend_failed rpcrdma/xprtrdma_marshal_failed"
trace_on() {
	[ -d $T/events ] || mount -t tracefs nodev $T 2> /dev/null
	for e in $EVENTS; do echo 1 > $T/events/$e/enable; done 2> /dev/null
	echo > $T/trace 2> /dev/null
}
trace_save() { cat $T/trace > "$1" 2> /dev/null; echo > $T/trace 2> /dev/null; }

# one server: its results in $L/$1/results as "NAME RESULT" lines
run_on() {
	local s=$1 d=$L/$1 f rc
	mkdir -p "$d"
	res() { echo "$1 $2" >> "$d/results"; }
	start_$s
	trace_on
	mount -t nfs -o $opts "$IP:/export" $M 2> "$d/mount.err"
	res mounted $?
	mountpoint -q $M || return
	mkdir -m 1777 $M/scratch
	timeout 60 setpriv --reuid 65534 --regid 65534 --clear-groups touch $M/scratch/by-nobody
	res nonroot_touch $?
	for t in b g s; do
		mkdir -p $M/cthon-$t
		(cd "$SU/cthon04" && timeout 600 ./runtests -$t -f $M/cthon-$t) > "$d/cthon-$t.log" 2>&1
		res cthon-$t $?
	done
	mkdir -p $M/pjd && cd $M/pjd || return
	for f in $FILES; do
		for t in "$SU"/pjdfstest/tests/$f; do
			[ -f "$t" ] || continue
			timeout 300 prove -q "$t" > "$d/pjd.out" 2>&1
			rc=$?
			echo "== $t: $rc" >> "$d/pjd.log"
			cat "$d/pjd.out" >> "$d/pjd.log"
			res "pjd:${t#$SU/pjdfstest/tests/}" $rc
		done
	done
	cd /
	umount $M || umount -l $M
	trace_save "$d/ktrace"
	stop_$s
}
run_on knfsd
# lab-knfsd leaves nfsd running: stop it, and its MOUNT, before ours takes the ports
rpc.nfsd 0 2> /dev/null
exportfs -ua 2> /dev/null
pkill rpc.mountd
pmap_unset 100003 3 2> /dev/null
pmap_unset 100005 3 2> /dev/null
umount /export 2> /dev/null
run_on nfsrdma
EOF

start=$(date +%s)
timeout=$(lab_secs "$timeout")
"$lab/lab-run.sh" -t "$timeout" -m 2G -s "$logs" -C "$top_builddir" \
	"bash '$logs/guest.sh' '$top_builddir' '$suites' '$logs' '$files' '$top_srcdir'" \
	> "$logs/lab.out" 2> "$logs/lab.err"
rc=$?
secs=$(($(date +%s) - start))
[ $rc -eq 125 ] && skip_all "the lab did not boot (lab-run.sh exit 125; see $logs/lab.err)"

# result SERVER NAME: what the guest recorded
result() { awk -v n="$2" '$1 == n { r = $2 } END { print r }' "$logs/$1/results" 2>/dev/null; }
names=$(awk '{print $1}' "$logs/knfsd/results" "$logs/nfsrdma/results" 2>/dev/null | sort -u)
count() { # count SERVER PREFIX: passed/total of the names with PREFIX
	local p=0 n=0 x
	for x in $names; do
		case $x in "$2"*) ;; *) continue ;; esac
		n=$((n + 1))
		[ "$(result "$1" "$x")" = 0 ] && p=$((p + 1))
	done
	echo "$p/$n"
}
plan 7
check "the kernel client mounts knfsd over RDMA" [ "$(result knfsd mounted)" = 0 ]
check "the kernel client mounts nfsrdma-server over RDMA" [ "$(result nfsrdma mounted)" = 0 ]
check "a non-root user's touch returns on nfsrdma-server" [ "$(result nfsrdma nonroot_touch)" = 0 ]
differ=""
for x in $names; do
	[ "$x" = mounted ] && continue
	[ "$(result knfsd "$x")" = 0 ] && [ "$(result nfsrdma "$x")" != 0 ] &&
		differ="$differ $x($(result nfsrdma "$x"))"
done
diag "knfsd:          cthon04 $(count knfsd cthon-), pjdfstest files $(count knfsd pjd:)"
diag "nfsrdma-server: cthon04 $(count nfsrdma cthon-), pjdfstest files $(count nfsrdma pjd:)"
[ -z "$differ" ] || diag "pass on knfsd, not on nfsrdma-server (exit status):$differ"
both=""
for x in $names; do
	[ "$(result knfsd "$x")" != 0 ] && [ "$(result nfsrdma "$x")" != 0 ] &&
		both="$both $x($(result knfsd "$x")/$(result nfsrdma "$x"))"
done
[ -z "$both" ] || diag "fail on both servers (exit status knfsd/nfsrdma-server):$both"
check "every suite and file that passes on knfsd passes on nfsrdma-server" [ -z "$differ" ]
check "some pjdfstest files ran" [ "$(count knfsd pjd: | cut -d/ -f2)" -gt 0 ]
check "no post the device refused" bash -c "! grep -q 'cannot post' '$logs/nfsrdma/server.log'"
# Reconnects. The kernel client closes a transport that has carried no call
# for 5 minutes (xprt_disconnect_auto) and connects again at the next call,
# whatever the server: that one is allowed (a pjdfstest file that hangs on
# both servers until its 300 s timeout does it). Any other is a failure: the
# server ended a connection itself, or a reply went missing (the client timed
# out or retransmitted), or the client met an RPC/RDMA error.
slog=$logs/nfsrdma/server.log
ktrace=$logs/nfsrdma/ktrace
conns=$(grep -c ': connected' "$slog" 2>/dev/null)
conns=${conns:-0}
# the server's reasons for ending a connection before the last one began
server_ended=$(awk -v last="$conns" '/: connected/ { n++ }
	n < last && /connection ends: / && !/connection ends: (disconnected|flushed)$/' "$slog" |
	head -n 5)
# the client's transport events before its last connect
lastk=$(grep -n 'xprtrdma_connect:' "$ktrace" 2> /dev/null | tail -n 1 | cut -d: -f1)
kbefore=$(head -n $((${lastk:-1} - 1)) "$ktrace" 2> /dev/null | grep -v '^#')
# (not mount.nfs's own TCP transports to rpcbind and MOUNT, ports 111 and
# 2049, which it closes with xprt_disconnect_force, before or after the RDMA
# connect as the timing falls)
ktrouble=$(echo "$kbefore" | grep -e xprt_retransmit -e rpc_timeout_status -e rpc_task_timeout \
	-e xprt_timer -e xprt_disconnect_force -e '_err:' -e xprtrdma_op_inject_dsc |
	grep -v -E 'peer=\[[0-9.]*\]:(111|2049) ' | head -n 10)
idle_closes=$(echo "$kbefore" | grep -c 'xprt_disconnect_auto: peer=\[[0-9.]*\]:20049')
if [ "$conns" -ne 1 ]; then
	diag "how connections ended, in the server's log:"
	grep -e ': connected' -e 'connection ends' "$slog" | head -n 20 | sed "s/^/# /"
	diag "the kernel client's transport events ($ktrace; EAGAIN marshal retries left out):"
	grep -v -e '^#' -e 'marshal_failed.*ret=-11' "$ktrace" 2> /dev/null | head -n 40 |
		sed "s/^/# /"
fi
reconnects_ok() {
	[ "$conns" -ge 1 ] && [ -z "$server_ended" ] && [ -z "$ktrouble" ] &&
		[ $((conns - 1)) -le "$idle_closes" ]
}
check "one connection, or reconnects only after the client closed it idle ($conns connects, $idle_closes idle closes)" \
	reconnects_ok
diag "lab took ${secs}s (lab-run exit $rc); logs in $logs"
exit $T_FAILED
