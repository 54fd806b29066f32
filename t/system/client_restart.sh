#!/bin/bash
# client_restart.sh: the server is killed (SIGKILL) and restarted under a
# mount, over RPC/RDMA and over TCP, while a writer keeps writing: the mount
# reconnects by itself, no fsync'd data is lost, the writer's file comes out
# whole, and the daemon still exits cleanly at unmount.
. "$(dirname "$0")/client_lib.sh"
need_fuse
scratch
dd if=/dev/urandom of="$T_SCRATCH/big" bs=1M count=24 status=none
sum=$(md5sum < "$T_SCRATCH/big")

plan 10
for proto in rdma tcp; do
	E=$T_SCRATCH/exp-$proto M=$T_SCRATCH/mnt-$proto
	mkdir -p "$E" "$M"
	start_server S -d "$E" || { for i in 1 2 3 4 5; do ok 1 "$proto: server"; done; continue; }
	port=$S_RDMA
	[ $proto = tcp ] && port=$S_TCP
	fg_mount "proto=$proto,port=$port" "127.0.0.1:$E" "$M" ||
		{ for i in 1 2 3 4 5; do ok 1 "$proto: mount"; done; continue; }
	dd if="$T_SCRATCH/big" of="$M/before" bs=1M conv=fsync status=none
	# a writer of 1 MiB pieces, each fsync'd, through the restart
	( for i in $(seq 0 23); do
		dd if="$T_SCRATCH/big" of="$M/during" bs=1M skip=$i seek=$i count=1 \
			conv=notrunc,fsync status=none || exit 1
		sleep 0.1
	done ) &
	writer=$!
	sleep 0.8
	stop_server "$S_PID" KILL
	sleep 1
	start_server S2 -d "$E" -r "$S_RDMA" -t "$S_TCP"
	ok $? "$proto: server restarted on the same ports"
	wait_bounded 120 $writer
	ok $? "$proto: the writer went on through the restart"
	check "$proto: its file is whole" test "$(md5sum < "$M/during")" = "$sum"
	check "$proto: the fsync'd file from before is intact" test "$(md5sum < "$E/before")" = "$sum"
	fg_umount "$M"
	ok $? "$proto: unmounted, daemon exited cleanly"
	stop_server "$S2_PID"
done
exit 0
