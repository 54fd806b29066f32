/*
 * rpcrdma_svc_bufs.c: what the RPC/RDMA server's requests hold while they
 * run: a Send buffer (waited for on the loop), their place on the list of
 * requests waiting for the device (whose deadline the tick enforces in
 * rpcrdma_svc.c), and the registered buffers of their data.
 */
#include <stdlib.h>

#include "rpcrdma_svc.h"

/* ---- Send buffers (loop) ---- */

/* Run rq->with_send once a Send buffer is rq's: now (it may hold one already, as a
 * call whose reply could not be sent does), or when one comes back. */
void rrs_with_send(struct rr_sreq *rq, void (*step)(struct rr_sreq *rq))
{
	struct svc_conn *sc = rq->conn->side;

	rq->with_send = step;
	if (rq->send || (!sc->send_wait && (rq->send = rr_send_tryget(rq->conn)) != NULL)) {
		step(rq);
		return;
	}
	if (rr_conn_is_dead(rq->conn)) {
		rrs_release(rq);
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
void rrs_send_put(struct rr_sreq *rq)
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

/* ---- waiting for the device (loop) ---- */

/* See rpcrdma_svc.h: appended, so the list stays oldest first. */
void rrs_dev_wait(struct rr_sreq *rq)
{
	struct svc_conn *sc = rq->conn->side;

	rq->dev_deadline_ns = clock_now_ns() + (uint64_t)rq->srv->ep->p.op_deadline_ms * 1000000u;
	rq->dev_next = NULL;
	rq->dev_prev = sc->dev_tail;
	if (sc->dev_tail)
		sc->dev_tail->dev_next = rq;
	else
		sc->dev_head = rq;
	sc->dev_tail = rq;
	rq->on_dev = 1;
}

/* See rpcrdma_svc.h. */
void rrs_dev_done(struct rr_sreq *rq)
{
	struct svc_conn *sc = rq->conn->side;

	if (!rq->on_dev)
		return;
	if (rq->dev_prev)
		rq->dev_prev->dev_next = rq->dev_next;
	else
		sc->dev_head = rq->dev_next;
	if (rq->dev_next)
		rq->dev_next->dev_prev = rq->dev_prev;
	else
		sc->dev_tail = rq->dev_prev;
	rq->on_dev = 0;
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
struct rr_buf *rrs_buf_get(struct rr_sreq *rq, size_t len, unsigned flags)
{
	struct rr_buf *b;

	if (rq->nbufs == SREQ_MAX_BUFS || rr_buf_get(rq->srv->ep->reg, len, flags, &b) != 0)
		return NULL;
	add_buf(rq, b);
	return b;
}

/* The buffer that holds [data, data+len), or NULL. */
struct rr_buf *rrs_buf_find(struct rr_sreq *rq, const void *data, size_t len)
{
	const uint8_t *p = data;

	for (unsigned i = 0; i < rq->nbufs; i++) {
		const uint8_t *a = rq->bufs[i]->addr;

		if (p >= a && p + len <= a + rq->bufs[i]->len)
			return rq->bufs[i];
	}
	return NULL;
}

/* The transport's rrs_buf_get: on a worker, registration overlaps the
 * procedure filling it; on the loop, it registers at once. */
void *rrs_get_buf(struct rpc_req *req, size_t len)
{
	struct rr_sreq *rq = req->xprt_req;
	unsigned expose = rrs_rr_possible(rq) ? RR_GET_EXPOSE : 0;
	struct rr_buf *b;

	/* the loop takes no buffer it may not expose now */
	if (req->nowait && expose && !rrs_loop_may_expose(rq, len)) {
		req->would_block = 1;
		return NULL;
	}
	b = rrs_buf_get(rq, len, rrs_get_how(rq) | expose);
	if (!b && req->nowait)
		req->would_block = 1; /* no room now: a worker may wait for it */
	return b ? b->addr : NULL;
}
