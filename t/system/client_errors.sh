#!/bin/bash
# client_errors.sh: a mount that cannot work fails at once, with exit status
# 32 and a message that says why: a bad server name, nothing on the port
# (TCP and RPC/RDMA), an unknown export, an export that refuses this client;
# bad options fail with status 2 (a usage error) before anything is tried, a
# missing mount point with 32 (as mount.nfs).
. "$(dirname "$0")/client_lib.sh"
need_fuse
scratch
mkdir -p "$T_SCRATCH/export" "$T_SCRATCH/mnt"
start_server S -d "$T_SCRATCH/export" || skip_all "the test server does not start"
start_server D -d "$T_SCRATCH/export" --deny || skip_all "the test server does not start"
closed_port=$(free_port) # nothing listens there

plan 14

# expect STATUS PATTERN DESCRIPTION -- ARGS...: run a mount, check status and message.
expect() {
	local want=$1 pat=$2 desc=$3 out st
	shift 4
	out=$("$CLIENT" mount "$@" 2>&1)
	st=$?
	if [ $st -eq "$want" ] && grep -qE "$pat" <<< "$out"; then
		ok 0 "$desc"
	else
		ok 1 "$desc"
		diag "status $st, output: $out"
	fi
	is_mounted "$T_SCRATCH/mnt" && umount "$T_SCRATCH/mnt"
}

expect 32 "cannot resolve server name 'no-such-host.invalid'" "bad server name" -- \
	-o "port=$S_RDMA" no-such-host.invalid:/x "$T_SCRATCH/mnt"
expect 32 "cannot connect to 127.0.0.1:$closed_port over tcp: Connection refused" \
	"nothing on the TCP port" -- -o "proto=tcp,port=$closed_port" "127.0.0.1:$T_SCRATCH/export" "$T_SCRATCH/mnt"
expect 32 "cannot connect to 127.0.0.1:$closed_port over rdma" "nothing on the RDMA port" -- \
	-o "port=$closed_port" "127.0.0.1:$T_SCRATCH/export" "$T_SCRATCH/mnt"
expect 32 "MOUNT at 127.0.0.1:$S_RDMA \(tcp\) failed|no MOUNT" "TCP port that is not NFS" -- \
	-o "proto=tcp,port=$S_RDMA" "127.0.0.1:$T_SCRATCH/export" "$T_SCRATCH/mnt"
expect 32 "refused export /no/such/export: MNT3ERR_NOENT" "unknown export" -- \
	-o "port=$S_RDMA" 127.0.0.1:/no/such/export "$T_SCRATCH/mnt"
expect 32 "refused export $T_SCRATCH/export: MNT3ERR_ACCES" "export refuses this client" -- \
	-o "proto=tcp,port=$D_TCP" "127.0.0.1:$T_SCRATCH/export" "$T_SCRATCH/mnt"
expect 2 "unknown option 'bogus'" "unknown option" -- \
	-o "bogus" "127.0.0.1:$T_SCRATCH/export" "$T_SCRATCH/mnt"
expect 2 "option 'rsize': '5000' is not a multiple of 4096|multiple of 4096" "bad option value" -- \
	-o "rsize=5000" "127.0.0.1:$T_SCRATCH/export" "$T_SCRATCH/mnt"
expect 2 "heads: '127.0.0.1:99999' is not HOST, HOST:PORT or \\[ADDRESS\\]:PORT" \
	"a bad heads= entry is named" -- \
	-o "heads=127.0.0.2+127.0.0.1:99999" "127.0.0.1:$T_SCRATCH/export" "$T_SCRATCH/mnt"
expect 32 "mount point $T_SCRATCH/nodir: No such file" "missing mount point" -- \
	-o "port=$S_RDMA" "127.0.0.1:$T_SCRATCH/export" "$T_SCRATCH/nodir"
expect 2 "is not server:/export" "bad spec" -- -o "port=$S_RDMA" "127.0.0.1" "$T_SCRATCH/mnt"
printf 'client = {\n\tproto = "udp";\n};\n' > "$T_SCRATCH/bad.conf"
expect 2 "$T_SCRATCH/bad.conf:2: client.proto" "a bad configuration file names file, line and setting" -- \
	-o "config=$T_SCRATCH/bad.conf" "127.0.0.1:$T_SCRATCH/export" "$T_SCRATCH/mnt"
expect 2 "$T_SCRATCH/none.conf" "a missing configuration file is named" -- \
	-o "config=$T_SCRATCH/none.conf" "127.0.0.1:$T_SCRATCH/export" "$T_SCRATCH/mnt"
# the file says tcp on a closed port; the options override both
printf 'client = { proto = "tcp"; port = %s; };\n' "$closed_port" > "$T_SCRATCH/ok.conf"
"$CLIENT" mount -o "config=$T_SCRATCH/ok.conf,proto=rdma,port=$S_RDMA" "127.0.0.1:$T_SCRATCH/export" "$T_SCRATCH/mnt"
is_mounted "$T_SCRATCH/mnt"
ok $? "options override the configuration file"
T_MOUNTS="$T_MOUNTS $T_SCRATCH/mnt"
is_mounted "$T_SCRATCH/mnt" && "$CLIENT" umount "$T_SCRATCH/mnt"
exit 0
