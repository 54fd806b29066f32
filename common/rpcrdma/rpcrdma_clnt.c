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
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <poll.h>

#include "common/base/log.h"
#include "common/base/poison.h"
#include "rpcrdma_clnt.h"

/* ---- completions ---- */

/* Set *flag to v, waking the caller if it sleeps on that flag (not on
 * another: a Send's completion does not wake a caller waiting for its
 * reply); s->lock held, so the caller cannot be gone before the post is. */
static void slot_set(struct cslot *s, int *flag, int v)
{
	*flag = v;
	if (s->waits == flag) {
		s->waits = NULL;
		sem_post(&s->wake);
	}
}

/* Sleep until *flag is want or the deadline ts (NULL: none) passes; 0 or
 * ETIMEDOUT. s->lock held. The caller sleeps on a semaphore, not on a
 * condition variable: glibc's takes the mutex back marked contended, so that
 * every wake-up cost a futex call more at the next unlock. A post that comes
 * after a timeout is taken by the next sleep, which looks again. */
static int slot_sleep(struct cslot *s, const int *flag, int want, const struct timespec *ts)
{
	int rc = 0;

	if (*flag != want) /* whatever may complete it, the loop must see */
		rr_conn_watch(s->cl->conn);
	while (*flag != want && rc == 0) {
		s->waits = flag;
		pthread_mutex_unlock(&s->lock);
		while ((ts ? sem_timedwait(&s->wake, ts) : sem_wait(&s->wake)) != 0 && rc == 0)
			if (errno != EINTR)
				rc = errno;
		pthread_mutex_lock(&s->lock);
		s->waits = NULL;
	}
	return *flag == want ? 0 : rc;
}

static void slot_send_done(struct rr_conn *c, struct rr_wr *w, const struct vb_wc *wc)
{
	struct cslot *s = (struct cslot *)((char *)w - offsetof(struct cslot, send_wr));

	pthread_mutex_lock(&s->lock);
	slot_set(s, &s->send_busy, 0);
	pthread_mutex_unlock(&s->lock);
}

static void slot_read_done(struct rr_conn *c, struct rr_wr *w, const struct vb_wc *wc)
{
	struct cslot *s = (struct cslot *)((char *)w - offsetof(struct cslot, read_wr));

	pthread_mutex_lock(&s->lock);
	s->read_status = wc->status;
	slot_set(s, &s->reads_busy, 0);
	pthread_mutex_unlock(&s->lock);
}

/* Event loop (or a polling caller: one at a time on a connection): a reply's
 * transport header; hand it to its caller. */
static void clnt_on_recv(struct rr_conn *c, struct rr_recv *r)
{
	struct rr_clnt *cl = c->side;
	struct rpcrdma_hdr *rh;
	struct cslot **pp, *s = NULL;
	struct cur cu;
	uint32_t xid;
	int rc;

	cur_init(&cu, r->buf, r->len);
	if (rpcrdma_hdr_peek_xid(&cu, &xid) != 0) {
		log_info("%s: reply too short for an xid dropped", c->peer);
		rr_recv_repost(r);
		return;
	}
	pthread_mutex_lock(&cl->lock);
	for (pp = &cl->slots; *pp; pp = &(*pp)->next) {
		if ((*pp)->xid == xid) {
			s = *pp;
			*pp = s->next;
			break;
		}
	}
	pthread_mutex_unlock(&cl->lock);
	rh = s ? &s->rh_store : &cl->stray; /* (s is off the list: ours) */
	if ((rc = rpcrdma_hdr_decode(&cu, rh)) != 0) {
		log_info("%s: undecodable reply header (xid %#x): %s", c->peer, xid, strerror(-rc));
		rh = NULL;
	} else if (rh->proc != RPCRDMA_DONE) {
		unsigned g = rh->credit ? rh->credit : 1;

		pthread_mutex_lock(&cl->lock);
		cl->granted = g < cl->ep->p.credits ? g : cl->ep->p.credits;
		c->st.credits_granted = cl->granted;
		pthread_cond_broadcast(&cl->cond);
		pthread_mutex_unlock(&cl->lock);
	}
	if (s) { /* s waits for done (wait_reply) */
		pthread_mutex_lock(&s->lock);
		s->rh = rh;
		s->recv = r;
		s->payload_off = cu.pos;
		if (!rh) /* its reply cannot be read: the call fails, as Linux's does */
			s->err = -EIO;
		else if (rh->proc == RPCRDMA_ERROR)
			s->err = rh->err == RPCRDMA_ERR_VERS ? -EPROTONOSUPPORT : -EIO;
		slot_set(s, &s->done, 1);
		pthread_mutex_unlock(&s->lock);
	} else {
		log_debug("%s: reply for unknown xid %#x dropped", c->peer, xid);
		rr_recv_repost(r);
	}
}

static void clnt_on_dead(struct rr_conn *c)
{
	struct rr_clnt *cl = c->side;

	pthread_mutex_lock(&cl->lock);
	for (struct cslot *s = cl->slots; s; s = s->next) {
		pthread_mutex_lock(&s->lock);
		s->err = -ECONNRESET;
		slot_set(s, &s->done, 1);
		pthread_mutex_unlock(&s->lock);
	}
	cl->slots = NULL;
	pthread_cond_broadcast(&cl->cond);
	pthread_mutex_unlock(&cl->lock);
}

/* ---- the call ---- */

/* A slot for a call of cl's, cleared but for h_store and rh_store: one that
 * cl kept, else a new one; or NULL. */
static struct cslot *slot_new(struct rr_clnt *cl)
{
	struct cslot *s;

	pthread_mutex_lock(&cl->lock);
	if ((s = cl->kept) != NULL) {
		cl->kept = s->next;
		cl->nkept--;
	}
	pthread_mutex_unlock(&cl->lock);
	if (s) {
		pool_unpoison(s, sizeof(*s));
		memset(s, 0, offsetof(struct cslot, h_store));
	} else if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	s->cl = cl;
	s->h = &s->h_store;
	pthread_mutex_init(&s->lock, NULL);
	sem_init(&s->wake, 0, 0);
	return s;
}

/* A credit back, and s (NULL: none) with it: kept for the next call, or
 * freed if cl keeps as many as its credits already. */
static void slot_over(struct rr_clnt *cl, struct cslot *s)
{
	if (s) {
		sem_destroy(&s->wake);
		pthread_mutex_destroy(&s->lock);
	}
	pthread_mutex_lock(&cl->lock);
	__atomic_sub_fetch(&cl->outstanding, 1, __ATOMIC_RELAXED);
	if (s && cl->nkept < cl->ep->p.credits) {
		s->next = cl->kept;
		cl->kept = s;
		cl->nkept++;
		pool_poison(s, sizeof(*s), &s->next, sizeof(s->next));
		s = NULL;
	}
	pthread_cond_broadcast(&cl->cond);
	pthread_mutex_unlock(&cl->lock);
	free(s);
}

static int take_credit(struct rr_clnt *cl)
{
	int rc = 0;

	pthread_mutex_lock(&cl->lock);
	while (!rr_conn_is_dead(cl->conn) && cl->outstanding >= cl->granted)
		pthread_cond_wait(&cl->cond, &cl->lock);
	if (rr_conn_is_dead(cl->conn))
		rc = -ECONNRESET;
	else
		__atomic_add_fetch(&cl->outstanding, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&cl->lock);
	return rc;
}

/* See rpcrdma_clnt.h. */
int rrc_timeout_ms(const struct cslot *s)
{
	return s->call->timeout_ms ? s->call->timeout_ms : s->cl->ep->p.call_timeout_ms;
}

/* Whether *flag (under s->lock) is want. */
static int flag_is(struct cslot *s, const int *flag, int want)
{
	int is;

	pthread_mutex_lock(&s->lock);
	is = *flag == want;
	pthread_mutex_unlock(&s->lock);
	return is;
}

/* Take the CQ from the loop for a lone call (s->cq_held; see poll_until),
 * before it posts, so that its completions wake this thread only (taken
 * after, the loop was woken by the first completion and took the rest too,
 * then woke the caller). With more calls in flight the loop takes the
 * completions, as handing the CQ from caller to caller costs more than it
 * saves. */
static void poll_take(struct cslot *s)
{
	struct rr_clnt *cl = s->cl;

	if (!cl->ep->p.caller_polls || __atomic_load_n(&cl->outstanding, __ATOMIC_RELAXED) > 1 ||
	    !rr_conn_poll_take(cl->conn))
		return;
	rr_stat_add(&cl->conn->st.caller_polls, 1);
	s->cq_held = 1;
}

/* Give the CQ back, if s has it: parked (see rr_conn_poll_give) while s's
 * is the only call, whose caller takes it again for the rest of the call or
 * for its next, else to the loop. */
static void poll_give(struct cslot *s)
{
	if (s->cq_held)
		rr_conn_poll_give(s->cl->conn, &s->cl->outstanding);
	s->cq_held = 0;
}

/* A lone call: until *flag (under s->lock) is want, ms pass or the
 * connection dies, take the completions in this thread rather than be woken
 * by the loop after it took them (one thread switch less), with the CQ
 * taken before the post or now, its spin adapted to how long the whole wait
 * took; then give it back. */
static void poll_until(struct cslot *s, const int *flag, int want, int ms)
{
	struct rr_conn *c = s->cl->conn;
	uint64_t start = clock_now_ns(), until = start + (uint64_t)ms * 1000000u;
	int came = 0;

	if (!s->cq_held && !flag_is(s, flag, want))
		poll_take(s);
	if (!s->cq_held)
		return;
	for (;;) {
		uint64_t now = clock_now_ns();

		if ((came = flag_is(s, flag, want)) || rr_conn_is_dead(c) || now >= until)
			break;
		rr_conn_poll(c, (int)((until - now + 999999u) / 1000000u));
	}
	rr_conn_poll_adapt(c, clock_now_ns() - start, came);
	poll_give(s);
}

/* See rpcrdma_clnt.h. */
int rrc_slot_wait(struct cslot *s, const int *busy, const char *what)
{
	struct rr_clnt *cl = s->cl;
	struct timespec ts = clock_deadline(CLOCK_REALTIME, rrc_timeout_ms(s));
	int late = 0;

	poll_until(s, busy, 0, rrc_timeout_ms(s));
	pthread_mutex_lock(&s->lock);
	late = slot_sleep(s, busy, 0, &ts) == ETIMEDOUT;
	pthread_mutex_unlock(&s->lock);
	if (!late)
		return 0;
	rr_conn_fail(cl->conn, what);
	pthread_mutex_lock(&s->lock);
	slot_sleep(s, busy, 0, NULL);
	pthread_mutex_unlock(&s->lock);
	return -ETIMEDOUT;
}

/* Wait for our last Send to complete, so its buffer and context may be reused. */
static void wait_send(struct cslot *s)
{
	rrc_slot_wait(s, &s->send_busy, "a Send was never acknowledged");
}

/* Post a Send of the header (and payload) in the slot's buffer; answered: a
 * call (the reply answers it), not RDMA_DONE (nothing does, and we wait for
 * its completion). */
static int post_send(struct cslot *s, struct vb_sge *sge, int nsge, int answered)
{
	struct rr_batch b = {.n = 0};

	rr_batch_send(&b, sge, nsge, answered);
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
	return post_send(s, &sge, 1, 0);
}

/* Give everything of the call back: receive, registrations, Send buffer, credit. */
static void slot_finish(struct cslot *s)
{
	struct rr_clnt *cl = s->cl;
	struct rr_reg_ctx *reg = cl->ep->reg;
	struct vb_conn *vc;
	uint32_t inv = 0;

	poll_give(s); /* had a path kept the CQ, the loop gets it back */
	if (s->recv) {
		inv = s->recv->inv_rkey;
		rr_recv_repost(s->recv);
	}
	wait_send(s);
	vc = rr_conn_enter(cl->conn);
	for (unsigned i = 0; i < s->nbufs; i++) {
		if (inv && s->bufs[i]->exposed && s->bufs[i]->rkey == inv) {
			s->bufs[i]->peer_unbound = 1; /* the reply's Send ended it */
			rr_stat_add(&cl->conn->st.remote_invs, 1);
		}
		rr_buf_unexpose(reg, vc, s->bufs[i]);
		rr_buf_put(reg, s->bufs[i]);
	}
	if (vc)
		rr_conn_leave(cl->conn);
	rr_send_put(cl->conn, s->send);
	slot_over(cl, s);
}

/* Wait for the reply until the call's deadline; on timeout the connection is
 * failed, since the server may still write into what we offered. */
static int wait_reply(struct cslot *s, int timeout_ms)
{
	struct rr_clnt *cl = s->cl;
	struct timespec ts = clock_deadline(CLOCK_REALTIME, timeout_ms);
	int timed_out = 0, listed = 0;

	poll_until(s, &s->done, 1, timeout_ms);
	pthread_mutex_lock(&s->lock);
	timed_out = slot_sleep(s, &s->done, 1, &ts) == ETIMEDOUT;
	pthread_mutex_unlock(&s->lock);
	if (timed_out) {
		pthread_mutex_lock(&cl->lock);
		for (struct cslot **pp = &cl->slots; *pp; pp = &(*pp)->next) {
			if (*pp == s) {
				*pp = s->next;
				listed = 1;
				break;
			}
		}
		pthread_mutex_unlock(&cl->lock);
		/* off the list already: a reply or the connection's end took it
		 * and is about to say so */
		pthread_mutex_lock(&s->lock);
		if (!listed)
			slot_sleep(s, &s->done, 1, NULL);
		pthread_mutex_unlock(&s->lock);
	}
	if (s->done)
		return s->err;
	rr_conn_fail(cl->conn, "call timed out");
	return -ETIMEDOUT;
}

/* The server answered ERR_CHUNK: it ran the call, or would have, but had no
 * room for the reply where the call said it may go. Said once per client. */
static void chunk_refused(const struct cslot *s)
{
	struct rr_clnt *cl = s->cl;

	if (__atomic_exchange_n(&cl->chunk_refused, 1, __ATOMIC_RELAXED))
		return;
	if (!s->h->has_reply && !(cl->ep->p.modes & RR_MODE_READ_WRITE))
		log_err("%s: the server has no room for a long reply (RDMA_ERROR ERR_CHUNK): "
			"it does not serve read-read mode (its server.modes); "
			"mount with mode=read-write",
			cl->conn->peer);
	else
		log_err("%s: the server has no room for a reply in the chunks offered "
			"(RDMA_ERROR ERR_CHUNK)",
			cl->conn->peer);
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
	s = slot_new(cl);
	if (!s || !(s->send = rr_send_get(c))) {
		slot_over(cl, s);
		return rr_conn_is_dead(c) ? -ECONNRESET : -ENOMEM;
	}
	s->call = call;
	s->xid = rpc_clnt_xid(base, call);
	s->send_wr.done = slot_send_done;
	s->read_wr.done = slot_read_done;
	rpcrdma_hdr_init(s->h, s->xid, cl->ep->p.credits, RPCRDMA_MSG);

	len = rrc_encode_call(s, &cd);
	rc = len < 0 ? len : rrc_offer_chunks(s);
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
	poll_take(s);
	rc = post_send(s, sge, s->h->proc == RPCRDMA_MSG ? 2 : 1, 1);
	if (rc == 0) {
		rc = wait_reply(s, call->timeout_ms ? call->timeout_ms : cl->ep->p.call_timeout_ms);
	} else {
		poll_give(s);
		wait_reply(s, 1); /* unlink */
	}
	if (rc == -EIO && s->rh && s->rh->proc == RPCRDMA_ERROR)
		chunk_refused(s);
	if (rc == 0 && s->rh->nreads) {
		/* the server holds what it exposed until our RDMA_DONE, whether
		 * or not we could pull it (a failed post is completed as the
		 * connection ends) */
		int done;

		rc = rrc_pull_exposed(s);
		done = send_done_msg(s);
		rc = rc ? rc : done;
	}
	if (rc == 0)
		rc = rrc_decode_reply(s);
	slot_finish(s);
	return rc;
}

/* Optimistic RDMA: one RDMA Read of the server's memory into one of our
 * registered buffers, then into buf. It holds a credit meanwhile, which
 * bounds what we have on the send queue as a call would. */
static int rr_read_remote(struct rpc_clnt *base, uint64_t addr, uint32_t rkey, void *out,
			  uint32_t len)
{
	static struct rpc_call no_call; /* the client's default timeout */
	struct rr_clnt *cl = (struct rr_clnt *)base;
	struct rr_batch b = {.n = 0};
	struct rr_buf *buf;
	struct cslot *s;
	int rc;

	if (len == 0 || len > cl->ep->p.max_io)
		return -EINVAL;
	if ((rc = take_credit(cl)) != 0)
		return rc;
	if ((s = slot_new(cl)) == NULL) {
		slot_over(cl, NULL);
		return -ENOMEM;
	}
	s->call = &no_call;
	s->read_wr.done = slot_read_done;
	rc = rr_buf_get(cl->ep->reg, len, 0, &buf);
	if (rc == 0) {
		s->bufs[s->nbufs++] = buf;
		rc = rr_buf_wait(cl->ep->reg, buf);
	}
	if (rc == 0)
		rc = rr_batch_rdma(&b, VB_WR_RDMA_READ, buf->addr, len, buf->lkey, addr, rkey);
	if (rc == 0) {
		s->reads_busy = 1;
		poll_take(s);
		rr_post(cl->conn, &b, &s->read_wr); /* completes, if only as a flush */
		rc = rrc_slot_wait(s, &s->reads_busy, "the server never answered an RDMA Read");
		if (rc == 0 && s->read_status != VB_WC_SUCCESS)
			rc = -ECONNRESET;
		if (rc == 0) {
			memcpy(out, buf->addr, len);
			rr_stat_add(&cl->conn->st.bytes_rdma_read, (int64_t)len);
		}
	}
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
	while (cl->kept) {
		struct cslot *s = cl->kept;

		cl->kept = s->next;
		free(s);
	}
	pthread_cond_destroy(&cl->cond);
	pthread_mutex_destroy(&cl->lock);
	free(cl);
}

/* Waiting calls fail with -ECONNRESET as the connection dies (clnt_on_dead). */
static void rr_abort(struct rpc_clnt *base)
{
	rr_conn_fail(((struct rr_clnt *)base)->conn, "aborted by the client");
}

static const struct rpc_clnt_ops rr_clnt_ops = {
	.call = rr_call,
	.free_res = rr_free_res,
	.destroy = rr_destroy,
	.abort = rr_abort,
	.read_remote = rr_read_remote,
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
			case VB_CM_UNREACHABLE: /* the provider's reason: refused, timed out... */
				return ev.status < 0 ? ev.status : -EHOSTUNREACH;
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
	rc = rr_ep_create(p, VB_ACCESS_REMOTE_READ | VB_ACCESS_REMOTE_WRITE, 0, &cl->ep);
	if (rc == 0)
		rc = vb_resolve(cl->ep->dev, host, port, p->connect_timeout_ms, &vc);
	if (rc == 0)
		rc = rr_conn_create(cl->ep, vc, 0, &cl->conn);
	if (rc == 0) {
		rr_conn_get(cl->conn); /* ours until rr_destroy: calls after a death use it */
		cl->conn->side = cl;
		cl->conn->on_recv = clnt_on_recv;
		cl->conn->on_dead = clnt_on_dead;
		rr_conn_our_private(
			cl->ep, cl->ep->attr.mw_remote_inv && rr_reg_keys_per_exposure(cl->ep->reg),
			pdata);
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
	out->inline_send_now = cl->conn->send_max;
}
