#!/bin/bash
# systemd_unit.sh: etc/nfsrdma-server.service as built (this build's paths)
# passes systemd-analyze verify, pointed at the server just built; it is
# Type=notify, reloads with SIGHUP and names its capabilities. TAP output.
set -u
B=${top_builddir:-.}
U=$B/etc/nfsrdma-server.service
. "$(dirname "$0")/../test-lib.sh"

command -v systemd-analyze >/dev/null ||
	skip_all "systemd-analyze is not installed (Debian: systemd)"
[ -f "$U" ] || { echo "Bail out! $U is not built (make etc/nfsrdma-server.service)"; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/systemd_unit.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT

plan 6
S=$(cd "$B/server" && pwd)/nfsrdma-server
# the installed paths do not exist here: verify the unit with the built server
sed -e "s|^\(Exec[A-Za-z]*=\)[^ ]*/nfsrdma-server|\1$S|" \
    -e "s|^ConditionPathExists=.*|ConditionPathExists=$T|" "$U" >"$T/nfsrdma-server.service"
systemd-analyze verify --man=no "$T/nfsrdma-server.service" >"$T/out" 2>&1
st=$?
# a container without a running systemd may lack these units: not the unit's fault
grep -v -e "rdma-hw.target" -e "network-online.target" -e "^$" "$T/out" >"$T/left"
check "systemd-analyze verify passes" [ $st -eq 0 ]
check "and says nothing about it" [ ! -s "$T/left" ]
sed 's/^/# /' "$T/out"
check "Type=notify" grep -qx "Type=notify" "$U"
check "reload is SIGHUP to the main process" grep -qxF 'ExecReload=/bin/kill -HUP $MAINPID' "$U"
check "it names the capabilities for RDMA and ports below 1024" \
	grep -q "^CapabilityBoundingSet=.*CAP_NET_BIND_SERVICE.*CAP_IPC_LOCK" "$U"
check "hardening: ProtectSystem and PrivateTmp" \
	bash -c "grep -qx 'ProtectSystem=full' '$U' && grep -qx 'PrivateTmp=yes' '$U'"
exit $T_FAILED
