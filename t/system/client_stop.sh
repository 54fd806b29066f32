#!/bin/bash
# client_stop.sh: a hard mount whose server stops answering (the server
# process is stopped with SIGSTOP: its connections stay up, nothing comes
# back) can always be stopped: SIGTERM to the mount daemon, `umount -f`,
# `nfsrdma-client umount -f` (which says it did, exit 0) and a lazy
# `fusermount3 -uz` each end the daemon within seconds, over RPC/RDMA and
# over TCP, and the reader that was waiting gets an error instead of hanging.
. "$(dirname "$0")/client_lib.sh"
need_fuse
scratch

ways="sigterm umount-f client-umount-f fusermount-uz"
plan $((2 * 4 * 3 + 2))
for proto in rdma tcp; do
	for how in $ways; do
		E=$T_SCRATCH/exp-$proto-$how M=$T_SCRATCH/mnt-$proto-$how
		mkdir -p "$E" "$M"
		echo "before the server stopped" > "$E/f"
		n=3
		[ $how = client-umount-f ] && n=4
		start_server S -d "$E" || { for ((i = 0; i < n; i++)); do ok 1 "$proto $how: server"; done; continue; }
		port=$S_RDMA
		[ $proto = tcp ] && port=$S_TCP
		fg_mount "proto=$proto,port=$port,hard,noac" "127.0.0.1:$E" "$M" ||
			{ for ((i = 0; i < n; i++)); do ok 1 "$proto $how: mount"; done; continue; }
		kill -STOP "$S_PID"
		timeout 60 cat "$M/f" > "$T_SCRATCH/cat.out" 2> "$T_SCRATCH/cat.err" &
		reader=$!
		sleep 1
		start=$(date +%s)
		case $how in
		sigterm) kill -TERM $FG_PID ;;
		umount-f) umount -f "$M" 2> /dev/null || umount -l "$M" ;;
		client-umount-f)
			"$CLIENT" umount -f "$M" 2> "$T_SCRATCH/umount.err"
			rc=$?
			[ $rc -eq 0 ] || diag "$(cat "$T_SCRATCH/umount.err")"
			ok $rc "$proto, nfsrdma-client umount -f: exit 0"
			;;
		fusermount-uz) fusermount3 -uz "$M" ;;
		esac
		gone_within 20 $FG_PID
		ok $? "$proto, $how: the daemon ends within 20 s though the server never answers"
		diag "$proto, $how: took $(($(date +%s) - start)) s"
		wait_bounded 20 $reader
		rc=$?
		check "$proto, $how: the waiting reader gets an error ($rc), not a hang" \
			[ $rc -ne 0 -a $rc -ne 124 ]
		check "$proto, $how: the mount is gone" bash -c "! grep -q ' $M ' /proc/mounts"
		wait_bounded 5 $FG_PID > /dev/null 2>&1
		kill -CONT "$S_PID"
		stop_server "$S_PID"
	done
done
exit 0
