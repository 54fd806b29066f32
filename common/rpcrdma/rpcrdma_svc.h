/*
 * rpcrdma_svc.h: what the RPC/RDMA server's files share (rpcrdma_svc.c: the
 * request's life, the event loop's side and the interface; rpcrdma_svc_call.c:
 * from a received call to the worker and back; rpcrdma_svc_reply.c: answers,
 * RDMA Writes, Read-Read exposure). The thread each function runs on is in
 * its comment; see rpcrdma_svc.c for a call's whole life.
 */
#ifndef NFSRDMA_RPCRDMA_SVC_H
#define NFSRDMA_RPCRDMA_SVC_H

#include "rpcrdma_int.h"

#define RR_RR_MIN	1024 /* Read-Read: bulk results smaller than this go inline */
#define TICK_MS		100  /* deadlines and the memory budget are checked this often */
#define RQ_KEPT_IDLE_MS 2000 /* a connection without calls this long frees its kept requests */
#define SREQ_MAX_BUFS	(RPCRDMA_MAX_READ_SEGS + 8)
#define MAX_REPLY(p)	((size_t)(p)->max_io + 65536)
#define RNDUP4(x)	(((x) + 3u) & ~3u)

struct rr_server;
struct rr_sreq;

/* The server's per-connection state; fields under conn->lock. */
struct svc_conn {
	struct rr_server *srv;
	unsigned limit;	  /* most credits we grant now */
	unsigned grant;	  /* last grant sent */
	unsigned ceiling; /* calls active beyond this are an overrun */
	/* replies sent since the ceiling was last set, and their highest grant */
	unsigned window, window_max;
	unsigned active;
	size_t held;			     /* registered bytes its requests hold */
	size_t exposed;			     /* bytes exposed (or reserved) to the peer now */
	unsigned exposed_keys;		     /* and the keys (windows) its replies hold
						(with conn->windows_ending, its windows) */
	unsigned exp_waiting;		     /* replies parked for room to expose */
	struct rr_sreq *exp_head, *exp_tail; /* awaiting RDMA_DONE, oldest first */
	/* replies waiting for room to expose, oldest first: parked on the
	 * connection, not on a worker, so that a client that holds its bound
	 * (sends no RDMA_DONE) holds no worker of the server's */
	struct rr_sreq *park_head, *park_tail;
	struct evloop_job unpark_job; /* rrs_unpark_later's */
	/* on the server's queue of key waiters (under srv->lock): its oldest
	 * parked reply, keys_rq, waits for memory windows, which any connection
	 * may free */
	struct rr_conn *keys_next;
	struct rr_sreq *keys_rq;
	/* loop only: requests waiting for a Send buffer, oldest first */
	struct rr_sreq *send_wait, *send_wait_tail;
	/* loop only: requests waiting for the device (their chunks' RDMA Reads, or
	 * their reply's Send), oldest first; each has op_deadline_ms */
	struct rr_sreq *dev_head, *dev_tail;
	/* loop only: an RDMA_NOMSG call has no inline header to check before its
	 * pull, so a connection pulls one such call at a time; the rest wait */
	int nomsg_pulling;
	struct rr_sreq *nomsg_wait, *nomsg_wait_tail;
	struct sockaddr_storage peer_addr; /* for the per-address limit (len 0: unknown) */
	socklen_t peer_addr_len;
	uint64_t last_ns; /* a call last arrived (or the connection began) */
	/* requests whose calls ended, kept for the next ones (at most credits),
	 * so that a call allocates nothing; freed when no call has come for
	 * RQ_KEPT_IDLE_MS (the tick), even while one runs long: it needs none */
	struct rr_sreq *rq_free;
	unsigned rq_nfree;
};

/* A bulk result item moved by RDMA. */
struct rr_item {
	void *data;
	uint32_t len;
	int wchunk;	   /* Write chunk index, or -1: exposed (Read-Read) */
	uint32_t pos_full; /* Read-Read: its position in the full reply stream */
	struct rr_buf *buf;
	uint32_t written[RPCRDMA_MAX_CHUNK_SEGS];
};

struct svc_ddp {
	struct rpc_ddp base;
	struct rr_sreq *rq;
};

struct rr_sreq {
	struct work work;
	struct rr_sreq *free_next; /* kept on svc_conn.rq_free (rq_keep) */
	struct rr_server *srv;
	struct rr_conn *conn;
	struct rr_recv *recv; /* until reposted */
	int decode_rc;
	int counted; /* counted in svc_conn.active */
	int overrun;
	size_t payload_off;
	struct rpcrdma_hdr hdr;

	struct rpcrdma_read_chunk rch[RPCRDMA_MAX_READ_SEGS];
	uint32_t nrch;
	struct rr_buf *chunk_buf[RPCRDMA_MAX_READ_SEGS];
	uint8_t chunk_used[RPCRDMA_MAX_READ_SEGS];
	uint32_t args_reduced; /* padded bytes of chunks spliced in so far */
	uint64_t pulled;       /* bytes the Read chunks hold */

	struct rr_buf *bufs[SREQ_MAX_BUFS];
	unsigned nbufs;
	size_t held;
	struct rr_buf *reply_buf;
	uint32_t reply_written[RPCRDMA_MAX_CHUNK_SEGS];
	struct rr_send *send;
	void (*with_send)(struct rr_sreq *rq); /* what runs once it has a Send buffer */
	struct rr_sreq *send_wait_next;
	struct rr_sreq *nomsg_next; /* waiting for the connection's RDMA_NOMSG pull */
	int nomsg_pull;		    /* it is the connection's RDMA_NOMSG pull */
	int answer_rc;		    /* for rrs_answer_error, once it has a Send buffer */

	struct rpc_xreq x;
	struct svc_ddp args_ddp, res_ddp;
	struct rr_item items[RPC_DDP_MAX_ITEMS];
	int dispatched;
	size_t reserve;	    /* room for the reply's transport header */
	int long_reply;	    /* the reply goes into the Reply chunk or is exposed */
	int run_rc;	    /* the worker's outcome */
	size_t exp_bytes;   /* Read-Read: bytes reserved (then exposed) */
	unsigned exp_keys;  /* and keys reserved, not yet used (rr_reg_keys_reserve) */
	size_t park_bytes;  /* parked: the bytes it waits to reserve */
	unsigned park_keys; /* and the keys (0 once it has them or keys_rc says) */
	unsigned room_keys; /* the keys it takes of its connection's windows_max
			       (counted in exposed_keys while exp_bytes is) */
	int keys_rc;	    /* -E2BIG: the keys it needs are more than there are */
	int keys_waited;    /* it waited for them (counted in window_waits) */
	int exposing;	    /* they are exposed, on the connection's list */
	struct rr_sreq *park_next;
	struct evloop_job reply_job; /* the worker's hand-back to the loop (rrs_reply) */

	struct rr_wr read_wr;
	struct rr_wr send_wr;
	struct rr_sreq *dev_prev, *dev_next; /* on dev_head's list while on_dev */
	int on_dev;
	uint64_t dev_deadline_ns;
	unsigned pending; /* send completion, exposure end: release at 0 */
	uint64_t deadline_ns;
	struct rr_sreq *exp_next;
	struct work reap; /* rrs_release on the reaper queue */
};

#define RR_LISTEN_MAX 64 /* addresses one server listens on (server.listen) */

/* One listening address of a server: the event loop's argument for it. */
struct rr_listen {
	struct rr_server *srv;
	struct vb_listener *l;
	struct evloop_job add_job; /* rr_server_listen's call to the loop */
};

struct rr_server {
	struct rr_ep *ep;
	struct rpc_server *rpc;
	struct rr_listen listen[RR_LISTEN_MAX]; /* rr_server_listen's, in order */
	unsigned nlisten;
	struct evloop_timer *timer;
	pthread_mutex_t lock; /* protects inflight, stopping, the keys queue */
	pthread_cond_t cond;
	unsigned inflight;
	int stopping;
	/* connections whose parked reply waits for keys (svc_conn.keys_next),
	 * first come first served: whoever frees keys gives them to the first
	 * (rrs_keys_freed), and nobody takes keys while one waits */
	struct rr_conn *keys_waiting, *keys_last;
	unsigned windows_max;	    /* keys one connection's replies may hold (rr_params') */
	struct workq *reaper;	    /* releases that deregister, off the event loop */
	struct vb_mr *exposed;	    /* rr_server_expose's, until destroy */
	struct evloop_job stop_job; /* rr_server_destroy's call to the loop */
};

/* How a buffer of rq's is registered: at once on the loop (rq->x.nowait),
 * overlapping the procedure on a worker. */
static inline unsigned rrs_get_how(const struct rr_sreq *rq)
{
	return rq->x.nowait ? RR_GET_NOWAIT : RR_GET_ASYNC;
}

static inline int rrs_rr_possible(const struct rr_sreq *rq)
{
	return (rq->srv->ep->p.modes & RR_MODE_READ_READ) && rq->hdr.nwrites == 0;
}

/* rpcrdma_svc_admit.c (loop): whether a connection from vc's address may
 * come in (an idle one may be closed to make room); whether c has been idle
 * past idle_ms (closed if so). */
int rrs_admit(struct rr_server *srv, struct vb_conn *vc);
void rrs_idle_check(struct rr_conn *c, uint64_t now);

/* rpcrdma_svc.c */
void rrs_with_send(struct rr_sreq *rq, void (*step)(struct rr_sreq *rq));
/* rq starts (or stops) waiting for the device: its RDMA Reads, or its Send. */
void rrs_dev_wait(struct rr_sreq *rq);
void rrs_dev_done(struct rr_sreq *rq);
void rrs_send_put(struct rr_sreq *rq);
void rrs_release(struct rr_sreq *rq);
void rrs_unpend(struct rr_sreq *rq);
struct rr_buf *rrs_buf_get(struct rr_sreq *rq, size_t len, unsigned flags);
struct rr_buf *rrs_buf_find(struct rr_sreq *rq, const void *data, size_t len);
void *rrs_get_buf(struct rpc_req *req, size_t len);

/* rpcrdma_svc_call.c */
void rrs_start(struct rr_sreq *rq);
/* rq's RDMA_NOMSG pull is over (if it had one): the next waiting may start. */
void rrs_nomsg_done(struct rr_sreq *rq);
void rrs_read_done(struct rr_conn *c, struct rr_wr *w, const struct vb_wc *wc);
void rrs_work(struct work *w);
/* Loop: the worker is done with rq (its outcome in run_rc); answer it, park
 * it, or let it go. */
void rrs_reply(void *arg);

/* rpcrdma_svc_reply.c */
void rrs_answer_error(struct rr_sreq *rq, int rc);
void rrs_send_done(struct rr_conn *c, struct rr_wr *w, const struct vb_wc *wc);
size_t rrs_hdr_reserve(const struct rr_sreq *rq);
int rrs_prepare_reply(struct rr_sreq *rq);
/* Whether the loop may expose bytes more of rq's connection now (Read-Read),
 * and a memory window more where exposures take them:
 * a call asks before it takes a buffer, so that one that must go to a worker
 * has registered nothing on the loop. */
int rrs_loop_may_expose(struct rr_sreq *rq, size_t bytes);
int rrs_post_reply(struct rr_sreq *rq);
/* End rq's exposure (RDMA_DONE, its deadline, the connection's end). It is
 * one of the two things rq waits for, with its reply's Send: its windows
 * are invalidated and given back after the later of them (rrs_unpend), so
 * that no window is invalidated behind the Send of the reply it carried. */
void rrs_end_exposure(struct rr_sreq *rq);
/* Loop: rq's reply waits for room to expose (rrs_prepare_reply said
 * -EINPROGRESS): park it on its connection; it is answered once room frees. */
void rrs_park(struct rr_sreq *rq);
/* Any thread: room to expose freed on c; its parked replies that fit now
 * are answered on the loop, oldest first. */
void rrs_unpark_later(struct rr_conn *c);
/* Set up c's unparking (when its side is made). */
void rrs_park_init(struct rr_conn *c);
/* Loop: the connection is gone: release its parked requests. */
void rrs_park_drop(struct rr_conn *c);
/* Any thread, after keys went back (rr_reg_keys_reserve's, or windows
 * unbound): the first connections whose parked replies wait for keys get
 * them, as many as are free now, and are unparked. */
void rrs_keys_freed(struct rr_server *srv);

#endif
