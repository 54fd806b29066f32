#!/bin/sh
# evloop_poll.sh: t/unit/evloop_test again, with the portable poll() backend (common/base/poller.h).
NFSRDMA_POLLER=poll
export NFSRDMA_POLLER
exec "${top_builddir:-.}/t/unit/evloop_test"
