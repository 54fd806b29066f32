#!/bin/sh
# server_daemon_portable.sh: t/system/server_daemon.sh again, with the POSIX
# backend's portable file handles (server.handles = "portable", server/fh_index.h):
# files, reload, and handles that outlive a restart.
DAEMON_EXTRA_CONF=' handles = "portable";'
export DAEMON_EXTRA_CONF
exec bash "${top_srcdir:-.}/t/system/server_daemon.sh"
