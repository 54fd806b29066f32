#!/bin/bash
# run.sh: install what is needed, build, and run the main job: check the sample
# configuration, start nfsrdma-server on the default provider ("auto": an RDMA
# device if there is one, else the software provider) exporting a scratch
# directory, mount it with nfsrdma-client (FUSE) and move files through it (or,
# where the mount helper is not available, move them with libnfs over TCP),
# check every byte, show a short benchmark and the server's counters, and stop
# cleanly. Run as root (the server opens files by handle).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
scripts/install-deps.sh
B=$top/build/run
mkdir -p "$top/build"
scripts/build.sh "$B" > "$top/build/run-build.log" 2>&1 || {
	tail -n 40 "$top/build/run-build.log"
	exit 1
}
S=$B/server/nfsrdma-server
C=$B/nfsrdma-client
say() { echo "run: $*"; }
say "built in $B"
"$S" -t -f "$top/etc/nfsrdma.conf"

T=$(mktemp -d /tmp/nfsrdma-run.XXXXXX)
. "$top/t/test-lib.sh" # free_port
TCP=$(free_port)
RDMA=$(free_port)
mkdir -p "$T/export" "$T/mnt" "$T/files"
cat > "$T/server.conf" << EOF
log = { level = "notice"; };
rdma = { provider = "auto"; };
server = {
	listen = ["127.0.0.1"];
	rdma_port = $RDMA;
	tcp_port = $TCP;
	modes = ["read-write", "read-read"];
	registration = "fastreg"; # a fresh key per exposed reply (read-read)
	pidfile = "$T/server.pid";
	control_socket = "$T/server.sock";
	handle_key_file = "$T/handle.key";
	exports = ( { path = "$T/export"; clients = ["127.0.0.1"]; access = "rw"; root_squash = false; } );
};
EOF
mounted=""
cleanup() {
	[ -z "$mounted" ] || "$C" umount "$T/mnt" 2> /dev/null || umount -l "$T/mnt" 2> /dev/null || true
	[ -f "$T/server.pid" ] && kill -TERM "$(cat "$T/server.pid")" 2> /dev/null
	for _ in $(seq 50); do [ -e "$T/server.pid" ] || break; sleep 0.1; done
	rm -rf "$T"
}
trap cleanup EXIT

"$S" -f "$T/server.conf"
say "nfsrdma-server is up: RPC/RDMA on 127.0.0.1:$RDMA, NFS/TCP on 127.0.0.1:$TCP, export $T/export"

# some files to move: a source tree and a few big ones
cp -a "$top/common" "$T/files/tree"
for n in 1 2 3; do head -c $((n * 3 << 20)) /dev/urandom > "$T/files/big$n.bin"; done

if [ -x "$C" ] && [ -e /dev/fuse ]; then
	"$C" mount -o proto=rdma,port=$RDMA,provider=auto "127.0.0.1:$T/export" "$T/mnt"
	mounted=1
	say "mounted with nfsrdma-client over RPC/RDMA at $T/mnt"
	cp -a "$T/files/." "$T/mnt/"
	sync
	diff -r "$T/files" "$T/mnt" > /dev/null
	mkdir -p "$T/back"
	cp -a "$T/mnt/." "$T/back/"
	diff -r "$T/files" "$T/back" > /dev/null
	say "copied $(du -sh "$T/files" | cut -f1) in and out through the mount: identical"
	"$C" umount "$T/mnt"
	mounted=""
	say "a short benchmark with nfsrdma-client bench (the protocol without FUSE):"
	"$C" bench "127.0.0.1:$T/export" -o proto=rdma,port=$RDMA,provider=auto \
		-t write,read -r 64k,1m -s 16m -q --verify
else
	say "nfsrdma-client is not available here: moving files with libnfs over NFS/TCP instead"
	Q="?version=3&nfsport=$TCP&mountport=$TCP"
	for f in big1.bin big2.bin big3.bin; do
		nfs-cp "$T/files/$f" "nfs://127.0.0.1$T/export/$f$Q" > /dev/null
		nfs-cp "nfs://127.0.0.1$T/export/$f$Q" "$T/files/$f.back" > /dev/null
		cmp "$T/files/$f" "$T/export/$f"
		cmp "$T/files/$f" "$T/files/$f.back"
	done
	say "moved $(du -ch "$T/files"/big?.bin | tail -1 | cut -f1) in and out with nfs-cp: identical"
fi

say "the server's counters:"
"$S" -s -f "$T/server.conf" | grep -E '^(tcp\.conns|rdma\.(device|registration|calls|bytes_rdma_read|bytes_rdma_write|bytes_inline_in|regs|remote_regs_now)) '
kill -TERM "$(cat "$T/server.pid")"
for _ in $(seq 100); do [ -e "$T/server.pid" ] || break; sleep 0.1; done
[ ! -e "$T/server.pid" ] && say "nfsrdma-server stopped cleanly"
