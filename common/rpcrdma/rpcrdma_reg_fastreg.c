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
#include "rpcrdma_int.h"
#include "rpcrdma_reg_int.h"

/* A window of the pool, with the context of its invalidation's completion. */
struct rr_win {
	struct rr_wr wr; /* the invalidation's (rr_post_own) */
	struct vb_mw *mw;
	struct rr_reg_ctx *r;
};

static void window_invalidated(struct rr_conn *c, struct rr_wr *wr, const struct vb_wc *wc);

/* A new window for the pool, or NULL. */
static struct rr_win *window_new(struct rr_reg_ctx *r, int *rc)
{
	struct rr_win *w = calloc(1, sizeof(*w));

	*rc = w ? vb_alloc_mw(r->pd, &w->mw) : -ENOMEM;
	if (*rc) {
		free(w);
		return NULL;
	}
	w->r = r;
	w->wr.done = window_invalidated;
	return w;
}

static void window_free(struct rr_win *w)
{
	vb_dealloc_mw(w->mw); /* bound or not */
	free(w);
}

static int windows_create(struct rr_reg_ctx *r)
{
	r->mws = calloc(r->p.fastreg_pool, sizeof(*r->mws));
	if (!r->mws)
		return -ENOMEM;
	for (; r->nmws < r->p.fastreg_pool; r->nmws++) {
		int rc;

		if ((r->mws[r->nmws] = window_new(r, &rc)) == NULL) {
			r->nmw_free = r->nmws; /* so the ones made are freed */
			return rc;
		}
	}
	r->nmw_free = r->nmws;
	return 0;
}

/* See rpcrdma_reg_int.h. */
void reg_windows_destroy(struct rr_reg_ctx *r)
{
	for (unsigned i = 0; i < r->nmw_free; i++)
		window_free(r->mws[i]);
	free(r->mws);
	r->mws = NULL;
	r->nmws = r->nmw_free = 0;
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
	struct rr_win *w = NULL;
	int rc;

	if (!conn)
		return -ECONNRESET;
	pthread_mutex_lock(&r->lock);
	if (reserved ? r->nmw_reserved > 0 : r->nmw_free > r->nmw_reserved) {
		w = r->mws[--r->nmw_free];
		r->nmw_reserved -= reserved;
	}
	pthread_mutex_unlock(&r->lock);
	if (!w)
		return -EAGAIN;
	rc = vb_bind_mw(conn, w->mw, b->base, (void *)at, len, rights, 0, 0);
	if (rc) { /* the window, and the caller's claim on it, go back */
		pthread_mutex_lock(&r->lock);
		r->mws[r->nmw_free++] = w;
		r->nmw_reserved += reserved;
		pthread_mutex_unlock(&r->lock);
		return rc;
	}
	rr_stat_add(&r->st->binds, 1);
	rr_stat_add(&r->st->remote_regs_now, 1);
	b->win = w;
	b->rkey = w->mw->rkey;
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

/* w back into the pool: as it is if unbound, else (its invalidation could not
 * be posted, or was flushed: the device may still hold it bound) a new window
 * in its place; where that fails too, the pool counts one fewer, so that a
 * reservation of more keys than are left fails (-E2BIG) rather than waits for
 * ever. */
static void window_back(struct rr_reg_ctx *r, struct rr_win *w, int unbound)
{
	unsigned left = 0;
	int rc = 0;

	if (!unbound) {
		vb_dealloc_mw(w->mw);
		if ((rc = vb_alloc_mw(r->pd, &w->mw)) != 0)
			free(w);
	}
	pthread_mutex_lock(&r->lock);
	if (rc == 0)
		r->mws[r->nmw_free++] = w;
	else
		left = --r->nmws;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	if (rc)
		log_err("cannot replace a memory window: the pool shrinks to %u", left);
}

/* The completion of a window's invalidation (or its flush) on c. */
static void window_invalidated(struct rr_conn *c, struct rr_wr *wr, const struct vb_wc *wc)
{
	struct rr_win *w = (struct rr_win *)wr;
	struct rr_reg_ctx *r = w->r;

	pthread_mutex_lock(&c->lock);
	c->windows_ending--;
	pthread_mutex_unlock(&c->lock);
	window_back(r, w, wc->status == VB_WC_SUCCESS);
	if (r->keys_freed)
		r->keys_freed(r->keys_freed_arg, c);
}

static int post_invalidate(struct vb_conn *conn, void *arg)
{
	struct rr_win *w = arg;

	return vb_bind_mw(conn, w->mw, NULL, NULL, 0, 0, (uintptr_t)&w->wr, 1);
}

/* End b's window: unbound already if the peer invalidated it; else invalidate
 * it through the connection, signaled, and let its completion give it back
 * (window_invalidated): given back at once, a window whose invalidation the
 * dying connection then flushed would go to the next bind still bound. */
static void window_unbind(struct rr_reg_ctx *r, struct vb_conn *conn, struct rr_buf *b)
{
	struct rr_win *w = b->win;
	int peer_unbound = b->peer_unbound;
	struct rr_conn *c;

	rr_stat_add(&r->st->remote_regs_now, -1);
	b->win = NULL;
	b->rkey = 0;
	b->peer_unbound = 0;
	if (peer_unbound || !conn) {
		window_back(r, w, peer_unbound);
		return;
	}
	c = conn->context;
	pthread_mutex_lock(&c->lock);
	c->windows_ending++; /* (until window_invalidated) */
	pthread_mutex_unlock(&c->lock);
	rr_post_own(conn, &w->wr, post_invalidate, w);
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
	reg_windows_destroy(r);
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
