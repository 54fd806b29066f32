#!/bin/bash
# server-kclient.sh: the Linux kernel's own NFS client against nfsrdma-server
# over RPC/RDMA on Soft-RoCE (rxe0) inside ../shared/rdmalab, then the same
# against the kernel's nfsd in the same guest for comparison. TAP; prints
# "1..0 # SKIP reason" when the lab cannot run here.
#
# In the guest: nfsrdma-server (rdma-core provider, rxe0, registered with
# rpcbind) exports a tmpfs; `mount -t nfs -o vers=3,proto=rdma,port=20049`;
# a source tree copied in and out and compared; namespace operations; a file
# written and read back with dd (MB/s) and compared; the server's replies
# ended the client's keys (RFC 8797 Remote Invalidation, which the kernel
# client offers). Then lab-knfsd and dd again.
#
# Environment: see lab-common.sh; LAB_TIMEOUT (default 780), SIZE_MB (default 32).
# The guest has LAB_TIMEOUT; the test as a whole, nfsrdma-test-deadline: 840
set -u
timeout=${LAB_TIMEOUT:-780}
size_mb=${SIZE_MB:-32}
. "$(dirname "$0")/lab-common.sh"

lab_require
[ -x "$top_builddir/server/nfsrdma-server" ] || skip_all "server/nfsrdma-server is not built"
grep -q '^#define HAVE_RDMACORE 1' "$top_builddir/config.h" ||
	skip_all "built without rdma-core: nothing can talk to rxe0"

logs=$top_builddir/t/lab/kclient
rm -rf "$logs"
mkdir -p "$logs" || exit 1

cat > "$logs/guest.sh" << 'EOF'
# Runs in the guest: $1 build dir, $2 source dir, $3 logs, $4 MiB for dd.
B=$1 SRC=$2 L=$3 MB=$4 IP=$RDMALAB_IP
res() { echo "$1=$2" >> "$L/results"; }
ddrate() { sed -n 's/.* \([0-9.]*\) \([MGk]B\)\/s$/\1 \2/p' | tail -1; }
mkdir -p /export /mnt/n /tmp/out
modprobe nfsv3 && modprobe rpcrdma # NFSv3 and the client's RDMA transport (xprtrdma)
mount -t tmpfs -o size=$((MB * 3 + 64))m lab-export /export
pidof rpcbind > /dev/null || rpcbind -w
. "$SRC/t/lab/lab-guest.sh"
nfsrdma_conf "$L/server.conf"
"$B/server/nfsrdma-server" -f "$L/server.conf" 2> "$L/server.log"
res server_started $?
mount -t nfs -o vers=3,proto=rdma,port=20049,nolock "$IP:/export" /mnt/n 2> "$L/mount.err"
res mounted $?
grep " /mnt/n " /proc/mounts > "$L/mount.opts"
grep -q "proto=rdma" "$L/mount.opts"
res proto_rdma $?
mountpoint -q /mnt/n || exit 1 # nothing below means anything without the mount
cp -a "$SRC/common" /mnt/n/tree 2> "$L/cp-in.err"
res tree_in $?
diff -r "$SRC/common" /mnt/n/tree > "$L/diff-in" 2>&1
res tree_in_same $?
cp -a /mnt/n/tree /tmp/out/tree 2> "$L/cp-out.err"
diff -r "$SRC/common" /tmp/out/tree > "$L/diff-out" 2>&1
res tree_out_same $?
(cd /mnt/n && mkdir d && echo data > d/f && mv d/f d/g && ln d/g d/h && ln -s g d/s &&
	[ "$(cat d/s)" = data ] && [ "$(stat -c %h d/g)" = 2 ] && chmod 600 d/g &&
	[ "$(stat -c %a d/h)" = 600 ] && truncate -s 5 d/g && [ "$(stat -c %s d/h)" = 5 ] &&
	rm d/g d/h d/s && rmdir d) > "$L/ops.err" 2>&1
res namespace_ops $?
head -c $((MB << 20)) /dev/urandom > /tmp/src.bin
dd if=/tmp/src.bin of=/mnt/n/big bs=1M conv=fsync 2> "$L/dd-w"
res dd_write_rc $?
res dd_write "$(ddrate < "$L/dd-w")"
umount /mnt/n && mount -t nfs -o vers=3,proto=rdma,port=20049,nolock "$IP:/export" /mnt/n
dd if=/mnt/n/big of=/tmp/back.bin bs=1M 2> "$L/dd-r"
res dd_read "$(ddrate < "$L/dd-r")"
cmp -s /tmp/src.bin /tmp/back.bin
res big_same $?
cmp -s /tmp/src.bin /export/big
res big_on_server $?
"$B/server/nfsrdma-server" -s -f "$L/server.conf" > "$L/server.stats" 2>&1
# the kernel client offers Remote Invalidation (RFC 8797): its calls' keys
# end with the replies' Sends
awk '$1 == "rdma.remote_invs" && $2 > 0 {f = 1} END {exit !f}' "$L/server.stats"
res remote_invs $?
umount /mnt/n
res unmounted $?
kill -TERM "$(cat /run/nfsrdma-server.pid)"
for i in $(seq 100); do [ -e /run/nfsrdma-server.pid ] || break; sleep 0.1; done
[ ! -e /run/nfsrdma-server.pid ]
res server_stopped $?
# the kernel's own nfsd on the same guest, for comparison
pmap_unset 100005 3 2> /dev/null
lab-knfsd -d /kexport -s $((MB * 2 + 64))m -p 20049 2> "$L/knfsd.log"
mount -t nfs -o vers=3,proto=rdma,port=20049,nolock "$IP:/kexport" /mnt/n 2> "$L/kmount.err"
res knfsd_mounted $?
dd if=/tmp/src.bin of=/mnt/n/big bs=1M conv=fsync 2> "$L/kdd-w"
res knfsd_dd_write "$(ddrate < "$L/kdd-w")"
umount /mnt/n && mount -t nfs -o vers=3,proto=rdma,port=20049,nolock "$IP:/kexport" /mnt/n
dd if=/mnt/n/big of=/dev/null bs=1M 2> "$L/kdd-r"
res knfsd_dd_read "$(ddrate < "$L/kdd-r")"
umount /mnt/n
EOF

start=$(date +%s)
timeout=$(lab_secs "$timeout")
"$lab/lab-run.sh" -t "$timeout" -m 2G -s "$logs" -C "$top_builddir" \
	"bash '$logs/guest.sh' '$top_builddir' '$top_srcdir' '$logs' $size_mb" \
	> "$logs/lab.out" 2> "$logs/lab.err"
rc=$?
secs=$(($(date +%s) - start))
[ $rc -eq 125 ] && skip_all "the lab did not boot (lab-run.sh exit 125; see $logs/lab.err)"

val() { sed -n "s/^$1=//p" "$logs/results" 2>/dev/null | tail -1; }
n=0
fail=0
t() { # t NAME DESCRIPTION: ok when the guest recorded NAME=0
	n=$((n + 1))
	if [ "$(val "$1")" = 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2 (got '$(val "$1")')"
		fail=1
	fi
}
echo "1..14"
t server_started "nfsrdma-server starts on rxe0 in the guest"
t mounted "the kernel client mounts it: vers=3,proto=rdma,port=20049"
t proto_rdma "the mount really is over RDMA"
t tree_in "a source tree copies in"
t tree_in_same "and is the same on the server"
t tree_out_same "and copies back out unchanged"
t namespace_ops "mkdir, rename, link, symlink, chmod, truncate, remove through the kernel client"
t dd_write_rc "dd writes ${size_mb} MiB with fsync"
t big_same "and reads it back byte for byte"
t big_on_server "and the server's file is the same"
t remote_invs "replies invalidated the kernel client's keys (Send with Invalidate)"
t unmounted "unmounts"
t server_stopped "SIGTERM stops the server and removes its pidfile"
t knfsd_mounted "the kernel's nfsd mounts over RDMA in the same guest (comparison)"
echo "# nfsrdma-server: dd write $(val dd_write), read $(val dd_read)"
echo "# kernel nfsd:    dd write $(val knfsd_dd_write), read $(val knfsd_dd_read)"
echo "# lab took ${secs}s (lab-run exit $rc); logs in $logs"
for f in "$logs"/mount.err "$logs"/ops.err "$logs"/diff-in; do
	[ -s "$f" ] && sed "s|^|# ${f##*/}: |" "$f" | head -5
done
exit $fail
