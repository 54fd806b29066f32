#!/bin/bash
# check-illumos.sh [BUILDDIR]: cross-compile and link-check nfsrdma for illumos
# (x86_64-pc-solaris2.11) with ../shared/illumos/cc (clang + ld.lld against
# illumos headers and stub libraries built from illumos's mapfiles; see its
# README). Nothing built here can run: it shows that every file compiles
# against illumos's headers with -Werror and that every function the programs
# call exists in illumos's libraries. Builds what exists on illumos:
# nfsrdma-server, the libraries, nfsrdma-client (its bench; the FUSE mount needs
# libfuse3, which illumos lacks, and configure leaves it out) and
# nfsrdma-vbench. Exit 0 and a list of what was built, or the first failure.
# Exit 77 (and why) when clang or ld.lld is missing.
#
# OpenSSL (libcrypto), libconfig and LMDB are shipped by illumos distributions
# (OmniOS, OpenIndiana, pkgsrc), and zlib by illumos itself (libz), but none
# is in the sysroot. The code is compiled
# against Debian's headers of the same libraries (copied alone into the build
# directory, so no other Debian header is seen; OpenSSL's generated
# configuration.h is Debian's x86_64 one, which is LP64 as amd64 illumos is),
# and linked against stub libraries made here: after a first build that
# compiles everything (its links fail for want of these four libraries), the
# symbols the objects leave undefined are intersected with the dynamic symbols
# that Debian's real libcrypto.so.3, libconfig.so.9, liblmdb.so.0 and libz.so.1
# export, and each stub
# defines exactly those. That is sound as a check because a stub never
# defines a name the real library lacks: a call to a function that is not in
# the library (a typo, an API from a newer release, a macro taken for a
# function) stays undefined and fails the second, real link, exactly as it
# would on illumos; and every call was type-checked against the library's
# real header. What it cannot show is that an illumos distribution ships the
# same release of those libraries (OpenSSL 3, libconfig 1.7, LMDB 0.9, zlib
# 1.2 here).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$top/build/illumos}
ICC=${NFSRDMA_ILLUMOS_CC:-$(dirname "$top")/shared/illumos/cc}
LIBDIR=/usr/lib/x86_64-linux-gnu
say() { echo "check-illumos: $*"; }

[ -x "$ICC" ] || { say "SKIP: no illumos cc at $ICC"; exit 77; }
for t in clang ld.lld nm readelf; do
	command -v "$t" > /dev/null || { say "SKIP: $t is not installed (Debian: clang lld binutils)"; exit 77; }
done
for f in /usr/include/openssl/evp.h /usr/include/libconfig.h /usr/include/lmdb.h \
	/usr/include/zlib.h $LIBDIR/libcrypto.so.3 $LIBDIR/libconfig.so.9 $LIBDIR/liblmdb.so.0 \
	$LIBDIR/libz.so.1; do
	[ -e "$f" ] || { say "SKIP: $f is missing (Debian: libssl-dev libconfig-dev liblmdb-dev zlib1g-dev)"; exit 77; }
done

cd "$top"
[ -x configure ] && [ configure -nt configure.ac ] || ./autogen.sh > /dev/null
rm -rf "$B"
mkdir -p "$B/third/include" "$B/third/lib"
cp -r /usr/include/openssl "$B/third/include/"
cp /usr/include/x86_64-linux-gnu/openssl/*.h "$B/third/include/openssl/"
cp /usr/include/libconfig.h /usr/include/lmdb.h /usr/include/zlib.h /usr/include/zconf.h \
	"$B/third/include/"
inc="-I$B/third/include"
cd "$B"

# No pkg-config: nothing of Debian's may be found by accident (fuse3, cmocka,
# rdma-core); the four libraries are given outright.
say "configure --host=x86_64-pc-solaris2.11 CC=$ICC"
"$top/configure" --host=x86_64-pc-solaris2.11 CC="$ICC" PKG_CONFIG=/bin/false \
	--enable-werror --disable-dependency-tracking \
	LIBCONFIG_CFLAGS="$inc" LIBCONFIG_LIBS="-L$B/third/lib -lconfig" \
	CRYPTO_CFLAGS="$inc" CRYPTO_LIBS="-L$B/third/lib -lcrypto" \
	LMDB_CFLAGS="$inc" LMDB_LIBS="-L$B/third/lib -llmdb" \
	ZLIB_CFLAGS="$inc" ZLIB_LIBS="-L$B/third/lib -lz" > configure.log 2>&1 ||
	{ tail -n 30 configure.log; say "configure failed (see $B/configure.log)"; exit 1; }
sed -n '/configured$/,$p' configure.log

# Build 1: compile everything; the links fail for want of the four libraries.
say "compiling"
make -k -j"$(nproc)" > build1.log 2>&1 || true
diag='^[^ ]+:[0-9]+:[0-9]+: (warning|error):'
if grep -E "$diag" build1.log; then
	say "$(grep -cE "$diag" build1.log) compiler diagnostics (see $B/build1.log)"
	exit 1
fi

# Stubs: what the objects leave undefined and the real library exports.
find . -name '*.o' -print0 | xargs -0 nm -u --format=just-symbols | sort -u > undefined.txt
for lib in crypto:libcrypto.so.3 config:libconfig.so.9 lmdb:liblmdb.so.0 z:libz.so.1; do
	name=${lib%%:*} real=$LIBDIR/${lib#*:}
	nm -D --defined-only --format=posix "$real" | awk '{sub(/@.*/, "", $1); print $1, $2}' |
		sort -u > "exports-$name.txt"
	join undefined.txt "exports-$name.txt" > "uses-$name.txt" || true
	{
		echo "/* stub lib$name: the symbols nfsrdma uses that $real exports */"
		awk '$2 ~ /^[TtWwi]$/ {print "void " $1 "(void);\nvoid " $1 "(void) {}"}
			$2 ~ /^[DdBbVvRr]$/ {print "char " $1 "[64];"}' "uses-$name.txt"
	} > "third/lib$name.c"
	"$ICC" -shared -fPIC -w -Wl,-soname,"${lib#*:}" "third/lib$name.c" -o "third/lib/lib$name.so"
	say "stub lib$name: $(wc -l < "uses-$name.txt") symbols ($(tr '\n' ' ' < "uses-$name.txt" |
		awk '{for (i = 1; i <= NF; i += 2) printf "%s%s", (i > 1 ? " " : ""), $i}'))"
done

# Build 2: the real link, every undefined symbol an error.
say "linking"
if ! make -j"$(nproc)" > build2.log 2>&1; then
	grep -E 'error|undefined' build2.log | head -n 40
	say "build failed (see $B/build2.log)"
	exit 1
fi
if grep -E ': warning:' build2.log; then
	say "warnings (see $B/build2.log)"
	exit 1
fi

progs=$(make -s print-built-programs 2> /dev/null || true)
[ -n "$progs" ] || { say "no programs listed"; exit 1; }
for p in $progs; do
	[ -x "$p" ] || { say "$p was not built"; exit 1; }
	interp=$(readelf -l "$p" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
	needed=$(readelf -d "$p" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
	[ "$interp" = /usr/lib/amd64/ld.so.1 ] || { say "$p: interpreter '$interp', not illumos's"; exit 1; }
	say "built $p (interpreter $interp; needs ${needed% })"
done
for a in $(find . -name '*.a' | sort); do
	say "built $a ($(ar t "$a" | wc -l) objects)"
done
say "ok: 0 warnings, every symbol defined"
