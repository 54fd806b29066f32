/*
 * verbs_rdmacore_event.c: a conn's rdma_cm events as vb_cm_events. Every
 * event is copied and acknowledged at once, which keeps rdma_destroy_id from
 * waiting on us.
 *
 * Disconnects follow the IB CM: the side that receives the DREQ must answer
 * it (we do, when its DISCONNECTED is read), and the side that sent it hears
 * DISCONNECTED only on that answer or a timeout. So that a conn that
 * disconnects itself is told at once, as on every provider, rdmacore_disconnect
 * marks a DISCONNECTED pending and wakes the conn's fd (an epoll set over the
 * channel and an eventfd); it is reported after what the channel already
 * holds, and the CM's own DISCONNECTED is dropped later.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/base/log.h"
#include "verbs_rdmacore.h"

#define IB_CM_REJ_CONSUMER_DEFINED 28 /* IBTA reject reason: the peer's rdma_reject */

/*
 * The peer's IRD and ORD from an event. rdma_cm states them from the receiver's
 * side (responder_resources: what we should offer = the peer's ORD), vb_cm_event
 * states the peer's own values: swap.
 */
void rdmacore_peer_rd_atom(const struct rdma_conn_param *p, struct vb_cm_event *ev)
{
	ev->responder_resources = p->initiator_depth;
	ev->initiator_depth = p->responder_resources;
}

/* Copy an event's private data (at most VB_MAX_PRIVATE_DATA bytes). */
void rdmacore_copy_private(const struct rdma_conn_param *p, struct vb_cm_event *ev)
{
	size_t n = p->private_data ? p->private_data_len : 0;

	if (n > VB_MAX_PRIVATE_DATA)
		n = VB_MAX_PRIVATE_DATA; /* IB pads REQ to 56, REP to 196 bytes: keep ours */
	if (n)
		memcpy(ev->private_data, p->private_data, n);
	ev->private_data_len = (uint8_t)n;
}

/* After ESTABLISHED: the negotiated IRD/ORD, as the QP really has them. */
static void read_rd_atom(struct rdmacore_conn *c)
{
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;

	if (c->qp && ibv_query_qp(c->qp, &attr, IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC,
				  &init) == 0) {
		c->base.ord = attr.max_rd_atomic;
		c->base.ird = attr.max_dest_rd_atomic;
	}
}

/* A reject the peer's application sent (rather than "nobody listens there")? */
static int is_consumer_reject(const struct rdmacore_conn *c, const struct rdma_cm_event *e)
{
	if (c->id->verbs && c->id->verbs->device->transport_type == IBV_TRANSPORT_IWARP)
		return e->status == -ECONNREFUSED && e->param.conn.private_data_len > 0;
	return e->status == IB_CM_REJ_CONSUMER_DEFINED;
}

/* ESTABLISHED: the peer's private data and IRD/ORD; ours from the QP. */
static void established(struct rdmacore_conn *c, const struct rdma_cm_event *e,
			struct vb_cm_event *ev)
{
	rdmacore_copy_private(&e->param.conn, ev);
	rdmacore_peer_rd_atom(&e->param.conn, ev);
	if (c->passive) { /* the RTU carries none: repeat the request's */
		ev->responder_resources = c->peer_ird;
		ev->initiator_depth = c->peer_ord;
	} else {
		rdmacore_set_rnr_timer(c); /* librdmacm moved the QP to RTS on the reply */
	}
	read_rd_atom(c);
}

/* DISCONNECTED from the CM: report it once, and answer the peer's DREQ. */
static int disconnected(struct rdmacore_conn *c)
{
	if (__atomic_exchange_n(&c->disc, RDMACORE_DISC_REPORTED, __ATOMIC_ACQ_REL) ==
	    RDMACORE_DISC_REPORTED)
		return 0; /* ours, reported when we disconnected */
	if (rdma_disconnect(c->id) != 0 && errno != EINVAL)
		log_debug("%s: answering the disconnect: %s", c->base.peer, strerror(errno));
	return 1;
}

/* rdma_cm event -> vb event type + 1; 0: not reported (TIMEWAIT_EXIT, ADDR_CHANGE...). */
static const unsigned char conn_event_map[] = {
	[RDMA_CM_EVENT_ESTABLISHED] = VB_CM_ESTABLISHED + 1,
	[RDMA_CM_EVENT_REJECTED] = VB_CM_REJECTED + 1,
	[RDMA_CM_EVENT_ADDR_ERROR] = VB_CM_UNREACHABLE + 1,
	[RDMA_CM_EVENT_ROUTE_ERROR] = VB_CM_UNREACHABLE + 1,
	[RDMA_CM_EVENT_CONNECT_ERROR] = VB_CM_UNREACHABLE + 1,
	[RDMA_CM_EVENT_UNREACHABLE] = VB_CM_UNREACHABLE + 1,
	[RDMA_CM_EVENT_DISCONNECTED] = VB_CM_DISCONNECTED + 1,
	[RDMA_CM_EVENT_DEVICE_REMOVAL] = VB_CM_ERROR + 1,
};

/* Fill ev from a conn's rdma_cm event; returns 0 when the event is not reported. */
static int conn_event(struct rdmacore_conn *c, const struct rdma_cm_event *e,
		      struct vb_cm_event *ev)
{
	unsigned t = (unsigned)e->event;

	log_debug("%s: %s (status %d)", c->base.peer, rdma_event_str(e->event), e->status);
	if (t >= sizeof(conn_event_map) || conn_event_map[t] == 0)
		return 0;
	memset(ev, 0, sizeof(*ev));
	ev->type = (enum vb_cm_event_type)(conn_event_map[t] - 1);
	ev->conn = &c->base;
	switch (ev->type) {
	case VB_CM_ESTABLISHED:
		established(c, e, ev);
		break;
	case VB_CM_REJECTED:
		ev->status = -ECONNREFUSED;
		if (is_consumer_reject(c, e))
			rdmacore_copy_private(&e->param.conn, ev);
		else
			ev->type = VB_CM_UNREACHABLE; /* no listener, or a stale connection */
		break;
	case VB_CM_DISCONNECTED:
		return disconnected(c);
	case VB_CM_ERROR:
		ev->status = -ENODEV;
		break;
	default: /* UNREACHABLE */
		ev->status = e->status < 0 ? e->status : -EHOSTUNREACH;
		break;
	}
	return 1;
}

/* The DISCONNECTED that rdmacore_disconnect left pending, if any: 1 when ev holds it. */
static int pending_disconnect(struct rdmacore_conn *c, struct vb_cm_event *ev)
{
	int pending = RDMACORE_DISC_PENDING;
	uint64_t n;

	if (read(c->wake_fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		log_debug("%s: reading the wake fd: %s", c->base.peer, strerror(errno));
	if (!__atomic_compare_exchange_n(&c->disc, &pending, RDMACORE_DISC_REPORTED, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return 0;
	memset(ev, 0, sizeof(*ev));
	ev->type = VB_CM_DISCONNECTED;
	ev->conn = &c->base;
	return 1;
}

/* Next reportable event of the conn, or -EAGAIN. */
int rdmacore_conn_get_event(struct vb_conn *conn, struct vb_cm_event *ev)
{
	struct rdmacore_conn *c = rdmacore_conn_of(conn);
	struct rdma_cm_event *e;
	int rc, got;

	if (conn == NULL || !rdmacore_is_ours(conn->dev) || ev == NULL)
		return -EINVAL;
	do {
		if ((rc = rdmacore_next_event(c->channel, &e)) != 0)
			return rc == -EAGAIN && pending_disconnect(c, ev) ? 0 : rc;
		got = conn_event(c, e, ev);
		rdma_ack_cm_event(e);
	} while (!got);
	return 0;
}
