/*
 * nfs3_clnt_wrec.c: what a client remembers of its unstable writes until a
 * COMMIT answers with their verifier (nfs3_clnt_io.c says why): one record
 * per write, in a list newest first and a tree by offset, cut where newer
 * writes cover them; the copies of their data in buffers that a pool keeps
 * for the next writes (a fresh buffer costs a page fault and the zeroing of
 * every page it touches: a quarter of the client's CPU for 1 MiB writes).
 * The pool's wsize buffers are the slots of one slab mapped at mount, which
 * the RPC/RDMA transport registers: an unstable WRITE is sent from its
 * record's copy, the only copy the client makes of it.
 */
#include <search.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "client/nfs3_clnt_int.h"

static void dirty_add(struct nfs3c *c, struct nfs3c_file *f, int64_t n)
{
	size_t now = __atomic_add_fetch(&c->dirty, (size_t)n, __ATOMIC_RELAXED);
	uint64_t peak = __atomic_load_n(&c->st.dirty_peak, __ATOMIC_RELAXED);

	f->dirty += (size_t)n;
	while (now > peak && !__atomic_compare_exchange_n(&c->st.dirty_peak, &peak, now, 0,
							  __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* See nfs3_clnt_int.h: as many slots as the records can fill at once
 * (dirty_max and the write that went past it; the slab holds them, wsize
 * being at most NFS3C_MAX_IO). */
void nfs3c_wpool_carve(struct nfs3c *c)
{
	size_t n = (c->p.dirty_max + c->wsize) / c->wsize;

	if (!c->wslab || !(c->wslots = calloc(n, sizeof(*c->wslots))))
		return; /* malloc's buffers */
	for (size_t i = 0; i < n; i++) {
		struct wdata *d = &c->wslots[i];

		d->cap = c->wsize;
		d->bytes = c->wslab + i * c->wsize;
		d->in_slab = 1;
		d->next = c->wslot_free;
		c->wslot_free = d;
		c->wpool_bytes += d->cap;
	}
}

/* A spare buffer: a free slot, else (unless slot_only) a malloc'd spare, or
 * NULL. wsize is fixed at mount, before any write, so every spare holds wsize
 * bytes. */
static struct wdata *pool_take(struct nfs3c *c, int slot_only)
{
	struct wdata **from, *d;

	pthread_mutex_lock(&c->wpool_lock);
	from = c->wslot_free || slot_only ? &c->wslot_free : &c->wpool;
	if ((d = *from) != NULL) {
		*from = d->next;
		c->wpool_bytes -= d->cap;
	}
	pthread_mutex_unlock(&c->wpool_lock);
	return d;
}

/* Data for a write of len bytes, one reference: a spare buffer for a large
 * write, else a new one. */
static struct wdata *wdata_get(struct nfs3c *c, uint32_t len)
{
	uint32_t cap = len > c->wsize / 2 && len <= c->wsize ? c->wsize : len;
	struct wdata *d = cap == c->wsize ? pool_take(c, 0) : NULL;

	if (!d && (d = malloc(sizeof(*d) + cap)) != NULL) {
		*d = (struct wdata){.cap = cap, .bytes = (uint8_t *)(d + 1)};
		nfs3c_stat_add(&c->st.wbufs_made, 1);
	}
	if (d)
		d->refs = 1;
	return d;
}

/* See nfs3_clnt_int.h: the last reference gives a slot back, or keeps a
 * malloc'd wsize buffer spare while the spares stay within what the records
 * can hold at once (dirty_max and the write that went past it); a slot coming
 * back past that frees a malloc'd spare. */
void nfs3c_wdata_put(struct nfs3c *c, struct wdata *d)
{
	size_t cap = c->p.dirty_max + c->wsize;

	if (!d || --d->refs)
		return;
	if (d->cap == c->wsize) {
		pthread_mutex_lock(&c->wpool_lock);
		if (d->in_slab) {
			d->next = c->wslot_free;
			c->wslot_free = d;
			c->wpool_bytes += d->cap;
			d = NULL;
			if (c->wpool_bytes > cap && (d = c->wpool) != NULL) {
				c->wpool = d->next;
				c->wpool_bytes -= d->cap;
			}
		} else if (c->wpool_bytes + d->cap <= cap) {
			d->next = c->wpool;
			c->wpool = d;
			c->wpool_bytes += d->cap;
			d = NULL;
		}
		pthread_mutex_unlock(&c->wpool_lock);
	}
	free(d);
}

/* See nfs3_clnt.h: a free slot when len fits in one, else page-aligned
 * memory of malloc's. */
void *nfs3c_iobuf_get(struct nfs3c *c, size_t len)
{
	struct wdata *d = len <= c->wsize ? pool_take(c, 1) : NULL;
	void *p = NULL;

	if (d) {
		d->refs = 1;
		return d->bytes;
	}
	return posix_memalign(&p, 4096, len ? len : 1) == 0 ? p : NULL;
}

/* See nfs3_clnt.h. */
void nfs3c_iobuf_put(struct nfs3c *c, void *buf)
{
	uint8_t *p = buf;

	if (c->wslots && p >= c->wslab && p < c->wslab + c->wslab_len)
		nfs3c_wdata_put(c, &c->wslots[(size_t)(p - c->wslab) / c->wsize]);
	else
		free(buf);
}

/* See nfs3_clnt_int.h. */
struct wdata *nfs3c_wdata_copy(struct nfs3c *c, const void *data, uint32_t len)
{
	struct wdata *d = wdata_get(c, len);

	if (d)
		memcpy(d->bytes, data, len);
	return d;
}

/* See nfs3_clnt_int.h: the slab is only reserved here (dirty_max and one
 * write past it, 1 MiB at most); its pages are touched as slots are used,
 * or all at once where a connection registers it (which pins it). */
void nfs3c_wpool_init(struct nfs3c *c)
{
	size_t len = c->p.dirty_max + NFS3C_MAX_IO;
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	pthread_mutex_init(&c->wpool_lock, NULL);
	if (m != MAP_FAILED) {
#ifdef MADV_HUGEPAGE
		/* as the transport's own buffers (rr_mem_alloc): the server's
		 * RDMA Reads of a record pin a page table entry per 2 MiB */
		(void)madvise(m, len, MADV_HUGEPAGE);
#endif
		c->wslab = m;
		c->wslab_len = len;
	}
}

/* See nfs3_clnt_int.h; after the last connection is gone. */
void nfs3c_wpool_fini(struct nfs3c *c)
{
	while (c->wpool) {
		struct wdata *d = c->wpool;

		c->wpool = d->next;
		free(d);
	}
	c->wslot_free = NULL;
	free(c->wslots);
	if (c->wslab)
		munmap(c->wslab, c->wslab_len);
	pthread_mutex_destroy(&c->wpool_lock);
}

/* The order of the offset tree: records never overlap, so "before", "after"
 * and "overlaps" are all there is; a search for a range finds a record that
 * overlaps it, if any. */
static int by_off(const void *a, const void *b)
{
	const struct wrec *x = a, *y = b;

	if (x->off + x->len <= y->off)
		return -1;
	return y->off + y->len <= x->off ? 1 : 0;
}

/* Put r in f's list (after prev, or first) and tree; -ENOMEM. f->lock held. */
static int rec_link(struct nfs3c_file *f, struct wrec *prev, struct wrec *r)
{
	if (!tsearch(r, &f->recs_by_off, by_off))
		return -ENOMEM;
	r->prev = prev;
	r->next = prev ? prev->next : f->recs;
	if (r->next)
		r->next->prev = r;
	if (prev)
		prev->next = r;
	else
		f->recs = r;
	if (r->off + r->len > f->recs_end)
		f->recs_end = r->off + r->len;
	return 0;
}

/* See nfs3_clnt_int.h. */
void nfs3c_rec_drop(struct nfs3c *c, struct nfs3c_file *f, struct wrec *r)
{
	tdelete(r, &f->recs_by_off, by_off);
	if (r->prev)
		r->prev->next = r->next;
	else
		f->recs = r->next;
	if (r->next)
		r->next->prev = r->prev;
	dirty_add(c, f, -(int64_t)r->len);
	nfs3c_wdata_put(c, r->buf);
	free(r);
	if (!f->recs)
		f->recs_end = 0;
}

/* f's latest verifier; a change may leave records stale. f->lock held. */
void nfs3c_set_verf(struct nfs3c_file *f, const uint8_t *verf)
{
	if (!f->have_verf || memcmp(f->verf, verf, NFS3_WRITEVERFSIZE) != 0)
		f->maybe_stale = 1;
	memcpy(f->verf, verf, NFS3_WRITEVERFSIZE);
	f->have_verf = 1;
}

/* Remove [off, off + len) from every record: newer data replaces it. Each
 * overlapping record is found through the offset tree; shrinking one in place
 * keeps its place there. f->lock held. */
static int cut(struct nfs3c *c, struct nfs3c_file *f, uint64_t off, uint32_t len)
{
	struct wrec key = {.off = off, .len = len}, *r;
	uint64_t end = off + len;
	void **node;

	if (len == 0 || off >= f->recs_end)
		return 0; /* an append (the common case): nothing to cut */
	while ((node = tfind(&key, &f->recs_by_off, by_off)) != NULL) {
		uint64_t rend;

		r = *node;
		rend = r->off + r->len;
		if (r->off < off && rend > end) { /* a hole in the middle: split */
			struct wrec *right = malloc(sizeof(*right));

			if (!right)
				return -ENOMEM;
			*right = *r;
			right->data = r->data + (end - r->off);
			right->off = end;
			right->len = (uint32_t)(rend - end);
			r->len = (uint32_t)(off - r->off);
			if (rec_link(f, r, right) != 0) {
				r->len = (uint32_t)(rend - r->off);
				free(right);
				return -ENOMEM;
			}
			right->buf->refs++;
			dirty_add(c, f, -(int64_t)len);
		} else if (r->off < off) { /* keep the left part */
			dirty_add(c, f, -(int64_t)(rend - off));
			r->len = (uint32_t)(off - r->off);
		} else if (rend > end) { /* keep the right part */
			dirty_add(c, f, -(int64_t)(end - r->off));
			r->data += end - r->off;
			r->len = (uint32_t)(rend - end);
			r->off = end;
		} else {
			nfs3c_rec_drop(c, f, r);
		}
	}
	return 0;
}

/* Whether some record was written under another verifier than f's latest:
 * only looked for after the verifier changed, until none is found. */
int nfs3c_any_stale(struct nfs3c_file *f)
{
	if (!f->maybe_stale)
		return 0;
	for (const struct wrec *r = f->recs; r; r = r->next)
		if (memcmp(r->verf, f->verf, NFS3_WRITEVERFSIZE) != 0)
			return 1;
	f->maybe_stale = 0;
	return 0;
}

/* See nfs3_clnt_int.h. */
int nfs3c_record(struct nfs3c *c, struct nfs3c_file *f, uint64_t off, const void *data,
		 struct wdata *d, uint32_t len, int unstable, const uint8_t *verf, int *stale)
{
	struct wrec *r = NULL;
	int rc;

	if (unstable) {
		if (!d)
			d = nfs3c_wdata_copy(c, data, len);
		if (d && !(r = calloc(1, sizeof(*r))))
			nfs3c_wdata_put(c, d);
		if (!r)
			return -ENOMEM;
		r->buf = d;
		r->data = d->bytes;
		r->off = off;
		r->len = len;
		memcpy(r->verf, verf, NFS3_WRITEVERFSIZE);
	}
	pthread_mutex_lock(&f->lock);
	rc = cut(c, f, off, len);
	if (rc == 0 && r && (rc = rec_link(f, NULL, r)) == 0) {
		r->seq = ++f->seq;
		dirty_add(c, f, len);
		r = NULL;
	}
	nfs3c_set_verf(f, verf);
	*stale = nfs3c_any_stale(f);
	pthread_mutex_unlock(&f->lock);
	if (r) {
		nfs3c_wdata_put(c, r->buf);
		free(r);
	} else if (d && !unstable) {
		nfs3c_wdata_put(c, d); /* written stably: nothing to remember */
	}
	return rc;
}