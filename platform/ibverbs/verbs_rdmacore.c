/*
 * verbs_rdmacore.c: the rdma-core provider (libibverbs + librdmacm): real
 * HCAs, Soft-RoCE (rxe) and soft-iWARP (siw). This file holds the ops table,
 * the device, protection domains, completion queues, memory regions and memory
 * windows; connections are in verbs_rdmacore_cm.c, the data path in
 * verbs_rdmacore_post.c.
 *
 * Devices are opened through rdma_get_devices(), not ibv_open_device(), so
 * that our ibv_context is the very one librdmacm attaches to rdma_cm ids:
 * PDs, CQs and MRs made here can then be used with the ids' QPs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/log.h"
#include "verbs_rdmacore.h"

/* Make fd non-blocking, as every fd we hand out must be. */
int rdmacore_set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

/* Find name (NULL: the first device) in librdmacm's list. */
static struct ibv_context *find_ctx(struct ibv_context **list, const char *name)
{
	for (int i = 0; list[i]; i++)
		if (name == NULL || strcmp(ibv_get_device_name(list[i]->device), name) == 0)
			return list[i];
	return NULL;
}

/* Open a device by name (NULL = first); -ENODEV, quietly, when there is none. */
static int rc_open(const char *name, struct vb_device **out)
{
	struct rdmacore_device *d;
	struct ibv_context **list;
	int n = 0, rc;

	if (out == NULL)
		return -EINVAL;
	*out = NULL;
	if (name && (name[0] == '\0' || strlen(name) >= VB_NAME_MAX))
		return -ENODEV;
	list = rdma_get_devices(&n);
	if (list == NULL)
		return -ENODEV; /* no RDMA stack or no device: not worth a message */
	if ((d = calloc(1, sizeof(*d))) == NULL) {
		rdma_free_devices(list);
		return -ENOMEM;
	}
	d->list = list;
	if ((d->ctx = find_ctx(list, name)) == NULL) {
		rc = -ENODEV;
		goto fail;
	}
	if ((rc = ibv_query_device(d->ctx, &d->attr)) != 0) {
		log_err("ibv_query_device(%s): %s", ibv_get_device_name(d->ctx->device),
			strerror(rc));
		rc = -rc;
		goto fail;
	}
	if ((rc = rdmacore_map_init(&d->qpmap)) != 0)
		goto fail;
	if ((rc = rdmacore_map_init(&d->mwmap)) != 0) {
		rdmacore_map_destroy(&d->qpmap);
		goto fail;
	}
	d->mw_type = rdmacore_mw_type(&d->attr);
	d->wc_inv_flags = rdmacore_wc_inv_flags(&d->attr);
	d->base.ops = &vb_rdmacore_ops;
	d->base.provider = vb_rdmacore_ops.name;
	snprintf(d->base.name, sizeof(d->base.name), "%s", ibv_get_device_name(d->ctx->device));
	*out = &d->base;
	return 0;
fail:
	rdma_free_devices(list);
	free(d);
	return rc;
}

/* Close a device; its objects must have been destroyed first. */
static void rc_close(struct vb_device *dev)
{
	struct rdmacore_device *d = rdmacore_device_of(dev);

	if (!rdmacore_is_ours(dev))
		return;
	rdmacore_map_destroy(&d->qpmap);
	rdmacore_map_destroy(&d->mwmap);
	rdma_free_devices(d->list);
	free(d);
}

/* Clamp a device limit into a uint8_t field. */
static uint8_t clamp_u8(int v)
{
	return v < 0 ? 0 : v > 255 ? 255 : (uint8_t)v;
}

/* Device limits, from the attributes read at open. */
static int rc_query_device(struct vb_device *dev, struct vb_device_attr *attr)
{
	struct rdmacore_device *d = rdmacore_device_of(dev);

	if (!rdmacore_is_ours(dev) || attr == NULL)
		return -EINVAL;
	memset(attr, 0, sizeof(*attr));
	attr->max_sge = (uint32_t)d->attr.max_sge;
	attr->max_qp_wr = (uint32_t)d->attr.max_qp_wr;
	attr->max_cqe = (uint32_t)d->attr.max_cqe;
	attr->max_mr_size = d->attr.max_mr_size;
	attr->max_qp_rd_atom = clamp_u8(d->attr.max_qp_rd_atom);
	attr->max_qp_init_rd_atom = clamp_u8(d->attr.max_qp_init_rd_atom);
	attr->has_mw = d->mw_type != 0;
	attr->has_send_inv = rdmacore_send_inv_ok(&d->attr);
	attr->mw_remote_inv = rdmacore_mw_remote_inv(d);
	return 0;
}

/* Allocate a protection domain on the device's (librdmacm-shared) context. */
static int rc_alloc_pd(struct vb_device *dev, struct vb_pd **out)
{
	struct rdmacore_pd *p;

	if (!rdmacore_is_ours(dev) || out == NULL)
		return -EINVAL;
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return -ENOMEM;
	if ((p->pd = ibv_alloc_pd(rdmacore_device_of(dev)->ctx)) == NULL) {
		int rc = errno ? -errno : -ENOMEM;

		log_err("ibv_alloc_pd(%s): %s", dev->name, strerror(-rc));
		free(p);
		return rc;
	}
	p->base.dev = dev;
	*out = &p->base;
	return 0;
}

/* Free a PD; -EBUSY while MRs, windows or QPs still use it. */
static int rc_dealloc_pd(struct vb_pd *pd)
{
	struct rdmacore_pd *p = (struct rdmacore_pd *)pd;
	int rc;

	if (pd == NULL || !rdmacore_is_ours(pd->dev))
		return -EINVAL;
	if ((rc = ibv_dealloc_pd(p->pd)) != 0)
		return -rc;
	free(p);
	return 0;
}

/* A CQ of at least cqe entries with its own completion channel, fd non-blocking. */
static int rc_create_cq(struct vb_device *dev, int cqe, struct vb_cq **out)
{
	struct rdmacore_device *d = rdmacore_device_of(dev);
	struct rdmacore_cq *c;
	int rc;

	if (!rdmacore_is_ours(dev) || out == NULL || cqe <= 0 || cqe > d->attr.max_cqe)
		return -EINVAL;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return -ENOMEM;
	if ((c->channel = ibv_create_comp_channel(d->ctx)) == NULL) {
		rc = errno ? -errno : -ENOMEM;
		goto fail;
	}
	if ((rc = rdmacore_set_nonblock(c->channel->fd)) != 0)
		goto fail;
	if ((c->cq = ibv_create_cq(d->ctx, cqe, c, c->channel, 0)) == NULL) {
		rc = errno ? -errno : -ENOMEM;
		goto fail;
	}
	c->base.dev = dev;
	*out = &c->base;
	return 0;
fail:
	log_err("cannot create a CQ of %d entries on %s: %s", cqe, dev->name, strerror(-rc));
	if (c->channel)
		ibv_destroy_comp_channel(c->channel);
	free(c);
	return rc;
}

/* Destroy a CQ and its channel; -EBUSY while a QP still uses it. */
static int rc_destroy_cq(struct vb_cq *cq)
{
	struct rdmacore_cq *c = (struct rdmacore_cq *)cq;
	int rc;

	if (cq == NULL || !rdmacore_is_ours(cq->dev))
		return -EINVAL;
	if ((rc = ibv_destroy_cq(c->cq)) != 0)
		return -rc;
	if ((rc = ibv_destroy_comp_channel(c->channel)) != 0)
		log_warn("ibv_destroy_comp_channel: %s", strerror(rc));
	free(c);
	return 0;
}

/* The completion channel's fd: readable once armed and a completion arrived. */
static int rc_cq_fd(struct vb_cq *cq)
{
	if (cq == NULL || !rdmacore_is_ours(cq->dev))
		return -EINVAL;
	return ((struct rdmacore_cq *)cq)->channel->fd;
}

/* Ask for one event on the next completion. */
static int rc_cq_arm(struct vb_cq *cq)
{
	if (cq == NULL || !rdmacore_is_ours(cq->dev))
		return -EINVAL;
	return -ibv_req_notify_cq(((struct rdmacore_cq *)cq)->cq, 0);
}

/* Consume (and acknowledge) one event; -EAGAIN when none is pending. */
static int rc_cq_ack(struct vb_cq *cq)
{
	struct rdmacore_cq *c = (struct rdmacore_cq *)cq;
	struct ibv_cq *ev_cq;
	void *ev_ctx;

	if (cq == NULL || !rdmacore_is_ours(cq->dev))
		return -EINVAL;
	if (ibv_get_cq_event(c->channel, &ev_cq, &ev_ctx) != 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : -errno;
	ibv_ack_cq_events(ev_cq, 1);
	return 0;
}

/* Register [addr, addr+len) with vb access rights. */
static int rc_reg_mr(struct vb_pd *pd, void *addr, size_t len, unsigned access, struct vb_mr **out)
{
	struct rdmacore_mr *m;
	int flags, rc;

	if (pd == NULL || !rdmacore_is_ours(pd->dev) || addr == NULL || len == 0 || out == NULL)
		return -EINVAL;
	if ((rc = rdmacore_access_to_ibv(access, &flags)) != 0)
		return rc;
	if ((m = calloc(1, sizeof(*m))) == NULL)
		return -ENOMEM;
	if ((m->mr = ibv_reg_mr(((struct rdmacore_pd *)pd)->pd, addr, len, flags)) == NULL) {
		rc = errno ? -errno : -ENOMEM;
		log_err("ibv_reg_mr(%zu bytes, access 0x%x): %s", len, access, strerror(-rc));
		free(m);
		return rc;
	}
	m->base.pd = pd;
	m->base.addr = addr;
	m->base.length = len;
	m->base.lkey = m->mr->lkey;
	m->base.rkey = (access & VB_ACCESS_REMOTE) ? m->mr->rkey : 0;
	m->base.access = access;
	*out = &m->base;
	return 0;
}

/* Deregister; -EBUSY while windows are bound to it. */
static int rc_dereg_mr(struct vb_mr *mr)
{
	struct rdmacore_mr *m = (struct rdmacore_mr *)mr;
	int rc;

	if (mr == NULL || mr->pd == NULL || !rdmacore_is_ours(mr->pd->dev))
		return -EINVAL;
	if ((rc = ibv_dereg_mr(m->mr)) != 0)
		return -rc;
	free(m);
	return 0;
}

const struct vb_ops vb_rdmacore_ops = {
	.name = "rdma-core",
	.open = rc_open,
	.close = rc_close,
	.query_device = rc_query_device,
	.alloc_pd = rc_alloc_pd,
	.dealloc_pd = rc_dealloc_pd,
	.create_cq = rc_create_cq,
	.destroy_cq = rc_destroy_cq,
	.cq_fd = rc_cq_fd,
	.cq_arm = rc_cq_arm,
	.cq_ack = rc_cq_ack,
	.poll_cq = rdmacore_poll_cq,
	.reg_mr = rc_reg_mr,
	.dereg_mr = rc_dereg_mr,
	RDMACORE_WINDOW_OPS,
	.listen = rdmacore_listen,
	.listener_fd = rdmacore_listener_fd,
	.listener_get_event = rdmacore_listener_get_event,
	.listener_destroy = rdmacore_listener_destroy,
	.resolve = rdmacore_resolve,
	.create_qp = rdmacore_create_qp,
	.connect = rdmacore_connect,
	.accept = rdmacore_accept,
	.reject = rdmacore_reject,
	.disconnect = rdmacore_disconnect,
	.conn_fd = rdmacore_conn_fd,
	.conn_get_event = rdmacore_conn_get_event,
	.conn_destroy = rdmacore_conn_destroy,
	.post_send = rdmacore_post_send,
	.post_recv = rdmacore_post_recv,
};
