#!/bin/bash
# client_stats.sh: `nfsrdma-client stats MOUNTPOINT` on live mounts (RPC/RDMA
# and TCP) shows the transport and its settings (nconnect, from -o or the
# configuration file) and, per NFS procedure, the calls just made; usage
# errors and a path that is not a mount are refused.
. "$(dirname "$0")/client_lib.sh"
need_fuse
scratch
E=$T_SCRATCH/exp M=$T_SCRATCH/mnt N=$T_SCRATCH/tcp B=$T_SCRATCH/big
mkdir -p "$E" "$M" "$N" "$B"
start_server S -d "$E" -g cache || skip_all "the test server does not start"
do_mount "port=$S_RDMA,credits=16" "127.0.0.1:$E" "$M" || skip_all "cannot mount over RPC/RDMA"
do_mount "proto=tcp,port=$S_TCP,nconnect=2" "127.0.0.1:$E" "$N" || skip_all "cannot mount over TCP"
# a client that would send 8 KiB inline, to a server that receives 4 KiB,
# over three connections
printf 'rdma = { provider = "soft"; inline_send = "8K"; };\nclient = { nconnect = 3; };\n' \
	> "$T_SCRATCH/big.conf"
do_mount "port=$S_RDMA,config=$T_SCRATCH/big.conf" "127.0.0.1:$E" "$B" ||
	skip_all "cannot mount over RPC/RDMA with a configuration file"

plan 17
head -c 300000 /dev/urandom > "$M/f"
cat "$N/f" > /dev/null
ls "$M" > /dev/null
"$CLIENT" stats "$M" > "$T_SCRATCH/out-rdma" 2>&1
ok $? "stats on an RPC/RDMA mount"
sed 's/^/# /' "$T_SCRATCH/out-rdma"
check "names the mount and its server" grep -q "^server: 127.0.0.1:$E\$" "$T_SCRATCH/out-rdma"
check "the transport, mode and credits" grep -q "^transport: rdma .* mode read-write credits 16 " "$T_SCRATCH/out-rdma"
check "the inline sizes asked, and what the server lets it send" grep -q "^transport: rdma .* inline 4096/4096 (sends up to 4096) " "$T_SCRATCH/out-rdma"
"$CLIENT" stats "$B" > "$T_SCRATCH/out-big" 2>&1
sed 's/^/# /' "$T_SCRATCH/out-big" | head -n 2
check "8 KiB asked, 4 KiB negotiated (the server's receive size)" grep -q "^transport: rdma .* inline 8192/4096 (sends up to 4096) " "$T_SCRATCH/out-big"
check "client.nconnect = 3 of the file: three connections" grep -q "^nconnect: 3 (connected 3)\$" "$T_SCRATCH/out-big"
check "the registration strategy's counters" grep -q "^registration: regs [0-9]" "$T_SCRATCH/out-rdma"
check "windows bound, and the server's replies invalidated keys (RFC 8797)" \
	awk '$1 == "registration:" {for (i = 2; i < NF; i++) v[$i] = $(i + 1)}
		END {exit !(v["binds"] > 0 && v["remote_invs"] > 0 && v["remote_invs"] <= v["binds"])}' \
	"$T_SCRATCH/out-rdma"
check "300000 bytes written" grep -q "^bytes read [0-9]* written 300000 " "$T_SCRATCH/out-rdma"
check "a WRITE line with calls" awk '$1 == "WRITE" && $2 > 0 {f = 1} END {exit !f}' "$T_SCRATCH/out-rdma"
check "a COMMIT line (the close)" awk '$1 == "COMMIT" && $2 > 0 {f = 1} END {exit !f}' "$T_SCRATCH/out-rdma"
"$CLIENT" stats "$N" > "$T_SCRATCH/out-tcp" 2>&1
check "over TCP: transport tcp and the READs of the other mount" \
	bash -c "grep -q '^transport: tcp' '$T_SCRATCH/out-tcp' && awk '\$1 == \"READ\" && \$2 > 0 {f = 1} END {exit !f}' '$T_SCRATCH/out-tcp'"
check "over TCP: nconnect=2 of -o" grep -q "^nconnect: 2 (connected 2)\$" "$T_SCRATCH/out-tcp"
"$CLIENT" stats > /dev/null 2> "$T_SCRATCH/err"
check "no mount point: usage error (2), one line" \
	bash -c "[ $? -eq 2 ] && [ \$(wc -l < '$T_SCRATCH/err') -eq 1 ]"
"$CLIENT" stats "$T_SCRATCH" > /dev/null 2> "$T_SCRATCH/err"
rc=$?
check "a directory that is not a mount: exit 1, said so" \
	bash -c "[ $rc -eq 1 ] && grep -q 'no nfsrdma-client mount answers there' '$T_SCRATCH/err'"
"$CLIENT" umount "$N"
gone=1
for i in $(seq 1 100); do # the daemon ends after the unmount returns
	"$CLIENT" stats "$N" > /dev/null 2>&1 || { gone=0; break; }
	sleep 0.1
done
check "the socket goes with the mount" test $gone -eq 0
"$CLIENT" stats "$M" > /dev/null
check "the other mount still answers" test $? -eq 0
exit 0
