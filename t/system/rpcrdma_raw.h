/* rpcrdma_raw.h: a hand-driven RPC/RDMA peer on the soft provider, for the
 * tests that play a hostile client against our server or a hostile server
 * against our client: it sends and receives whatever bytes a test makes. */
#ifndef NFSRDMA_T_RPCRDMA_RAW_H
#define NFSRDMA_T_RPCRDMA_RAW_H

#include <stddef.h>
#include <stdint.h>

#include "common/rpc/rpc.h"
#include "common/verbs.h"

#define RAW_BUF	  8192
#define RAW_NRECV 40
#define RAW_DATA  (4u << 20) /* exposed data area */
#define RAW_TMO	  5000

struct raw {
	struct vb_device *dev;
	struct vb_pd *pd;
	struct vb_cq *cq;
	struct vb_conn *vc;
	struct vb_listener *l; /* raw_listen's */
	uint8_t *area, *data;
	struct vb_mr *mr, *data_mr;
	int ready[RAW_NRECV * 2]; /* received buffer indexes, FIFO */
	uint32_t ready_len[RAW_NRECV * 2];
	unsigned rhead, rtail;
	int sends_done, reads_done, broken;
	struct rpc_clnt clnt; /* for rpc_encode_call's credential */
	uint32_t xid;
};

/* Work request ids of the raw peer's Sends and RDMA Reads. */
#define RAW_WR_SEND 1u
#define RAW_WR_READ 2u

/* Connect to the RPC/RDMA server at 127.0.0.1:port (asserts it is established). */
void raw_open(struct raw *r, const char *port);
/* Listen on 127.0.0.1:port, for raw_accept. */
void raw_listen(struct raw *r, const char *port);
/* Accept the next connection on the listener (within RAW_TMO). */
void raw_accept(struct raw *r);
void raw_close(struct raw *r);
/* Take completions for up to ms milliseconds or until one arrives. */
void raw_pump(struct raw *r, int ms);
/* Send len bytes of msg and wait for the Send's completion. */
void raw_send(struct raw *r, const void *msg, size_t len);
/* Post a Send of the len bytes at r->data + off without waiting for it to
 * complete (the bytes must stay until it does). */
void raw_post(struct raw *r, size_t off, size_t len);
/* Wait up to ms for the next received message; copies it out and reposts.
 * 0 bytes on timeout. */
size_t raw_recv(struct raw *r, uint8_t *out, int ms);
/* A message of n words (big-endian on the wire) in buf; its length. */
size_t raw_words(uint8_t *buf, const uint32_t *w, size_t n);

#endif
