/* rpc_tcp.h: RPC over TCP (RFC 5531 record marking), server listener and client. */
#ifndef NFSRDMA_RPC_TCP_H
#define NFSRDMA_RPC_TCP_H

#include "rpc.h"

struct rpc_tcp_params {
	size_t max_record;	   /* largest call record accepted; larger closes the connection */
	size_t max_reply;	   /* most room for a reply's header and inline results (a
				      call gets 64 KiB, more when its results need it) */
	unsigned max_inflight;	   /* calls per connection being served at once */
	unsigned send_deadline_ms; /* a reply that makes no progress this long drops the
				      connection (a client that stops reading cannot hold
				      workers); 0: wait for ever */
};

struct tcp_listener;

/* Serve srv's programs on TCP host:port (host NULL = any). */
int rpc_tcp_listen(struct rpc_server *srv, const char *host, const char *port,
		   const struct rpc_tcp_params *p, struct tcp_listener **out);
int rpc_tcp_port(const struct tcp_listener *l);
unsigned rpc_tcp_nconns(struct tcp_listener *l);
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
/* Write buf[0, len) as one record under wlock, splicing ddp's reduced items back
 * in (with padding) so bulk data goes out with writev instead of a copy. */
int rpc_rec_write(int fd, pthread_mutex_t *wlock, const uint8_t *buf, size_t len,
		  const struct rpc_ddp *ddp);
/* DDP encode hook for TCP: reduce large items for rpc_rec_write to splice. */
int rpc_rec_ddp_put(struct rpc_ddp *ddp, XDR *xdrs, void *data, uint32_t len);

#endif
