#!/bin/bash
# client_ganesha.sh: nfsrdma-client over TCP against a stock server nobody
# here wrote, nfs-ganesha (VFS FSAL), run in the foreground with its own
# configuration on a scratch export. Ganesha needs rpcbind for NFSv3, so the
# test runs in private network and mount namespaces with a private /run: the
# rpcbind and ganesha it starts are invisible to the host and gone after it.
# MOUNT's port is found through rpcbind (over IPv4 and over IPv6), then
# given explicitly; a tree goes in
# and out, the usual operations run, and bench checks the data it reads.
. "$(dirname "$0")/client_lib.sh"
need_fuse
command -v ganesha.nfsd > /dev/null ||
	skip_all "nfs-ganesha is not installed (scripts/install-deps.sh installs it)"
[ -e /usr/lib/x86_64-linux-gnu/ganesha/libfsalvfs.so ] || ls /usr/lib/*/ganesha/libfsalvfs.so > /dev/null 2>&1 ||
	skip_all "nfs-ganesha-vfs is not installed"
command -v rpcbind > /dev/null || skip_all "rpcbind is not installed"

enter_private_ns "$@"
# Inside the namespaces from here on.
scratch
E=$T_SCRATCH/export M=$T_SCRATCH/mnt
mkdir -p "$E" "$M"
NFS_PORT=32049 MNT_PORT=32048
start_ganesha "$E" $NFS_PORT $MNT_PORT || skip_all "$ganesha_why"

plan 16
make_tree "$T_SCRATCH/src"
fg_mount "proto=tcp,port=$NFS_PORT" "127.0.0.1:$E" "$M"
ok $? "mount: MOUNT's port found through rpcbind"
cp -a "$T_SCRATCH/src" "$M/tree"
check "tree copied in arrives intact" same_tree "$T_SCRATCH/src" "$E/tree"
fg_umount "$M"
ok $? "unmounted, daemon exited cleanly"

fg_mount "proto=tcp,port=$NFS_PORT,mountport=$MNT_PORT,noac" "127.0.0.1:$E" "$M"
ok $? "mount with mountport given"
cp -a "$M/tree" "$T_SCRATCH/out"
check "tree copied out is the same" same_tree "$T_SCRATCH/src" "$T_SCRATCH/out"
mv "$M/tree/sub" "$M/tree/moved" && ln "$M/tree/empty" "$M/tree/hard" && ln -s moved "$M/tree/sl"
check "rename, hard link, symlink" test -d "$E/tree/moved" -a "$(stat -c %h "$E/tree/empty")" = 2 -a "$(readlink "$E/tree/sl")" = moved
chmod 604 "$M/tree/empty" && truncate -s 4097 "$M/tree/empty"
check "chmod, truncate" test "$(stat -c %a:%s "$E/tree/empty")" = 604:4097
dd if=/dev/urandom of="$T_SCRATCH/big" bs=1M count=16 status=none
cp "$T_SCRATCH/big" "$M/big"
check "16 MiB file arrives intact" cmp -s "$T_SCRATCH/big" "$E/big"
check "and reads back intact" cmp -s "$T_SCRATCH/big" "$M/big"
rm -rf "$M/tree"
check "rm -r" test ! -e "$E/tree"
check "statfs" test "$(df -P "$M" | awk 'NR==2 {print $2}')" -gt 0
fg_umount "$M"
ok $? "unmounted, daemon exited cleanly"

out=$("$CLIENT" bench "127.0.0.1:$E" -o "proto=tcp,port=$NFS_PORT" -r 4k,256k -j 2 -s 1m --verify 2>&1)
ok $? "bench against ganesha, reads verified"
echo "$out" | sed 's/^/# /'
check "bench left no files behind" test -z "$(ls -A "$E" | grep nfsrdma-bench)"
# over IPv6, MOUNT registered for tcp6 only: the portmapper's GETPORT (which
# asks for netid tcp) finds nothing; rpcbind version 4's GETADDR finds it
rpcinfo -d -T tcp 100005 3 && rpcinfo -d -T tcp 100005 1
fg_mount "proto=tcp,port=$NFS_PORT" "[::1]:$E" "$M"
ok $? "mount over IPv6: MOUNT's port found through rpcbind GETADDR"
fg_umount "$M"
ok $? "unmounted, daemon exited cleanly"
exit 0
