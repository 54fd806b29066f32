#!/bin/bash
# layers.sh: every include points down or within its own folder. The folder is
# the layer (see README's map):
#   common/base     utilities, nothing protocol
#   common          verbs.h, the interface the providers fill    > base
#   common/rpc      ONC RPC, its transports and integrity           > base
#   common/rpcrdma  RPC over RDMA                                   > rpc, verbs
#   common/nfs      NFSv3 and MOUNT, shared by client and server    > rpc
#   platform/<os>   per-OS code and providers                       > verbs
#   server, client  the two programs; never each other              > common
# An include is either a path from the top of the tree or the plain name of a
# header beside the file. And the client's programs do not carry the server's
# POSIX backend. TAP output: one line per folder, one for the client.
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top" || exit 1

# allowed FOLDER: the folders FOLDER's files may include from (besides itself)
allowed() {
	case $1 in
	common/base) echo "" ;;
	common) echo "common/base" ;;
	common/rpc) echo "common/base" ;;
	common/rpcrdma) echo "common/base common common/rpc" ;;
	common/nfs) echo "common/base common/rpc" ;;
	platform | platform/*) echo "common/base common" ;;
	server | client) echo "common/base common common/rpc common/rpcrdma common/nfs" ;;
	*) echo "?" ;;
	esac
}

folders="common/base common common/rpc common/rpcrdma common/nfs platform platform/ibverbs platform/linux
platform/illumos platform/posix platform/soft server client"
echo "1..$(($(echo $folders | wc -w) + 1))"
n=0
bad_total=0
for d in $folders; do
	n=$((n + 1))
	bad=""
	ok_dirs=" $d $(allowed "$d") "
	for f in "$d"/*.[ch]; do
		[ -f "$f" ] || continue
		while read -r inc; do
			case $inc in
			*/*) to=${inc%/*} ;;
			*)
				[ -f "$d/$inc" ] && continue
				bad="$bad $f:\"$inc\"(not beside it: give its path)"
				continue
				;;
			esac
			case "$ok_dirs" in
			*" $to "*) ;;
			*) bad="$bad $f:\"$inc\"" ;;
			esac
		done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
	done
	if [ -z "$bad" ]; then
		echo "ok $n - $d includes only from: $d $(allowed "$d")"
	else
		echo "not ok $n - $d includes from above or beside it:"
		for b in $bad; do echo "#   $b"; done
		bad_total=$((bad_total + 1))
	fi
done

n=$((n + 1))
client=${top_builddir:-.}/nfsrdma-client
if [ ! -x "$client" ]; then
	echo "ok $n # SKIP $client is not built"
elif ! command -v nm > /dev/null; then
	echo "ok $n # SKIP no nm"
else
	backend=$(nm "$client" | grep -cE ' [TtDdBb] (nfs_backend_|be_|nfs3_proc_|mount3_proc_)')
	inlib=$(ar t "${top_builddir:-.}/libnfsrdma.a" | grep -cE '^(backend|nfs3_proc|mount3_proc|export|fhcache)')
	if [ "$backend" -eq 0 ] && [ "$inlib" -eq 0 ]; then
		echo "ok $n - neither libnfsrdma.a nor nfsrdma-client holds the server's backend"
	else
		echo "not ok $n - the server's backend: $inlib objects in libnfsrdma.a, $backend symbols in nfsrdma-client"
		bad_total=$((bad_total + 1))
	fi
fi
exit $bad_total
