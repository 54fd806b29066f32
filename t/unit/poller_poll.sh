#!/bin/sh
# poller_poll.sh: t/unit/poller_test again, with the portable poll() backend (common/base/poller.h).
NFSRDMA_POLLER=poll
export NFSRDMA_POLLER
exec "${top_builddir:-.}/t/unit/poller_test"
