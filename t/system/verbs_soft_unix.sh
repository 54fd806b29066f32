#!/bin/sh
# verbs_soft_unix.sh: the verbs conformance suite against the soft provider
# over AF_UNIX sockets (VB_ADDR=unix:/path); the TCP run is t/system/verbs_conformance.
# Prints TAP: the suite's own lines, renumbered under one plan.
bin=${top_builddir:-.}/t/system/verbs_conformance
if [ ! -x "$bin" ]; then
	echo "1..0 # SKIP verbs_conformance not built (cmocka missing)"
	exit 0
fi
dir=$(mktemp -d /tmp/nfsrdma-vb.XXXXXX) || exit 1
trap 'rm -rf "$dir"' EXIT
out=$(VB_DEVICE=soft VB_ADDR="unix:$dir/sock" CMOCKA_MESSAGE_OUTPUT=TAP "$bin" 2>"$dir/err")
rc=$?
echo "$out" | grep -E '^(ok|not ok|1\.\.)|^#'
if [ $rc -ne 0 ]; then
	echo "# exit status $rc; stderr follows"
	sed 's/^/# /' "$dir/err" | tail -n 20
	echo "$out" | grep -q '^not ok' || echo "not ok - verbs_conformance over AF_UNIX exited $rc"
fi
