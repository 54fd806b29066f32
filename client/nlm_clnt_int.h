/*
 * nlm_clnt_int.h: what the files of the client's lock manager share: the
 * client (struct nlmc), a blocked request's wait, the owner handle, and the
 * calls to the server that the reclaimer also makes. nlmc.call_lock guards the
 * connection (calls on it go out at once); nlmc.lock the waits, what is held and
 * the reclaimer's state. Neither is taken while the other is held.
 */
#ifndef NFSRDMA_NLM_CLNT_INT_H
#define NFSRDMA_NLM_CLNT_INT_H

#include <pthread.h>
#include <stdint.h>
#include <netinet/in.h>
#include <rpc/rpc.h>

#include "client/nlm_clnt.h"
#include "client/nlm_clnt_held.h"
#include "common/base/net.h"
#include "common/nfs/nlm_prot.h"

#define OH_LEN	       18 /* cookie (8), lock owner (8), callback port (2) */
#define RES_MAX	       16 /* GRANTED_RES answers waiting to go */
#define SRV_ADDRS      4  /* the server's addresses kept */
#define RES_COOKIE_MAX 32 /* a GRANTED_MSG's cookie we answer (Linux: 4) */

/* The answer to a server's GRANTED_MSG, sent as a GRANTED_RES call. */
struct nlmc_res {
	char cookie[RES_COOKIE_MAX];
	u_int len;
	nlm4_stats stat;
};

struct nlmc_wait {
	struct nlmc_wait *next;
	struct nfs3c_fh fh;
	uint64_t owner, off, len;
	int excl;
	int granted, interrupted;
	int calling; /* a LOCK of it is on its way: its answer decides (nlm_clnt_cb.c) */
	pthread_cond_t cond;
};

#define CB_MSG_MAX	4096  /* a call to the callback service */
#define CB_CONNS	8     /* TCP connections to it at once: the oldest goes */
#define CB_CONN_IDLE_MS 60000 /* one without a call that long is closed */
#define CB_PORT_TRIES	32    /* UDP ports tried for one free over TCP too */
/* A GRANTED forwarded to another client of this host has a header of
 * FWD_HDR bytes: FWD_MAGIC, the caller's IPv6 (or IPv4-mapped) address,
 * port, 2 spare bytes, scope id, and our address the call came to (the
 * answer goes out from it); then the call. */
#define FWD_HDR	     44
#define FWD_WAIT_MS  2000 /* a GRANTED passed to another mount: its answer awaited */
#define FWD_PER_CONN 4	  /* such answers awaited at once for one connection */

/* A GRANTED that came over a TCP connection, passed to another mount of
 * this host: its xid and cookie, that mount's port (0: none), and till when
 * its answer is awaited. */
struct nlmc_fwd {
	uint32_t xid;
	unsigned short port;
	u_int cookie_len;
	char cookie[RES_COOKIE_MAX];
	uint64_t until;
};

/* A TCP connection to the callback service: one record-marked call at a
 * time is gathered in buf. */
struct nlmc_cbconn {
	int fd; /* -1: free */
	struct sockaddr_storage peer;
	size_t have;
	uint64_t last_ms;
	struct nlmc_fwd fwd[FWD_PER_CONN]; /* answers to go on this connection */
	char buf[4 + CB_MSG_MAX];
};

/* The connection to the server's NLM: calls on it go out at once (one slow
 * call does not hold the others up); it lives while a call or nlmc->conn
 * holds it. */
struct nlmc_conn {
	struct rpc_clnt *rpc;
	unsigned port;
	unsigned refs; /* under call_lock */
};

struct nlmc {
	struct nlmc_params p;
	char host[256];	  /* the server */
	char caller[256]; /* our caller_name: this host's name */
	uint8_t cookie[8];
	int32_t state; /* our NSM state number */

	pthread_mutex_t call_lock; /* conn (calls on it run at once, each holding it) */
	struct nlmc_conn *conn;
	/* a connection being made (one at a time, call_lock let go meanwhile):
	 * the calls that need it wait for its end, and share its failure */
	int connecting;
	unsigned connects_failed;
	pthread_cond_t connect_end;
	int no_nlm_logged;
	uint32_t next_cookie;
	unsigned port_known; /* the NLM port last connected to (by the connecting thread) */
	/* the port last passed over for refusing lock calls, and whether the
	 * next connection is made for that, not for a broken one (under
	 * call_lock; nlm_clnt.c's pass_over) */
	unsigned port_refused;
	int port_passed_over;

	pthread_mutex_t lock; /* waiters, held, reclaim */
	struct nlmc_wait *waiters;
	unsigned nwaiters;
	struct nlmc_heldset held;
	int ever_connected, reconnected; /* under call_lock */
	int reclaim_wanted;		 /* SM_NOTIFY came */
	/* the server's addresses, as last connected (its GRANTED_MSG come
	 * from one of them) */
	struct sockaddr_storage srv[SRV_ADDRS];
	unsigned nsrv;
	/* GRANTED_RES to send (by the reclaimer's thread) */
	struct nlmc_res res[RES_MAX];
	unsigned nres;
	pthread_cond_t reclaim_cond;
	pthread_t reclaimer;
	int reclaimer_started;

	int cbfd, cbfamily; /* the callback socket: AF_INET6 (taking IPv4 too) or AF_INET */
	int cb_local;	    /* it tells datagrams sent to a loopback address (net_dgram_local) */
	unsigned short cbport;
	/* the same port over TCP (Linux's lockd calls back over the transport
	 * our calls came by): listening (-1: none), its connections, and the one
	 * whose call is being answered (NULL: answers go by UDP) */
	int cbtcp;
	uint64_t accept_pause_until; /* out of descriptors: accept nothing till then */
	struct nlmc_cbconn conns[CB_CONNS];
	struct nlmc_cbconn *reply_conn;
	pthread_t thread;
	int thread_started;
	int stop;
	int registered; /* with this host's rpcbind: REG_IPV4, REG_IPV6, REG_TCP4, REG_TCP6 */
};

#define REG_IPV4 1
#define REG_IPV6 2
#define REG_TCP4 4
#define REG_TCP6 8

/* Calls to the server (nlm_clnt.c). */
/* An RPC client for prog/vers at sa (IPv4 or IPv6) over TCP within
 * timeout_ms, or NULL. */
CLIENT *nlmc_tcp_client(const struct sockaddr_storage *sa, socklen_t salen, uint32_t prog,
			uint32_t vers, int timeout_ms);
/* One NLM call; 0, or -ENOLCK when the server's NLM cannot be reached. */
int nlmc_call(struct nlmc *n, const struct rpc_cred *cred, uint32_t proc, xdrproc_t xa, void *a,
	      xdrproc_t xr, void *r);
/* Let go of n's hold on the connection to the server's NLM, if any (under
 * call_lock, or at the end); the calls still on it keep it until they end. */
void nlmc_disconnect(struct nlmc *n);
/* A new call cookie: *c, which o names. */
void nlmc_set_cookie(struct nlmc *n, uint32_t *c, nlm4_netobj *o);
/* Fill alock for l (oh, OH_LEN bytes, is the caller's buffer). */
void nlmc_fill_alock(struct nlmc *n, const struct nlmc_lock *l, char *oh, nlm4_lock *a);

/* The callback service: its calls (nlm_clnt_cb.c). */
/* One datagram of len bytes in buf from from: a call to NLM, NSM or rpcbind
 * (GETPORT, GETADDR) for ourselves, or a GRANTED another client of this host forwards.
 * Answered, forwarded or dropped. The service's thread calls it for each
 * datagram, and for each call on a TCP connection with n->reply_conn set;
 * t/fuzz/fuzz_nlm_cb.c for each input. */
void nlmc_serve_datagram(struct nlmc *n, char *buf, size_t len, const struct net_dgram_peer *from);

/* The callback service: its sockets and thread (nlm_clnt_cbsock.c). */
/* Read what came on the callback connection c and serve each whole call:
 * one fragment each, of at most CB_MSG_MAX (a callback is small); anything
 * else closes it. The service's thread (and the fuzz target). */
void nlmc_conn_read(struct nlmc *n, struct nlmc_cbconn *c, uint64_t now);

/* Reclaim after the server restarts (nlm_clnt_reclaim.c). */
/* The server told us it restarted (SM_NOTIFY): reclaim. */
void nlmc_reclaim_want(struct nlmc *n);
/* Have the reclaimer's thread answer a GRANTED_MSG with GRANTED_RES r
 * (dropped when RES_MAX wait, or its cookie is longer than RES_COOKIE_MAX:
 * the server takes no answer as the client having the lock). */
void nlmc_res_queue(struct nlmc *n, const nlm4_res *r);
/* The reclaimer thread (arg: the struct nlmc), until nlmc.stop; it also
 * sends the GRANTED_RES answers. */
void *nlmc_reclaim_main(void *arg);

#endif
