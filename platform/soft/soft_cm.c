/*
 * soft_cm.c: the connection manager: resolve/connect/accept/reject/
 * disconnect, connection events and teardown (listeners: soft_listen.c).
 *
 * Handshake: the active side connects the socket and sends HELLO (private
 * data, its IRD and ORD); the passive side raises CONNECT_REQUEST; accept
 * sends ACCEPT (private data, IRD, ORD) and makes the QP usable at once;
 * reject sends REJECT (private data) and half-closes. On ACCEPT the active
 * side is ESTABLISHED and sends RTU; on RTU the passive side is ESTABLISHED.
 * Each side's ORD is min(its own ORD, the peer's IRD) and its IRD
 * min(its own IRD, the peer's ORD), so neither can exceed the other.
 * Disconnect (or EOF, or a socket error) flushes the QP and raises
 * DISCONNECTED; the socket is half-closed so the peer sees it too.
 */
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/base/log.h"
#include "soft.h"

/* A fresh, unconnected conn with its event fd, rings and staging buffer. */
struct soft_conn *soft_conn_new(struct soft_device *dev)
{
	struct soft_conn *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->fd = -1;
	c->cma_pidfd = -1;
	c->tx = calloc(SOFT_TX_RING, sizeof(*c->tx));
	c->resp = calloc(SOFT_MAX_RD_ATOM, sizeof(*c->resp));
	if (wakefd_open(&c->ev, true) != 0 || c->tx == NULL || c->resp == NULL ||
	    soft_rx_init(&c->rx) != 0) {
		wakefd_close(&c->ev);
		free(c->rx.buf);
		free(c->tx);
		free(c->resp);
		free(c);
		return NULL;
	}
	pthread_mutex_init(&c->lock, NULL);
	c->po.type = SOFT_POLL_CONN;
	c->cpo.type = SOFT_POLL_CONN;
	c->dev = dev;
	c->base.dev = &dev->base;
	c->acked_seq = (uint32_t)-1;
	soft_list_init(&c->lnode);
	soft_list_init(&c->ready_node);
	soft_list_init(&c->timer_node);
	return c;
}

/* Release everything a conn holds; the engine must have forgotten it. */
void soft_conn_free(struct soft_conn *c)
{
	soft_tx_drop(c, false);
	soft_rx_fini(c);
	soft_qp_free(c);
	if (c->fd >= 0)
		close(c->fd);
	if (c->cma_pidfd >= 0)
		close(c->cma_pidfd);
	soft_cma_release(c);
	wakefd_close(&c->ev);
	free(c->tx);
	free(c->resp);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* Non-blocking, no Nagle, big buffers: what a connection socket needs. TCP's
 * own buffer autotuning is the default; AF_UNIX has none, so it gets 4 MiB. */
void soft_tune_socket(struct soft_device *dev, int fd, int family)
{
	int one = 1, buf = dev->sockbuf;

	if (buf == 0 && family == AF_UNIX)
		buf = 4 << 20;

	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	if (family != AF_UNIX)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (buf > 0) {
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	}
}

/* "host:port" (or "unix:/path") of a socket address, for logs (truncated to fit). */
void soft_addr_name(const struct sockaddr *sa, socklen_t len, char *out, size_t n)
{
	char host[NI_MAXHOST], port[NI_MAXSERV];
	int w;

	if (sa->sa_family == AF_UNIX)
		w = snprintf(out, n, SOFT_UNIX_PREFIX "%s",
			     ((const struct sockaddr_un *)sa)->sun_path);
	else if (getnameinfo(sa, len, host, sizeof(host), port, sizeof(port),
			     NI_NUMERICHOST | NI_NUMERICSERV) == 0)
		w = snprintf(out, n, "%s:%s", host, port);
	else
		w = snprintf(out, n, "?");
	if (w < 0)
		out[0] = '\0';
}

/* Fill a sockaddr_un from "unix:/path"; -ENAMETOOLONG if it does not fit. */
int soft_unix_addr(const char *host, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_un *un = (struct sockaddr_un *)ss;
	const char *path = host + strlen(SOFT_UNIX_PREFIX);

	if (*path == '\0' || strlen(path) >= sizeof(un->sun_path)) {
		log_err("bad AF_UNIX address '%s'", host);
		return -ENAMETOOLONG;
	}
	memset(ss, 0, sizeof(*ss));
	un->sun_family = AF_UNIX;
	strcpy(un->sun_path, path);
	*len = sizeof(*un);
	return 0;
}

/* Queue a CM event and make the conn fd readable (conn->lock held). */
void soft_conn_event(struct soft_conn *c, enum vb_cm_event_type type, int status,
		     const uint8_t *pdata, uint8_t len)
{
	struct vb_cm_event *ev;

	if (c->ev_count == sizeof(c->evq) / sizeof(c->evq[0])) {
		log_err("%s: event queue full, %s lost", c->base.peer, vb_cm_event_str(type));
		return;
	}
	ev = &c->evq[(c->ev_head + c->ev_count++) % 4];
	memset(ev, 0, sizeof(*ev));
	ev->type = type;
	ev->status = status;
	ev->conn = &c->base;
	ev->responder_resources = c->req.responder_resources;
	ev->initiator_depth = c->req.initiator_depth;
	if (pdata && len) {
		memcpy(ev->private_data, pdata, len);
		ev->private_data_len = len;
	}
	if (wakefd_post(&c->ev) != 0)
		log_err("conn event: cannot post");
}

/* ---- active side ---- */

int soft_resolve(struct vb_device *dev, const char *host, const char *port, int timeout_ms,
		 struct vb_conn **out)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res;
	struct soft_conn *c;
	int err;

	if (host == NULL) {
		log_err("resolve needs a host");
		return -EINVAL;
	}
	if ((c = soft_conn_new(soft_dev(dev))) == NULL)
		return -ENOMEM;
	if (strncmp(host, SOFT_UNIX_PREFIX, strlen(SOFT_UNIX_PREFIX)) == 0) {
		if ((err = soft_unix_addr(host, &c->sa, &c->salen)) != 0) {
			soft_conn_free(c);
			return err;
		}
	} else if (port == NULL || (err = getaddrinfo(host, port, &hints, &res)) != 0) {
		log_err("cannot resolve %s:%s: %s", host, port ? port : "(no port)",
			port ? gai_strerror(err) : "a port is needed");
		soft_conn_free(c);
		return -EHOSTUNREACH;
	} else {
		memcpy(&c->sa, res->ai_addr, res->ai_addrlen);
		c->salen = res->ai_addrlen;
		freeaddrinfo(res);
	}
	soft_addr_name((struct sockaddr *)&c->sa, c->salen, c->base.peer, sizeof(c->base.peer));
	memcpy(&c->base.peer_addr, &c->sa, c->salen);
	c->base.peer_addr_len = c->salen;
	c->active = true;
	c->timeout_ms = timeout_ms > 0 ? timeout_ms : 10000;
	*out = &c->base;
	return 0;
}

/* Our IRD/ORD and private data for the handshake, from param. */
static int set_param(struct soft_conn *c, const struct vb_conn_param *p)
{
	uint8_t ird = p && p->responder_resources ? p->responder_resources : VB_DEFAULT_RD_ATOM;
	uint8_t ord = p && p->initiator_depth ? p->initiator_depth : VB_DEFAULT_RD_ATOM;

	if (p && p->private_data_len > VB_MAX_PRIVATE_DATA) {
		log_err("private data of %u bytes; at most %u", p->private_data_len,
			VB_MAX_PRIVATE_DATA);
		return -EINVAL;
	}
	c->my_ird = ird > SOFT_MAX_RD_ATOM ? SOFT_MAX_RD_ATOM : ird;
	c->my_ord = ord > SOFT_MAX_RD_ATOM ? SOFT_MAX_RD_ATOM : ord;
	c->cm_pdata_len = p && p->private_data ? p->private_data_len : 0;
	if (c->cm_pdata_len)
		memcpy(c->cm_pdata, p->private_data, c->cm_pdata_len);
	return 0;
}

/* Start the socket connect (over the local carrier if it takes us, soft_local.c);
 * the outcome arrives as a conn event. conn->lock held. */
static int start_connect(struct soft_conn *c)
{
	int fd = soft_local_connect(c->dev, (struct sockaddr *)&c->sa);
	bool local = fd >= 0; /* and connected already */
	int rc;

	if (!local &&
	    (fd = socket(c->sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0)
		return -errno;
	soft_tune_socket(c->dev, fd, local ? AF_UNIX : c->sa.ss_family);
	c->fd = fd;
	if (local || connect(fd, (struct sockaddr *)&c->sa, c->salen) == 0) {
		c->cm = SOFT_CM_HELLO_SENT;
		c->cm_op = SOFT_OP_HELLO;
	} else if (errno == EINPROGRESS) {
		c->cm = SOFT_CM_CONNECTING;
		soft_engine_timer(c->dev->eng, c, (unsigned)c->timeout_ms);
	} else {
		log_info("connect to %s: %s", c->base.peer, strerror(errno));
		c->cm = SOFT_CM_CLOSED;
		soft_conn_event(c, VB_CM_UNREACHABLE, -errno, NULL, 0);
		return 0;
	}
	if ((rc = soft_engine_watch(c->dev->eng, fd, &c->po, POLLER_IN | POLLER_OUT)) != 0)
		return rc;
	soft_tx_pump(c);
	return 0;
}

/* Start connecting (asynchronous): ESTABLISHED, REJECTED or UNREACHABLE follows. */
int soft_connect(struct vb_conn *conn, const struct vb_conn_param *param)
{
	struct soft_conn *c = soft_conn(conn);
	int rc;

	if (soft_cred_check(conn->dev) != 0)
		return -EACCES;
	pthread_mutex_lock(&c->lock);
	if (!c->active || c->cm != SOFT_CM_IDLE || c->qp != SOFT_QP_INIT) {
		log_err("connect needs a resolved, unconnected conn with a QP");
		rc = -EINVAL;
	} else if ((rc = set_param(c, param)) == 0) {
		rc = start_connect(c);
	}
	pthread_mutex_unlock(&c->lock);
	return rc;
}

/* Engine: the socket connect finished; send HELLO or report UNREACHABLE. */
void soft_cm_connected(struct soft_conn *c)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	if (err == EINPROGRESS || err == EALREADY)
		return;
	soft_engine_timer(c->dev->eng, c, 0);
	if (err) {
		log_info("connect to %s: %s", c->base.peer, strerror(err));
		c->cm = SOFT_CM_CLOSED;
		soft_conn_event(c, VB_CM_UNREACHABLE, -err, NULL, 0);
		return;
	}
	c->cm = SOFT_CM_HELLO_SENT;
	c->cm_op = SOFT_OP_HELLO;
}

/* Engine: a deadline passed: the connect took too long, or a Send stalled (RNR). */
void soft_conn_timeout(struct soft_conn *c)
{
	if (c->cm == SOFT_CM_WAIT_HELLO) {
		log_info("%s: no HELLO in time; dropping", c->base.peer);
		c->cm = SOFT_CM_CLOSED; /* the engine reaps it */
	} else if (c->cm == SOFT_CM_CONNECTING) {
		log_info("connect to %s: timed out", c->base.peer);
		c->cm = SOFT_CM_CLOSED;
		soft_conn_event(c, VB_CM_UNREACHABLE, -ETIMEDOUT, NULL, 0);
	} else if (c->qp == SOFT_QP_RTS) {
		uint64_t now = soft_now_ms();

		if (c->rx.stalled && now >= c->rx.stalled_ms + c->rnr_timeout_ms) {
			log_warn(
				"%s: no Receive posted within %u ms; failing the peer's Send (RNR)",
				c->base.peer, c->rnr_timeout_ms);
			c->rx.stalled = false;
			soft_qp_error(c, SOFT_ERR_RESPONDER, c->rx_expect, VB_WC_RNR_RETRY_EXC_ERR);
			soft_tx_pump(c);
		} else if (c->ack_wait_ms && now >= c->ack_wait_ms + c->ack_timeout_ms) {
			/* what an RC QP does once its retries (retry count x local ACK
			 * timeout) are spent: the oldest WR fails, the QP goes to error */
			log_warn("%s: no answer to our requests for %u ms; the peer is gone",
				 c->base.peer, c->ack_timeout_ms);
			soft_sq_fail_head(c, VB_WC_RETRY_EXC_ERR);
			soft_qp_error(c, SOFT_ERR_LOCAL, 0, VB_WC_RETRY_EXC_ERR);
			soft_tx_pump(c);
		} else if (c->ack_pending && c->ack_hold_end && now >= c->ack_hold_end) {
			soft_tx_pump(c); /* nothing came to carry the ACK */
		}
		soft_conn_arm(c);
	}
}

/* See soft.h. */
void soft_conn_arm(struct soft_conn *c)
{
	uint64_t at = 0, now;

	if (!c->dev->eng)
		return;
	if (c->qp != SOFT_QP_RTS) { /* before RTS the CM's timeouts own the timer */
		if (c->qp == SOFT_QP_ERROR)
			soft_engine_timer(c->dev->eng, c, 0);
		return;
	}
	if (c->rx.stalled)
		at = c->rx.stalled_ms + c->rnr_timeout_ms;
	if (c->ack_wait_ms && (at == 0 || c->ack_wait_ms + c->ack_timeout_ms < at))
		at = c->ack_wait_ms + c->ack_timeout_ms;
	if (c->ack_pending && c->ack_hold_end && (at == 0 || c->ack_hold_end < at))
		at = c->ack_hold_end;
	now = soft_now_ms();
	soft_engine_timer(c->dev->eng, c, at == 0 ? 0 : at > now ? (unsigned)(at - now) : 1);
}

/* ---- accept, reject, the handshake messages ---- */

int soft_accept(struct vb_conn *conn, const struct vb_conn_param *param)
{
	struct soft_conn *c = soft_conn(conn);
	int rc = 0;

	if (soft_cred_check(conn->dev) != 0)
		return -EACCES;
	pthread_mutex_lock(&c->lock);
	if (c->cm != SOFT_CM_REQUEST || c->qp != SOFT_QP_INIT) {
		log_err("accept needs a connect request with a QP (state %d)", c->cm);
		rc = c->cm == SOFT_CM_CLOSED ? -ECONNRESET : -EINVAL;
	} else if ((rc = set_param(c, param)) == 0) {
		conn->ord = c->my_ord < c->req.responder_resources ? c->my_ord
								   : c->req.responder_resources;
		conn->ird = c->my_ird < c->req.initiator_depth ? c->my_ird : c->req.initiator_depth;
		c->cm = SOFT_CM_ACCEPTED;
		c->qp = SOFT_QP_RTS;
		c->cm_op = SOFT_OP_ACCEPT;
		soft_tx_pump(c);
	}
	pthread_mutex_unlock(&c->lock);
	return rc;
}

/* Refuse a CONNECT_REQUEST with private data; the socket closes after it. */
int soft_reject(struct vb_conn *conn, const void *private_data, uint8_t len)
{
	struct soft_conn *c = soft_conn(conn);
	struct vb_conn_param p = {.private_data = private_data, .private_data_len = len};
	int rc;

	if (soft_cred_check(conn->dev) != 0)
		return -EACCES;
	pthread_mutex_lock(&c->lock);
	if (c->cm != SOFT_CM_REQUEST) {
		log_err("reject needs a connect request");
		rc = -EINVAL;
	} else if ((rc = set_param(c, &p)) == 0) {
		c->cm = SOFT_CM_REJECTED;
		c->cm_op = SOFT_OP_REJECT;
		soft_tx_pump(c);
	}
	pthread_mutex_unlock(&c->lock);
	return rc;
}

/* Passive: a HELLO makes the conn a CONNECT_REQUEST on its listener. */
static void got_hello(struct soft_conn *c, const struct soft_hdr *h, const uint8_t *pdata)
{
	struct soft_listener *l = c->listener;

	c->req = (struct vb_cm_event){.type = VB_CM_CONNECT_REQUEST, .conn = &c->base};
	memcpy(c->req.private_data, pdata, h->len);
	c->req.private_data_len = (uint8_t)h->len;
	c->req.responder_resources = (uint8_t)(h->aux >> 8);
	c->req.initiator_depth = (uint8_t)h->aux;
	c->cm = SOFT_CM_REQUEST;
	c->listener = NULL;
	soft_engine_timer(c->dev->eng, c, 0);
	pthread_mutex_lock(&l->lock);
	soft_list_del(&c->lnode);
	soft_list_add_tail(&l->requests, &c->lnode);
	if (wakefd_post(&l->ev) != 0)
		log_err("listener event: cannot post");
	pthread_mutex_unlock(&l->lock);
}

/* Active: the peer accepted; negotiate IRD/ORD and tell it we are ready. */
static void got_accept(struct soft_conn *c, const struct soft_hdr *h, const uint8_t *pdata)
{
	uint8_t peer_ird = (uint8_t)(h->aux >> 8), peer_ord = (uint8_t)h->aux;

	c->req.responder_resources = peer_ird;
	c->req.initiator_depth = peer_ord;
	c->base.ord = c->my_ord < peer_ird ? c->my_ord : peer_ird;
	c->base.ird = c->my_ird < peer_ord ? c->my_ird : peer_ord;
	c->cm = SOFT_CM_CONNECTED;
	c->qp = SOFT_QP_RTS;
	c->cm_op = SOFT_OP_RTU;
	c->cm_pdata_len = 0;
	soft_conn_event(c, VB_CM_ESTABLISHED, 0, pdata, (uint8_t)h->len);
}

/* Engine: act on a handshake message (conn->lock held). */
void soft_cm_recv(struct soft_conn *c, const struct soft_hdr *h, const uint8_t *pdata)
{
	if ((h->op == SOFT_OP_HELLO || h->op == SOFT_OP_ACCEPT) && h->addr != SOFT_WIRE_MAGIC) {
		log_err("%s: peer speaks another protocol (magic %llx)", c->base.peer,
			(unsigned long long)h->addr);
		soft_conn_broken(c, -EPROTO);
		return;
	}
	switch (h->op) {
	case SOFT_OP_HELLO:
		got_hello(c, h, pdata);
		break;
	case SOFT_OP_ACCEPT:
		got_accept(c, h, pdata);
		break;
	case SOFT_OP_REJECT:
		c->cm = SOFT_CM_REJECTED;
		soft_conn_event(c, VB_CM_REJECTED, -ECONNREFUSED, pdata, (uint8_t)h->len);
		c->shut_pending = true;
		break;
	case SOFT_OP_RTU:
		c->cm = SOFT_CM_CONNECTED;
		soft_conn_event(c, VB_CM_ESTABLISHED, 0, NULL, 0);
		break;
	}
}

/* ---- disconnect, failure, events, teardown ---- */

void soft_conn_broken(struct soft_conn *c, int err)
{
	enum soft_cm_state was = c->cm;

	if (was == SOFT_CM_CLOSED)
		return;
	c->cm = SOFT_CM_CLOSED;
	if (err && err != -ECONNRESET && err != -EPIPE)
		log_info("%s: connection failed: %s", c->base.peer, strerror(-err));
	switch (was) {
	case SOFT_CM_CONNECTING:
	case SOFT_CM_HELLO_SENT:
		soft_engine_timer(c->dev->eng, c, 0);
		soft_conn_event(c, VB_CM_UNREACHABLE, err ? err : -ECONNRESET, NULL, 0);
		break;
	case SOFT_CM_REQUEST:
	case SOFT_CM_ACCEPTED:
	case SOFT_CM_CONNECTED:
		soft_qp_error(c, SOFT_ERR_QUIET, 0, VB_WC_WR_FLUSH_ERR);
		if (!c->disc_posted) {
			c->disc_posted = true;
			soft_conn_event(c, VB_CM_DISCONNECTED, err, NULL, 0);
		}
		break;
	default:
		break;
	}
	soft_tx_drop(c, false);
	if (c->fd >= 0 && !c->shut_done) {
		shutdown(c->fd, SHUT_WR);
		c->shut_done = true;
	}
}

/* Flush the QP, raise DISCONNECTED here and (by EOF) at the peer. */
int soft_disconnect(struct vb_conn *conn)
{
	struct soft_conn *c = soft_conn(conn);
	int rc = 0;

	if (soft_cred_check(conn->dev) != 0)
		return -EACCES;
	pthread_mutex_lock(&c->lock);
	switch (c->cm) {
	case SOFT_CM_ACCEPTED:
	case SOFT_CM_CONNECTED:
		soft_qp_error(c, SOFT_ERR_QUIET, 0, VB_WC_WR_FLUSH_ERR);
		c->cm = SOFT_CM_CLOSED;
		c->disc_posted = true;
		soft_conn_event(c, VB_CM_DISCONNECTED, 0, NULL, 0);
		c->shut_pending = true;
		soft_tx_pump(c);
		break;
	case SOFT_CM_CLOSED:
	case SOFT_CM_REJECTED:
		break;
	default:
		log_err("disconnect on a conn that is not connected");
		rc = -EINVAL;
	}
	pthread_mutex_unlock(&c->lock);
	return rc;
}

/* Readable while CM events wait for conn_get_event. */
int soft_conn_fd(struct vb_conn *conn)
{
	return soft_conn(conn)->ev.rfd;
}

/* Pop the next CM event, or -EAGAIN. */
int soft_conn_get_event(struct vb_conn *conn, struct vb_cm_event *ev)
{
	struct soft_conn *c = soft_conn(conn);
	int rc = -EAGAIN;

	pthread_mutex_lock(&c->lock);
	if (c->ev_count) {
		*ev = c->evq[c->ev_head];
		c->ev_head = (c->ev_head + 1) % 4;
		c->ev_count--;
		if (wakefd_take(&c->ev) != 1)
			log_err("conn event: none to take");
		rc = 0;
	}
	pthread_mutex_unlock(&c->lock);
	return rc;
}

/* Engine: forget the conn's socket and scheduling before it is freed. */
static void conn_teardown(void *arg)
{
	struct soft_conn *c = arg;

	soft_engine_unwatch(c->dev->eng, c->fd);
	soft_engine_forget(c->dev->eng, c);
	soft_cq_forget(c);
}

/* Flush, take the conn away from the engine, and free it. */
int soft_conn_destroy(struct vb_conn *conn)
{
	struct soft_conn *c = soft_conn(conn);

	pthread_mutex_lock(&c->lock);
	soft_qp_error(c, SOFT_ERR_QUIET, 0, VB_WC_WR_FLUSH_ERR);
	soft_tx_drop(c, false);
	soft_rx_abort(c);
	pthread_mutex_unlock(&c->lock);
	soft_engine_call(c->dev->eng, conn_teardown, c);
	soft_conn_free(c);
	return 0;
}
