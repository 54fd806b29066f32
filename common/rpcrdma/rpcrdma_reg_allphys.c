/*
 * rpcrdma_reg_allphys.c: registration 'allphys' (the "global steering tag"):
 * one arena registered at start with the remote rights, one key for every
 * buffer: the fastest, and every peer that ever saw the key can reach the
 * whole arena, so it is refused unless the configuration trusts the peers.
 */
#include "common/base/log.h"
#include "rpcrdma_reg_int.h"

static int allphys_setup(struct rr_reg_ctx *r)
{
	if (!r->p.trusted_peers) {
		log_err("registration 'allphys' exposes the whole arena with one key: "
			"it needs trusted_peers = true");
		return -EPERM;
	}
	return reg_arena_create(r, VB_ACCESS_LOCAL_WRITE | r->remote_rights);
}

static int allphys_expose(struct rr_reg_ctx *r, struct vb_conn *conn, struct rr_buf *b,
			  const void *at, size_t len, unsigned flags)
{
	b->rkey = b->base->rkey;
	return 0;
}

const struct reg_ops reg_allphys_ops = {
	.kind = RR_REG_ALLPHYS,
	.setup = allphys_setup,
	.get = reg_arena_get,
	.expose = allphys_expose,
	.unexpose = reg_keep_key,
	.put = reg_arena_put,
	.put_is_cheap = 1,
	.exposes_any = 1,
};
