/*
 * fhcache.h: a bounded, thread-safe LRU cache of open files keyed by file
 * handle and open mode, so READ and WRITE do not open and close the file on
 * every call: file descriptors, or whatever a backend opens (a CephFS Fh), which
 * the closer given at creation closes. An entry handed out holds a reference;
 * its file stays open until the reference is put back, even if the entry is
 * evicted, expired or forgotten meanwhile.
 */
#ifndef NFSRDMA_FHCACHE_H
#define NFSRDMA_FHCACHE_H

#include <stddef.h>
#include <stdint.h>

#define FHCACHE_KEY_MAX 72

struct fhcache;

struct fhc_entry {
	int fd;		     /* the open fd: read it, never close it (-1 with obj) */
	void *obj;	     /* or the open object of a cache with a closer */
	int kind;	     /* what the caller said at insert (an osdep_open_mode) */
	int nowait_how;	     /* osdep_pread_nowait's for a READ fd, pwrite's for RDWR */
	int write_anyone;    /* osdep_write_as_anyone's */
	uint64_t answers[2]; /* backend_ident.c's: the kernel's last READ and ACCESS answers */
	/* private below */
	unsigned refs;
	int dead;
	uint64_t idle_since; /* ms (CLOCK_MONOTONIC) of the last put */
	size_t keylen;
	unsigned char key[FHCACHE_KEY_MAX];
	unsigned hash;
	struct fhc_entry *hnext;
	struct fhc_entry *lprev, *lnext;
};

/* Closes what an entry holds: (arg, the entry's fd, its obj). */
typedef void (*fhcache_close_fn)(void *arg, int fd, void *obj);

/* A cache holding at most max_entries idle fds (at least 1). NULL on ENOMEM. */
struct fhcache *fhcache_create(size_t max_entries);
/* The same for objects that close(arg, fd, obj) closes. */
struct fhcache *fhcache_create_with(size_t max_entries, fhcache_close_fn close, void *arg);
/* Close every entry; no entry may still be held. */
void fhcache_destroy(struct fhcache *c);
/* The entry for (key, kind) with a reference taken, or NULL if absent. */
struct fhc_entry *fhcache_get(struct fhcache *c, const void *key, size_t len, int kind);
/* Add fd for (key, kind) and return it referenced. The cache owns fd from now
 * on. If another thread added the same key first, fd is closed and that entry
 * is returned. NULL (fd closed) on ENOMEM or a key longer than FHCACHE_KEY_MAX. */
struct fhc_entry *fhcache_insert(struct fhcache *c, const void *key, size_t len, int kind, int fd);
/* The same for an object (a cache with a closer); on NULL it is closed. */
struct fhc_entry *fhcache_insert_obj(struct fhcache *c, const void *key, size_t len, int kind,
				     void *obj);
/* Give back a reference from get/insert. */
void fhcache_put(struct fhcache *c, struct fhc_entry *e);
/* Drop every entry for key (any kind), e.g. when the object is gone. */
void fhcache_forget(struct fhcache *c, const void *key, size_t len);
/* Drop every entry (held ones once put back), e.g. when what the keys were
 * checked against changes. */
void fhcache_forget_all(struct fhcache *c);
/* Close the entries nobody has used for idle_ms or more; how many. */
size_t fhcache_expire(struct fhcache *c, unsigned idle_ms);
/* Entries currently cached (for tests and statistics). */
size_t fhcache_count(struct fhcache *c);

#endif
