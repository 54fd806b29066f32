#!/bin/bash
# client_fullfs.sh: the export's file system fills up under a mount, over
# RPC/RDMA and over TCP: the writer gets ENOSPC (not EIO, not a hang), what was
# written before is intact, and once space is freed writing works again.
. "$(dirname "$0")/client_lib.sh"
need_fuse
scratch
head -c 600000 /dev/urandom >"$T_SCRATCH/keep"

plan 12
for proto in rdma tcp; do
	E=$T_SCRATCH/exp-$proto M=$T_SCRATCH/mnt-$proto
	mkdir -p "$E" "$M"
	if ! mount -t tmpfs -o size=4m,mode=0755 tmpfs "$E" 2>/dev/null; then
		for i in 1 2 3 4 5 6; do skip "$proto: cannot mount a small tmpfs"; done
		continue
	fi
	T_UMOUNTS="$T_UMOUNTS $E"
	start_server S -d "$E" || { for i in 1 2 3 4 5 6; do ok 1 "$proto: server"; done; continue; }
	port=$S_RDMA
	[ $proto = tcp ] && port=$S_TCP
	fg_mount "proto=$proto,port=$port" "127.0.0.1:$E" "$M" ||
		{ for i in 1 2 3 4 5 6; do ok 1 "$proto: mount"; done; continue; }
	dd if="$T_SCRATCH/keep" of="$M/keep" bs=64k conv=fsync status=none
	check "$proto: a file written before the disk fills" cmp -s "$T_SCRATCH/keep" "$E/keep"
	dd if=/dev/zero of="$M/big" bs=1M count=8 conv=fsync status=none 2>"$T_SCRATCH/dd.err"
	rc=$?
	check "$proto: filling it fails with ENOSPC" \
		bash -c "[ $rc -ne 0 ] && grep -q 'No space left on device' '$T_SCRATCH/dd.err'"
	[ $rc -ne 0 ] || diag "dd said: $(cat "$T_SCRATCH/dd.err")"
	check "$proto: the earlier file is intact, on the server and through the mount" \
		bash -c "cmp -s '$T_SCRATCH/keep' '$E/keep' && cmp -s '$T_SCRATCH/keep' '$M/keep'"
	rm -f "$M/big"
	dd if="$T_SCRATCH/keep" of="$M/again" bs=64k conv=fsync status=none
	check "$proto: with the space freed, writing works again" cmp -s "$T_SCRATCH/keep" "$E/again"
	check "$proto: the mount still answers" test -f "$M/keep"
	fg_umount "$M"
	ok $? "$proto: unmounted, daemon exited cleanly"
	stop_server "$S_PID"
done
exit 0
