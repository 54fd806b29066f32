/*
 * rpcrdma_svc.c: the RPC/RDMA server: a request's life, the event loop's
 * side of a connection, and the interface (rpcrdma_svc_bufs.c has what a
 * request holds, rpcrdma_svc_call.c and rpcrdma_svc_reply.c the rest).
 *
 * A call's life, and the thread of each step:
 *   loop    svc_on_recv: decode the transport header; answer RDMA_ERROR at once
 *           for a header we will not run; post the RDMA Reads of its Read
 *           chunks (pull_chunks), whose completion (rrs_read_done) continues;
 *   loop    wait for a Send buffer if none is free (rrs_with_send);
 *   worker  rrs_work: decode the call, run the procedure (which may take on the
 *           caller's identity), encode the reply, copy bulk results into
 *           registered buffers and reserve Read-Read exposure (rrs_prepare_reply);
 *   loop    where the connection has no room to expose the reply, it waits
 *           parked on the connection, not on the worker (rrs_park), until
 *           RDMA_DONEs or their deadline free room (rrs_unpark_later);
 *   loop    rrs_reply: the reply's RDMA Writes, window bindings and Send
 *           (rrs_post_reply); its Send completion and, in Read-Read, the client's
 *           RDMA_DONE or the deadline end it (rrs_unpend);
 *   loop or reaper  rrs_release: buffers back (on the reaper queue when giving
 *           them back means deregistering).
 * A worker that takes on a caller's identity may never touch the device (see
 * rpcrdma_int.h), so everything that posts, binds, reposts or registers
 * synchronously happens on the loop; the worker's registrations are
 * RR_GET_ASYNC.
 *
 * Receive buffer ownership: svc_on_recv owns it, then the request; it is
 * reposted exactly once: by svc_on_recv for RDMA_DONE and dropped input, by the
 * loop before it posts the answer (so the credit is back before the client can
 * use it), or by rrs_release if the request ended without an answer.
 *
 * Credits: a connection may have at most `ceiling` calls active (received and
 * not yet answered; in Read-Read, until RDMA_DONE). Grants are clamped to
 * [1, credits] and shrink when registered memory is over the budget.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/log.h"
#include "common/base/poison.h"
#include "rpcrdma_svc.h"

/* The tick: a connection whose oldest RDMA operation is past its deadline is
 * dropped; its teardown flushes what it held (ep->lock held). */
static void dev_deadline(struct rr_conn *c, uint64_t now)
{
	struct svc_conn *sc = c->side;
	char why[96];

	if (!sc->dev_head || sc->dev_head->dev_deadline_ns > now || rr_conn_is_dead(c))
		return;
	rr_stat_add(&c->st.op_timeouts, 1);
	snprintf(why, sizeof(why), "no answer to an RDMA Read or a Send within %u ms",
		 c->ep->p.op_deadline_ms);
	rr_conn_fail(c, why);
}

/* ---- releasing ---- */

/* Undo an exposure reservation, and the exposure if it started (loop). */
static void rrs_exposure_over(struct rr_sreq *rq)
{
	struct rr_conn *c = rq->conn;
	struct svc_conn *sc = c->side;
	struct rr_reg_ctx *reg = rq->srv->ep->reg;
	struct vb_conn *vc = rr_conn_enter(c);
	int parked;

	for (unsigned i = 0; i < rq->nbufs; i++)
		rr_buf_unexpose(reg, vc, rq->bufs[i]);
	if (vc)
		rr_conn_leave(c);
	rr_reg_keys_unreserve(reg, rq->exp_keys);
	rq->exp_keys = 0;
	rrs_keys_freed(rq->srv); /* the windows may answer another connection's */
	pthread_mutex_lock(&c->lock);
	if (rq->exp_bytes)
		sc->exposed_keys -= rq->room_keys;
	sc->exposed -= rq->exp_bytes;
	if (rq->counted && rq->exposing) {
		sc->active--;
		rq->counted = 0;
	}
	parked = sc->exp_waiting != 0;
	pthread_mutex_unlock(&c->lock);
	if (parked)
		rrs_unpark_later(c); /* the room may answer one */
	if (rq->exposing)
		rr_stat_add(&c->st.exposed_now, -(int64_t)rq->exp_bytes);
	rq->exp_bytes = 0;
	rq->exposing = 0;
}

/* Give back what rq holds of its connection: its send buffer, its exposure
 * reservation (or keys given to it while parked, say). */
static void conn_side_over(struct rr_sreq *rq)
{
	if (rq->send)
		rrs_send_put(rq);
	if (rq->exp_bytes || rq->exp_keys)
		rrs_exposure_over(rq);
}

/* ---- requests kept by their connection ---- */

/* A request for a call on c, zeroed but for its transport header (which
 * rpcrdma_hdr_decode sets): one that c kept, else a new one; or NULL. */
static struct rr_sreq *rq_get(struct rr_conn *c)
{
	struct svc_conn *sc = c->side;
	struct rr_sreq *rq;

	pthread_mutex_lock(&c->lock);
	if ((rq = sc->rq_free) != NULL) {
		sc->rq_free = rq->free_next;
		sc->rq_nfree--;
	}
	pthread_mutex_unlock(&c->lock);
	if (!rq)
		return calloc(1, sizeof(*rq));
	pool_unpoison(rq, sizeof(*rq));
	memset(rq, 0, offsetof(struct rr_sreq, hdr));
	memset(&rq->hdr + 1, 0, sizeof(*rq) - offsetof(struct rr_sreq, hdr) - sizeof(rq->hdr));
	return rq;
}

/* Keep rq, whose call has ended, for c's next (c->lock held): 1, or 0 if c
 * keeps as many as its credits already (the caller frees it). */
static int rq_keep(struct rr_conn *c, struct rr_sreq *rq)
{
	struct svc_conn *sc = c->side;

	if (sc->rq_nfree >= c->ep->p.credits)
		return 0;
	rq->free_next = sc->rq_free;
	sc->rq_free = rq;
	sc->rq_nfree++;
	pool_poison(rq, sizeof(*rq), &rq->free_next, sizeof(rq->free_next));
	return 1;
}

/* Give every buffer back, the receive if still held, the connection reference.
 * On the loop, or on the reaper once the loop has done its part (rrs_unpend). */
void rrs_release(struct rr_sreq *rq)
{
	struct rr_server *srv = rq->srv;
	struct rr_conn *c = rq->conn;
	struct svc_conn *sc = c->side;
	struct rr_reg_ctx *reg = srv->ep->reg;
	int kept;

	rrs_dev_done(rq); /* (a no-op: its Reads or Send completed first) */
	conn_side_over(rq);
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
	kept = rq_keep(c, rq);
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	if (!kept)
		free(rq);
	rr_conn_put(c);
	pthread_mutex_lock(&srv->lock);
	srv->inflight--;
	pthread_cond_broadcast(&srv->cond);
	pthread_mutex_unlock(&srv->lock);
}

static void sreq_reap_run(struct work *w)
{
	rrs_release((struct rr_sreq *)((char *)w - offsetof(struct rr_sreq, reap)));
}

/* One of the things the request waits for is over (loop); release it after
 * the last: at once where giving buffers back is cheap (so the next call finds
 * them), on the reaper queue where it deregisters, which the event loop must
 * not wait for. What touches the connection is done here first. */
void rrs_unpend(struct rr_sreq *rq)
{
	if (--rq->pending != 0)
		return;
	conn_side_over(rq);
	if (rr_reg_put_is_cheap(rq->srv->ep->reg)) {
		rrs_release(rq);
	} else {
		rq->reap.run = sreq_reap_run;
		workq_submit(rq->srv->reaper, &rq->reap);
	}
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
	rrs_end_exposure(rq);
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
	if (srv->stopping || (rq = rq_get(c)) == NULL) {
		rr_recv_repost(r);
		return;
	}
	rq->srv = srv;
	rq->conn = c;
	rq->recv = r;
	rq->work.run = rrs_work;
	rq->read_wr.done = rrs_read_done;
	rq->send_wr.done = rrs_send_done;
	cur_init(&cu, r->buf, r->len);
	rq->decode_rc = rpcrdma_hdr_decode(&cu, &rq->hdr);
	rq->payload_off = cu.pos;
	if (rq->decode_rc == 0 && (rq->hdr.proc == RPCRDMA_MSG || rq->hdr.proc == RPCRDMA_NOMSG)) {
		pthread_mutex_lock(&c->lock);
		sc->active++;
		sc->last_ns = clock_now_ns();
		rq->counted = 1;
		rq->overrun = sc->active > sc->ceiling;
		pthread_mutex_unlock(&c->lock);
	}
	rr_conn_get(c);
	pthread_mutex_lock(&srv->lock);
	srv->inflight++;
	pthread_mutex_unlock(&srv->lock);
	rrs_start(rq);
}

/* The connection died: end every exposure now, and let go of the requests
 * waiting for a Send buffer. */
static void svc_on_dead(struct rr_conn *c)
{
	struct svc_conn *sc = c->side;
	struct rr_sreq *list, *waiting = sc->send_wait, *nomsg = sc->nomsg_wait;

	sc->send_wait = sc->send_wait_tail = NULL;
	sc->nomsg_wait = sc->nomsg_wait_tail = NULL;
	while (waiting) {
		struct rr_sreq *rq = waiting;

		waiting = rq->send_wait_next;
		rrs_release(rq);
	}
	while (nomsg) {
		struct rr_sreq *rq = nomsg;

		nomsg = rq->nomsg_next;
		rrs_release(rq);
	}
	rrs_park_drop(c);
	pthread_mutex_lock(&c->lock);
	list = sc->exp_head;
	sc->exp_head = sc->exp_tail = NULL;
	pthread_mutex_unlock(&c->lock);
	while (list) {
		struct rr_sreq *rq = list;

		list = rq->exp_next;
		rrs_end_exposure(rq);
	}
}

/* Free kept requests, linked by free_next. */
static void rq_free_all(struct rr_sreq *list)
{
	while (list) {
		struct rr_sreq *rq = list;

		list = rq->free_next;
		free(rq);
	}
}

static void svc_on_free(struct rr_conn *c)
{
	struct svc_conn *sc = c->side;

	rq_free_all(sc->rq_free);
	free(sc);
}

/* Every tick: drop connections with an RDMA operation past its deadline, end
 * overdue exposures, free the kept requests of connections without calls;
 * keep registered memory within the budget. */
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
		struct rr_sreq *expired = NULL, *unused = NULL;

		if (!sc)
			continue;
		dev_deadline(c, now);
		rrs_idle_check(c, now);
		pthread_mutex_lock(&c->lock);
		if (clock_passed(now, sc->last_ns, (uint64_t)RQ_KEPT_IDLE_MS * 1000000)) {
			unused = sc->rq_free;
			sc->rq_free = NULL;
			sc->rq_nfree = 0;
		}
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
		rq_free_all(unused);
		while (expired) {
			struct rr_sreq *rq = expired;

			expired = rq->exp_next;
			rr_stat_add(&c->st.exposed_expired, 1);
			log_info("%s: xid %#x: no RDMA_DONE within %u ms: exposure ended", c->peer,
				 rq->hdr.xid, ep->p.done_deadline_ms);
			rrs_end_exposure(rq);
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
	struct rr_listen *li = arg;
	struct rr_server *srv = li->srv;
	struct rr_ep *ep = srv->ep;
	struct vb_cm_event ev;

	while (vb_listener_get_event(li->l, &ev) == 0) {
		uint8_t pdata[RPCRDMA_CM_PRIVATE_LEN];
		struct vb_conn_param param;
		struct svc_conn *sc;
		struct rr_conn *c;

		if (ev.type != VB_CM_CONNECT_REQUEST || !ev.conn)
			continue;
		sc = srv->stopping || !rrs_admit(srv, ev.conn) ? NULL : calloc(1, sizeof(*sc));
		if (!sc) { /* (refused, or no memory for it: refused too) */
			vb_reject(ev.conn, NULL, 0);
			vb_conn_destroy(ev.conn);
			continue;
		}
		if (rr_conn_create(ep, ev.conn, 1, &c) != 0) { /* (it refuses) */
			free(sc);
			continue;
		}
		rr_conn_set_peer_private(c, ev.private_data, ev.private_data_len);
		sc->srv = srv;
		sc->limit = sc->ceiling = ep->p.credits;
		sc->last_ns = clock_now_ns();
		memcpy(&sc->peer_addr, &ev.conn->peer_addr, sizeof(sc->peer_addr));
		sc->peer_addr_len = ev.conn->peer_addr_len;
		c->side = sc;
		rrs_park_init(c);
		c->on_recv = svc_on_recv;
		c->on_dead = svc_on_dead;
		c->on_free = svc_on_free;
		rr_conn_our_private(ep, 0, pdata);
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

/* A window whose invalidation completed on c may answer a reply parked for
 * windows on any connection, or for room on c. */
static void keys_freed(void *srv, struct rr_conn *c)
{
	struct svc_conn *sc = c->side;
	int parked;

	rrs_keys_freed(srv);
	pthread_mutex_lock(&c->lock);
	parked = sc->exp_waiting != 0;
	pthread_mutex_unlock(&c->lock);
	if (parked)
		rrs_unpark_later(c);
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
	/* no fewer than one reply may need: its items' and its long reply's */
	srv->windows_max = p->windows_max ? p->windows_max : p->fastreg_pool / 4;
	if (srv->windows_max < RPC_DDP_MAX_ITEMS + 1)
		srv->windows_max = RPC_DDP_MAX_ITEMS + 1;
	pthread_mutex_init(&srv->lock, NULL);
	pthread_cond_init(&srv->cond, NULL);
	rc = rr_ep_create(p, remote, srv->windows_max, &srv->ep);
	/* the server's loop takes every completion: it spins, for a fixed time
	 * or adapted to its traffic (a client's loop does not: with several
	 * calls in flight its callers need the CPU, and a lone caller spins in
	 * its own wait, rr_conn_poll, the same way) */
	if (rc == 0) {
		evloop_set_spin(srv->ep->loop, p->spin_us);
		evloop_set_spin_max(srv->ep->loop, p->spin_max_us);
		rr_reg_on_keys_freed(srv->ep->reg, keys_freed, srv);
	}
	if (rc == 0)
		rc = workq_create(1, "rpcrdma-reap", &srv->reaper);
	if (rc) {
		rr_ep_destroy(srv->ep);
		free(srv);
		return rc;
	}
	if (evloop_add_timer(srv->ep->loop, TICK_MS, tick, srv, &srv->timer) != 0)
		srv->timer = NULL;
	*out = srv;
	return 0;
}

static void add_listener(void *arg)
{
	struct rr_listen *li = arg;

	evloop_add(li->srv->ep->loop, vb_listener_fd(li->l), listener_ready, li);
}

int rr_server_listen(struct rr_server *srv, const char *host, const char *port)
{
	struct rr_listen *li = &srv->listen[srv->nlisten];
	int rc = srv->nlisten < RR_LISTEN_MAX ? vb_listen(srv->ep->dev, host, port, 128, &li->l)
					      : -ENOSPC;

	if (rc) {
		log_err("cannot listen for RPC/RDMA on %s:%s (%s): %s", host ? host : "*", port,
			srv->ep->dev->name, strerror(-rc));
		return rc;
	}
	li->srv = srv;
	srv->nlisten++;
	evloop_post_once(srv->ep->loop, &li->add_job, add_listener, li);
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

/* See rpcrdma.h. */
void rr_server_each_peer(struct rr_server *srv,
			 void (*fn)(void *arg, const struct sockaddr *peer, socklen_t len),
			 void *arg)
{
	struct rr_ep *ep = srv->ep;

	pthread_mutex_lock(&ep->lock);
	for (struct rr_conn *c = ep->conns; c; c = c->next)
		fn(arg, (const struct sockaddr *)&c->peer_addr, c->peer_addr_len);
	pthread_mutex_unlock(&ep->lock);
}

static void stop_listeners(void *arg)
{
	struct rr_server *srv = arg;

	for (unsigned i = 0; i < srv->nlisten; i++) {
		evloop_del(srv->ep->loop, vb_listener_fd(srv->listen[i].l));
		vb_listener_destroy(srv->listen[i].l);
	}
	srv->nlisten = 0;
}

int rr_server_expose(struct rr_server *srv, void *addr, size_t len, uint32_t *rkey)
{
	int rc;

	if (srv->exposed)
		return -EBUSY;
	rc = vb_reg_mr(srv->ep->pd, addr, len, VB_ACCESS_REMOTE_READ, &srv->exposed);
	if (rc) {
		srv->exposed = NULL;
		return rc;
	}
	*rkey = srv->exposed->rkey;
	return 0;
}

void rr_server_destroy(struct rr_server *srv)
{
	struct rr_ep *ep;

	if (!srv)
		return;
	ep = srv->ep;
	pthread_mutex_lock(&srv->lock);
	srv->stopping = 1;
	if (cond_wait_zero(&srv->cond, &srv->lock, &srv->inflight, ep->p.drain_ms))
		log_warn("%u calls still in flight after %u ms; disconnecting", srv->inflight,
			 ep->p.drain_ms);
	pthread_mutex_unlock(&srv->lock);
	if (srv->nlisten)
		evloop_post_once(ep->loop, &srv->stop_job, stop_listeners, srv);
	pthread_mutex_lock(&ep->lock);
	for (struct rr_conn *c = ep->conns; c; c = c->next)
		rr_conn_fail(c, "server stopping");
	pthread_mutex_unlock(&ep->lock);
	/* a call still running (on a worker, in the file system) holds its
	 * connection and this server, and hands its reply to the loop when it
	 * ends: nothing of theirs is freed under it, however long it takes */
	pthread_mutex_lock(&srv->lock);
	while (cond_wait_zero(&srv->cond, &srv->lock, &srv->inflight, ep->p.drain_ms + 1000L))
		log_warn("%u calls still running; waiting for them", srv->inflight);
	pthread_mutex_unlock(&srv->lock);
	pthread_mutex_lock(&ep->lock);
	if (cond_wait_zero(&ep->cond, &ep->lock, &ep->nconns, ep->p.drain_ms + 1000L))
		log_warn("%u connections did not close", ep->nconns);
	pthread_mutex_unlock(&ep->lock);
	workq_destroy(srv->reaper);
	if (srv->timer)
		evloop_del_timer(ep->loop, srv->timer);
	if (srv->exposed)
		vb_dereg_mr(srv->exposed);
	rr_ep_destroy(ep);
	pthread_cond_destroy(&srv->cond);
	pthread_mutex_destroy(&srv->lock);
	free(srv);
}
