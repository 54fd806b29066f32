#!/bin/bash
# kclient-bench-guest.sh: runs INSIDE the rdmalab guest (see kclient-bench.sh).
# The kernel's nfsd (lab-knfsd: RDMA on 20049, MOUNT through rpcbind) and
# nfsrdma-server (RDMA on 20050, MOUNT on TCP 2050, not in rpcbind; its
# defaults, so its loop polls adaptively up to 100 us, which the guest's
# slower calls mostly outlast) serve a tmpfs each, all at once, and a second
# nfsrdma-server with busy polling (rdma.poll_spin_us = BENCH_SPIN_US, 1000:
# the guest runs some 50 times slower than the host; RDMA on 20051, MOUNT on
# TCP 2051) and a third with its adaptive polling's ceiling scaled as much
# (server.adaptive_poll_us = BENCH_ADAPTIVE_US, 5000: the default 100 us on
# the guest's clock; RDMA on 20052, MOUNT on TCP 2052) serve the same tmpfs as
# the first; the kernel client mounts the four over RPC/RDMA on rxe0. Each
# round runs fio (O_DIRECT, psync: one call per record) on the mounts, in an
# order that rotates from round to round: sequential write of BENCH_MB MiB in
# 1 MiB records with fsync at the end, sequential read of it, and BENCH_RAND_S
# seconds of 4 KiB random reads. With BENCH_BASE_SERVER (another build's
# nfsrdma-server, e.g. main before a change) a fifth server, that binary with
# the first one's settings (RDMA on 20053, MOUNT on TCP 2053), runs in the same
# rounds, and the first ÷ it is printed. CSV in BENCH_OUT; TAP
# and the figures (medians, spread, ratios) on stdout.
B=$top_builddir
SERVER=$B/server/nfsrdma-server
IP=${RDMALAB_IP:-192.0.2.1}
rounds=${BENCH_ROUNDS:-5} mb=${BENCH_MB:-16} rs=${BENCH_RAND_S:-4}
. "$top_srcdir/t/test-lib.sh" # ok
W=/tmp/kb
out=${BENCH_OUT:-$W}
mkdir -p $W /mnt/k /mnt/n /mnt/s /mnt/a /mnt/b "$out"
csv=$out/kclient-bench.csv
echo "server,figure,round,value" > "$csv"

base=${BENCH_BASE_SERVER:-}
srvs="k n s a${base:+ b}"
echo "1..$((${base:+2} + 8))"
modprobe nfsv3 && modprobe rpcrdma
NFSD_THREADS=4 lab-knfsd -d /kexport -s $((mb * 2 + 64))m -p 20049 2> $W/knfsd.log
mkdir -p /export && mount -t tmpfs -o size=$((mb * 2 + 64))m kb-export /export && chmod 777 /export
. "$top_srcdir/t/lab/lab-guest.sh"
mount -t nfs -o vers=3,proto=rdma,port=20049,nolock "$IP:/kexport" /mnt/k 2> $W/kmount.err &&
	grep " /mnt/k " /proc/mounts | grep -q proto=rdma
ok $? "the kernel client mounts the kernel's nfsd over RDMA (port 20049)"
# serve M PORT NAME SERVER-SETTINGS RDMA-SETTINGS: an nfsrdma-server (RDMA on
# PORT, MOUNT on TCP PORT - 18000) serving /export, mounted on /mnt/M
declare -A what=([k]="the kernel's nfsd" [n]="nfsrdma-server"
	[s]="nfsrdma-server with busy polling" [a]="nfsrdma-server with a scaled adaptive polling"
	[b]="the base build's nfsrdma-server")
serve() {
	local m=$1 port=$2 name=$3 bin=${6:-$SERVER}
	nfsrdma_conf "$W/$name.conf" "$port" $((port - 18000)) "threads = 4; $4" "$5" "$name"
	"$bin" -f "$W/$name.conf" 2> "$W/$name.log" &&
		mount -t nfs -o vers=3,proto=rdma,port=$port,mountport=$((port - 18000)),mountproto=tcp,nolock \
			"$IP:/export" "/mnt/$m" 2> "$W/${m}mount.err" &&
		grep " /mnt/$m " /proc/mounts | grep -q proto=rdma
	local rc=$?
	ok $rc "and ${what[$m]} over RDMA (port $port) in the same boot"
	[ $rc -eq 0 ] || tail -n 3 "$W/$name.log" "$W/${m}mount.err" 2>&1 | sed 's/^/# /'
}
serve n 20050 nfsrdma-server "" ""
serve s 20051 nfsrdma-spin "" "poll_spin_us = ${BENCH_SPIN_US:-1000};"
serve a 20052 nfsrdma-adaptive "adaptive_poll_us = ${BENCH_ADAPTIVE_US:-5000};" ""
[ -z "$base" ] || serve b 20053 nfsrdma-base "" "" "$base"

# one_fio SERVER FIGURE ROUND FIO-ARGS...: record MB/s (rw) or IOPS (randread)
failed_n=0 failed_k=0 failed_s=0 failed_a=0 failed_b=0
one_fio() {
	local srv=$1 fig=$2 r=$3 dir=/mnt/$1 v
	shift 3
	# a server that did not come up gives no figure (fio would write to the guest's disk)
	if ! mountpoint -q "$dir"; then
		eval "failed_$srv=\$((failed_$srv + 1))"
		return
	fi
	if fio --name=b --filename=$dir/bench --direct=1 --ioengine=psync --size=${mb}M \
		--output-format=json --output=$W/fio.json "$@" > $W/fio.err 2>&1 &&
		v=$(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
fig = sys.argv[2]
if fig == "rand4k_iops":
    print("%.0f" % j["read"]["iops"])
else:
    print("%.1f" % (j["write" if fig == "write1m_MBps" else "read"]["bw_bytes"] / 1e6))
' $W/fio.json "$fig"); then
		echo "$srv,$fig,$r,$v" >> "$csv"
	else
		eval "failed_$srv=\$((failed_$srv + 1))"
		echo "# $srv $fig round $r: $(tail -n 2 $W/fio.err | tr '\n' ' ')"
	fi
}
# the servers' names in the CSV: k (the kernel's nfsd), n (nfsrdma-server),
# s (nfsrdma-server with busy polling), a (with the scaled adaptive polling),
# b (the base build); round r starts at the r-th of them, round and round
read -ra order <<< "$srvs"
for r in $(seq 1 "$rounds"); do
	for i in "${!order[@]}"; do
		s=${order[$(((r + i) % ${#order[@]}))]}
		one_fio $s write1m_MBps $r --rw=write --bs=1M --end_fsync=1
		one_fio $s read1m_MBps $r --rw=read --bs=1M
		one_fio $s rand4k_iops $r --rw=randread --bs=4k --runtime="$rs" --time_based
	done
done
for s in $srvs; do
	ok $((failed_$s)) "every fio run on ${what[$s]} finished ($((rounds * 3)) runs)"
done
for s in $srvs; do umount /mnt/$s; done
kill $(cat /run/nfsrdma-server.pid /run/nfsrdma-spin.pid /run/nfsrdma-adaptive.pid) 2> /dev/null
[ -z "$base" ] || kill "$(cat /run/nfsrdma-base.pid)" 2> /dev/null
python3 - "$csv" "${BENCH_SPIN_US:-1000}" "${BENCH_ADAPTIVE_US:-5000}" << 'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
names = {"k": "kernel nfsd", "n": "nfsrdma-server", "s": "nfsrdma, spin", "a": "nfsrdma, adapt",
         "b": "nfsrdma, base"}
figs = [("write1m_MBps", "sequential write 1 MiB, MB/s"),
        ("read1m_MBps", "sequential read 1 MiB, MB/s"),
        ("rand4k_iops", "4 KiB random read x 1, IOPS")]
med = {}
for f, label in figs:
    for s in ("k", "n", "s", "a", "b"):
        v = [float(r["value"]) for r in rows if r["server"] == s and r["figure"] == f]
        if not v:
            continue
        med[s, f] = statistics.median(v)
        print("# lab-bench-server: %-32s %-15s %9.1f (%.1f..%.1f, n=%d)"
              % (label, names[s], med[s, f], min(v), max(v), len(v)))
for f, label in figs:
    for s, who in (("n", "nfsrdma-server"), ("s", "nfsrdma-server spinning %s us" % sys.argv[2]),
                   ("a", "nfsrdma-server adaptive to %s us" % sys.argv[3])):
        if ("k", f) in med and (s, f) in med and med["k", f] > 0:
            print("# lab-bench-server: %s / nfsd, %s: %.2f (goal >= 1.2)"
                  % (who, label, med[s, f] / med["k", f]))
for f, label in figs:
    if ("b", f) in med and ("n", f) in med and med["b", f] > 0:
        print("# lab-bench-server: nfsrdma-server / the base build, %s: %.2f"
              % (label, med["n", f] / med["b", f]))
PY
exit 0
