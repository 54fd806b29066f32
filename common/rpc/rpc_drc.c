/* rpc_drc.c: the duplicate request cache (see rpc_drc.h). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>

#include "common/base/clock.h"
#include "rpc_drc.h"

struct rpc_drc_entry {
	struct rpc_drc_key key;
	int done;
	uint64_t when_ns; /* when the reply was kept */
	uint8_t *reply;
	size_t reply_len;
	struct rpc_drc_entry *hnext;	     /* hash chain */
	struct rpc_drc_entry *older, *newer; /* LRU of completed entries */
};

struct rpc_drc {
	pthread_mutex_t lock;
	struct rpc_drc_entry **buckets;
	unsigned nbuckets; /* a power of two */
	uint64_t seed;	   /* random: a client cannot aim its calls at one bucket */
	unsigned n, max;
	struct rpc_drc_entry *oldest, *newest;
	uint64_t hits, drops, misses;
};

int rpc_drc_create(unsigned max_entries, struct rpc_drc **out)
{
	struct rpc_drc *d = calloc(1, sizeof(*d));

	if (!d)
		return -ENOMEM;
	d->max = max_entries ? max_entries : 1;
	for (d->nbuckets = 64; d->nbuckets < d->max / 2; d->nbuckets *= 2)
		;
	if (getentropy(&d->seed, sizeof(d->seed)) != 0) {
		int rc = -errno;

		free(d);
		return rc;
	}
	if (!(d->buckets = calloc(d->nbuckets, sizeof(*d->buckets)))) {
		free(d);
		return -ENOMEM;
	}
	pthread_mutex_init(&d->lock, NULL);
	*out = d;
	return 0;
}

void rpc_drc_destroy(struct rpc_drc *d)
{
	if (!d)
		return;
	for (unsigned i = 0; i < d->nbuckets; i++) {
		while (d->buckets[i]) {
			struct rpc_drc_entry *e = d->buckets[i];

			d->buckets[i] = e->hnext;
			free(e->reply);
			free(e);
		}
	}
	free(d->buckets);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

/* FNV-1a, 64 bits. */
static uint64_t fnv1a(uint64_t h, const void *p, size_t len)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

int rpc_drc_key(struct rpc_drc_key *k, const struct sockaddr *peer, uint32_t xid, uint32_t prog,
		uint32_t vers, uint32_t proc, uint32_t uid, uint32_t gid, const uint8_t *args,
		size_t args_len)
{
	memset(k, 0, sizeof(*k));
	if (!peer)
		return -1;
	if (peer->sa_family == AF_INET)
		memcpy(k->addr, &((const struct sockaddr_in *)peer)->sin_addr, 4);
	else if (peer->sa_family == AF_INET6)
		memcpy(k->addr, &((const struct sockaddr_in6 *)peer)->sin6_addr, 16);
	else if (peer->sa_family != AF_UNIX)
		return -1; /* AF_UNIX: one host, the address says nothing */
	k->family = (uint8_t)peer->sa_family;
	k->xid = xid;
	k->prog = prog;
	k->vers = vers;
	k->proc = proc;
	k->uid = uid;
	k->gid = gid;
	k->csum = fnv1a(0xcbf29ce484222325ull, &args_len, sizeof(args_len));
	k->csum = fnv1a(k->csum, args, args_len < RPC_DRC_CSUM_LEN ? args_len : RPC_DRC_CSUM_LEN);
	return 0;
}

static unsigned bucket_of(const struct rpc_drc *d, const struct rpc_drc_key *k)
{
	uint64_t h = fnv1a(k->csum ^ d->seed, k, offsetof(struct rpc_drc_key, csum));

	return (unsigned)(h ^ (h >> 32)) & (d->nbuckets - 1);
}

static int same_key(const struct rpc_drc_key *a, const struct rpc_drc_key *b)
{
	return a->xid == b->xid && a->prog == b->prog && a->vers == b->vers && a->proc == b->proc &&
	       a->uid == b->uid && a->gid == b->gid && a->csum == b->csum &&
	       a->family == b->family && memcmp(a->addr, b->addr, sizeof(a->addr)) == 0;
}

static void lru_unlink(struct rpc_drc *d, struct rpc_drc_entry *e)
{
	if (e->older)
		e->older->newer = e->newer;
	else
		d->oldest = e->newer;
	if (e->newer)
		e->newer->older = e->older;
	else
		d->newest = e->older;
	e->older = e->newer = NULL;
}

static void lru_push(struct rpc_drc *d, struct rpc_drc_entry *e)
{
	e->older = d->newest;
	e->newer = NULL;
	if (d->newest)
		d->newest->newer = e;
	else
		d->oldest = e;
	d->newest = e;
}

/* Take e out of the cache and free it. Lock held. */
static void forget(struct rpc_drc *d, struct rpc_drc_entry *e)
{
	struct rpc_drc_entry **pp = &d->buckets[bucket_of(d, &e->key)];

	while (*pp != e)
		pp = &(*pp)->hnext;
	*pp = e->hnext;
	if (e->done)
		lru_unlink(d, e);
	d->n--;
	free(e->reply);
	free(e);
}

enum rpc_drc_verdict rpc_drc_lookup(struct rpc_drc *d, const struct rpc_drc_key *k, uint8_t *reply,
				    size_t cap, size_t *len, struct rpc_drc_entry **out)
{
	unsigned b = bucket_of(d, k);
	struct rpc_drc_entry *e;
	uint64_t now = clock_now_ns();

	*out = NULL;
	pthread_mutex_lock(&d->lock);
	for (e = d->buckets[b]; e && !same_key(&e->key, k); e = e->hnext)
		;
	if (e && !e->done) {
		d->drops++;
		pthread_mutex_unlock(&d->lock);
		return RPC_DRC_DROP;
	}
	if (e && now - e->when_ns < (uint64_t)RPC_DRC_MAX_AGE_S * 1000000000u &&
	    e->reply_len <= cap) {
		memcpy(reply, e->reply, e->reply_len);
		*len = e->reply_len;
		lru_unlink(d, e);
		lru_push(d, e);
		d->hits++;
		pthread_mutex_unlock(&d->lock);
		return RPC_DRC_REPLAY;
	}
	d->misses++;
	if (e)
		forget(d, e); /* too old to replay (or does not fit): run again */
	if (d->n >= d->max && d->oldest)
		forget(d, d->oldest);
	if (d->n < d->max && (e = calloc(1, sizeof(*e))) != NULL) {
		e->key = *k;
		e->hnext = d->buckets[b];
		d->buckets[b] = e;
		d->n++;
		*out = e;
	}
	pthread_mutex_unlock(&d->lock);
	return RPC_DRC_RUN;
}

void rpc_drc_done(struct rpc_drc *d, struct rpc_drc_entry *e, const uint8_t *reply, size_t len)
{
	uint8_t *copy = NULL;

	if (reply && len && len <= RPC_DRC_MAX_REPLY && (copy = malloc(len)) != NULL)
		memcpy(copy, reply, len);
	pthread_mutex_lock(&d->lock);
	if (!copy) {
		forget(d, e);
	} else {
		e->reply = copy;
		e->reply_len = len;
		e->done = 1;
		e->when_ns = clock_now_ns();
		lru_push(d, e);
	}
	pthread_mutex_unlock(&d->lock);
}

void rpc_drc_retry(struct rpc_drc *d, struct rpc_drc_entry *e)
{
	pthread_mutex_lock(&d->lock);
	forget(d, e);
	d->misses--;
	pthread_mutex_unlock(&d->lock);
}

void rpc_drc_get_stats(struct rpc_drc *d, struct rpc_drc_stats *st)
{
	pthread_mutex_lock(&d->lock);
	*st = (struct rpc_drc_stats){.hits = d->hits,
				     .drops = d->drops,
				     .misses = d->misses,
				     .entries = d->n,
				     .capacity = d->max};
	pthread_mutex_unlock(&d->lock);
}
