/*
 * ctl.h: a control socket: a Unix stream socket on which a running daemon
 * answers one command per connection, from its own event loop thread. The
 * server's (mode 0600) answers "stats" (the counters, one "name value" per
 * line), "exports" (each export's clients with their options, like exportfs
 * -v, and the clients connected now), "metrics" (the Prometheus text of GET
 * /metrics) or "reload" (as SIGHUP; the answer is "reloaded FILE", or the
 * problems and "reload refused"); a client mount's answers "stats"
 * (nfsrdma-client stats).
 */
#ifndef NFSRDMA_CTL_H
#define NFSRDMA_CTL_H

#include <stdio.h>
#include <sys/types.h>

struct ctl;
typedef void (*ctl_handler)(const char *cmd, FILE *out, void *arg);

/* Listen on path, with the given mode: a stale socket there is replaced; a
 * socket another daemon answers on (-EADDRINUSE) or a file that is no socket
 * (-EEXIST) is left alone. ctl_stop removes the socket if it is still ours. */
int ctl_start(const char *path, mode_t mode, ctl_handler fn, void *arg, struct ctl **out);
/* 0 if ctl_start may take path: nothing there, or a socket left by a daemon
 * that is gone; else -EADDRINUSE, -EEXIST or another negative errno (logged).
 * A daemon asks before it does anything another one would see. */
int ctl_check_free(const char *path);
void ctl_stop(struct ctl *c);
/* Client side: send cmd to the server at path and copy its answer to out. */
int ctl_query(const char *path, const char *cmd, FILE *out);

#endif
