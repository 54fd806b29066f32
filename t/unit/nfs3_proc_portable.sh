#!/bin/sh
# nfs3_proc_portable.sh: t/unit/nfs3_proc_test again, with portable file handles (server/fh_index.h).
NFSRDMA_TEST_HANDLES=portable
export NFSRDMA_TEST_HANDLES
exec "${top_builddir:-.}/t/unit/nfs3_proc_test"
