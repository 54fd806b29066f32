/*
 * ordma_cache.h: the server's registered block cache for Optimistic RDMA
 * (issue 23; the slot layout is common/nfs/ordma.h). One cache of fixed
 * slots, filled by the READs the server answers for exports that turn it on,
 * least recently filled first out. Its memory is exposed read-only to
 * clients by the transport; the cache only writes it, under the seqlock of
 * ordma.h, so that a client reading a slot at any moment sees either a
 * whole block it can check or something its check refuses. A slot's memory
 * stays where it is for the cache's life: a reference never becomes an
 * invalid address or key, only a slot that holds something else.
 *
 * Every change the server makes to a file (WRITE, SETATTR, REMOVE, RENAME
 * over it, COMMIT is none) forgets the file's slots before it is made
 * (ordma_cache_forget), so a block older than the change is not found by
 * a later lookup; a client that still holds a reference sees the slot's
 * seq move, or another block there, or the old change attribute.
 *
 * Thread-safe: one mutex; fills copy at most a block under it.
 */
#ifndef NFSRDMA_ORDMA_CACHE_H
#define NFSRDMA_ORDMA_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "common/nfs/ordma.h"

struct ordma_cache;

/* A reference to a cached block: its offset in the file and its slot's
 * offset in the cache's memory (ordma_cache_mem). */
struct ordma_ref {
	uint64_t offset;
	uint64_t slot_off;
};

struct ordma_cache_stats {
	uint64_t slots, used;		    /* slots in all, slots holding a block */
	uint64_t fills, evictions, forgets; /* blocks stored, pushed out, dropped */
	uint64_t refs;			    /* references handed out (ordma_cache_lookup) */
};

/* A cache of `bytes` (rounded down to whole slots; at least one) of blocks
 * of `block` bytes (ORDMA_BLOCK_MIN..MAX, a power of two). 0, -EINVAL or
 * -ENOMEM. */
int ordma_cache_create(size_t bytes, uint32_t block, struct ordma_cache **out);
void ordma_cache_destroy(struct ordma_cache *c);
/* The memory to expose (page-aligned) and its length. */
void *ordma_cache_mem(struct ordma_cache *c, size_t *len);
uint32_t ordma_cache_block(const struct ordma_cache *c);
/* A count of the forgets that could concern the file (those of the files
 * that share its table bucket): take it before reading what a fill will
 * store. */
uint64_t ordma_cache_gen(struct ordma_cache *c, uint64_t fh_hash);
/* Store the block at `offset` (a multiple of the block size) of the file
 * (handle hash fh_hash, fileid), len bytes (at most a block; fewer only at
 * the end of the file), read when its change attribute was `change`, after
 * ordma_cache_gen said gen. It replaces that block's slot, else the least
 * recently filled one. Nothing is stored if the file (or one sharing its
 * bucket) was forgotten since gen: the bytes may predate a change whose
 * forget has run already. */
void ordma_cache_fill(struct ordma_cache *c, uint64_t gen, uint64_t fh_hash, uint64_t fileid,
		      uint64_t offset, uint64_t change, const void *data, uint32_t len);
/* Drop every block of the file; of every file. */
void ordma_cache_forget(struct ordma_cache *c, uint64_t fh_hash);
void ordma_cache_clear(struct ordma_cache *c);
/* References to the file's blocks in [offset, offset + count) (at most
 * ORDMA_LOOKUP_BLOCKS blocks are looked at), in offset order, up to max;
 * returns how many. */
#define ORDMA_LOOKUP_BLOCKS 256
size_t ordma_cache_lookup(struct ordma_cache *c, uint64_t fh_hash, uint64_t offset, uint64_t count,
			  struct ordma_ref *out, size_t max);
void ordma_cache_stats(struct ordma_cache *c, struct ordma_cache_stats *out);

#endif
