/*
 * metrics.h: the server's counters in the Prometheus text format (version
 * 0.0.4), served on GET /metrics at server.metrics.listen (libmicrohttpd) and
 * printed by the control socket's "metrics" command. nfsrdma.conf(5) lists
 * the metrics.
 */
#ifndef NFSRDMA_SERVER_METRICS_H
#define NFSRDMA_SERVER_METRICS_H

#include <stdio.h>

struct nfsrdma_server;
struct metrics;

/* Every metric of the running server s, with # HELP and # TYPE. */
void metrics_print(struct nfsrdma_server *s, FILE *f);
/* Serve GET /metrics on listen ("ADDR:PORT") from a thread of its own. 0, or
 * -errno after logging why (-ENOTSUP: built without libmicrohttpd). */
int metrics_start(struct nfsrdma_server *s, const char *listen, struct metrics **out);
/* Stop serving and free; NULL is fine. */
void metrics_stop(struct metrics *m);

#endif
