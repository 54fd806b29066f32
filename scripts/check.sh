#!/bin/bash
# check.sh: install what is needed, build (warnings as errors, ASan + UBSan) and
# run the whole test suite; then the style check, the illumos cross build
# (scripts/check-illumos.sh) and `make distcheck`; then, where
# time allows (NFSRDMA_EXTRAS=yes|no|auto), the long runs: the Soft-RoCE lab
# tests, the fuzz campaign and the benchmarks. Every step has a deadline inside
# the budget (each test in make check has its own, see t/deadline.sh); a step
# cut off by its deadline fails and is named before the summary.
# Ends with "N passed, N failed[, N skipped]".
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
EXTRAS=${NFSRDMA_EXTRAS:-auto}
START=$(date +%s)
BUDGET=${NFSRDMA_CI_BUDGET:-4800}   # seconds for the whole run; CI allows 90 minutes

pass=0 fail=0 skip=0 cut="" failed=""
log() { echo "check: $*"; }
left() { echo $((BUDGET - ($(date +%s) - START))); }
# deadline SECONDS: SECONDS, or what is left of the budget if that is less.
deadline() {
	local l
	l=$(left)
	[ "$l" -gt 0 ] || l=1
	echo $(($1 < l ? $1 : l))
}
# bounded SECONDS CMD...: CMD, its whole process group ended once SECONDS pass;
# the tests it runs end 20 s before that (half as long before, for a short
# step: NFSRDMA_STEP_END, t/deadline.sh), so that one that runs out of time is
# reported with its output.
bounded() {
	local limit=$1 margin=20
	shift
	[ "$limit" -gt 40 ] || margin=$((limit / 2))
	NFSRDMA_STEP_END=$(($(date +%s) + limit - margin)) timeout -k 30 "$limit" "$@"
}
# was_cut NAME SECONDS STATUS: true, and the step named, if STATUS is a deadline's.
was_cut() {
	[ "$3" -eq 124 ] || [ "$3" -eq 137 ] || return 1
	log "$1: cut off by its deadline of ${2}s"
	cut="$cut $1(${2}s)"
}

# Add up one `make check`-style run from its summary block.
tally() { # tally LOGFILE
	local p f s
	p=$(sed -n 's/^# PASS: *\([0-9]*\)/\1/p; s/^# XFAIL: *\([0-9]*\)/\1/p' "$1" | awk '{s+=$1} END {print s+0}')
	f=$(sed -n 's/^# FAIL: *\([0-9]*\)/\1/p; s/^# XPASS: *\([0-9]*\)/\1/p; s/^# ERROR: *\([0-9]*\)/\1/p' "$1" | awk '{s+=$1} END {print s+0}')
	s=$(sed -n 's/^# SKIP: *\([0-9]*\)/\1/p' "$1" | awk '{s+=$1} END {print s+0}')
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
}
# failures LOG DIR: name the tests LOG reports failed (kept for the summary)
# and show the end of each one's log under DIR, so that CI's output says which.
# LOG has automake's lines ("FAIL: t/x.sh 3 - what"), or a script's own TAP.
failures() {
	local t f shown=" " step=${1##*/}
	while IFS= read -r t; do
		if [[ $t == "not ok"* ]]; then
			failed="$failed
check:   ${step%.log}: $t"
			continue
		fi
		failed="$failed
check:   $t"
		f=${t#*: }
		f=$2/${f%% *}
		f=${f%.sh}.log
		[[ $shown == *" $f "* ]] || [ ! -f "$f" ] && continue
		shown="$shown$f "
		echo "--- ${f#"$top"/}"
		tail -n 30 "$f"
	done < <(grep -E '^(FAIL|ERROR|XPASS):|^not ok' "$1")
}
# A step that is one check on its own (style, distcheck): pass or fail.
step() { # step NAME CMD...
	local name=$1 limit rc t0=$(date +%s)
	shift
	limit=$(deadline 1800)
	bounded "$limit" "$@" > "$top/build/$name.log" 2>&1
	rc=$?
	if [ $rc -eq 0 ]; then
		log "$name: ok ($(($(date +%s) - t0))s)"
		pass=$((pass + 1))
	else
		was_cut "$name" "$limit" $rc || log "$name: FAILED (see build/$name.log)"
		tail -n 40 "$top/build/$name.log"
		# distcheck keeps its tree when it fails; its tests' logs are in there
		failures "$top/build/$name.log" "$(find "$B" -maxdepth 3 -type d -name sub -path '*/_build/*' -print -quit 2>/dev/null)"
		fail=$((fail + 1))
	fi
}

lab_arg=""
[ "$EXTRAS" = no ] || lab_arg=--lab
scripts/install-deps.sh $lab_arg || { echo "check: installing dependencies failed"; echo "0 passed, 1 failed"; exit 1; }

B=$top/build/check
mkdir -p "$top/build"
# fio with its nfs engine, an external NFS client for the server's tests
scripts/build-fio-nfs.sh > "$top/build/fio.log" 2>&1 ||
	log "fio with the nfs engine could not be built (see build/fio.log): its test will SKIP"
if ! scripts/build.sh "$B" --enable-werror --enable-sanitizers > "$top/build/build.log" 2>&1; then
	tail -n 60 "$top/build/build.log"
	echo "check: build failed"
	echo "0 passed, 1 failed"
	exit 1
fi

log "installed and built in $(($(date +%s) - START))s; make check (ASan + UBSan)"
limit=$(deadline 1800)
t0=$(date +%s)
bounded "$limit" make -C "$B" -j"$(nproc)" check 2>&1 | tee "$top/build/make-check.log" |
	grep -E '^(PASS|FAIL|SKIP|ERROR|XPASS|XFAIL):|^# '
was_cut "make check" "$limit" "${PIPESTATUS[0]}"
log "make check took $(($(date +%s) - t0))s"
tally "$top/build/make-check.log"
grep -q '^# TOTAL' "$top/build/make-check.log" || fail=$((fail + 1))
failures "$top/build/make-check.log" "$B"

step format-check make -C "$B" format-check
# The illumos cross build: compiles and link-checks against ../shared/illumos (cheap).
illumos_cc=$(dirname "$top")/shared/illumos/cc
if [ ! -x "$illumos_cc" ]; then
	log "check-illumos: skipped: no $illumos_cc"
	skip=$((skip + 1))
elif ! command -v clang > /dev/null || ! command -v ld.lld > /dev/null; then
	log "check-illumos: skipped: clang or ld.lld is not installed (Debian: clang lld)"
	skip=$((skip + 1))
else
	step check-illumos scripts/check-illumos.sh "$top/build/illumos"
fi
step distcheck make -C "$B" -j"$(nproc)" distcheck DISTCHECK_CONFIGURE_FLAGS=--enable-werror

run_extra() { # run_extra TARGET MIN_SECONDS_LEFT
	if [ "$EXTRAS" = no ]; then return; fi
	if [ "$(left)" -lt "$2" ]; then
		log "$1: skipped, $(left)s left of the budget"
		skip=$((skip + 1))
		return
	fi
	local dir=$B rc limit t0=$(date +%s)
	# figures mean something only without the sanitizers: benchmarks (the lab's
	# too) use a release build; so do the POSIX suites (twice as fast; make check
	# runs the mount's own POSIX tests and the exerciser under the sanitizers)
	if [[ $1 == bench-* || $1 == lab-bench-* || $1 == check-posix* ]]; then
		dir=$top/build/rel
		[ -f "$dir/Makefile" ] || scripts/build.sh "$dir" > "$top/build/rel-build.log" 2>&1
	fi
	limit=$(deadline "$2")
	log "make $1 (deadline ${limit}s)"
	bounded "$limit" make -C "$dir" "$1" 2>&1 | tee "$top/build/$1.log" |
		grep -E '^(PASS|FAIL|SKIP|ERROR|XPASS|XFAIL):|^# |^bench'
	rc=${PIPESTATUS[0]}
	log "$1 took $(($(date +%s) - t0))s, $(left)s of the budget left"
	if was_cut "$1" "$limit" $rc; then
		fail=$((fail + 1))
	elif grep -q '^# TOTAL' "$top/build/$1.log"; then
		tally "$top/build/$1.log"
		failures "$top/build/$1.log" "$dir"
	elif [ "$rc" -eq 0 ]; then
		pass=$((pass + 1))
	else
		log "$1: FAILED (see build/$1.log)"
		fail=$((fail + 1))
	fi
}
# Checks before benchmarks (a figure is no verdict), and in each the ones
# that need least time first: when the budget runs short, what is left out is
# the fewest checks. Each pair is TARGET:SECONDS-IT-NEEDS-LEFT.
extras=$(make -s -C "$B" print-extra-targets 2>/dev/null | tr ' ' '\n' | grep .)
for t in $(grep -v -E '^(lab-)?bench-' <<< "$extras" | sort -s -t: -k2,2n) \
	$(grep -E '^(lab-)?bench-' <<< "$extras" | sort -s -t: -k2,2n); do
	run_extra "${t%%:*}" "${t##*:}"
done

log "took $(( $(date +%s) - START ))s"
[ -z "$cut" ] || log "cut off by their deadlines:$cut"
[ -z "$failed" ] || log "failed:$failed"
summary="$pass passed, $fail failed"
[ "$skip" -eq 0 ] || summary="$summary, $skip skipped"
echo "$summary"
[ "$fail" -eq 0 ]
