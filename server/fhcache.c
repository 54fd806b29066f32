/*
 * fhcache.c: the fd cache (fhcache.h). One mutex guards a chained hash table
 * and an LRU list of every live entry; idle entries past the bound are closed
 * from the cold end, and fhcache_expire closes those idle too long. Lock
 * order: none, nothing is called with the lock held (closing neither).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fhcache.h"

struct fhcache {
	pthread_mutex_t lock;
	size_t max, count;
	size_t nbuckets; /* a power of two */
	struct fhc_entry **buckets;
	struct fhc_entry *lru_head, *lru_tail; /* head = most recently used */
	fhcache_close_fn close;		       /* NULL: entries are fds */
	void *close_arg;
};

/* Now in ms, CLOCK_MONOTONIC. */
static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* FNV-1a over the key and kind. */
static unsigned key_hash(const void *key, size_t len, int kind)
{
	const unsigned char *p = key;
	uint32_t h = 2166136261u ^ (uint32_t)kind;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

/* See fhcache.h. */
struct fhcache *fhcache_create_with(size_t max_entries, fhcache_close_fn close, void *arg)
{
	struct fhcache *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->close = close;
	c->close_arg = arg;
	c->max = max_entries ? max_entries : 1;
	c->nbuckets = 16;
	while (c->nbuckets < c->max * 2 && c->nbuckets < (1u << 20))
		c->nbuckets <<= 1;
	c->buckets = calloc(c->nbuckets, sizeof(*c->buckets));
	if (c->buckets == NULL) {
		free(c);
		return NULL;
	}
	pthread_mutex_init(&c->lock, NULL);
	return c;
}

/* See fhcache.h. */
struct fhcache *fhcache_create(size_t max_entries)
{
	return fhcache_create_with(max_entries, NULL, NULL);
}

/* Unlink e from the LRU list. Lock held. */
static void lru_unlink(struct fhcache *c, struct fhc_entry *e)
{
	if (e->lprev)
		e->lprev->lnext = e->lnext;
	else
		c->lru_head = e->lnext;
	if (e->lnext)
		e->lnext->lprev = e->lprev;
	else
		c->lru_tail = e->lprev;
	e->lprev = e->lnext = NULL;
}

/* Put e at the hot end of the LRU list. Lock held. */
static void lru_push(struct fhcache *c, struct fhc_entry *e)
{
	e->lprev = NULL;
	e->lnext = c->lru_head;
	if (c->lru_head)
		c->lru_head->lprev = e;
	c->lru_head = e;
	if (c->lru_tail == NULL)
		c->lru_tail = e;
}

/* Take e out of the table and the list; it is freed now if idle, else at its
 * last put. Returns e if the caller must free it. Lock held. */
static struct fhc_entry *detach(struct fhcache *c, struct fhc_entry *e)
{
	struct fhc_entry **pp = &c->buckets[e->hash & (c->nbuckets - 1)];

	while (*pp != e)
		pp = &(*pp)->hnext;
	*pp = e->hnext;
	lru_unlink(c, e);
	c->count--;
	e->dead = 1;
	return e->refs == 0 ? e : NULL;
}

/* Close what fd or obj is. Called without the lock. */
static void close_file(struct fhcache *c, int fd, void *obj)
{
	if (c->close)
		c->close(c->close_arg, fd, obj);
	else if (fd >= 0)
		close(fd);
}

/* Close and free a detached entry. Called without the lock. */
static void entry_free(struct fhcache *c, struct fhc_entry *e)
{
	close_file(c, e->fd, e->obj);
	free(e);
}

/* Close and free the entries of a list linked by lnext. */
static void list_free(struct fhcache *c, struct fhc_entry *e)
{
	struct fhc_entry *next;

	for (; e; e = next) {
		next = e->lnext;
		entry_free(c, e);
	}
}

/* See fhcache.h. */
void fhcache_destroy(struct fhcache *c)
{
	if (c == NULL)
		return;
	list_free(c, c->lru_head);
	pthread_mutex_destroy(&c->lock);
	free(c->buckets);
	free(c);
}

/* The live entry for the key, or NULL. Lock held. */
static struct fhc_entry *lookup(struct fhcache *c, const void *key, size_t len, int kind,
				unsigned h)
{
	struct fhc_entry *e;

	for (e = c->buckets[h & (c->nbuckets - 1)]; e; e = e->hnext)
		if (e->hash == h && e->kind == kind && e->keylen == len &&
		    memcmp(e->key, key, len) == 0)
			return e;
	return NULL;
}

/* See fhcache.h. */
struct fhc_entry *fhcache_get(struct fhcache *c, const void *key, size_t len, int kind)
{
	unsigned h = key_hash(key, len, kind);
	struct fhc_entry *e;

	pthread_mutex_lock(&c->lock);
	e = lookup(c, key, len, kind, h);
	if (e) {
		e->refs++;
		lru_unlink(c, e);
		lru_push(c, e);
	}
	pthread_mutex_unlock(&c->lock);
	return e;
}

/* Detach the coldest idle entry if the cache is over its bound; returns it for
 * freeing outside the lock. Lock held. */
static struct fhc_entry *evict_one(struct fhcache *c)
{
	struct fhc_entry *e;

	if (c->count <= c->max)
		return NULL;
	for (e = c->lru_tail; e; e = e->lprev)
		if (e->refs == 0)
			return detach(c, e);
	return NULL;
}

/* fhcache_insert and fhcache_insert_obj. */
static struct fhc_entry *insert(struct fhcache *c, const void *key, size_t len, int kind, int fd,
				void *obj)
{
	unsigned h = key_hash(key, len, kind);
	struct fhc_entry *e, *old, *victim[2];

	if (len > FHCACHE_KEY_MAX || (e = calloc(1, sizeof(*e))) == NULL) {
		close_file(c, fd, obj);
		return NULL;
	}
	e->fd = fd;
	e->obj = obj;
	e->kind = kind;
	e->keylen = len;
	memcpy(e->key, key, len);
	e->hash = h;
	e->refs = 1;
	pthread_mutex_lock(&c->lock);
	old = lookup(c, key, len, kind, h);
	if (old) {
		old->refs++;
		pthread_mutex_unlock(&c->lock);
		entry_free(c, e);
		return old;
	}
	e->hnext = c->buckets[h & (c->nbuckets - 1)];
	c->buckets[h & (c->nbuckets - 1)] = e;
	lru_push(c, e);
	c->count++;
	victim[0] = evict_one(c);
	victim[1] = evict_one(c);
	pthread_mutex_unlock(&c->lock);
	for (int i = 0; i < 2; i++)
		if (victim[i])
			entry_free(c, victim[i]);
	return e;
}

/* See fhcache.h. */
struct fhc_entry *fhcache_insert(struct fhcache *c, const void *key, size_t len, int kind, int fd)
{
	return insert(c, key, len, kind, fd, NULL);
}

/* See fhcache.h. */
struct fhc_entry *fhcache_insert_obj(struct fhcache *c, const void *key, size_t len, int kind,
				     void *obj)
{
	return insert(c, key, len, kind, -1, obj);
}

/* See fhcache.h. */
void fhcache_put(struct fhcache *c, struct fhc_entry *e)
{
	struct fhc_entry *victim = NULL;

	if (e == NULL)
		return;
	pthread_mutex_lock(&c->lock);
	if (--e->refs == 0 && e->dead)
		victim = e;
	else if (e->refs == 0) {
		e->idle_since = now_ms();
		victim = evict_one(c);
	}
	pthread_mutex_unlock(&c->lock);
	if (victim)
		entry_free(c, victim);
}

/* Drop the entries for key (any kind), or all of them when key is NULL, or
 * (idle_ms > 0) those idle since before now - idle_ms. How many went. */
static size_t forget(struct fhcache *c, const void *key, size_t len, unsigned idle_ms)
{
	struct fhc_entry *free_list = NULL, *e, *next;
	uint64_t now = now_ms(), before = idle_ms && now > idle_ms ? now - idle_ms : 0;
	size_t n = 0;

	pthread_mutex_lock(&c->lock);
	for (e = c->lru_head; e; e = next) {
		next = e->lnext;
		if (idle_ms ? e->refs == 0 && e->idle_since <= before
			    : key == NULL || (e->keylen == len && memcmp(e->key, key, len) == 0)) {
			n++;
			if (detach(c, e)) {
				e->lnext = free_list;
				free_list = e;
			}
		}
	}
	pthread_mutex_unlock(&c->lock);
	list_free(c, free_list);
	return n;
}

/* See fhcache.h. */
void fhcache_forget(struct fhcache *c, const void *key, size_t len)
{
	forget(c, key, len, 0);
}

/* See fhcache.h. */
void fhcache_forget_all(struct fhcache *c)
{
	forget(c, NULL, 0, 0);
}

/* See fhcache.h. */
size_t fhcache_expire(struct fhcache *c, unsigned idle_ms)
{
	return forget(c, NULL, 0, idle_ms ? idle_ms : 1);
}

/* See fhcache.h. */
size_t fhcache_count(struct fhcache *c)
{
	size_t n;

	pthread_mutex_lock(&c->lock);
	n = c->count;
	pthread_mutex_unlock(&c->lock);
	return n;
}
