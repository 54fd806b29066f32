/*
 * soft_mr.c: memory registration, memory windows and the device's key table.
 *
 * Keys are random 32-bit numbers from getentropy (never 0, never reused while
 * live); an MR has distinct lkey and rkey, a window gets a fresh rkey per
 * binding. Every remote access is checked here against the key's PD, rights
 * and bounds, and holds an in-flight reference on the MR until the data has
 * moved; deregistration removes the keys at once and then waits for those
 * references to drain. A Read whose initiator copies the data itself
 * (soft_cma.c) holds none once granted: the key's generation word, raised
 * when the key goes, makes that copy fail instead. Everything here is under
 * dev->keys.lock.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "common/base/log.h"
#include "soft.h"

/* An empty key table. */
int soft_keys_init(struct soft_keytab *t)
{
	memset(t, 0, sizeof(*t));
	t->nslots = 256;
	t->slots = calloc(t->nslots, sizeof(*t->slots));
	if (t->slots == NULL)
		return -ENOMEM;
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->idle, NULL);
	return 0;
}

/* Free the key table (its entries belong to MRs and windows). */
void soft_keys_fini(struct soft_keytab *t)
{
	pthread_cond_destroy(&t->idle);
	pthread_mutex_destroy(&t->lock);
	free(t->slots);
}

/* The entry for key, or NULL. */
static struct soft_key *key_find(struct soft_keytab *t, uint32_t key)
{
	struct soft_key *k = t->slots[key & (t->nslots - 1)];

	while (k && k->key != key)
		k = k->next;
	return k;
}

/* Double the hash table when it gets crowded (allocation failure just keeps chains longer). */
static void key_grow(struct soft_keytab *t)
{
	uint32_t n = t->nslots * 2;
	struct soft_key **s = calloc(n, sizeof(*s));

	if (s == NULL)
		return;
	for (uint32_t i = 0; i < t->nslots; i++) {
		struct soft_key *k = t->slots[i], *next;

		for (; k; k = next) {
			next = k->next;
			k->next = s[k->key & (n - 1)];
			s[k->key & (n - 1)] = k;
		}
	}
	free(t->slots);
	t->slots = s;
	t->nslots = n;
}

/* Add an entry, growing the table as it fills. */
static void key_insert(struct soft_keytab *t, struct soft_key *k)
{
	if (t->count >= t->nslots)
		key_grow(t);
	k->next = t->slots[k->key & (t->nslots - 1)];
	t->slots[k->key & (t->nslots - 1)] = k;
	t->count++;
}

/* Unlink an entry; its key stops working at once. */
static void key_remove(struct soft_keytab *t, struct soft_key *k)
{
	struct soft_key **pp = &t->slots[k->key & (t->nslots - 1)];

	while (*pp && *pp != k)
		pp = &(*pp)->next;
	if (*pp) {
		*pp = k->next;
		t->count--;
	}
	k->next = NULL;
	soft_cma_word_put(k->cma_word); /* a copy taken through it no longer counts */
	k->cma_word = 0;
}

/* A random, non-zero key not in use (t->lock held). */
uint32_t soft_keys_random(struct soft_keytab *t)
{
	uint32_t key;

	do {
		if (t->pool_left < sizeof(key)) {
			/* getentropy gives at most 256 bytes a call: the pool's size */
			if (getentropy(t->pool, sizeof(t->pool)) != 0)
				fatal("getentropy failed: %s", strerror(errno));
			t->pool_left = sizeof(t->pool);
		}
		t->pool_left -= sizeof(key);
		memcpy(&key, t->pool + t->pool_left, sizeof(key));
	} while (key == 0 || key_find(t, key) != NULL);
	return key;
}

/* Pin [addr, addr+len); without RLIMIT_MEMLOCK room, warn once and go on unpinned. */
static int pin(struct soft_mr *mr)
{
	static int warned;

	if (mlock(mr->base.addr, mr->base.length) == 0) {
		mr->pinned = true;
		return 0;
	}
	if (errno != ENOMEM && errno != EPERM && errno != EAGAIN)
		return -errno;
	if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
		log_warn("mlock failed (%s): registrations are not pinned; raise RLIMIT_MEMLOCK "
			 "(ulimit -l) for realistic registration costs",
			 strerror(errno));
	return 0;
}

/* Refuse registrations ibverbs would refuse, with the reason. */
static int check_reg(void *addr, size_t len, unsigned access)
{
	if (addr == NULL || len == 0 || len > SOFT_MAX_MR_SIZE) {
		log_err("bad registration: addr %p length %zu", addr, len);
		return -EINVAL;
	}
	if (access & ~(unsigned)(VB_ACCESS_LOCAL_WRITE | VB_ACCESS_REMOTE | VB_ACCESS_MW_BIND)) {
		log_err("unknown access bits 0x%x", access);
		return -EINVAL;
	}
	if ((access & VB_ACCESS_REMOTE_WRITE) && !(access & VB_ACCESS_LOCAL_WRITE)) {
		log_err("REMOTE_WRITE needs LOCAL_WRITE");
		return -EINVAL;
	}
	return 0;
}

/* Register [addr, addr+len): pin it and give it fresh random lkey and rkey. */
int soft_reg_mr(struct vb_pd *pd, void *addr, size_t len, unsigned access, struct vb_mr **out)
{
	struct soft_keytab *t = &soft_dev(pd->dev)->keys;
	struct soft_mr *mr;
	int rc;

	if ((rc = check_reg(addr, len, access)) != 0 || (rc = soft_cred_check(pd->dev)) != 0)
		return rc;
	mr = calloc(1, sizeof(*mr));
	if (mr == NULL)
		return -ENOMEM;
	mr->base = (struct vb_mr){.pd = pd, .addr = addr, .length = len, .access = access};
	if ((rc = pin(mr)) != 0) {
		log_err("mlock(%p, %zu): %s", addr, len, strerror(-rc));
		free(mr);
		return rc;
	}
	pthread_mutex_lock(&t->lock);
	mr->lkey = (struct soft_key){.key = soft_keys_random(t), .kind = SOFT_KEY_LKEY, .mr = mr};
	key_insert(t, &mr->lkey);
	mr->rkey =
		(struct soft_key){.key = soft_keys_random(t), .kind = SOFT_KEY_MR_RKEY, .mr = mr};
	key_insert(t, &mr->rkey);
	((struct soft_pd *)pd)->users++;
	pthread_mutex_unlock(&t->lock);
	mr->base.lkey = mr->lkey.key;
	mr->base.rkey = mr->rkey.key;
	*out = &mr->base;
	return 0;
}

/* Invalidate the keys at once, wait for accesses under way, then unpin and free. */
int soft_dereg_mr(struct vb_mr *m)
{
	struct soft_mr *mr = (struct soft_mr *)m;
	struct soft_keytab *t = &soft_dev(m->pd->dev)->keys;

	if (soft_cred_check(m->pd->dev) != 0)
		return -EACCES;
	pthread_mutex_lock(&t->lock);
	if (mr->mw_bound) {
		pthread_mutex_unlock(&t->lock);
		log_err("MR still has %u memory windows bound", mr->mw_bound);
		return -EBUSY;
	}
	key_remove(t, &mr->lkey);
	key_remove(t, &mr->rkey);
	while (mr->inflight)
		pthread_cond_wait(&t->idle, &t->lock);
	((struct soft_pd *)m->pd)->users--;
	pthread_mutex_unlock(&t->lock);
	if (mr->pinned)
		munlock(m->addr, m->length);
	free(mr);
	return 0;
}

/* True when [addr, addr+len) lies within [base, base+blen), without overflow. */
static bool in_range(uint64_t base, uint64_t blen, uint64_t addr, uint64_t len)
{
	return addr >= base && addr - base <= blen && len <= blen - (addr - base);
}

/* Check a peer's access (key, PD, right, bounds); take an in-flight ref. */
enum vb_wc_status soft_keys_remote(struct soft_device *dev, struct vb_pd *pd, uint32_t rkey,
				   uint64_t addr, uint32_t len, unsigned need, struct soft_mr **mrp,
				   uint64_t *word)
{
	struct soft_keytab *t = &dev->keys;
	enum vb_wc_status st = VB_WC_REM_ACCESS_ERR;
	struct soft_key *k;

	*mrp = NULL;
	if (len == 0)
		return VB_WC_SUCCESS; /* zero-length RDMA checks no key, as in IB */
	pthread_mutex_lock(&t->lock);
	k = key_find(t, rkey);
	if (k == NULL || k->kind == SOFT_KEY_LKEY) {
	} else if (k->kind == SOFT_KEY_MR_RKEY) {
		struct vb_mr *m = &k->mr->base;

		if (m->pd == pd && (m->access & need) == need &&
		    in_range((uintptr_t)m->addr, m->length, addr, len))
			st = VB_WC_SUCCESS;
	} else {
		struct soft_mw *mw = k->mw;

		if (mw->base.pd == pd && (mw->access & need) == need &&
		    in_range(mw->addr, mw->len, addr, len))
			st = VB_WC_SUCCESS;
	}
	if (st == VB_WC_SUCCESS) {
		k->mr->inflight++;
		*mrp = k->mr;
	}
	if (st == VB_WC_SUCCESS && word) {
		if (k->cma_word == 0)
			k->cma_word = soft_cma_word_get();
		word[0] = k->cma_word ? soft_cma_word_addr(k->cma_word) : 0;
		word[1] = k->cma_word ? soft_cma_word_value(k->cma_word) : 0;
	}
	pthread_mutex_unlock(&t->lock);
	return st;
}

/* One local SGE: lkey of pd, rights and bounds; takes a ref. Under t->lock. */
static bool local_one(struct soft_keytab *t, struct vb_pd *pd, const struct vb_sge *s,
		      unsigned need, struct soft_mr **mrp)
{
	struct soft_key *k = key_find(t, s->lkey);
	struct vb_mr *m;

	if (k == NULL || k->kind != SOFT_KEY_LKEY)
		return false;
	m = &k->mr->base;
	if (m->pd != pd || (m->access & need) != need ||
	    !in_range((uintptr_t)m->addr, m->length, s->addr, s->length))
		return false;
	k->mr->inflight++;
	*mrp = k->mr;
	return true;
}

/* Resolve our SGEs to iovecs, checking lkey, PD, right and bounds; take refs. */
enum vb_wc_status soft_keys_local(struct soft_device *dev, struct vb_pd *pd,
				  const struct vb_sge *sge, int n, unsigned need, struct iovec *iov,
				  int *niov, struct soft_mr **mrs, int *nmr)
{
	struct soft_keytab *t = &dev->keys;
	int k = 0;

	pthread_mutex_lock(&t->lock);
	for (int i = 0; i < n; i++) {
		if (sge[i].length == 0)
			continue;
		if (!local_one(t, pd, &sge[i], need, &mrs[k])) {
			while (k--)
				mrs[k]->inflight--;
			pthread_cond_broadcast(&t->idle);
			pthread_mutex_unlock(&t->lock);
			*niov = *nmr = 0;
			return VB_WC_LOC_PROT_ERR;
		}
		iov[k].iov_base = (void *)(uintptr_t)sge[i].addr;
		iov[k].iov_len = sge[i].length;
		k++;
	}
	pthread_mutex_unlock(&t->lock);
	*niov = *nmr = k;
	return VB_WC_SUCCESS;
}

/* Drop in-flight refs; wake a deregistration waiting for them. */
void soft_mr_put(struct soft_device *dev, struct soft_mr **mrs, int n)
{
	struct soft_keytab *t = &dev->keys;
	bool wake = false;

	if (n <= 0)
		return;
	pthread_mutex_lock(&t->lock);
	for (int i = 0; i < n; i++)
		if (mrs[i] && --mrs[i]->inflight == 0)
			wake = true;
	if (wake)
		pthread_cond_broadcast(&t->idle);
	pthread_mutex_unlock(&t->lock);
}

/* An unbound memory window in pd. */
int soft_alloc_mw(struct vb_pd *pd, struct vb_mw **out)
{
	struct soft_keytab *t = &soft_dev(pd->dev)->keys;
	struct soft_mw *mw;

	if (soft_dev(pd->dev)->no_mw)
		return -EOPNOTSUPP;
	if (soft_cred_check(pd->dev) != 0)
		return -EACCES;
	if ((mw = calloc(1, sizeof(*mw))) == NULL)
		return -ENOMEM;
	mw->base.pd = pd;
	mw->node.kind = SOFT_KEY_MW_RKEY;
	mw->node.mw = mw;
	pthread_mutex_lock(&t->lock);
	((struct soft_pd *)pd)->users++;
	pthread_mutex_unlock(&t->lock);
	*out = &mw->base;
	return 0;
}

/* Drop a window's binding (its key stops working at once). Under t->lock. */
static void mw_unbind(struct soft_keytab *t, struct soft_mw *mw)
{
	if (!mw->bound)
		return;
	key_remove(t, &mw->node);
	mw->node.mr->mw_bound--;
	mw->node.mr = NULL;
	mw->bound = false;
}

/* Unbind (the key dies at once) and free a window. */
int soft_dealloc_mw(struct vb_mw *m)
{
	struct soft_mw *mw = (struct soft_mw *)m;
	struct soft_keytab *t = &soft_dev(m->pd->dev)->keys;

	if (soft_cred_check(m->pd->dev) != 0)
		return -EACCES;
	pthread_mutex_lock(&t->lock);
	mw_unbind(t, mw);
	((struct soft_pd *)m->pd)->users--;
	pthread_mutex_unlock(&t->lock);
	free(mw);
	return 0;
}

/* Whether binding b is allowed: same PD, MR allows binding, range and rights fit. */
static bool bind_ok(struct vb_pd *pd, const struct soft_bind *b)
{
	const struct vb_mr *m = &b->mr->base;

	if (b->mw->base.pd != pd || m->pd != pd || !(m->access & VB_ACCESS_MW_BIND))
		return false;
	if (b->access & ~(unsigned)VB_ACCESS_REMOTE)
		return false;
	if ((b->access & VB_ACCESS_REMOTE_WRITE) && !(m->access & VB_ACCESS_LOCAL_WRITE))
		return false;
	return in_range((uintptr_t)m->addr, m->length, b->addr, b->len);
}

/* Carry out a binding in send-queue order: new key, range and rights. */
bool soft_mw_bind_exec(struct soft_device *dev, struct vb_pd *pd, const struct soft_bind *b)
{
	struct soft_keytab *t = &dev->keys;
	struct soft_mw *mw = b->mw;
	bool ok = true;

	pthread_mutex_lock(&t->lock);
	if (b->len == 0) {
		mw_unbind(t, mw);
	} else if (!bind_ok(pd, b) || key_find(t, b->rkey) != NULL) {
		ok = false;
	} else {
		mw_unbind(t, mw);
		mw->addr = b->addr;
		mw->len = b->len;
		mw->access = b->access;
		mw->node.key = b->rkey;
		mw->node.mr = b->mr;
		b->mr->mw_bound++;
		mw->bound = true;
		key_insert(t, &mw->node);
	}
	pthread_mutex_unlock(&t->lock);
	return ok;
}

/* Invalidate a window's key as the peer's SEND_WITH_INV asks. */
bool soft_mw_invalidate(struct soft_device *dev, struct vb_pd *pd, uint32_t rkey)
{
	struct soft_keytab *t = &dev->keys;
	struct soft_key *k;
	bool ok = false;

	pthread_mutex_lock(&t->lock);
	k = key_find(t, rkey);
	if (k && k->kind == SOFT_KEY_MW_RKEY && k->mw->base.pd == pd) {
		mw_unbind(t, k->mw);
		ok = true;
	}
	pthread_mutex_unlock(&t->lock);
	return ok;
}
