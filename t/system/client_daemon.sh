#!/bin/bash
# client_daemon.sh: nfsrdma-client against the real nfsrdma-server on the soft
# provider, both reading one configuration file (the client's settings from
# its client section, -o options on top): every server registration strategy
# with both modes and the client strategies, a tree copied in and out, the
# daemon killed (SIGKILL) and restarted under a mount with a writer going, and
# bench.
. "$(dirname "$0")/client_lib.sh"
need_fuse
SERVER=$top_builddir/server/nfsrdma-server
[ -x "$SERVER" ] || skip_all "nfsrdma-server is not built"
scratch
E=$T_SCRATCH/export M=$T_SCRATCH/mnt C=$T_SCRATCH/nfsrdma.conf
mkdir -p "$E" "$M"
make_tree "$T_SCRATCH/src"
RDMA=$(free_port) TCP=$(free_port)

# conf SERVER-REGISTRATION: one file for the daemon and the client
conf() {
	cat > "$C" << CONF
log = { level = "notice"; };
rdma = { provider = "soft"; credits = 32; };
server = {
	listen = ["127.0.0.1"];
	rdma_port = $RDMA;
	tcp_port = $TCP;
	modes = ["read-write", "read-read"];
	registration = "$1";
	trusted_peers = true;
	pidfile = "$T_SCRATCH/server.pid";
	control_socket = "$T_SCRATCH/ctl.sock";
	handle_key_file = "$T_SCRATCH/handle.key";
	exports = ( { path = "$E"; clients = ["127.0.0.1"]; access = "rw"; root_squash = false; } );
};
client = { proto = "rdma"; port = $RDMA; acregmin = 1; };
CONF
}
start_daemon() {
	"$SERVER" -f "$C" 2> "$T_SCRATCH/server.err" || { diag "$(cat "$T_SCRATCH/server.err")"; return 1; }
	T_PIDS="$T_PIDS $(cat "$T_SCRATCH/server.pid")"
}
stop_daemon() { # stop_daemon [SIGNAL]
	local p
	p=$(cat "$T_SCRATCH/server.pid" 2> /dev/null) || return 0
	kill -"${1:-TERM}" "$p" 2> /dev/null
	for i in $(seq 1 50); do kill -0 "$p" 2> /dev/null || break; sleep 0.1; done
	rm -f "$T_SCRATCH/server.pid"
}

# copy_both OPTS: a tree in, a fresh mount, the tree out; 2 results
copy_both() {
	local r=0
	fg_mount "config=$C,$1" "127.0.0.1:$E" "$M" || r=1
	[ $r = 0 ] && cp -a "$T_SCRATCH/src" "$M/tree" && same_tree "$T_SCRATCH/src" "$E/tree" || r=1
	[ $r = 0 ] && fg_umount "$M" || r=1
	ok $r "$1: tree in, daemon exits cleanly"
	r=0
	fg_mount "config=$C,$1" "127.0.0.1:$E" "$M" || r=1
	[ $r = 0 ] && cp -a "$M/tree" "$T_SCRATCH/out" && same_tree "$T_SCRATCH/src" "$T_SCRATCH/out" || r=1
	rm -rf "$M/tree" "$T_SCRATCH/out"
	[ $r = 0 ] && fg_umount "$M" || r=1
	ok $r "$1: tree out, removed"
}

plan 27
for sreg in dynamic cache fastreg allphys; do
	conf $sreg
	start_daemon
	ok $? "server ($sreg) starts"
	case $sreg in
	dynamic) copy_both "mode=read-write,reg=zerocopy"; copy_both "mode=read-read,reg=cache" ;;
	cache) copy_both "mode=read-write,reg=fastreg"; copy_both "mode=read-read,reg=zerocopy" ;;
	fastreg) copy_both "mode=read-write,reg=cache"; copy_both "proto=tcp,port=$TCP" ;;
	allphys) copy_both "mode=read-write,reg=allphys,trusted_peers"; copy_both "mode=read-read,reg=fastreg" ;;
	esac
	[ $sreg = allphys ] || stop_daemon
done

# killed and restarted under a mount
dd if=/dev/urandom of="$T_SCRATCH/big" bs=1M count=16 status=none
fg_mount "config=$C" "127.0.0.1:$E" "$M"
ok $? "mount with the configuration file's settings alone"
dd if="$T_SCRATCH/big" of="$M/before" bs=1M conv=fsync status=none
( for i in $(seq 0 15); do
	dd if="$T_SCRATCH/big" of="$M/during" bs=1M skip=$i seek=$i count=1 conv=notrunc,fsync \
		status=none || exit 1
	sleep 0.1
done ) &
writer=$!
sleep 0.5
stop_daemon KILL
sleep 0.5
start_daemon
ok $? "server killed and restarted on the same ports"
wait_bounded 120 $writer
ok $? "the writer went on through the restart"
check "no fsync'd data lost" test "$(md5sum < "$E/before")" = "$(md5sum < "$T_SCRATCH/big")"
check "the file written through the restart is whole" cmp -s "$T_SCRATCH/big" "$M/during"
fg_umount "$M"
ok $? "unmounted, daemon exited cleanly"
"$CLIENT" bench "127.0.0.1:$E" -o "config=$C,reg=cache" -r 4k,1m -j 2 -s 2m --verify > "$T_SCRATCH/bench" 2>&1
ok $? "bench against the daemon, reads verified"
sed 's/^/# /' "$T_SCRATCH/bench"
stop_daemon
exit 0
