#!/bin/bash
# verbs-lab.sh: the verbs tests against Soft-RoCE inside the rdmalab guest
# (../shared/rdmalab: a stock Debian kernel under qemu with rxe0 on 192.0.2.1).
#
# Boots the lab once and runs in it, with VB_DEVICE=rxe0 VB_ADDR=$RDMALAB_IP:
#   verbs_conformance     the provider-independent conformance suite
#   rdmacore_test         the rdma-core provider's own device tests
#   rdmacore_test_mw1     the same with type 1 memory windows (rxe has 1 and 2B)
#   rdmacore_unit_test    its device-less unit tests (once more, in the guest)
# and prints their results as one TAP stream, one line per case, named
# "run: case". Prints "1..0 # SKIP reason" when the lab cannot run here.
#
# Environment: see lab-common.sh; LAB_TIMEOUT (seconds, default 780).
# The guest has LAB_TIMEOUT; the test as a whole, nfsrdma-test-deadline: 840
set -u
timeout=${LAB_TIMEOUT:-780}
# One run per line: name, binary, extra environment.
runs="verbs_conformance t/system/verbs_conformance
rdmacore_test t/system/rdmacore_test
rdmacore_test_mw1 t/system/rdmacore_test VB_RDMACORE_MW_TYPE=1
rdmacore_unit_test t/unit/rdmacore_unit_test"
# Cases that fail because of rxe itself (Linux 6.1): reported with a TODO
# directive (XFAIL, and XPASS once rxe is fixed). One "run: case|reason" a line.
known_rxe="verbs_conformance: recv_too_small|rxe fails a too-small Receive with LOC_QP_OP_ERR \
(rxe_resp.c send_data_in wants -ENOSPC from copy_data, gets -EINVAL)
verbs_conformance: mw_range_and_rights|rxe checks a window key against its MR's range, \
not the window's (rxe_resp.c check_rkey)"
. "$(dirname "$0")/lab-common.sh"

lab_require
[ -x "$top_builddir/t/system/rdmacore_test" ] ||
	skip_all "t/system/rdmacore_test not built: configure found no rdma-core or no cmocka"

logs=$top_builddir/t/lab/verbs
rm -rf "$logs"
mkdir -p "$logs" || exit 1

# The guest side: each run's TAP, stderr, exit status and time into $logs.
echo "$runs" > "$logs/runs"
cat > "$logs/guest.sh" << 'EOF'
cd "$1" || exit 1
logs=$2
export VB_DEVICE=rxe0 VB_ADDR=$RDMALAB_IP CMOCKA_MESSAGE_OUTPUT=TAP
while read -r name bin envs; do
	[ -x "$bin" ] || { echo missing > "$logs/$name.rc"; continue; }
	start=$(date +%s.%N)
	env $envs "./$bin" > "$logs/$name.tap" 2> "$logs/$name.err"
	echo $? > "$logs/$name.rc"
	echo "$start $(date +%s.%N)" | awk '{ printf "%.1f\n", $2 - $1 }' > "$logs/$name.secs"
done < "$logs/runs"
EOF

start=$(date +%s)
timeout=$(lab_secs "$timeout")
"$lab/lab-run.sh" -t "$timeout" -s "$logs" -C "$top_builddir" \
	"bash '$logs/guest.sh' '$top_builddir' '$logs'" > "$logs/lab.out" 2> "$logs/lab.err"
rc=$?
secs=$(($(date +%s) - start))
if [ $rc -eq 125 ]; then
	echo "1..0 # SKIP the lab did not boot (lab-run.sh exit 125; see $logs/lab.err)"
	exit 0
fi

# Host side: renumber every binary's results into one stream.
n=0
emit() { # emit "ok"|"not ok" DESCRIPTION
	n=$((n + 1))
	echo "$1 $n - $2"
}
# The TODO directive for "run: case" when it is a known rxe failure.
known() {
	local line
	while IFS= read -r line; do
		[ "${line%%|*}" = "$1" ] && echo " # TODO ${line#*|}"
	done <<< "$known_rxe"
}
echo "# lab: $secs s for boot, tests and power-off (lab-run.sh exit $rc)"
[ $rc -eq 124 ] && echo "# lab: timed out after $timeout s"
while read -r b bin envs; do
	if [ "$(cat "$logs/$b.rc" 2> /dev/null)" = missing ]; then
		emit ok "$b # SKIP not built in $top_builddir"
		continue
	fi
	if [ ! -f "$logs/$b.rc" ]; then
		emit "not ok" "$b did not finish in the lab"
		continue
	fi
	echo "# $b: exit $(cat "$logs/$b.rc"), $(cat "$logs/$b.secs") s in the guest"
	results=0 failed=0 why=""
	while IFS= read -r line; do
		case $line in
		"# skip because: "*) # the reason for the next case's skip (verbs_conformance.h)
			why=${line#\# skip because: }
			;;
		"1..0"*"# SKIP"*)
			emit ok "$b # SKIP ${line#*# SKIP }"
			results=$((results + 1))
			;;
		"ok "* | "not ok "*)
			status=ok
			[ "${line#not ok}" != "$line" ] && status="not ok"
			rest=$(echo "$line" | sed -E 's/^(not )?ok [0-9]+( -)? ?//')
			# cmocka 1.1 prints a skipped case as "not ok N # SKIP name": a skip
			case $rest in "# SKIP "*) status=ok rest="${rest#\# SKIP } # SKIP ${why:-no reason given}" ;; esac
			why=""
			case $rest in *"#"*) ;; *) rest="$rest$(known "$b: ${rest%% *}")" ;; esac
			case $status$rest in "not ok"*) failed=$((failed + 1)) ;; esac
			emit "$status" "$b: $rest"
			results=$((results + 1))
			;;
		"#"*) echo "$line" ;;
		esac
	done < "$logs/$b.tap"
	planned=$(sed -nE 's/^1\.\.([0-9]+).*/\1/p' "$logs/$b.tap" | head -n 1)
	if [ -z "$planned" ] || [ "$results" -lt "$planned" ]; then
		emit "not ok" "$b: ${results} of ${planned:-?} results (exit $(cat "$logs/$b.rc"))"
	fi
	# a bad exit with every case passed: a leak or a crash after the last case
	if [ "$(cat "$logs/$b.rc")" != 0 ] && [ "$failed" -eq 0 ]; then
		emit "not ok" "$b: exit $(cat "$logs/$b.rc") though every case passed"
	fi
	if [ "$(cat "$logs/$b.rc")" != 0 ] && [ -s "$logs/$b.err" ]; then
		echo "# $b stderr (last lines):"
		tail -n 15 "$logs/$b.err" | sed 's/^/#   /'
	fi
done <<< "$runs"
echo "1..$n"
