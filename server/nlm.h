/*
 * nlm.h: the server's lock manager (NLM v4, program 100021) and status
 * monitor (NSM v1, program 100024), served on the same transports as NFS.
 *
 * Locks are held in the kernel on the exported files themselves: each lock
 * owner (client host, file, owner handle and svid) gets an open file
 * description of its own and takes open-file-description locks through it
 * (common/base/osdep_lock.h). See nlm.c for why that is sound and what it
 * costs. Blocked requests wait in a queue, not in threads; one thread (nlm)
 * retries them, expires them and makes the calls back to clients: GRANTED,
 * the _RES answers of the asynchronous procedures and, after a restart,
 * SM_NOTIFY to every client that held locks (recorded in a state directory).
 */
#ifndef NFSRDMA_NLM_H
#define NFSRDMA_NLM_H

#include <stdio.h>

struct nfs_backend;
struct rpc_server;
struct nlm;

struct nlm_params {
	unsigned grace_s;	      /* after start only reclaims are granted */
	unsigned clients_max;	      /* client hosts with state at once */
	unsigned owners_per_client;   /* lock owners (open descriptions) per client */
	unsigned locks_per_client;    /* lock ranges and shares per client */
	unsigned blocked_per_client;  /* blocked requests waiting per client */
	unsigned blocked_timeout_s;   /* a blocked request is dropped after this */
	unsigned callback_retries;    /* tries of a call back to a client */
	unsigned client_rpcbind_port; /* where clients' rpcbind listens (111) */
	const char *state_dir;	      /* NSM: monitored clients and our state number */
	const char *name;	      /* our name in SM_NOTIFY; NULL: the host name */
};

/* Set up the lock manager over be's exports, read the state directory, start
 * the nlm thread (which notifies the clients recorded there). 0 or -errno
 * after logging what is wrong. */
int nlm_create(const struct nlm_params *p, struct nfs_backend *be, struct nlm **out);
/* Add NLM v4 and NSM v1 to srv. */
int nlm_register(struct rpc_server *srv, struct nlm *n);
/* Stop the thread, close every lock owner (releasing its locks). NULL is
 * fine. The programs must no longer be called. */
void nlm_destroy(struct nlm *n);
/* What the lock manager holds now and has done since the start. */
struct nlm_stats {
	unsigned clients, owners, blocked; /* now */
	unsigned long long granted, denied, blocked_total, nolocks, grace_refused, callbacks_failed,
		reboots;
	int nsm_state;
};
void nlm_get_stats(struct nlm *n, struct nlm_stats *st);
/* The counters, one "name value" per line (nothing when n is NULL). */
void nlm_print_stats(struct nlm *n, FILE *f);

#endif
