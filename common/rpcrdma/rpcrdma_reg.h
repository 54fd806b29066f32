/*
 * rpcrdma_reg.h: registration strategies behind one interface.
 *
 * A struct rr_buf is memory the local side can use in RDMA work requests (its
 * lkey) and, once exposed, that the peer can reach (its rkey) with the rights
 * asked for. How that is achieved is the strategy's business:
 *
 *   dynamic   get: allocate + register; put: deregister + free. The
 *             registration may run on a helper thread while the caller fills
 *             the buffer (RR_GET_ASYNC); rr_buf_wait() before use in RDMA.
 *   cache     buffers registered once, kept on free lists by size class and
 *             rights; bounded by a budget with high/low watermarks; hits and
 *             misses counted. Only our own buffers are cached, never by address.
 *   fastreg   one arena registered at start (local access only); exposing
 *             binds a memory window with a fresh key; unexposing invalidates it.
 *   allphys   one arena registered at start with the remote rights; one key for
 *             every buffer. Refused unless peers are trusted.
 *   zerocopy  (client) the caller's own memory registered per I/O (rr_buf_wrap);
 *             the transport's own buffers behave as with dynamic.
 *
 * Locking: every function is thread-safe; strategies take their own lock.
 */
#ifndef NFSRDMA_RPCRDMA_REG_H
#define NFSRDMA_RPCRDMA_REG_H

#include <pthread.h>

#include "rpcrdma.h"
#include "common/verbs.h"
#include "common/base/workq.h"

enum rr_get_flags {
	/* Whatever registering the buffer takes runs on the strategy's registration
	 * thread, never on the caller's, which may be a thread that took on a
	 * caller's identity (see rpcrdma_int.h); rr_buf_wait() before RDMA. */
	RR_GET_ASYNC = 1 << 0,
	RR_GET_EXPOSE = 1 << 1, /* the buffer will be exposed: register with the remote rights now
				  (dynamic, cache) */
	RR_GET_NOWAIT = 1 << 2, /* fail at once rather than wait for arena space (event loops) */
	RR_EXPOSE_READ_ONLY = 1 << 3, /* rr_buf_expose: the peer may only read it (a window's
					 rights; keys of a whole registration keep theirs) */
	RR_EXPOSE_RESERVED = 1 << 4,  /* rr_buf_expose: with a key rr_reg_keys_reserve set
					 aside, which it uses up */
};

struct rr_buf {
	void *addr;
	size_t len; /* usable bytes (>= what was asked) */
	uint32_t lkey;
	uint32_t rkey; /* valid while exposed */
	int exposed;
	/* the strategy's */
	struct vb_mr *mr;   /* own registration (dynamic, cache, zerocopy) */
	struct rr_win *win; /* window (fastreg, while exposed) */
	int peer_unbound;   /* the peer's Send with Invalidate unbound win */
	struct vb_mr *base; /* the registration it lies in (arena, region) */
	int cls;	    /* size class (cache, arenas) */
	int remote;	    /* registered with remote rights (cache) */
	int wrapped;	    /* the memory is the caller's (zerocopy, region) */
	int held;	    /* and so is this descriptor (region): put frees nothing */
	int reg_rc;	    /* async registration result, valid when reg_done */
	int reg_done;
	struct rr_buf *chunk;	    /* cache: the registration of 2 MiB it is a piece of */
	unsigned pieces, idle;	    /* a chunk: its pieces, and how many are cached */
	struct rr_buf *next, *prev; /* on a free list (prev: the arena's only) */
	struct rr_reg_ctx *owner;   /* and its job, for a background registration */
	struct work reg_work;
};

struct rr_reg_ctx;
struct rr_conn;
struct rr_win;

/* remote_rights: what exposures grant (VB_ACCESS_REMOTE_READ for a server in
 * Read-Read, READ|WRITE for a client; 0 for a server that never exposes). */
int rr_reg_create(struct vb_pd *pd, const struct rr_params *p, unsigned remote_rights,
		  struct rr_stats *stats, struct rr_reg_ctx **out);
void rr_reg_destroy(struct rr_reg_ctx *r);

int rr_buf_get(struct rr_reg_ctx *r, size_t len, unsigned flags, struct rr_buf **out);
/* Wait for an async registration; returns its result. */
int rr_buf_wait(struct rr_reg_ctx *r, struct rr_buf *b);
/* Make [at, at+len) of b reachable by the peer of conn with the remote rights
 * (sets b->rkey): only that with fastreg's windows, and not the rest of b,
 * which may hold what an earlier I/O left; all of b or more with the
 * strategies whose keys are registrations. conn NULL (the connection is
 * going) fails with -ECONNRESET, no free key (fastreg's windows) with -EAGAIN
 * at once, a range outside b with -EINVAL. flags may hold
 * RR_EXPOSE_READ_ONLY. */
int rr_buf_expose(struct rr_reg_ctx *r, struct vb_conn *conn, struct rr_buf *b, const void *at,
		  size_t len, unsigned flags);
/* Set aside n keys for exposures to come (fastreg's windows, which all the
 * connections of a server share), so that a reply whose exposure is
 * reserved finds its keys when it is sent: 0 (also where keys cost nothing:
 * rr_reg_keys_per_exposure is false), -EAGAIN while fewer are free, -E2BIG
 * if the pool has fewer (a window that could not be replaced shrinks it).
 * rr_buf_expose with RR_EXPOSE_RESERVED uses one up; rr_reg_keys_unreserve
 * gives back those not used. */
int rr_reg_keys_reserve(struct rr_reg_ctx *r, unsigned n);
void rr_reg_keys_unreserve(struct rr_reg_ctx *r, unsigned n);
/* After rr_buf_expose's -EAGAIN, wait up to ms for a key to come free, outside
 * the connection (rr_conn_enter), whose end frees keys: 0 to try again, or
 * -EAGAIN. */
int rr_buf_expose_wait(struct rr_reg_ctx *r, int ms);
/* End the exposure now: the key stops working at once (unless allphys/cache,
 * whose keys outlive the I/O by design). conn is a transport connection's
 * (rr_conn_enter), or NULL once the connection is going: a window is then
 * replaced instead of invalidated through it.
 * fastreg's window is free again once its invalidation has completed (it is
 * replaced if that was flushed), which may be later: see rr_reg_on_keys_freed. */
void rr_buf_unexpose(struct rr_reg_ctx *r, struct vb_conn *conn, struct rr_buf *b);
void rr_buf_put(struct rr_reg_ctx *r, struct rr_buf *b);
/* zerocopy: register the caller's memory [addr, addr+len) for exposure. */
int rr_buf_wrap(struct rr_reg_ctx *r, void *addr, size_t len, struct rr_buf **out);
/* [addr, addr+len) inside rr_params.region, described in the caller's b (put
 * and given back like any, until rr_buf_put, which frees nothing), as a
 * buffer to expose like one of the arena's (no copy, nothing registered)
 * with flags as rr_buf_expose's; -ENOENT if it is not there. -EPERM for a
 * writable exposure where keys outlive the I/O (allphys): a late RDMA
 * Write, after a timeout, would land in the caller's memory once it holds
 * other data. */
int rr_buf_in_region(struct rr_reg_ctx *r, void *addr, size_t len, unsigned flags,
		     struct rr_buf *b);
/* len bytes, page-aligned, for a registration; from 2 MiB up in transparent
 * huge pages where the system has them. free() it. */
void *rr_mem_alloc(size_t len);
enum rr_reg rr_reg_kind(const struct rr_reg_ctx *r);
/* Whether b can be exposed: registered with remote rights, or in an arena. */
int rr_buf_exposable(const struct rr_reg_ctx *r, const struct rr_buf *b);
/* Whether rr_buf_put is cheap (no deregistration), so it may run on an event loop. */
int rr_reg_put_is_cheap(const struct rr_reg_ctx *r);
/* Whether every key r exposes is a window of one exposure (fastreg with
 * windows): where the device lets a peer end them (vb_device_attr.mw_remote_inv),
 * what RFC 8797's private data may offer as Remote Invalidation. */
int rr_reg_keys_per_exposure(const struct rr_reg_ctx *r);
/* Send-queue entries r may take on a connection that holds at most windows
 * of its memory windows, besides the transport's own chains (rr_post):
 * fastreg's window binds, which it posts itself, unsignaled (a device
 * retires them only once a later signaled work request completes), and
 * invalidations (signaled: rr_post_own). A connection holds a window from
 * before its bind until its invalidation has completed (the server counts
 * rr_conn.windows_ending against its bound), and a window has at most its
 * bind and its invalidation in the queue: each connection's send queue and
 * CQ get room for twice windows beyond rr_post's sq_depth. */
unsigned rr_reg_wr_room(const struct rr_reg_ctx *r, unsigned windows);
/* Have fn(arg, c) called when keys come free later than the unexpose that
 * ended them (a window's invalidation completed, on the loop of c, the
 * connection that had it: c->windows_ending is one less). */
void rr_reg_on_keys_freed(struct rr_reg_ctx *r, void (*fn)(void *arg, struct rr_conn *c),
			  void *arg);

#endif
