/*
 * rpcrdma_svc.c: the RPC/RDMA server.
 *
 * A call's life, and the thread of each step:
 *   loop    svc_on_recv: decode the transport header; answer RDMA_ERROR at once
 *           for a header we will not run; post the RDMA Reads of its Read
 *           chunks (pull_chunks), whose completion (read_done) continues;
 *   loop    wait for a Send buffer if none is free (with_send);
 *   worker  sreq_run: decode the call, run the procedure (which may take on the
 *           caller's identity), encode the reply, copy bulk results into
 *           registered buffers and reserve Read-Read exposure (prepare_reply);
 *   loop    sreq_reply: the reply's RDMA Writes, window bindings and Send
 *           (post_reply); its Send completion and, in Read-Read, the client's
 *           RDMA_DONE or the deadline end it (sreq_unpend);
 *   loop or reaper  sreq_release: buffers back (on the reaper queue when giving
 *           them back means deregistering).
 * A worker that takes on a caller's identity may never touch the device (see
 * rpcrdma_int.h), so everything that posts, binds, reposts or registers
 * synchronously happens on the loop; the worker's registrations are
 * RR_GET_ASYNC.
 *
 * Receive buffer ownership: svc_on_recv owns it, then the request; it is
 * reposted exactly once: by svc_on_recv for RDMA_DONE and dropped input, by the
 * loop before it posts the answer (so the credit is back before the client can
 * use it), or by sreq_release if the request ended without an answer.
 *
 * Credits: a connection may have at most `ceiling` calls active (received and
 * not yet answered; in Read-Read, until RDMA_DONE). Grants are clamped to
 * [1, credits] and shrink when registered memory is over the budget.
 */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "rpcrdma_int.h"

#define RR_RR_MIN     1024 /* Read-Read: bulk results smaller than this go inline */
#define TICK_MS	      100  /* deadlines and the memory budget are checked this often */
#define DRAIN_S	      10   /* how long stopping waits for in-flight calls */
#define SREQ_MAX_BUFS (RPCRDMA_MAX_READ_SEGS + 8)
#define MAX_REPLY(p)  ((size_t)(p)->max_io + 65536)
#define RNDUP4(x)     (((x) + 3u) & ~3u)

struct rr_server;
struct rr_sreq;

/* The server's per-connection state; fields under conn->lock. */
struct svc_conn {
	struct rr_server *srv;
	unsigned limit;	  /* most credits we grant now */
	unsigned grant;	  /* last grant sent */
	unsigned ceiling; /* calls active beyond this are an overrun */
	unsigned active;
	size_t held;			     /* registered bytes its requests hold */
	size_t exposed;			     /* bytes exposed (or reserved) to the peer now */
	struct rr_sreq *exp_head, *exp_tail; /* awaiting RDMA_DONE, oldest first */
	/* loop only: requests waiting for a Send buffer, oldest first */
	struct rr_sreq *send_wait, *send_wait_tail;
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
	int answer_rc; /* for answer_error, once it has a Send buffer */

	struct rpc_xreq x;
	struct svc_ddp args_ddp, res_ddp;
	struct rr_item items[RPC_DDP_MAX_ITEMS];
	int dispatched;
	size_t reserve;	  /* room for the reply's transport header */
	int long_reply;	  /* the reply goes into the Reply chunk or is exposed */
	int run_rc;	  /* the worker's outcome */
	size_t exp_bytes; /* Read-Read: bytes reserved (then exposed) */
	int exposing;	  /* they are exposed, on the connection's list */

	struct rr_wr read_wr;
	struct rr_wr send_wr;
	unsigned pending; /* send completion, exposure end: release at 0 */
	uint64_t deadline_ns;
	struct rr_sreq *exp_next;
	struct work reap; /* sreq_release on the reaper queue */
};

struct rr_server {
	struct rr_ep *ep;
	struct rpc_server *rpc;
	struct vb_listener *listener;
	int timer_fd;
	pthread_mutex_t lock; /* protects inflight, stopping */
	pthread_cond_t cond;
	unsigned inflight;
	int stopping;
	struct workq *reaper; /* releases that deregister, off the event loop */
};

static void sreq_unpend(struct rr_sreq *rq);
static void sreq_release(struct rr_sreq *rq);

static int rr_possible(const struct rr_sreq *rq)
{
	return (rq->srv->ep->p.modes & RR_MODE_READ_READ) && rq->hdr.nwrites == 0;
}

/* ---- Send buffers (loop) ---- */

/* Run rq->with_send once a Send buffer is rq's: now, or when one comes back. */
static void with_send(struct rr_sreq *rq, void (*step)(struct rr_sreq *rq))
{
	struct svc_conn *sc = rq->conn->side;

	rq->with_send = step;
	if (!sc->send_wait && (rq->send = rr_send_tryget(rq->conn)) != NULL) {
		step(rq);
		return;
	}
	if (rr_conn_is_dead(rq->conn)) {
		sreq_release(rq);
		return;
	}
	rq->send_wait_next = NULL;
	if (sc->send_wait_tail)
		sc->send_wait_tail->send_wait_next = rq;
	else
		sc->send_wait = rq;
	sc->send_wait_tail = rq;
}

/* Give rq's Send buffer back, and to the oldest request waiting for one. */
static void send_put(struct rr_sreq *rq)
{
	struct rr_conn *c = rq->conn;
	struct svc_conn *sc = c->side;
	struct rr_sreq *next;

	rr_send_put(c, rq->send);
	rq->send = NULL;
	while ((next = sc->send_wait) != NULL && (next->send = rr_send_tryget(c)) != NULL) {
		sc->send_wait = next->send_wait_next;
		if (!sc->send_wait)
			sc->send_wait_tail = NULL;
		next->with_send(next);
	}
}

/* ---- releasing ---- */

/* Undo an exposure reservation, and the exposure if it started (loop). */
static void exposure_over(struct rr_sreq *rq)
{
	struct rr_conn *c = rq->conn;
	struct svc_conn *sc = c->side;
	struct rr_reg_ctx *reg = rq->srv->ep->reg;
	struct vb_conn *vc = rr_conn_enter(c);

	for (unsigned i = 0; i < rq->nbufs; i++)
		rr_buf_unexpose(reg, vc, rq->bufs[i]);
	if (vc)
		rr_conn_leave(c);
	pthread_mutex_lock(&c->lock);
	sc->exposed -= rq->exp_bytes;
	if (rq->counted && rq->exposing) {
		sc->active--;
		rq->counted = 0;
	}
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	if (rq->exposing)
		rr_stat_add(&c->st.exposed_now, -(int64_t)rq->exp_bytes);
	rq->exp_bytes = 0;
	rq->exposing = 0;
}

/* Give every buffer back, the receive if still held, the connection reference.
 * On the loop, or on the reaper once the loop has done its part (sreq_unpend). */
static void sreq_release(struct rr_sreq *rq)
{
	struct rr_server *srv = rq->srv;
	struct rr_conn *c = rq->conn;
	struct svc_conn *sc = c->side;
	struct rr_reg_ctx *reg = srv->ep->reg;

	if (rq->send)
		send_put(rq);
	if (rq->exp_bytes)
		exposure_over(rq);
	if (rq->recv)
		rr_recv_repost(rq->recv);
	if (rq->dispatched)
		rpc_dispatch_done(srv->rpc, &rq->x);
	for (unsigned i = 0; i < rq->nbufs; i++)
		rr_buf_put(reg, rq->bufs[i]);
	pthread_mutex_lock(&c->lock);
	if (rq->counted)
		sc->active--;
	sc->held -= rq->held;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	free(rq);
	rr_conn_put(c);
	pthread_mutex_lock(&srv->lock);
	srv->inflight--;
	pthread_cond_broadcast(&srv->cond);
	pthread_mutex_unlock(&srv->lock);
}

static void sreq_reap_run(struct work *w)
{
	sreq_release((struct rr_sreq *)((char *)w - offsetof(struct rr_sreq, reap)));
}

/* One of the things the request waits for is over (loop); release it after
 * the last: at once where giving buffers back is cheap (so the next call finds
 * them), on the reaper queue where it deregisters, which the event loop must
 * not wait for. What touches the connection is done here first. */
static void sreq_unpend(struct rr_sreq *rq)
{
	if (--rq->pending != 0)
		return;
	if (rq->send)
		send_put(rq);
	if (rq->exp_bytes)
		exposure_over(rq);
	if (rr_reg_put_is_cheap(rq->srv->ep->reg)) {
		sreq_release(rq);
	} else {
		rq->reap.run = sreq_reap_run;
		workq_submit(rq->srv->reaper, &rq->reap);
	}
}

/* ---- buffers of a request ---- */

static void add_buf(struct rr_sreq *rq, struct rr_buf *b)
{
	struct svc_conn *sc = rq->conn->side;

	rq->bufs[rq->nbufs++] = b;
	rq->held += b->len;
	pthread_mutex_lock(&rq->conn->lock);
	sc->held += b->len;
	pthread_mutex_unlock(&rq->conn->lock);
}

/* A registered buffer of at least len bytes held by rq, or NULL. */
static struct rr_buf *get_buf(struct rr_sreq *rq, size_t len, unsigned flags)
{
	struct rr_buf *b;

	if (rq->nbufs == SREQ_MAX_BUFS || rr_buf_get(rq->srv->ep->reg, len, flags, &b) != 0)
		return NULL;
	add_buf(rq, b);
	return b;
}

/* The buffer that holds [data, data+len), or NULL. */
static struct rr_buf *find_buf(struct rr_sreq *rq, const void *data, size_t len)
{
	const uint8_t *p = data;

	for (unsigned i = 0; i < rq->nbufs; i++) {
		const uint8_t *a = rq->bufs[i]->addr;

		if (p >= a && p + len <= a + rq->bufs[i]->len)
			return rq->bufs[i];
	}
	return NULL;
}

/* The transport's get_buf (worker): registration overlaps the procedure filling it. */
static void *svc_get_buf(struct rpc_req *req, size_t len)
{
	struct rr_sreq *rq = req->xprt_req;
	unsigned flags = RR_GET_ASYNC | (rr_possible(rq) ? RR_GET_EXPOSE : 0);
	struct rr_buf *b = get_buf(rq, len, flags);

	return b ? b->addr : NULL;
}

/* ---- the DDP hooks ---- */

/* Arguments: a data item comes from the Read chunk at its position, if any. */
static int svc_args_get(struct rpc_ddp *ddp, XDR *xdrs, uint32_t len, void **data)
{
	struct rr_sreq *rq = ((struct svc_ddp *)ddp)->rq;
	uint32_t pos = xdr_getpos(xdrs);
	uint32_t full = pos + rq->args_reduced;

	for (uint32_t i = 0; i < rq->nrch; i++) {
		const struct rpcrdma_read_chunk *ch = &rq->rch[i];

		if (ch->position == 0 || rq->chunk_used[i] || ch->position != full)
			continue;
		/* the chunk carries the item, with or without its XDR padding */
		if (ch->length < len || ch->length > (uint64_t)len + 3)
			return -EBADMSG;
		rq->chunk_used[i] = 1;
		rq->args_reduced += RNDUP4(len);
		*data = rq->chunk_buf[i]->addr;
		return rpc_ddp_note(ddp, pos, *data, len);
	}
	return rpc_ddp_inline_ops.get(ddp, xdrs, len, data);
}

/* Results: into the next Write chunk; in Read-Read, exposed; else inline. */
static int svc_res_put(struct rpc_ddp *ddp, XDR *xdrs, void *data, uint32_t len)
{
	struct rr_sreq *rq = ((struct svc_ddp *)ddp)->rq;
	unsigned idx = ddp->nitems, nw = 0;
	uint32_t pos = xdr_getpos(xdrs), reduced = 0;
	struct rr_item *it = &rq->items[idx];
	uint64_t room;

	if (len == 0)
		return 0;
	for (unsigned i = 0; i < idx; i++) {
		nw += rq->items[i].wchunk >= 0;
		reduced += RNDUP4(rq->items[i].len);
	}
	if (nw < rq->hdr.nwrites) {
		if (rpcrdma_write_chunk_len(&rq->hdr.writes[nw], &room) != 0 || room < len) {
			log_info("xid %#x: Write chunk of %llu bytes for %u bytes of data",
				 rq->hdr.xid, (unsigned long long)room, len);
			return -EMSGSIZE;
		}
		*it = (struct rr_item){.data = data, .len = len, .wchunk = (int)nw};
		return rpc_ddp_note(ddp, pos, data, len);
	}
	if (rr_possible(rq) && len >= RR_RR_MIN && idx < RPC_DDP_MAX_ITEMS) {
		*it = (struct rr_item){
			.data = data, .len = len, .wchunk = -1, .pos_full = pos + reduced};
		return rpc_ddp_note(ddp, pos, data, len);
	}
	return rpc_ddp_inline_ops.put(ddp, xdrs, data, len);
}

static const struct rpc_ddp_ops svc_args_ops = {.get = svc_args_get, .put = NULL};
static const struct rpc_ddp_ops svc_res_ops = {.get = NULL, .put = svc_res_put};

/* ---- answering (loop) ---- */

static unsigned next_grant(struct rr_sreq *rq)
{
	struct svc_conn *sc = rq->conn->side;
	unsigned want = rq->decode_rc == 0 && rq->hdr.credit ? rq->hdr.credit : 1;
	unsigned g;

	pthread_mutex_lock(&rq->conn->lock);
	g = want < sc->limit ? want : sc->limit;
	if (g < 1)
		g = 1;
	sc->grant = g;
	if (sc->active <= g || g > sc->ceiling)
		sc->ceiling = g;
	pthread_mutex_unlock(&rq->conn->lock);
	rq->conn->st.credits_granted = g;
	return g;
}

/* Before answering: the call stops counting against the credits (unless its
 * reply stays exposed) and its receive buffer goes back, so both are there
 * when the client sees the answer. */
static void give_back_credit(struct rr_sreq *rq, int keep_counted)
{
	struct rr_conn *c = rq->conn;

	if (rq->counted && !keep_counted) {
		pthread_mutex_lock(&c->lock);
		((struct svc_conn *)c->side)->active--;
		rq->counted = 0;
		pthread_mutex_unlock(&c->lock);
	}
	if (rq->recv) {
		rr_recv_repost(rq->recv);
		rq->recv = NULL;
	}
}

/* The Send's completion (or its flush): the buffer is free. */
static void send_done(struct rr_conn *c, struct rr_wr *w, const struct vb_wc *wc)
{
	struct rr_sreq *rq = (struct rr_sreq *)((char *)w - offsetof(struct rr_sreq, send_wr));

	send_put(rq);
	sreq_unpend(rq);
}

/* Send a bodiless header (RDMA_ERROR) for a call we will not run; rq has its
 * Send buffer (with_send). */
static void send_error(struct rr_sreq *rq)
{
	struct rr_conn *c = rq->conn;
	struct rr_batch b;
	struct vb_sge sge;
	struct wcur w;
	struct cur cu;
	uint32_t xid;
	int rc;

	cur_init(&cu, rq->recv->buf, rq->recv->len);
	if (rpcrdma_hdr_peek_xid(&cu, &xid) != 0) {
		sreq_release(rq); /* too short to answer: drop, repost */
		return;
	}
	wcur_init(&w, rq->send->buf, rq->send->cap);
	if (rq->answer_rc == -EPROTONOSUPPORT) {
		rc = rpcrdma_encode_err_vers(&w, xid, next_grant(rq), RPCRDMA_VERSION,
					     RPCRDMA_VERSION);
		rr_stat_add(&c->st.err_vers_sent, 1);
	} else {
		rc = rpcrdma_encode_err_chunk(&w, xid, next_grant(rq));
		rr_stat_add(&c->st.err_chunk_sent, 1);
	}
	log_debug("%s: xid %#x: answered RDMA_ERROR (%s)", c->peer, xid, strerror(-rq->answer_rc));
	if (rc) {
		sreq_release(rq);
		return;
	}
	sge = (struct vb_sge){.addr = (uintptr_t)rq->send->buf,
			      .length = (uint32_t)w.pos,
			      .lkey = c->send_mr->lkey};
	b.n = 0;
	rr_batch_send(&b, &sge, 1);
	give_back_credit(rq, 0);
	rq->pending = 1;
	rr_post(c, &b, &rq->send_wr); /* send_done ends it, if only as a flush */
}

/* Answer RDMA_ERROR (ERR_VERS for -EPROTONOSUPPORT, else ERR_CHUNK). */
static void answer_error(struct rr_sreq *rq, int rc)
{
	rq->answer_rc = rc;
	with_send(rq, send_error);
}

/* ---- pulling Read chunks (loop) ---- */

static void sreq_to_worker(struct rr_sreq *rq);

/* The RDMA Reads are in (or flushed): on to the worker. */
static void read_done(struct rr_conn *c, struct rr_wr *w, const struct vb_wc *wc)
{
	struct rr_sreq *rq = (struct rr_sreq *)((char *)w - offsetof(struct rr_sreq, read_wr));

	if (wc->status != VB_WC_SUCCESS) {
		log_debug("%s: xid %#x: pulling its chunks failed: %s", c->peer, rq->hdr.xid,
			  vb_wc_status_str(wc->status));
		sreq_release(rq);
		return;
	}
	rr_stat_add(&c->st.bytes_rdma_read, (int64_t)rq->pulled);
	sreq_to_worker(rq);
}

/* Check the Read list and post the RDMA Reads that pull every chunk into local
 * buffers. 1 when they are posted (read_done continues), 0 when there is
 * nothing to pull, or -errno: -EBADMSG/-E2BIG/-ENOMEM answer ERR_CHUNK. */
static int pull_chunks(struct rr_sreq *rq)
{
	const struct rr_params *p = &rq->srv->ep->p;
	uint64_t total = 0;
	struct rr_batch b;
	int rc;

	rc = rpcrdma_read_chunks(&rq->hdr, rq->rch, &rq->nrch);
	if (rc)
		return rc;
	/* a call in RDMA_NOMSG is in a Position-Zero chunk; RDMA_MSG has none */
	if ((rq->hdr.proc == RPCRDMA_NOMSG) != (rq->nrch > 0 && rq->rch[0].position == 0))
		return -EBADMSG;
	for (uint32_t i = 0; i < rq->nrch; i++)
		total += rq->rch[i].length;
	if (total > MAX_REPLY(p))
		return -E2BIG;
	b.n = 0;
	for (uint32_t i = 0; i < rq->nrch; i++) {
		const struct rpcrdma_read_chunk *ch = &rq->rch[i];
		struct rr_buf *buf = get_buf(rq, ch->length ? ch->length : 1, RR_GET_NOWAIT);
		uint8_t *dst;

		if (!buf)
			return -ENOMEM;
		rq->chunk_buf[i] = buf;
		dst = buf->addr;
		for (uint32_t s = ch->first; s < ch->first + ch->nsegs; s++) {
			const struct rpcrdma_seg *seg = &rq->hdr.reads[s].seg;

			if (seg->length == 0)
				continue;
			rc = rr_batch_rdma(&b, VB_WR_RDMA_READ, dst, seg->length, buf->lkey,
					   seg->offset, seg->handle);
			if (rc)
				return rc;
			dst += seg->length;
		}
	}
	if (b.n == 0)
		return 0;
	rq->pulled = total;
	rr_post(rq->conn, &b, &rq->read_wr); /* read_done continues, if only with a flush */
	return 1;
}

/* ---- building the reply ---- */

/* Bytes the reply's transport header may need, so the payload can follow it. */
static size_t hdr_reserve(const struct rr_sreq *rq)
{
	size_t n = RPCRDMA_HDR_FIXED_LEN + 4 + 4 + 4;

	for (uint32_t i = 0; i < rq->hdr.nwrites; i++)
		n += 8 + (size_t)rq->hdr.writes[i].nsegs * RPCRDMA_SEG_LEN;
	if (rq->hdr.has_reply)
		n += 4 + (size_t)rq->hdr.reply.nsegs * RPCRDMA_SEG_LEN;
	if (rr_possible(rq))
		n += (RPC_DDP_MAX_ITEMS + 1) * (8 + RPCRDMA_SEG_LEN);
	return RNDUP4(n);
}

/* Worker: wait until the connection may expose bytes more (Read-Read's bound),
 * and reserve them. */
static int reserve_exposure(struct rr_sreq *rq, size_t bytes)
{
	struct rr_conn *c = rq->conn;
	struct svc_conn *sc = c->side;
	const struct rr_params *p = &rq->srv->ep->p;
	uint64_t until = clock_now_ns() + (uint64_t)p->done_deadline_ms * 1000000u;
	int rc = 0;

	if (bytes > p->exposed_max)
		return -E2BIG;
	pthread_mutex_lock(&c->lock);
	while (!c->dead && sc->exposed + bytes > p->exposed_max) {
		struct timespec ts = clock_deadline(CLOCK_REALTIME, TICK_MS);

		if (clock_now_ns() >= until) {
			rc = -EBUSY;
			break;
		}
		pthread_cond_timedwait(&c->cond, &c->lock, &ts);
	}
	if (c->dead)
		rc = -ECONNRESET;
	if (rc == 0) {
		sc->exposed += bytes;
		rq->exp_bytes = bytes;
	}
	pthread_mutex_unlock(&c->lock);
	return rc;
}

/* Whether b can be exposed: registered with remote rights, or in an arena. */
static int exposable(const struct rr_reg_ctx *reg, const struct rr_buf *b)
{
	enum rr_reg k = rr_reg_kind(reg);

	return b->remote || k == RR_REG_FASTREG || k == RR_REG_ALLPHYS;
}

/* Worker: the registered buffer an item goes out of; copies it into one if needed. */
static struct rr_buf *item_buf(struct rr_sreq *rq, struct rr_item *it, unsigned flags)
{
	struct rr_reg_ctx *reg = rq->srv->ep->reg;
	struct rr_buf *b = find_buf(rq, it->data, it->len);

	if (b && (!(flags & RR_GET_EXPOSE) || exposable(reg, b)))
		return b;
	b = get_buf(rq, it->len, flags | RR_GET_ASYNC);
	if (!b)
		return NULL;
	memcpy(b->addr, it->data, it->len);
	it->data = b->addr;
	return b;
}

/* Worker: every bulk item in a registered buffer, Read-Read's exposure
 * reserved, every registration of the request finished. */
static int prepare_reply(struct rr_sreq *rq)
{
	struct rr_reg_ctx *reg = rq->srv->ep->reg;
	unsigned nitems = rq->res_ddp.base.nitems;
	size_t bytes = rq->long_reply && !rq->hdr.has_reply ? rq->x.reply_len : 0;
	int rc;

	for (unsigned i = 0; i < nitems; i++) {
		struct rr_item *it = &rq->items[i];

		if (!(it->buf = item_buf(rq, it, it->wchunk < 0 ? RR_GET_EXPOSE : 0)))
			return -ENOMEM;
		if (it->wchunk < 0)
			bytes += it->len;
	}
	if (bytes && (rc = reserve_exposure(rq, bytes)) != 0)
		return rc;
	for (unsigned i = 0; i < rq->nbufs; i++)
		if ((rc = rr_buf_wait(reg, rq->bufs[i])) != 0)
			return rc;
	return 0;
}

/* Loop: add the RDMA Writes of the items that go to Write chunks. */
static int write_items(struct rr_sreq *rq, struct rr_batch *b, unsigned nitems)
{
	for (unsigned i = 0; i < nitems; i++) {
		struct rr_item *it = &rq->items[i];
		int rc;

		if (it->wchunk < 0)
			continue;
		rc = rr_batch_write_chunk(b, it->data, it->len, it->buf->lkey,
					  &rq->hdr.writes[it->wchunk], it->written);
		if (rc)
			return rc;
		rr_stat_add(&rq->conn->st.bytes_rdma_write, it->len);
	}
	return 0;
}

/* Loop: expose the Read-Read items (and a long reply) and list them in rh's Read list. */
static int expose_items(struct rr_sreq *rq, struct rpcrdma_hdr *rh, unsigned nitems, int long_rr)
{
	struct rr_reg_ctx *reg = rq->srv->ep->reg;
	struct vb_conn *vc;
	int rc = 0;

	if (rq->exp_bytes == 0)
		return 0;
	if (!(vc = rr_conn_enter(rq->conn)))
		return -ECONNRESET;
	if (long_rr) {
		rc = rr_buf_expose(reg, vc, rq->reply_buf, RR_GET_NOWAIT);
		rh->reads[rh->nreads++] = (struct rpcrdma_read_seg){
			.position = 0,
			.seg = {rq->reply_buf->rkey, (uint32_t)rq->x.reply_len,
				(uintptr_t)rq->reply_buf->addr}};
	}
	for (unsigned i = 0; i < nitems && rc == 0; i++) {
		struct rr_item *it = &rq->items[i];

		if (it->wchunk >= 0)
			continue;
		if (!it->buf->exposed)
			rc = rr_buf_expose(reg, vc, it->buf, RR_GET_NOWAIT);
		rh->reads[rh->nreads++] = (struct rpcrdma_read_seg){
			.position = it->pos_full,
			.seg = {it->buf->rkey, it->len, (uintptr_t)it->data}};
	}
	rr_conn_leave(rq->conn);
	if (rc)
		return rc;
	rr_stat_add(&rq->conn->st.bytes_exposed, (int64_t)rq->exp_bytes);
	rr_stat_add(&rq->conn->st.exposed_now, (int64_t)rq->exp_bytes);
	return 0;
}

/* Put the request on its connection's exposure list with its deadline. */
static void start_exposure(struct rr_sreq *rq)
{
	struct svc_conn *sc = rq->conn->side;

	rq->exposing = 1;
	rq->deadline_ns = clock_now_ns() + (uint64_t)rq->srv->ep->p.done_deadline_ms * 1000000u;
	rq->exp_next = NULL;
	pthread_mutex_lock(&rq->conn->lock);
	if (sc->exp_tail)
		sc->exp_tail->exp_next = rq;
	else
		sc->exp_head = rq;
	sc->exp_tail = rq;
	pthread_mutex_unlock(&rq->conn->lock);
}

/* End an exposure (RDMA_DONE, deadline, connection gone): keys die now. */
static void end_exposure(struct rr_sreq *rq)
{
	exposure_over(rq);
	sreq_unpend(rq);
}

/* Loop: build and post the reply of a dispatched call. */
static int post_reply(struct rr_sreq *rq)
{
	struct rr_conn *c = rq->conn;
	unsigned nitems = rq->res_ddp.base.nitems;
	int long_reply = rq->long_reply;
	struct rr_batch b;
	struct rpcrdma_hdr *rh;
	struct vb_sge sge[2];
	struct wcur w;
	int rc, long_rr = long_reply && !rq->hdr.has_reply, exposing;

	rh = malloc(sizeof(*rh));
	if (!rh)
		return -ENOMEM;
	rpcrdma_hdr_init(rh, rq->hdr.xid, next_grant(rq), long_reply ? RPCRDMA_NOMSG : RPCRDMA_MSG);
	b.n = 0;
	rc = write_items(rq, &b, nitems);
	if (rc == 0 && long_reply && rq->hdr.has_reply) {
		rc = rr_batch_write_chunk(&b, rq->reply_buf->addr, (uint32_t)rq->x.reply_len,
					  rq->reply_buf->lkey, &rq->hdr.reply, rq->reply_written);
		rr_stat_add(&c->st.bytes_rdma_write, (int64_t)rq->x.reply_len);
	}
	if (rc == 0)
		rc = expose_items(rq, rh, nitems, long_rr);
	exposing = rq->exp_bytes != 0;
	/* echo the Write list with what went into each segment; the Reply chunk likewise */
	rh->nwrites = rq->hdr.nwrites;
	for (uint32_t k = 0; k < rq->hdr.nwrites; k++) {
		rh->writes[k] = rq->hdr.writes[k];
		for (uint32_t s = 0; s < rh->writes[k].nsegs; s++)
			rh->writes[k].segs[s].length = 0;
	}
	for (unsigned i = 0; i < nitems; i++) {
		const struct rr_item *it = &rq->items[i];

		for (uint32_t s = 0; it->wchunk >= 0 && s < rh->writes[it->wchunk].nsegs; s++)
			rh->writes[it->wchunk].segs[s].length = it->written[s];
	}
	if (long_reply && rq->hdr.has_reply) {
		rh->has_reply = true;
		rh->reply = rq->hdr.reply;
		for (uint32_t s = 0; s < rh->reply.nsegs; s++)
			rh->reply.segs[s].length = rq->reply_written[s];
	}
	wcur_init(&w, rq->send->buf, rq->reserve);
	if (rc == 0)
		rc = rpcrdma_hdr_encode(&w, rh);
	free(rh);
	sge[0] = (struct vb_sge){(uintptr_t)rq->send->buf, (uint32_t)w.pos, c->send_mr->lkey};
	sge[1] = (struct vb_sge){(uintptr_t)rq->send->buf + rq->reserve, (uint32_t)rq->x.reply_len,
				 c->send_mr->lkey};
	if (rc == 0)
		rc = rr_batch_send(&b, sge, long_reply ? 1 : 2);
	if (rc)
		return rc; /* sreq_release undoes the exposure */
	rr_stat_add(&c->st.bytes_inline_out, (int64_t)(w.pos + (long_reply ? 0 : rq->x.reply_len)));
	rr_stat_add(&c->st.replies, 1);

	rq->pending = 1 + exposing;
	if (exposing)
		start_exposure(rq);
	give_back_credit(rq, exposing);
	rr_post(c, &b, &rq->send_wr); /* send_done ends it, if only as a flush */
	return 0;
}

/* Worker: decode, run and encode the call; sets rq->long_reply. */
static int dispatch(struct rr_sreq *rq)
{
	struct rr_conn *c = rq->conn;
	const struct rr_params *p = &rq->srv->ep->p;
	struct rpc_xreq *x = &rq->x;
	size_t cap = 0, reserve = rq->reserve;
	int rc;

	if (rq->hdr.proc == RPCRDMA_NOMSG) {
		x->call = rq->chunk_buf[0]->addr;
		x->call_len = rq->rch[0].length;
	} else {
		x->call = rq->recv->buf + rq->payload_off;
		x->call_len = rq->recv->len - rq->payload_off;
	}
	rq->args_ddp = (struct svc_ddp){.base.ops = &svc_args_ops, .rq = rq};
	rq->res_ddp = (struct svc_ddp){.base.ops = &svc_res_ops, .rq = rq};
	x->args_ddp = &rq->args_ddp.base;
	x->res_ddp = &rq->res_ddp.base;
	x->peer = c->peer_addr_len ? (struct sockaddr *)&c->peer_addr : NULL;
	x->peer_len = c->peer_addr_len;
	x->get_buf = svc_get_buf;
	x->xprt_req = rq;
	x->reply = rq->send->buf + reserve;
	x->reply_cap = c->send_max > reserve ? c->send_max - reserve : 0;
	rq->long_reply = 0;
	rc = rpc_dispatch(rq->srv->rpc, x);
	rq->dispatched = rc != -EBADMSG;
	if (rc != -EMSGSIZE)
		return rc;
	/* does not fit inline: into the Reply chunk, or exposed (Read-Read) */
	if (rq->hdr.has_reply) {
		uint64_t len;

		if (rpcrdma_write_chunk_len(&rq->hdr.reply, &len) == 0)
			cap = len < MAX_REPLY(p) ? len : MAX_REPLY(p);
	} else if (p->modes & RR_MODE_READ_READ) {
		cap = MAX_REPLY(p);
	}
	if (cap && (rq->reply_buf = get_buf(
			    rq, cap, RR_GET_ASYNC | (rq->hdr.has_reply ? 0 : RR_GET_EXPOSE)))) {
		x->reply = rq->reply_buf->addr;
		x->reply_cap = cap;
		rq->long_reply = 1;
	}
	rc = rpc_reencode(rq->srv->rpc, x);
	if (rc == 0 && rq->long_reply && x->status != RPC_OK) {
		/* too long even for that: it became a SYSTEM_ERR of a few words, inline */
		memcpy(rq->send->buf + reserve, x->reply, x->reply_len);
		rq->long_reply = 0;
	}
	return rc;
}

/* Loop: the worker is done with rq; answer it, or let it go. */
static void sreq_reply(void *arg)
{
	struct rr_sreq *rq = arg;
	struct rr_conn *c = rq->conn;
	int rc = rq->run_rc;

	if (rc == 0 && rr_conn_is_dead(c))
		rc = -ECONNRESET;
	if (rc == 0)
		rc = post_reply(rq);
	if (rc) {
		if (rc != -EBADMSG && rc != -EALREADY && rc != -ECONNRESET)
			log_info("%s: xid %#x: no reply: %s", c->peer, rq->hdr.xid, strerror(-rc));
		sreq_release(rq);
	}
}

/* Worker: everything about the call that may block or take on the caller's
 * identity, and nothing that touches the device. */
static void sreq_run(struct work *w)
{
	struct rr_sreq *rq = (struct rr_sreq *)w;

	rr_stat_add(&rq->conn->st.calls, 1);
	rq->run_rc = dispatch(rq);
	if (rq->run_rc == 0)
		rq->run_rc = prepare_reply(rq);
	evloop_call(rq->srv->ep->loop, sreq_reply, rq);
}

static void submit(struct rr_sreq *rq)
{
	rpc_server_submit(rq->srv->rpc, &rq->work);
}

/* Loop: the call's chunks are in; it runs on a worker once it has a Send buffer. */
static void sreq_to_worker(struct rr_sreq *rq)
{
	with_send(rq, submit);
}

/* Loop: a received call; answer its errors, or start pulling its chunks. */
static void sreq_start(struct rr_sreq *rq)
{
	struct rr_conn *c = rq->conn;
	int rc;

	if (rq->decode_rc) {
		answer_error(rq, rq->decode_rc);
		return;
	}
	if (rq->hdr.proc != RPCRDMA_MSG && rq->hdr.proc != RPCRDMA_NOMSG) {
		/* RDMA_ERROR from a client, RDMA_MSGP: not ours to run */
		answer_error(rq, -EINVAL);
		return;
	}
	if (rq->overrun) {
		rr_stat_add(&c->st.credit_overruns, 1);
		log_info("%s: xid %#x: credit overrun answered with ERR_CHUNK", c->peer,
			 rq->hdr.xid);
		answer_error(rq, -EINVAL);
		return;
	}
	rq->reserve = hdr_reserve(rq);
	rc = rq->reserve + 64 > c->send_max ? -E2BIG : pull_chunks(rq);
	if (rc == 0)
		sreq_to_worker(rq);
	else if (rc == -EBADMSG || rc == -E2BIG || rc == -ENOMEM)
		answer_error(rq, rc);
	else if (rc < 0)
		sreq_release(rq);
}

/* ---- the event loop side ---- */

static void handle_done(struct rr_conn *c, uint32_t xid)
{
	struct svc_conn *sc = c->side;
	struct rr_sreq **pp, *rq = NULL;

	pthread_mutex_lock(&c->lock);
	for (pp = &sc->exp_head; *pp; pp = &(*pp)->exp_next) {
		if ((*pp)->hdr.xid == xid) {
			rq = *pp;
			*pp = rq->exp_next;
			if (sc->exp_tail == rq) {
				sc->exp_tail = NULL;
				for (struct rr_sreq *t = sc->exp_head; t; t = t->exp_next)
					sc->exp_tail = t;
			}
			break;
		}
	}
	pthread_mutex_unlock(&c->lock);
	if (!rq) {
		rr_stat_add(&c->st.done_unknown, 1);
		log_debug("%s: RDMA_DONE for xid %#x, which has nothing exposed", c->peer, xid);
		return;
	}
	end_exposure(rq);
}

static void svc_on_recv(struct rr_conn *c, struct rr_recv *r)
{
	struct svc_conn *sc = c->side;
	struct rr_server *srv = sc->srv;
	struct rr_sreq *rq;
	struct cur cu;
	uint32_t w[4];

	cur_init(&cu, r->buf, r->len);
	if (cur_get_u32(&cu, &w[0]) == 0 && cur_get_u32(&cu, &w[1]) == 0 &&
	    cur_get_u32(&cu, &w[2]) == 0 && cur_get_u32(&cu, &w[3]) == 0 &&
	    w[1] == RPCRDMA_VERSION && w[3] == RPCRDMA_DONE) {
		handle_done(c, w[0]);
		rr_recv_repost(r);
		return;
	}
	rq = calloc(1, sizeof(*rq));
	if (!rq || srv->stopping) {
		free(rq);
		rr_recv_repost(r);
		return;
	}
	rq->srv = srv;
	rq->conn = c;
	rq->recv = r;
	rq->work.run = sreq_run;
	rq->read_wr.done = read_done;
	rq->send_wr.done = send_done;
	cur_init(&cu, r->buf, r->len);
	rq->decode_rc = rpcrdma_hdr_decode(&cu, &rq->hdr);
	rq->payload_off = cu.pos;
	if (rq->decode_rc == 0 && (rq->hdr.proc == RPCRDMA_MSG || rq->hdr.proc == RPCRDMA_NOMSG)) {
		pthread_mutex_lock(&c->lock);
		sc->active++;
		rq->counted = 1;
		rq->overrun = sc->active > sc->ceiling;
		pthread_mutex_unlock(&c->lock);
	}
	rr_conn_get(c);
	pthread_mutex_lock(&srv->lock);
	srv->inflight++;
	pthread_mutex_unlock(&srv->lock);
	sreq_start(rq);
}

/* The connection died: end every exposure now, and let go of the requests
 * waiting for a Send buffer. */
static void svc_on_dead(struct rr_conn *c)
{
	struct svc_conn *sc = c->side;
	struct rr_sreq *list, *waiting = sc->send_wait;

	sc->send_wait = sc->send_wait_tail = NULL;
	while (waiting) {
		struct rr_sreq *rq = waiting;

		waiting = rq->send_wait_next;
		sreq_release(rq);
	}
	pthread_mutex_lock(&c->lock);
	list = sc->exp_head;
	sc->exp_head = sc->exp_tail = NULL;
	pthread_mutex_unlock(&c->lock);
	while (list) {
		struct rr_sreq *rq = list;

		list = rq->exp_next;
		end_exposure(rq);
	}
}

static void svc_on_free(struct rr_conn *c)
{
	free(c->side);
}

/* Every tick: end overdue exposures; keep registered memory within the budget. */
static void tick(void *arg)
{
	struct rr_server *srv = arg;
	struct rr_ep *ep = srv->ep;
	uint64_t now = clock_now_ns();
	uint64_t reg = __atomic_load_n(&ep->st.registered_now, __ATOMIC_RELAXED);
	struct rr_conn *heavy = NULL;
	size_t heavy_held = 0;

	pthread_mutex_lock(&ep->lock);
	for (struct rr_conn *c = ep->conns; c; c = c->next) {
		struct svc_conn *sc = c->side;
		struct rr_sreq *expired = NULL;

		if (!sc)
			continue;
		pthread_mutex_lock(&c->lock);
		while (sc->exp_head && sc->exp_head->deadline_ns <= now) {
			struct rr_sreq *rq = sc->exp_head;

			sc->exp_head = rq->exp_next;
			if (!sc->exp_head)
				sc->exp_tail = NULL;
			rq->exp_next = expired;
			expired = rq;
		}
		if (sc->held >= heavy_held) {
			heavy = c;
			heavy_held = sc->held;
		}
		if (reg < ep->p.mem_budget / 4 * 3 && sc->limit < ep->p.credits)
			sc->limit += sc->limit / 4 + 1 < ep->p.credits - sc->limit
					     ? sc->limit / 4 + 1
					     : ep->p.credits - sc->limit;
		pthread_mutex_unlock(&c->lock);
		while (expired) {
			struct rr_sreq *rq = expired;

			expired = rq->exp_next;
			rr_stat_add(&c->st.exposed_expired, 1);
			log_info("%s: xid %#x: no RDMA_DONE within %u ms: exposure ended", c->peer,
				 rq->hdr.xid, ep->p.done_deadline_ms);
			end_exposure(rq);
		}
	}
	if (heavy && reg > ep->p.mem_budget) {
		struct svc_conn *sc = heavy->side;

		pthread_mutex_lock(&heavy->lock);
		if (sc->limit > 1) {
			sc->limit /= 2;
			log_info("%s: registered memory %llu over budget %zu: credits down to %u",
				 heavy->peer, (unsigned long long)reg, ep->p.mem_budget, sc->limit);
		}
		pthread_mutex_unlock(&heavy->lock);
	}
	pthread_mutex_unlock(&ep->lock);
}

static void listener_ready(void *arg)
{
	struct rr_server *srv = arg;
	struct rr_ep *ep = srv->ep;
	struct vb_cm_event ev;

	while (vb_listener_get_event(srv->listener, &ev) == 0) {
		uint8_t pdata[RPCRDMA_CM_PRIVATE_LEN];
		struct vb_conn_param param;
		struct svc_conn *sc;
		struct rr_conn *c;

		if (ev.type != VB_CM_CONNECT_REQUEST || !ev.conn)
			continue;
		if (srv->stopping) {
			vb_reject(ev.conn, NULL, 0);
			vb_conn_destroy(ev.conn);
			continue;
		}
		sc = calloc(1, sizeof(*sc));
		if (!sc || rr_conn_create(ep, ev.conn, 1, &c) != 0) {
			free(sc);
			continue;
		}
		rr_conn_set_peer_private(c, ev.private_data, ev.private_data_len);
		sc->srv = srv;
		sc->limit = sc->ceiling = ep->p.credits;
		c->side = sc;
		c->on_recv = svc_on_recv;
		c->on_dead = svc_on_dead;
		c->on_free = svc_on_free;
		rr_conn_our_private(ep, pdata);
		param = (struct vb_conn_param){.private_data = pdata,
					       .private_data_len = sizeof(pdata),
					       .responder_resources = ep->p.rd_depth,
					       .initiator_depth = ep->p.rd_depth};
		if (vb_accept(c->vc, &param) != 0 || rr_conn_start(c) != 0) {
			rr_conn_fail(c, "accept failed");
			continue;
		}
		log_info("%s: connected (inline %u/%u)", c->peer, c->send_max, c->recv_max);
	}
}

/* ---- the interface ---- */

int rr_server_create(struct rpc_server *rpc, const struct rr_params *p, struct rr_server **out)
{
	struct rr_server *srv = calloc(1, sizeof(*srv));
	unsigned remote = (p->modes & RR_MODE_READ_READ) ? VB_ACCESS_REMOTE_READ : 0;
	int rc;

	if (!srv)
		return -ENOMEM;
	srv->rpc = rpc;
	srv->timer_fd = -1;
	pthread_mutex_init(&srv->lock, NULL);
	pthread_cond_init(&srv->cond, NULL);
	rc = rr_ep_create(p, remote, &srv->ep);
	if (rc == 0)
		rc = workq_create(1, "rpcrdma-reap", &srv->reaper);
	if (rc) {
		rr_ep_destroy(srv->ep);
		free(srv);
		return rc;
	}
	srv->timer_fd = evloop_add_timer(srv->ep->loop, TICK_MS, tick, srv);
	*out = srv;
	return 0;
}

static void add_listener(void *arg)
{
	struct rr_server *srv = arg;

	evloop_add(srv->ep->loop, vb_listener_fd(srv->listener), listener_ready, srv);
}

int rr_server_listen(struct rr_server *srv, const char *host, const char *port)
{
	int rc = vb_listen(srv->ep->dev, host, port, 128, &srv->listener);

	if (rc) {
		log_err("cannot listen for RPC/RDMA on %s:%s (%s): %s", host ? host : "*", port,
			srv->ep->dev->name, strerror(-rc));
		return rc;
	}
	evloop_call(srv->ep->loop, add_listener, srv);
	log_notice("RPC/RDMA on %s:%s, device %s", host ? host : "*", port, srv->ep->dev->name);
	return 0;
}

void rr_server_get_stats(struct rr_server *srv, struct rr_stats *out)
{
	struct rr_ep *ep = srv->ep;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&ep->lock);
	rr_stats_add(out, &ep->closed);
	rr_stats_add(out, &ep->st);
	for (struct rr_conn *c = ep->conns; c; c = c->next)
		rr_stats_add(out, &c->st);
	out->conns = ep->nconns;
	pthread_mutex_unlock(&ep->lock);
}

void rr_server_print_stats(struct rr_server *srv, FILE *f)
{
	struct rr_ep *ep = srv->ep;
	struct rr_stats all;

	rr_server_get_stats(srv, &all);
	fprintf(f, "rdma.device %s\nrdma.registration %s\n", ep->dev->name, rr_reg_name(ep->p.reg));
	rr_stats_print(&all, "rdma.", f);
	pthread_mutex_lock(&ep->lock);
	for (struct rr_conn *c = ep->conns; c; c = c->next) {
		char prefix[VB_NAME_MAX + 16];

		snprintf(prefix, sizeof(prefix), "rdma.conn.%s.", c->peer);
		rr_stats_print(&c->st, prefix, f);
	}
	pthread_mutex_unlock(&ep->lock);
}

static void stop_listener(void *arg)
{
	struct rr_server *srv = arg;

	evloop_del(srv->ep->loop, vb_listener_fd(srv->listener));
	vb_listener_destroy(srv->listener);
	srv->listener = NULL;
}

void rr_server_destroy(struct rr_server *srv)
{
	struct rr_ep *ep;

	if (!srv)
		return;
	ep = srv->ep;
	pthread_mutex_lock(&srv->lock);
	srv->stopping = 1;
	if (cond_wait_zero(&srv->cond, &srv->lock, &srv->inflight, DRAIN_S * 1000L))
		log_warn("%u calls still in flight after %d s; disconnecting", srv->inflight,
			 DRAIN_S);
	pthread_mutex_unlock(&srv->lock);
	if (srv->listener)
		evloop_call(ep->loop, stop_listener, srv);
	pthread_mutex_lock(&ep->lock);
	for (struct rr_conn *c = ep->conns; c; c = c->next)
		rr_conn_fail(c, "server stopping");
	if (cond_wait_zero(&ep->cond, &ep->lock, &ep->nconns, DRAIN_S * 1000L))
		log_warn("%u connections did not close", ep->nconns);
	pthread_mutex_unlock(&ep->lock);
	workq_destroy(srv->reaper);
	if (srv->timer_fd >= 0)
		evloop_del(ep->loop, srv->timer_fd);
	rr_ep_destroy(ep);
	pthread_cond_destroy(&srv->cond);
	pthread_mutex_destroy(&srv->lock);
	free(srv);
}
