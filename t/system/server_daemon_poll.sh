#!/bin/sh
# server_daemon_poll.sh: t/system/server_daemon.sh again, with nfsrdma-server's event
# loops and soft provider on the portable poll() backend (common/base/poller.h),
# and its TCP loops busy-polling (server.tcp_poll_spin_us) before they sleep.
NFSRDMA_POLLER=poll
DAEMON_EXTRA_CONF="
	tcp_poll_spin_us = 200;"
export NFSRDMA_POLLER DAEMON_EXTRA_CONF
exec bash "${top_srcdir:-.}/t/system/server_daemon.sh"
