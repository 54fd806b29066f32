#!/bin/bash
# posix_suites.sh: nfsrdma-client's FUSE mount through two public file-system
# test suites (../shared/suites: pjdfstest and Connectathon cthon04, built in
# the build tree by scripts/build-suites.sh), against the real nfsrdma-server
# on the soft provider exporting a tmpfs, on each transport:
#   rdma-rw  RPC/RDMA, read-write mode
#   rdma-rr  RPC/RDMA, read-read mode
#   tcp      NFS over TCP
# pjdfstest runs as root (its files that use -u/-g switch users themselves);
# every subtest is counted, per transport. A few subtests cannot pass over
# NFSv3 whatever the client does: they are listed below (EXPECTED) with the
# reason, reported as expected failures, and fail the run if they pass.
#
# Then t/system/fsexer, the random-operation exerciser, EXER_SEEDS seeds (20) of
# EXER_OPS operations (5000) per transport, through two mounts.
#
# Environment: POSIX_TRANSPORTS (default "rdma-rw rdma-rr tcp"), PJD_FILES
# (globs under pjdfstest/tests, default "*/*.t"), PJD_JOBS (4: the files run
# in that many shards side by side), POSIX_SUITES (default
# "cthon pjd exer"), POSIX_LOGS (default t/posix-run in the build tree),
# POSIX_BACKEND (posix, the default: a tmpfs; cephfs: a throwaway CephFS
# started with t/system/ceph_lib.sh), POSIX_HANDLES (the server's
# server.handles for a POSIX export: native, the default, or portable),
# POSIX_IDENTITY (its server.identity: native, the default, or userspace).
# TAP output; the whole run: nfsrdma-test-deadline: 2700
set -u
: "${top_builddir:=$(pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$top_srcdir/t/test-lib.sh"
S=$top_builddir/server/nfsrdma-server
C=$top_builddir/nfsrdma-client
EXER=$top_builddir/t/system/fsexer
# make check's variables would reach the suites' own makefiles (cthon04's
# special tests copy $(TESTS))
unset TESTS MAKEFLAGS MFLAGS MAKELEVEL

# pjdfstest subtests that NFSv3 cannot pass, as "FILE:NUMBER reason".
EXPECTED=$(
	cat << 'EOF'
utimensat/09.t:5 NFSv3 times are unsigned 32-bit seconds: 2^32 (year 2106) becomes 2^32-1, as with the Linux client
EOF
)
# ... and those that only the CephFS backend fails, with the cause.
EXPECTED_CEPHFS=$(
	cat << 'EOF'
rename/24.t:8 libcephfs 16 (Pacific): the client that renamed a directory out of its parent keeps the parent's old link count (another client sees the new one)
EOF
)

[ "$(id -u)" -eq 0 ] || skip_all "needs root (the server opens files by handle, the suites switch users)"
[ -c /dev/fuse ] || skip_all "no /dev/fuse"
[ -x "$S" ] && [ -x "$C" ] && [ -x "$EXER" ] || skip_all "nfsrdma-server, nfsrdma-client or t/system/fsexer is not built"
"$C" mount -h 2>&1 | grep -q 'built without libfuse3' && skip_all "nfsrdma-client was built without libfuse3"
command -v prove > /dev/null || skip_all "prove (perl) is missing"
[ -d "$top_srcdir/../shared/suites/cthon04" ] && [ -d "$top_srcdir/../shared/suites/pjdfstest" ] ||
	skip_all "no test suites in $top_srcdir/../shared/suites"

BACKEND=${POSIX_BACKEND:-posix}
case $BACKEND in
posix) ;;
cephfs)
	. "$top_srcdir/t/system/ceph_lib.sh"
	ceph_need
	EXPECTED=$(printf '%s\n%s' "$EXPECTED" "$EXPECTED_CEPHFS")
	;;
*) skip_all "POSIX_BACKEND=$BACKEND: posix or cephfs" ;;
esac
case ${POSIX_HANDLES:=native} in
native | portable) DAEMON_EXTRA_CONF=" handles = \"$POSIX_HANDLES\";" ;;
*) skip_all "POSIX_HANDLES=$POSIX_HANDLES: native or portable" ;;
esac
case ${POSIX_IDENTITY:=native} in
native | userspace) DAEMON_EXTRA_CONF="$DAEMON_EXTRA_CONF identity = \"$POSIX_IDENTITY\";" ;;
*) skip_all "POSIX_IDENTITY=$POSIX_IDENTITY: native or userspace" ;;
esac

L=${POSIX_LOGS:-$top_builddir/t/posix-run}
SU=$top_builddir/t/suites
rm -rf "$L"
mkdir -p "$L" || exit 1
if ! "$top_srcdir/scripts/build-suites.sh" "$SU" > "$L/build.log" 2>&1; then
	echo "1..1"
	echo "not ok 1 - the suites build: $(tail -n 1 "$L/build.log")"
	exit 1
fi

T=$(mktemp -d /tmp/nfsrdma-posix.XXXXXX)
M=$T/mnt M2=$T/mnt2
cleanup() {
	mountpoint -q "$M" && { "$C" umount "$M" 2> /dev/null || umount -l "$M"; }
	mountpoint -q "$M2" && { "$C" umount "$M2" 2> /dev/null || umount -l "$M2"; }
	[ -f "$T/server.pid" ] && kill -TERM "$(cat "$T/server.pid")" 2> /dev/null
	sleep 0.5
	umount "$T/export" 2> /dev/null
	[ "$BACKEND" = cephfs ] && ceph_stop
	rm -rf "$T"
}
trap cleanup EXIT
mkdir -p "$T/export" "$M" "$M2"
# the export: a tmpfs, or the root of a throwaway CephFS (named $T/export to clients)
EXPORT_EXTRA=""
if [ "$BACKEND" = cephfs ]; then
	if ! ceph_start; then
		echo "1..1"
		echo "not ok 1 - the mini cluster starts"
		exit 1
	fi
	EXPORT_EXTRA="backend = \"cephfs\"; ceph = { conf_file = \"$CEPH_CONF\"; client_id = \"$CEPH_CLIENT_ID\"; keyring = \"$CEPH_KEYRING\"; };"
else
	mount -t tmpfs -o size=1g nfsrdma-posix "$T/export" || skip_all "cannot mount a tmpfs for the export"
	chmod 755 "$T/export"
fi

start_server() {
	local attempt
	for attempt in 1 2 3; do
		TCP=$(free_port)
		RDMA=$(free_port)
		# fastreg: cache would let read-read clients read each other's replies
		DAEMON_EXTRA_CONF=$DAEMON_EXTRA_CONF LOG_LEVEL=warning PROVIDER=soft \
			daemon_conf "$T/srv.conf" "$T" "	modes = [\"read-write\", \"read-read\"];
	registration = \"fastreg\";
	exports = ( { path = \"$T/export\"; clients = [\"127.0.0.1\"]; access = \"rw\"; root_squash = false; $EXPORT_EXTRA } );"
		"$S" -f "$T/srv.conf" 2> "$L/server-start.log" && return 0
		grep -q "Address already in use" "$L/server-start.log" || break
	done
	return 1
}

# mount_on TRANSPORT [DIR]: the export on DIR ($M) over TRANSPORT.
mount_on() {
	local o
	case $1 in
	rdma-rw) o="proto=rdma,port=$RDMA,mode=read-write" ;;
	rdma-rr) o="proto=rdma,port=$RDMA,mode=read-read" ;;
	tcp) o="proto=tcp,port=$TCP" ;;
	esac
	"$C" mount -o "$o" "127.0.0.1:$T/export" "${2:-$M}" 2>> "$L/$1/mount.err"
}

# cthon TRANSPORT: basic, general and special; one TAP line each.
run_cthon() {
	local t name rc
	for t in b g s; do
		name=$(case $t in b) echo basic ;; g) echo general ;; s) echo special ;; esac)
		mkdir -p "$M/cthon-$t"
		(cd "$SU/cthon04" && timeout 900 ./runtests -$t -f "$M/cthon-$t") > "$L/$1/cthon-$name.log" 2>&1
		rc=$?
		check "cthon04 $name over $1" [ $rc -eq 0 ]
		[ $rc -eq 0 ] || tail -n 15 "$L/$1/cthon-$name.log" | sed 's/^/# /'
		rm -rf "$M/cthon-$t"
	done
}

# pjd_shard TRANSPORT K FILE...: the files one after another in $M/pjd-K,
# each one's output in $L/TRANSPORT/pjd/FILE.out (slashes made underscores).
pjd_shard() {
	local tr=$1 k=$2 f
	shift 2
	mkdir -p "$M/pjd-$k"
	for f; do
		(cd "$M/pjd-$k" && timeout 300 prove -v "$SU/pjdfstest/tests/$f") > "$L/$tr/pjd/${f//\//_}.out" 2>&1
		rm -rf "$M/pjd-$k"/* 2> /dev/null
	done
	rmdir "$M/pjd-$k"
}

# pjd TRANSPORT: every file of PJD_FILES; counts subtests, lists failures.
# The files are dealt to PJD_JOBS (4) shards that run side by side, each in a
# directory of its own: most of a file's time is its own sleep(1)s, waiting
# for a second to pass between a change and the times it should have changed.
run_pjd() {
	local tr=$1 f out total=0 failed=0 xfail=0 xpass=0 unexpected="" files k pids=""
	local jobs=${PJD_JOBS:-4}
	files=$(cd "$SU/pjdfstest/tests" && eval ls ${PJD_FILES:-"*/*.t"})
	mkdir -p "$L/$tr/pjd"
	: > "$L/$tr/pjd-failures"
	for ((k = 0; k < jobs; k++)); do
		# shellcheck disable=SC2046 # one word per file
		pjd_shard "$tr" $k $(echo "$files" | awk -v k=$k -v n="$jobs" 'NR % n == k') &
		pids="$pids $!"
	done
	# shellcheck disable=SC2086
	wait $pids
	for f in $files; do
		out=$L/$tr/pjd/${f//\//_}.out
		echo "== $f" >> "$L/$tr/pjd.log"
		cat "$out" >> "$L/$tr/pjd.log"
		total=$((total + $(grep -cE '^(not )?ok [0-9]' "$out")))
		# "not ok N # TODO": a known failure of Linux itself, not counted
		grep -E '^not ok [0-9]+' "$out" | grep -v '# TODO' | grep -oE '^not ok [0-9]+' |
			sed "s|^not ok |$f:|" >> "$L/$tr/pjd-failures"
		# a file that died before its plan: counted as one failure
		grep -qE '^(Parse errors|Bad plan|.*Dubious)' "$out" &&
			! grep -qE '^not ok' "$out" && echo "$f:died" >> "$L/$tr/pjd-failures"
	done
	while read -r id; do
		if echo "$EXPECTED" | grep -q "^$id "; then
			xfail=$((xfail + 1))
		else
			failed=$((failed + 1))
			unexpected="$unexpected $id"
		fi
	done < "$L/$tr/pjd-failures"
	while read -r id why; do
		[ -n "$id" ] || continue
		# only the files that ran (PJD_FILES may choose a few)
		grep -qx "== ${id%%:*}" "$L/$tr/pjd.log" || continue
		grep -qx "$id" "$L/$tr/pjd-failures" || xpass=$((xpass + 1))
	done <<< "$EXPECTED"
	diag "pjdfstest over $tr ($BACKEND): $total subtests, $failed failed, $xfail expected failures (NFSv3 limits, or the backend's)"
	check "pjdfstest over $tr: no unexpected failure" [ $failed -eq 0 ]
	[ $failed -eq 0 ] || echo "$unexpected" | tr ' ' '\n' | sed -n '2,60s/^/#   /p'
	check "pjdfstest over $tr: every expected failure still fails" [ $xpass -eq 0 ]
	check "pjdfstest over $tr: subtests ran" [ "$total" -gt 0 ]
}

# exer TRANSPORT: the exerciser on $M, each file read through $M2 after every close.
run_exer() {
	local seeds=${EXER_SEEDS:-20} ops=${EXER_OPS:-5000} base i failed=0
	base=$(date +%s)
	mount_on "$1" "$M2"
	for i in $(seq 1 "$seeds"); do
		"$EXER" -s $((base + i)) -n "$ops" -2 "$M2/exer" "$M/exer" >> "$L/$1/exer.log" 2>&1 ||
			{ failed=$((failed + 1)); tail -n 20 "$L/$1/exer.log" | sed 's/^/# /'; }
	done
	diag "fsexer over $1: $seeds seeds from $((base + 1)), $ops operations each, $failed failed"
	check "fsexer over $1: every read as expected" [ $failed -eq 0 ]
	"$C" umount "$M2" 2> /dev/null || umount -l "$M2"
	rm -f "$M/exer"
}

TRANSPORTS=${POSIX_TRANSPORTS:-rdma-rw rdma-rr tcp}
SUITES=${POSIX_SUITES:-cthon pjd exer}
n=0
for tr in $TRANSPORTS; do
	n=$((n + 1))
	case " $SUITES " in *" cthon "*) n=$((n + 3)) ;; esac
	case " $SUITES " in *" pjd "*) n=$((n + 3)) ;; esac
	case " $SUITES " in *" exer "*) n=$((n + 1)) ;; esac
done
plan $((n + 3))
start_server
rc=$?
ok $rc "nfsrdma-server starts"
[ $rc -eq 0 ] || { sed 's/^/# /' "$L/server-start.log"; exit 1; }
# the handles asked for are the handles served (a CephFS export has its own)
want=$([ "$POSIX_HANDLES" = portable ] && [ "$BACKEND" = posix ] && echo 1 || echo 0)
"$S" -s -f "$T/srv.conf" > "$L/stats-start" 2>&1
check "the export's handles are $POSIX_HANDLES ones" \
	grep -qx "handles.portable_exports $want" "$L/stats-start"
want=$([ "$POSIX_IDENTITY" = userspace ] && [ "$BACKEND" = posix ] && echo 1 || echo 0)
check "the export's permissions are checked as POSIX_IDENTITY=$POSIX_IDENTITY says" \
	grep -qx "identity.userspace_exports $want" "$L/stats-start"
for tr in $TRANSPORTS; do
	mkdir -p "$L/$tr"
	mount_on "$tr"
	mountpoint -q "$M"
	rc=$?
	ok $rc "mounted over $tr"
	[ $rc -eq 0 ] || { sed 's/^/# /' "$L/$tr/mount.err"; continue; }
	case " $SUITES " in *" cthon "*) run_cthon "$tr" ;; esac
	case " $SUITES " in *" pjd "*) run_pjd "$tr" ;; esac
	case " $SUITES " in *" exer "*) run_exer "$tr" ;; esac
	"$C" umount "$M" 2> /dev/null || umount -l "$M"
done
"$S" -s -f "$T/srv.conf" 2> /dev/null | grep '^handles\.' | tr '\n' ' ' | sed 's/^/# /'
echo
exit $T_FAILED
