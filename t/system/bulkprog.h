/*
 * bulkprog.h: a small RPC program for transport tests and measurements.
 *   ECHO(opaque)           -> the same bytes, inline
 *   PUT(seed, data)        -> {length, checksum}; data is DDP-eligible (like NFS WRITE)
 *   GET(seed, length)      -> {length, data};  data is DDP-eligible (like NFS READ)
 *   BIG(length)            -> opaque of length bytes, not DDP-eligible (a long reply)
 *   SUM(opaque)            -> {length, checksum}; a long call when the opaque is big
 *   SLEEP(ms)              -> nothing, after ms milliseconds (keeps calls in flight)
 *   PADGET(seed, length, pad) -> {pad bytes, GET's result}: with pad over the
 *                             inline size, a long reply that has DDP data too
 * Data is a pattern derived from a seed, so each side can check the other.
 */
#ifndef NFSRDMA_T_BULKPROG_H
#define NFSRDMA_T_BULKPROG_H

#include "common/rpc/rpc.h"

#define BULKPROG     0x4e520001u
#define BULKVERS     1
#define BULK_MAXDATA (16u << 20)

enum {
	BULK_NULL,
	BULK_ECHO,
	BULK_PUT,
	BULK_GET,
	BULK_BIG,
	BULK_SUM,
	BULK_SLEEP,
	BULK_PADGET,
	BULK_NPROCS
};
/* A PUT whose seed has this bit gives up on an event loop (would_block): it
 * runs again on a worker. */
#define BULK_SEED_WORKER 0x80000000u

struct bulk_blob {
	u_int len;
	char *data;
};
struct bulk_put_args {
	u_int seed;
	struct bulk_blob data;
};
struct bulk_sum {
	u_int len;
	u_int sum;
};
struct bulk_get_args {
	u_int seed;
	u_int len;
};
struct bulk_get_res {
	u_int len;
	struct bulk_blob data;
};
struct bulk_padget_args {
	struct bulk_get_args get;
	u_int pad;
};
struct bulk_padget_res {
	struct bulk_blob pad;
	struct bulk_get_res get;
};

bool_t xdr_bulk_blob(XDR *xdrs, struct bulk_blob *b);	      /* plain opaque */
bool_t xdr_bulk_put_args(XDR *xdrs, struct bulk_put_args *a); /* DDP data */
bool_t xdr_bulk_sum(XDR *xdrs, struct bulk_sum *s);
bool_t xdr_bulk_get_args(XDR *xdrs, struct bulk_get_args *a);
bool_t xdr_bulk_get_res(XDR *xdrs, struct bulk_get_res *r); /* DDP data */
bool_t xdr_bulk_padget_args(XDR *xdrs, struct bulk_padget_args *a);
bool_t xdr_bulk_padget_res(XDR *xdrs, struct bulk_padget_res *r);

/* Fill or check len bytes of the pattern for seed. */
void bulk_fill(void *buf, size_t len, uint32_t seed);
uint32_t bulk_checksum(const void *buf, size_t len);

extern const struct rpc_proc_desc bulk_procs[BULK_NPROCS];
extern const struct rpc_program bulk_program;

#endif
