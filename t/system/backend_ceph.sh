#!/bin/bash
# backend_ceph.sh: t/system/backend_ceph_test (the CephFS backend's procedures)
# against a throwaway cluster started here and stopped at the end. TAP from
# the C test; SKIP with the reason where Ceph is not installed.
set -u
. "$(dirname "$0")/../test-lib.sh"
. "$(dirname "$0")/ceph_lib.sh"

ceph_need
trap ceph_stop EXIT
ceph_start || { echo "1..1"; echo "not ok 1 - the mini cluster starts"; exit 1; }
"$top_builddir/t/system/backend_ceph_test"
