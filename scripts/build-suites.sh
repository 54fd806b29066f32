#!/bin/bash
# build-suites.sh DIR: build copies of the third-party file-system test suites
# in ../shared/suites (Connectathon cthon04 and pjdfstest) under DIR, never in
# shared/ itself. Prints what it built; exits non-zero (with the reason) when
# the suites or their tools are missing. Idempotent: a built copy is kept.
#   DIR/cthon04      ./runtests -b|-g|-s -t TESTDIR (NFSTESTDIR)
#   DIR/pjdfstest    prove -r DIR/pjdfstest/tests, from inside the directory under test
set -euo pipefail
dir=${1:?usage: build-suites.sh DIR}
# called from make (make lab-suites): the caller's variables (TESTS=...) must
# not reach the suites' own makefiles, which use some of the same names
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
suites=$(cd "$(dirname "$0")/../.." && pwd)/shared/suites
[ -d "$suites/cthon04" ] && [ -d "$suites/pjdfstest" ] ||
	{ echo "build-suites: no suites at $suites" >&2; exit 1; }
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

if [ ! -x "$dir/cthon04/basic/test1" ]; then
	rm -rf "$dir/cthon04"
	cp -a "$suites/cthon04" "$dir/cthon04"
	# glibc has Sun RPC in libtirpc only
	make -C "$dir/cthon04" CC="gcc -w -I/usr/include/tirpc" LIBS="-ltirpc -lm" \
		> "$dir/cthon04.build.log" 2>&1 ||
		{ echo "build-suites: cthon04 did not build (see $dir/cthon04.build.log)" >&2; exit 1; }
fi
echo "cthon04: $dir/cthon04"

if [ ! -x "$dir/pjdfstest/pjdfstest" ]; then
	rm -rf "$dir/pjdfstest"
	cp -a "$suites/pjdfstest" "$dir/pjdfstest"
	(cd "$dir/pjdfstest" && autoreconf -ifs && ./configure && make) \
		> "$dir/pjdfstest.build.log" 2>&1 ||
		{ echo "build-suites: pjdfstest did not build (see $dir/pjdfstest.build.log)" >&2; exit 1; }
fi
echo "pjdfstest: $dir/pjdfstest"
