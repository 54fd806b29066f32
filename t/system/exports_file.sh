#!/bin/bash
# exports_file.sh: server.exports_file (exports(5) syntax) through
# nfsrdma-server -t: a file using every option, comments and continuations
# passes; every kind of error is reported as FILE:LINE: PROBLEM, each on its
# line, with exit status 1; the libconfig exports and the file's may not
# export one directory twice; a missing file is named. TAP output.
set -u
B=${top_builddir:-.}
S=$B/server/nfsrdma-server
. "$(dirname "$0")/../test-lib.sh"

[ -x "$S" ] || { echo "Bail out! $S is not built"; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/exports_file.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/a" "$T/b" "$T/c"

conf() { # conf FILE EXPORTS-FILE [LIBCONFIG-EXPORTS]
	cat >"$1" <<EOF
server = {
	control_socket = "$T/ctl.sock";
	exports_file = "$2";
	${3:-}
};
EOF
}

plan 26

# --- a good file: every option, comments, continuations, quotes, defaults
cat >"$T/good.exports" <<EOF
# a comment line, then a blank one

$T/a  127.0.0.1(rw,sync,no_root_squash,insecure,no_subtree_check) \\
	10.0.0.0/255.0.0.0(ro,async,all_squash,anonuid=1000,anongid=1001,secure) # a comment
"$T/b" -rw,insecure 192.0.2.0/24(root_squash,no_all_squash,fsid=77,sec=sys,no_wdelay,hide) \\
	fe80::/10 *(ro)
$T/c localhost(rw,fsid=9)
$T/c ::1(ro,fsid=9)
EOF
conf "$T/good.conf" good.exports
"$S" -t -f "$T/good.conf" >"$T/out" 2>&1
ok $? "a file with every option, comments and continuations passes -t"
check "and -t says so" grep -qx "$T/good.conf: configuration ok" "$T/out"
grep -qx "$T/good.conf: configuration ok" "$T/out" || sed "s/^/# /" "$T/out"

# --- one error of each kind, each at its line
cat >"$T/bad.exports" <<EOF
$T/a *(rw,bogus)
$T/a host.invalid(rw)
$T/a *.example.com(ro) @group(rw)
$T/a (rw)
relative *(rw)
$T/a/../b *(rw)
$T/b *(subtree_check)
$T/b *(fsid=0)
$T/b *(anonuid=x) *(anongid=4294967295)
$T/b *(sec=krb5)
$T/b *(rw,,ro)
$T/b 10.1.1.1(rw
$T/c
$T/c 1.2.3.4/33(rw)
$T/c *(rw)x
"$T/c *(rw)
$T/c 192.0.2.1(fsid=3) 192.0.2.2(fsid=4)
$T/c *(crossmnt)
EOF
conf "$T/bad.conf" "$T/bad.exports"
"$S" -t -f "$T/bad.conf" >"$T/out" 2>&1
st=$?
check "a bad file fails -t with exit status 1" [ $st -eq 1 ]
F=$T/bad.exports
expect() { # expect DESCRIPTION LINE: exact line in the output
	grep -qxF -- "$2" "$T/out"
	ok $? "$1"
	grep -qxF -- "$2" "$T/out" || diag "wanted: $2"
}
expect "an unknown option" "$F:1: unknown export option 'bogus'"
expect "a host name that does not resolve" \
	"$F:2: client 'host.invalid': cannot resolve the host name: Name or service not known"
expect "a wildcard name" "$F:3: client '*.example.com': netgroups, wildcard names and gss/ are not supported: write an address, a prefix (10.0.0.0/8), a host name or *"
expect "a netgroup" "$F:3: client '@group': netgroups, wildcard names and gss/ are not supported: write an address, a prefix (10.0.0.0/8), a host name or *"
expect "options without a client" \
	"$F:4: options '(rw)' without a client: write *(rw) for anyone, and no space between a client and its '('"
expect "a relative path" "$F:5: \"relative\" is not an absolute path"
expect "a path with .." "$F:6: \"$T/a/../b\" has a \".\" or \"..\" component"
expect "an option that cannot be honoured" \
	"$F:7: export option 'subtree_check' cannot be honoured: handles are checked against the export's file system, not its subtree; write no_subtree_check"
expect "fsid=0" "$F:8: fsid=0 marks the NFSv4 pseudo-root, which NFSv3 has not: give a number 1..4294967295"
expect "a bad anonuid" "$F:9: anonuid=x: expected a user id 0..4294967294"
expect "an anongid out of range" "$F:9: anongid=4294967295: expected a group id 0..4294967294"
expect "a security flavour other than sys" "$F:10: sec=krb5: only sys (AUTH_SYS) is supported"
expect "an empty option" "$F:11: empty export option in '(rw,,ro)'"
expect "a missing ')'" "$F:12: missing ')' after '10.1.1.1(rw'"
expect "a path without clients" "$F:13: $T/c: no clients: write *(ro) to export it to anyone"
expect "a bad prefix" "$F:14: client '1.2.3.4/33' is not an address, a prefix (10.0.0.0/8, 192.168.0.0/255.255.255.0, fe80::/10), a host name or *"
expect "text after the ')'" "$F:15: '*(rw)x': nothing may follow the ')'"
expect "an unterminated quote" "$F:16: missing closing '\"'"
expect "two fsids for one export" "$F:17: $T/c: fsid=4 differs from fsid=3 given before"
expect "crossmnt is refused with its reason" \
	"$F:18: export option 'crossmnt' cannot be honoured: file systems mounted below an export are not exported with it"
check "nothing else is reported" [ "$(wc -l <"$T/out")" -eq 20 ]
[ "$(wc -l <"$T/out")" -eq 20 ] || sed 's/^/# /' "$T/out"

# --- the same directory in both places; a missing file
echo "$T/a 127.0.0.1(rw)" >"$T/dup.exports"
conf "$T/dup.conf" dup.exports "exports = ( { path = \"$T/a/\"; clients = [\"*\"]; } );"
"$S" -t -f "$T/dup.conf" >"$T/out" 2>&1
check "a directory exported by both the configuration and the file is refused" \
	grep -qxF "$T/dup.exports:1: $T/a is also exported by $T/dup.conf line 4 (server.exports)" "$T/out"
conf "$T/missing.conf" "$T/nothere"
"$S" -t -f "$T/missing.conf" >"$T/out" 2>&1
check "a missing exports file is named, at the setting's line" \
	grep -qxF "$T/missing.conf:3: server.exports_file: $T/nothere: cannot open: No such file or directory" "$T/out"
exit $T_FAILED
