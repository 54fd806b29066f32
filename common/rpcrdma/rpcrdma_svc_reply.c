/*
 * rpcrdma_svc_reply.c: the RPC/RDMA server's answers (loop, but for what
 * prepare_reply does on a worker, for calls not run inline): credits granted,
 * RDMA_ERROR, the reply's RDMA Writes into Write and Reply chunks, Read-Read
 * exposure with its bound and deadline, and the Send.
 */
#include <stdlib.h>
#include <string.h>

#include "common/base/log.h"
#include "rpcrdma_svc.h"

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
	/* The client sends while it has fewer calls out than the last grant it
	 * has seen, and up to `credits` replies may still be on their way to it:
	 * a lower grant becomes the ceiling only once credits + 1 replies in a
	 * row have carried nothing higher. A higher one applies at once. */
	if (g >= sc->ceiling) {
		sc->ceiling = g;
		sc->window = sc->window_max = 0;
	} else {
		sc->window_max = g > sc->window_max ? g : sc->window_max;
		if (++sc->window > rq->srv->ep->p.credits) {
			sc->ceiling = sc->window_max;
			sc->window = sc->window_max = 0;
		}
	}
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
void rrs_send_done(struct rr_conn *c, struct rr_wr *w, const struct vb_wc *wc)
{
	struct rr_sreq *rq = (struct rr_sreq *)((char *)w - offsetof(struct rr_sreq, send_wr));

	rrs_dev_done(rq);
	rrs_send_put(rq);
	rrs_unpend(rq);
}

/* Send a bodiless header (RDMA_ERROR) for a call we will not run; rq has its
 * Send buffer (rrs_with_send). */
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
		rrs_release(rq); /* too short to answer: drop, repost */
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
		rrs_release(rq);
		return;
	}
	sge = (struct vb_sge){.addr = (uintptr_t)rq->send->buf,
			      .length = (uint32_t)w.pos,
			      .lkey = c->send_mr->lkey};
	b.n = 0;
	rr_batch_send(&b, &sge, 1, 1);
	give_back_credit(rq, 0);
	rq->pending = 1;
	rrs_dev_wait(rq);
	rr_post(c, &b, &rq->send_wr); /* rrs_send_done ends it, if only as a flush */
}

/* Answer RDMA_ERROR (ERR_VERS for -EPROTONOSUPPORT, else ERR_CHUNK). */
void rrs_answer_error(struct rr_sreq *rq, int rc)
{
	rq->answer_rc = rc;
	rrs_with_send(rq, send_error);
}

/* ---- building the reply ---- */

/* Bytes the reply's transport header may need, so the payload can follow it. */
size_t rrs_hdr_reserve(const struct rr_sreq *rq)
{
	size_t n = RPCRDMA_HDR_FIXED_LEN + 4 + 4 + 4;

	for (uint32_t i = 0; i < rq->hdr.nwrites; i++)
		n += 8 + (size_t)rq->hdr.writes[i].nsegs * RPCRDMA_SEG_LEN;
	if (rq->hdr.has_reply)
		n += 4 + (size_t)rq->hdr.reply.nsegs * RPCRDMA_SEG_LEN;
	if (rrs_rr_possible(rq))
		n += (RPC_DDP_MAX_ITEMS + 1) * (8 + RPCRDMA_SEG_LEN);
	return RNDUP4(n);
}

/* Whether c's bounds have room for bytes and keys more (c->lock held): its
 * windows count until their invalidation has completed. */
static int room(const struct rr_conn *c, size_t bytes, unsigned keys)
{
	const struct svc_conn *sc = c->side;

	return sc->exposed + bytes <= sc->srv->ep->p.exposed_max &&
	       sc->exposed_keys + c->windows_ending + keys <= sc->srv->windows_max;
}

/* Whether the loop may expose bytes and keys more now (c->lock held): the
 * bounds have room and no worker waits for it, which would otherwise lose the
 * room to the loop's calls every time. */
static int loop_room(const struct rr_sreq *rq, size_t bytes, unsigned keys)
{
	const struct svc_conn *sc = rq->conn->side;

	return !sc->exp_waiting && room(rq->conn, bytes, keys);
}

/* See rpcrdma_svc.h. */
int rrs_loop_may_expose(struct rr_sreq *rq, size_t bytes)
{
	/* (and a window, where each exposure takes one) */
	unsigned keys = rr_reg_keys_per_exposure(rq->srv->ep->reg) ? 1 : 0;
	int ok;

	pthread_mutex_lock(&rq->conn->lock);
	ok = loop_room(rq, bytes, keys);
	pthread_mutex_unlock(&rq->conn->lock);
	return ok;
}

/* Reserve bytes of the connection's bound to expose (Read-Read), and the
 * keys (memory windows, shared by every connection) they need, if its bounds
 * (exposed_max, windows_max) have room, the keys are free and no reply is
 * parked before (for room on this connection, for keys on any): else
 * -EAGAIN on the loop (nowait), where the call goes to a worker, and
 * -EINPROGRESS on a worker, which does not wait for it: the reply is parked
 * on the connection (rrs_park). */
static int reserve_exposure(struct rr_sreq *rq, size_t bytes, unsigned keys)
{
	struct rr_conn *c = rq->conn;
	struct svc_conn *sc = c->side;
	int rc = 0;

	if (bytes > rq->srv->ep->p.exposed_max)
		return -E2BIG; /* (keys never are: windows_max is at least what one needs) */
	rq->room_keys = keys;
	pthread_mutex_lock(&c->lock);
	if (c->dead) {
		rc = -ECONNRESET;
	} else if (!loop_room(rq, bytes, keys) ||
		   (keys && __atomic_load_n(&rq->srv->keys_waiting, __ATOMIC_RELAXED)) ||
		   (rc = rr_reg_keys_reserve(rq->srv->ep->reg, keys)) == -EAGAIN) {
		rc = rq->x.nowait ? -EAGAIN : -EINPROGRESS;
		rq->park_bytes = bytes;
		rq->park_keys = keys;
	} else if (rc == 0) {
		sc->exposed += bytes;
		sc->exposed_keys += keys;
		rq->exp_bytes = bytes;
		rq->exp_keys = keys;
	}
	pthread_mutex_unlock(&c->lock);
	return rc;
}

/* ---- waiting for keys: the server's queue, first come first served ---- */

/* srv->lock held: give rq the keys it waits for if they are free: 0 once
 * that is settled (park_keys 0; keys_rc -E2BIG if there are not so many),
 * -EAGAIN while they are not free. */
static int keys_grant(struct rr_server *srv, struct rr_sreq *rq)
{
	int rc = rr_reg_keys_reserve(srv->ep->reg, rq->park_keys);

	if (rc == -EAGAIN)
		return rc;
	rq->exp_keys = rc ? 0 : rq->park_keys;
	rq->keys_rc = rc;
	rq->park_keys = 0;
	return 0;
}

/* srv->lock held: c, whose oldest parked reply is rq, waits for keys last. */
static void keys_queue(struct rr_server *srv, struct rr_conn *c, struct rr_sreq *rq)
{
	struct svc_conn *sc = c->side;

	sc->keys_rq = rq;
	sc->keys_next = NULL;
	if (srv->keys_last)
		((struct svc_conn *)srv->keys_last->side)->keys_next = c;
	else
		__atomic_store_n(&srv->keys_waiting, c, __ATOMIC_RELAXED);
	srv->keys_last = c;
}

/* srv->lock held: c, which is queued (keys_rq set), waits no more. */
static void keys_unqueue(struct rr_server *srv, struct rr_conn *c)
{
	struct svc_conn *sc = c->side;
	struct rr_conn *prev = NULL;

	for (struct rr_conn *i = srv->keys_waiting; i != c;
	     i = ((struct svc_conn *)i->side)->keys_next)
		prev = i;
	if (prev)
		((struct svc_conn *)prev->side)->keys_next = sc->keys_next;
	else
		__atomic_store_n(&srv->keys_waiting, sc->keys_next, __ATOMIC_RELAXED);
	if (srv->keys_last == c)
		srv->keys_last = prev;
	sc->keys_rq = NULL;
}

/* srv->lock held: the first waiters whose keys are free get them, and their
 * connections are unparked (but self, which is at it). */
static void keys_hand_out(struct rr_server *srv, struct rr_conn *self)
{
	struct rr_conn *c;

	while ((c = srv->keys_waiting) &&
	       keys_grant(srv, ((struct svc_conn *)c->side)->keys_rq) == 0) {
		keys_unqueue(srv, c);
		if (c != self)
			rrs_unpark_later(c);
	}
}

/* Loop: rq, c's oldest parked reply, takes the keys it needs in its turn: 0
 * (or keys_rc) once it has them, else -EAGAIN with c queued, to be unparked
 * by whoever frees them (rrs_keys_freed). A waiter queues itself before it
 * looks for keys, and keys go back (under the strategy's lock) before the
 * freer looks for waiters: one of the two sees the other. */
static int keys_take(struct rr_conn *c, struct rr_sreq *rq)
{
	struct svc_conn *sc = c->side;
	struct rr_server *srv = sc->srv;
	int rc;

	if (!rq->room_keys)
		return 0; /* (it needs none: its keys fields are not touched) */
	pthread_mutex_lock(&srv->lock);
	if (rq->park_keys) {
		if (!sc->keys_rq)
			keys_queue(srv, c, rq);
		keys_hand_out(srv, c);
	}
	rc = rq->park_keys ? -EAGAIN : rq->keys_rc;
	pthread_mutex_unlock(&srv->lock);
	return rc;
}

/* See rpcrdma_svc.h. */
void rrs_keys_freed(struct rr_server *srv)
{
	if (!__atomic_load_n(&srv->keys_waiting, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&srv->lock);
	keys_hand_out(srv, NULL);
	pthread_mutex_unlock(&srv->lock);
}

/* Loop: answer the parked replies that fit now, oldest first. */
static void unpark_now(struct rr_conn *c)
{
	struct svc_conn *sc = c->side;

	for (;;) {
		struct rr_sreq *rq;
		int rc;

		pthread_mutex_lock(&c->lock);
		rq = sc->park_head;
		if (!rq || c->dead || !room(c, rq->park_bytes, rq->room_keys)) {
			pthread_mutex_unlock(&c->lock);
			break;
		}
		pthread_mutex_unlock(&c->lock);
		/* (only this loop takes from the head, or room while it waits) */
		if ((rc = keys_take(c, rq)) == -EAGAIN) {
			if (!rq->keys_waited) {
				rq->keys_waited = 1;
				rr_stat_add(&c->st.window_waits, 1);
			}
			break;
		}
		pthread_mutex_lock(&c->lock);
		if (!(sc->park_head = rq->park_next))
			sc->park_tail = NULL;
		sc->exp_waiting--;
		if (rc == 0) {
			sc->exposed += rq->park_bytes;
			sc->exposed_keys += rq->room_keys;
			rq->exp_bytes = rq->park_bytes;
		}
		pthread_mutex_unlock(&c->lock);
		rq->run_rc = rc; /* (-E2BIG: more keys than there are: ERR_CHUNK) */
		rrs_reply(rq);
	}
}

/* See rpcrdma_svc.h. */
void rrs_park(struct rr_sreq *rq)
{
	struct rr_conn *c = rq->conn;
	struct svc_conn *sc = c->side;

	rq->park_next = NULL;
	pthread_mutex_lock(&c->lock);
	if (sc->park_tail)
		sc->park_tail->park_next = rq;
	else
		sc->park_head = rq;
	sc->park_tail = rq;
	sc->exp_waiting++;
	pthread_mutex_unlock(&c->lock);
	rr_stat_add(&c->st.exposure_waits, 1);
	unpark_now(c); /* room may have freed since the worker looked */
}

/* Loop: rrs_unpark_later's job. */
static void unpark(void *arg)
{
	struct rr_conn *c = arg;

	unpark_now(c);
	rr_conn_put(c);
}

/* See rpcrdma_svc.h. */
void rrs_park_init(struct rr_conn *c)
{
	struct svc_conn *sc = c->side;

	evloop_job_init(&sc->unpark_job, unpark, c);
}

/* See rpcrdma_svc.h. */
void rrs_unpark_later(struct rr_conn *c)
{
	struct svc_conn *sc = c->side;

	rr_conn_post(c, &sc->unpark_job);
}

/* See rpcrdma_svc.h. */
void rrs_park_drop(struct rr_conn *c)
{
	struct svc_conn *sc = c->side;
	struct rr_sreq *list;

	pthread_mutex_lock(&c->lock);
	list = sc->park_head;
	sc->park_head = sc->park_tail = NULL;
	sc->exp_waiting = 0;
	pthread_mutex_unlock(&c->lock);
	pthread_mutex_lock(&sc->srv->lock);
	if (sc->keys_rq) { /* (the ones behind may fit in what is free) */
		keys_unqueue(sc->srv, c);
		keys_hand_out(sc->srv, NULL);
	}
	pthread_mutex_unlock(&sc->srv->lock);
	while (list) {
		struct rr_sreq *rq = list;

		list = rq->park_next;
		rrs_release(rq);
	}
}

/* The registered buffer an item goes out of; copies it into one if needed
 * (on the loop, registered there and then). */
static struct rr_buf *item_buf(struct rr_sreq *rq, struct rr_item *it, unsigned flags)
{
	struct rr_reg_ctx *reg = rq->srv->ep->reg;
	struct rr_buf *b = rrs_buf_find(rq, it->data, it->len);

	if (b && (!(flags & RR_GET_EXPOSE) || rr_buf_exposable(reg, b)))
		return b;
	b = rrs_buf_get(rq, it->len, flags | rrs_get_how(rq));
	if (!b)
		return NULL;
	memcpy(b->addr, it->data, it->len);
	it->data = b->addr;
	return b;
}

/* The keys rq's Read-Read exposure takes where each is a window of its own
 * (one per buffer, as expose_items binds them); 0 where keys cost nothing. */
static unsigned keys_needed(const struct rr_sreq *rq, unsigned nitems)
{
	unsigned n = rq->long_reply && !rq->hdr.has_reply;

	if (!rr_reg_keys_per_exposure(rq->srv->ep->reg))
		return 0;
	for (unsigned i = 0; i < nitems; i++) {
		unsigned j = 0;

		if (rq->items[i].wchunk >= 0)
			continue;
		while (j < i && (rq->items[j].wchunk >= 0 || rq->items[j].buf != rq->items[i].buf))
			j++;
		n += j == i;
	}
	return n;
}

/* Every bulk item in a registered buffer, every registration of the request
 * finished, Read-Read's exposure reserved: on a worker, waiting for what it
 * must but room to expose (-EINPROGRESS: rrs_park); on the loop
 * (rq->x.nowait), -EAGAIN where it would wait. */
int rrs_prepare_reply(struct rr_sreq *rq)
{
	struct rr_reg_ctx *reg = rq->srv->ep->reg;
	unsigned nitems = rq->res_ddp.base.nitems;
	size_t bytes = rq->long_reply && !rq->hdr.has_reply ? rq->x.reply_len : 0;
	int rc;

	for (unsigned i = 0; i < nitems; i++) {
		struct rr_item *it = &rq->items[i];

		if (!(it->buf = item_buf(rq, it, it->wchunk < 0 ? RR_GET_EXPOSE : 0)))
			return rq->x.nowait ? -EAGAIN : -ENOMEM;
		if (it->wchunk < 0)
			bytes += it->len;
	}
	for (unsigned i = 0; i < rq->nbufs; i++)
		if ((rc = rr_buf_wait(reg, rq->bufs[i])) != 0)
			return rc;
	/* last: a parked reply is ready */
	return bytes ? reserve_exposure(rq, bytes, keys_needed(rq, nitems)) : 0;
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

/* The bytes of b that the Read-Read items going out of it cover: what its
 * window may show, and not what an earlier request left in the rest of it. */
static size_t items_span(const struct rr_sreq *rq, unsigned nitems, const struct rr_buf *b,
			 const uint8_t **lo)
{
	const uint8_t *hi = NULL;

	*lo = NULL;
	for (unsigned i = 0; i < nitems; i++) {
		const struct rr_item *it = &rq->items[i];
		const uint8_t *d = it->data;

		if (it->buf != b || it->wchunk >= 0)
			continue;
		if (!*lo || d < *lo)
			*lo = d;
		if (!hi || d + it->len > hi)
			hi = d + it->len;
	}
	return (size_t)(hi - *lo);
}

/* Loop: expose [at, at + len) of b with one of rq's keys (exp_keys). */
static int expose_one(struct rr_sreq *rq, struct vb_conn *vc, struct rr_buf *b, const void *at,
		      size_t len)
{
	int rc = rr_buf_expose(rq->srv->ep->reg, vc, b, at, len,
			       rq->exp_keys ? RR_EXPOSE_RESERVED : 0);

	if (rc == 0 && rq->exp_keys)
		rq->exp_keys--;
	return rc;
}

/* Loop: expose the Read-Read items (and a long reply) and list them in rh's Read list. */
static int expose_items(struct rr_sreq *rq, struct rpcrdma_hdr *rh, unsigned nitems, int long_rr)
{
	struct vb_conn *vc;
	int rc = 0;

	if (rq->exp_bytes == 0)
		return 0;
	if (!(vc = rr_conn_enter(rq->conn)))
		return -ECONNRESET;
	if (long_rr) {
		rc = expose_one(rq, vc, rq->reply_buf, rq->reply_buf->addr, rq->x.reply_len);
		rh->reads[rh->nreads++] = (struct rpcrdma_read_seg){
			.position = 0,
			.seg = {rq->reply_buf->rkey, (uint32_t)rq->x.reply_len,
				(uintptr_t)rq->reply_buf->addr}};
	}
	for (unsigned i = 0; i < nitems && rc == 0; i++) {
		struct rr_item *it = &rq->items[i];

		if (it->wchunk >= 0)
			continue;
		if (!it->buf->exposed) {
			const uint8_t *lo;
			size_t len = items_span(rq, nitems, it->buf, &lo);

			rc = expose_one(rq, vc, it->buf, lo, len);
		}
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

/* See rpcrdma_svc.h. */
void rrs_end_exposure(struct rr_sreq *rq)
{
	rrs_unpend(rq);
}

/* Make the reply's Send a Send with Invalidate of the one key the call's
 * chunks named, where the client said it takes that (RFC 8797 private data)
 * and the device can: the client then need not invalidate it itself before
 * the call completes, as the Linux client does when the server is Linux's. */
static void remote_invalidate(struct rr_sreq *rq, struct vb_send_wr *send)
{
	struct rr_conn *c = rq->conn;
	uint32_t key;

	if (!c->peer_remote_inv || !rpcrdma_hdr_one_handle(&rq->hdr, &key))
		return;
	send->opcode = VB_WR_SEND_WITH_INV;
	send->invalidate_rkey = key;
	rr_stat_add(&c->st.remote_invs, 1);
}

/* Loop: build and post the reply of a dispatched call. */
int rrs_post_reply(struct rr_sreq *rq)
{
	struct rr_conn *c = rq->conn;
	unsigned nitems = rq->res_ddp.base.nitems;
	int long_reply = rq->long_reply;
	struct rr_batch b;
	struct rpcrdma_hdr hdr, *rh = &hdr;
	struct vb_sge sge[2];
	struct wcur w;
	int rc, long_rr = long_reply && !rq->hdr.has_reply, exposing;

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
	sge[0] = (struct vb_sge){(uintptr_t)rq->send->buf, (uint32_t)w.pos, c->send_mr->lkey};
	sge[1] = (struct vb_sge){(uintptr_t)rq->send->buf + rq->reserve, (uint32_t)rq->x.reply_len,
				 c->send_mr->lkey};
	if (rc == 0)
		rc = rr_batch_send(&b, sge, long_reply ? 1 : 2, 1);
	if (rc)
		return rc; /* rrs_release undoes the exposure */
	remote_invalidate(rq, &b.wr[b.n - 1]);
	rr_stat_add(&c->st.bytes_inline_out, (int64_t)(w.pos + (long_reply ? 0 : rq->x.reply_len)));
	rr_stat_add(&c->st.replies, 1);

	rq->pending = 1 + exposing;
	if (exposing)
		start_exposure(rq);
	give_back_credit(rq, exposing);
	rrs_dev_wait(rq);
	rr_post(c, &b, &rq->send_wr); /* rrs_send_done ends it, if only as a flush */
	return 0;
}
