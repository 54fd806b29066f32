#!/bin/bash
# client_mount.sh: mount through FUSE over TCP and over RPC/RDMA (soft
# provider) in both modes with every client registration strategy (each
# paired with a server strategy), copy a tree in and out and compare; each
# daemon runs in the foreground here so its exit status (ASan, leaks) counts.
# Last, the daemonized mount and mount.nfsrdma as mount(8) runs it.
. "$(dirname "$0")/client_lib.sh"
need_fuse
scratch
make_tree "$T_SCRATCH/src"

# client options | server options
combos=(
	"proto=tcp|-g dynamic"
	"mode=read-write,reg=zerocopy|-g dynamic -m rw"
	"mode=read-write,reg=cache|-g cache -m rw"
	"mode=read-write,reg=fastreg|-g fastreg -m rw"
	"mode=read-write,reg=allphys,trusted_peers|-g allphys -m rw"
	"mode=read-read,reg=zerocopy|-g fastreg -m rr"
	"mode=read-read,reg=cache|-g dynamic -m rr"
	"mode=read-read,reg=fastreg|-g cache -m both"
	"mode=read-read,reg=allphys,trusted_peers|-g allphys -m both"
)
plan $((${#combos[@]} * 5 + 5))

n=0
for combo in "${combos[@]}"; do
	n=$((n + 1))
	copts=${combo%%|*}
	sopts=${combo#*|}
	exp=$T_SCRATCH/exp$n mnt=$T_SCRATCH/mnt$n out=$T_SCRATCH/out$n
	mkdir -p "$exp" "$mnt"
	# shellcheck disable=SC2086
	if ! start_server S$n -d "$exp" $sopts; then
		for i in 1 2 3 4 5; do ok 1 "$copts: server"; done
		continue
	fi
	eval "rport=\$S${n}_RDMA tport=\$S${n}_TCP"
	port=$rport
	case $copts in proto=tcp*) port=$tport ;; esac
	if ! fg_mount "$copts,port=$port" "127.0.0.1:$exp" "$mnt"; then
		for i in 1 2 3 4 5; do ok 1 "$copts: mount"; done
		continue
	fi
	cp -a "$T_SCRATCH/src" "$mnt/tree"
	check "$copts: tree copied in arrives intact on the server" same_tree "$T_SCRATCH/src" "$exp/tree"
	fg_umount "$mnt"
	ok $? "$copts: unmounted, daemon exited cleanly"
	# a fresh mount: nothing comes from the kernel's page cache
	if ! fg_mount "$copts,port=$port" "127.0.0.1:$exp" "$mnt"; then
		for i in 1 2 3; do ok 1 "$copts: second mount"; done
		continue
	fi
	cp -a "$mnt/tree" "$out"
	check "$copts: tree copied out is the same" same_tree "$T_SCRATCH/src" "$out"
	rm -rf "$mnt/tree"
	check "$copts: tree removed" test ! -e "$exp/tree"
	fg_umount "$mnt"
	ok $? "$copts: unmounted again"
done

# The daemon: returns once the mount works, then serves in the background.
mkdir -p "$T_SCRATCH/dexp" "$T_SCRATCH/dmnt"
start_server D -d "$T_SCRATCH/dexp"
do_mount "port=$D_RDMA" "127.0.0.1:$T_SCRATCH/dexp" "$T_SCRATCH/dmnt"
ok $? "daemonized mount returns 0"
check "and answers at once" is_mounted "$T_SCRATCH/dmnt"
echo hello > "$T_SCRATCH/dmnt/f" && check "a file written through it is on the server" grep -qx hello "$T_SCRATCH/dexp/f"
"$CLIENT" umount "$T_SCRATCH/dmnt"
ok $? "nfsrdma-client umount"

# mount(8)'s helper convention: mount.nfsrdma SPEC DIR [-sfnv] -o OPTS
ln -sf "$CLIENT" "$T_SCRATCH/mount.nfsrdma"
"$T_SCRATCH/mount.nfsrdma" "127.0.0.1:$T_SCRATCH/dexp" "$T_SCRATCH/dmnt" -n -o "rw,noatime,_netdev,port=$D_RDMA"
st=$?
is_mounted "$T_SCRATCH/dmnt" && grep -qx hello "$T_SCRATCH/dmnt/f"
ok $((st + $?)) "mount.nfsrdma SPEC DIR -o OPTS mounts"
umount "$T_SCRATCH/dmnt"
exit 0
