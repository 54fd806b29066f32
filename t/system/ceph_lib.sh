# ceph_lib.sh: a throwaway one-node CephFS for a test (sourced, not run):
# ../shared/ceph/mini-cluster.sh (or $NFSRDMA_MINI_CEPH) started in a temp
# directory, its coordinates in CEPH_CONF, CEPH_CLIENT_ID and CEPH_KEYRING
# (the admin's key in CEPH_ADMIN_KEYRING), stopped and removed by ceph_stop.
# Needs test-lib.sh.
: "${top_builddir:=$(pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
MINI_CEPH=${NFSRDMA_MINI_CEPH:-$top_srcdir/../shared/ceph/mini-cluster.sh}
CEPH_DIR=""
# libceph's own occasional leak at unmount (ceph_lsan.supp)
LSAN_OPTIONS="suppressions=$top_srcdir/t/system/ceph_lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export LSAN_OPTIONS

# Skip the whole test, with the reason, where a cluster cannot be had.
ceph_need() {
	local b
	[ "$(id -u)" -eq 0 ] || skip_all "the mini cluster's daemons run as root"
	grep -q '^#define HAVE_CEPHFS 1' "$top_builddir/config.h" 2>/dev/null ||
		skip_all "built without the CephFS backend (configure found no libcephfs; Debian: libcephfs-dev)"
	for b in ceph-mon ceph-osd ceph-mds ceph; do
		command -v $b >/dev/null ||
			skip_all "$b missing (Debian: ceph-mon ceph-osd ceph-mds ceph-common; scripts/install-deps.sh)"
	done
	[ -x "$MINI_CEPH" ] || skip_all "no mini-cluster.sh at $MINI_CEPH (set NFSRDMA_MINI_CEPH)"
}

# Start a cluster; 0, or 1 with its error shown as TAP comments.
ceph_start() {
	local coords
	CEPH_DIR=$(mktemp -d "${TMPDIR:-/tmp}/nfsrdma-ceph.XXXXXX")
	if ! coords=$(MINI_CEPH_TIMEOUT=${MINI_CEPH_TIMEOUT:-90} "$MINI_CEPH" start "$CEPH_DIR" 2>"$CEPH_DIR/start.err"); then
		sed 's/^/# /' "$CEPH_DIR/start.err"
		return 1
	fi
	eval "$coords"
	export CEPH_CONF CEPH_CLIENT_ID CEPH_KEYRING
	# the cluster's admin, for what the client may not do (snapshots)
	export CEPH_ADMIN_KEYRING="$CEPH_DIR/ceph.client.admin.keyring"
}

# Stop the cluster ceph_start started and remove its directory.
ceph_stop() {
	[ -n "$CEPH_DIR" ] || return 0
	"$MINI_CEPH" stop "$CEPH_DIR" >/dev/null 2>&1
	rm -rf "$CEPH_DIR"
	CEPH_DIR=""
}
