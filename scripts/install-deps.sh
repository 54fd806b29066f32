#!/bin/bash
# install-deps.sh: install what nfsrdma needs to build, test and benchmark on
# Debian 12 (and package it: make deb), non-interactively. Idempotent: installs only what is missing.
#   scripts/install-deps.sh          build + test dependencies
#   scripts/install-deps.sh --lab    also prepare ../shared/rdmalab (Soft-RoCE guest)
set -euo pipefail

PKGS=(
	build-essential autoconf automake pkg-config rpcsvc-proto
	libibverbs-dev librdmacm-dev rdma-core ibverbs-providers ibverbs-utils
	libtirpc-dev libconfig-dev libssl-dev liblmdb-dev libacl1-dev zlib1g-dev libfuse3-dev fuse3 libcmocka-dev
	fio libnfs-utils libnfs-dev curl gnuplot-nox clang clang-format libclang-rt-14-dev lld
	iproute2 procps psmisc rpcbind nfs-ganesha nfs-ganesha-vfs groff-base
	libsystemd-dev systemd libmicrohttpd-dev prometheus
	debhelper dpkg-dev fakeroot lintian
	linux-perf # profiles of the call path (BENCHMARKS.md, issue 12)
	# CephFS backend (libcephfs) and the throwaway cluster its tests start
	# (../shared/ceph/mini-cluster.sh)
	libcephfs-dev ceph-mon ceph-osd ceph-mds ceph-common uuid-runtime
)

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	echo "install-deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	# Never start the packages' services on this machine (rpcbind, ...).
	policy_added=""
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
		$SUDO chmod +x /usr/sbin/policy-rc.d
		policy_added=1
	fi
	$SUDO apt-get update -q
	$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
	[ -z "$policy_added" ] || $SUDO rm -f /usr/sbin/policy-rc.d
fi

if [ "${1:-}" = --lab ]; then
	lab=$(cd "$(dirname "$0")/../.." && pwd)/shared/rdmalab
	if [ -x "$lab/setup.sh" ]; then
		"$lab/setup.sh"
	else
		echo "install-deps: no rdmalab at $lab; lab tests will be skipped" >&2
	fi
fi
