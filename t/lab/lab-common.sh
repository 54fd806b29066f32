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
