#!/bin/bash
# client_kill.sh: a process waiting on a hard mount for a server that is away
# can be killed, as with Linux's client (whose calls are killable): SIGKILL
# ends a reader within seconds whether the server is gone (the mount waits to
# reconnect) or stopped (its connection stays up and no reply comes), over
# RPC/RDMA and over TCP; the mount stays, and serves again once the server is
# back. Without this the reader stayed in FUSE's uninterruptible wait until
# the server came back.
. "$(dirname "$0")/client_lib.sh"
need_fuse
scratch

plan $((2 * 2 * 3))
for proto in rdma tcp; do
	for how in stopped gone; do
		E=$T_SCRATCH/exp-$proto-$how M=$T_SCRATCH/mnt-$proto-$how
		mkdir -p "$E" "$M"
		echo "the data" > "$E/f"
		start_server S -d "$E" || { for i in 1 2 3; do ok 1 "$proto $how: server"; done; continue; }
		port=$S_RDMA
		[ $proto = tcp ] && port=$S_TCP
		fg_mount "proto=$proto,port=$port,hard,noac,timeo=2" "127.0.0.1:$E" "$M" ||
			{ for i in 1 2 3; do ok 1 "$proto $how: mount"; done; continue; }
		case $how in
		stopped) kill -STOP "$S_PID" ;;
		gone) stop_server "$S_PID" KILL ;;
		esac
		cat "$M/f" > /dev/null 2>&1 &
		reader=$!
		sleep 2
		check "$proto, server $how: the reader waits for it (hard mount)" kill -0 $reader
		start=$(date +%s)
		kill -KILL $reader
		gone_within 15 $reader
		ok $? "$proto, server $how: SIGKILL ends the waiting reader within 15 s"
		diag "$proto, server $how: took $(($(date +%s) - start)) s"
		# not waited for unless gone: a reader the kill did not end waits
		# for the server, which comes back below
		kill -0 $reader 2> /dev/null || wait $reader 2> /dev/null
		case $how in
		stopped) kill -CONT "$S_PID" ;;
		gone) start_server S -d "$E" -r "$S_RDMA" -t "$S_TCP" ;;
		esac
		check "$proto, server $how: the mount serves again once the server is back" \
			bash -c "[ \"\$(timeout 30 cat '$M/f')\" = 'the data' ]"
		fg_umount "$M" > /dev/null 2>&1
		stop_server "$S_PID"
	done
done
exit 0
