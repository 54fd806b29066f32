/*
 * rpcrdma_clnt.c: the RPC/RDMA client.
 *
 * A call (rr_call, in the caller's thread): wait for a credit; encode the call
 * after room for the transport header in a Send buffer, moving bulk arguments
 * into Read chunks when they do not fit (and the whole call into a
 * Position-Zero chunk when even that is not enough); offer a Write chunk for
 * bulk results and a Reply chunk for long replies (Read-Write mode); Send; wait.
 * The event loop decodes the reply's transport header and hands reply and
 * receive buffer to the caller (clnt_on_recv). The caller pulls exposed chunks
 * and answers RDMA_DONE (Read-Read mode), decodes, reposts the receive buffer,
 * and gives its registrations and credit back.
 *
 * Receive buffer ownership: clnt_on_recv owns it until it finds the call, then
 * the caller; either reposts it exactly once.
 */
#include <stdlib.h>
#include <string.h>
#include <poll.h>

#include "common/base/log.h"
#include "rpcrdma_int.h"

#define CALL_HDR_RESERVE                                                                           \
	(RPCRDMA_HDR_FIXED_LEN + 12 + (RPC_DDP_MAX_ITEMS + 1) * (8 + RPCRDMA_SEG_LEN) +            \
	 2 * (8 + RPCRDMA_SEG_LEN) + 16)
#define RNDUP4(x) (((x) + 3u) & ~3u)

struct rr_clnt;

struct cslot {
	uint32_t xid;
	struct cslot *next;
	struct rr_clnt *cl;
	struct rpc_call *call;
	pthread_cond_t cond;
	int done, err;
	struct rr_recv *recv;	/* the reply's, once done */
	struct rpcrdma_hdr *rh; /* the reply's transport header */
	size_t payload_off;
	struct rpcrdma_hdr *h; /* the call's transport header */

	struct rr_buf *bufs[2 * RPC_DDP_MAX_ITEMS + 4];
	unsigned nbufs;
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
};

struct rr_clnt {
	struct rpc_clnt base;
	struct rr_ep *ep;
	struct rr_conn *conn;
	pthread_mutex_t lock; /* protects slots, granted, outstanding */
	pthread_cond_t cond;  /* a credit came free */
	struct cslot *slots;
	unsigned granted, outstanding;
};

struct clnt_ddp {
	struct rpc_ddp base;
	struct cslot *s;
	size_t cap;	  /* encoding: room for the inline call */
	int force_chunks; /* encoding: every bulk item to a Read chunk */
	uint32_t reduced; /* padded bytes reduced so far (positions) */
	unsigned wused;	  /* decoding: Write chunks consumed */
};

/* Expose b to the server, unless the connection is going. */
static int expose(struct cslot *s, struct rr_buf *b)
{
	struct rr_conn *c = s->cl->conn;
	struct vb_conn *vc = rr_conn_enter(c);
	int rc = rr_buf_expose(s->cl->ep->reg, vc, b, 0);

	if (vc)
		rr_conn_leave(c);
	return rc;
}

static int add_buf(struct cslot *s, struct rr_buf *b)
{
	if (s->nbufs == sizeof(s->bufs) / sizeof(s->bufs[0])) {
		rr_buf_put(s->cl->ep->reg, b);
		return -E2BIG;
	}
	s->bufs[s->nbufs++] = b;
	return 0;
}

/* A buffer the server can reach, holding a copy of data (or data itself, zerocopy). */
static struct rr_buf *expose_data(struct cslot *s, void *data, size_t len, int copy)
{
	struct rr_clnt *cl = s->cl;
	struct rr_reg_ctx *reg = cl->ep->reg;
	struct rr_buf *b;

	if (rr_reg_kind(reg) == RR_REG_ZEROCOPY) {
		if (rr_buf_wrap(reg, data, len, &b) != 0)
			return NULL;
	} else {
		if (rr_buf_get(reg, len, RR_GET_EXPOSE, &b) != 0)
			return NULL;
		if (copy)
			memcpy(b->addr, data, len);
		if (expose(s, b) != 0) {
			rr_buf_put(reg, b);
			return NULL;
		}
	}
	return add_buf(s, b) == 0 ? b : NULL;
}

/* A buffer of our own that the server can reach (Reply chunk, long call). */
static struct rr_buf *own_exposed(struct cslot *s, size_t len)
{
	struct rr_reg_ctx *reg = s->cl->ep->reg;
	struct rr_buf *b;

	if (rr_buf_get(reg, len, RR_GET_EXPOSE, &b) != 0)
		return NULL;
	if (expose(s, b) != 0) {
		rr_buf_put(reg, b);
		return NULL;
	}
	return add_buf(s, b) == 0 ? b : NULL;
}

/* ---- DDP hooks ---- */

/* Arguments: inline when they fit, else a Read chunk at the item's position. */
static int clnt_put(struct rpc_ddp *ddp, XDR *xdrs, void *data, uint32_t len)
{
	struct clnt_ddp *cd = (struct clnt_ddp *)ddp;
	struct cslot *s = cd->s;
	uint32_t pos = xdr_getpos(xdrs);
	struct rr_buf *b;

	if (len == 0 || (!cd->force_chunks && pos + RNDUP4(len) + 128 <= cd->cap))
		return rpc_ddp_inline_ops.put(ddp, xdrs, data, len);
	if (s->h->nreads == RPCRDMA_MAX_READ_SEGS || !(b = expose_data(s, data, len, 1)))
		return -ENOMEM;
	s->h->reads[s->h->nreads++] = (struct rpcrdma_read_seg){
		.position = pos + cd->reduced, .seg = {b->rkey, len, (uintptr_t)b->addr}};
	cd->reduced += RNDUP4(len);
	rr_stat_add(&s->cl->conn->st.bytes_exposed, len);
	return rpc_ddp_note(ddp, pos, b->addr, len);
}

/* Results: from the Write chunk, from a chunk we pulled, or inline. */
static int clnt_get(struct rpc_ddp *ddp, XDR *xdrs, uint32_t len, void **data)
{
	struct clnt_ddp *cd = (struct clnt_ddp *)ddp;
	struct cslot *s = cd->s;
	struct rpc_call *call = s->call;
	uint32_t pos = xdr_getpos(xdrs), full = pos + cd->reduced;
	void *src = NULL;

	if (cd->wused < s->rh->nwrites && s->wbuf) {
		uint64_t got = 0;

		for (uint32_t i = 0; i < s->rh->writes[cd->wused].nsegs; i++)
			got += s->rh->writes[cd->wused].segs[i].length;
		cd->wused++;
		if (got) {
			if (got != len || len > s->wbuf->len)
				return -EBADMSG;
			src = s->wbuf->addr;
		}
	}
	for (uint32_t i = 0; !src && i < s->nrch; i++) {
		if (s->rch[i].position != 0 && s->rch[i].position == full) {
			if (s->rch[i].length < len)
				return -EBADMSG;
			src = s->pulled[i]->addr;
		}
	}
	if (!src)
		return rpc_clnt_ddp_get_inline(call, xdrs, len, data);
	if (call->reply_data && len <= call->reply_data_len) {
		if (src != call->reply_data)
			memcpy(call->reply_data, src, len);
		src = call->reply_data;
	}
	*data = src;
	cd->reduced += RNDUP4(len);
	return rpc_ddp_note(ddp, pos, src, len);
}

static const struct rpc_ddp_ops clnt_ddp_ops = {.get = clnt_get, .put = clnt_put};

/* ---- completions ---- */

static void slot_send_done(struct rr_conn *c, struct rr_wr *w, const struct vb_wc *wc)
{
	struct cslot *s = (struct cslot *)((char *)w - offsetof(struct cslot, send_wr));

	pthread_mutex_lock(&s->cl->lock);
	s->send_busy = 0;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->cl->lock);
}

static void slot_read_done(struct rr_conn *c, struct rr_wr *w, const struct vb_wc *wc)
{
	struct cslot *s = (struct cslot *)((char *)w - offsetof(struct cslot, read_wr));

	pthread_mutex_lock(&s->cl->lock);
	s->reads_busy = 0;
	s->read_status = wc->status;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->cl->lock);
}

/* Event loop: a reply's transport header; hand it to its caller. */
static void clnt_on_recv(struct rr_conn *c, struct rr_recv *r)
{
	struct rr_clnt *cl = c->side;
	struct rpcrdma_hdr *rh = malloc(sizeof(*rh));
	struct cslot **pp, *s = NULL;
	struct cur cu;
	int rc;

	cur_init(&cu, r->buf, r->len);
	rc = rh ? rpcrdma_hdr_decode(&cu, rh) : -ENOMEM;
	if (rc) {
		log_info("%s: undecodable reply header dropped: %s", c->peer, strerror(-rc));
		free(rh);
		rr_recv_repost(r);
		return;
	}
	pthread_mutex_lock(&cl->lock);
	if (rh->proc != RPCRDMA_DONE) {
		unsigned g = rh->credit ? rh->credit : 1;

		cl->granted = g < cl->ep->p.credits ? g : cl->ep->p.credits;
		c->st.credits_granted = cl->granted;
		pthread_cond_broadcast(&cl->cond);
	}
	for (pp = &cl->slots; *pp; pp = &(*pp)->next) {
		if ((*pp)->xid == rh->xid) {
			s = *pp;
			*pp = s->next;
			s->rh = rh;
			s->recv = r;
			s->payload_off = cu.pos;
			s->done = 1;
			if (rh->proc == RPCRDMA_ERROR)
				s->err = rh->err == RPCRDMA_ERR_VERS ? -EPROTONOSUPPORT : -EPROTO;
			pthread_cond_broadcast(&s->cond);
			break;
		}
	}
	pthread_mutex_unlock(&cl->lock);
	if (!s) {
		log_debug("%s: reply for unknown xid %#x dropped", c->peer, rh->xid);
		free(rh);
		rr_recv_repost(r);
	}
}

static void clnt_on_dead(struct rr_conn *c)
{
	struct rr_clnt *cl = c->side;

	pthread_mutex_lock(&cl->lock);
	for (struct cslot *s = cl->slots; s; s = s->next) {
		s->done = 1;
		s->err = -ECONNRESET;
		pthread_cond_broadcast(&s->cond);
	}
	cl->slots = NULL;
	pthread_cond_broadcast(&cl->cond);
	pthread_mutex_unlock(&cl->lock);
}

/* ---- the call ---- */

static int take_credit(struct rr_clnt *cl)
{
	int rc = 0;

	pthread_mutex_lock(&cl->lock);
	while (!rr_conn_is_dead(cl->conn) && cl->outstanding >= cl->granted)
		pthread_cond_wait(&cl->cond, &cl->lock);
	if (rr_conn_is_dead(cl->conn))
		rc = -ECONNRESET;
	else
		cl->outstanding++;
	pthread_mutex_unlock(&cl->lock);
	return rc;
}

/* Encode the call; returns its inline length, or -errno. Sets h->proc. */
static int encode_call(struct cslot *s, struct clnt_ddp *cd)
{
	struct rr_clnt *cl = s->cl;
	struct rr_conn *c = cl->conn;
	size_t cap = c->send_max > CALL_HDR_RESERVE ? c->send_max - CALL_HDR_RESERVE : 0;
	uint8_t *buf = s->send->buf + CALL_HDR_RESERVE;
	size_t long_cap = (size_t)cl->ep->p.max_io + 65536;
	struct rr_buf *lb;
	int len;

	for (int attempt = 0; attempt < 2; attempt++) {
		*cd = (struct clnt_ddp){
			.base.ops = &clnt_ddp_ops, .s = s, .cap = cap, .force_chunks = attempt};
		s->h->nreads = 0;
		len = rpc_encode_call(&cl->base, s->xid, s->call, buf, cap, &cd->base);
		if (len != -ENOSPC)
			return len;
	}
	/* a long call: the whole message in a Position-Zero Read chunk */
	if (!(lb = own_exposed(s, long_cap)))
		return -ENOMEM;
	*cd = (struct clnt_ddp){
		.base.ops = &clnt_ddp_ops, .s = s, .cap = long_cap, .force_chunks = 1};
	s->h->nreads = 1; /* room for the Position-Zero segment first */
	len = rpc_encode_call(&cl->base, s->xid, s->call, lb->addr, long_cap, &cd->base);
	if (len < 0)
		return len;
	s->h->reads[0] = (struct rpcrdma_read_seg){
		.position = 0, .seg = {lb->rkey, (uint32_t)len, (uintptr_t)lb->addr}};
	s->h->proc = RPCRDMA_NOMSG;
	rr_stat_add(&c->st.bytes_exposed, len);
	return 0;
}

/* Read-Write mode: chunks for the results. */
static int offer_chunks(struct cslot *s)
{
	struct rr_clnt *cl = s->cl;
	struct rpc_call *call = s->call;
	uint32_t room = cl->conn->recv_max;
	struct rr_buf *b;

	if (!(cl->ep->p.modes & RR_MODE_READ_WRITE))
		return 0;
	if (call->reply_data && call->reply_data_len) {
		b = expose_data(s, call->reply_data, call->reply_data_len, 0);
		if (!b)
			return -ENOMEM;
		s->wbuf = b;
		s->h->nwrites = 1;
		s->h->writes[0].nsegs = 1;
		s->h->writes[0].segs[0] =
			(struct rpcrdma_seg){b->rkey, call->reply_data_len, (uintptr_t)b->addr};
	}
	if (call->reply_hint + 256 > room) {
		uint32_t len = call->reply_hint + 1024;

		if (!(b = own_exposed(s, len)))
			return -ENOMEM;
		s->rbuf = b;
		s->h->has_reply = true;
		s->h->reply.nsegs = 1;
		s->h->reply.segs[0] = (struct rpcrdma_seg){b->rkey, len, (uintptr_t)b->addr};
	}
	return 0;
}

/* Read-Read mode: pull the chunks the server exposed, then answer RDMA_DONE. */
static int pull_exposed(struct cslot *s)
{
	struct rr_clnt *cl = s->cl;
	struct rr_conn *c = cl->conn;
	struct rr_batch b;
	int rc;

	if (s->rh->nreads == 0)
		return 0;
	rc = rpcrdma_read_chunks(s->rh, s->rch, &s->nrch);
	if (rc)
		return -EBADMSG;
	b.n = 0;
	for (uint32_t i = 0; i < s->nrch; i++) {
		const struct rpcrdma_read_chunk *ch = &s->rch[i];
		struct rr_buf *buf;
		uint8_t *dst;

		if (ch->length > (uint64_t)cl->ep->p.max_io + 65536)
			return -EBADMSG;
		if (rr_buf_get(cl->ep->reg, ch->length ? ch->length : 1, 0, &buf) != 0 ||
		    add_buf(s, buf) != 0 || rr_buf_wait(cl->ep->reg, buf) != 0)
			return -ENOMEM;
		s->pulled[i] = buf;
		dst = buf->addr;
		for (uint32_t k = ch->first; k < ch->first + ch->nsegs; k++) {
			const struct rpcrdma_seg *seg = &s->rh->reads[k].seg;

			if (seg->length &&
			    (rc = rr_batch_rdma(&b, VB_WR_RDMA_READ, dst, seg->length, buf->lkey,
						seg->offset, seg->handle)) != 0)
				return rc;
			dst += seg->length;
		}
		rr_stat_add(&c->st.bytes_rdma_read, (int64_t)ch->length);
	}
	if (b.n == 0)
		return 0;
	s->reads_busy = 1;
	rr_post(c, &b, &s->read_wr); /* completes, if only as a flush */
	pthread_mutex_lock(&cl->lock);
	while (s->reads_busy)
		pthread_cond_wait(&s->cond, &cl->lock);
	pthread_mutex_unlock(&cl->lock);
	return s->read_status == VB_WC_SUCCESS ? 0 : -EIO;
}

/* Wait for our last Send to complete, so its buffer and context may be reused. */
static void wait_send(struct cslot *s)
{
	pthread_mutex_lock(&s->cl->lock);
	while (s->send_busy)
		pthread_cond_wait(&s->cond, &s->cl->lock);
	pthread_mutex_unlock(&s->cl->lock);
}

/* Post a Send of the header (and payload) in the slot's buffer. */
static int post_send(struct cslot *s, struct vb_sge *sge, int nsge)
{
	struct rr_batch b = {.n = 0};

	rr_batch_send(&b, sge, nsge);
	s->send_busy = 1; /* until its completion, if only as a flush */
	return rr_post(s->cl->conn, &b, &s->send_wr);
}

static int send_done_msg(struct cslot *s)
{
	struct rr_conn *c = s->cl->conn;
	struct vb_sge sge;
	struct wcur w;

	wait_send(s);
	wcur_init(&w, s->send->buf, s->send->cap);
	if (rpcrdma_encode_done(&w, s->xid, s->cl->ep->p.credits) != 0)
		return -EINVAL;
	sge = (struct vb_sge){(uintptr_t)s->send->buf, (uint32_t)w.pos, c->send_mr->lkey};
	return post_send(s, &sge, 1);
}

/* Decode the RPC reply wherever it is: inline, in our Reply chunk, or pulled. */
static int decode_reply(struct cslot *s)
{
	struct rr_clnt *cl = s->cl;
	struct clnt_ddp cd = {.base.ops = &clnt_ddp_ops, .s = s};
	const uint8_t *buf = s->recv->buf + s->payload_off;
	size_t len = s->recv->len - s->payload_off;

	if (s->rh->proc == RPCRDMA_NOMSG) {
		if (s->rh->has_reply && s->rbuf) {
			uint64_t n = 0;

			for (uint32_t i = 0; i < s->rh->reply.nsegs; i++)
				n += s->rh->reply.segs[i].length;
			if (n > s->rbuf->len)
				return -EBADMSG;
			buf = s->rbuf->addr;
			len = n;
		} else if (s->nrch && s->rch[0].position == 0) {
			buf = s->pulled[0]->addr;
			len = s->rch[0].length;
		} else {
			return -EBADMSG;
		}
	} else if (s->rh->proc != RPCRDMA_MSG) {
		return -EBADMSG;
	}
	rr_stat_add(&cl->conn->st.replies, 1);
	return rpc_decode_reply(&cl->base, s->xid, s->call, buf, len, &cd.base);
}

/* Give everything of the call back: receive, registrations, Send buffer, credit. */
static void slot_finish(struct cslot *s)
{
	struct rr_clnt *cl = s->cl;
	struct rr_reg_ctx *reg = cl->ep->reg;
	struct vb_conn *vc;

	if (s->recv)
		rr_recv_repost(s->recv);
	wait_send(s);
	vc = rr_conn_enter(cl->conn);
	for (unsigned i = 0; i < s->nbufs; i++) {
		rr_buf_unexpose(reg, vc, s->bufs[i]);
		rr_buf_put(reg, s->bufs[i]);
	}
	if (vc)
		rr_conn_leave(cl->conn);
	rr_send_put(cl->conn, s->send);
	pthread_mutex_lock(&cl->lock);
	cl->outstanding--;
	pthread_cond_broadcast(&cl->cond);
	pthread_mutex_unlock(&cl->lock);
	pthread_cond_destroy(&s->cond);
	free(s->rh);
	free(s->h);
	free(s);
}

/* Wait for the reply until the call's deadline; on timeout the connection is
 * failed, since the server may still write into what we offered. */
static int wait_reply(struct cslot *s, int timeout_ms)
{
	struct rr_clnt *cl = s->cl;
	struct timespec ts = clock_deadline(CLOCK_REALTIME, timeout_ms);
	int timed_out = 0;

	pthread_mutex_lock(&cl->lock);
	while (!s->done && !timed_out)
		timed_out = pthread_cond_timedwait(&s->cond, &cl->lock, &ts) == ETIMEDOUT;
	if (!s->done) {
		for (struct cslot **pp = &cl->slots; *pp; pp = &(*pp)->next) {
			if (*pp == s) {
				*pp = s->next;
				break;
			}
		}
	}
	pthread_mutex_unlock(&cl->lock);
	if (s->done)
		return s->err;
	rr_conn_fail(cl->conn, "call timed out");
	return -ETIMEDOUT;
}

static int rr_call(struct rpc_clnt *base, struct rpc_call *call)
{
	struct rr_clnt *cl = (struct rr_clnt *)base;
	struct rr_conn *c = cl->conn;
	struct clnt_ddp cd;
	struct vb_sge sge[2];
	struct cslot *s;
	struct wcur w;
	int len, rc;

	call->xprt_priv = NULL;
	if ((rc = take_credit(cl)) != 0)
		return rc;
	s = calloc(1, sizeof(*s));
	if (s)
		s->h = malloc(sizeof(*s->h));
	if (!s || !s->h || !(s->send = rr_send_get(c))) {
		if (s)
			free(s->h);
		free(s);
		pthread_mutex_lock(&cl->lock);
		cl->outstanding--;
		pthread_cond_broadcast(&cl->cond);
		pthread_mutex_unlock(&cl->lock);
		return rr_conn_is_dead(c) ? -ECONNRESET : -ENOMEM;
	}
	s->cl = cl;
	s->call = call;
	s->xid = rpc_clnt_xid(base, call);
	s->send_wr.done = slot_send_done;
	s->read_wr.done = slot_read_done;
	pthread_cond_init(&s->cond, NULL);
	rpcrdma_hdr_init(s->h, s->xid, cl->ep->p.credits, RPCRDMA_MSG);

	len = encode_call(s, &cd);
	rc = len < 0 ? len : offer_chunks(s);
	wcur_init(&w, s->send->buf, CALL_HDR_RESERVE);
	if (rc == 0)
		rc = rpcrdma_hdr_encode(&w, s->h);
	if (rc) {
		slot_finish(s);
		return rc;
	}
	sge[0] = (struct vb_sge){(uintptr_t)s->send->buf, (uint32_t)w.pos, c->send_mr->lkey};
	sge[1] = (struct vb_sge){(uintptr_t)s->send->buf + CALL_HDR_RESERVE, (uint32_t)len,
				 c->send_mr->lkey};
	pthread_mutex_lock(&cl->lock);
	s->next = cl->slots;
	cl->slots = s;
	pthread_mutex_unlock(&cl->lock);
	rr_stat_add(&c->st.calls, 1);
	rr_stat_add(&c->st.bytes_inline_out, (int64_t)(w.pos + (size_t)len));
	rc = post_send(s, sge, s->h->proc == RPCRDMA_MSG ? 2 : 1);
	if (rc == 0)
		rc = wait_reply(s, call->timeout_ms ? call->timeout_ms : cl->ep->p.call_timeout_ms);
	else
		wait_reply(s, 1); /* unlink */
	if (rc == 0 && s->rh->nreads) {
		rc = pull_exposed(s);
		if (rc == 0)
			rc = send_done_msg(s);
	}
	if (rc == 0)
		rc = decode_reply(s);
	slot_finish(s);
	return rc;
}

static void rr_free_res(struct rpc_clnt *base, struct rpc_call *call)
{
	xdr_free(call->xdr_res, call->res);
}

static void rr_destroy(struct rpc_clnt *base)
{
	struct rr_clnt *cl = (struct rr_clnt *)base;
	struct rr_ep *ep = cl->ep;

	rr_conn_fail(cl->conn, "client closing");
	rr_conn_put(cl->conn);
	pthread_mutex_lock(&ep->lock);
	if (cond_wait_zero(&ep->cond, &ep->lock, &ep->nconns, 10000))
		log_warn("the connection did not close within 10 s");
	pthread_mutex_unlock(&ep->lock);
	rr_ep_destroy(ep);
	pthread_cond_destroy(&cl->cond);
	pthread_mutex_destroy(&cl->lock);
	free(cl);
}

static const struct rpc_clnt_ops rr_clnt_ops = {
	.call = rr_call,
	.free_res = rr_free_res,
	.destroy = rr_destroy,
};

/* Wait for the connection's outcome on its CM fd. */
static int await_established(struct rr_conn *c, int timeout_ms)
{
	struct pollfd pfd = {.fd = vb_conn_fd(c->vc), .events = POLLIN};
	uint64_t until = clock_now_ns() + (uint64_t)timeout_ms * 1000000u;
	struct vb_cm_event ev;

	for (;;) {
		int left = (int)((until - clock_now_ns()) / 1000000u);

		while (vb_conn_get_event(c->vc, &ev) == 0) {
			switch (ev.type) {
			case VB_CM_ESTABLISHED:
				rr_conn_set_peer_private(c, ev.private_data, ev.private_data_len);
				return 0;
			case VB_CM_REJECTED:
				return -ECONNREFUSED;
			case VB_CM_UNREACHABLE:
				return -EHOSTUNREACH;
			default:
				return ev.status ? ev.status : -ECONNRESET;
			}
		}
		if (clock_now_ns() >= until || left <= 0)
			return -ETIMEDOUT;
		poll(&pfd, 1, left);
	}
}

int rr_clnt_create(const struct rr_params *p, const char *host, const char *port,
		   struct rpc_clnt **out)
{
	struct rr_clnt *cl = calloc(1, sizeof(*cl));
	uint8_t pdata[RPCRDMA_CM_PRIVATE_LEN];
	struct vb_conn_param param;
	struct vb_conn *vc;
	int rc;

	if (!cl)
		return -ENOMEM;
	pthread_mutex_init(&cl->lock, NULL);
	pthread_cond_init(&cl->cond, NULL);
	cl->granted = 1; /* until the server's first grant */
	rpc_clnt_init(&cl->base, &rr_clnt_ops);
	rc = rr_ep_create(p, VB_ACCESS_REMOTE_READ | VB_ACCESS_REMOTE_WRITE, &cl->ep);
	if (rc == 0)
		rc = vb_resolve(cl->ep->dev, host, port, p->connect_timeout_ms, &vc);
	if (rc == 0)
		rc = rr_conn_create(cl->ep, vc, 0, &cl->conn);
	if (rc == 0) {
		rr_conn_get(cl->conn); /* ours until rr_destroy: calls after a death use it */
		cl->conn->side = cl;
		cl->conn->on_recv = clnt_on_recv;
		cl->conn->on_dead = clnt_on_dead;
		rr_conn_our_private(cl->ep, pdata);
		param = (struct vb_conn_param){.private_data = pdata,
					       .private_data_len = sizeof(pdata),
					       .responder_resources = p->rd_depth,
					       .initiator_depth = p->rd_depth};
		rc = vb_connect(vc, &param);
		if (rc == 0)
			rc = await_established(cl->conn, p->connect_timeout_ms);
		if (rc == 0)
			rc = rr_conn_start(cl->conn);
		if (rc)
			rr_conn_fail(cl->conn, strerror(-rc));
	}
	if (rc) {
		if (cl->ep) {
			if (cl->conn) {
				rr_destroy(&cl->base);
				return rc;
			}
			rr_ep_destroy(cl->ep);
		}
		pthread_cond_destroy(&cl->cond);
		pthread_mutex_destroy(&cl->lock);
		free(cl);
		return rc;
	}
	*out = &cl->base;
	return 0;
}

void rr_clnt_get_stats(struct rpc_clnt *base, struct rr_stats *out)
{
	struct rr_clnt *cl = (struct rr_clnt *)base;

	memset(out, 0, sizeof(*out));
	rr_stats_add(out, &cl->ep->st);
	rr_stats_add(out, &cl->conn->st);
}
