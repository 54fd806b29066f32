#!/bin/sh
# verbs_soft_cma.sh: the verbs conformance suite against the soft provider
# on the local carrier with its cross-memory copies of RDMA Writes turned on
# (VB_SOFT_CMA=1, platform/soft/soft_cma.c): every pair waits until both ends
# copy, and the cross_memory_* cases run.
VB_SOFT_CMA=1 VB_SOFT_RUN_ADDR=127.0.0.1 exec sh "$(dirname "$0")/verbs_soft_unix.sh"
