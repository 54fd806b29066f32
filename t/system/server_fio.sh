#!/bin/bash
# server_fio.sh: fio's nfs engine (libnfs; an NFS client nobody here wrote)
# against the real nfsrdma-server over TCP: sequential and random writes and
# reads, every block verified. TAP. fio comes from scripts/build-fio-nfs.sh.
set -u
B=${top_builddir:-.}
S=$B/server/nfsrdma-server
FIO=${FIO:-${top_srcdir:-.}/build/tools/fio}
. "$(dirname "$0")/../test-lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "the server needs root"
"$FIO" --enghelp 2>/dev/null | grep -qw nfs ||
	skip_all "no fio with the nfs engine at $FIO (scripts/build-fio-nfs.sh)"
T=$(mktemp -d /tmp/nfsrdma-fio.XXXXXX)
trap '[ -f "$T/server.pid" ] && kill -TERM "$(cat "$T/server.pid")"; sleep 0.3; rm -rf "$T"' EXIT
TCP=$(free_port)
mkdir -p "$T/export"
cat > "$T/srv.conf" << CONF
rdma = { provider = "soft"; };
server = { listen = ["127.0.0.1"]; rdma_port = $(free_port); tcp_port = $TCP;
	pidfile = "$T/server.pid"; control_socket = "$T/ctl.sock";
	handle_key_file = "$T/handle.key";
	exports = ( { path = "$T/export"; clients = ["127.0.0.1"]; access = "rw"; root_squash = false; } ); };
CONF
plan 4
"$S" -f "$T/srv.conf" 2> "$T/start.log"
started=$?
ok $started "nfsrdma-server starts"
[ $started -eq 0 ] || { sed 's/^/# /' "$T/start.log"; exit 1; }
URL="nfs://127.0.0.1$T/export?version=3&nfsport=$TCP&mountport=$TCP"
job() { # job DESCRIPTION fio-options...: one verified fio run, its figures as comments
	local d=$1 out=$T/fio$((T_NUM + 1)).out rc
	shift
	"$FIO" --name=job --ioengine=nfs --nfs_url="$URL" --verify=crc32c --do_verify=1 \
		--output="$out" "$@" > /dev/null 2>&1 && grep -q "err= 0" "$out"
	rc=$?
	ok $rc "$d"
	if [ $rc -eq 0 ]; then
		grep -E "^ *(READ|WRITE):" "$out" | sed 's/^ */# /'
	else
		tail -5 "$out" | sed 's/^/# /'
	fi
}
job "fio writes 32 MiB sequentially in 128 KiB blocks and verifies every block" \
	--rw=write --bs=128k --size=32m --filename=seq
job "fio rewrites 16 MiB of it at random 4 KiB offsets and verifies" \
	--rw=randwrite --bs=4k --size=16m --filename=seq --randrepeat=1
job "two fio jobs write 16 MiB each in 1 MiB blocks and read them back verifying" \
	--rw=write --bs=1m --size=16m --numjobs=2 --filename_format='big.$jobnum'
exit $T_FAILED
