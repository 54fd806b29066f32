#!/bin/bash
# server_fio.sh: fio's nfs engine (libnfs; an NFS client nobody here wrote)
# against the real nfsrdma-server over TCP: sequential and random writes and
# reads, every block verified. TAP. fio comes from scripts/build-fio-nfs.sh.
set -u
B=${top_builddir:-.}
S=$B/server/nfsrdma-server
FIO=${FIO:-${top_srcdir:-.}/build/tools/fio}
[ "$(id -u)" -eq 0 ] || { echo "1..0 # SKIP the server needs root"; exit 0; }
"$FIO" --enghelp 2>/dev/null | grep -qw nfs ||
	{ echo "1..0 # SKIP no fio with the nfs engine at $FIO (scripts/build-fio-nfs.sh)"; exit 0; }
T=$(mktemp -d /tmp/nfsrdma-fio.XXXXXX)
trap '[ -f "$T/server.pid" ] && kill -TERM "$(cat "$T/server.pid")"; sleep 0.3; rm -rf "$T"' EXIT
. "$(dirname "$0")/daemon-lib.sh"
TCP=$(free_port)
mkdir -p "$T/export"
cat > "$T/srv.conf" << CONF
rdma = { provider = "soft"; };
server = { listen = ["127.0.0.1"]; rdma_port = $(free_port); tcp_port = $TCP;
	pidfile = "$T/server.pid"; control_socket = "$T/ctl.sock";
	exports = ( { path = "$T/export"; clients = ["127.0.0.1"]; access = "rw"; root_squash = false; } ); };
CONF
echo "1..4"
"$S" -f "$T/srv.conf" 2> "$T/start.log" && echo "ok 1 - nfsrdma-server starts" ||
	{ echo "not ok 1 - nfsrdma-server starts"; sed 's/^/# /' "$T/start.log"; exit 1; }
URL="nfs://127.0.0.1$T/export?version=3&nfsport=$TCP&mountport=$TCP"
n=1 fail=0
job() { # job DESCRIPTION fio-options...
	local d=$1
	shift
	n=$((n + 1))
	if "$FIO" --name=job --ioengine=nfs --nfs_url="$URL" --verify=crc32c --do_verify=1 \
		--output="$T/fio$n.out" "$@" > /dev/null 2>&1 && grep -q "err= 0" "$T/fio$n.out"; then
		echo "ok $n - $d"
		grep -E "^ *(READ|WRITE):" "$T/fio$n.out" | sed 's/^ */# /'
	else
		echo "not ok $n - $d"
		tail -5 "$T/fio$n.out" | sed 's/^/# /'
		fail=1
	fi
}
job "fio writes 32 MiB sequentially in 128 KiB blocks and verifies every block" \
	--rw=write --bs=128k --size=32m --filename=seq
job "fio rewrites 16 MiB of it at random 4 KiB offsets and verifies" \
	--rw=randwrite --bs=4k --size=16m --filename=seq --randrepeat=1
job "two fio jobs write 16 MiB each in 1 MiB blocks and read them back verifying" \
	--rw=write --bs=1m --size=16m --numjobs=2 --filename_format='big.$jobnum'
exit $fail
