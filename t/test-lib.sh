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
diag() { echo "# $*"; }

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
