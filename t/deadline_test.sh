#!/bin/bash
# deadline_test.sh: the test deadline of t/deadline.sh. A test that never ends
# comes back within its deadline as an error named after it, listing what was
# still running, with nothing left running, even a process that detached; so
# does a test that ends but leaves a process behind; a test that ends cleanly
# keeps its exit status; a test raises its own deadline, but not past its
# caller's (NFSRDMA_STEP_END), and is told when its deadline passes
# (NFSRDMA_TEST_END). TAP output.
set -u
. "$(dirname "$0")/test-lib.sh"
W="$(dirname "$0")/deadline.sh"
T=$(mktemp -d /tmp/nfsrdma-deadline.XXXXXX)
trap 'rm -rf "$T"' EXIT
# a name no other process has, so that pgrep finds only ours
mark="nfsrdma-deadline-probe-$$-$RANDOM"

plan 14

cat >"$T/forever.sh" <<EOF
echo 1..1
echo "ok 1 - started"
exec -a $mark-child sleep 1000 &
( setsid bash -c "exec -a $mark-detached sleep 1000" & )
exec -a $mark-main sleep 1000
EOF
start=$(date +%s)
NFSRDMA_TEST_DEADLINE=2 NFSRDMA_TEST_GRACE=2 bash "$W" bash "$T/forever.sh" >"$T/forever.out" 2>&1
rc=$?
took=$(($(date +%s) - start))
check "a test that never ends fails with status 124" [ $rc -eq 124 ]
check "within its deadline and the grace (took ${took}s)" [ $took -le 8 ]
check "the TAP driver is told it failed, by the test's name" \
	grep -q "^Bail out! $T/forever.sh: deadline of 2s passed" "$T/forever.out"
check "what was still running is listed, a detached process too" \
	bash -c "grep -q '$mark-child' '$T/forever.out' && grep -q '$mark-detached' '$T/forever.out'"
sleep 0.2
check "nothing it started is left running" bash -c "! pgrep -f '^$mark' >/dev/null"
[ $T_FAILED -eq 0 ] || sed 's/^/# /' "$T/forever.out"

cat >"$T/trapped.sh" <<EOF
trap 'echo "# cleanup ran"; exit 1' TERM
echo 1..1
sleep 1000 &
wait
EOF
NFSRDMA_TEST_DEADLINE=1 bash "$W" bash "$T/trapped.sh" >"$T/trapped.out" 2>&1
check "a test's own clean-up runs first (SIGTERM before SIGKILL)" grep -q "cleanup ran" "$T/trapped.out"

cat >"$T/leaves.sh" <<EOF
echo 1..1
( setsid bash -c "exec -a $mark-left sleep 1000" >/dev/null 2>&1 & )
echo "ok 1 - done"
EOF
NFSRDMA_TEST_GRACE=1 bash "$W" bash "$T/leaves.sh" >"$T/leaves.out" 2>&1
rc=$?
check "a test that leaves a process running fails" \
	bash -c "[ $rc -ne 0 ] && grep -q '^Bail out! $T/leaves.sh left processes running' '$T/leaves.out'"
check "and the process is named and ended" \
	bash -c "grep -q '$mark-left' '$T/leaves.out' && ! pgrep -f '^$mark-left' >/dev/null"

printf 'echo 1..1\necho "ok 1 - fine"\nexit 3\n' >"$T/plain.sh"
bash "$W" bash "$T/plain.sh" >"$T/plain.out" 2>&1
rc=$?
check "a test that ends on its own keeps its exit status" [ $rc -eq 3 ]
check "and its output is untouched" [ "$(cat "$T/plain.out")" = "$(printf '1..1\nok 1 - fine')" ]

printf '# nfsrdma-test-deadline: 4\nsleep 2\necho 1..0\n' >"$T/slow.sh"
NFSRDMA_TEST_DEADLINE=1 bash "$W" bash "$T/slow.sh" >"$T/slow.out" 2>&1
check "a test raises its own deadline" [ $? -eq 0 ]

printf '# nfsrdma-test-deadline: 100\necho "end $NFSRDMA_TEST_END"\nsleep 100\n' >"$T/late.sh"
start=$(date +%s)
NFSRDMA_STEP_END=$((start + 2)) NFSRDMA_TEST_GRACE=1 bash "$W" bash "$T/late.sh" >"$T/late.out" 2>&1
rc=$?
took=$(($(date +%s) - start))
check "a test's own deadline ends with its caller's step (took ${took}s, status $rc)" \
	bash -c "[ $rc -eq 124 ] && [ $took -le 6 ] && grep -q '^Bail out!.*deadline of [12]s passed (the step that runs it ends then)' '$T/late.out'"
end=$(sed -n 's/^end //p' "$T/late.out")
check "the test is told when its deadline passes ($end, started $start)" \
	bash -c "[ -n '$end' ] && [ '$end' -ge $((start + 1)) ] && [ '$end' -le $((start + 3)) ]"

bash "$W" >/dev/null 2>&1
check "no test to run is a usage error (status 2)" [ $? -eq 2 ]
exit $T_FAILED
