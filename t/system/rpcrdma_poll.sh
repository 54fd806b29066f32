#!/bin/sh
# rpcrdma_poll.sh: t/system/rpcrdma_test again, with the portable poll() backend (common/base/poller.h).
NFSRDMA_POLLER=poll
export NFSRDMA_POLLER
exec "${top_builddir:-.}/t/system/rpcrdma_test"
