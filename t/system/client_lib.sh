# client_lib.sh: what the client's shell tests share (sourced, not run):
# TAP output, skipping with a reason, the in-process test server, mounts, and
# cleaning up whatever a test leaves behind.

: "${top_builddir:=$(pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
CLIENT=$top_builddir/nfsrdma-client
TESTSRV=$top_builddir/t/system/client_testsrv
T_SCRATCH=""
T_MOUNTS=""
T_PIDS=""
T_UMOUNTS="" # other file systems a test mounted, unmounted last

. "$top_srcdir/t/test-lib.sh"

# Everything a FUSE mount needs here, or skip the whole test with the reason.
need_fuse() {
	[ "$(id -u)" -eq 0 ] || skip_all "needs root (the test server opens files by handle)"
	[ -c /dev/fuse ] || skip_all "no /dev/fuse"
	grep -qw fuse /proc/filesystems 2>/dev/null || skip_all "the kernel has no FUSE"
	[ -x "$CLIENT" ] || skip_all "nfsrdma-client was not built"
	"$CLIENT" mount -h 2>&1 | grep -q 'built without libfuse3' &&
		skip_all "nfsrdma-client was built without libfuse3"
	[ -x "$TESTSRV" ] || skip_all "t/system/client_testsrv was not built (make check builds it)"
}

scratch() {
	T_SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/nfsrdma-ct.XXXXXX")
	chmod 755 "$T_SCRATCH"
}

# start_server NAME ARGS...: start client_testsrv; sets NAME_PID, NAME_RDMA, NAME_TCP.
start_server() {
	local name=$1 out i line
	shift
	out=$T_SCRATCH/$name.out
	# not the last server's "ready": the new one may not have truncated it yet
	rm -f "$out"
	"$TESTSRV" "$@" > "$out" 2> "$T_SCRATCH/$name.err" &
	eval "${name}_PID=$!"
	T_PIDS="$T_PIDS $!"
	for i in $(seq 1 100); do
		line=$(grep -m 1 '^ready ' "$out" 2>/dev/null)
		if [ -n "$line" ]; then
			set -- $line
			eval "${name}_RDMA=$2 ${name}_TCP=$3"
			return 0
		fi
		sleep 0.1
	done
	diag "server $name did not start: $(cat "$T_SCRATCH/$name.err")"
	return 1
}

# gone_within SECONDS PID: whether PID has exited within SECONDS
gone_within() {
	local i
	for ((i = 0; i < $1 * 10; i++)); do
		kill -0 "$2" 2>/dev/null || return 0
		sleep 0.1
	done
	return 1
}

# stop_server PID [SIGNAL]
stop_server() {
	kill -"${2:-TERM}" "$1" 2>/dev/null
	wait_bounded 30 "$1" 2>/dev/null
}

is_mounted() { grep -q " $1 fuse.nfsrdma " /proc/mounts; }

# do_mount OPTS SPEC DIR: mount in the background (daemon); records it for cleanup.
do_mount() {
	T_MOUNTS="$T_MOUNTS $3"
	"$CLIENT" mount -o "$1" "$2" "$3"
}

# fg_mount OPTS SPEC DIR: mount in the foreground as a job; sets FG_PID once it answers.
fg_mount() {
	local i
	T_MOUNTS="$T_MOUNTS $3"
	"$CLIENT" mount -o "foreground,$1" "$2" "$3" 2> "$T_SCRATCH/fg.err" &
	FG_PID=$!
	for i in $(seq 1 100); do
		is_mounted "$3" && stat "$3" > /dev/null 2>&1 && return 0
		kill -0 $FG_PID 2>/dev/null || break
		sleep 0.1
	done
	diag "foreground mount failed: $(cat "$T_SCRATCH/fg.err")"
	return 1
}

# fg_umount DIR: unmount and wait for the foreground daemon; its status is returned.
fg_umount() {
	local rc
	"$CLIENT" umount "$1" || return 1
	wait_bounded 30 $FG_PID
	rc=$?
	[ $rc -eq 0 ] || diag "the foreground daemon exited with $rc: $(tail -n 40 "$T_SCRATCH/fg.err")"
	return $rc
}

cleanup() {
	local m p
	for m in $T_MOUNTS; do
		is_mounted "$m" && { umount "$m" 2>/dev/null || umount -l "$m"; }
	done
	for p in $T_PIDS; do
		kill "$p" 2>/dev/null
	done
	for p in $T_PIDS; do
		wait_bounded 10 "$p" 2>/dev/null
	done
	for m in $T_UMOUNTS; do
		umount "$m" 2>/dev/null || umount -l "$m"
	done
	[ -n "$T_SCRATCH" ] && rm -rf "$T_SCRATCH"
}
trap cleanup EXIT

# A tree of files to copy: the sources of this area and a larger random file.
make_tree() {
	mkdir -p "$1/sub/deeper"
	cp "$top_srcdir"/client/*.c "$1/"
	cp "$top_srcdir"/client/*.h "$1/sub/"
	head -c 3000000 /dev/urandom > "$1/sub/deeper/random.bin"
	: > "$1/empty"
	ln -s sub/deeper/random.bin "$1/link"
	chmod 640 "$1/sub/deeper/random.bin"
}

# The same tree (contents, types, modes, symlink targets)?
same_tree() {
	diff -r --no-dereference "$1" "$2" > /dev/null &&
		[ "$(cd "$1" && find . -printf '%p %y %m %l\n' | sort)" = \
		  "$(cd "$2" && find . -printf '%p %y %m %l\n' | sort)" ]
}

# enter_private_ns ARGS...: run this test again (with ARGS) in network and
# mount namespaces of its own, or skip it; once there, bring up loopback
# and put a private /run (rpcbind's) in place. The test's first namespace
# goes with it (NFSRDMA_NS_FROM), so that an inherited variable never has a
# test change the host's /run or its sysctls.
enter_private_ns() {
	local here
	here=$(readlink /proc/self/ns/net)
	if [ -z "${NFSRDMA_NS_FROM:-}" ] || [ "$here" = "$NFSRDMA_NS_FROM" ]; then
		command -v unshare > /dev/null || skip_all "no unshare(1) for private namespaces"
		command -v ip > /dev/null || skip_all "ip(8) is missing (Debian: iproute2)"
		unshare --net --mount --propagation private true 2> /dev/null ||
			skip_all "cannot make private network and mount namespaces here"
		NFSRDMA_NS_FROM=$here exec unshare --net --mount --propagation private bash "$0" "$@"
	fi
	ip link set lo up
	mount -t tmpfs tmpfs /run && mkdir -p /run/rpcbind
}

# start_rpcbind: rpcbind in the private namespaces (enter_private_ns), in
# T_PIDS; 1 if it does not answer within 5 s.
start_rpcbind() {
	local i
	rpcbind -f &
	T_PIDS="$T_PIDS $!"
	for i in $(seq 50); do
		rpcinfo -p 127.0.0.1 > /dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

# start_ganesha EXPORT NFS_PORT MNT_PORT: nfs-ganesha (VFS FSAL, NFSv3 over
# TCP, no NLM) exporting EXPORT read-write without root squash, and the
# rpcbind it needs, both in T_PIDS; waits for MOUNT to be registered. Run in
# private namespaces (enter_private_ns), as client_ganesha.sh does. 1, the reason in ganesha_why, if it did not start.
start_ganesha() {
	mkdir -p "$T_SCRATCH/rec"
	cat > "$T_SCRATCH/ganesha.conf" << CONF
NFS_CORE_PARAM {
	NFS_Port = $2;
	MNT_Port = $3;
	NLM_Port = $(($3 - 1));
	Rquota_Port = $(($3 - 2));
	Protocols = 3;
	Enable_NLM = false;
	Enable_RQUOTA = false;
	Enable_UDP = false;
}
NFSV4 { Graceless = true; RecoveryBackend = fs; RecoveryRoot = $T_SCRATCH/rec; }
EXPORT {
	Export_Id = 1;
	Path = $1;
	Pseudo = $1;
	Access_Type = RW;
	Squash = No_Root_Squash;
	Protocols = 3;
	Transports = TCP;
	SecType = sys;
	FSAL { Name = VFS; }
}
CONF
	start_rpcbind || {
		ganesha_why="rpcbind did not start"
		return 1
	}
	ganesha.nfsd -F -f "$T_SCRATCH/ganesha.conf" -L "$T_SCRATCH/ganesha.log" \
		-p "$T_SCRATCH/ganesha.pid" -N NIV_EVENT &
	T_PIDS="$T_PIDS $!"
	for i in $(seq 1 100); do
		rpcinfo -p 127.0.0.1 2> /dev/null | grep -q mountd && return 0
		sleep 0.1
	done
	ganesha_why="nfs-ganesha did not start: $(tail -n 3 "$T_SCRATCH/ganesha.log" | tr '\n' ' ')"
	return 1
}
