#!/bin/sh
# backend_fh_portable.sh: t/unit/backend_fh_test again, with portable file handles (server/fh_index.h).
NFSRDMA_TEST_HANDLES=portable
export NFSRDMA_TEST_HANDLES
exec "${top_builddir:-.}/t/unit/backend_fh_test"
