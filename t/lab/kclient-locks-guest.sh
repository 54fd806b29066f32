#!/bin/bash
# kclient-locks-guest.sh: runs INSIDE the rdmalab guest (see kclient-locks.sh).
# nfsrdma-server in the guest's own namespaces (RPC/RDMA on rxe0, NFS, NLM
# and NSM over TCP and UDP, registered with the guest's rpcbind), and two
# Linux kernel NFSv3 clients, each in network, mount and UTS namespaces of
# its own (10.9.1.1 "kclient-a", 10.9.2.1 "kclient-b", on veth pairs), with
# its own rpcbind, rpc.statd and lockd, mounting without nolock over TCP,
# over IPv4 and over IPv6 (fd00:9:N::1; the server is given "0.0.0.0" and
# "::", and "::" takes IPv4 too, so its IPv4 clients come as IPv4-mapped
# addresses, and its calls back to the IPv6 mounts ask their rpcbind with
# GETADDR as Linux's lockd does).
# The kernel's lockd and nfsrdma-server's NLM both want program 100021 from
# the one rpcbind of a namespace, and rxe in Linux 6.1 carries RoCE only in
# the first network namespace, so a kernel client that locks cannot mount
# over RPC/RDMA in the same guest as the server; its NLM calls go over TCP
# in any case (as they do from an RDMA mount). nfsrdma-client mounts over
# RPC/RDMA on rxe0 beside the server. Prints TAP.
B=$top_builddir
SU=$top_builddir/t/lab/suites
CLIENT=$B/nfsrdma-client
SERVER=$B/server/nfsrdma-server
IP=${RDMALAB_IP:-192.0.2.1}
DEV=${RDMALAB_RXE_DEV:-rxe0}
. "$top_srcdir/t/test-lib.sh" # ok, check, skip
W=/tmp/kl
mkdir -p $W

echo "1..19"
modprobe veth && modprobe nfsv3 && modprobe rpcrdma && modprobe fuse 2> /dev/null
ip link set lo up
for k in a b; do
	n=$([ $k = a ] && echo 1 || echo 2)
	ip netns add k$k &&
		ip link add h$k type veth peer name c$k &&
		ip link set c$k netns k$k &&
		ip addr add 10.9.$n.2/24 dev h$k && ip link set h$k up &&
		ip netns exec k$k ip addr add 10.9.$n.1/24 dev c$k &&
		ip -6 addr add fd00:9:$n::2/64 dev h$k nodad &&
		ip netns exec k$k ip -6 addr add fd00:9:$n::1/64 dev c$k nodad &&
		ip netns exec k$k ip link set c$k up &&
		ip netns exec k$k ip link set lo up
done
mkdir -p /export && mount -t tmpfs -o size=256m kl-export /export && chmod 777 /export
pidof rpcbind > /dev/null || rpcbind -w
cat > $W/server.conf << CONF
rdma = { provider = "$DEV"; };
server = {
	listen = ["0.0.0.0", "::"]; # as many write it: "::" takes IPv4 too
	rdma_port = 20049;
	tcp_port = 2049;
	rpcbind = true;
	nlm = { grace_s = 0; };
	pidfile = "$W/server.pid";
	control_socket = "$W/server.sock";
	handle_key_file = "$W/handle.key";
	nsm = { state_dir = "$W/sm"; };
	exports = ( { path = "/export"; clients = ["*"]; access = "rw"; root_squash = false; } );
};
CONF
"$SERVER" -f $W/server.conf > $W/server.log 2>&1
st=$?
ok $st "nfsrdma-server runs (RPC/RDMA on $DEV; NFS, NLM and NSM on TCP and UDP)"
[ $st -eq 0 ] || sed 's/^/# /' $W/server.log

# A kernel client: a process that holds its namespaces (rpcbind, statd, the
# mount at /mnt/k) until the guest ends; kc K CMD runs CMD in them.
cat > $W/kc-setup.sh << 'KC'
k=$1 n=$2 W=$3
mount -t tmpfs none /run && mkdir -p /run/rpcbind
mount -t tmpfs none /var/lib/nfs && mkdir -p /var/lib/nfs/sm /var/lib/nfs/sm.bak
hostname kclient-$k
rpcbind -w && rpc.statd
mkdir -p /mnt/k /mnt/k6
mount -t nfs -o vers=3,proto=tcp6 "[fd00:9:$n::2]:/export" /mnt/k6 > $W/mount6-$k.log 2>&1 &&
	touch $W/mounted6-$k
mount -t nfs -o vers=3,proto=tcp 10.9.$n.2:/export /mnt/k && echo "$$" > $W/mounted-$k
exec sleep 100000
KC
for k in a b; do
	n=$([ $k = a ] && echo 1 || echo 2)
	ip netns exec k$k unshare -m -u --propagation private bash $W/kc-setup.sh $k $n $W \
		> $W/setup-$k.log 2>&1 &
done
for i in $(seq 300); do [ -f $W/mounted-a ] && [ -f $W/mounted-b ] && break; sleep 0.2; done
kc() { # kc K CMD
	local k=$1
	shift
	nsenter -t "$(cat $W/mounted-$k)" -n -m -u bash -c "$*"
}
for k in a b; do
	check "kernel client $k mounts nfsrdma-server without nolock, in its own namespaces" \
		test -f $W/mounted-$k
	[ -f $W/mounted-$k ] || sed 's/^/# /' $W/setup-$k.log
	check "kernel client $k mounts it over IPv6 too (fd00:9:$([ $k = a ] && echo 1 || echo 2)::2, TCP)" \
		test -f $W/mounted6-$k
	[ -f $W/mounted6-$k ] || sed 's/^/# /' $W/mount6-$k.log
done

# lk.py OP PATH [MARK]: hold (a write lock on bytes 0..99, until MARK.release
# appears; MARK.held once it holds), try (F_SETLK), get (F_GETLK), wait (F_SETLKW)
cat > $W/lk.py << 'PY'
import fcntl, os, struct, sys, time
op, path = sys.argv[1], sys.argv[2]
f = open(path, 'r+')
if op == 'hold':
    mark = sys.argv[3]
    fcntl.lockf(f, fcntl.LOCK_EX, 100, 0)
    open(mark + '.held', 'w').close()
    end = time.time() + 60
    while not os.path.exists(mark + '.release') and time.time() < end:
        time.sleep(0.1)
    fcntl.lockf(f, fcntl.LOCK_UN, 100, 0)
elif op == 'try':
    try:
        fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB, 100, 0)
        print('got')
    except OSError as e:
        print('conflict', e.errno)
elif op == 'get':
    r = struct.unpack('hhqqi', fcntl.fcntl(f, fcntl.F_GETLK,
                                            struct.pack('hhqqi', fcntl.F_WRLCK, 0, 0, 100, 0)))
    print('type', r[0], 'start', r[2], 'len', r[3])
elif op == 'wait':
    t = time.time()
    fcntl.lockf(f, fcntl.LOCK_EX, 100, 0)
    print('granted %.1f' % (time.time() - t))
PY
WRLCK=$(python3 -c 'import fcntl; print(fcntl.F_WRLCK)')
echo data > /export/f && chmod 666 /export/f
# wait_held MARK: the holder holds (within 20 s)
wait_held() {
	for i in $(seq 100); do [ -f "$1.held" ] && return 0; sleep 0.2; done
	return 1
}

# holds_waits MNT OTHER MARK TAG: kernel client a holds a lock through /mnt/MNT;
# b's F_SETLK conflicts there and through its other mount /mnt/OTHER, b's
# F_GETLK names it, and b's F_SETLKW is granted once a unlocks, by the
# server's GRANTED callback (within 10 s: not lockd's 30 s poll).
holds_waits() {
	local mnt=$1 other=$2 mark=$W/$3 tag=$4 holder try get got
	kc a "python3 $W/lk.py hold /mnt/$mnt/f $mark" > $mark.out 2>&1 &
	holder=$!
	wait_held $mark
	try=$(kc b "timeout -k 5 30 python3 $W/lk.py try /mnt/$mnt/f" 2>&1)
	check "$tag: a lock of kernel client a conflicts with kernel client b's F_SETLK ($try)" \
		test "$try" = "conflict 11"
	try=$(kc b "timeout -k 5 30 python3 $W/lk.py try /mnt/$other/f" 2>&1)
	check "$tag: and with b's F_SETLK through its other mount ($try)" test "$try" = "conflict 11"
	get=$(kc b "timeout -k 5 30 python3 $W/lk.py get /mnt/$mnt/f" 2>&1)
	check "$tag: kernel client b's F_GETLK reports it ($get)" \
		test "$get" = "type $WRLCK start 0 len 100"
	(sleep 2 && touch $mark.release) &
	got=$(kc b "timeout -k 5 30 python3 $W/lk.py wait /mnt/$mnt/f" 2>&1)
	wait $holder
	check "$tag: b's F_SETLKW is granted once a unlocks ($got s; by the GRANTED callback)" \
		bash -c "echo '$got' | awk '\$1 == \"granted\" && \$2 < 10 { ok = 1 } END { exit !ok }'"
}
holds_waits k k6 a1 "IPv4"
# over IPv6 b's lockd calls over TCP/IPv6; the server finds b's lockd with
# GETADDR (udp6) at b's rpcbind and calls GRANTED there
holds_waits k6 k a6 "IPv6"

# nfsrdma-client over RPC/RDMA and a kernel client see each other's locks
mkdir -p /mnt/f
"$CLIENT" mount -o "provider=$DEV" "$IP:/export" /mnt/f > $W/fuse.log 2>&1
check "nfsrdma-client mounts over RPC/RDMA on $DEV" grep -q " /mnt/f fuse.nfsrdma " /proc/mounts
kc a "python3 $W/lk.py hold /mnt/k/f $W/a2" > $W/a2.out 2>&1 &
holder=$!
wait_held $W/a2
try=$(timeout -k 5 30 python3 $W/lk.py try /mnt/f/f 2>&1)
get=$(timeout -k 5 30 python3 $W/lk.py get /mnt/f/f 2>&1)
check "the RPC/RDMA mount sees kernel client a's lock (F_SETLK: $try; F_GETLK: $get)" \
	test "$try / $get" = "conflict 11 / type $WRLCK start 0 len 100"
touch $W/a2.release
wait $holder
python3 $W/lk.py hold /mnt/f/f $W/f1 > $W/f1.out 2>&1 &
holder=$!
wait_held $W/f1
try=$(kc a "timeout -k 5 30 python3 $W/lk.py try /mnt/k/f" 2>&1)
check "kernel client a sees the RPC/RDMA mount's lock ($try)" test "$try" = "conflict 11"
touch $W/f1.release
wait $holder
try=$(kc a "timeout -k 5 30 python3 $W/lk.py try /mnt/k/f" 2>&1)
check "and takes the range once it is released ($try)" test "$try" = "got"
"$CLIENT" umount /mnt/f 2> /dev/null

# Connectathon's lock tests on kernel client a's mount
kc a "mkdir -p /mnt/k/cthon-l && cd $SU/cthon04 && timeout -k 10 300 ./runtests -l -f /mnt/k/cthon-l" \
	> $W/cthon-l.log 2>&1
st=$?
ok $st "Connectathon lock tests (-l) pass on the kernel client's mount"
[ $st -eq 0 ] && grep -E 'results:' $W/cthon-l.log | sed 's/^/# /'
[ $st -eq 0 ] || grep -E -B3 -A3 'FAILED|fail\)' $W/cthon-l.log | tail -n 30 | sed 's/^/# /'
stats=$("$SERVER" -s -f $W/server.conf 2> /dev/null | grep -E '^nlm\.(locks|owners|hosts|callbacks_failed)' | tr '\n' ' ')
echo "# server: $stats"
check "no GRANTED callback failed" bash -c "echo '$stats' | grep -q 'nlm.callbacks_failed 0'"
kill "$(cat $W/server.pid)" 2> /dev/null
exit 0
