#!/bin/sh
# verbs_soft_unix.sh: the verbs conformance suite against the soft provider
# over AF_UNIX sockets (VB_ADDR=unix:/path). The plain run,
# t/system/verbs_conformance, goes to 127.0.0.1 over the local carrier;
# verbs_soft_tcp.sh runs this with VB_SOFT_RUN_ADDR=127.0.0.1 (the address
# instead of the socket path) and the carrier off.
# Prints TAP: the suite's own lines.
bin=${top_builddir:-.}/t/system/verbs_conformance
if [ ! -x "$bin" ]; then
	echo "1..0 # SKIP verbs_conformance not built (cmocka missing)"
	exit 0
fi
dir=$(mktemp -d /tmp/nfsrdma-vb.XXXXXX) || exit 1
trap 'rm -rf "$dir"' EXIT
addr=${VB_SOFT_RUN_ADDR:-unix:$dir/sock}
out=$(VB_DEVICE=soft VB_ADDR="$addr" CMOCKA_MESSAGE_OUTPUT=TAP "$bin" 2>"$dir/err")
rc=$?
# cmocka says "not ok N # SKIP" for a skipped case; TAP's skip is "ok N # SKIP"
echo "$out" | grep -E '^(ok|not ok|1\.\.)|^#' | sed -E 's/^not ok ([0-9]+ # SKIP)/ok \1/'
if [ $rc -ne 0 ]; then
	echo "# exit status $rc; stderr follows"
	sed 's/^/# /' "$dir/err" | tail -n 20
	echo "$out" | grep -q '^not ok' || echo "not ok - verbs_conformance over $addr exited $rc"
fi
