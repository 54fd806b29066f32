/*
 * rpcrdma_reg_dynamic.c: registration 'dynamic' (the baseline): every buffer
 * is allocated and registered for its I/O, deregistered and freed after, on
 * helper threads when the caller asks RR_GET_ASYNC. An exposed buffer's key
 * dies at unexpose. 'zerocopy' (the client) is the same for the transport's
 * own buffers; the caller's memory goes through rr_buf_wrap.
 */
#include <stdlib.h>

#include "common/base/workq.h"
#include "rpcrdma_reg_int.h"

#define REG_THREADS 4 /* registrations run this many at once */

static int dynamic_setup(struct rr_reg_ctx *r)
{
	return workq_create(REG_THREADS, "rpcrdma-reg", &r->regq);
}

static int dynamic_get(struct rr_reg_ctx *r, size_t len, unsigned flags, struct rr_buf **out)
{
	return reg_new_buf(r, len, (flags & RR_GET_EXPOSE) != 0, flags, out);
}

/* The key dies now; the memory goes at put. */
static void dynamic_unexpose(struct rr_reg_ctx *r, struct vb_conn *conn, struct rr_buf *b)
{
	reg_undo(r, b->mr);
	b->mr = NULL;
}

static void dynamic_put(struct rr_reg_ctx *r, struct rr_buf *b)
{
	if (b->mr)
		reg_undo(r, b->mr);
	free(b->addr);
	free(b);
}

const struct reg_ops reg_dynamic_ops = {
	.kind = RR_REG_DYNAMIC,
	.setup = dynamic_setup,
	.get = dynamic_get,
	.expose = reg_own_expose,
	.unexpose = dynamic_unexpose,
	.put = dynamic_put,
};

const struct reg_ops reg_zerocopy_ops = {
	.kind = RR_REG_ZEROCOPY,
	.setup = dynamic_setup,
	.get = dynamic_get,
	.expose = reg_own_expose,
	.unexpose = dynamic_unexpose,
	.put = dynamic_put,
};
