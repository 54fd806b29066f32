/*
 * rpcrdma_reg_cache.c: registration 'cache': buffers registered once and kept
 * on free lists by size class and rights, within a budget with high and low
 * watermarks; hits and misses counted. Only our own buffers are cached, never
 * by address. Keys outlive the I/O, by design: a key once exposed stays
 * valid while its buffer is cached.
 *
 * Chunks. A buffer of 64 KiB to 1 MiB for local use only (never exposed: its
 * key would reach its neighbours) is a piece of a chunk, one huge page
 * (rr_mem_alloc) registered once and cut into pieces of its class, which go
 * to the free list together: the copies into and out of them, and the soft
 * provider's pinning of them for its peer, meet one page-table entry per
 * chunk. A chunk goes back only whole, once every piece of it is idle; until
 * then its idle pieces stay cached (idle_held), past the high watermark if
 * need be, at most a chunk less a piece for each piece in use; the
 * watermarks weigh what can go. A piece whose chunk is still registering
 * goes only to a caller that waits for it later (RR_GET_ASYNC): the event
 * loop's gets never wait behind a registration. Where the budget is under
 * four chunks buffers keep registrations of their own.
 */
#include <errno.h>
#include <stdlib.h>

#include "common/base/workq.h"
#include "rpcrdma_reg_int.h"

static int cache_setup(struct rr_reg_ctx *r)
{
	return workq_create(1, "rpcrdma-reg", &r->regq);
}

#define PIECE_MIN (REG_HUGE / 32)

/* Whether buffers of class c with rights rem are pieces of chunks. */
static int carved(const struct rr_reg_ctx *r, int c, int rem)
{
	size_t size = reg_class_size(c);

	return !rem && size >= PIECE_MIN && size <= REG_HUGE / 2 &&
	       r->p.cache_budget >= 4 * REG_HUGE;
}

/* Chunk k's idle pieces that cannot go, for idle_held. */
static size_t held_of(const struct rr_buf *k)
{
	return k->idle < k->pieces ? k->idle * reg_class_size(k->cls) : 0;
}

/* Chunk k now has pieces pieces, idle of them cached (r->lock held). */
static void chunk_count(struct rr_reg_ctx *r, struct rr_buf *k, unsigned idle, unsigned pieces)
{
	r->idle_held -= held_of(k);
	k->idle = idle;
	k->pieces = pieces;
	r->idle_held += held_of(k);
}

/* Free chunk k's idle pieces on free list *head, uncounted (r->lock held). */
static void unlink_pieces(struct rr_reg_ctx *r, struct rr_buf **head, struct rr_buf *k)
{
	unsigned n = 0;

	for (struct rr_buf **pp = head; *pp;) {
		struct rr_buf *b = *pp;

		if (b->chunk != k) {
			pp = &b->next;
			continue;
		}
		*pp = b->next;
		free(b);
		n++;
	}
	rr_stat_add(&r->st->cached_now, -(int64_t)(n * reg_class_size(k->cls)));
	chunk_count(r, k, k->idle - n, k->pieces - n);
}

/* Chunk k's registration failed: its idle pieces on *head go, and k with
 * its last (r->lock held; nothing registered to undo). */
static void chunk_purge(struct rr_reg_ctx *r, struct rr_buf **head, struct rr_buf *k)
{
	unlink_pieces(r, head, k);
	if (k->pieces == 0) {
		free(k->addr);
		free(k);
	}
}

/* Evict idle entries, largest first, until the cache is under its low
 * watermark; a chunk only whole (r->lock held; dropped while deregistering). */
static void cache_trim(struct rr_reg_ctx *r)
{
	size_t high = r->p.cache_budget / 100 * r->p.cache_high;
	size_t low = r->p.cache_budget / 100 * r->p.cache_low;
	struct rr_buf *victims = NULL;

	if (r->st->cached_now - r->idle_held <= high)
		return;
	for (int c = NCLASSES - 1; c >= 0 && r->st->cached_now - r->idle_held > low; c--) {
		for (int rem = 0; rem < 2 && r->st->cached_now - r->idle_held > low; rem++) {
			struct rr_buf **pp = &r->free[rem][c];

			while (*pp && r->st->cached_now - r->idle_held > low) {
				struct rr_buf *b = *pp, *k = b->chunk;

				if (k && k->idle < k->pieces) { /* a piece is in use */
					pp = &b->next;
					continue;
				}
				if (k) { /* all idle: the chunk goes whole */
					unlink_pieces(r, &r->free[rem][c], k);
					pp = &r->free[rem][c];
					b = k;
				} else {
					*pp = b->next;
					rr_stat_add(&r->st->cached_now, -(int64_t)b->len);
				}
				b->next = victims;
				victims = b;
			}
		}
	}
	pthread_mutex_unlock(&r->lock);
	while (victims) {
		struct rr_buf *b = victims;

		victims = b->next;
		if (b->mr) /* (a chunk whose registration failed has none) */
			reg_undo(r, b->mr);
		free(b->addr);
		free(b);
	}
	pthread_mutex_lock(&r->lock);
}

/* A new chunk of class c: one piece in *out, the others cached. */
static int chunk_new(struct rr_reg_ctx *r, int c, unsigned flags, struct rr_buf **out)
{
	size_t size = reg_class_size(c);
	unsigned n = (unsigned)(REG_HUGE / size);
	struct rr_buf *k, *piece[REG_HUGE / PIECE_MIN];
	int rc = 0;

	for (unsigned i = 0; i < n; i++)
		if (!(piece[i] = calloc(1, sizeof(*piece[i]))))
			rc = -ENOMEM;
	if (rc == 0)
		rc = reg_new_buf(r, REG_HUGE, 0, flags, &k);
	if (rc) {
		for (unsigned i = 0; i < n; i++)
			free(piece[i]);
		return rc;
	}
	k->cls = c;
	for (unsigned i = 0; i < n; i++) {
		piece[i]->addr = (uint8_t *)k->addr + i * size;
		piece[i]->len = size;
		piece[i]->cls = c;
		piece[i]->chunk = k;
	}
	pthread_mutex_lock(&r->lock);
	for (unsigned i = 0; i < n && k->reg_done && k->reg_rc == 0; i++) {
		piece[i]->lkey = k->mr->lkey; /* known: no rr_buf_wait needs the lock */
		piece[i]->reg_done = 1;
	}
	for (unsigned i = 1; i < n; i++) {
		piece[i]->next = r->free[0][c];
		r->free[0][c] = piece[i];
	}
	rr_stat_add(&r->st->cached_now, (int64_t)(size * (n - 1)));
	chunk_count(r, k, n - 1, n);
	cache_trim(r);
	pthread_mutex_unlock(&r->lock);
	*out = piece[0];
	return 0;
}

/* See rpcrdma_reg_int.h. */
void reg_piece_drop(struct rr_reg_ctx *r, struct rr_buf *b)
{
	struct rr_buf *k = b->chunk;
	int last;

	pthread_mutex_lock(&r->lock);
	chunk_count(r, k, k->idle, k->pieces - 1);
	last = k->pieces == 0;
	pthread_mutex_unlock(&r->lock);
	free(b);
	if (!last)
		return;
	if (k->mr)
		reg_undo(r, k->mr);
	free(k->addr);
	free(k);
}

/* Whether a cached piece of chunk k may go to a caller with flags: its
 * registration is done, or still running for one that waits later. */
static int piece_ready(const struct rr_buf *k, unsigned flags)
{
	return k->reg_done ? k->reg_rc == 0 : (flags & RR_GET_ASYNC) != 0;
}

static int cache_get(struct rr_reg_ctx *r, size_t len, unsigned flags, struct rr_buf **out)
{
	int c = reg_size_class(len), rem = (flags & RR_GET_EXPOSE) != 0;
	struct rr_buf *b, **pp;
	int rc;

	if (c < 0)
		return -EMSGSIZE;
	pthread_mutex_lock(&r->lock);
	for (pp = &r->free[rem][c]; (b = *pp) != NULL;) {
		if (!b->chunk || piece_ready(b->chunk, flags))
			break;
		if (b->chunk->reg_done) { /* its registration failed */
			chunk_purge(r, &r->free[rem][c], b->chunk);
			pp = &r->free[rem][c];
		} else {
			pp = &b->next;
		}
	}
	if (b) {
		*pp = b->next;
		rr_stat_add(&r->st->cached_now, -(int64_t)b->len);
		if (b->chunk)
			chunk_count(r, b->chunk, b->chunk->idle - 1, b->chunk->pieces);
	}
	pthread_mutex_unlock(&r->lock);
	if (b) {
		rr_stat_add(&r->st->cache_hits, 1);
		/* a piece's key, once its chunk is registered (at once here
		 * without RR_GET_ASYNC; the caller waits later with it) */
		if (b->chunk && !(flags & RR_GET_ASYNC) && (rc = rr_buf_wait(r, b)) != 0) {
			reg_piece_drop(r, b);
			return rc;
		}
		*out = b;
		return 0;
	}
	rr_stat_add(&r->st->cache_misses, 1);
	if (carved(r, c, rem))
		return chunk_new(r, c, flags, out);
	if ((rc = reg_new_buf(r, reg_class_size(c), rem, flags, out)) == 0)
		(*out)->cls = c;
	return rc;
}

static void cache_put(struct rr_reg_ctx *r, struct rr_buf *b)
{
	if (b->chunk && b->chunk->reg_rc) {
		reg_piece_drop(r, b); /* its chunk's registration failed */
		return;
	}
	if (b->reg_rc) {
		free(b->addr); /* its registration failed: nothing to keep */
		free(b);
		return;
	}
	pthread_mutex_lock(&r->lock);
	b->next = r->free[b->remote][b->cls];
	r->free[b->remote][b->cls] = b;
	rr_stat_add(&r->st->cached_now, (int64_t)b->len);
	if (b->chunk)
		chunk_count(r, b->chunk, b->chunk->idle + 1, b->chunk->pieces);
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
