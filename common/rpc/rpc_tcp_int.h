/*
 * rpc_tcp_int.h: what the TCP server's listener (rpc_tcp.c) and its
 * connections (rpc_tcp_conn.c) share.
 *
 * Threads: an acceptor loop per listener; a fixed set of I/O loops per
 * listener own the connections (non-blocking sockets, each connection in one
 * loop); the rpc_server's workers run the calls. A worker never waits on a
 * peer: it writes its reply only if the socket takes it at once, else queues
 * it for the loop, which writes when the socket is writable.
 */
#ifndef NFSRDMA_RPC_TCP_INT_H
#define NFSRDMA_RPC_TCP_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "common/base/evloop.h"
#include "common/base/net.h"
#include "rpc.h"
#include "rpc_tcp.h"

#define TCP_TICK_MS 100 /* how often a loop looks at its connections' clocks */

struct tcp_conn;

/* One I/O loop and the connections it owns. */
struct tcp_loop {
	struct tcp_listener *l;
	struct evloop *ev;
	struct tcp_conn *conns; /* loop thread only (lnext/lprev) */
};

struct tcp_listener {
	struct rpc_server *srv;
	struct rpc_tcp_params p;
	int fd;
	struct evloop *acceptor;
	struct tcp_loop *loops;
	unsigned nloops, next_loop; /* next_loop: acceptor thread only */
	pthread_mutex_t lock;	    /* protects conns, nconns, nshed, every conn's shed */
	pthread_cond_t cond;
	struct tcp_conn *conns;
	unsigned nconns;
	unsigned nshed;		 /* of nconns, being closed to make room */
	unsigned backoff_ms;	 /* acceptor thread only */
	struct rpc_tcp_stats st; /* counters, atomic */
};

/* A call read from a connection, then its reply. */
struct tcp_req {
	struct work work;
	struct tcp_conn *conn;
	struct tcp_req *next; /* in the connection's send queue */
	struct rpc_xreq x;
	struct rpc_ddp res_ddp;
	uint8_t *call;
	void *bulk;
	size_t reserved;		   /* of the server's memory budget */
	uint32_t mark;			   /* the reply's record mark */
	struct iovec iov[RPC_REC_IOV_MAX]; /* the reply, from what is not yet out */
	struct iovec *iov_at;
	int iov_left;
};

struct tcp_conn {
	struct tcp_listener *l;
	struct tcp_loop *lp;
	struct tcp_conn *next;		/* in l->conns, under l->lock */
	struct tcp_conn *lnext, *lprev; /* in lp->conns, loop thread */
	int fd;
	struct sockaddr_storage peer;
	socklen_t peer_len;
	char peer_str[NET_ADDR_STRLEN];
	bool shed; /* under l->lock: closed to make room */

	/* loop thread only */
	struct evloop_io *io;
	unsigned want;	 /* what the loop waits for now */
	bool closed;	 /* taken out of the loop */
	uint8_t mark[4]; /* the record mark being read */
	unsigned mark_got;
	uint8_t *rec; /* the call record being read */
	size_t rec_len, frag_left;
	bool in_frag, last_frag;
	uint8_t *ahead;		     /* bytes read ahead (AHEAD), or NULL */
	size_t ahead_off, ahead_len; /* what of them is not yet taken */
	bool resume_queued;	     /* a kick will take them */
	uint64_t read_ns;	     /* bytes of an unfinished call last came */
	size_t reserved;	     /* memory budget held for the call being read */

	/* under lock */
	pthread_mutex_t lock;
	unsigned inflight;	      /* calls read whose replies are not yet out */
	unsigned refs;		      /* the loop's, one per call, one per queued kick */
	struct tcp_req *sq, *sq_tail; /* replies waiting for the socket, in order */
	size_t held;		      /* memory its calls hold (their reservations) */
	uint64_t sq_ns;		      /* the send queue last moved (or began) */
	uint64_t last_ns;	      /* a call last arrived or was answered */
	bool dead;		      /* broken: replies are dropped, the loop closes it */

	/* its calls to the loop, which cannot fail for want of memory */
	struct evloop_job kick_job, put_job, attach_job;
};

/* rpc_tcp_conn.c: start serving a connection accepted on l (acceptor thread);
 * the last reference gives it back to l (tcp_conn_gone). */
void tcp_conn_start(struct tcp_listener *l, int fd, const struct sockaddr_storage *ss,
		    socklen_t len);
/* A loop's periodic look at its connections (deadlines, idle timeout). */
void tcp_loop_tick(void *arg);
/* Since when c has had no call in flight (it last had one arrive or
 * answered), or 0 while it has. */
uint64_t tcp_conn_idle_since(struct tcp_conn *c);

/* rpc_tcp.c: the connection is closed and free to go: off l's list. */
void tcp_conn_gone(struct tcp_conn *c);

#endif
