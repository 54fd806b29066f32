#!/bin/sh
# nfs3_stress_portable.sh: t/unit/nfs3_stress_test again, with portable file handles (server/fh_index.h).
NFSRDMA_TEST_HANDLES=portable
export NFSRDMA_TEST_HANDLES
exec "${top_builddir:-.}/t/unit/nfs3_stress_test"
