#!/bin/sh
# verbs_soft_tcp.sh: the verbs conformance suite against the soft provider
# over loopback TCP: the local carrier (platform/soft/soft_local.c) off.
VB_SOFT_LOCAL_UNIX=0 VB_SOFT_RUN_ADDR=127.0.0.1 exec sh "$(dirname "$0")/verbs_soft_unix.sh"
