/*
 * verbs_rdmacore_mw.c: memory windows and invalidation (RFC 8797's remote
 * invalidation of a window's key by Send with Invalidate), for a libibverbs
 * that has them (rdma-core). configure picks verbs_rdmacore_nomw.c instead
 * where the API lacks them (illumos's OFED libibverbs 1.1.8).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/log.h"
#include "verbs_rdmacore.h"

/*
 * The memory-window type to use: type 2 (remote-invalidatable, bound by a
 * work request) when offered, else type 1. VB_RDMACORE_MW_TYPE=1|2 forces one
 * the device has, so that tests can run both paths on one device.
 */
int rdmacore_mw_type(const struct ibv_device_attr *attr)
{
	int has2 = (attr->device_cap_flags &
		    (IBV_DEVICE_MEM_WINDOW_TYPE_2A | IBV_DEVICE_MEM_WINDOW_TYPE_2B)) != 0;
	int has1 = (attr->device_cap_flags & IBV_DEVICE_MEM_WINDOW) != 0;
	const char *force = getenv("VB_RDMACORE_MW_TYPE");

	if (force && strcmp(force, "1") == 0 && has1)
		return IBV_MW_TYPE_1;
	if (force && strcmp(force, "2") == 0 && has2)
		return IBV_MW_TYPE_2;
	if (force)
		log_warn("VB_RDMACORE_MW_TYPE=%s: not a window type this device has", force);
	return has2 ? IBV_MW_TYPE_2 : has1 ? IBV_MW_TYPE_1 : 0;
}

/*
 * Which wc_flags bits mark a receive that invalidated a key. Linux rxe (6.1,
 * still in later kernels) stores the kernel's IB_WC_WITH_INVALIDATE (1 << 2)
 * in user CQEs, which libibverbs reads as IBV_WC_IP_CSUM_OK; that flag never
 * applies to the RC QPs we make, so on rxe it is read as "invalidated" too.
 */
unsigned rdmacore_wc_inv_flags(const struct ibv_device_attr *attr)
{
	const uint32_t rxe_vendor_id = 0xffffff; /* drivers/infiniband/sw/rxe/rxe_param.h */

	return IBV_WC_WITH_INV | (attr->vendor_id == rxe_vendor_id ? IBV_WC_IP_CSUM_OK : 0);
}

/* See verbs_rdmacore.h. */
int rdmacore_send_inv(uint32_t rkey, struct ibv_send_wr *out)
{
	out->opcode = IBV_WR_SEND_WITH_INV;
	out->invalidate_rkey = rkey;
	return 0;
}

/* See verbs_rdmacore.h: the memory management extensions (fast registration,
 * local and remote invalidation). */
int rdmacore_send_inv_ok(const struct ibv_device_attr *attr)
{
	return (attr->device_cap_flags & IBV_DEVICE_MEM_MGT_EXTENSIONS) != 0;
}

/* See verbs_rdmacore.h. */
int rdmacore_mw_remote_inv(const struct rdmacore_device *d)
{
	return d->mw_type == IBV_MW_TYPE_2 && d->wc_inv_flags != 0;
}

/* See verbs_rdmacore.h. */
uint32_t rdmacore_wc_invalidated_rkey(const struct ibv_wc *wc)
{
	return wc->invalidated_rkey;
}

/* See verbs_rdmacore.h. */
int rdmacore_wc_is_local_inv(enum ibv_wc_opcode opcode)
{
	return opcode == IBV_WC_LOCAL_INV;
}

/* A memory window, unbound; -EOPNOTSUPP when the device has none. */
int rdmacore_alloc_mw(struct vb_pd *pd, struct vb_mw **out)
{
	struct rdmacore_mw *w;
	int type;
	int rc;

	if (pd == NULL || !rdmacore_is_ours(pd->dev) || out == NULL)
		return -EINVAL;
	if ((type = rdmacore_device_of(pd->dev)->mw_type) == 0)
		return -EOPNOTSUPP;
	if ((w = calloc(1, sizeof(*w))) == NULL)
		return -ENOMEM;
	if ((w->mw = ibv_alloc_mw(((struct rdmacore_pd *)pd)->pd, (enum ibv_mw_type)type)) ==
	    NULL) {
		rc = errno ? -errno : -ENOMEM;
		log_err("ibv_alloc_mw(type %d) on %s: %s", (int)type, pd->dev->name, strerror(-rc));
		free(w);
		return rc;
	}
	w->base.pd = pd;
	w->node.obj = w;
	*out = &w->base;
	return 0;
}

/* Free a window (bound or not). */
int rdmacore_dealloc_mw(struct vb_mw *mw)
{
	struct rdmacore_mw *w = (struct rdmacore_mw *)mw;
	int rc;

	if (mw == NULL || mw->pd == NULL || !rdmacore_is_ours(mw->pd->dev))
		return -EINVAL;
	if ((rc = ibv_dealloc_mw(w->mw)) != 0)
		return -rc;
	rdmacore_map_remove(&rdmacore_device_of(mw->pd->dev)->mwmap, &w->node);
	free(w);
	return 0;
}

/* Window rights: only remote read/write make sense for a window. */
int rdmacore_mw_access_to_ibv(unsigned access, int *out)
{
	int f = 0;

	if (access & ~(unsigned)VB_ACCESS_REMOTE)
		return -EINVAL;
	if (access & VB_ACCESS_REMOTE_READ)
		f |= IBV_ACCESS_REMOTE_READ;
	if (access & VB_ACCESS_REMOTE_WRITE)
		f |= IBV_ACCESS_REMOTE_WRITE;
	*out = f;
	return 0;
}

/* The peer invalidated rkey: a window of ours bound under it is now unbound. */
void rdmacore_mw_invalidated(struct rdmacore_device *d, uint32_t rkey)
{
	struct rdmacore_map_node *node;

	rdmacore_map_wrlock(&d->mwmap);
	if ((node = rdmacore_map_find_locked(&d->mwmap, rkey)) != NULL) {
		((struct rdmacore_mw *)node->obj)->base.rkey = 0;
		rdmacore_map_remove_locked(&d->mwmap, node);
	}
	rdmacore_map_unlock(&d->mwmap);
}

/* Record the window's key after a bind (key != 0) or an unbind (key 0). */
static void mw_set_key(struct rdmacore_mw *w, uint32_t key)
{
	struct rdmacore_map *map = &rdmacore_device_of(w->base.pd->dev)->mwmap;

	rdmacore_map_wrlock(map);
	rdmacore_map_remove_locked(map, &w->node);
	w->base.rkey = key;
	w->node.key = key;
	if (key && rdmacore_map_insert_locked(map, &w->node) != 0)
		log_warn("window key 0x%x mapped twice", key);
	rdmacore_map_unlock(map);
}

/* The window's key now (0: unbound), read under the map's lock, which the
 * thread that takes a peer's Send with Invalidate writes it under. */
static uint32_t mw_key(struct rdmacore_mw *w)
{
	struct rdmacore_map *map = &rdmacore_device_of(w->base.pd->dev)->mwmap;
	uint32_t key;

	rdmacore_map_rdlock(map);
	key = w->base.rkey;
	rdmacore_map_unlock(map);
	return key;
}

/* Checks common to both window types; fills the ibv bind description. */
static int bind_info_of(struct vb_mw *mw, struct vb_mr *mr, void *addr, size_t len, unsigned access,
			struct ibv_mw_bind_info *bi)
{
	int flags, rc;

	memset(bi, 0, sizeof(*bi));
	if (len == 0)
		return 0;
	if (mr == NULL || mr->pd != mw->pd || addr == NULL)
		return -EINVAL;
	if (!(mr->access & VB_ACCESS_MW_BIND) || (char *)addr < (char *)mr->addr ||
	    len > mr->length || (size_t)((char *)addr - (char *)mr->addr) > mr->length - len)
		return -EINVAL;
	if ((rc = rdmacore_mw_access_to_ibv(access, &flags)) != 0)
		return rc;
	bi->mr = ((struct rdmacore_mr *)mr)->mr;
	bi->addr = (uint64_t)(uintptr_t)addr;
	bi->length = len;
	bi->mw_access_flags = flags;
	return 0;
}

/*
 * Type 2: a bound window (bound: its key, mw_key) must be invalidated before
 * it is bound again, so a rebind is LOCAL_INV + BIND_MW in one post; an
 * unbind is the LOCAL_INV alone. The key of a bind is the window's key with
 * the next 8-bit tag.
 */
static int bind_type2(struct ibv_qp *qp, struct rdmacore_mw *w, const struct ibv_mw_bind_info *bi,
		      uint32_t bound, uint64_t wr_id, int signaled)
{
	struct ibv_send_wr wr[2], *first = &wr[1], *bad;
	uint32_t key = bi->length ? ibv_inc_rkey(w->mw->rkey) : 0;
	int rc;

	memset(wr, 0, sizeof(wr));
	wr[0].opcode = IBV_WR_LOCAL_INV;
	wr[0].invalidate_rkey = w->mw->rkey;
	wr[0].wr_id = wr_id;
	if (bi->length == 0 || bound != 0) { /* unbind, or rebind of a bound window */
		first = &wr[0];
		wr[0].next = bi->length ? &wr[1] : NULL;
	}
	if (bi->length) {
		wr[1].wr_id = wr_id;
		wr[1].opcode = IBV_WR_BIND_MW;
		wr[1].bind_mw.mw = w->mw;
		wr[1].bind_mw.rkey = key;
		wr[1].bind_mw.bind_info = *bi;
	}
	(bi->length ? &wr[1] : &wr[0])->send_flags = signaled ? IBV_SEND_SIGNALED : 0;
	if ((rc = ibv_post_send(qp, first, &bad)) != 0)
		return -rc;
	if (bi->length) {
		w->mw->rkey = key;
		mw_set_key(w, key);
	}
	return 0;
}

/*
 * Type 1: ibv_bind_mw, which gives the window a fresh key. An unbind names the
 * MR of the current binding with length 0: librxe (rdma-core 44) reads the MR
 * of every bind and crashes on the NULL that ibv_bind_mw(3) allows.
 */
static int bind_type1(struct ibv_qp *qp, struct rdmacore_mw *w, struct ibv_mw_bind *b,
		      uint64_t wr_id, int signaled)
{
	int rc;

	b->wr_id = wr_id;
	b->send_flags = signaled ? IBV_SEND_SIGNALED : 0;
	if (b->bind_info.length == 0)
		b->bind_info.mr = w->bound_mr;
	if ((rc = ibv_bind_mw(qp, w->mw, b)) != 0)
		return -rc;
	if (b->bind_info.length)
		mw_set_key(w, w->mw->rkey);
	return 0;
}

/* Bind mw over [addr, addr+len) of mr with a fresh rkey, or unbind when len is 0. */
int rdmacore_bind_mw(struct vb_conn *conn, struct vb_mw *mw, struct vb_mr *mr, void *addr,
		     size_t len, unsigned access, uint64_t wr_id, int signaled)
{
	struct rdmacore_mw *w = (struct rdmacore_mw *)mw;
	struct ibv_qp *qp = rdmacore_conn_qp(conn);
	struct ibv_mw_bind b;
	uint32_t bound;
	int rc;

	if (qp == NULL || mw == NULL || mw->pd == NULL || mw->pd->dev != conn->dev)
		return -EINVAL;
	if ((rc = bind_info_of(mw, mr, addr, len, access, &b.bind_info)) != 0)
		return rc;
	bound = mw_key(w);
	if (len == 0 && bound == 0) {
		/* Unbound already (here, or by the peer's Send with Invalidate). Invalidating a
		 * free window is an error on hardware and oopses Linux 6.1 rxe: refuse it. */
		log_debug("window is not bound");
		return -EINVAL;
	}
	/* an unbind is recorded before its post: once it is posted, its
	 * completion may give the window to another bind on another thread */
	if (len == 0)
		mw_set_key(w, 0);
	if (w->mw->type == IBV_MW_TYPE_2)
		rc = bind_type2(qp, w, &b.bind_info, bound, wr_id, signaled);
	else
		rc = bind_type1(qp, w, &b, wr_id, signaled);
	if (rc && len == 0)
		mw_set_key(w, bound);
	else if (rc == 0 && len)
		w->bound_mr = b.bind_info.mr;
	return rc;
}
