/*
 * rpcrdma_cm_private.c: the RFC 8797 private data that RPC-over-RDMA peers
 * exchange when they connect (inline sizes, Remote Invalidation). Wire rules:
 * rpcrdma_hdr.h.
 */
#include <errno.h>
#include <stdbool.h>

#include "common/base/log.h"
#include "rpcrdma_hdr.h"

/* Whether bytes is an inline size the one-byte encoding can carry exactly. */
static bool inline_size_ok(uint32_t bytes)
{
	return bytes >= 1024 && bytes <= RPCRDMA_CM_MAX_INLINE && bytes % 1024 == 0;
}

/* This side's private data: our format and version, the given settings. */
void rpcrdma_cm_private_init(struct rpcrdma_cm_private *pd, uint8_t flags, uint32_t send_size,
			     uint32_t recv_size)
{
	pd->magic = RPCRDMA_CM_PRIVATE_MAGIC;
	pd->version = RPCRDMA_CM_PRIVATE_VERSION;
	pd->flags = flags;
	pd->send_size = send_size;
	pd->recv_size = recv_size;
}

/* Why pd cannot be encoded, or NULL if it can. */
static const char *cm_private_invalid(const struct rpcrdma_cm_private *pd)
{
	if (pd->magic != RPCRDMA_CM_PRIVATE_MAGIC)
		return "format identifier is not 0xf6ab0e18";
	if (pd->version != RPCRDMA_CM_PRIVATE_VERSION)
		return "version is not 1";
	if (pd->flags & ~RPCRDMA_CM_F_REMOTE_INV)
		return "unknown flag";
	if (!inline_size_ok(pd->send_size))
		return "send size is not a multiple of 1024 in 1024..262144";
	if (!inline_size_ok(pd->recv_size))
		return "receive size is not a multiple of 1024 in 1024..262144";
	return NULL;
}

/* The 8 bytes of RFC 8797 section 4, all or nothing. */
int rpcrdma_cm_private_encode(struct wcur *w, const struct rpcrdma_cm_private *pd)
{
	const char *why = cm_private_invalid(pd);
	uint8_t tail[4];

	if (why) {
		log_err("cannot encode RDMA-CM private data: %s", why);
		return -EINVAL;
	}
	if (wcur_left(w) < RPCRDMA_CM_PRIVATE_LEN)
		return -ENOSPC;
	tail[0] = pd->version;
	tail[1] = pd->flags;
	tail[2] = (uint8_t)(pd->send_size / 1024 - 1);
	tail[3] = (uint8_t)(pd->recv_size / 1024 - 1);
	if (wcur_put_u32(w, pd->magic) != 0 || wcur_put_bytes(w, tail, sizeof(tail)) != 0)
		return -ENOSPC;
	return 0;
}

/* The peer's private data, or the defaults when it has none of ours. */
int rpcrdma_cm_private_decode(struct cur *c, struct rpcrdma_cm_private *pd)
{
	struct cur t = *c;
	const uint8_t *tail;
	uint32_t magic;

	rpcrdma_cm_private_init(pd, 0, RPCRDMA_CM_DEFAULT_INLINE, RPCRDMA_CM_DEFAULT_INLINE);
	if (cur_get_u32(&t, &magic) != 0 || cur_get_bytes(&t, 4, &tail) != 0) {
		log_debug("no RPC/RDMA private data (%zu bytes): inline sizes default to 1024",
			  cur_left(c));
		return -ENOMSG;
	}
	if (magic != RPCRDMA_CM_PRIVATE_MAGIC || tail[0] != RPCRDMA_CM_PRIVATE_VERSION) {
		log_debug("private data format 0x%08x version %u is not ours: defaults apply",
			  magic, tail[0]);
		return -ENOMSG;
	}
	pd->flags = tail[1] & RPCRDMA_CM_F_REMOTE_INV;
	pd->send_size = ((uint32_t)tail[2] + 1) * 1024;
	pd->recv_size = ((uint32_t)tail[3] + 1) * 1024;
	*c = t;
	return 0;
}
