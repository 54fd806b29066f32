#!/bin/sh
# config_check.sh: nfsrdma-server -t on the sample configuration (valid) and on a
# broken copy of it (a bad value, a syntax error, an unknown setting: all three
# reported as FILE:LINE: SETTING: PROBLEM); -D output is itself valid; -h; bad options.
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
server=$top_builddir/server/nfsrdma-server
sample=$top_srcdir/etc/nfsrdma.conf

echo "1..9"
n=0
# ok CONDITION-EXIT-STATUS DESCRIPTION [DETAILS]: one TAP line, details as comments.
ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		[ -z "${3:-}" ] || printf '%s\n' "$3" | sed 's/^/# /'
	fi
}

if [ ! -x "$server" ]; then
	echo "Bail out! $server is not built"
	exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/config_check.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# 1-2: the sample is valid.
"$server" -t -f "$sample" >"$tmp/out" 2>"$tmp/err"
ok $? "the sample configuration passes -t" "$(cat "$tmp/err")"
[ "$(cat "$tmp/err")" = "$sample: configuration ok" ] && [ ! -s "$tmp/out" ]
ok $? "-t says '$sample: configuration ok' and nothing else" "$(cat "$tmp/out" "$tmp/err")"

# 3-4: a copy with a bad value, a syntax error and an unknown setting.
bad=$tmp/bad.conf
sed -e 's/^\(\tcredits = \)128;/\10;/' \
    -e 's/^\(\trd_depth = \)8;/\1= 8;/' \
    -e 's/^\(\tthreads = 4;\)$/\1\n\tworkers = 8;/' "$sample" >"$bad"
l_credits=$(grep -n '^	credits = 0;$' "$bad" | cut -d: -f1)
l_depth=$(grep -n '^	rd_depth = = 8;$' "$bad" | cut -d: -f1)
l_workers=$(grep -n '^	workers = 8;$' "$bad" | cut -d: -f1)
if [ -z "$l_credits" ] || [ -z "$l_depth" ] || [ -z "$l_workers" ]; then
	echo "Bail out! the sample changed: cannot break it the expected way"
	exit 1
fi
"$server" -t -f "$bad" >"$tmp/out" 2>"$tmp/err"
ok $(($? != 1)) "-t on the broken copy exits 1" "$(cat "$tmp/err")"
cat >"$tmp/want" <<EOF
$bad:$l_credits: rdma.credits: 0 is out of range 1..4096
$bad:$l_depth: syntax: syntax error
$bad:$l_workers: server.workers: unknown setting
EOF
cmp -s "$tmp/want" "$tmp/err"
ok $? "all three errors are reported as FILE:LINE: SETTING: PROBLEM" \
	"$(diff "$tmp/want" "$tmp/err")"

# 5: what -D prints is a configuration that passes -t.
"$server" -D >"$tmp/defaults.conf" 2>"$tmp/err" &&
	"$server" -t -f "$tmp/defaults.conf" 2>>"$tmp/err" &&
	grep -q '^	credits = 128;$' "$tmp/defaults.conf"
ok $? "-D prints every default as a valid configuration" "$(cat "$tmp/err")"

# 6: a missing file.
"$server" -t -f "$tmp/missing.conf" 2>"$tmp/err"
st=$?
[ $st -eq 1 ] && [ "$(cat "$tmp/err")" = "$tmp/missing.conf: cannot open: No such file or directory" ]
ok $? "a missing file: exit 1 and 'FILE: cannot open: reason'" "status $st: $(cat "$tmp/err")"

# 7-9: options.
"$server" -h >"$tmp/out" 2>&1
st=$?
[ $st -eq 0 ] && grep -q '^usage: nfsrdma-server' "$tmp/out" && grep -q '/nfsrdma.conf)$' "$tmp/out"
ok $? "-h prints usage with the default file and exits 0" "status $st: $(cat "$tmp/out")"
"$server" -x >"$tmp/out" 2>&1
ok $(($? != 2)) "an unknown option exits 2" "$(cat "$tmp/out")"
"$server" -t -f "$sample" extra >"$tmp/out" 2>&1
ok $(($? != 2)) "a stray argument exits 2" "$(cat "$tmp/out")"
