/* rpcrdma_reg.c: the interface of rpcrdma_reg.h over one strategy's ops table,
 * and what the strategies share (rpcrdma_reg_int.h). */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "common/base/clock.h"
#include "common/base/log.h"
#include "common/base/workq.h"
#include "rpcrdma_reg_int.h"

static const struct reg_ops *const strategies[] = {
	[RR_REG_DYNAMIC] = &reg_dynamic_ops,   [RR_REG_FASTREG] = &reg_fastreg_ops,
	[RR_REG_CACHE] = &reg_cache_ops,       [RR_REG_ALLPHYS] = &reg_allphys_ops,
	[RR_REG_ZEROCOPY] = &reg_zerocopy_ops,
};

/* ---- helpers ---- */

int reg_size_class(size_t len)
{
	for (int c = 0; c < NCLASSES; c++)
		if (len <= ((size_t)1 << (CLASS_MIN_SHIFT + c)))
			return c;
	return -1;
}

size_t reg_class_size(int c)
{
	return (size_t)1 << (CLASS_MIN_SHIFT + c);
}

int reg_do(struct rr_reg_ctx *r, void *addr, size_t len, unsigned access, struct vb_mr **mr)
{
	uint64_t t0 = clock_now_ns();
	int rc = vb_reg_mr(r->pd, addr, len, access, mr);

	rr_stat_add(&r->st->reg_ns, (int64_t)(clock_now_ns() - t0));
	if (rc)
		return rc;
	rr_stat_add(&r->st->regs, 1);
	rr_stat_add(&r->st->registered_now, (int64_t)len);
	if (access & VB_ACCESS_REMOTE)
		rr_stat_add(&r->st->remote_regs_now, 1);
	return 0;
}

void reg_undo(struct rr_reg_ctx *r, struct vb_mr *mr)
{
	size_t len = mr->length;
	int remote = (mr->access & VB_ACCESS_REMOTE) != 0;
	uint64_t t0 = clock_now_ns();
	int rc = vb_dereg_mr(mr);

	if (rc)
		log_err("deregistration failed: %s", strerror(-rc));
	rr_stat_add(&r->st->dereg_ns, (int64_t)(clock_now_ns() - t0));
	rr_stat_add(&r->st->deregs, 1);
	rr_stat_add(&r->st->registered_now, -(int64_t)len);
	if (remote)
		rr_stat_add(&r->st->remote_regs_now, -1);
}

/* Register b for local access, and the remote rights if it will be exposed. */
static void register_now(struct rr_reg_ctx *r, struct rr_buf *b)
{
	b->reg_rc = reg_do(r, b->addr, b->len,
			   VB_ACCESS_LOCAL_WRITE | (b->remote ? r->remote_rights : 0), &b->mr);
}

/* On the registration queue: register, then wake whoever waits in rr_buf_wait. */
static void register_job(struct work *w)
{
	struct rr_buf *b = (struct rr_buf *)((char *)w - offsetof(struct rr_buf, reg_work));
	struct rr_reg_ctx *r = b->owner;

	register_now(r, b);
	pthread_mutex_lock(&r->lock);
	b->reg_done = 1;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

int reg_buf(struct rr_reg_ctx *r, struct rr_buf *b, unsigned flags)
{
	if (flags & RR_GET_ASYNC) {
		/* the caller waits there too unless the registration may overlap its work */
		b->owner = r;
		b->reg_work.run = register_job;
		workq_submit(r->regq, &b->reg_work);
		if (r->p.no_reg_overlap)
			rr_buf_wait(r, b);
		return 0;
	}
	register_now(r, b);
	b->reg_done = 1;
	if (b->reg_rc == 0)
		b->lkey = b->mr->lkey;
	return b->reg_rc;
}

/* ---- memory ---- */

/* Registered memory of 2 MiB and more (arenas, connection buffers, large
 * buffers, the cache's chunks) in transparent huge pages where the system
 * gives them: whatever walks it page by page (a pin; on the soft provider,
 * process_vm_readv's pinning of the peer's pages for each copy; a device's
 * translation table) and the copies into and out of it (the TLB) then meet
 * one entry per 2 MiB rather than 512. A smaller buffer with a registration
 * of its own keeps small pages: carved from a shared huge page, its own pin
 * (mlock, on the soft provider) would split the mapping and the page. */

void *rr_mem_alloc(size_t len)
{
	size_t align = len >= REG_HUGE ? REG_HUGE : 4096;
	void *p;

	if (posix_memalign(&p, align, len))
		return NULL;
#ifdef MADV_HUGEPAGE
	if (align == REG_HUGE)
		(void)madvise(p, len, MADV_HUGEPAGE); /* advice: without it, small pages */
#endif
	return p;
}

int reg_new_buf(struct rr_reg_ctx *r, size_t len, int remote, unsigned flags, struct rr_buf **out)
{
	struct rr_buf *b = calloc(1, sizeof(*b));
	int rc;

	if (!b)
		return -ENOMEM;
	b->len = len;
	b->remote = remote;
	if (!(b->addr = rr_mem_alloc(len))) {
		free(b);
		return -ENOMEM;
	}
	if ((rc = reg_buf(r, b, flags)) != 0) {
		free(b->addr);
		free(b);
		return rc;
	}
	*out = b;
	return 0;
}

int reg_own_expose(struct rr_reg_ctx *r, struct vb_conn *conn, struct rr_buf *b, const void *at,
		   size_t len, unsigned flags)
{
	if (!b->mr || !(b->mr->access & VB_ACCESS_REMOTE))
		return -EINVAL; /* asked for without RR_GET_EXPOSE */
	b->rkey = b->mr->rkey;
	return 0;
}

void reg_keep_key(struct rr_reg_ctx *r, struct vb_conn *conn, struct rr_buf *b)
{
	/* the key lives on with the registration, by design of the strategy */
}

/* The caller's region, registered as the arena is (with an arena only: the
 * other strategies copy into buffers of their own), if the arena and it fit
 * in the registered memory budget. Without it, data in the region is copied
 * like any other. */
static void region_register(struct rr_reg_ctx *r)
{
	int rc;

	if (!r->p.region || !r->p.region_len || !r->arena_mr)
		return;
	if (r->p.mem_budget && r->arena_size + r->p.region_len > r->p.mem_budget) {
		log_notice("the write records (%zu bytes) and the arena (%zu) are more than the "
			   "registered memory budget (%zu): their data is copied to be sent",
			   r->p.region_len, r->arena_size, r->p.mem_budget);
		return;
	}
	rc = reg_do(r, r->p.region, r->p.region_len, r->arena_mr->access, &r->region_mr);
	if (rc)
		log_notice("cannot register %zu bytes of write records (%s): their data is "
			   "copied to be sent",
			   r->p.region_len, strerror(-rc));
}

/* ---- the interface ---- */

int rr_reg_create(struct vb_pd *pd, const struct rr_params *p, unsigned remote_rights,
		  struct rr_stats *stats, struct rr_reg_ctx **out)
{
	struct rr_reg_ctx *r = calloc(1, sizeof(*r));
	int rc;

	if (!r)
		return -ENOMEM;
	if ((unsigned)p->reg >= sizeof(strategies) / sizeof(strategies[0]) || !strategies[p->reg]) {
		free(r);
		return -EINVAL;
	}
	r->ops = strategies[p->reg];
	r->pd = pd;
	r->p = *p;
	r->remote_rights = remote_rights;
	r->st = stats;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	rc = r->ops->setup(r); /* which may hand over to another strategy (r->ops) */
	if (rc) {
		rr_reg_destroy(r);
		return rc;
	}
	region_register(r);
	*out = r;
	return 0;
}

void rr_reg_destroy(struct rr_reg_ctx *r)
{
	if (!r)
		return;
	workq_destroy(r->regq);
	/* windows first: an MR with windows bound cannot be deregistered */
	reg_windows_destroy(r);
	reg_arena_destroy(r); /* with its free blocks */
	for (int rem = 0; rem < 2; rem++) {
		for (int c = 0; c < NCLASSES; c++) {
			while (r->free[rem][c]) {
				struct rr_buf *b = r->free[rem][c];

				r->free[rem][c] = b->next;
				if (b->chunk) {
					reg_piece_drop(r, b);
					continue;
				}
				if (b->mr)
					reg_undo(r, b->mr);
				free(b->addr);
				free(b);
			}
		}
	}
	if (r->region_mr)
		reg_undo(r, r->region_mr);
	pthread_cond_destroy(&r->cond);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

int rr_buf_get(struct rr_reg_ctx *r, size_t len, unsigned flags, struct rr_buf **out)
{
	return r->ops->get(r, len ? len : 1, flags, out); /* registrations are never empty */
}

int rr_buf_wait(struct rr_reg_ctx *r, struct rr_buf *b)
{
	if (b->chunk && !b->reg_done) { /* a piece of the cache's whose key is
					 * not known yet: its chunk's, which
					 * other pieces' users wait for too */
		struct rr_buf *k = b->chunk;
		int rc;

		pthread_mutex_lock(&r->lock);
		while (!k->reg_done)
			pthread_cond_wait(&r->cond, &r->lock);
		if ((rc = k->reg_rc) == 0) {
			b->lkey = k->mr->lkey;
			b->reg_done = 1;
		}
		pthread_mutex_unlock(&r->lock);
		return rc;
	}
	if (!b->reg_done) {
		pthread_mutex_lock(&r->lock);
		while (!b->reg_done)
			pthread_cond_wait(&r->cond, &r->lock);
		pthread_mutex_unlock(&r->lock);
	}
	if (b->reg_rc == 0 && b->mr)
		b->lkey = b->mr->lkey;
	return b->reg_rc;
}

int rr_buf_expose(struct rr_reg_ctx *r, struct vb_conn *conn, struct rr_buf *b, const void *at,
		  size_t len, unsigned flags)
{
	int rc;

	if ((const uint8_t *)at < (uint8_t *)b->addr ||
	    (const uint8_t *)at + len > (uint8_t *)b->addr + b->len)
		return -EINVAL;
	if ((rc = rr_buf_wait(r, b)) == 0)
		rc = r->ops->expose(r, conn, b, at, len, flags);
	if (rc == 0)
		b->exposed = 1;
	return rc;
}

int rr_buf_expose_wait(struct rr_reg_ctx *r, int ms)
{
	return r->ops->expose_wait ? r->ops->expose_wait(r, ms) : -EAGAIN;
}

void rr_buf_unexpose(struct rr_reg_ctx *r, struct vb_conn *conn, struct rr_buf *b)
{
	if (!b->exposed)
		return;
	b->exposed = 0;
	r->ops->unexpose(r, conn, b);
}

void rr_buf_put(struct rr_reg_ctx *r, struct rr_buf *b)
{
	if (!b)
		return;
	if (b->exposed)
		log_err("buffer released while exposed: unexpose first");
	rr_buf_wait(r, b);
	if (!b->wrapped) {
		r->ops->put(r, b);
		return;
	}
	if (b->mr)
		reg_undo(r, b->mr);
	if (!b->held)
		free(b);
}

int rr_buf_wrap(struct rr_reg_ctx *r, void *addr, size_t len, struct rr_buf **out)
{
	struct rr_buf *b = calloc(1, sizeof(*b));
	int rc;

	if (!b)
		return -ENOMEM;
	b->addr = addr;
	b->len = len;
	b->wrapped = 1;
	rc = reg_do(r, addr, len ? len : 1, VB_ACCESS_LOCAL_WRITE | r->remote_rights, &b->mr);
	if (rc) {
		free(b);
		return rc;
	}
	b->reg_done = 1;
	b->lkey = b->mr->lkey;
	b->rkey = b->mr->rkey;
	b->exposed = 1;
	*out = b;
	return 0;
}

int rr_buf_in_region(struct rr_reg_ctx *r, void *addr, size_t len, unsigned flags, struct rr_buf *b)
{
	uintptr_t a = (uintptr_t)addr, base = (uintptr_t)r->p.region;

	if (!r->region_mr || len == 0 || a < base || a - base > r->p.region_len ||
	    len > r->p.region_len - (a - base))
		return -ENOENT;
	if (!(flags & RR_EXPOSE_READ_ONLY) && r->ops->unexpose == reg_keep_key)
		return -EPERM;
	*b = (struct rr_buf){.addr = addr,
			     .len = len,
			     .wrapped = 1,
			     .held = 1,
			     .base = r->region_mr,
			     .lkey = r->region_mr->lkey,
			     .reg_done = 1};
	return 0;
}

int rr_buf_exposable(const struct rr_reg_ctx *r, const struct rr_buf *b)
{
	return b->remote || r->ops->exposes_any;
}

enum rr_reg rr_reg_kind(const struct rr_reg_ctx *r)
{
	return r->ops->kind;
}

int rr_reg_keys_per_exposure(const struct rr_reg_ctx *r)
{
	return r->ops->kind == RR_REG_FASTREG && r->mws != NULL; /* (however few are left) */
}

unsigned rr_reg_wr_room(const struct rr_reg_ctx *r, unsigned windows)
{
	return rr_reg_keys_per_exposure(r) ? 2 * windows : 0;
}

void rr_reg_on_keys_freed(struct rr_reg_ctx *r, void (*fn)(void *arg, struct rr_conn *c), void *arg)
{
	r->keys_freed = fn;
	r->keys_freed_arg = arg;
}

int rr_reg_put_is_cheap(const struct rr_reg_ctx *r)
{
	return r->ops->put_is_cheap;
}

const char *rr_reg_name(enum rr_reg r)
{
	static const char *const names[] = {
		[RR_REG_DYNAMIC] = "dynamic",	[RR_REG_FASTREG] = "fastreg",
		[RR_REG_CACHE] = "cache",	[RR_REG_ALLPHYS] = "allphys",
		[RR_REG_ZEROCOPY] = "zerocopy",
	};
	return (unsigned)r < sizeof(names) / sizeof(names[0]) ? names[r] : "?";
}
