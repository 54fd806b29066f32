/*
 * rpcrdma_reg_fastreg.c: registration 'fastreg': one arena registered at
 * start for local access and window binding; exposing a buffer binds a memory
 * window over it with a fresh key, unexposing invalidates that key (as the
 * Linux client's FRWR registers per I/O). A device without memory windows
 * gets per-I/O registration instead: 'zerocopy' for a client, 'dynamic' for
 * a server.
 */
#include <stdlib.h>
#include <time.h>

#include "common/base/clock.h"
#include "common/base/log.h"
#include "rpcrdma_reg_int.h"

static int windows_create(struct rr_reg_ctx *r)
{
	r->mws = calloc(r->p.fastreg_pool, sizeof(*r->mws));
	if (!r->mws)
		return -ENOMEM;
	for (; r->nmws < r->p.fastreg_pool; r->nmws++) {
		int rc = vb_alloc_mw(r->pd, &r->mws[r->nmws]);

		if (rc) {
			r->nmw_free = r->nmws; /* so the ones made are freed */
			return rc;
		}
	}
	r->nmw_free = r->nmws;
	return 0;
}

/* bind a free window with a fresh key over b: one set aside for the caller
 * (RR_EXPOSE_RESERVED), or one nobody has; -EAGAIN if there is none
 * (window_wait). */
static int window_bind(struct rr_reg_ctx *r, struct vb_conn *conn, struct rr_buf *b, const void *at,
		       size_t len, unsigned flags)
{
	unsigned rights = flags & RR_EXPOSE_READ_ONLY ? r->remote_rights & VB_ACCESS_REMOTE_READ
						      : r->remote_rights;
	unsigned reserved = flags & RR_EXPOSE_RESERVED ? 1 : 0;
	struct vb_mw *mw = NULL;
	int rc;

	if (!conn)
		return -ECONNRESET;
	pthread_mutex_lock(&r->lock);
	if (reserved ? r->nmw_reserved > 0 : r->nmw_free > r->nmw_reserved) {
		mw = r->mws[--r->nmw_free];
		r->nmw_reserved -= reserved;
	}
	pthread_mutex_unlock(&r->lock);
	if (!mw)
		return -EAGAIN;
	rc = vb_bind_mw(conn, mw, b->base, (void *)at, len, rights, 0, 0);
	if (rc) { /* the window, and the caller's claim on it, go back */
		pthread_mutex_lock(&r->lock);
		r->mws[r->nmw_free++] = mw;
		r->nmw_reserved += reserved;
		pthread_mutex_unlock(&r->lock);
		return rc;
	}
	rr_stat_add(&r->st->binds, 1);
	rr_stat_add(&r->st->remote_regs_now, 1);
	b->mw = mw;
	b->rkey = mw->rkey;
	return 0;
}

/* Wait up to ms for a window to come free: 0, or -EAGAIN. */
static int window_wait(struct rr_reg_ctx *r, int ms)
{
	struct timespec deadline = clock_deadline(CLOCK_REALTIME, ms);
	int rc = 0;

	pthread_mutex_lock(&r->lock);
	while (r->nmw_free <= r->nmw_reserved && rc == 0)
		rc = pthread_cond_timedwait(&r->cond, &r->lock, &deadline);
	rc = r->nmw_free > r->nmw_reserved ? 0 : -EAGAIN;
	pthread_mutex_unlock(&r->lock);
	return rc;
}

/* invalidate b's window (unless the peer did); if the connection cannot,
 * replace the window, and where that fails too, count the pool one smaller, so
 * that a reservation of more keys than are left fails (-E2BIG) rather than
 * waits for ever. */
static void window_unbind(struct rr_reg_ctx *r, struct vb_conn *conn, struct rr_buf *b)
{
	struct vb_mw *mw = b->mw;
	unsigned left = 0;

	if (b->peer_unbound) {
		b->peer_unbound = 0;
	} else if (!conn || vb_bind_mw(conn, mw, b->base, b->addr, 0, 0, 0, 0) != 0) {
		vb_dealloc_mw(mw);
		if (vb_alloc_mw(r->pd, &mw) != 0)
			mw = NULL;
	}
	rr_stat_add(&r->st->remote_regs_now, -1);
	b->mw = NULL;
	b->rkey = 0;
	pthread_mutex_lock(&r->lock);
	if (mw)
		r->mws[r->nmw_free++] = mw;
	else
		left = --r->nmws;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	if (!mw)
		log_err("cannot replace a memory window: the pool shrinks to %u", left);
}

/* See rpcrdma_reg.h. */
int rr_reg_keys_reserve(struct rr_reg_ctx *r, unsigned n)
{
	int rc = 0;

	if (n == 0 || !rr_reg_keys_per_exposure(r))
		return 0;
	pthread_mutex_lock(&r->lock);
	if (n > r->nmws)
		rc = -E2BIG;
	else if (r->nmw_free - r->nmw_reserved >= n)
		r->nmw_reserved += n;
	else
		rc = -EAGAIN;
	pthread_mutex_unlock(&r->lock);
	return rc;
}

/* See rpcrdma_reg.h. */
void rr_reg_keys_unreserve(struct rr_reg_ctx *r, unsigned n)
{
	if (n == 0 || !rr_reg_keys_per_exposure(r))
		return;
	pthread_mutex_lock(&r->lock);
	r->nmw_reserved -= n;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

/* Without memory windows, hand r over to per-I/O registration. */
static int fall_back(struct rr_reg_ctx *r)
{
	const struct reg_ops *fb =
		r->remote_rights & VB_ACCESS_REMOTE_WRITE ? &reg_zerocopy_ops : &reg_dynamic_ops;

	log_notice("device %s has no memory windows: registration 'fastreg' runs as '%s'",
		   r->pd->dev->name, rr_reg_name(fb->kind));
	for (unsigned i = 0; i < r->nmws; i++)
		vb_dealloc_mw(r->mws[i]);
	free(r->mws);
	r->mws = NULL;
	r->nmws = r->nmw_free = 0;
	reg_arena_destroy(r);
	r->ops = fb;
	return fb->setup(r);
}

static int fastreg_setup(struct rr_reg_ctx *r)
{
	int rc = reg_arena_create(r, VB_ACCESS_LOCAL_WRITE | VB_ACCESS_MW_BIND);

	if (rc == 0 && r->remote_rights)
		rc = windows_create(r);
	return rc == -EOPNOTSUPP ? fall_back(r) : rc;
}

const struct reg_ops reg_fastreg_ops = {
	.kind = RR_REG_FASTREG,
	.setup = fastreg_setup,
	.get = reg_arena_get,
	.expose = window_bind,
	.expose_wait = window_wait,
	.unexpose = window_unbind,
	.put = reg_arena_put,
	.put_is_cheap = 1,
	.exposes_any = 1,
};
