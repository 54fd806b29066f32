#!/bin/sh
# server_daemon_userspace.sh: t/system/server_daemon.sh again, the way an
# illumos server runs: callers' permissions checked in user space
# (server.identity = "userspace", server/backend_ident.c), portable file
# handles and the poll() event loop.
DAEMON_EXTRA_CONF=' identity = "userspace"; handles = "portable";'
NFSRDMA_POLLER=poll
export DAEMON_EXTRA_CONF NFSRDMA_POLLER
exec bash "${top_srcdir:-.}/t/system/server_daemon.sh"
