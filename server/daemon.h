/*
 * daemon.h: the running nfsrdma-server: exports (the backend), the RPC
 * workers, RPC/RDMA listeners on the configured provider, TCP and UDP
 * listeners, rpcbind registration and the control socket.
 */
#ifndef NFSRDMA_SERVER_DAEMON_H
#define NFSRDMA_SERVER_DAEMON_H

#include <pthread.h>
#include <stdio.h>

#include "common/base/config.h"
#include "common/rpc/integrity.h"

#define DAEMON_MAX_LISTEN 64 /* server.listen's most (config_table.c), RR_LISTEN_MAX */

struct nfs_backend;
struct rpc_server;
struct rr_server;
struct tcp_listener;
struct udp_listener;
struct ctl;
struct metrics;
struct nlm;

struct nfsrdma_server {
	struct nfsrdma_config cfg;
	struct integrity_key key;
	int have_key;
	struct nfs_backend *be;
	struct rpc_server *rpc;
	struct rr_server *rr;
	struct tcp_listener *tcp[DAEMON_MAX_LISTEN];
	struct udp_listener *udp[DAEMON_MAX_LISTEN];
	unsigned ntcp, nudp;
	int rpcbind_done;
	struct ctl *ctl;
	struct metrics *metrics; /* /metrics for Prometheus; NULL: off */
	struct nlm *nlm;	 /* the lock manager (NLM, NSM); NULL: off */
	int pidfile_written;
	pthread_mutex_t cfg_lock; /* the control socket reads cfg's exports as reload swaps them */
	pthread_mutex_t reload_lock; /* one reload at a time: SIGHUP or the control socket */
	int log_debug;		     /* -d: a reload keeps the debug log level */
};

/* Start serving cfg (which the server takes over). 0, or -errno after logging
 * what failed; everything started is stopped again. */
int daemon_start(struct nfsrdma_server *s, struct nfsrdma_config *cfg);
/* SIGHUP or the control socket's "reload": re-read path (and its exports
 * file); apply the log level and the exports. Transport settings need a
 * restart (said in the log when they changed). Problems are logged, and
 * copied to report unless it is NULL; the service manager hears RELOADING=1,
 * then READY=1. 0, or -errno with the running configuration kept. */
int daemon_reload(struct nfsrdma_server *s, const char *path, FILE *report);
/* Tell the service manager (sd_notify) the server is ready, and what it serves. */
void daemon_notify_ready(struct nfsrdma_server *s);
/* SIGTERM: stop taking calls, finish those in flight, release everything. */
void daemon_stop(struct nfsrdma_server *s);
/* The counters, one "name value" per line. */
void daemon_print_stats(struct nfsrdma_server *s, FILE *f);
/* The exports with each client's options, as exportfs -v shows them, then the
 * clients connected now, one "TRANSPORT ADDRESS:PORT" per line. */
void daemon_print_exports(struct nfsrdma_server *s, FILE *f);

#endif
