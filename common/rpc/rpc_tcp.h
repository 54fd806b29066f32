/* rpc_tcp.h: RPC over TCP (RFC 5531 record marking), server listener and client. */
#ifndef NFSRDMA_RPC_TCP_H
#define NFSRDMA_RPC_TCP_H

#include "rpc.h"

struct rpc_tcp_params {
	size_t max_record;	   /* largest call record accepted; larger closes the connection */
	size_t max_reply;	   /* most room for a reply's header and inline results (a
				      call gets 64 KiB, more when its results need it) */
	unsigned max_inflight;	   /* calls per connection being served at once */
	unsigned send_deadline_ms; /* a reply, or a call begun, that makes no progress this
				      long drops the connection (a client that stops reading,
				      or stops half-way through a call, cannot hold a
				      thread); 0: wait for ever */
	unsigned max_conns;	   /* connections at once; past it the longest idle is shed
				      to make room, or the new one is refused; 0: no limit */
	unsigned max_conns_per_addr; /* connections from one address; past it the new one
					is refused; 0: no limit */
	unsigned idle_ms;	     /* a connection with no call in flight and none sent for
					this long is closed; 0: never */
	unsigned loops;		     /* I/O event loops serving the connections; 0: one per
					processor (at most 16) */
	size_t max_held;	     /* memory one connection's calls may hold (each counts
					its largest reply) before it is read no more; 0: no
					limit */
	unsigned spin_us;	     /* the loops busy-poll this long before sleeping */
	unsigned spin_max_us;	     /* else up to this long, adapted (evloop_set_spin_max) */
};

/* What a listener has done to protect itself, and its connections now. */
struct rpc_tcp_stats {
	unsigned conns;		 /* open now */
	uint64_t refused;	 /* new connections closed at once: a limit was reached */
	uint64_t shed;		 /* idle connections closed to make room for new ones */
	uint64_t idle_closed;	 /* closed after idle_ms without a call */
	uint64_t deadline_drops; /* closed: a call or a reply stalled past send_deadline_ms */
	uint64_t accept_errors;	 /* accept failed (out of descriptors or memory) */
};

struct tcp_listener;

/* Serve srv's programs on TCP host:port (host NULL = any). */
int rpc_tcp_listen(struct rpc_server *srv, const char *host, const char *port,
		   const struct rpc_tcp_params *p, struct tcp_listener **out);
int rpc_tcp_port(const struct tcp_listener *l);
unsigned rpc_tcp_nconns(struct tcp_listener *l);
void rpc_tcp_get_stats(struct tcp_listener *l, struct rpc_tcp_stats *st);
/* Called for each open connection with its peer's address; it runs under the
 * listener's lock, so it must neither block nor call back into the listener. */
typedef void (*rpc_peer_fn)(void *arg, const struct sockaddr *peer, socklen_t len);
void rpc_tcp_each_peer(struct tcp_listener *l, rpc_peer_fn fn, void *arg);
/* Stop accepting, close every connection after its in-flight calls, free. */
void rpc_tcp_stop(struct tcp_listener *l);

/* A client over TCP; calls from several threads go out concurrently. */
int rpc_tcp_clnt_create(const char *host, const char *port, int timeout_ms, size_t max_record,
			struct rpc_clnt **out);

/* ---- record marking, shared by both sides ---- */

#include <pthread.h>

/* Read one record (every fragment) into a malloc'd buffer of at most max bytes;
 * -EMSGSIZE past max, -ECONNRESET at end of stream. */
int rpc_rec_read(int fd, size_t max, uint8_t **out, size_t *outlen);
/* The record for buf[0, len) with ddp's reduced items spliced back in (with
 * padding), as an iovec array that points into buf, the items and *mark:
 * returns the iovec count, or -EMSGSIZE. */
#define RPC_REC_IOV_MAX (2 + 3 * RPC_DDP_MAX_ITEMS)
struct iovec;
int rpc_rec_iov(const uint8_t *buf, size_t len, const struct rpc_ddp *ddp, uint32_t *mark,
		struct iovec iov[RPC_REC_IOV_MAX]);
/* Write buf[0, len) as one record under wlock, splicing ddp's reduced items back
 * in (with padding) so bulk data goes out with writev instead of a copy. */
int rpc_rec_write(int fd, pthread_mutex_t *wlock, const uint8_t *buf, size_t len,
		  const struct rpc_ddp *ddp);
/* DDP encode hook for TCP: reduce large items for rpc_rec_write to splice. */
int rpc_rec_ddp_put(struct rpc_ddp *ddp, XDR *xdrs, void *data, uint32_t len);

#endif
