/*
 * verbs_rdmacore_listen.c: listeners of the rdma-core provider. A connect
 * request becomes a conn of its own, on its own event channel, before the
 * caller sees it; requests that arrive through another device than the
 * listener's (possible when it listens on every address) are refused.
 */
#include <stdlib.h>
#include <string.h>

#include "common/base/log.h"
#include "verbs_rdmacore.h"

#define LISTEN_BACKLOG 128 /* when the caller passes 0 */

/* Bind id to the first address of host:port that takes it. */
static int bind_any(struct rdma_cm_id *id, const char *host, const char *port)
{
	struct addrinfo *ai, *p;
	int rc = -EADDRNOTAVAIL;

	if ((rc = rdmacore_lookup(host, port, 1, &ai)) != 0)
		return rc;
	for (p = ai; p; p = p->ai_next) {
		int afonly =
			0; /* "::" takes IPv4 too, as the server's sockets do (net_dual_stack) */

		if (p->ai_family == AF_INET6 &&
		    rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, &afonly,
				    sizeof(afonly)) != 0)
			log_warn("%s: cannot take IPv4 too (AFONLY): %s", host ? host : "*",
				 strerror(errno));
		if (rdma_bind_addr(id, p->ai_addr) == 0) {
			rc = 0;
			break;
		}
		rc = -errno;
	}
	freeaddrinfo(ai);
	return rc;
}

/* Passive side: listen on host:port (host NULL: every address of every device). */
int rdmacore_listen(struct vb_device *dev, const char *host, const char *port, int backlog,
		    struct vb_listener **out)
{
	struct rdmacore_listener *l;
	int rc;

	if ((rc = rdmacore_check_endpoint(dev, host, port, out)) != 0)
		return rc;
	if (backlog < 0)
		return -EINVAL;
	if ((l = calloc(1, sizeof(*l))) == NULL)
		return -ENOMEM;
	l->base.dev = dev;
	if ((rc = rdmacore_channel_new(&l->channel)) != 0)
		goto fail_free;
	if (rdma_create_id(l->channel, &l->id, l, RDMA_PS_TCP) != 0) {
		rc = -errno;
		goto fail_channel;
	}
	if ((rc = bind_any(l->id, host, port)) == 0 && l->id->verbs &&
	    l->id->verbs != rdmacore_device_of(dev)->ctx)
		rc = -EADDRNOTAVAIL; /* the address belongs to another device */
	if (rc == 0 && rdma_listen(l->id, backlog ? backlog : LISTEN_BACKLOG) != 0)
		rc = -errno;
	if (rc == 0) {
		*out = &l->base;
		return 0;
	}
	log_err("cannot listen on %s port %s of %s: %s", host ? host : "*", port, dev->name,
		strerror(-rc));
	rdma_destroy_id(l->id);
fail_channel:
	rdma_destroy_event_channel(l->channel);
fail_free:
	free(l);
	return rc;
}

/* The listener's event fd (non-blocking). */
int rdmacore_listener_fd(struct vb_listener *l)
{
	if (l == NULL || !rdmacore_is_ours(l->dev))
		return -EINVAL;
	return ((struct rdmacore_listener *)l)->channel->fd;
}

/* Refuse and drop a request we cannot hand out. */
static void drop_request(struct rdma_cm_id *id)
{
	rdma_reject(id, NULL, 0);
	rdma_destroy_id(id);
}

/* Turn a CONNECT_REQUEST (already copied into ev, event acked) into a conn of our own. */
static int adopt_request(struct rdmacore_listener *l, struct rdma_cm_id *id, struct vb_cm_event *ev)
{
	struct rdmacore_conn *c = NULL;
	int rc;

	if (id->verbs != rdmacore_device_of(l->base.dev)->ctx) {
		log_info("request through %s ignored: listening for %s",
			 ibv_get_device_name(id->verbs->device), l->base.dev->name);
		drop_request(id);
		return -EAGAIN;
	}
	if ((rc = rdmacore_conn_alloc(l->base.dev, &c)) == 0 &&
	    rdma_migrate_id(id, c->channel) != 0)
		rc = -errno;
	if (rc != 0) {
		char peer[VB_NAME_MAX];

		rdmacore_format_addr(rdma_get_peer_addr(id), peer, sizeof(peer));
		log_err("cannot take the connect request of %s: %s", peer, strerror(-rc));
		if (c)
			rdmacore_conn_free(c);
		drop_request(id);
		return -EAGAIN;
	}
	id->context = c;
	c->id = id;
	c->passive = 1;
	c->peer_ird = ev->responder_resources;
	c->peer_ord = ev->initiator_depth;
	rdmacore_set_peer(&c->base, rdma_get_peer_addr(id));
	ev->conn = &c->base;
	return 0;
}

/* Next CONNECT_REQUEST as a new, not yet accepted conn; -EAGAIN when none. */
int rdmacore_listener_get_event(struct vb_listener *vl, struct vb_cm_event *ev)
{
	struct rdmacore_listener *l = (struct rdmacore_listener *)vl;
	struct rdma_cm_event *e;
	struct rdma_cm_id *id;
	int rc;

	if (vl == NULL || !rdmacore_is_ours(vl->dev) || ev == NULL)
		return -EINVAL;
	for (;;) {
		if ((rc = rdmacore_next_event(l->channel, &e)) != 0)
			return rc;
		memset(ev, 0, sizeof(*ev));
		if (e->event == RDMA_CM_EVENT_DEVICE_REMOVAL) {
			rdma_ack_cm_event(e);
			ev->type = VB_CM_ERROR;
			ev->status = -ENODEV;
			return 0;
		}
		if (e->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
			log_debug("listener: %s ignored", rdma_event_str(e->event));
			rdma_ack_cm_event(e);
			continue;
		}
		ev->type = VB_CM_CONNECT_REQUEST;
		rdmacore_copy_private(&e->param.conn, ev);
		rdmacore_peer_rd_atom(&e->param.conn, ev);
		id = e->id;
		rdma_ack_cm_event(e); /* before migrating: rdma_migrate_id waits for acks */
		if ((rc = adopt_request(l, id, ev)) != -EAGAIN)
			return rc;
	}
}

/* Stop listening; requests not yet taken are refused by the kernel. */
int rdmacore_listener_destroy(struct vb_listener *vl)
{
	struct rdmacore_listener *l = (struct rdmacore_listener *)vl;

	if (vl == NULL || !rdmacore_is_ours(vl->dev))
		return -EINVAL;
	rdma_destroy_id(l->id);
	rdma_destroy_event_channel(l->channel);
	free(l);
	return 0;
}
