#!/bin/bash
# cli.sh: every installed command and verb behaves like its neighbours in
# nfs-utils and rdma-core: --help prints usage on stdout and exits 0; --version
# prints "NAME VERSION"; a usage error (unknown short or long option, missing
# option argument, missing or stray operand) prints one line on stderr naming
# what is wrong and exits 2 (mount.nfsrdma: 1, mount(8)'s status for it); and
# each command has a man page that groff formats without a warning.
. "$(dirname "$0")/../test-lib.sh"
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
server=$top_builddir/server/nfsrdma-server
client=$top_builddir/nfsrdma-client
vbench=$top_builddir/nfsrdma-vbench
for b in "$server" "$client" "$vbench"; do
	[ -x "$b" ] || { echo "Bail out! $b is not built"; exit 1; }
done
version=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$top_builddir/config.h")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cli.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
ln -s "$client" "$tmp/mount.nfsrdma"

plan 55

# run CMD...: status in $st, stdout in $tmp/out, stderr in $tmp/err.
run() {
	"$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	st=$?
}
# details: what the last run did, for a failed check.
details() { diag "status $st, stdout: $(head -c 300 "$tmp/out"), stderr: $(head -c 300 "$tmp/err")"; }
# is_usage_error STATUS PATTERN DESCRIPTION: the last run was one.
is_usage_error() {
	[ "$st" -eq "$1" ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
		grep -qF -- "$2" "$tmp/err"
	ok $? "$3"
	[ "$st" -eq "$1" ] || details
}

# every command: NAME USAGE-STATUS MISSING-ARG-OPTION then the command line
commands=(
	"nfsrdma-server|2|-f|$server"
	"nfsrdma-client|2||$client"
	"nfsrdma-client mount|2|-o|$client mount"
	"nfsrdma-client umount|2||$client umount"
	"nfsrdma-client bench|2|-r|$client bench"
	"nfsrdma-client stats|2||$client stats"
	"mount.nfsrdma|1|-o|$tmp/mount.nfsrdma"
	"nfsrdma-vbench|2|--csv|$vbench"
)
for c in "${commands[@]}"; do
	IFS='|' read -r name ust missing cmd <<<"$c"
	read -ra argv <<<"$cmd"
	run "${argv[@]}" --help
	[ "$st" -eq 0 ] && grep -q '^usage: ' "$tmp/out" && [ ! -s "$tmp/err" ]
	ok $? "$name --help: usage on stdout, status 0"
	run "${argv[@]}" --version
	[ "$st" -eq 0 ] && [ "$(cat "$tmp/out")" = "${name%% *} $version" ]
	ok $? "$name --version prints '${name%% *} $version'"
	run "${argv[@]}" -Z
	is_usage_error "$ust" "'-Z'" "$name -Z: one line naming '-Z', status $ust"
	run "${argv[@]}" --no-such-option
	is_usage_error "$ust" "'--no-such-option'" "$name --no-such-option: one line, status $ust"
	if [ -n "$missing" ]; then
		run "${argv[@]}" "$missing"
		is_usage_error "$ust" "'$missing' needs an argument" \
			"$name $missing without its argument: one line, status $ust"
	fi
done

# operands
run "$server" stray
is_usage_error 2 "unexpected argument 'stray'" "nfsrdma-server with an operand"
run "$server" -s -r
is_usage_error 2 "do not go together" "nfsrdma-server with two of -t -D -s -e -r"
run "$server" -t -F
is_usage_error 2 "-F and -d are for serving" "nfsrdma-server -t with -F"
run "$client"
is_usage_error 2 "no verb" "nfsrdma-client without a verb"
run "$client" frobnicate
is_usage_error 2 "unknown verb 'frobnicate'" "nfsrdma-client with an unknown verb"
run "$client" mount host:/x
is_usage_error 2 "SERVER:/EXPORT and DIR are needed" "mount without DIR"
run "$tmp/mount.nfsrdma" host:/x "$tmp" extra
is_usage_error 1 "unexpected argument 'extra'" "mount.nfsrdma with a stray operand"
run "$client" umount
is_usage_error 2 "DIR is needed" "umount without DIR"
run "$client" bench
is_usage_error 2 "SERVER:/EXPORT is needed" "bench without SERVER:/EXPORT"
run "$client" bench -r 3k host:/x
is_usage_error 2 "-r 3k: record sizes are 4k..1m" "bench with a bad record size"
run "$vbench" --reps 0
is_usage_error 2 "--reps must be in" "nfsrdma-vbench with a bad --reps"

# man pages: one per command and per file format, clean under groff -ww
for m in man/nfsrdma-server.8 man/nfsrdma-client.8 man/mount.nfsrdma.8 man/nfsrdma-vbench.1 \
	man/nfsrdma.conf.5 man/nfsrdma.exports.5 man/nfsrdma-metrics.7; do
	if ! command -v groff >/dev/null; then
		skip "groff is not installed: $m not formatted"
		continue
	fi
	page=$top_srcdir/$m
	# a page that is one ".so man8/other.8" line stands for the other page
	so=$(sed -n 's/^\.so man[0-9]\/\(.*\)/\1/p' "$page" 2>/dev/null)
	[ -n "$so" ] && page=$top_srcdir/man/$so
	groff -man -Tutf8 -ww -z "$page" >"$tmp/warn" 2>&1
	[ -f "$top_srcdir/$m" ] && [ -f "$page" ] && [ ! -s "$tmp/warn" ]
	ok $? "$m formats without a warning"
	[ -s "$tmp/warn" ] && diag "$(head -5 "$tmp/warn")"
done
exit 0
