#!/bin/sh
# verbs_soft_nocma.sh: the verbs conformance suite against the soft provider
# on the local carrier with its cross-memory copies of RDMA Writes turned off
# (VB_SOFT_CMA=0, platform/soft/soft_cma.c), so that large Writes go through
# the AF_UNIX socket as they do where the kernel refuses the copies.
VB_SOFT_CMA=0 VB_SOFT_RUN_ADDR=127.0.0.1 exec sh "$(dirname "$0")/verbs_soft_unix.sh"
