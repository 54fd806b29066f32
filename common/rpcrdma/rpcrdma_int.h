/*
 * rpcrdma_int.h: internals shared by the RPC/RDMA server and client.
 *
 * Threads. Each endpoint (struct rr_ep: a device, its PD, a registration
 * strategy) has one event-loop thread. It owns every connection's CQ and CM fds:
 * it polls completions, calls the receive handler, runs completion contexts,
 * connects, disconnects and tears connections down. The server posts only from
 * it (and releases from its reaper thread); the client's callers post from
 * their own threads, and a client's waiting caller may take its connection's
 * CQ from the loop until its wait is over (rr_conn_poll_take; cq_lock keeps
 * the two from taking completions at once). No thread that takes on a
 * caller's identity may touch a verbs or rdma_cm object: Linux refuses the
 * write() that posts, arms, registers or connects from a thread whose
 * credentials changed after the device was opened (rxe and siw post through
 * such writes), and the soft provider refuses the same (osdep_cred_epoch).
 * The server's RPC workers therefore only decode, run the procedure and
 * encode, and ask registrations with RR_GET_ASYNC, which never register on
 * the caller's thread.
 *
 * Receive buffers. A received buffer belongs to the receive handler, which must
 * hand it back exactly once with rr_recv_repost() (which keeps it, unposted, when
 * the connection is dying). Every path does so, errors included;
 * t/system/rpcrdma_test checks that the receive queue never drains.
 *
 * Send queue. A connection has sq_depth send-queue slots (its QP has sq_room
 * more, for what registration posts itself: rr_reg_wr_room). rr_post() takes the
 * slots its chain needs, or queues the chain until completions give enough
 * back (it never waits), signals only the chain's last work request, and gets
 * the slots back when that completes. A chain posted by the thread that is
 * taking the connection's completions is held instead, with its slots taken,
 * and goes to the provider with the others held in the same batch of
 * completions once the batch is handled: on the server, one post for the
 * replies to several calls that the loop ran (one sendmsg on the soft
 * provider, one doorbell on rxe), not one each. (The client's completion
 * handlers post nothing.)
 *
 * Completions. A chain's context (struct rr_wr) gets exactly one call of its
 * done(), whatever happens: its completion, or, for a chain that never
 * reached the provider or that a failed post may or may not have queued, a
 * flush made up once the connection's QP is destroyed and its CQ drained
 * (so no real completion can follow). Until then the context must stay
 * allocated. A failed post fails the connection (counted in post_failures).
 */
#ifndef NFSRDMA_RPCRDMA_INT_H
#define NFSRDMA_RPCRDMA_INT_H

#include <pthread.h>

#include "common/base/clock.h"
#include "common/base/evloop.h"
#include "common/base/poller.h"
#include "rpcrdma.h"
#include "rpcrdma_hdr.h"
#include "rpcrdma_reg.h"
#include "common/verbs.h"

#define RR_RECV_SPARE 4	   /* receives beyond the credits, to answer an overrun */
#define RR_BATCH_MAX  160  /* work requests one chain may carry */
#define RR_HDR_ROOM   2048 /* room for a transport header in a Send buffer */

struct rr_conn;

/* The endpoint: one device and what every connection on it shares. */
struct rr_ep {
	struct rr_params p;
	struct vb_device *dev;
	struct vb_device_attr attr;
	struct vb_pd *pd;
	struct rr_reg_ctx *reg;
	unsigned conn_windows; /* fastreg: the windows one connection may hold */
	struct evloop *loop;
	struct rr_stats st;	/* endpoint-wide registration counters */
	struct rr_stats closed; /* counters of connections that have gone */
	pthread_mutex_t lock;	/* protects conns */
	pthread_cond_t cond;	/* a connection went away */
	struct rr_conn *conns;
	unsigned nconns;
};

/* A signalled work request's context: wr_id points at it. */
struct rr_wr {
	unsigned nwr; /* send-queue slots the chain used (0: rr_post_own's, or a
			 receive's, which has no done) */
	void (*done)(struct rr_conn *c, struct rr_wr *w, const struct vb_wc *wc);
	struct rr_wr *prev, *next; /* on the connection's owed list until done */
};

/* A chain waiting for send-queue slots: a copy of the caller's batch. */
struct rr_chain;

struct rr_recv {
	struct rr_wr wr; /* done is unused: receives go to conn->on_recv */
	struct rr_conn *conn;
	uint8_t *buf;
	uint32_t len;	      /* bytes received */
	uint32_t inv_rkey;    /* the key of ours its Send invalidated, or 0 */
	struct rr_recv *next; /* free list */
};

#define RR_HOLD_WR 64 /* work requests held for one post (see "Send queue") */

/* Chains held by the thread taking completions, linked in post order. */
struct rr_hold {
	struct vb_send_wr wr[RR_HOLD_WR];
	struct vb_sge sge[2 * RR_HOLD_WR];
	unsigned nwr, nsge, nchains;
};

/* A Send buffer: header and inline payload, registered with the connection. */
struct rr_send {
	uint8_t *buf;
	uint32_t cap;
	struct rr_send *next;
};

struct rr_conn {
	struct rr_ep *ep;
	struct vb_conn *vc;
	struct vb_cq *cq;
	pthread_mutex_t cq_lock; /* one thread at a time takes completions */
	struct rr_hold hold;	 /* its chains, slots taken, to post after the batch */
	struct evloop_io *cq_io; /* the loop's watch on the CQ's fd */
	struct rr_conn *next;	 /* in ep->conns */
	char peer[VB_NAME_MAX];
	struct sockaddr_storage peer_addr; /* a copy of vc's: vc goes before c does */
	socklen_t peer_addr_len;
	int is_server;

	uint32_t send_max;   /* longest message we may Send (peer's receive size) */
	uint32_t recv_max;   /* our receive buffers */
	uint32_t peer_send;  /* the longest message the peer may Send us (its send size) */
	int peer_remote_inv; /* it offered Remote Invalidation, and our device can send it */

	uint8_t *recv_area;
	struct vb_mr *recv_mr;
	struct rr_recv *recvs;
	unsigned nrecv;
	uint8_t *send_area;
	struct vb_mr *send_mr;
	struct rr_send *sends, *send_free;
	unsigned nsend;

	pthread_mutex_t lock; /* protects everything below */
	pthread_cond_t cond;  /* send buffers, state, posting back to 0 */
	unsigned sq_depth, sq_free;
	unsigned sq_room;	 /* QP entries beyond sq_depth: registration's (rr_reg_wr_room) */
	unsigned posted_recvs;	 /* receives the provider holds */
	unsigned windows_ending; /* fastreg: invalidations of its windows posted, not yet
				    completed (the windows are not back in the pool) */
	struct rr_wr *owed;	 /* contexts whose done() is still to come */
	struct rr_chain *queued, *queued_tail; /* chains waiting for sq slots, in order */
	unsigned posting; /* threads in a verbs call on vc (rr_conn_enter), chains held */
	int established;
	int dead;		 /* no new work; tearing down */
	int qp_gone;		 /* the QP is destroyed and its CQ drained */
	int cq_caller;		 /* a caller polls the CQ: the loop does not watch it */
	int cq_parked;		 /* nobody watches the CQ until the next take or watch */
	uint64_t spin_window_ns; /* the polling caller's adaptive spin (only the caller
				    holding the CQ, one at a time, touches it) */
	struct wakefd poke;	 /* tells the polling caller to look again (rfd -1: none yet) */
	unsigned refs;
	/* its calls to the loop, which cannot fail for want of memory */
	struct evloop_job dead_job, free_job, flush_job, ready_job;

	struct rr_stats st; /* this connection's counters */

	/* the side's handlers, called in the event loop (on_recv: or in a polling caller) */
	void (*on_recv)(struct rr_conn *c, struct rr_recv *r);
	void (*on_dead)(struct rr_conn *c);
	void (*on_free)(struct rr_conn *c);
	void *side; /* the server's or client's per-connection state */
};

/* A chain of work requests being built. */
struct rr_batch {
	struct vb_send_wr wr[RR_BATCH_MAX];
	struct vb_sge sge[RR_BATCH_MAX];
	unsigned n;
};

/* An endpoint on p's device; conn_windows: the memory windows (fastreg) one
 * connection may hold, 0 the pool (each connection's send queue has room
 * for them: rr_reg_wr_room). */
int rr_ep_create(const struct rr_params *p, unsigned remote_rights, unsigned conn_windows,
		 struct rr_ep **out);
void rr_ep_destroy(struct rr_ep *ep);

/* Set up a connection's queues and buffers on vc (not yet connected). */
int rr_conn_create(struct rr_ep *ep, struct vb_conn *vc, int is_server, struct rr_conn **out);
/* The connection is up: watch its CQ and CM fds in the loop. */
int rr_conn_start(struct rr_conn *c);
/* Queue job, whose run drops a reference of c's, holding one (none more
 * while it is queued). */
void rr_conn_post(struct rr_conn *c, struct evloop_job *job);
/* Set up the loop jobs of rpcrdma_post.c's (rr_conn_create). */
void rr_post_jobs_init(struct rr_conn *c);
/* Apply the peer's RFC 8797 private data (or its absence). */
void rr_conn_set_peer_private(struct rr_conn *c, const void *pdata, size_t len);
/* Encode our private data into buf (RPCRDMA_CM_PRIVATE_LEN bytes), offering
 * Remote Invalidation if remote_inv (the client, rr_reg_keys_per_exposure). */
void rr_conn_our_private(const struct rr_ep *ep, int remote_inv, uint8_t *buf);

void rr_conn_get(struct rr_conn *c);
void rr_conn_put(struct rr_conn *c);
/* Mark the connection broken and start tearing it down in the loop (any
 * thread; the disconnect happens there too). */
void rr_conn_fail(struct rr_conn *c, const char *why);
int rr_conn_is_dead(struct rr_conn *c);
/* In the loop, once the connection is dead: wait for the threads in a verbs
 * call on it, destroy the QP, consume its flushes and complete what is still
 * owed (rpcrdma_post.c). */
void rr_conn_quiesce(struct rr_conn *c);
/* A waiting caller's own polling (rpcrdma_post.c). take: the CQ is the
 * caller's until give (1), unless another caller has it or the connection is
 * dying (0); the loop stops watching its fd meanwhile. poll: wait at most ms
 * for the CQ's fd, then take what the CQ holds as the loop would (completion
 * handlers run in this thread). give: back to the loop, which sees at once
 * what came meanwhile; or, when *calls (the caller's count of calls in
 * flight, its own among them) is 1, to nobody, for a caller that
 * will take it again soon (each hand-over is a system call): the next take
 * has it at no cost, and watch, called by anyone about to wait for a
 * completion without polling, gives it to the loop then. The count is read
 * under the connection's lock, which watch takes too: a caller that counted
 * itself in before its watch is seen by one or the other. */
int rr_conn_poll_take(struct rr_conn *c);
/* poll: a look for the CQ's completions (or a poke) within ms, after a spin:
 * rdma.poll_spin_us, else, where a processor is spare for it
 * (rr_params.spin_spare), the connection's adapted window (clock.h), which
 * the caller that held the CQ for a whole wait adapts with poll_adapt (how
 * long it took, whether what it waited for came): for the reply a caller
 * waits for, not for each completion on the way (its Send's comes at once). */
void rr_conn_poll(struct rr_conn *c, int ms);
void rr_conn_poll_adapt(struct rr_conn *c, uint64_t took_ns, int came);
void rr_conn_poll_give(struct rr_conn *c, const unsigned *calls);
void rr_conn_watch(struct rr_conn *c);
/* Wake the polling caller, if any, to look again at what it waits for: what
 * another thread took from the CQ, or the connection's end (c->lock held). */
void rr_conn_poke(struct rr_conn *c);
/* The connection's vb_conn for a verbs call on it from a thread other than the
 * loop (binding a window), or NULL once it is dying; rr_conn_leave after the
 * call. The loop does not destroy the QP while a thread is inside. */
struct vb_conn *rr_conn_enter(struct rr_conn *c);
void rr_conn_leave(struct rr_conn *c);

int rr_recv_repost(struct rr_recv *r);

/* Send buffers: one per request being answered or call being made. get waits
 * for one (NULL once the connection is dead); tryget does not wait. */
struct rr_send *rr_send_get(struct rr_conn *c);
struct rr_send *rr_send_tryget(struct rr_conn *c);
void rr_send_put(struct rr_conn *c, struct rr_send *s);

/* Build chains. Each returns 0 or -E2BIG when the batch is full. */
int rr_batch_rdma(struct rr_batch *b, enum vb_wr_opcode op, void *addr, uint32_t len, uint32_t lkey,
		  uint64_t raddr, uint32_t rkey);
/* answered: the peer answers this Send (a call, a reply: the next call), so
 * it may hold its acknowledgement for the answer (VB_SEND_ANSWERED) */
int rr_batch_send(struct rr_batch *b, struct vb_sge *sge, int nsge, int answered);
/* Add RDMA Writes that move len bytes at addr into the segments of a chunk, in
 * order; written[i] gets the bytes that went into segment i. -ENOSPC if the
 * chunk is too small. */
int rr_batch_write_chunk(struct rr_batch *b, void *addr, uint32_t len, uint32_t lkey,
			 const struct rpcrdma_write_chunk *wc, uint32_t *written);
/* Add the RDMA Reads that pull read chunk ch of h, segment after segment, into
 * buf (registered, at least ch->length bytes): the one pull path of the
 * server's Read chunks and the client's exposed replies. */
int rr_batch_read_chunk(struct rr_batch *b, const struct rpcrdma_hdr *h,
			const struct rpcrdma_read_chunk *ch, const struct rr_buf *buf);
/* Post, through post(vc, arg), one signaled work request of registration's
 * own (rr_reg_wr_room: outside the send-queue count) whose wr_id is ctx:
 * ctx->done() then comes exactly once, from its completion or the flush made
 * up when the connection goes; the loop watches the CQ for it, whoever left
 * it unwatched. A failed post fails the connection (the provider may have
 * queued it anyway). vc: from rr_conn_enter. */
void rr_post_own(struct vb_conn *vc, struct rr_wr *ctx, int (*post)(struct vb_conn *vc, void *arg),
		 void *arg);
/* Post the chain, or queue it until the send queue has room (never waits);
 * its last work request is signalled with ctx, whose done() is then called
 * exactly once (see Completions above). 0, or -errno when ctx will be
 * completed with a flush because the chain could not be posted. */
int rr_post(struct rr_conn *c, struct rr_batch *b, struct rr_wr *ctx);

void rr_stat_add(uint64_t *v, int64_t d);
void rr_stats_print(const struct rr_stats *s, const char *prefix, FILE *f);

#endif
