/*
 * ordma_cache.c: see ordma_cache.h. Slots are found by (file, offset) in one
 * hash table and by file in another (each bucket a list of the slots of the
 * files that hash there), and kept in fill order on a list whose head is the
 * next to go (empty slots are put there).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "server/ordma_cache.h"

#define NIL UINT32_MAX

struct slot {
	uint64_t fh_hash, offset; /* fh_hash 0: empty */
	uint64_t seq;		  /* even between rewrites */
	uint32_t bnext;		  /* block table chain */
	uint32_t fprev, fnext;	  /* file table bucket list */
	uint32_t lprev, lnext;	  /* fill order */
};

struct ordma_cache {
	pthread_mutex_t lock;
	unsigned char *mem;
	size_t mem_len, slot_size;
	uint32_t block, nslots, mask; /* mask: table buckets - 1 */
	struct slot *s;
	uint32_t *btab, *ftab;
	uint32_t lru_head, lru_tail;
	uint64_t *fgen; /* per file table bucket: forgets of its files so far */
	struct ordma_cache_stats st;
};

static uint32_t bucket_of(const struct ordma_cache *c, uint64_t fh_hash, uint64_t offset)
{
	uint64_t h = (fh_hash ^ (offset * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;

	return (uint32_t)(h >> 32) & c->mask;
}

static uint32_t fbucket_of(const struct ordma_cache *c, uint64_t fh_hash)
{
	return (uint32_t)((fh_hash * 0xc4ceb9fe1a85ec53ull) >> 32) & c->mask;
}

static unsigned char *slot_mem(const struct ordma_cache *c, uint32_t i)
{
	return c->mem + (size_t)i * c->slot_size;
}

/* See ordma_cache.h. */
int ordma_cache_create(size_t bytes, uint32_t block, struct ordma_cache **out)
{
	struct ordma_cache *c;
	size_t n, buckets = 1;
	void *mem;

	*out = NULL;
	if (block < ORDMA_BLOCK_MIN || block > ORDMA_BLOCK_MAX || (block & (block - 1)))
		return -EINVAL;
	n = bytes / ordma_slot_size(block);
	if (n == 0 || n >= NIL)
		return -EINVAL;
	while (buckets < n)
		buckets <<= 1;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return -ENOMEM;
	c->block = block;
	c->slot_size = ordma_slot_size(block);
	c->nslots = (uint32_t)n;
	c->mask = (uint32_t)buckets - 1;
	c->mem_len = n * c->slot_size;
	c->s = calloc(n, sizeof(*c->s));
	c->btab = malloc(buckets * sizeof(*c->btab));
	c->ftab = malloc(buckets * sizeof(*c->ftab));
	c->fgen = calloc(buckets, sizeof(*c->fgen));
	if (!c->s || !c->btab || !c->ftab || !c->fgen ||
	    posix_memalign(&mem, 4096, c->mem_len) != 0) {
		free(c->s);
		free(c->btab);
		free(c->ftab);
		free(c->fgen);
		free(c);
		return -ENOMEM;
	}
	c->mem = mem;
	memset(c->mem, 0, c->mem_len); /* magic 0: empty */
	for (size_t i = 0; i < buckets; i++)
		c->btab[i] = c->ftab[i] = NIL;
	for (uint32_t i = 0; i < c->nslots; i++) {
		c->s[i].bnext = c->s[i].fprev = c->s[i].fnext = NIL;
		c->s[i].lprev = i ? i - 1 : NIL;
		c->s[i].lnext = i + 1 < c->nslots ? i + 1 : NIL;
	}
	c->lru_head = 0;
	c->lru_tail = c->nslots - 1;
	c->st.slots = c->nslots;
	pthread_mutex_init(&c->lock, NULL);
	*out = c;
	return 0;
}

/* See ordma_cache.h. */
void ordma_cache_destroy(struct ordma_cache *c)
{
	if (!c)
		return;
	pthread_mutex_destroy(&c->lock);
	free(c->mem);
	free(c->s);
	free(c->btab);
	free(c->ftab);
	free(c->fgen);
	free(c);
}

/* See ordma_cache.h. */
void *ordma_cache_mem(struct ordma_cache *c, size_t *len)
{
	*len = c->mem_len;
	return c->mem;
}

/* See ordma_cache.h. */
uint32_t ordma_cache_block(const struct ordma_cache *c)
{
	return c->block;
}

/* The slot holding (fh_hash, offset), or NIL. */
static uint32_t find(const struct ordma_cache *c, uint64_t fh_hash, uint64_t offset)
{
	uint32_t i = c->btab[bucket_of(c, fh_hash, offset)];

	while (i != NIL && (c->s[i].fh_hash != fh_hash || c->s[i].offset != offset))
		i = c->s[i].bnext;
	return i;
}

static void lru_unlink(struct ordma_cache *c, uint32_t i)
{
	struct slot *s = &c->s[i];

	if (s->lprev != NIL)
		c->s[s->lprev].lnext = s->lnext;
	else
		c->lru_head = s->lnext;
	if (s->lnext != NIL)
		c->s[s->lnext].lprev = s->lprev;
	else
		c->lru_tail = s->lprev;
	s->lprev = s->lnext = NIL;
}

/* Put slot i last (just filled) or first (emptied: the next to take). */
static void lru_put(struct ordma_cache *c, uint32_t i, int last)
{
	struct slot *s = &c->s[i];

	lru_unlink(c, i);
	if (last) {
		s->lprev = c->lru_tail;
		if (c->lru_tail != NIL)
			c->s[c->lru_tail].lnext = i;
		else
			c->lru_head = i;
		c->lru_tail = i;
	} else {
		s->lnext = c->lru_head;
		if (c->lru_head != NIL)
			c->s[c->lru_head].lprev = i;
		else
			c->lru_tail = i;
		c->lru_head = i;
	}
}

/* Take slot i out of both tables (it holds a block). */
static void tables_unlink(struct ordma_cache *c, uint32_t i)
{
	struct slot *s = &c->s[i];
	uint32_t *p = &c->btab[bucket_of(c, s->fh_hash, s->offset)];

	while (*p != i)
		p = &c->s[*p].bnext;
	*p = s->bnext;
	if (s->fprev != NIL)
		c->s[s->fprev].fnext = s->fnext;
	else
		c->ftab[fbucket_of(c, s->fh_hash)] = s->fnext;
	if (s->fnext != NIL)
		c->s[s->fnext].fprev = s->fprev;
	s->bnext = s->fprev = s->fnext = NIL;
	s->fh_hash = 0;
	c->st.used--;
}

static void tables_link(struct ordma_cache *c, uint32_t i, uint64_t fh_hash, uint64_t offset)
{
	struct slot *s = &c->s[i];
	uint32_t b = bucket_of(c, fh_hash, offset), f = fbucket_of(c, fh_hash);

	s->fh_hash = fh_hash;
	s->offset = offset;
	s->bnext = c->btab[b];
	c->btab[b] = i;
	s->fprev = NIL;
	s->fnext = c->ftab[f];
	if (s->fnext != NIL)
		c->s[s->fnext].fprev = i;
	c->ftab[f] = i;
	c->st.used++;
}

/* Begin rewriting slot i: seq odd in the header, then in the trailer, before
 * any other byte changes. */
static void seq_begin(struct ordma_cache *c, uint32_t i)
{
	unsigned char *m = slot_mem(c, i);

	c->s[i].seq |= 1;
	ordma_put_seq(m, c->s[i].seq);
	ordma_put_seq(m + ORDMA_HDR + c->block, c->s[i].seq);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* End it: the new even seq in the trailer, then in the header. */
static void seq_end(struct ordma_cache *c, uint32_t i)
{
	unsigned char *m = slot_mem(c, i);

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	c->s[i].seq++;
	ordma_put_seq(m + ORDMA_HDR + c->block, c->s[i].seq);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	ordma_put_seq(m, c->s[i].seq);
}

/* See ordma_cache.h. */
uint64_t ordma_cache_gen(struct ordma_cache *c, uint64_t fh_hash)
{
	return __atomic_load_n(&c->fgen[fbucket_of(c, fh_hash)], __ATOMIC_ACQUIRE);
}

/* See ordma_cache.h. */
void ordma_cache_fill(struct ordma_cache *c, uint64_t gen, uint64_t fh_hash, uint64_t fileid,
		      uint64_t offset, uint64_t change, const void *data, uint32_t len)
{
	struct ordma_hdr h = {.fh_hash = fh_hash,
			      .fileid = fileid,
			      .offset = offset,
			      .change = change,
			      .len = len,
			      .magic = ORDMA_MAGIC,
			      .block = c->block};
	uint32_t i;

	if (len > c->block || fh_hash == 0 || offset % c->block)
		return;
	h.crc = ordma_crc(data, len);
	pthread_mutex_lock(&c->lock);
	if (c->fgen[fbucket_of(c, fh_hash)] != gen) {
		pthread_mutex_unlock(&c->lock);
		return;
	}
	if ((i = find(c, fh_hash, offset)) == NIL) {
		i = c->lru_head;
		if (c->s[i].fh_hash) {
			tables_unlink(c, i);
			c->st.evictions++;
		}
		tables_link(c, i, fh_hash, offset);
	}
	seq_begin(c, i);
	memcpy(slot_mem(c, i) + ORDMA_HDR, data, len);
	ordma_hdr_encode(&h, slot_mem(c, i));
	seq_end(c, i);
	lru_put(c, i, 1);
	c->st.fills++;
	pthread_mutex_unlock(&c->lock);
}

/* Empty slot i (it holds a block): its header zeroed (magic 0: nothing),
 * out of the tables, the next to take. */
static void empty_slot(struct ordma_cache *c, uint32_t i)
{
	static const struct ordma_hdr empty;

	seq_begin(c, i);
	ordma_hdr_encode(&empty, slot_mem(c, i));
	seq_end(c, i);
	tables_unlink(c, i);
	lru_put(c, i, 0);
	c->st.forgets++;
}

/* See ordma_cache.h. */
void ordma_cache_forget(struct ordma_cache *c, uint64_t fh_hash)
{
	uint32_t i, next;

	uint32_t b = fbucket_of(c, fh_hash);

	pthread_mutex_lock(&c->lock);
	__atomic_store_n(&c->fgen[b], c->fgen[b] + 1, __ATOMIC_RELEASE);
	for (i = c->ftab[b]; i != NIL; i = next) {
		next = c->s[i].fnext;
		if (c->s[i].fh_hash == fh_hash)
			empty_slot(c, i);
	}
	pthread_mutex_unlock(&c->lock);
}

/* See ordma_cache.h. */
void ordma_cache_clear(struct ordma_cache *c)
{
	pthread_mutex_lock(&c->lock);
	for (uint32_t b = 0; b <= c->mask; b++)
		__atomic_store_n(&c->fgen[b], c->fgen[b] + 1, __ATOMIC_RELEASE);
	for (uint32_t i = 0; i < c->nslots; i++)
		if (c->s[i].fh_hash)
			empty_slot(c, i);
	pthread_mutex_unlock(&c->lock);
}

/* See ordma_cache.h. */
size_t ordma_cache_lookup(struct ordma_cache *c, uint64_t fh_hash, uint64_t offset, uint64_t count,
			  struct ordma_ref *out, size_t max)
{
	uint64_t off = offset - offset % c->block, end = offset + count;
	size_t n = 0;
	uint32_t i;

	if (end < offset)
		end = UINT64_MAX;
	pthread_mutex_lock(&c->lock);
	if (end - off > (uint64_t)ORDMA_LOOKUP_BLOCKS * c->block)
		end = off + (uint64_t)ORDMA_LOOKUP_BLOCKS * c->block;
	for (; off < end && n < max; off += c->block) {
		if ((i = find(c, fh_hash, off)) != NIL)
			out[n++] = (struct ordma_ref){off, (uint64_t)i * c->slot_size};
		if (off > UINT64_MAX - c->block)
			break;
	}
	c->st.refs += n;
	pthread_mutex_unlock(&c->lock);
	return n;
}

/* See ordma_cache.h. */
void ordma_cache_stats(struct ordma_cache *c, struct ordma_cache_stats *out)
{
	pthread_mutex_lock(&c->lock);
	*out = c->st;
	pthread_mutex_unlock(&c->lock);
}
