/*
 * rpcrdma_reg_int.h: what the registration strategies share. Each strategy is
 * one const struct reg_ops in a file of its own (rpcrdma_reg_dynamic.c with
 * zerocopy, rpcrdma_reg_cache.c, rpcrdma_reg_fastreg.c, rpcrdma_reg_allphys.c),
 * as the Linux client's frwr_ops.c; rpcrdma_reg.c holds the interface of
 * rpcrdma_reg.h, which looks the table up once and never switches on the
 * strategy, and the helpers below.
 */
#ifndef NFSRDMA_RPCRDMA_REG_INT_H
#define NFSRDMA_RPCRDMA_REG_INT_H

#include "rpcrdma_int.h"

#define CLASS_MIN_SHIFT 12		  /* 4 KiB */
#define NCLASSES	14		  /* 4 KiB .. 32 MiB */
#define ARENA_WAIT_S	10		  /* how long a get waits for arena space or a window */
#define REG_HUGE	((size_t)2 << 20) /* a transparent huge page (rr_mem_alloc) */

struct reg_ops;

struct rr_reg_ctx {
	const struct reg_ops *ops;
	struct vb_pd *pd;
	struct rr_params p;
	unsigned remote_rights;
	struct rr_stats *st;

	pthread_mutex_t lock;		  /* protects everything below */
	pthread_cond_t cond;		  /* a registration finished, arena space or a window */
	struct rr_buf *free[2][NCLASSES]; /* [registered with remote rights][class] */

	uint8_t *arena; /* fastreg, allphys (rpcrdma_reg_arena.c) */
	size_t arena_size;
	struct vb_mr *arena_mr;
	struct rr_buf **arena_free_at; /* per 4 KiB of it: the free block that starts there */
	struct rr_buf *arena_spare;    /* descriptors of blocks joined, for the next split */
	struct vb_mr *region_mr;       /* rr_params.region, registered as the arena */

	struct rr_win **mws; /* fastreg: free windows */
	unsigned nmws, nmw_free;
	unsigned nmw_reserved; /* of the free ones, set aside (rr_reg_keys_reserve) */
	void (*keys_freed)(void *arg, struct rr_conn *c); /* rr_reg_on_keys_freed */
	void *keys_freed_arg;

	struct workq *regq; /* dynamic, cache: registrations off the caller's thread */
	size_t idle_held;   /* cache: idle pieces of chunks that have one in use */
};

/* fastreg: free the windows of the pool (all free by now). */
void reg_windows_destroy(struct rr_reg_ctx *r);

/* One registration strategy. */
struct reg_ops {
	enum rr_reg kind;
	/* Make what the strategy keeps (threads, arena, windows); a strategy the
	 * device cannot do may hand r over to another (r->ops and its setup). */
	int (*setup)(struct rr_reg_ctx *r);
	int (*get)(struct rr_reg_ctx *r, size_t len, unsigned flags, struct rr_buf **out);
	/* Set b->rkey for conn's peer (b is registered: rr_buf_wait done). */
	int (*expose)(struct rr_reg_ctx *r, struct vb_conn *conn, struct rr_buf *b, const void *at,
		      size_t len, unsigned flags);
	/* Optional: wait up to ms for what expose lacked when it said -EAGAIN
	 * (rr_buf_expose_wait). */
	int (*expose_wait)(struct rr_reg_ctx *r, int ms);
	void (*unexpose)(struct rr_reg_ctx *r, struct vb_conn *conn, struct rr_buf *b);
	/* Take back a buffer that get gave out. */
	void (*put)(struct rr_reg_ctx *r, struct rr_buf *b);
	int put_is_cheap; /* put never deregisters: fine on an event loop */
	int exposes_any;  /* any buffer of its own can be exposed, not only RR_GET_EXPOSE's */
};

extern const struct reg_ops reg_dynamic_ops, reg_zerocopy_ops, reg_cache_ops, reg_fastreg_ops,
	reg_allphys_ops;

/* Helpers (rpcrdma_reg.c). */
int reg_size_class(size_t len);
size_t reg_class_size(int c);
/* Register [addr, addr+len) with access, counting it. */
int reg_do(struct rr_reg_ctx *r, void *addr, size_t len, unsigned access, struct vb_mr **mr);
void reg_undo(struct rr_reg_ctx *r, struct vb_mr *mr);
/* Register b (addr, len, remote set) for local access and, if remote, the
 * remote rights: here (sync) or on the registration thread (RR_GET_ASYNC). */
int reg_buf(struct rr_reg_ctx *r, struct rr_buf *b, unsigned flags);
/* A new buffer of len bytes with a registration of its own (reg_buf); remote
 * says whether with the remote rights. */
int reg_new_buf(struct rr_reg_ctx *r, size_t len, int remote, unsigned flags, struct rr_buf **out);
/* Free a piece of a cache chunk (rpcrdma_reg_cache.c), and the chunk with its
 * last piece (r->lock not held). */
void reg_piece_drop(struct rr_reg_ctx *r, struct rr_buf *b);
/* expose and unexpose for buffers with a registration of their own. */
int reg_own_expose(struct rr_reg_ctx *r, struct vb_conn *conn, struct rr_buf *b, const void *at,
		   size_t len, unsigned flags);
void reg_keep_key(struct rr_reg_ctx *r, struct vb_conn *conn, struct rr_buf *b);
/* The arena (fastreg, allphys): one registration with access, shared out by
 * class (rpcrdma_reg_arena.c). destroy: with its free blocks (none if none). */
int reg_arena_create(struct rr_reg_ctx *r, unsigned access);
void reg_arena_destroy(struct rr_reg_ctx *r);
int reg_arena_get(struct rr_reg_ctx *r, size_t len, unsigned flags, struct rr_buf **out);
void reg_arena_put(struct rr_reg_ctx *r, struct rr_buf *b);

#endif
