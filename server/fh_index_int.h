/*
 * fh_index_int.h: what the two halves of the portable handles share:
 * fh_index.c (handles: resolving names, searching the export) and
 * fh_index_store.c (the LMDB entries, opening and closing an index).
 */
#ifndef NFSRDMA_FH_INDEX_INT_H
#define NFSRDMA_FH_INDEX_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>

#include <lmdb.h>

#include "server/fh_index.h"

/* Handle bytes: scheme, flags (0), inode number, generation, stamp. */
#define FHX_SCHEME 'P'
#define FHX_LEN	   (2 + 8 + 4 + 8)
/* Address space the index file may grow to (sparse: only what is used is
 * on disk); at about 40 bytes of overhead and the name per entry, some
 * millions of objects. Past it fh_index_get says -ENOSPC. */
#define FHX_MAP_SIZE ((size_t)1 << 30)
/* Directories between an object and the root that are followed. */
#define FHX_DEPTH_MAX 1024
/* Names (hard links) of one object the index keeps. */
#define FHX_NAMES 4
/* Searches that found nothing, remembered so that a client repeating a
 * stale handle does not walk the export each time. */
#define FHX_MISSES	 16
#define FHX_MISS_SECONDS 30

struct fhx_name {
	uint64_t parent; /* the directory's inode number */
	char name[NAME_MAX + 1];
};

struct fhx_rec {
	uint32_t gen;
	uint64_t stamp;
	unsigned n; /* names, newest first; 0: none known now */
	struct fhx_name names[FHX_NAMES];
};

struct fh_index {
	struct fh_index *next; /* in the open list */
	char *path;
	unsigned refs;
	MDB_env *env;
	MDB_dbi dbi;
	int root_fd;
	dev_t dev;
	uint64_t root_ino;
	uint32_t root_gen;
	int stamps;
	uint64_t walk_max;
	pthread_mutex_t walk_lock; /* one walk at a time; misses */
	pthread_mutex_t lock;	   /* stats, last_sync */
	struct {
		uint64_t ino;
		uint32_t gen;
		time_t when;
	} misses[FHX_MISSES];
	unsigned next_miss;
	time_t last_sync;
	uint64_t walks, found;
	int full_logged;
};

static inline void put64(unsigned char *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (unsigned char)v;
}

static inline uint64_t get64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static inline void put32(unsigned char *p, uint32_t v)
{
	for (int i = 3; i >= 0; i--, v >>= 8)
		p[i] = (unsigned char)v;
}

static inline uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline time_t now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

/* What a write of an entry expects to find there: nothing, an entry of a
 * given generation, or anything. Writers are serialised by LMDB, so checking
 * inside the write makes it a compare-and-swap: two threads handing out the
 * first handle of one object cannot give it two generations. */
enum fhx_expect {
	FHX_ABSENT,
	FHX_GEN,
	FHX_ANY,
};

/* The names of an entry (fh_index_store.c): the index of parent/name among
 * r's names or -1; forget it; make it the newest (the oldest goes when all
 * are taken); make it the only one. */
int rec_find(const struct fhx_rec *r, uint64_t parent, const char *name);
void rec_drop(struct fhx_rec *r, uint64_t parent, const char *name);
void rec_add(struct fhx_rec *r, uint64_t parent, const char *name);
void rec_only(struct fhx_rec *r, uint64_t parent, const char *name);

/* The entry of ino: 0, -ENOENT or another -errno. */
int rec_get(struct fh_index *x, uint64_t ino, struct fhx_rec *r);
/* Put (r != NULL) or delete the entry of ino, if what is there is what
 * expect (and gen) say; else -EAGAIN and nothing written. */
int rec_put(struct fh_index *x, uint64_t ino, enum fhx_expect expect, uint32_t gen,
	    const struct fhx_rec *r);

#endif
