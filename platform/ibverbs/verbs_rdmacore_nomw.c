/*
 * verbs_rdmacore_nomw.c: for a libibverbs without memory windows or Send with
 * Invalidate (illumos's OFED libibverbs 1.1.8): the provider has no window
 * ops (vb_windowless_provider names it, so nfsrdma-server refuses
 * registration = fastreg), its devices say so too (vb_device_attr.has_mw 0),
 * and no Send with Invalidate is made or seen. See verbs_rdmacore_mw.c.
 */
#include <errno.h>

#include "verbs_rdmacore.h"

/* See verbs_rdmacore.h: none. */
int rdmacore_mw_type(const struct ibv_device_attr *attr)
{
	(void)attr;
	return 0;
}

/* See verbs_rdmacore.h: no receive can invalidate. */
unsigned rdmacore_wc_inv_flags(const struct ibv_device_attr *attr)
{
	(void)attr;
	return 0;
}

/* See verbs_rdmacore.h: no window was ever bound. */
void rdmacore_mw_invalidated(struct rdmacore_device *d, uint32_t rkey)
{
	(void)d, (void)rkey;
}

/* See verbs_rdmacore.h. */
int rdmacore_send_inv(uint32_t rkey, struct ibv_send_wr *out)
{
	(void)rkey, (void)out;
	return -EOPNOTSUPP;
}

/* See verbs_rdmacore.h: this build cannot post it. */
int rdmacore_send_inv_ok(const struct ibv_device_attr *attr)
{
	(void)attr;
	return 0;
}

/* See verbs_rdmacore.h: no windows. */
int rdmacore_mw_remote_inv(const struct rdmacore_device *d)
{
	(void)d;
	return 0;
}

/* See verbs_rdmacore.h: never called (rdmacore_wc_inv_flags is 0). */
uint32_t rdmacore_wc_invalidated_rkey(const struct ibv_wc *wc)
{
	(void)wc;
	return 0;
}

/* See verbs_rdmacore.h. */
int rdmacore_wc_is_local_inv(enum ibv_wc_opcode opcode)
{
	(void)opcode;
	return 0;
}
