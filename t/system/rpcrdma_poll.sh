#!/bin/sh
# rpcrdma_poll.sh: t/system/rpcrdma_test again, with the portable poll() backend
# (common/base/poller.h), and the soft provider over loopback TCP instead of
# its local carrier (VB_SOFT_LOCAL_UNIX=0), which every other soft test uses.
NFSRDMA_POLLER=poll VB_SOFT_LOCAL_UNIX=0
export NFSRDMA_POLLER VB_SOFT_LOCAL_UNIX
exec "${top_builddir:-.}/t/system/rpcrdma_test"
