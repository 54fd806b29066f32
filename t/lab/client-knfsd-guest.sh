#!/bin/bash
# client-knfsd-guest.sh: runs INSIDE the rdmalab guest (see client-knfsd.sh):
# the kernel's nfsd via lab-knfsd, then nfsrdma-client mounting it through
# FUSE and benchmarking it, over TCP and over RPC/RDMA on rxe0. Prints TAP.
CLIENT=$top_builddir/nfsrdma-client
IP=${RDMALAB_IP:-192.0.2.1}
DEV=${RDMALAB_RXE_DEV:-rxe0}
n=0
ok() { n=$((n + 1)); if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }
mounted() { grep -q " $1 fuse.nfsrdma " /proc/mounts; }

echo "1..13"
modprobe fuse 2> /dev/null
lab-knfsd -d /export -s 256m -p 20049 > /tmp/knfsd.log 2>&1
ok $? "the kernel's nfsd runs (TCP 2049, RDMA 20049)"
mkdir -p /tmp/src/sub /mnt/k /tmp/out
cp "$top_srcdir"/client/*.c /tmp/src/ && cp "$top_srcdir"/client/*.h /tmp/src/sub/
head -c 3000000 /dev/urandom > /tmp/src/sub/random.bin
ln -s sub/random.bin /tmp/src/link

# run LABEL OPTS: mount, tree in and out, operations, unmount, bench (6 results)
run() {
	local label=$1 opts=$2 err
	err=$("$CLIENT" mount -o "$opts" "$IP:/export" /mnt/k 2>&1)
	ok $? "$label: mount ($opts)"
	[ -n "$err" ] && echo "# $err"
	rm -rf /export/tree /tmp/out/tree
	mounted /mnt/k && cp -a /tmp/src /mnt/k/tree && diff -r /tmp/src /export/tree > /dev/null
	ok $? "$label: tree copied in arrives intact"
	"$CLIENT" umount /mnt/k && "$CLIENT" mount -o "$opts" "$IP:/export" /mnt/k
	mounted /mnt/k && cp -a /mnt/k/tree /tmp/out/tree && diff -r /tmp/src /tmp/out/tree > /dev/null
	ok $? "$label: tree copied out (fresh mount) is the same"
	mounted /mnt/k && mv /mnt/k/tree/sub /mnt/k/tree/moved && ln /mnt/k/tree/moved/random.bin /mnt/k/tree/hard &&
		chmod 600 /mnt/k/tree/hard && truncate -s 100 /mnt/k/tree/hard &&
		[ "$(stat -c %a:%s:%h /export/tree/moved/random.bin)" = 600:100:2 ] && rm -rf /mnt/k/tree &&
		[ ! -e /export/tree ]
	ok $? "$label: rename, link, chmod, truncate, rm -r"
	"$CLIENT" umount /mnt/k && ! mounted /mnt/k
	ok $? "$label: unmount"
	"$CLIENT" bench "$IP:/export" -o "$opts" -r 64k,1m -s 4m --verify > /tmp/bench.txt 2>&1
	ok $? "$label: bench, reads verified"
	sed 's/^/# /' /tmp/bench.txt
}

run TCP "proto=tcp,port=2049"
err=$("$CLIENT" bench "$IP:/export" -o "port=20049,mountproto=tcp,provider=$DEV" -t read -r 1m -s 1m 2>&1)
if grep -q "no RDMA provider or device" <<< "$err"; then
	echo "# RPC/RDMA runs skipped: $err"
	for i in 1 2 3 4 5 6; do skip "this build has no rdma-core provider for $DEV"; done
else
	run RDMA "port=20049,mountproto=tcp,provider=$DEV"
fi
