#!/bin/bash
# client_fsops.sh: what a user does on a mount (RPC/RDMA, soft provider):
# create, rename, unlink, symlinks, hard links, chmod/chown, truncate, times,
# large files checked by checksum (read back through a direct_io mount),
# concurrent writers, big directories, special files, and the server
# enforcing permissions with the caller's own uid.
. "$(dirname "$0")/client_lib.sh"
need_fuse
scratch
E=$T_SCRATCH/exp M=$T_SCRATCH/mnt D=$T_SCRATCH/dio
mkdir -p "$E" "$M" "$D"
start_server S -d "$E" -g cache || skip_all "the test server does not start"
fg_mount "port=$S_RDMA" "127.0.0.1:$E" "$M" || skip_all "cannot mount"
do_mount "port=$S_RDMA,direct_io,noac" "127.0.0.1:$E" "$D" || skip_all "cannot mount with direct_io"

plan 30

echo one > "$M/a"
check "create and write" grep -qx one "$E/a"
echo two >> "$M/a"
check "append" test "$(cat "$D/a")" = "$(printf 'one\ntwo')"
mv "$M/a" "$M/b"
check "rename" test ! -e "$E/a" -a -f "$E/b"
echo other > "$M/c"
mv -f "$M/c" "$M/b"
check "rename over an existing file" test "$(cat "$M/b")" = other -a ! -e "$E/c"
mkdir -p "$M/d1/d2/d3" && mv "$M/d1" "$M/e1"
check "mkdir -p and rename a directory" test -d "$E/e1/d2/d3"
rm "$M/b"
check "unlink" test ! -e "$E/b" -a ! -e "$M/b"
echo target > "$M/t"
ln -s t "$M/l"
check "symlink" test "$(readlink "$M/l")" = t -a "$(readlink "$E/l")" = t -a "$(cat "$M/l")" = target
ln "$M/t" "$M/h"
check "hard link: same inode" test "$(stat -c %i "$M/t")" = "$(stat -c %i "$M/h")"
check "hard link: two links" test "$(stat -c %h "$M/t")" = 2
rm "$M/h"
check "hard link removed: one link" test "$(stat -c %h "$M/t")" = 1
chmod 751 "$M/t"
check "chmod" test "$(stat -c %a "$E/t")" = 751 -a "$(stat -c %a "$M/t")" = 751
chown 1234:5678 "$M/t"
check "chown" test "$(stat -c %u:%g "$E/t")" = 1234:5678 -a "$(stat -c %u:%g "$M/t")" = 1234:5678
head -c 100000 /dev/urandom > "$M/tr"
truncate -s 1000 "$M/tr"
check "truncate down" test "$(stat -c %s "$E/tr")" = 1000 -a "$(stat -c %s "$M/tr")" = 1000
truncate -s 5M "$M/tr"
check "truncate up reads zeros" test "$(tail -c 4M "$D/tr" | tr -d '\0' | wc -c)" = 0
touch -d '2001-02-03 04:05:06' "$M/t"
check "utimes" test "$(stat -c %Y "$E/t")" = "$(date -d '2001-02-03 04:05:06' +%s)"
dd if=/dev/urandom of="$T_SCRATCH/big" bs=1M count=64 status=none
cp "$T_SCRATCH/big" "$M/big"
sum=$(md5sum < "$T_SCRATCH/big")
check "64 MiB file: same on the server" test "$(md5sum < "$E/big")" = "$sum"
check "64 MiB file: same read back with direct_io" test "$(md5sum < "$D/big")" = "$sum"
dd if=/dev/zero of="$M/sparse" bs=1 count=1 seek=10M status=none
check "sparse write sets the size" test "$(stat -c %s "$D/sparse")" = 10485761

# Four writers on disjoint parts of one file and four on files of their own.
writers=""
for i in 0 1 2 3; do
	dd if="$T_SCRATCH/big" of="$M/shared" bs=1M skip=$((i * 16)) seek=$((i * 16)) count=16 \
		conv=notrunc,fsync status=none &
	writers="$writers $!"
	dd if="$T_SCRATCH/big" of="$M/own$i" bs=256k skip=$((i * 64)) count=64 conv=fsync status=none &
	writers="$writers $!"
done
wait_ok=0
for j in $writers; do wait_bounded 120 "$j" || wait_ok=1; done
ok $wait_ok "concurrent writers finish"
check "concurrent writers: shared file intact" test "$(md5sum < "$D/shared")" = "$sum"
own_ok=0
for i in 0 1 2 3; do
	[ "$(md5sum < "$D/own$i")" = "$(dd if="$T_SCRATCH/big" bs=256k skip=$((i * 64)) count=64 status=none | md5sum)" ] || own_ok=1
done
ok $own_ok "concurrent writers: own files intact"

mkdir "$M/many"
for i in $(seq 1 1000); do : > "$E/many/file-with-a-long-name-$i"; done
check "a 1000-entry directory lists fully" test "$(ls "$M/many" | wc -l)" = 1000
check "rmdir of a non-empty directory fails" bash -c "! rmdir '$M/many' 2>/dev/null"
rm -rf "$M/many"
check "rm -r" test ! -e "$E/many"
mkfifo "$M/fifo"
check "mkfifo" test -p "$E/fifo" -a -p "$M/fifo"
check "statfs" test "$(df -P "$M" | awk 'NR==2 {print $2}')" -gt 0

# The server checks permissions with the caller's uid, not the mounter's.
echo secret > "$M/private" && chmod 600 "$M/private"
echo public > "$M/public" && chmod 644 "$M/public"
if command -v setpriv > /dev/null; then
	nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
	nobody cat "$M/private" > /dev/null 2>&1
	check "another user is refused a 0600 file" test $? -ne 0
	check "another user reads a 0644 file" test "$(nobody cat "$M/public")" = public
	nobody touch "$M/e1/nope" 2>/dev/null
	check "another user cannot create in root's 0755 directory" test ! -e "$E/e1/nope"
else
	skip "no setpriv"
	skip "no setpriv"
	skip "no setpriv"
fi
umount "$D"
fg_umount "$M"
ok $? "unmounted, daemon exited cleanly"
exit 0
