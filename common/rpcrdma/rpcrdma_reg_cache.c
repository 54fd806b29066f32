/*
 * rpcrdma_reg_cache.c: registration 'cache': buffers registered once and kept
 * on free lists by size class and rights, within a budget with high and low
 * watermarks; hits and misses counted. Only our own buffers are cached, never
 * by address. Keys outlive the I/O, by design: a key once exposed stays
 * valid while its buffer is cached.
 */
#include <stdlib.h>

#include "common/base/workq.h"
#include "rpcrdma_reg_int.h"

static int cache_setup(struct rr_reg_ctx *r)
{
	return workq_create(1, "rpcrdma-reg", &r->regq);
}

/* Evict idle entries, largest first, until the cache is under its low
 * watermark (r->lock held; dropped while deregistering). */
static void cache_trim(struct rr_reg_ctx *r)
{
	size_t high = r->p.cache_budget / 100 * r->p.cache_high;
	size_t low = r->p.cache_budget / 100 * r->p.cache_low;
	struct rr_buf *victims = NULL;

	if (r->st->cached_now <= high)
		return;
	for (int c = NCLASSES - 1; c >= 0 && r->st->cached_now > low; c--) {
		for (int rem = 0; rem < 2 && r->st->cached_now > low; rem++) {
			while (r->free[rem][c] && r->st->cached_now > low) {
				struct rr_buf *b = r->free[rem][c];

				r->free[rem][c] = b->next;
				rr_stat_add(&r->st->cached_now, -(int64_t)b->len);
				b->next = victims;
				victims = b;
			}
		}
	}
	pthread_mutex_unlock(&r->lock);
	while (victims) {
		struct rr_buf *b = victims;

		victims = b->next;
		reg_undo(r, b->mr);
		free(b->addr);
		free(b);
	}
	pthread_mutex_lock(&r->lock);
}

static int cache_get(struct rr_reg_ctx *r, size_t len, unsigned flags, struct rr_buf **out)
{
	int c = reg_size_class(len), rem = (flags & RR_GET_EXPOSE) != 0;
	struct rr_buf *b;
	int rc;

	if (c < 0)
		return -EMSGSIZE;
	pthread_mutex_lock(&r->lock);
	b = r->free[rem][c];
	if (b) {
		r->free[rem][c] = b->next;
		rr_stat_add(&r->st->cached_now, -(int64_t)b->len);
	}
	pthread_mutex_unlock(&r->lock);
	if (b) {
		rr_stat_add(&r->st->cache_hits, 1);
		*out = b;
		return 0;
	}
	rr_stat_add(&r->st->cache_misses, 1);
	if ((rc = reg_new_buf(r, reg_class_size(c), rem, flags, out)) == 0)
		(*out)->cls = c;
	return rc;
}

static void cache_put(struct rr_reg_ctx *r, struct rr_buf *b)
{
	if (b->reg_rc) {
		free(b->addr); /* its registration failed: nothing to keep */
		free(b);
		return;
	}
	pthread_mutex_lock(&r->lock);
	b->next = r->free[b->remote][b->cls];
	r->free[b->remote][b->cls] = b;
	rr_stat_add(&r->st->cached_now, (int64_t)b->len);
	cache_trim(r);
	pthread_mutex_unlock(&r->lock);
}

const struct reg_ops reg_cache_ops = {
	.kind = RR_REG_CACHE,
	.setup = cache_setup,
	.get = cache_get,
	.expose = reg_own_expose,
	.unexpose = reg_keep_key,
	.put = cache_put,
	.put_is_cheap = 1,
};
