#!/bin/bash
# deadline.sh: run one test under a deadline. It is the log compiler in front
# of every test that `make check` runs (LOG_COMPILER and SH_LOG_COMPILER), so
# no test, including one added later, can hang the suite.
#
#   deadline.sh [--name NAME] TEST [ARGS...]
#
# The deadline is NFSRDMA_TEST_DEADLINE seconds (default 600). A test that
# needs longer raises its own by carrying the text "nfsrdma-test-deadline: N"
# (a comment in a script, a string in a program). Inside a caller's own
# deadline (scripts/check.sh's steps set NFSRDMA_STEP_END, in seconds since
# the epoch) no test's passes later than it, so that a test that runs out of
# time is reported with what it printed instead of being cut off in silence
# with its make. The test finds when its deadline passes in NFSRDMA_TEST_END
# (seconds since the epoch), for deadlines of its own inside it (the lab's
# guest, lab-common.sh). The test runs in a session of its own, with a token in its
# environment that every process it starts inherits, even one that detaches.
# When the deadline passes, the wrapper lists what is still running, ends it
# (SIGTERM, then SIGKILL), and says "Bail out!" so that automake's TAP driver
# reports an error named after the test. Processes that outlive a test that
# ended on its own are listed, ended and reported the same way.
set -u

name=
if [ "${1:-}" = --name ]; then
	name=$2
	shift 2
fi
[ $# -gt 0 ] || {
	echo "usage: deadline.sh [--name NAME] TEST [ARGS...]" >&2
	exit 2
}
# "$SHELL t/x.sh" for scripts: the test is the first argument that is a file
test_file=$1
for a in "$@"; do
	case $a in -*) ;; *) [ -f "$a" ] && test_file=$a ;; esac
done
[ -n "$name" ] || name=$test_file

limit=${NFSRDMA_TEST_DEADLINE:-600}
own=$(grep -a -m1 -o 'nfsrdma-test-deadline: *[0-9][0-9]*' "$test_file" 2>/dev/null | grep -o '[0-9]*$')
[ -z "$own" ] || [ "$own" -le "$limit" ] || limit=$own
why="raise it with 'nfsrdma-test-deadline: N'"
now=$(date +%s)
if [ -n "${NFSRDMA_STEP_END:-}" ]; then
	left=$((NFSRDMA_STEP_END - now))
	[ "$left" -ge 1 ] || left=1
	[ "$limit" -le "$left" ] || {
		limit=$left
		why="the step that runs it ends then"
	}
fi
grace=${NFSRDMA_TEST_GRACE:-5}

token="nfsrdma-test.$$.$RANDOM$RANDOM"

# Every process that carries the token (found through /proc where there is
# one) or belongs to the test's session.
members() { # members SID
	{
		ps -o pid= -s "$1" 2>/dev/null
		grep -alsF "NFSRDMA_TEST_TOKEN=$token" /proc/[0-9]*/environ | cut -d/ -f3
	} | awk -v me=$$ '$1 != me { print $1 }' | sort -un
}

# List the test's processes as TAP comments, end them, and say whether any
# were found.
reap() { # reap SID WHY
	local pids i
	pids=$(members "$1")
	[ -n "$pids" ] || return 1
	echo "# $2; still running:"
	# shellcheck disable=SC2086
	ps -o pid=,etime=,stat=,args= -p "$(echo $pids | tr ' ' ,)" 2>/dev/null | sed 's/^/#   /'
	# shellcheck disable=SC2086
	kill -TERM $pids 2>/dev/null
	for i in $(seq $((grace * 10))); do
		pids=$(members "$1")
		[ -n "$pids" ] || return 0
		sleep 0.1
	done
	# shellcheck disable=SC2086
	kill -KILL $pids 2>/dev/null
	return 0
}

# setsid runs the test in a session (and process group) of its own; it does not
# fork, because a background job of a script is not a group leader.
NFSRDMA_TEST_TOKEN=$token NFSRDMA_TEST_END=$((now + limit)) setsid "$@" &
tpid=$!
sleep "$limit" &
spid=$!
wait -n "$tpid" "$spid"
if kill -0 "$tpid" 2>/dev/null && ! kill -0 "$spid" 2>/dev/null; then
	reap "$tpid" "$name: deadline of ${limit}s passed"
	wait "$tpid" 2>/dev/null
	echo "Bail out! $name: deadline of ${limit}s passed ($why)"
	exit 124
fi
wait "$tpid"
rc=$?
kill "$spid" 2>/dev/null
wait "$spid" 2>/dev/null

# Give what the test stopped a moment to exit (a FUSE daemon after its unmount).
for i in $(seq $((grace * 10))); do
	[ -n "$(members "$tpid")" ] || exit $rc
	sleep 0.1
done
reap "$tpid" "$name ended ${grace}s ago"
echo "Bail out! $name left processes running after it ended"
exit 99
