#!/bin/bash
# kclient-locks.sh: file locks between the Linux kernel's NFSv3 client and
# nfsrdma-server (issue 15), inside ../shared/rdmalab: two kernel clients
# mounted without nolock, each in its own namespaces, exclude each other,
# F_GETLK names the holder, a blocked F_SETLKW is granted by callback (over
# IPv4 and over IPv6, the server listening on "::"), an
# nfsrdma-client mount over RPC/RDMA on rxe0 and a kernel client see each
# other's locks, and Connectathon's lock tests (-l) pass on a kernel mount.
# The guest half, and why the kernel clients mount over TCP, is
# kclient-locks-guest.sh. TAP; "1..0 # SKIP reason" when the lab cannot boot.
# Environment: see lab-common.sh; LAB_TIMEOUT (default 900).
# The whole test: nfsrdma-test-deadline: 1000
. "$(dirname "$0")/lab-common.sh"
lab_require
[ -x "$top_builddir/server/nfsrdma-server" ] && [ -x "$top_builddir/nfsrdma-client" ] ||
	skip_all "nfsrdma-server or nfsrdma-client is not built in $top_builddir"
grep -q '^#define HAVE_RDMACORE 1' "$top_builddir/config.h" ||
	skip_all "built without rdma-core: nothing can talk to rxe0"
[ -d "$top_srcdir/../shared/suites/cthon04" ] || skip_all "no Connectathon in $top_srcdir/../shared/suites"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
if ! "$top_srcdir/scripts/build-suites.sh" "$top_builddir/t/lab/suites" > "$out" 2>&1; then
	echo "1..1"
	echo "not ok 1 - the suites build: $(tail -n 1 "$out")"
	exit 1
fi
rm -f "$out"
trap - EXIT
lab_guest_tap "$top_srcdir/t/lab/kclient-locks-guest.sh" "${LAB_TIMEOUT:-900}"
