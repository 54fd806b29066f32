/*
 * verbs_rdmacore_cm.c: connections of the rdma-core provider, over the RDMA
 * connection manager (librdmacm): resolve, QP, connect, accept, reject,
 * disconnect, destroy. Each conn has its own event channel (a conn taken from
 * a listener is moved onto one with rdma_migrate_id), so a caller can wait on
 * one conn's fd alone; events are read in verbs_rdmacore_event.c.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/base/log.h"
#include "verbs_rdmacore.h"

#define RESOLVE_TIMEOUT_MS   5000 /* when the caller passes 0 */
#define CONN_RETRY_COUNT     7	  /* transport retries before RETRY_EXC_ERR */
#define CONN_RNR_RETRY_COUNT 6	  /* finite (7 means forever): RNR_RETRY_EXC_ERR */
#define CONN_MIN_RNR_TIMER   28	  /* 245.76 ms: a Send waits ~1.5 s for a Receive */

/* "addr:port" (or "[addr]:port") of sa, for logs and vb_conn.peer. */
void rdmacore_set_peer(struct vb_conn *c, const struct sockaddr *sa)
{
	socklen_t len = sa->sa_family == AF_INET6  ? sizeof(struct sockaddr_in6)
			: sa->sa_family == AF_INET ? sizeof(struct sockaddr_in)
						   : 0;

	rdmacore_format_addr(sa, c->peer, sizeof(c->peer));
	memcpy(&c->peer_addr, sa, len);
	c->peer_addr_len = len;
}

void rdmacore_format_addr(const struct sockaddr *sa, char *buf, size_t len)
{
	char host[NI_MAXHOST], serv[NI_MAXSERV];
	socklen_t salen = sa && sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
							  : sizeof(struct sockaddr_in);

	if (sa == NULL || getnameinfo(sa, salen, host, sizeof(host), serv, sizeof(serv),
				      NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
		snprintf(buf, len, "?");
		return;
	}
	snprintf(buf, len, sa->sa_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, serv);
}

/* getaddrinfo for host:port; logs and returns -EADDRNOTAVAIL when it fails. */
int rdmacore_lookup(const char *host, const char *port, int passive, struct addrinfo **res)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
	int rc;

	hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
	if ((rc = getaddrinfo(host, port, &hints, res)) != 0) {
		log_err("cannot resolve %s port %s: %s", host ? host : "*", port, gai_strerror(rc));
		return -EADDRNOTAVAIL;
	}
	return 0;
}

/* Checks shared by listen and resolve: ours, a port, and no AF_UNIX. */
int rdmacore_check_endpoint(struct vb_device *dev, const char *host, const char *port, void *out)
{
	if (!rdmacore_is_ours(dev) || port == NULL || *port == '\0' || out == NULL)
		return -EINVAL;
	if (host && strncmp(host, "unix:", 5) == 0) {
		log_err("%s: the rdma-core provider has no AF_UNIX endpoints", host);
		return -EAFNOSUPPORT;
	}
	return 0;
}

/* A new event channel with a non-blocking fd. */
int rdmacore_channel_new(struct rdma_event_channel **out)
{
	int rc;

	if ((*out = rdma_create_event_channel()) == NULL)
		return errno ? -errno : -ENODEV;
	if ((rc = rdmacore_set_nonblock((*out)->fd)) != 0) {
		rdma_destroy_event_channel(*out);
		*out = NULL;
	}
	return rc;
}

/* Next event from ch: 0, -EAGAIN when none is waiting, or -errno. */
int rdmacore_next_event(struct rdma_event_channel *ch, struct rdma_cm_event **e)
{
	if (rdma_get_cm_event(ch, e) == 0)
		return 0;
	return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : -errno;
}

/* ---------------------------------------------------------------- conns */

/* The conn's fd: an epoll set over its rdma_cm channel and its wake eventfd. */
static int conn_fds(struct rdmacore_conn *c)
{
	struct epoll_event ev = {.events = EPOLLIN};

	if ((c->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0 ||
	    (c->ep_fd = epoll_create1(EPOLL_CLOEXEC)) < 0)
		return -errno;
	if (epoll_ctl(c->ep_fd, EPOLL_CTL_ADD, c->channel->fd, &ev) != 0 ||
	    epoll_ctl(c->ep_fd, EPOLL_CTL_ADD, c->wake_fd, &ev) != 0)
		return -errno;
	return 0;
}

/* A conn shell on dev with its own channel and fds; the id is added by the caller. */
int rdmacore_conn_alloc(struct vb_device *dev, struct rdmacore_conn **out)
{
	struct rdmacore_conn *c = calloc(1, sizeof(*c));
	int rc;

	if (c == NULL)
		return -ENOMEM;
	c->wake_fd = c->ep_fd = -1;
	if ((rc = rdmacore_channel_new(&c->channel)) != 0) {
		free(c);
		return rc;
	}
	if ((rc = conn_fds(c)) != 0) {
		rdmacore_conn_free(c);
		return rc;
	}
	c->base.dev = dev;
	snprintf(c->base.peer, sizeof(c->base.peer), "?");
	*out = c;
	return 0;
}

/* Undo rdmacore_conn_alloc (and the id, if one was attached). */
void rdmacore_conn_free(struct rdmacore_conn *c)
{
	if (c->id)
		rdma_destroy_id(c->id);
	if (c->ep_fd >= 0)
		close(c->ep_fd);
	if (c->wake_fd >= 0)
		close(c->wake_fd);
	rdma_destroy_event_channel(c->channel);
	free(c);
}

/* Wait up to timeout_ms for the next event on c and expect `want`. */
static int wait_for(struct rdmacore_conn *c, enum rdma_cm_event_type want, int timeout_ms)
{
	struct pollfd pfd = {.fd = c->channel->fd, .events = POLLIN};
	struct rdma_cm_event *e;
	int rc, status;

	/* The kernel times the resolution out itself; our margin only guards a lost event. */
	while ((rc = rdmacore_next_event(c->channel, &e)) == -EAGAIN) {
		int p = poll(&pfd, 1, timeout_ms + 1000);

		if (p == 0)
			return -ETIMEDOUT;
		if (p < 0 && errno != EINTR)
			return -errno;
	}
	if (rc)
		return rc;
	rc = e->event == want ? 0 : e->status < 0 ? e->status : -EHOSTUNREACH;
	status = e->status;
	if (rc)
		log_info("%s: %s (status %d)", c->base.peer, rdma_event_str(e->event), status);
	rdma_ack_cm_event(e);
	return rc;
}

/* Resolve address and route of host:port through c's id. */
static int resolve_route(struct rdmacore_conn *c, const char *host, const char *port,
			 int timeout_ms)
{
	struct addrinfo *ai;
	int rc;

	if ((rc = rdmacore_lookup(host, port, 0, &ai)) != 0)
		return rc;
	rdmacore_set_peer(&c->base, ai->ai_addr);
	rc = rdma_resolve_addr(c->id, NULL, ai->ai_addr, timeout_ms) ? -errno : 0;
	freeaddrinfo(ai);
	if (rc == 0)
		rc = wait_for(c, RDMA_CM_EVENT_ADDR_RESOLVED, timeout_ms);
	if (rc == 0)
		rc = rdma_resolve_route(c->id, timeout_ms) ? -errno : 0;
	if (rc == 0)
		rc = wait_for(c, RDMA_CM_EVENT_ROUTE_RESOLVED, timeout_ms);
	return rc;
}

/* Active side: a conn bound to dev with a route to host:port (blocks up to timeout_ms). */
int rdmacore_resolve(struct vb_device *dev, const char *host, const char *port, int timeout_ms,
		     struct vb_conn **out)
{
	struct rdmacore_conn *c;
	int rc;

	if ((rc = rdmacore_check_endpoint(dev, host, port, out)) != 0 || host == NULL)
		return rc ? rc : -EINVAL;
	if (timeout_ms <= 0)
		timeout_ms = RESOLVE_TIMEOUT_MS;
	if ((rc = rdmacore_conn_alloc(dev, &c)) != 0)
		return rc;
	if (rdma_create_id(c->channel, &c->id, c, RDMA_PS_TCP) != 0) {
		rc = -errno;
		goto fail;
	}
	if ((rc = resolve_route(c, host, port, timeout_ms)) != 0)
		goto fail;
	if (c->id->verbs != rdmacore_device_of(dev)->ctx) {
		log_err("%s is reached through %s, not %s", c->base.peer,
			ibv_get_device_name(c->id->verbs->device), dev->name);
		rc = -ENXIO;
		goto fail;
	}
	*out = &c->base;
	return 0;
fail:
	log_info("cannot reach %s:%s on %s: %s", host, port, dev->name, strerror(-rc));
	rdmacore_conn_free(c);
	return rc;
}

/* The PD and CQs must be ours and on the conn's device. */
static int check_qp_args(struct vb_conn *conn, struct vb_pd *pd, struct vb_cq *scq,
			 struct vb_cq *rcq, const struct vb_qp_cap *cap)
{
	if (conn == NULL || !rdmacore_is_ours(conn->dev) || pd == NULL || scq == NULL ||
	    rcq == NULL || cap == NULL)
		return -EINVAL;
	if (pd->dev != conn->dev || scq->dev != conn->dev || rcq->dev != conn->dev)
		return -EINVAL;
	if (rdmacore_conn_of(conn)->qp)
		return -EEXIST;
	return 0;
}

/* Create the conn's RC QP with the given caps and map its number to the conn. */
int rdmacore_create_qp(struct vb_conn *conn, struct vb_pd *pd, struct vb_cq *send_cq,
		       struct vb_cq *recv_cq, const struct vb_qp_cap *cap)
{
	struct rdmacore_conn *c = rdmacore_conn_of(conn);
	struct ibv_qp_init_attr a = {.qp_type = IBV_QPT_RC};
	int rc;

	if ((rc = check_qp_args(conn, pd, send_cq, recv_cq, cap)) != 0)
		return rc;
	a.qp_context = c;
	a.send_cq = ((struct rdmacore_cq *)send_cq)->cq;
	a.recv_cq = ((struct rdmacore_cq *)recv_cq)->cq;
	a.cap = (struct ibv_qp_cap){cap->max_send_wr, cap->max_recv_wr, cap->max_send_sge,
				    cap->max_recv_sge, cap->max_inline_data};
	if (rdma_create_qp(c->id, ((struct rdmacore_pd *)pd)->pd, &a) != 0) {
		rc = errno ? -errno : -ENOMEM;
		log_err("%s: cannot create a QP (send %u, recv %u, sge %u/%u, inline %u): %s",
			conn->peer, cap->max_send_wr, cap->max_recv_wr, cap->max_send_sge,
			cap->max_recv_sge, cap->max_inline_data, strerror(-rc));
		return rc;
	}
	c->qp = c->id->qp;
	c->node.key = c->qp->qp_num;
	c->node.obj = conn;
	if ((rc = rdmacore_map_insert(&rdmacore_device_of(conn->dev)->qpmap, &c->node)) != 0) {
		rdma_destroy_qp(c->id);
		c->qp = NULL;
		return rc;
	}
	conn->pd = pd;
	conn->send_cq = send_cq;
	conn->recv_cq = recv_cq;
	return 0;
}

/* Connection parameters: private data checked, IRD/ORD defaulted and capped. */
static int conn_param_of(struct rdmacore_conn *c, const struct vb_conn_param *in,
			 struct rdma_conn_param *out)
{
	const struct ibv_device_attr *a = &rdmacore_device_of(c->base.dev)->attr;
	uint8_t ird = in && in->responder_resources ? in->responder_resources : VB_DEFAULT_RD_ATOM;
	uint8_t ord = in && in->initiator_depth ? in->initiator_depth : VB_DEFAULT_RD_ATOM;

	if (in && (in->private_data_len > VB_MAX_PRIVATE_DATA ||
		   (in->private_data_len && in->private_data == NULL)))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->private_data = in ? in->private_data : NULL;
	out->private_data_len = in ? in->private_data_len : 0;
	out->responder_resources = ird < a->max_qp_rd_atom ? ird : (uint8_t)a->max_qp_rd_atom;
	out->initiator_depth = ord < a->max_qp_init_rd_atom ? ord : (uint8_t)a->max_qp_init_rd_atom;
	out->flow_control = 1;
	out->retry_count = CONN_RETRY_COUNT;
	out->rnr_retry_count = CONN_RNR_RETRY_COUNT;
	return 0;
}

/* A conn with a QP, ready for connect (active) or accept/reject (passive). */
static struct rdmacore_conn *conn_with_qp(struct vb_conn *conn)
{
	if (conn == NULL || !rdmacore_is_ours(conn->dev) || rdmacore_conn_of(conn)->qp == NULL)
		return NULL;
	return rdmacore_conn_of(conn);
}

/* Active side: send the connect request; ESTABLISHED or REJECTED follows on conn_fd. */
int rdmacore_connect(struct vb_conn *conn, const struct vb_conn_param *param)
{
	struct rdmacore_conn *c = conn_with_qp(conn);
	struct rdma_conn_param p;
	int rc;

	if (c == NULL || c->passive)
		return -EINVAL;
	if ((rc = conn_param_of(c, param, &p)) != 0)
		return rc;
	if (rdma_connect(c->id, &p) != 0) {
		rc = -errno;
		log_err("%s: rdma_connect: %s", conn->peer, strerror(-rc));
		return rc;
	}
	return 0;
}

/*
 * How long a peer's Send waits when we have no Receive posted: rdma_cm leaves
 * the responder's RNR timer at a fraction of a millisecond, so six retries
 * would give up at once; RTS -> RTS may change it.
 */
void rdmacore_set_rnr_timer(struct rdmacore_conn *c)
{
	struct ibv_qp_attr attr = {.min_rnr_timer = CONN_MIN_RNR_TIMER};
	int rc;

	if (c->qp && (rc = ibv_modify_qp(c->qp, &attr, IBV_QP_MIN_RNR_TIMER)) != 0)
		log_warn("%s: cannot set the RNR timer: %s", c->base.peer, strerror(rc));
}

/* Passive side: accept; our ORD (IRD) never exceeds the peer's IRD (ORD). */
int rdmacore_accept(struct vb_conn *conn, const struct vb_conn_param *param)
{
	struct rdmacore_conn *c = conn_with_qp(conn);
	struct rdma_conn_param p;
	int rc;

	if (c == NULL || !c->passive)
		return -EINVAL;
	if ((rc = conn_param_of(c, param, &p)) != 0)
		return rc;
	if (p.initiator_depth > c->peer_ird)
		p.initiator_depth = c->peer_ird;
	if (p.responder_resources > c->peer_ord)
		p.responder_resources = c->peer_ord;
	if (rdma_accept(c->id, &p) != 0) {
		rc = -errno;
		log_err("%s: rdma_accept: %s", conn->peer, strerror(-rc));
		return rc;
	}
	rdmacore_set_rnr_timer(c); /* the QP is in RTS now */
	return 0;
}

/* Passive side: refuse the request, with private data for the peer. */
int rdmacore_reject(struct vb_conn *conn, const void *private_data, uint8_t len)
{
	struct rdmacore_conn *c = rdmacore_conn_of(conn);

	if (conn == NULL || !rdmacore_is_ours(conn->dev) || !c->passive ||
	    len > VB_MAX_PRIVATE_DATA || (len && private_data == NULL))
		return -EINVAL;
	if (rdma_reject(c->id, private_data, len) != 0)
		return -errno;
	return 0;
}

/*
 * Start an orderly disconnect; the QP goes to error, so posted work flushes.
 * DISCONNECTED is reported on this side at once (see verbs_rdmacore_event.c):
 * the IB CM would report it only when the peer answers or the request times out.
 */
int rdmacore_disconnect(struct vb_conn *conn)
{
	struct rdmacore_conn *c = rdmacore_conn_of(conn);
	int none = RDMACORE_DISC_NONE;
	uint64_t one = 1;

	if (conn == NULL || !rdmacore_is_ours(conn->dev))
		return -EINVAL;
	if (__atomic_load_n(&c->disc, __ATOMIC_ACQUIRE) != RDMACORE_DISC_NONE)
		return 0; /* we or the peer did already */
	if (rdma_disconnect(c->id) != 0)
		return -errno;
	if (__atomic_compare_exchange_n(&c->disc, &none, RDMACORE_DISC_PENDING, 0, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE) &&
	    write(c->wake_fd, &one, sizeof(one)) != sizeof(one))
		log_warn("%s: cannot wake the event fd: %s", conn->peer, strerror(errno));
	return 0;
}

/* The conn's own event fd (non-blocking): readable when conn_get_event has an event. */
int rdmacore_conn_fd(struct vb_conn *conn)
{
	if (conn == NULL || !rdmacore_is_ours(conn->dev))
		return -EINVAL;
	return rdmacore_conn_of(conn)->ep_fd;
}

/* Flush and destroy the QP, then the id and the channel. */
int rdmacore_conn_destroy(struct vb_conn *conn)
{
	struct rdmacore_conn *c = rdmacore_conn_of(conn);

	if (conn == NULL || !rdmacore_is_ours(conn->dev))
		return -EINVAL;
	if (c->qp) {
		struct ibv_qp_attr attr = {.qp_state = IBV_QPS_ERR};

		/* Unmapped first: completions flushed from here on carry conn == NULL. */
		rdmacore_map_remove(&rdmacore_device_of(conn->dev)->qpmap, &c->node);
		ibv_modify_qp(c->qp, &attr, IBV_QP_STATE);
		rdma_destroy_qp(c->id);
		c->qp = NULL;
	}
	rdmacore_conn_free(c);
	return 0;
}
