/*
 * rpcrdma_post.c: work requests of a connection: chains built, posted or
 * queued for send-queue slots, their completions, and what is owed when the
 * connection goes (see "Send queue" and "Completions" in rpcrdma_int.h).
 */
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/log.h"
#include "common/base/poller.h"
#include "rpcrdma_int.h"

#define CQ_BATCH 32

/* Complete the contexts of list (taken off the connection) with a flush. */
static void flush_list(struct rr_conn *c, struct rr_wr *list)
{
	struct vb_wc wc = {.status = VB_WC_WR_FLUSH_ERR};

	while (list) {
		struct rr_wr *w = list;

		list = w->next;
		w->prev = w->next = NULL;
		wc.wr_id = (uintptr_t)w;
		w->done(c, w, &wc);
	}
}

/* In the loop, after rr_conn_quiesce: contexts owed by posts that came too late. */
static void flush_owed_in_loop(void *arg)
{
	struct rr_conn *c = arg;
	struct rr_wr *list;

	pthread_mutex_lock(&c->lock);
	list = c->owed;
	c->owed = NULL;
	pthread_mutex_unlock(&c->lock);
	flush_list(c, list);
	rr_conn_put(c);
}

/* ---- chains of work requests ---- */

int rr_batch_rdma(struct rr_batch *b, enum vb_wr_opcode op, void *addr, uint32_t len, uint32_t lkey,
		  uint64_t raddr, uint32_t rkey)
{
	struct vb_send_wr *wr;

	if (b->n == RR_BATCH_MAX)
		return -E2BIG;
	b->sge[b->n] = (struct vb_sge){.addr = (uintptr_t)addr, .length = len, .lkey = lkey};
	wr = &b->wr[b->n];
	*wr = (struct vb_send_wr){.sg_list = &b->sge[b->n],
				  .num_sge = 1,
				  .opcode = op,
				  .remote_addr = raddr,
				  .rkey = rkey};
	b->n++;
	return 0;
}

int rr_batch_send(struct rr_batch *b, struct vb_sge *sge, int nsge, int answered)
{
	if (b->n == RR_BATCH_MAX)
		return -E2BIG;
	b->wr[b->n] = (struct vb_send_wr){.sg_list = sge,
					  .num_sge = nsge,
					  .opcode = VB_WR_SEND,
					  .send_flags = answered ? VB_SEND_ANSWERED : 0};
	b->n++;
	return 0;
}

int rr_batch_read_chunk(struct rr_batch *b, const struct rpcrdma_hdr *h,
			const struct rpcrdma_read_chunk *ch, const struct rr_buf *buf)
{
	uint8_t *dst = buf->addr;
	int rc;

	if (ch->length > buf->len)
		return -EMSGSIZE;
	for (uint32_t s = ch->first; s < ch->first + ch->nsegs; s++) {
		const struct rpcrdma_seg *seg = &h->reads[s].seg;

		if (seg->length == 0)
			continue;
		rc = rr_batch_rdma(b, VB_WR_RDMA_READ, dst, seg->length, buf->lkey, seg->offset,
				   seg->handle);
		if (rc)
			return rc;
		dst += seg->length;
	}
	return 0;
}

int rr_batch_write_chunk(struct rr_batch *b, void *addr, uint32_t len, uint32_t lkey,
			 const struct rpcrdma_write_chunk *wc, uint32_t *written)
{
	uint8_t *p = addr;
	uint32_t left = len;
	int rc;

	for (uint32_t i = 0; i < wc->nsegs; i++) {
		const struct rpcrdma_seg *s = &wc->segs[i];
		uint32_t n = left < s->length ? left : s->length;

		written[i] = n;
		if (n == 0)
			continue;
		rc = rr_batch_rdma(b, VB_WR_RDMA_WRITE, p, n, lkey, s->offset, s->handle);
		if (rc)
			return rc;
		p += n;
		left -= n;
	}
	return left ? -ENOSPC : 0;
}

/* ---- posting ---- */

struct rr_chain {
	struct rr_chain *next;
	struct rr_wr *ctx;
	unsigned n;
	struct vb_send_wr *wr; /* n of them, then their SGEs, in the same allocation */
};

/* The loop watches the CQ again if nobody did (rr_conn_watch; c->lock held). */
static void watch_locked(struct rr_conn *c)
{
	if (c->cq_parked && c->cq_io)
		evloop_io_set(c->ep->loop, c->cq_io, EVLOOP_IN);
	c->cq_parked = 0;
}

/* Put ctx on the owed list (c->lock held). */
static void owe(struct rr_conn *c, struct rr_wr *ctx)
{
	ctx->prev = NULL;
	ctx->next = c->owed;
	if (c->owed)
		c->owed->prev = ctx;
	c->owed = ctx;
}

/* Take ctx off the owed list (c->lock held). */
static void unowe(struct rr_conn *c, struct rr_wr *ctx)
{
	if (ctx->prev)
		ctx->prev->next = ctx->next;
	else
		c->owed = ctx->next;
	if (ctx->next)
		ctx->next->prev = ctx->prev;
	ctx->prev = ctx->next = NULL;
}

/* The SGEs of n chained WRs. */
static unsigned chain_sges(const struct vb_send_wr *wr, unsigned n)
{
	unsigned nsge = 0;

	for (unsigned i = 0; i < n; i++)
		nsge += (unsigned)wr[i].num_sge;
	return nsge;
}

/* Copy n chained WRs to dst, linked in order, and their SGEs to sge. */
static void chain_copy_to(struct vb_send_wr *dst, struct vb_sge *sge, const struct vb_send_wr *wr,
			  unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		dst[i] = wr[i];
		memcpy(sge, wr[i].sg_list, (size_t)wr[i].num_sge * sizeof(*sge));
		dst[i].sg_list = sge;
		dst[i].next = i + 1 < n ? &dst[i + 1] : NULL;
		sge += wr[i].num_sge;
	}
}

/* A copy of n chained WRs and their SGEs, to post later. */
static struct rr_chain *chain_copy(const struct vb_send_wr *wr, unsigned n, struct rr_wr *ctx)
{
	size_t nsge = chain_sges(wr, n);
	struct rr_chain *ch = malloc(sizeof(*ch) + n * sizeof(*wr) + nsge * sizeof(struct vb_sge));

	if (!ch)
		return NULL;
	ch->next = NULL;
	ch->ctx = ctx;
	ch->n = n;
	ch->wr = (struct vb_send_wr *)(ch + 1);
	chain_copy_to(ch->wr, (struct vb_sge *)(ch->wr + n), wr, n);
	return ch;
}

/* Hand chains whose slots are taken to the provider in one call (c->lock not
 * held); they were counted in c->posting as nposts. A failed post may or may
 * not have queued what it was given (rxe queues the chain, then its doorbell
 * write() fails), so their contexts stay owed: a completion, or the flush made
 * up at teardown, ends each. */
static void post_failed(struct rr_conn *c, int rc)
{
	char why[96];

	rr_stat_add(&c->st.post_failures, 1);
	snprintf(why, sizeof(why), "cannot post work requests: %s", strerror(-rc));
	rr_conn_fail(c, why);
}

static void post_chain(struct rr_conn *c, struct vb_send_wr *wr, unsigned nposts)
{
	struct vb_send_wr *bad = NULL;
	int rc = vb_post_send(c->vc, wr, &bad);

	rr_stat_add(&c->st.posts, 1);
	pthread_mutex_lock(&c->lock);
	c->posting -= nposts;
	if (c->posting == 0)
		pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	if (rc)
		post_failed(c, rc);
}

/* Take the slots of an n-WR chain for ctx (c->lock held); it goes out next
 * (hand_over). */
static void take_slots(struct rr_conn *c, unsigned n, struct rr_wr *ctx)
{
	c->sq_free -= n;
	ctx->nwr = n;
	owe(c, ctx);
	c->posting++;
}

/* The connection whose completions this thread is taking (drain_cq): the
 * chains it posts there are held until the batch is handled. */
static __thread struct rr_conn *holder;

/* Post the chains c holds, in one call (the holder only). */
static void post_held(struct rr_conn *c)
{
	if (c->hold.nwr == 0)
		return;
	post_chain(c, c->hold.wr, c->hold.nchains);
	c->hold.nwr = c->hold.nsge = c->hold.nchains = 0;
}

/* After take_slots (c->lock not held): the holder of c's completions holds
 * the chain, behind what it holds already (posting that first if there is no
 * room); anyone else posts it at once. */
static void hand_over(struct rr_conn *c, struct vb_send_wr *wr, unsigned n)
{
	struct rr_hold *h = &c->hold;
	unsigned nsge;

	if (holder != c) {
		post_chain(c, wr, 1);
		return;
	}
	nsge = chain_sges(wr, n);
	if (h->nwr + n > RR_HOLD_WR || h->nsge + nsge > 2 * RR_HOLD_WR)
		post_held(c);
	if (n > RR_HOLD_WR || nsge > 2 * RR_HOLD_WR) { /* longer than the hold */
		post_chain(c, wr, 1);
		return;
	}
	chain_copy_to(&h->wr[h->nwr], &h->sge[h->nsge], wr, n);
	if (h->nwr)
		h->wr[h->nwr - 1].next = &h->wr[h->nwr];
	h->nwr += n;
	h->nsge += nsge;
	h->nchains++;
}

/* Post the queued chains that now fit, in order (c->lock not held). */
static void post_queued(struct rr_conn *c)
{
	for (;;) {
		struct rr_chain *ch;

		pthread_mutex_lock(&c->lock);
		ch = c->queued;
		if (!ch || c->dead || c->sq_free < ch->n) {
			pthread_mutex_unlock(&c->lock);
			return;
		}
		c->queued = ch->next;
		if (!c->queued)
			c->queued_tail = NULL;
		take_slots(c, ch->n, ch->ctx);
		pthread_mutex_unlock(&c->lock);
		hand_over(c, ch->wr, ch->n);
		free(ch);
	}
}

int rr_post(struct rr_conn *c, struct rr_batch *b, struct rr_wr *ctx)
{
	struct rr_chain *ch = NULL;
	int rc = 0, late = 0;

	for (unsigned i = 0; i < b->n; i++) {
		b->wr[i].next = i + 1 < b->n ? &b->wr[i + 1] : NULL;
		b->wr[i].wr_id = 0;
		b->wr[i].send_flags &= ~VB_SEND_SIGNALED;
	}
	if (b->n) {
		b->wr[b->n - 1].send_flags |= VB_SEND_SIGNALED;
		b->wr[b->n - 1].wr_id = (uintptr_t)ctx;
	}
	ctx->nwr = 0;
	pthread_mutex_lock(&c->lock);
	if (c->dead || b->n == 0 || b->n > c->sq_depth) {
		rc = c->dead ? -ECONNRESET : -E2BIG;
	} else if (c->queued || c->sq_free < b->n) {
		if ((ch = chain_copy(b->wr, b->n, ctx)) == NULL) {
			rc = -ENOMEM;
		} else if (c->queued_tail) {
			c->queued_tail->next = ch;
			c->queued_tail = ch;
		} else {
			c->queued = c->queued_tail = ch;
		}
	} else {
		take_slots(c, b->n, ctx);
		pthread_mutex_unlock(&c->lock);
		hand_over(c, b->wr, b->n);
		return 0;
	}
	if (rc) {
		owe(c, ctx);
		late = c->qp_gone; /* the teardown that completes owed contexts is over */
	}
	pthread_mutex_unlock(&c->lock);
	if (rc == -ENOMEM || rc == -E2BIG)
		rr_conn_fail(c,
			     rc == -E2BIG ? "a chain longer than the send queue" : "out of memory");
	if (late)
		rr_conn_post(c, &c->flush_job);
	return rc;
}

/* See rpcrdma_int.h. */
void rr_post_own(struct vb_conn *vc, struct rr_wr *ctx, int (*post)(struct vb_conn *vc, void *arg),
		 void *arg)
{
	struct rr_conn *c = vc->context;
	int rc;

	ctx->nwr = 0;
	pthread_mutex_lock(&c->lock);
	owe(c, ctx);
	watch_locked(c); /* its completion must be taken: a lone caller left the CQ */
	pthread_mutex_unlock(&c->lock);
	if ((rc = post(vc, arg)) != 0)
		post_failed(c, rc);
}

/* ---- completions ---- */

static void handle_wc(struct rr_conn *c, const struct vb_wc *wc)
{
	struct rr_wr *w = (struct rr_wr *)(uintptr_t)wc->wr_id;

	if (w == NULL) {
		/* an unsignalled work request that failed */
		if (wc->status != VB_WC_WR_FLUSH_ERR)
			rr_conn_fail(c, vb_wc_status_str(wc->status));
		return;
	}
	if (w->done == NULL) { /* a receive */
		struct rr_recv *r = (struct rr_recv *)w;

		pthread_mutex_lock(&c->lock);
		c->posted_recvs--;
		pthread_mutex_unlock(&c->lock);
		if (wc->status != VB_WC_SUCCESS) {
			if (wc->status != VB_WC_WR_FLUSH_ERR)
				rr_conn_fail(c, vb_wc_status_str(wc->status));
			return;
		}
		r->len = wc->byte_len;
		r->inv_rkey = wc->wc_flags & VB_WC_WITH_INV ? wc->invalidated_rkey : 0;
		rr_stat_add(&c->st.bytes_inline_in, wc->byte_len);
		if (c->dead)
			return;
		c->on_recv(c, r);
		return;
	}
	pthread_mutex_lock(&c->lock);
	c->sq_free += w->nwr;
	unowe(c, w);
	pthread_mutex_unlock(&c->lock);
	if (wc->status != VB_WC_SUCCESS && wc->status != VB_WC_WR_FLUSH_ERR)
		rr_conn_fail(c, vb_wc_status_str(wc->status));
	w->done(c, w, wc);
	post_queued(c);
}

/* Poll until a poll comes short (the CQ was empty then; the caller arms and
 * looks once more), posting after each batch what its handlers held. Returns
 * how many were taken, or -errno if the CQ failed. */
static int drain_cq(struct rr_conn *c)
{
	struct rr_conn *outer = holder;
	struct vb_wc wc[CQ_BATCH];
	int n, took = 0;

	holder = c;
	do {
		if ((n = vb_poll_cq(c->cq, CQ_BATCH, wc)) < 0)
			break;
		for (int i = 0; i < n; i++)
			handle_wc(c, &wc[i]);
		took += n;
		post_held(c);
	} while (n == CQ_BATCH);
	holder = outer;
	return n < 0 ? n : took;
}

/* The CQ's fd was readable: take every completion, and arm again (the loop's
 * or a polling caller's; one at a time). */
static void cq_ready(void *arg)
{
	struct rr_conn *c = arg;
	int failed = 0;

	pthread_mutex_lock(&c->cq_lock);
	vb_cq_ack(c->cq);
	for (;;) {
		if (drain_cq(c) < 0) {
			failed = 1;
			break;
		}
		vb_cq_arm(c->cq);
		/* a completion may have slipped in before the arm */
		if (drain_cq(c) == 0)
			break;
	}
	pthread_mutex_unlock(&c->cq_lock);
	if (failed)
		rr_conn_fail(c, "completion queue error");
}

/* The loop's: the fd was readable, or the connection started. An event the
 * loop fetched just before a caller took the CQ may still come here: the
 * caller is then told to look again. */
static void cq_loop_ready(void *arg)
{
	struct rr_conn *c = arg;

	cq_ready(c);
	pthread_mutex_lock(&c->lock);
	rr_conn_poke(c);
	pthread_mutex_unlock(&c->lock);
}

static void cq_io(void *arg, unsigned events)
{
	cq_loop_ready(arg);
}

/* See rpcrdma_int.h. */
int rr_conn_poll_take(struct rr_conn *c)
{
	int took = 0;

	pthread_mutex_lock(&c->lock);
	if (c->poke.rfd < 0 && wakefd_open(&c->poke, false) != 0)
		c->poke.rfd = -1;
	if (c->cq_io && !c->cq_caller && !c->dead && c->poke.rfd >= 0) {
		c->cq_caller = took = 1;
		if (!c->cq_parked)
			evloop_io_set(c->ep->loop, c->cq_io, 0);
		c->cq_parked = 0;
	}
	pthread_mutex_unlock(&c->lock);
	return took;
}

/* A look of rr_conn_poll's, for clock_spin_wait. */
struct poll_look {
	struct pollfd p[2];
	int spun; /* the last look was one of the spin's, and found something */
};

static int poll_look(void *arg, int ms)
{
	struct poll_look *w = arg;
	int n = poll(w->p, 2, ms);

	w->spun = ms == 0 && n > 0;
	return n;
}

/* See rpcrdma_int.h. */
void rr_conn_poll(struct rr_conn *c, int ms)
{
	struct poll_look w = {.p = {{.fd = vb_cq_fd(c->cq), .events = POLLIN},
				    {.fd = c->poke.rfd, .events = POLLIN}}};
	struct pollfd *p = w.p;
	uint64_t spin = (uint64_t)c->ep->p.spin_us * 1000u;
	int n;

	/* the CQ is armed: whoever took completions last armed it again; the
	 * spin is fixed, else the adapted window (rr_conn_poll_adapt), if
	 * any, where a processor is spare for it */
	if (spin == 0) {
		int (*spare)(void) = c->ep->p.spin_spare ? c->ep->p.spin_spare : clock_spin_spare;

		spin = clock_spin_window(c->spin_window_ns, (uint64_t)c->ep->p.spin_max_us * 1000u);
		if (spin && !spare())
			spin = 0;
	}
	n = clock_spin_wait(spin, ms, poll_look, &w);
	if (n <= 0)
		return;
	if (w.spun && p[0].revents)
		rr_stat_add(&c->st.caller_spun, 1);
	if (p[1].revents)
		wakefd_take(&c->poke);
	if (p[0].revents)
		cq_ready(c);
}

/* See rpcrdma_int.h. */
void rr_conn_poll_adapt(struct rr_conn *c, uint64_t took_ns, int came)
{
	if (c->ep->p.spin_us == 0)
		clock_spin_adapt(&c->spin_window_ns, (uint64_t)c->ep->p.spin_max_us * 1000u,
				 took_ns, came);
}

/* See rpcrdma_int.h. */
void rr_conn_poll_give(struct rr_conn *c, const unsigned *calls)
{
	int park;

	pthread_mutex_lock(&c->lock);
	park = __atomic_load_n(calls, __ATOMIC_RELAXED) <= 1;
	c->cq_caller = 0;
	c->cq_parked = park && c->cq_io;
	if (c->cq_io && !park)
		evloop_io_set(c->ep->loop, c->cq_io, EVLOOP_IN);
	pthread_mutex_unlock(&c->lock);
}

/* See rpcrdma_int.h. */
void rr_conn_watch(struct rr_conn *c)
{
	pthread_mutex_lock(&c->lock);
	watch_locked(c);
	pthread_mutex_unlock(&c->lock);
}

static void cm_ready(void *arg)
{
	struct rr_conn *c = arg;
	struct vb_cm_event ev;

	while (vb_conn_get_event(c->vc, &ev) == 0) {
		log_debug("%s: %s", c->peer, vb_cm_event_str(ev.type));
		if (ev.type == VB_CM_ESTABLISHED) {
			pthread_mutex_lock(&c->lock);
			c->established = 1;
			pthread_cond_broadcast(&c->cond);
			pthread_mutex_unlock(&c->lock);
		} else if (ev.type != VB_CM_CONNECT_REQUEST) {
			rr_conn_fail(c, vb_cm_event_str(ev.type));
		}
	}
}

/* See rpcrdma_int.h. */
void rr_post_jobs_init(struct rr_conn *c)
{
	evloop_job_init(&c->flush_job, flush_owed_in_loop, c);
	evloop_job_init(&c->ready_job, cq_loop_ready, c);
}

int rr_conn_start(struct rr_conn *c)
{
	int rc;

	vb_cq_arm(c->cq);
	pthread_mutex_lock(&c->lock);
	rc = evloop_add_io(c->ep->loop, vb_cq_fd(c->cq), EVLOOP_IN, cq_io, c, &c->cq_io);
	pthread_mutex_unlock(&c->lock);
	if (rc == 0)
		rc = evloop_add(c->ep->loop, vb_conn_fd(c->vc), cm_ready, c);
	/* a completion may already be waiting (the peer was quick) */
	if (rc == 0) /* (no reference: the server starts c on the loop, where
		      * nothing frees it before this runs; a client holds one) */
		evloop_post(c->ep->loop, &c->ready_job);
	return rc;
}

/* See rpcrdma_int.h. */
void rr_conn_quiesce(struct rr_conn *c)
{
	struct rr_ep *ep = c->ep;
	struct rr_chain *queued;
	struct rr_wr *owed;

	pthread_mutex_lock(&c->lock);
	while (c->posting)
		pthread_cond_wait(&c->cond, &c->lock);
	queued = c->queued;
	c->queued = c->queued_tail = NULL;
	c->cq_io = NULL; /* a polling caller gives the CQ back to nobody */
	pthread_mutex_unlock(&c->lock);
	evloop_del(ep->loop, vb_cq_fd(c->cq));
	evloop_del(ep->loop, vb_conn_fd(c->vc));
	pthread_mutex_lock(&c->cq_lock); /* not while a caller takes completions */
	vb_disconnect(c->vc);
	vb_conn_destroy(c->vc);
	drain_cq(c);
	pthread_mutex_unlock(&c->cq_lock);
	pthread_mutex_lock(&c->lock);
	c->vc = NULL;
	c->qp_gone = 1;
	owed = c->owed;
	c->owed = NULL;
	c->posted_recvs = 0; /* what was not flushed went with the QP */
	pthread_mutex_unlock(&c->lock);
	while (queued) {
		struct rr_chain *ch = queued;

		queued = ch->next;
		ch->ctx->next = owed;
		owed = ch->ctx;
		free(ch);
	}
	flush_list(c, owed);
}
