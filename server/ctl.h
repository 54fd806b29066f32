/*
 * ctl.h: the control socket: a Unix stream socket (mode 0600) on which the
 * running server answers one command per connection: "stats" (the counters,
 * one "name value" per line), "exports" (each export's clients with their
 * options, like exportfs -v, and the clients connected now), "metrics" (the
 * Prometheus text of GET /metrics) or "reload" (as
 * SIGHUP; the answer is "reloaded FILE", or the problems and "reload refused").
 */
#ifndef NFSRDMA_SERVER_CTL_H
#define NFSRDMA_SERVER_CTL_H

#include <stdio.h>

struct ctl;
typedef void (*ctl_handler)(const char *cmd, FILE *out, void *arg);

int ctl_start(const char *path, ctl_handler fn, void *arg, struct ctl **out);
void ctl_stop(struct ctl *c);
/* Client side: send cmd to the server at path and copy its answer to out. */
int ctl_query(const char *path, const char *cmd, FILE *out);

#endif
