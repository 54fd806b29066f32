/* rpcrdma_reg.c: the registration strategies (see rpcrdma_reg.h). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "log.h"
#include "rpcrdma_int.h"
#include "workq.h"

#define CLASS_MIN_SHIFT 12 /* 4 KiB */
#define NCLASSES	14 /* 4 KiB .. 32 MiB */
#define ARENA_WAIT_S	10 /* how long a get waits for arena space */
#define REG_THREADS	4  /* dynamic: registrations run this many at once */

struct rr_reg_ctx {
	enum rr_reg kind;
	struct vb_pd *pd;
	struct rr_params p;
	unsigned remote_rights;
	struct rr_stats *st;

	pthread_mutex_t lock;		  /* protects everything below */
	pthread_cond_t cond;		  /* arena space or a window came free */
	struct rr_buf *free[2][NCLASSES]; /* [registered with remote rights][class] */

	uint8_t *arena; /* fastreg, allphys */
	size_t arena_size, arena_used;
	struct vb_mr *arena_mr;

	struct vb_mw **mws; /* fastreg: free windows */
	unsigned nmws, nmw_free;

	struct workq *regq; /* dynamic, cache: registrations off the caller's thread */
};

static int size_class(size_t len)
{
	for (int c = 0; c < NCLASSES; c++)
		if (len <= ((size_t)1 << (CLASS_MIN_SHIFT + c)))
			return c;
	return -1;
}

static size_t class_size(int c)
{
	return (size_t)1 << (CLASS_MIN_SHIFT + c);
}

/* Register [addr, addr+len) with access, counting it. */
static int do_reg(struct rr_reg_ctx *r, void *addr, size_t len, unsigned access, struct vb_mr **mr)
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

static void do_dereg(struct rr_reg_ctx *r, struct vb_mr *mr)
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

static unsigned local_rights(void)
{
	return VB_ACCESS_LOCAL_WRITE;
}

/* ---- dynamic: background registration ---- */

/* Register b for local access, and the remote rights if it will be exposed. */
static void register_buf(struct rr_reg_ctx *r, struct rr_buf *b)
{
	b->reg_rc = do_reg(r, b->addr, b->len, local_rights() | (b->remote ? r->remote_rights : 0),
			   &b->mr);
}

/* On the registration queue: register, then wake whoever waits in rr_buf_wait. */
static void register_job(struct work *w)
{
	struct rr_buf *b = (struct rr_buf *)((char *)w - offsetof(struct rr_buf, reg_work));
	struct rr_reg_ctx *r = b->owner;

	register_buf(r, b);
	pthread_mutex_lock(&r->lock);
	b->reg_done = 1;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

/* Register b (its addr, len and remote set) on the registration thread; the
 * caller waits there too unless the registration may overlap its work. */
static void register_async(struct rr_reg_ctx *r, struct rr_buf *b)
{
	b->owner = r;
	b->reg_work.run = register_job;
	workq_submit(r->regq, &b->reg_work);
	if (r->p.no_reg_overlap)
		rr_buf_wait(r, b);
}

static int dynamic_get(struct rr_reg_ctx *r, size_t len, unsigned flags, struct rr_buf *b)
{
	b->len = len;
	if (posix_memalign(&b->addr, 4096, len ? len : 1))
		return -ENOMEM;
	b->remote = (flags & RR_GET_EXPOSE) != 0;
	if (flags & RR_GET_ASYNC) {
		register_async(r, b);
		return 0;
	}
	register_buf(r, b);
	b->reg_done = 1;
	if (b->reg_rc) {
		free(b->addr);
		return b->reg_rc;
	}
	return 0;
}

int rr_buf_wait(struct rr_reg_ctx *r, struct rr_buf *b)
{
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

/* ---- cache ---- */

/* Evict idle entries, largest first, until the cache is under its low watermark. */
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
		do_dereg(r, b->mr);
		free(b->addr);
		free(b);
	}
	pthread_mutex_lock(&r->lock);
}

static int cache_get(struct rr_reg_ctx *r, size_t len, unsigned flags, struct rr_buf **out)
{
	int c = size_class(len), rem = (flags & RR_GET_EXPOSE) != 0;
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
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->len = class_size(c);
	b->cls = c;
	b->remote = rem;
	if (posix_memalign(&b->addr, 4096, b->len)) {
		free(b);
		return -ENOMEM;
	}
	if (flags & RR_GET_ASYNC) {
		register_async(r, b);
		*out = b;
		return 0;
	}
	rc = do_reg(r, b->addr, b->len, local_rights() | (rem ? r->remote_rights : 0), &b->mr);
	if (rc) {
		free(b->addr);
		free(b);
		return rc;
	}
	b->lkey = b->mr->lkey;
	b->reg_done = 1;
	*out = b;
	return 0;
}

static void cache_put(struct rr_reg_ctx *r, struct rr_buf *b)
{
	pthread_mutex_lock(&r->lock);
	b->next = r->free[b->remote][b->cls];
	r->free[b->remote][b->cls] = b;
	rr_stat_add(&r->st->cached_now, (int64_t)b->len);
	cache_trim(r);
	pthread_mutex_unlock(&r->lock);
}

/* ---- arenas (fastreg, allphys) ---- */

static int arena_get(struct rr_reg_ctx *r, size_t len, unsigned flags, struct rr_buf **out)
{
	int c = size_class(len);
	struct timespec deadline;
	struct rr_buf *b = NULL;

	if (c < 0 || class_size(c) > r->arena_size)
		return -EMSGSIZE;
	deadline = clock_deadline(CLOCK_REALTIME, ARENA_WAIT_S * 1000L);
	pthread_mutex_lock(&r->lock);
	while (!b) {
		if ((b = r->free[0][c]) != NULL) {
			r->free[0][c] = b->next;
			break;
		}
		if (r->arena_used + class_size(c) <= r->arena_size) {
			b = calloc(1, sizeof(*b));
			if (!b)
				break;
			b->addr = r->arena + r->arena_used;
			b->len = class_size(c);
			b->cls = c;
			b->lkey = r->arena_mr->lkey;
			b->reg_done = 1;
			r->arena_used += b->len;
			break;
		}
		if ((flags & RR_GET_NOWAIT) ||
		    pthread_cond_timedwait(&r->cond, &r->lock, &deadline) == ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&r->lock);
	if (!b) {
		log_warn("registered arena of %zu bytes exhausted", r->arena_size);
		return -ENOMEM;
	}
	*out = b;
	return 0;
}

static void arena_put(struct rr_reg_ctx *r, struct rr_buf *b)
{
	pthread_mutex_lock(&r->lock);
	b->next = r->free[0][b->cls];
	r->free[0][b->cls] = b;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

static int arena_create(struct rr_reg_ctx *r, unsigned access)
{
	size_t sz = r->p.arena_size;

	if (posix_memalign((void **)&r->arena, 4096, sz))
		return -ENOMEM;
	memset(r->arena, 0, sz);
	r->arena_size = sz;
	return do_reg(r, r->arena, sz, access, &r->arena_mr);
}

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

/* fastreg: bind a window with a fresh key over b. */
static int window_bind(struct rr_reg_ctx *r, struct vb_conn *conn, struct rr_buf *b, unsigned flags)
{
	struct timespec deadline = clock_deadline(CLOCK_REALTIME, ARENA_WAIT_S * 1000L);
	struct vb_mw *mw = NULL;
	int rc;

	if (!conn)
		return -ECONNRESET;
	pthread_mutex_lock(&r->lock);
	while (r->nmw_free == 0)
		if ((flags & RR_GET_NOWAIT) ||
		    pthread_cond_timedwait(&r->cond, &r->lock, &deadline) == ETIMEDOUT)
			break;
	if (r->nmw_free)
		mw = r->mws[--r->nmw_free];
	pthread_mutex_unlock(&r->lock);
	if (!mw)
		return -EAGAIN;
	rc = vb_bind_mw(conn, mw, r->arena_mr, b->addr, b->len, r->remote_rights, 0, 0);
	if (rc) {
		pthread_mutex_lock(&r->lock);
		r->mws[r->nmw_free++] = mw;
		pthread_mutex_unlock(&r->lock);
		return rc;
	}
	rr_stat_add(&r->st->binds, 1);
	rr_stat_add(&r->st->remote_regs_now, 1);
	b->mw = mw;
	b->rkey = mw->rkey;
	return 0;
}

/* fastreg: invalidate b's window; if the connection cannot, replace the window. */
static void window_unbind(struct rr_reg_ctx *r, struct vb_conn *conn, struct rr_buf *b)
{
	struct vb_mw *mw = b->mw;

	if (!conn || vb_bind_mw(conn, mw, r->arena_mr, b->addr, 0, 0, 0, 0) != 0) {
		vb_dealloc_mw(mw);
		if (vb_alloc_mw(r->pd, &mw) != 0) {
			log_err("cannot replace a memory window; the pool shrinks");
			mw = NULL;
		}
	}
	rr_stat_add(&r->st->remote_regs_now, -1);
	b->mw = NULL;
	b->rkey = 0;
	pthread_mutex_lock(&r->lock);
	if (mw)
		r->mws[r->nmw_free++] = mw;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

/* ---- the interface ---- */

int rr_reg_create(struct vb_pd *pd, const struct rr_params *p, unsigned remote_rights,
		  struct rr_stats *stats, struct rr_reg_ctx **out)
{
	struct rr_reg_ctx *r = calloc(1, sizeof(*r));
	int rc = 0;

	if (!r)
		return -ENOMEM;
	r->kind = p->reg;
	r->pd = pd;
	r->p = *p;
	r->remote_rights = remote_rights;
	r->st = stats;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	switch (r->kind) {
	case RR_REG_ALLPHYS:
		if (!p->trusted_peers) {
			log_err("registration 'allphys' exposes the whole arena with one key: "
				"it needs trusted_peers = true");
			rc = -EPERM;
			break;
		}
		rc = arena_create(r, local_rights() | remote_rights);
		break;
	case RR_REG_FASTREG:
		rc = arena_create(r, local_rights() | VB_ACCESS_MW_BIND);
		if (rc == 0 && remote_rights)
			rc = windows_create(r);
		if (rc != -EOPNOTSUPP)
			break;
		/* no memory windows on this device: register per I/O instead */
		log_notice("device %s has no memory windows: registration 'fastreg' runs as '%s'",
			   pd->dev->name,
			   remote_rights & VB_ACCESS_REMOTE_WRITE ? "zerocopy" : "dynamic");
		for (unsigned i = 0; i < r->nmws; i++)
			vb_dealloc_mw(r->mws[i]);
		r->nmws = r->nmw_free = 0;
		do_dereg(r, r->arena_mr);
		r->arena_mr = NULL;
		free(r->arena);
		r->arena = NULL;
		r->kind = remote_rights & VB_ACCESS_REMOTE_WRITE ? RR_REG_ZEROCOPY : RR_REG_DYNAMIC;
		/* fall through */
	case RR_REG_DYNAMIC:
	case RR_REG_ZEROCOPY:
		rc = workq_create(REG_THREADS, "rpcrdma-reg", &r->regq);
		break;
	case RR_REG_CACHE:
		rc = workq_create(1, "rpcrdma-reg", &r->regq);
		break;
	}
	if (rc) {
		rr_reg_destroy(r);
		return rc;
	}
	*out = r;
	return 0;
}

void rr_reg_destroy(struct rr_reg_ctx *r)
{
	if (!r)
		return;
	workq_destroy(r->regq);
	for (int rem = 0; rem < 2; rem++) {
		for (int c = 0; c < NCLASSES; c++) {
			while (r->free[rem][c]) {
				struct rr_buf *b = r->free[rem][c];

				r->free[rem][c] = b->next;
				if (b->mr)
					do_dereg(r, b->mr);
				if (!r->arena)
					free(b->addr);
				free(b);
			}
		}
	}
	for (unsigned i = 0; i < r->nmw_free; i++)
		vb_dealloc_mw(r->mws[i]);
	free(r->mws);
	if (r->arena_mr)
		do_dereg(r, r->arena_mr);
	free(r->arena);
	pthread_cond_destroy(&r->cond);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

int rr_buf_get(struct rr_reg_ctx *r, size_t len, unsigned flags, struct rr_buf **out)
{
	struct rr_buf *b;
	int rc;

	if (len == 0)
		len = 1; /* registrations are never empty */
	switch (r->kind) {
	case RR_REG_CACHE:
		return cache_get(r, len, flags, out);
	case RR_REG_FASTREG:
	case RR_REG_ALLPHYS:
		return arena_get(r, len, flags, out);
	case RR_REG_DYNAMIC:
	case RR_REG_ZEROCOPY:
		break;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	rc = dynamic_get(r, len, flags, b);
	if (rc) {
		free(b);
		return rc;
	}
	if (b->reg_done)
		b->lkey = b->mr->lkey;
	*out = b;
	return 0;
}

int rr_buf_expose(struct rr_reg_ctx *r, struct vb_conn *conn, struct rr_buf *b, unsigned flags)
{
	int rc = rr_buf_wait(r, b);

	if (rc)
		return rc;
	switch (r->kind) {
	case RR_REG_FASTREG:
		rc = window_bind(r, conn, b, flags);
		break;
	case RR_REG_ALLPHYS:
		b->rkey = r->arena_mr->rkey;
		break;
	default:
		if (!b->mr || !(b->mr->access & VB_ACCESS_REMOTE))
			return -EINVAL; /* asked for without RR_GET_EXPOSE */
		b->rkey = b->mr->rkey;
		break;
	}
	if (rc == 0)
		b->exposed = 1;
	return rc;
}

void rr_buf_unexpose(struct rr_reg_ctx *r, struct vb_conn *conn, struct rr_buf *b)
{
	if (!b->exposed)
		return;
	b->exposed = 0;
	switch (r->kind) {
	case RR_REG_FASTREG:
		window_unbind(r, conn, b);
		break;
	case RR_REG_DYNAMIC:
	case RR_REG_ZEROCOPY:
		do_dereg(r, b->mr); /* the key dies now; the memory goes at put */
		b->mr = NULL;
		break;
	default:
		break; /* cache and allphys keys live on, by design */
	}
}

void rr_buf_put(struct rr_reg_ctx *r, struct rr_buf *b)
{
	if (!b)
		return;
	if (b->exposed)
		log_err("buffer released while exposed: unexpose first");
	if (rr_buf_wait(r, b) != 0 && !b->wrapped && r->kind == RR_REG_CACHE) {
		free(b->addr); /* its registration failed: nothing to keep */
		free(b);
		return;
	}
	switch (r->kind) {
	case RR_REG_CACHE:
		if (!b->wrapped) {
			cache_put(r, b);
			return;
		}
		break;
	case RR_REG_FASTREG:
	case RR_REG_ALLPHYS:
		if (!b->wrapped) {
			arena_put(r, b);
			return;
		}
		break;
	default:
		break;
	}
	if (b->mr)
		do_dereg(r, b->mr);
	if (!b->wrapped)
		free(b->addr);
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
	rc = do_reg(r, addr, len ? len : 1, local_rights() | r->remote_rights, &b->mr);
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

enum rr_reg rr_reg_kind(const struct rr_reg_ctx *r)
{
	return r->kind;
}

int rr_reg_put_is_cheap(const struct rr_reg_ctx *r)
{
	return r->kind != RR_REG_DYNAMIC && r->kind != RR_REG_ZEROCOPY;
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
