#!/bin/sh
# nfs3_stress_userspace.sh: t/unit/nfs3_stress_test again, with the callers' permissions
# checked in user space (server.identity = "userspace", server/backend_ident.c).
NFSRDMA_TEST_IDENTITY=userspace
export NFSRDMA_TEST_IDENTITY
exec "${top_builddir:-.}/t/unit/nfs3_stress_test"
