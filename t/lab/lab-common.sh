# lab-common.sh: sourced by the t/lab scripts. Finds ../shared/rdmalab and
# decides whether the lab can run here; lab_skip_reason prints why not, and
# lab_require skips the whole TAP test with that reason (t/test-lib.sh).
#
# Environment: top_builddir (default .), top_srcdir (default: two levels
# above the scripts), RDMALAB_DIR (default $top_srcdir/../shared/rdmalab),
# RDMALAB_CACHE (default /var/cache/rdmalab).
top_builddir=$(cd "${top_builddir:-.}" && pwd)
top_srcdir=$(cd "${top_srcdir:-$(dirname "$0")/../..}" && pwd)
lab=${RDMALAB_DIR:-$top_srcdir/../shared/rdmalab}
cache=${RDMALAB_CACHE:-/var/cache/rdmalab}
. "$top_srcdir/t/test-lib.sh"

# Why the lab cannot boot on this machine; nothing when it can.
lab_skip_reason() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "the lab needs root (qemu, 9p shares)"
	elif [ ! -x "$lab/lab-run.sh" ]; then
		echo "no rdmalab at $lab (set RDMALAB_DIR)"
	elif [ ! -d "$cache" ]; then
		echo "no lab cache $cache: run $lab/setup.sh (scripts/install-deps.sh --lab)"
	elif ! command -v qemu-system-x86_64 > /dev/null; then
		echo "qemu-system-x86_64 is not installed"
	fi
}

# Skip the whole test unless the lab can boot here.
lab_require() {
	local why

	why=$(lab_skip_reason)
	[ -z "$why" ] || skip_all "$why"
}

# lab_secs SECS: the guest's timeout, SECS or less: it comes 30 s before the
# test's own deadline (NFSRDMA_TEST_END, t/deadline.sh), or, for a script a
# make target runs outside deadline.sh, before the end of the scripts/check.sh
# step (NFSRDMA_STEP_END), at the latest, so that a guest that runs out of
# time is ended by lab-run.sh and what it printed is passed on, naming the
# step it was at.
lab_secs() {
	local left end=${NFSRDMA_TEST_END:-${NFSRDMA_STEP_END:-}}

	[ -n "$end" ] || {
		echo "$1"
		return
	}
	left=$((end - $(date +%s) - 30))
	[ "$left" -ge 10 ] || left=10
	echo $(($1 < left ? $1 : left))
}

# lab_guest_tap SCRIPT TIMEOUT [LAB-RUN OPTION...]: run SCRIPT in the guest
# (with top_builddir, top_srcdir and the options, e.g. -e K=V) and pass on the
# TAP it prints, without the CRs of the guest's serial line; the whole test
# skips when the lab does not boot, and fails when the guest times out.
lab_guest_tap() {
	local out st why script=$1 secs
	secs=$(lab_secs "$2")
	shift 2
	out=$(mktemp)
	"$lab/lab-run.sh" -t "$secs" -C "$top_builddir" -e "top_builddir=$top_builddir" \
		-e "top_srcdir=$top_srcdir" "$@" -f "$script" > "$out" 2>&1
	st=$?
	if [ $st -eq 125 ]; then
		why=$(grep -v '^$' "$out" | tail -n 3 | tr '\n' ' ')
		rm -f "$out"
		skip_all "the lab did not boot: $why"
	fi
	tr -d '\r' < "$out"
	rm -f "$out"
	if [ $st -eq 124 ]; then
		echo "not ok - the lab timed out after ${secs}s"
		exit 1
	fi
	exit 0
}
