#!/bin/bash
# client_posix.sh: POSIX semantics of the mount that NFSv3 does not give by
# itself (make check-posix runs the full suites): a file unlinked or renamed
# over while open stays usable (silly rename) and its hidden name goes at the
# last close or at unmount; permissions checked by the mount (a path step
# without search permission, O_TRUNC without write permission, FIFOs); and
# setuid cleared when someone else writes.
. "$(dirname "$0")/client_lib.sh"
need_fuse
command -v setpriv > /dev/null || skip_all "setpriv is missing (util-linux)"
scratch
E=$T_SCRATCH/exp M=$T_SCRATCH/mnt
mkdir -p "$E" "$M"
chmod 777 "$E"
start_server S -d "$E" || skip_all "the test server does not start"
fg_mount "port=$S_RDMA" "127.0.0.1:$E" "$M" || skip_all "cannot mount"
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
hidden() { ls -A "$E/$1" | grep -c '^\.nfs'; }
# gone: no hidden name left, within 10 s (the kernel sends the last close on its own time)
gone() {
	local i
	for i in $(seq 1 100); do
		[ "$(hidden .)" = 0 ] && return 0
		sleep 0.1
	done
	return 1
}

plan 20

# unlink while open
echo "first line" > "$M/open"
exec 3< "$M/open" 4>> "$M/open"
rm "$M/open"
check "unlink of an open file: the name is gone" test ! -e "$M/open"
check "the file is hidden on the server, not removed" test "$(hidden .)" = 1
echo "second line" >&4
check "it is still written and read through the descriptors" \
	test "$(cat <&3)" = "$(printf 'first line\nsecond line')"
check "and fstat counts no link" test "$(stat -L -c %h /proc/$$/fd/3)" = 0
rm "$M/$(ls -A "$E" | grep '^\.nfs')" 2> "$T_SCRATCH/busy"
check "removing the hidden name is refused (EBUSY)" grep -q busy "$T_SCRATCH/busy"
exec 3<&- 4>&-
check "the last close removes it" gone

# rename over an open file
echo old > "$M/target" && echo new > "$M/source"
exec 3< "$M/target"
mv "$M/source" "$M/target"
check "rename over an open file: the new one is in place" test "$(cat "$M/target")" = new
check "the old one is still read through its descriptor" test "$(cat <&3)" = old
exec 3<&-
check "and goes at its last close" gone

# permissions checked by the mount
mkdir "$M/dir" && echo data > "$M/dir/file" && chmod 666 "$M/dir/file"
check "a user reaches a file in a searchable directory" test "$(nobody cat "$M/dir/file")" = data
chmod 644 "$M/dir"
nobody cat "$M/dir/file" > /dev/null 2>&1
check "not once the directory loses search permission (cached name or not)" test $? -ne 0
chmod 755 "$M/dir"
echo keep > "$M/ro" && chown 65534:65534 "$M/ro" && chmod 444 "$M/ro"
nobody sh -c ": > '$M/ro'" 2> /dev/null
check "an owner cannot truncate their read-only file by opening it" test "$(cat "$E/ro")" = keep
nobody truncate -s 0 "$M/ro" 2> /dev/null
check "nor by truncate(2)" test "$(cat "$E/ro")" = keep
mkfifo -m 600 "$M/fifo"
timeout 5 setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "exec 3< '$M/fifo'" 2> /dev/null
rc=$? # 124: the open waited for a writer, so it was allowed
check "a FIFO is not opened without permission" test $rc -ne 0 -a $rc -ne 124
echo x > "$M/suid" && chmod 4777 "$M/suid"
nobody sh -c "echo y >> '$M/suid'"
check "a write by another user succeeds on a setuid file" test "$(tail -n 1 "$E/suid")" = y
check "and clears setuid on the server" test "$(stat -c %a "$E/suid")" = 777
check "and through the mount" test "$(stat -c %a "$M/suid")" = 777
echo z > "$M/usuid" && chown 65534:65534 "$M/usuid" && chmod 4755 "$M/usuid"
chmod u-s "$M/usuid"
check "root's chmod u-s of another user's file reaches the server" test "$(stat -c %a "$E/usuid")" = 755

# a hidden file left open at unmount is removed then
echo held > "$M/held"
sleep 600 < "$M/held" &
holder=$!
for i in $(seq 1 100); do
	[ "$(readlink /proc/$holder/fd/0)" = "$M/held" ] && break
	sleep 0.1
done
rm "$M/held"
check "a file held open is hidden" test "$(hidden .)" = 1
umount -l "$M"
kill $holder
wait $holder 2> /dev/null
wait_bounded 30 $FG_PID
check "the unmount removes what was hidden" gone
exit 0
