/*
 * rpcrdma_clnt.h: what the RPC/RDMA client's files share (rpcrdma_clnt.c: the
 * call, its completions and the connection; rpcrdma_clnt_chunks.c: encoding
 * the call with its chunks, and pulling and decoding the reply).
 */
#ifndef NFSRDMA_RPCRDMA_CLNT_H
#define NFSRDMA_RPCRDMA_CLNT_H

#include <semaphore.h>

#include "rpcrdma_int.h"

#define CALL_HDR_RESERVE                                                                           \
	(RPCRDMA_HDR_FIXED_LEN + 12 + (RPC_DDP_MAX_ITEMS + 1) * (8 + RPCRDMA_SEG_LEN) +            \
	 2 * (8 + RPCRDMA_SEG_LEN) + 16)
#define RNDUP4(x)     (((x) + 3u) & ~3u)
#define RR_PLACED_MAX (2 * RPC_DDP_MAX_ITEMS) /* a call's arguments and results */

struct rr_clnt;

struct cslot {
	uint32_t xid;
	struct cslot *next; /* on cl->slots while it waits for its reply; on
			       cl->kept once it is over (slot_over) */
	struct rr_clnt *cl;
	struct rpc_call *call;
	/* What the loop tells the caller: the reply (done, err, recv, rh,
	 * payload_off) and its own work requests' ends (send_busy, reads_busy,
	 * read_status), each under lock; the caller sleeps on wake. lock is
	 * taken after cl->lock, never before it. */
	pthread_mutex_t lock;
	sem_t wake;
	const int *waits; /* the flag the caller sleeps on, if it does (under lock) */
	int done, err;
	struct rr_recv *recv;	/* the reply's, once done */
	struct rpcrdma_hdr *rh; /* the reply's transport header */
	size_t payload_off;
	struct rpcrdma_hdr *h; /* the call's transport header */

	struct rr_buf *bufs[2 * RPC_DDP_MAX_ITEMS + 4];
	unsigned nbufs;
	/* descriptors of data exposed where it is, in the caller's region
	 * (rr_buf_in_region), so that the call allocates none */
	struct rr_buf placed[RR_PLACED_MAX];
	unsigned nplaced;
	struct rr_buf *wbuf; /* Write chunk target */
	struct rr_buf *rbuf; /* Reply chunk */
	struct rr_buf *pulled[RPCRDMA_MAX_READ_SEGS];
	struct rpcrdma_read_chunk rch[RPCRDMA_MAX_READ_SEGS];
	uint32_t nrch;

	struct rr_send *send;
	struct rr_wr send_wr;
	int send_busy; /* a Send of ours not yet completed */
	struct rr_wr read_wr;
	int reads_busy, read_status;
	int cq_held; /* the caller's thread has the CQ (poll_take), not the loop */
	/* last, so that a kept slot is cleared up to them: h's and rh's, which
	 * are set before they are read */
	struct rpcrdma_hdr h_store, rh_store;
};

struct rr_clnt {
	struct rpc_clnt base;
	struct rr_ep *ep;
	struct rr_conn *conn;
	pthread_mutex_t lock; /* protects slots, granted, outstanding (changed with
			       * atomics, so poll_until may look without it) */
	pthread_cond_t cond;  /* a credit came free */
	struct cslot *slots;
	struct cslot *kept; /* slots of calls that ended, for the next (at most credits) */
	unsigned nkept;
	struct rpcrdma_hdr stray; /* a reply's to no call (clnt_on_recv, one at a time) */
	unsigned granted, outstanding;
	int chunk_refused; /* ERR_CHUNK was said (once) */
};

struct clnt_ddp {
	struct rpc_ddp base;
	struct cslot *s;
	size_t cap;	  /* encoding: room for the inline call */
	int force_chunks; /* encoding: every bulk item to a Read chunk */
	int err;	  /* encoding: why a bulk item could not be exposed */
	uint32_t reduced; /* padded bytes reduced so far (positions) */
	unsigned wused;	  /* decoding: Write chunks consumed */
};

/* rpcrdma_clnt.c: wait until *busy (under s->lock) is 0. If that takes more
 * than the call's timeout, the connection is failed (`what` says why) and the
 * wait goes on for the flush, which teardown guarantees: -ETIMEDOUT then. */
int rrc_slot_wait(struct cslot *s, const int *busy, const char *what);
/* The call's timeout in milliseconds. */
int rrc_timeout_ms(const struct cslot *s);

/* rpcrdma_clnt_chunks.c, in the caller's thread */
extern const struct rpc_ddp_ops rrc_ddp_ops;
/* Encode the call; returns its inline length, or -errno. Sets h->proc. */
int rrc_encode_call(struct cslot *s, struct clnt_ddp *cd);
/* Read-Write mode: chunks for the results. */
int rrc_offer_chunks(struct cslot *s);
/* Read-Read mode: pull the chunks the server exposed. */
int rrc_pull_exposed(struct cslot *s);
/* Decode the RPC reply wherever it is: inline, in our Reply chunk, or pulled. */
int rrc_decode_reply(struct cslot *s);

#endif
