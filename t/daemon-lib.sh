# daemon-lib.sh: sourced by the daemon tests.

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
