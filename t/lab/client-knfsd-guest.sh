#!/bin/bash
# client-knfsd-guest.sh: runs INSIDE the rdmalab guest (see client-knfsd.sh):
# nfsrdma-client mounting through FUSE and benchmarking, over TCP and over
# RPC/RDMA on rxe0, first the kernel's nfsd (lab-knfsd; MOUNT over TCP to
# rpc.mountd), then nfsrdma-server on rxe0 in both modes. Prints TAP.
CLIENT=$top_builddir/nfsrdma-client
SERVER=$top_builddir/server/nfsrdma-server
IP=${RDMALAB_IP:-192.0.2.1}
DEV=${RDMALAB_RXE_DEV:-rxe0}
. "$top_srcdir/t/test-lib.sh" # ok, skip
mounted() { grep -q " $1 fuse.nfsrdma " /proc/mounts; }

echo "1..26"
modprobe fuse 2> /dev/null
lab-knfsd -d /export -s 256m -p 20049 > /tmp/knfsd.log 2>&1
ok $? "the kernel's nfsd runs (TCP 2049, RDMA 20049)"
mkdir -p /tmp/src/sub /mnt/k /tmp/out
cp "$top_srcdir"/client/*.c /tmp/src/ && cp "$top_srcdir"/client/*.h /tmp/src/sub/
head -c 3000000 /dev/urandom > /tmp/src/sub/random.bin
ln -s sub/random.bin /tmp/src/link

# run LABEL OPTS EXPORT: mount, tree in and out, operations, unmount, bench (6 results)
run() {
	local label=$1 opts=$2 exp=$3 err
	err=$("$CLIENT" mount -o "$opts" "$IP:$exp" /mnt/k 2>&1)
	ok $? "$label: mount ($opts)"
	[ -n "$err" ] && echo "# $err"
	rm -rf "$exp/tree" /tmp/out/tree
	mounted /mnt/k && cp -a /tmp/src /mnt/k/tree && diff -r /tmp/src "$exp/tree" > /dev/null
	ok $? "$label: tree copied in arrives intact"
	"$CLIENT" umount /mnt/k && "$CLIENT" mount -o "$opts" "$IP:$exp" /mnt/k
	mounted /mnt/k && cp -a /mnt/k/tree /tmp/out/tree && diff -r /tmp/src /tmp/out/tree > /dev/null
	ok $? "$label: tree copied out (fresh mount) is the same"
	mounted /mnt/k && mv /mnt/k/tree/sub /mnt/k/tree/moved &&
		ln /mnt/k/tree/moved/random.bin /mnt/k/tree/hard &&
		chmod 600 /mnt/k/tree/hard && truncate -s 100 /mnt/k/tree/hard &&
		[ "$(stat -c %a:%s:%h "$exp/tree/moved/random.bin")" = 600:100:2 ] &&
		rm -rf /mnt/k/tree && [ ! -e "$exp/tree" ]
	ok $? "$label: rename, link, chmod, truncate, rm -r"
	"$CLIENT" umount /mnt/k && ! mounted /mnt/k
	ok $? "$label: unmount"
	"$CLIENT" bench "$IP:$exp" -o "$opts" -r 64k,1m -s 4m --verify > /tmp/bench.txt 2>&1
	ok $? "$label: bench, reads verified"
	sed 's/^/# /' /tmp/bench.txt
}

# rdma_or_skip LABEL OPTS EXPORT: run over RPC/RDMA, or skip when this build
# has no rdma-core provider
rdma_or_skip() {
	local err
	err=$("$CLIENT" bench "$IP:$3" -o "$2" -t read -r 1m -s 1m 2>&1)
	if grep -q "no RDMA provider or device" <<< "$err"; then
		echo "# $1 skipped: $err"
		for i in 1 2 3 4 5 6; do skip "this build has no rdma-core provider for $DEV"; done
	else
		run "$1" "$2" "$3"
	fi
}

run "knfsd TCP" "proto=tcp,port=2049" /export
rdma_or_skip "knfsd RDMA" "port=20049,mountproto=tcp,provider=$DEV" /export

mkdir -p /nexp
mount -t tmpfs -o size=256m nexp /nexp # the overlay root has no persistent file handles
cat > /tmp/nfsrdma.conf << CONF
rdma = { provider = "$DEV"; };
server = {
	listen = ["$IP"];
	rdma_port = 20050;
	tcp_port = 2050;
	modes = ["read-write", "read-read"];
	registration = "fastreg";
	pidfile = "/tmp/nfsrdma-server.pid";
	control_socket = "/tmp/nfsrdma-server.sock";
	handle_key_file = "/tmp/nfsrdma-handle.key";
	exports = ( { path = "/nexp"; clients = ["*"]; access = "rw"; root_squash = false; } );
};
CONF
"$SERVER" -f /tmp/nfsrdma.conf > /tmp/server.log 2>&1
st=$?
ok $st "nfsrdma-server runs on $DEV"
[ $st -eq 0 ] || sed 's/^/# /' /tmp/server.log
rdma_or_skip "nfsrdma-server RDMA read-write" "port=20050,provider=$DEV" /nexp
rdma_or_skip "nfsrdma-server RDMA read-read" "port=20050,provider=$DEV,mode=read-read,reg=cache" /nexp
[ -f /tmp/nfsrdma-server.pid ] && kill "$(cat /tmp/nfsrdma-server.pid)"
exit 0
