#!/bin/bash
# build-deb.sh TARBALL OUTDIR: build the Debian packages (debian/) from a
# release tarball (make dist) in OUTDIR, away from the source tree; check that
# each .deb has its control fields and the files it must ship (dpkg-deb --info,
# dpkg -c), and run lintian on the .changes. Prints where the .deb files are
# and lintian's summary; fails on a build error, a missing file or a lintian
# error (warnings are listed, not fatal). `make deb` runs it.
set -euo pipefail
tarball=$(realpath "$1")
out=$2
fail=0
say() { echo "deb: $*"; }
bad() {
	echo "deb: FAIL: $*"
	fail=1
}

for tool in dpkg-buildpackage dh lintian; do
	command -v "$tool" >/dev/null ||
		{ say "$tool is missing (scripts/install-deps.sh installs debhelper, dpkg-dev, lintian)"; exit 1; }
done

# nfsrdma-0.1.0.tar.gz -> the orig tarball dpkg-source would want, and its tree
base=$(basename "$tarball" .tar.gz)
version=${base#nfsrdma-}
rm -rf "$out"
mkdir -p "$out"
cp "$tarball" "$out/nfsrdma_$version.orig.tar.gz"
tar -C "$out" -xzf "$tarball"
src=$out/$base
[ -d "$src/debian" ] || { say "$tarball has no debian/ (EXTRA_DIST)"; exit 1; }
debver=$(cd "$src" && dpkg-parsechangelog -S Version)
[ "${debver%-*}" = "$version" ] ||
	{ say "debian/changelog is at $debver, the tree at $version: add a changelog entry (dch -v $version-1)"; exit 1; }

# Every build dependency is one scripts/install-deps.sh installs.
deps=$(sed -n '/^PKGS=(/,/^)/p' "$src/scripts/install-deps.sh")
for p in $(cd "$src" && sed -n '/^Build-Depends:/,/^[A-Z]/p' debian/control |
	sed 's/^Build-Depends://; /^[A-Z]/d' | tr ',' '\n' | sed 's/[[(].*//; s/ //g; s/^debhelper-compat$/debhelper/'); do
	[ -z "$p" ] || grep -qw -- "$p" <<<"$deps" || bad "debian/control: $p is not in scripts/install-deps.sh"
done

# Run from make: its flags and command-line variables must not reach the
# package's own make (make deb TESTS=... would override the build's TESTS).
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
say "dpkg-buildpackage -b -us -uc -J in $src (log: $out/build.log)"
if ! (cd "$src" && dpkg-buildpackage -b -us -uc -J) >"$out/build.log" 2>&1; then
	tail -n 40 "$out/build.log"
	say "FAIL: the package build failed (see $out/build.log)"
	exit 1
fi
rm -rf "$src"

# What each package must ship, beside its copyright and changelog.
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
declare -A want=(
	[nfsrdma-common_all]="./etc/nfsrdma.conf ./usr/share/man/man5/nfsrdma.conf.5.gz"
	[nfsrdma-server_$arch]="./usr/sbin/nfsrdma-server ./etc/nfsrdma.exports
		./lib/systemd/system/nfsrdma-server.service ./usr/share/man/man8/nfsrdma-server.8.gz
		./usr/share/man/man5/nfsrdma.exports.5.gz ./usr/share/man/man7/nfsrdma-metrics.7.gz"
	[nfsrdma-client_$arch]="./usr/sbin/nfsrdma-client ./sbin/mount.nfsrdma
		./usr/bin/nfsrdma-vbench ./usr/share/man/man8/nfsrdma-client.8.gz
		./usr/share/man/man8/mount.nfsrdma.8.gz ./usr/share/man/man1/nfsrdma-vbench.1.gz"
)
declare -A conffiles=(
	[nfsrdma-common_all]="/etc/nfsrdma.conf"
	[nfsrdma-server_$arch]="/etc/nfsrdma.exports"
	[nfsrdma-client_$arch]=""
)
for pa in "${!want[@]}"; do
	deb=$out/${pa%_*}_${debver}_${pa#*_}.deb
	[ -f "$deb" ] || { bad "no $deb"; continue; }
	info=$(dpkg-deb --info "$deb")
	for field in Package Version Architecture Maintainer Description; do
		grep -q "^ $field: " <<<"$info" || bad "$deb: no $field in its control"
	done
	files=$(dpkg -c "$deb" | awk '{print $6}')
	for f in ${want[$pa]}; do
		grep -qxF "$f" <<<"$files" || bad "$deb does not ship $f"
	done
	for f in ${conffiles[$pa]}; do
		dpkg-deb --ctrl-tarfile "$deb" | tar -xOf - ./conffiles 2>/dev/null | grep -qxF "$f" ||
			bad "$deb: $f is not a conffile"
	done
	say "$deb: $(stat -c %s "$deb") bytes, $(grep -c . <<<"$files") entries"
done
# Not enabled (hence not started) on installation: see debian/rules.
server=$out/nfsrdma-server_${debver}_$arch.deb
if [ -f "$server" ]; then
	postinst=$(dpkg-deb --ctrl-tarfile "$server" | tar -xOf - ./postinst)
	# dh_installsystemd --no-enable: enable again only what was enabled
	grep -q "deb-systemd-helper debian-installed 'nfsrdma-server.service'" <<<"$postinst" ||
		bad "$server: its postinst enables nfsrdma-server.service on installation"
	grep -q "deb-systemd-invoke .*'nfsrdma-server.service'" <<<"$postinst" ||
		bad "$server: its postinst does not restart nfsrdma-server.service on upgrade"
fi

changes=$out/nfsrdma_${debver}_$arch.changes
# As root lintian says so first: not a finding.
lintian --tag-display-limit 0 "$changes" 2>&1 | grep -v 'running with root privileges' >"$out/lintian.log" || true
sed 's/^/deb: lintian: /' "$out/lintian.log"
errors=$(grep -c '^E: ' "$out/lintian.log" || true)
warnings=$(grep -c '^W: ' "$out/lintian.log" || true)
infos=$(grep -c '^I: ' "$out/lintian.log" || true)
say "lintian: $errors errors, $warnings warnings, $infos notes (log: $out/lintian.log)"
[ "$errors" -eq 0 ] || bad "lintian reports errors"
say "packages in $out:"
ls -l "$out"/*.deb | sed 's/^/deb:   /'
exit $fail
