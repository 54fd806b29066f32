# test-lib.sh: what the shell tests share (sourced, not run): TAP output and
# a free port. Tests end with `exit $T_FAILED` or leave the verdict to the TAP
# lines (automake's driver counts "not ok").
T_NUM=0
T_FAILED=0

plan() { echo "1..$1"; }
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
# ok EXIT-STATUS DESCRIPTION
ok() {
	T_NUM=$((T_NUM + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $T_NUM - $2"
	else
		echo "not ok $T_NUM - $2"
		T_FAILED=$((T_FAILED + 1))
	fi
}
# check DESCRIPTION CMD...: ok if CMD succeeds
check() {
	local d=$1
	shift
	"$@"
	ok $? "$d"
}
skip() { T_NUM=$((T_NUM + 1)); echo "ok $T_NUM # SKIP $*"; }

# daemon_conf FILE DIR SERVER-SETTINGS: an nfsrdma-server configuration for a
# test: the soft provider (or $PROVIDER), log level $LOG_LEVEL (info), 127.0.0.1
# on ports $RDMA and $TCP, pidfile, control socket and handle key in DIR, then
# $DAEMON_EXTRA_CONF and SERVER-SETTINGS (lines inside server = { }: exports,
# limits...).
daemon_conf() {
	cat >"$1" <<EOF
log = { level = "${LOG_LEVEL:-info}"; };
rdma = { provider = "${PROVIDER:-soft}"; };
server = {
	listen = ["127.0.0.1"];
	rdma_port = $RDMA;
	tcp_port = $TCP;
	pidfile = "$2/server.pid";
	control_socket = "$2/ctl.sock";
	handle_key_file = "$2/handle.key";${DAEMON_EXTRA_CONF:-}
$3
};
EOF
}
diag() { echo "# $*"; }

# wait_bounded SECONDS PID: wait for a child, for SECONDS at most; its exit
# status, or 124 once it has been ended (SIGTERM, then SIGKILL) for running too
# long. No test waits for a process without a limit.
wait_bounded() {
	local i
	for ((i = 0; i < $1 * 10; i++)); do
		kill -0 "$2" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$2" 2>/dev/null; then
		diag "pid $2 still running after $1 s: $(ps -o args= -p "$2")"
		kill -TERM "$2" 2>/dev/null
		sleep 1
		kill -KILL "$2" 2>/dev/null
		wait "$2" 2>/dev/null
		return 124
	fi
	wait "$2"
}

# A TCP/UDP port free right now, below the kernel's ephemeral range, so that
# other tests' outgoing connections and bind(0)s (run in parallel) cannot take it.
free_port() {
	local low p
	low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
	[ "$low" -gt 12000 ] || low=32768
	while :; do
		p=$((10000 + RANDOM % (low - 10000)))
		ss -ltnuaH "( sport = :$p )" 2>/dev/null | grep -q . || { echo $p; return; }
	done
}
