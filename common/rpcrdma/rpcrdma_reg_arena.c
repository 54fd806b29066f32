/*
 * rpcrdma_reg_arena.c: the arena of 'fastreg' and 'allphys', one registration
 * made at start and shared out as a buddy allocator: blocks of the size
 * classes, each aligned (from the arena's start) to its size. At start the
 * arena is cut into the largest blocks that fit, in turn. A get takes a free
 * block of its class or splits the smallest larger free one, freeing the
 * halves it does not keep; a put joins the block with its buddy (the other
 * half of the block twice its size) for as long as that is free too. So what
 * one size gave back serves any other: carved once per class and kept on
 * that class's free list, as before, the arena of a mount that had done much
 * 1 MiB I/O had nothing left for 512 KiB.
 *
 * A free block is an rr_buf on r->free[0][its class], a doubly linked list,
 * and in r->arena_free_at under its offset, where a put finds its buddy; the
 * descriptor of a half that a put joined waits on r->arena_spare for a split.
 */
#include <stdlib.h>
#include <string.h>

#include "common/base/clock.h"
#include "common/base/log.h"
#include "rpcrdma_reg_int.h"

static size_t arena_off(const struct rr_reg_ctx *r, const struct rr_buf *b)
{
	return (size_t)((uint8_t *)b->addr - r->arena);
}

/* A block's descriptor: class c at offset off; a spare one, else a new one
 * (NULL if that fails). r->lock held. */
static struct rr_buf *block_new(struct rr_reg_ctx *r, size_t off, int c)
{
	struct rr_buf *b = r->arena_spare;

	if (b)
		r->arena_spare = b->next;
	else if (!(b = malloc(sizeof(*b))))
		return NULL;
	*b = (struct rr_buf){.addr = r->arena + off,
			     .cls = c,
			     .len = reg_class_size(c),
			     .lkey = r->arena_mr->lkey,
			     .base = r->arena_mr,
			     .reg_done = 1};
	return b;
}

/* Keep the descriptor of a block joined to its buddy for the next split, so
 * that a get and a put allocate nothing: there are no more of them than the
 * arena has blocks of the smallest class. r->lock held. */
static void block_spare(struct rr_reg_ctx *r, struct rr_buf *b)
{
	b->next = r->arena_spare;
	r->arena_spare = b;
}

/* Free block b (of class b->cls). r->lock held. */
static void block_free(struct rr_reg_ctx *r, struct rr_buf *b)
{
	struct rr_buf **head = &r->free[0][b->cls];

	b->len = reg_class_size(b->cls);
	b->prev = NULL;
	b->next = *head;
	if (*head)
		(*head)->prev = b;
	*head = b;
	r->arena_free_at[arena_off(r, b) >> CLASS_MIN_SHIFT] = b;
}

/* Take free block b off its list. r->lock held. */
static void block_take(struct rr_reg_ctx *r, struct rr_buf *b)
{
	if (b->prev)
		b->prev->next = b->next;
	else
		r->free[0][b->cls] = b->next;
	if (b->next)
		b->next->prev = b->prev;
	b->next = b->prev = NULL;
	r->arena_free_at[arena_off(r, b) >> CLASS_MIN_SHIFT] = NULL;
}

/* A block of class c, split from the smallest free one that is as large;
 * NULL if there is none (or no memory to describe a half). r->lock held. */
static struct rr_buf *block_get(struct rr_reg_ctx *r, int c)
{
	struct rr_buf *b, *half;
	int k = c;

	while (k < NCLASSES && !r->free[0][k])
		k++;
	if (k == NCLASSES)
		return NULL;
	block_take(r, b = r->free[0][k]);
	for (; k > c; k--) {
		if (!(half = block_new(r, arena_off(r, b) + reg_class_size(k - 1), k - 1))) {
			block_free(r, b); /* still a whole block of class k */
			return NULL;
		}
		b->cls = k - 1;
		block_free(r, half);
	}
	b->len = reg_class_size(c);
	return b;
}

int reg_arena_create(struct rr_reg_ctx *r, unsigned access)
{
	size_t sz = r->p.arena_size & ~(reg_class_size(0) - 1), off = 0;
	int rc;

	if (sz == 0)
		return -EINVAL;
	if (!(r->arena = rr_mem_alloc(sz)) ||
	    !(r->arena_free_at = calloc(sz >> CLASS_MIN_SHIFT, sizeof(*r->arena_free_at)))) {
		reg_arena_destroy(r);
		return -ENOMEM;
	}
	memset(r->arena, 0, sz);
	r->arena_size = sz;
	if ((rc = reg_do(r, r->arena, sz, access, &r->arena_mr)) != 0) {
		reg_arena_destroy(r);
		return rc;
	}
	while (off < sz) { /* the largest aligned block that fits, in turn */
		int c = NCLASSES - 1;
		struct rr_buf *b;

		while (off % reg_class_size(c) || off + reg_class_size(c) > sz)
			c--;
		if (!(b = block_new(r, off, c))) {
			reg_arena_destroy(r);
			return -ENOMEM;
		}
		block_free(r, b);
		off += reg_class_size(c);
	}
	return 0;
}

void reg_arena_destroy(struct rr_reg_ctx *r)
{
	if (r->arena_free_at) {
		for (int c = 0; c < NCLASSES; c++) {
			while (r->free[0][c]) {
				struct rr_buf *b = r->free[0][c];

				r->free[0][c] = b->next;
				free(b);
			}
		}
	}
	while (r->arena_spare) {
		struct rr_buf *b = r->arena_spare;

		r->arena_spare = b->next;
		free(b);
	}
	free(r->arena_free_at);
	r->arena_free_at = NULL;
	if (r->arena_mr)
		reg_undo(r, r->arena_mr);
	r->arena_mr = NULL;
	free(r->arena);
	r->arena = NULL;
	r->arena_size = 0;
}

int reg_arena_get(struct rr_reg_ctx *r, size_t len, unsigned flags, struct rr_buf **out)
{
	int c = reg_size_class(len);
	struct timespec deadline;
	struct rr_buf *b = NULL;

	if (c < 0 || reg_class_size(c) > r->arena_size)
		return -EMSGSIZE;
	deadline = clock_deadline(CLOCK_REALTIME, ARENA_WAIT_S * 1000L);
	pthread_mutex_lock(&r->lock);
	while (!(b = block_get(r, c)))
		if ((flags & RR_GET_NOWAIT) ||
		    pthread_cond_timedwait(&r->cond, &r->lock, &deadline) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&r->lock);
	if (!b) {
		log_warn("registered arena of %zu bytes exhausted", r->arena_size);
		return -ENOMEM;
	}
	*out = b;
	return 0;
}

void reg_arena_put(struct rr_reg_ctx *r, struct rr_buf *b)
{
	pthread_mutex_lock(&r->lock);
	for (; b->cls + 1 < NCLASSES; b->cls++) {
		size_t s = reg_class_size(b->cls), off = arena_off(r, b), at = off ^ s;
		struct rr_buf *buddy;

		if (at + s > r->arena_size)
			break; /* the arena's end: the block has no buddy */
		buddy = r->arena_free_at[at >> CLASS_MIN_SHIFT];
		if (!buddy || buddy->cls != b->cls)
			break;
		block_take(r, buddy);
		if (at < off) { /* the pair's descriptor is the lower half's */
			struct rr_buf *t = b;

			b = buddy;
			buddy = t;
		}
		block_spare(r, buddy);
	}
	block_free(r, b);
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
}
