#!/bin/sh
# server_daemon_poll.sh: t/system/server_daemon.sh again, with nfsrdma-server's event
# loops and soft provider on the portable poll() backend (common/base/poller.h).
NFSRDMA_POLLER=poll
export NFSRDMA_POLLER
exec bash "${top_srcdir:-.}/t/system/server_daemon.sh"
