#!/bin/sh
# evloop_poll.sh: t/evloop_test again, with the portable poll() backend (common/base/poller.h).
NFSRDMA_POLLER=poll
export NFSRDMA_POLLER
exec "${top_builddir:-.}/t/evloop_test"
