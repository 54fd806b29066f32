#!/bin/bash
# client-knfsd-guest.sh: runs INSIDE the rdmalab guest (see client-knfsd.sh):
# nfsrdma-client mounting through FUSE and benchmarking, over TCP and over
# RPC/RDMA on rxe0, first the kernel's nfsd (lab-knfsd; MOUNT over TCP to
# rpc.mountd; one transport, then three with nconnect=3), then nfsrdma-server on rxe0 in both modes and with Optimistic
# RDMA (issue 23: its export has ordma = true; -o ordma reads the server's
# block cache with RDMA Reads on rxe). Prints TAP.
CLIENT=$top_builddir/nfsrdma-client
SERVER=$top_builddir/server/nfsrdma-server
IP=${RDMALAB_IP:-192.0.2.1}
DEV=${RDMALAB_RXE_DEV:-rxe0}
. "$top_srcdir/t/test-lib.sh" # ok, skip
mounted() { grep -q " $1 fuse.nfsrdma " /proc/mounts; }

echo "1..50"
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
rdma_or_skip "knfsd RDMA nconnect=3" "port=20049,mountproto=tcp,provider=$DEV,nconnect=3" /export
# the three connections are there: stats of a mount that listed the export
# and read a file (READs into Write chunks: the client's windows, whose keys
# knfsd ends with the replies' Sends, since the client offers Remote
# Invalidation on rxe's type 2 windows)
if "$CLIENT" mount -o "port=20049,mountproto=tcp,provider=$DEV,nconnect=3" "$IP:/export" /mnt/k \
	> /tmp/nc.err 2>&1; then
	head -c 1048576 /dev/urandom > /export/inv.bin
	ls /mnt/k > /dev/null && cmp -s /export/inv.bin /mnt/k/inv.bin
	rc=$?
	"$CLIENT" stats /mnt/k > /tmp/nc.txt 2>&1
	"$CLIENT" umount /mnt/k
	rm -f /export/inv.bin
	check "knfsd RDMA: nconnect=3 makes three connections" grep -q "^nconnect: 3 (connected 3)" /tmp/nc.txt
	awk -v rc=$rc '$1 == "registration:" {for (i = 2; i < NF; i++) v[$i] = $(i + 1)}
		END {exit !(rc == 0 && v["remote_invs"] > 0)}' /tmp/nc.txt
	ok $? "knfsd RDMA: a file read right, and knfsd's replies ended the client's keys (Send with Invalidate)"
	sed 's/^/# /' /tmp/nc.txt | grep -E "^# (nconnect|registration)"
elif grep -q "no RDMA provider or device" /tmp/nc.err; then
	skip "this build has no rdma-core provider for $DEV"
	skip "this build has no rdma-core provider for $DEV"
else
	sed 's/^/# /' /tmp/nc.err
	ok 1 "knfsd RDMA: nconnect=3 makes three connections"
	ok 1 "knfsd RDMA: a file read right, and knfsd's replies ended the client's keys (Send with Invalidate)"
fi
# -o ordma against a server that does not speak it: READ alone, no error
if "$CLIENT" bench "$IP:/export" -o "port=20049,mountproto=tcp,provider=$DEV,ordma" -q \
	-t read,randread -r 4k -s 1m --verify > /tmp/kordma.txt 2>&1; then
	check "knfsd RDMA: -o ordma reads right with READ alone" grep -q '^ordma: 0 hits' /tmp/kordma.txt
elif grep -q "no RDMA provider or device" /tmp/kordma.txt; then
	skip "this build has no rdma-core provider for $DEV"
else
	sed 's/^/# /' /tmp/kordma.txt
	ok 1 "knfsd RDMA: -o ordma reads right with READ alone"
fi

# Locks against the kernel's lockd, which grants a blocked lock with
# GRANTED_MSG and waits for GRANTED_RES. The kernel's lockd owns program
# 100021 in this namespace's rpcbind and asks the client's rpcbind for its
# callback port, so the client mounts from network, mount and UTS namespaces
# of its own (10.9.3.1 "nclient" on a veth pair, its own rpcbind), over TCP:
# rxe in Linux 6.1 carries RoCE only in the first network namespace, and NLM
# goes over TCP from an RDMA mount too. lockd calls back over TCP, as the
# client's calls came.
LP=$top_builddir/t/system/lockprog
modprobe veth
echo "10.9.3.1 nclient" >> /etc/hosts # statd monitors only a name it can resolve
pidof rpc.statd > /dev/null || rpc.statd --no-notify # lockd monitors each client
ip netns add kn && ip link add hn type veth peer name cn && ip link set cn netns kn &&
	ip addr add 10.9.3.2/24 dev hn && ip link set hn up &&
	ip netns exec kn ip addr add 10.9.3.1/24 dev cn && ip netns exec kn ip link set cn up &&
	ip netns exec kn ip link set lo up
cat > /tmp/kn-setup.sh << KN
mount -t tmpfs none /run && mkdir -p /run/rpcbind
hostname nclient
rpcbind -w
mkdir -p /mnt/n
"$CLIENT" mount -o proto=tcp,port=2049,mountproto=tcp 10.9.3.2:/export /mnt/n > /tmp/kn-mount.log 2>&1 &&
	echo "\$\$" > /tmp/kn-mounted
exec sleep 100000
KN
ip netns exec kn unshare -m -u --propagation private bash /tmp/kn-setup.sh > /tmp/kn-setup.log 2>&1 &
for i in $(seq 150); do [ -f /tmp/kn-mounted ] && break; sleep 0.2; done
check "locks: nfsrdma-client mounts the kernel's nfsd from a namespace of its own, without nolock" \
	test -f /tmp/kn-mounted
[ -f /tmp/kn-mounted ] || sed 's/^/# /' /tmp/kn-setup.log /tmp/kn-mount.log
kn() { nsenter -t "$(cat /tmp/kn-mounted 2> /dev/null)" -n -m -u "$@"; }
echo data > /export/lk && chmod 666 /export/lk
# the first lock waits for the end of nfsd's grace period (90 s from its start)
check "locks: a lock on the mount is granted by the kernel's lockd" \
	test "$(kn timeout 150 "$LP" /mnt/n/lk w 200 1 2>&1)" = ok
# a local process holds bytes 0..99 for 3 s; the client's F_SETLKW waits for it
"$LP" /export/lk w 0 100 s 3000 u 0 100 > /tmp/holder.out 2>&1 &
holder=$!
for i in $(seq 50); do [ -s /tmp/holder.out ] && break; sleep 0.1; done
t0=$(date +%s%N)
kn "$LP" /mnt/n/lk W 10 10 s 3000 > /tmp/waiter.out 2>&1 &
waiter=$!
for i in $(seq 600); do [ -s /tmp/waiter.out ] && break; sleep 0.1; done
ms=$((($(date +%s%N) - t0) / 1000000))
got=$(head -n 1 /tmp/waiter.out)
# without GRANTED_MSG the client would learn of it only when it asks again (30 s)
check "locks: the client's blocked F_SETLKW is granted through lockd's GRANTED_MSG ($got after $ms ms)" \
	test "$got" = ok -a "$ms" -ge 1500 -a "$ms" -lt 15000
check "locks: lockd holds it for the client (a local F_SETLK is refused)" \
	test "$("$LP" /export/lk w 10 10)" = busy
wait "$holder" "$waiter"
dmesg | grep -i lockd | tail -n 5 | sed 's/^/# dmesg: /'

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
	trusted_peers = true;
	ordma = { cache = "16M"; };
	pidfile = "/tmp/nfsrdma-server.pid";
	control_socket = "/tmp/nfsrdma-server.sock";
	handle_key_file = "/tmp/nfsrdma-handle.key";
	exports = ( { path = "/nexp"; clients = ["*"]; access = "rw"; root_squash = false; ordma = true; } );
};
CONF
"$SERVER" -f /tmp/nfsrdma.conf > /tmp/server.log 2>&1
st=$?
ok $st "nfsrdma-server runs on $DEV"
[ $st -eq 0 ] || sed 's/^/# /' /tmp/server.log
rdma_or_skip "nfsrdma-server RDMA read-write" "port=20050,provider=$DEV" /nexp
rdma_or_skip "nfsrdma-server RDMA read-read" "port=20050,provider=$DEV,mode=read-read,reg=cache" /nexp
rdma_or_skip "nfsrdma-server RDMA ordma" "port=20050,provider=$DEV,ordma" /nexp

# ordma_pass OPTS LOG [BENCH-ARGS]: 4 KiB reads of a 2 MiB file in order (filling the
# cache), then shuffled, every block checked
ordma_pass() {
	"$CLIENT" bench "$IP:/nexp" -o "port=20050,provider=$DEV$1" -t read,randread \
		-r 4k -s 2m --verify -q "${@:3}" > "$2" 2>&1
}
if ordma_pass ",ordma" /tmp/ordma.txt; then
	ok 0 "ordma: 4 KiB reads on $DEV verified"
	hits=$(awk '/^ordma: / {h = $2} END {print h + 0}' /tmp/ordma.txt)
	errs=$(awk '/^ordma misses:/ {e += $NF} END {print e + 0}' /tmp/ordma.txt)
	check "ordma: the shuffled pass reads the cache by RDMA Read ($hits hits)" [ "$hits" -gt 0 ]
	check "ordma: no RDMA Read failed ($errs errors)" [ "$errs" = 0 ]
	# side by side, 3 rounds alternating: IOPS and median latency of the
	# shuffled pass (figures for BENCHMARKS.md, not assertions)
	fig() { awk -F, '$1 == "randread" {print $9 " IOPS, p50 " $13 " us"}' "$1"; }
	for r in 1 2 3; do
		ordma_pass ",ordma" /tmp/o$r.txt --csv /tmp/o$r.csv
		ordma_pass "" /tmp/p$r.txt --csv /tmp/p$r.csv
		echo "# ordma round $r: randread $(fig /tmp/o$r.csv) with ordma; $(fig /tmp/p$r.csv) with READ"
	done
	# the server restarted after the first pass: the references of the old
	# connection are never used on the new one (an unknown key would kill
	# the queue pair), the reads stay right, and the new cache is used
	cat > /tmp/restart.sh << HOOK
#!/bin/sh
[ "\$1 \$2" = "end read" ] && [ ! -f /tmp/restarted ] || exit 0
touch /tmp/restarted
kill "\$(cat /tmp/nfsrdma-server.pid)"
while [ -f /tmp/nfsrdma-server.pid ]; do sleep 0.1; done
"$SERVER" -f /tmp/nfsrdma.conf 2>> /tmp/server.log
HOOK
	chmod 755 /tmp/restart.sh
	ordma_pass ",ordma" /tmp/restart.txt --hook /tmp/restart.sh -r 4k,4k
	st=$?
	# one RDMA Read may meet the connection the server's exit broke; a
	# reference used on the new connection would fail every time
	errs=$(awk '/^ordma misses:/ {e += $NF} END {print e + 0}' /tmp/restart.txt)
	check "ordma: reads stay right across a server restart under the references ($errs RDMA Read errors)" \
		[ "$st" = 0 -a "$errs" -le 1 ]
	hits=$(awk '/^ordma: / {h = $2} END {print h + 0}' /tmp/restart.txt)
	check "ordma: the restarted server's cache is read again ($hits hits in the last pass)" [ "$hits" -gt 0 ]
	sed 's/^/# /' /tmp/restart.txt
else
	sed 's/^/# /' /tmp/ordma.txt
	if grep -q "no RDMA provider or device" /tmp/ordma.txt; then
		for i in 1 2 3 4 5; do skip "this build has no rdma-core provider for $DEV"; done
	else
		ok 1 "ordma: 4 KiB reads on $DEV verified"
		ok 1 "ordma: the shuffled pass reads the cache by RDMA Read"
		ok 1 "ordma: no RDMA Read failed"
		ok 1 "ordma: reads stay right across a server restart under the references"
		ok 1 "ordma: the restarted server's cache is read again"
	fi
fi
"$SERVER" -s -f /tmp/nfsrdma.conf 2>&1 | grep '^ordma' | tr '\n' ' ' | sed 's/^/# server: /'
echo
[ -f /tmp/nfsrdma-server.pid ] && kill "$(cat /tmp/nfsrdma-server.pid)"
exit 0
