/* rpcrdma_conn.c: the endpoint and connection core shared by server and client:
 * the device, a connection's queues and buffers, its life and its counters
 * (posting and completions are in rpcrdma_post.c). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/base/log.h"
#include "rpcrdma_int.h"

void rr_stat_add(uint64_t *v, int64_t d)
{
	__atomic_add_fetch(v, (uint64_t)d, __ATOMIC_RELAXED);
}

/* ---- endpoint ---- */

/* Inline sizes travel in RFC 8797 private data in steps of 1 KiB. */
static uint32_t kib_floor(uint32_t v)
{
	v &= ~1023u;
	return v < RPCRDMA_CM_DEFAULT_INLINE ? RPCRDMA_CM_DEFAULT_INLINE : v;
}

int rr_ep_create(const struct rr_params *p, unsigned remote_rights, unsigned conn_windows,
		 struct rr_ep **out)
{
	struct rr_ep *ep = calloc(1, sizeof(*ep));
	int rc;

	if (!ep)
		return -ENOMEM;
	ep->p = *p;
	ep->p.inline_send = kib_floor(p->inline_send);
	ep->p.inline_recv = kib_floor(p->inline_recv);
	pthread_mutex_init(&ep->lock, NULL);
	pthread_cond_init(&ep->cond, NULL);
	rc = vb_open(p->provider, &ep->dev);
	if (rc) {
		log_err("cannot open RDMA provider '%s': %s", p->provider ? p->provider : "auto",
			strerror(-rc));
		goto fail;
	}
	if ((rc = vb_query_device(ep->dev, &ep->attr)) != 0 ||
	    (rc = vb_alloc_pd(ep->dev, &ep->pd)) != 0) {
		log_err("device %s: %s", ep->dev->name, strerror(-rc));
		goto fail;
	}
	rc = rr_reg_create(ep->pd, &ep->p, remote_rights, &ep->st, &ep->reg);
	if (rc)
		goto fail;
	ep->conn_windows =
		conn_windows && conn_windows < p->fastreg_pool ? conn_windows : p->fastreg_pool;
	if (ep->attr.max_qp_wr &&
	    rr_reg_wr_room(ep->reg, ep->conn_windows) + RR_BATCH_MAX >= ep->attr.max_qp_wr) {
		log_err("%u memory windows a connection may hold (fastreg_pool, or "
			"server.read_read.windows_max) are too many for device %s: a "
			"connection's send queue needs 2 entries per window and more than %u of "
			"its own; the device allows %u in all",
			ep->conn_windows, ep->dev->name, RR_BATCH_MAX, ep->attr.max_qp_wr);
		rc = -EINVAL;
		goto fail;
	}
	if ((rc = evloop_create(&ep->loop)) != 0 || (rc = evloop_start(ep->loop, "rpcrdma")) != 0)
		goto fail;
	*out = ep;
	return 0;
fail:
	rr_ep_destroy(ep);
	return rc;
}

void rr_ep_destroy(struct rr_ep *ep)
{
	if (!ep)
		return;
	evloop_destroy(ep->loop);
	rr_reg_destroy(ep->reg);
	if (ep->pd)
		vb_dealloc_pd(ep->pd);
	vb_close(ep->dev);
	pthread_cond_destroy(&ep->cond);
	pthread_mutex_destroy(&ep->lock);
	free(ep);
}

/* ---- connection buffers ---- */

static int alloc_area(struct rr_conn *c, size_t size, uint8_t **area, struct vb_mr **mr)
{
	if (!(*area = rr_mem_alloc(size)))
		return -ENOMEM;
	memset(*area, 0, size);
	return vb_reg_mr(c->ep->pd, *area, size, VB_ACCESS_LOCAL_WRITE, mr);
}

static int post_recv_locked(struct rr_conn *c, struct rr_recv *r)
{
	struct vb_sge sge = {
		.addr = (uintptr_t)r->buf, .length = c->recv_max, .lkey = c->recv_mr->lkey};
	struct vb_recv_wr wr = {.wr_id = (uintptr_t)&r->wr, .sg_list = &sge, .num_sge = 1};
	struct vb_recv_wr *bad;
	int rc = vb_post_recv(c->vc, &wr, &bad);

	if (rc == 0)
		c->posted_recvs++;
	return rc;
}

int rr_recv_repost(struct rr_recv *r)
{
	struct rr_conn *c = r->conn;
	int rc = -ECONNRESET;

	pthread_mutex_lock(&c->lock);
	if (!c->dead)
		rc = post_recv_locked(c, r);
	pthread_mutex_unlock(&c->lock);
	if (rc && rc != -ECONNRESET)
		rr_conn_fail(c, "cannot repost a receive");
	return rc;
}

/* Free what rr_conn_create made; the QP (in vc) must already be gone. */
static void free_conn_memory(struct rr_conn *c)
{
	if (c->cq)
		vb_destroy_cq(c->cq);
	if (c->recv_mr)
		vb_dereg_mr(c->recv_mr);
	if (c->send_mr)
		vb_dereg_mr(c->send_mr);
	free(c->recv_area);
	free(c->send_area);
	free(c->recvs);
	free(c->sends);
	pthread_cond_destroy(&c->cond);
	pthread_mutex_destroy(&c->lock);
	pthread_mutex_destroy(&c->cq_lock);
	if (c->poke.rfd >= 0)
		wakefd_close(&c->poke);
	free(c);
}

/* Queues and buffers for c; 0 or -errno. */
static int conn_setup(struct rr_conn *c)
{
	struct rr_ep *ep = c->ep;
	struct vb_qp_cap cap;
	int rc;

	/* a QP in error flushes unsignaled work requests too: room for all */
	rc = vb_create_cq(ep->dev, (int)(c->nrecv + c->sq_depth + c->sq_room), &c->cq);
	if (rc)
		return rc;
	c->cq->context = c;
	/* the loop watches and drains the CQ for the connection's life
	 * (rr_conn_start .. rr_conn_quiesce): a software provider may do the
	 * connection's work there instead of on a thread of its own */
	if ((rc = vb_cq_drive(c->cq)) != 0 && rc != -EOPNOTSUPP)
		log_debug("%s: CQ not driven by the loop: %s", c->peer, strerror(-rc));
	cap = (struct vb_qp_cap){.max_send_wr = c->sq_depth + c->sq_room,
				 .max_recv_wr = c->nrecv,
				 .max_send_sge = 4,
				 .max_recv_sge = 1};
	if ((rc = vb_create_qp(c->vc, ep->pd, c->cq, c->cq, &cap)) != 0 ||
	    (rc = alloc_area(c, (size_t)c->nrecv * c->recv_max, &c->recv_area, &c->recv_mr)) != 0 ||
	    (rc = alloc_area(c, (size_t)c->nsend * ep->p.inline_send, &c->send_area,
			     &c->send_mr)) != 0)
		return rc;
	c->recvs = calloc(c->nrecv, sizeof(*c->recvs));
	c->sends = calloc(c->nsend, sizeof(*c->sends));
	if (!c->recvs || !c->sends)
		return -ENOMEM;
	for (unsigned i = 0; i < c->nsend; i++) {
		struct rr_send *s = &c->sends[i];

		s->buf = c->send_area + (size_t)i * ep->p.inline_send;
		s->cap = ep->p.inline_send;
		s->next = c->send_free;
		c->send_free = s;
	}
	pthread_mutex_lock(&c->lock);
	for (unsigned i = 0; rc == 0 && i < c->nrecv; i++) {
		struct rr_recv *r = &c->recvs[i];

		r->conn = c;
		r->buf = c->recv_area + (size_t)i * c->recv_max;
		rc = post_recv_locked(c, r);
	}
	pthread_mutex_unlock(&c->lock);
	return rc;
}

static void conn_free_in_loop(void *arg);
static void conn_dead_in_loop(void *arg);

int rr_conn_create(struct rr_ep *ep, struct vb_conn *vc, int is_server, struct rr_conn **out)
{
	struct rr_conn *c = calloc(1, sizeof(*c));
	unsigned credits = ep->p.credits;
	int rc;

	if (!c) {
		if (is_server)
			vb_reject(vc, NULL, 0);
		vb_conn_destroy(vc);
		return -ENOMEM;
	}
	c->ep = ep;
	c->vc = vc;
	c->is_server = is_server;
	c->refs = 1; /* the event loop's, until the connection dies */
	c->recv_max = ep->p.inline_recv;
	c->send_max = RPCRDMA_CM_DEFAULT_INLINE;
	c->peer_send = RPCRDMA_CM_DEFAULT_INLINE;
	snprintf(c->peer, sizeof(c->peer), "%s", vc->peer[0] ? vc->peer : "peer");
	c->peer_addr = vc->peer_addr;
	c->peer_addr_len = vc->peer_addr_len;
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->cq_lock, NULL);
	c->poke.rfd = c->poke.wfd = -1;
	pthread_cond_init(&c->cond, NULL);
	evloop_job_init(&c->dead_job, conn_dead_in_loop, c);
	evloop_job_init(&c->free_job, conn_free_in_loop, c);
	rr_post_jobs_init(c);
	c->nrecv = credits + RR_RECV_SPARE;
	c->nsend = credits + RR_RECV_SPARE;
	c->sq_room = rr_reg_wr_room(ep->reg, ep->conn_windows);
	c->sq_depth = credits * 4 > 2 * RR_BATCH_MAX ? credits * 4 : 2 * RR_BATCH_MAX;
	if (ep->attr.max_qp_wr && c->sq_depth + c->sq_room > ep->attr.max_qp_wr)
		c->sq_depth = ep->attr.max_qp_wr - c->sq_room; /* > RR_BATCH_MAX (rr_ep_create) */
	c->sq_free = c->sq_depth;
	vc->context = c;

	rc = conn_setup(c);
	if (rc) {
		log_err("%s: cannot set up the connection: %s", c->peer, strerror(-rc));
		if (is_server)
			vb_reject(vc, NULL, 0);
		vb_conn_destroy(vc); /* the QP goes before its CQ */
		free_conn_memory(c);
		return rc;
	}
	pthread_mutex_lock(&ep->lock);
	c->next = ep->conns;
	ep->conns = c;
	ep->nconns++;
	pthread_mutex_unlock(&ep->lock);
	rr_stat_add(&c->st.conns, 1);
	*out = c;
	return 0;
}

void rr_conn_our_private(const struct rr_ep *ep, int remote_inv, uint8_t *buf)
{
	struct rpcrdma_cm_private pd;
	struct wcur w;

	rpcrdma_cm_private_init(&pd, remote_inv ? RPCRDMA_CM_F_REMOTE_INV : 0, ep->p.inline_send,
				ep->p.inline_recv);
	wcur_init(&w, buf, RPCRDMA_CM_PRIVATE_LEN);
	if (rpcrdma_cm_private_encode(&w, &pd) != 0)
		memset(buf, 0, RPCRDMA_CM_PRIVATE_LEN);
}

void rr_conn_set_peer_private(struct rr_conn *c, const void *pdata, size_t len)
{
	struct rpcrdma_cm_private pd;
	struct cur cu;

	cur_init(&cu, pdata, len);
	if (rpcrdma_cm_private_decode(&cu, &pd) != 0)
		log_debug("%s: no RFC 8797 private data: inline sizes 1024", c->peer);
	c->send_max = pd.recv_size < c->ep->p.inline_send ? pd.recv_size : c->ep->p.inline_send;
	c->peer_send = pd.send_size;
	/* the peer takes Send with Invalidate and our device can post it */
	c->peer_remote_inv = (pd.flags & RPCRDMA_CM_F_REMOTE_INV) && c->ep->attr.has_send_inv;
}

/* ---- send buffers ---- */

static struct rr_send *send_get(struct rr_conn *c, int wait)
{
	struct rr_send *s = NULL;

	pthread_mutex_lock(&c->lock);
	while (wait && !c->dead && !c->send_free)
		pthread_cond_wait(&c->cond, &c->lock);
	if (!c->dead && c->send_free) {
		s = c->send_free;
		c->send_free = s->next;
	}
	pthread_mutex_unlock(&c->lock);
	return s;
}

struct rr_send *rr_send_get(struct rr_conn *c)
{
	return send_get(c, 1);
}

struct rr_send *rr_send_tryget(struct rr_conn *c)
{
	return send_get(c, 0);
}

void rr_send_put(struct rr_conn *c, struct rr_send *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&c->lock);
	s->next = c->send_free;
	c->send_free = s;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
}

/* ---- teardown ---- */

/* In the loop, once nobody holds the connection: free it. */
static void conn_free_in_loop(void *arg)
{
	struct rr_conn *c = arg;
	struct rr_ep *ep = c->ep;

	pthread_mutex_lock(&ep->lock);
	for (struct rr_conn **pp = &ep->conns; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	ep->nconns--;
	/* a closed connection keeps its counts, not its gauges */
	c->st.credits_granted = c->st.exposed_now = c->st.remote_regs_now = 0;
	c->st.registered_now = c->st.cached_now = c->st.conns = 0;
	rr_stats_add(&ep->closed, &c->st);
	pthread_cond_broadcast(&ep->cond);
	pthread_mutex_unlock(&ep->lock);
	log_info("%s: connection closed", c->peer);
	if (c->on_free)
		c->on_free(c);
	free_conn_memory(c);
}

void rr_conn_get(struct rr_conn *c)
{
	pthread_mutex_lock(&c->lock);
	c->refs++;
	pthread_mutex_unlock(&c->lock);
}

void rr_conn_put(struct rr_conn *c)
{
	unsigned refs;

	pthread_mutex_lock(&c->lock);
	refs = --c->refs;
	pthread_mutex_unlock(&c->lock);
	if (refs == 0)
		evloop_post(c->ep->loop, &c->free_job);
}

/* See rpcrdma_int.h. */
void rr_conn_post(struct rr_conn *c, struct evloop_job *job)
{
	rr_conn_get(c);
	if (!evloop_post(c->ep->loop, job))
		rr_conn_put(c); /* (not the last: the queued job holds one) */
}

/* In the loop: let the side fail what waits on c, take the connection off the
 * device (rr_conn_quiesce), and drop the loop's reference. The memory goes
 * when the last reference does. */
static void conn_dead_in_loop(void *arg)
{
	struct rr_conn *c = arg;

	if (c->on_dead)
		c->on_dead(c);
	rr_conn_quiesce(c);
	rr_conn_put(c);
}

/* See rpcrdma_int.h. */
void rr_conn_poke(struct rr_conn *c)
{
	if (c->cq_caller && wakefd_post(&c->poke) != 0)
		log_err("%s: cannot wake the polling caller", c->peer);
}

void rr_conn_fail(struct rr_conn *c, const char *why)
{
	pthread_mutex_lock(&c->lock);
	if (c->dead) {
		pthread_mutex_unlock(&c->lock);
		return;
	}
	c->dead = 1;
	pthread_cond_broadcast(&c->cond);
	rr_conn_poke(c); /* to see the end */
	pthread_mutex_unlock(&c->lock);
	log_info("%s: connection ends: %s", c->peer, why);
	evloop_post(c->ep->loop, &c->dead_job);
}

int rr_conn_is_dead(struct rr_conn *c)
{
	return __atomic_load_n(&c->dead, __ATOMIC_ACQUIRE);
}

struct vb_conn *rr_conn_enter(struct rr_conn *c)
{
	struct vb_conn *vc = NULL;

	pthread_mutex_lock(&c->lock);
	if (!c->dead) {
		c->posting++;
		vc = c->vc;
	}
	pthread_mutex_unlock(&c->lock);
	return vc;
}

void rr_conn_leave(struct rr_conn *c)
{
	pthread_mutex_lock(&c->lock);
	if (--c->posting == 0)
		pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
}

/* ---- stats ---- */

void rr_stats_add(struct rr_stats *a, const struct rr_stats *b)
{
	const uint64_t *src = (const uint64_t *)b;
	uint64_t *dst = (uint64_t *)a;

	for (size_t i = 0; i < sizeof(*a) / sizeof(uint64_t); i++)
		dst[i] += __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

void rr_stats_print(const struct rr_stats *s, const char *prefix, FILE *f)
{
#define P(field) fprintf(f, "%s%s %llu\n", prefix, #field, (unsigned long long)s->field)
	P(conns);
	P(calls);
	P(calls_inline);
	P(inline_declined);
	P(replies);
	P(bytes_inline_in);
	P(bytes_inline_out);
	P(bytes_rdma_read);
	P(bytes_rdma_write);
	P(bytes_exposed);
	P(bytes_in_place);
	P(regs);
	P(deregs);
	P(reg_ns);
	P(dereg_ns);
	P(binds);
	P(remote_invs);
	P(cache_hits);
	P(cache_misses);
	P(credits_granted);
	P(exposed_now);
	P(exposed_expired);
	P(done_unknown);
	P(err_vers_sent);
	P(err_chunk_sent);
	P(credit_overruns);
	P(post_failures);
	P(posts);
	P(op_timeouts);
	P(remote_regs_now);
	P(registered_now);
	P(cached_now);
	P(conns_refused);
	P(conns_shed);
	P(idle_closed);
	P(pulls_refused);
	P(nomsg_waits);
	P(window_waits);
	P(exposure_waits);
#undef P
}
