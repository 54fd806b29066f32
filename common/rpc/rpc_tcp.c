/*
 * rpc_tcp.c: RPC over TCP with RFC 5531 record marking, server and client.
 *
 * Server: an event loop accepting per listener, one reader thread per connection,
 * calls run in the rpc_server's workers, replies written under the connection's
 * write lock. Bulk result data (READ) is not copied into the reply: the DDP hook
 * reduces it out of the stream and the writer splices it back with writev.
 * Ownership: a request owns its call buffer, reply buffer and bulk buffer until
 * it has been written; a connection lives until its reader has exited and its
 * last request has been written (refs).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "common/base/evloop.h"
#include "common/base/log.h"
#include "common/base/net.h"
#include "rpc.h"
#include "rpc_tcp.h"

#define FIRST_REPLY 65536 /* the reply room a call gets before it needs more */

struct tcp_listener {
	struct rpc_server *srv;
	struct rpc_tcp_params p;
	int fd;
	struct evloop *acceptor;
	pthread_mutex_t lock; /* protects conns, nconns */
	pthread_cond_t cond;
	struct tcp_conn *conns;
	unsigned nconns;
};

struct tcp_conn {
	struct tcp_listener *l;
	struct tcp_conn *next; /* in l->conns, under l->lock */
	int fd;
	struct sockaddr_storage peer;
	socklen_t peer_len;
	char peer_str[64];
	pthread_mutex_t wlock; /* serialises replies on fd */
	pthread_mutex_t lock;  /* protects inflight, refs */
	pthread_cond_t cond;
	unsigned inflight;
	unsigned refs;
};

struct tcp_req {
	struct work work;
	struct tcp_conn *conn;
	struct rpc_xreq x;
	struct rpc_ddp res_ddp;
	uint8_t *call;
	void *bulk;
};

/* ---- server ---- */

static int tcp_ddp_get(struct rpc_ddp *ddp, XDR *xdrs, uint32_t len, void **data)
{
	return rpc_ddp_inline_ops.get(ddp, xdrs, len, data);
}

static const struct rpc_ddp_ops tcp_ddp_ops = {
	.get = tcp_ddp_get,
	.put = rpc_rec_ddp_put,
};

static void conn_put(struct tcp_conn *c)
{
	struct tcp_listener *l = c->l;
	unsigned refs;

	pthread_mutex_lock(&c->lock);
	refs = --c->refs;
	pthread_mutex_unlock(&c->lock);
	if (refs)
		return;
	pthread_mutex_lock(&l->lock);
	for (struct tcp_conn **pp = &l->conns; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	l->nconns--;
	pthread_cond_broadcast(&l->cond);
	pthread_mutex_unlock(&l->lock);
	log_debug("%s: connection closed", c->peer_str);
	close(c->fd);
	pthread_mutex_destroy(&c->wlock);
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->cond);
	free(c);
}

/* Bulk result buffer: malloc'd, written with writev, freed with the request. */
static void *tcp_get_buf(struct rpc_req *req, size_t len)
{
	struct tcp_req *r = req->xprt_req;

	if (r->bulk)
		return NULL; /* one bulk item per reply */
	r->bulk = malloc(len ? len : 1);
	return r->bulk;
}

static void req_free(struct tcp_req *r)
{
	free(r->call);
	free(r->x.reply);
	free(r->bulk);
	free(r);
}

/* The results did not fit the first room: encode them again in max_reply bytes
 * (a SYSTEM_ERR reply if they do not fit that either). */
static int grow_reply(struct tcp_conn *c, struct tcp_req *r)
{
	uint8_t *bigger = r->x.reply_cap < c->l->p.max_reply ? malloc(c->l->p.max_reply) : NULL;

	if (bigger) {
		free(r->x.reply);
		r->x.reply = bigger;
		r->x.reply_cap = c->l->p.max_reply;
	}
	return rpc_reencode(c->l->srv, &r->x);
}

/* Worker: dispatch, write the reply, release. */
static void tcp_req_run(struct work *w)
{
	struct tcp_req *r = (struct tcp_req *)w;
	struct tcp_conn *c = r->conn;
	int rc = rpc_dispatch(c->l->srv, &r->x);

	if (rc == -EMSGSIZE)
		rc = grow_reply(c, r);

	if (rc == 0) {
		rc = rpc_rec_write(c->fd, &c->wlock, r->x.reply, r->x.reply_len, &r->res_ddp);
		if (rc == -EAGAIN) {
			log_warn("%s: took none of a reply for %u ms, closing", c->peer_str,
				 c->l->p.send_deadline_ms);
			rc = -ETIMEDOUT;
		}
		if (rc) {
			log_info("%s: reply not sent: %s", c->peer_str, strerror(-rc));
			/* part of a record may be out: the stream is lost either way */
			shutdown(c->fd, SHUT_RDWR);
		}
	} else if (rc == -EBADMSG) {
		log_info("%s: dropped a message that is not an RPC call", c->peer_str);
	} else if (rc != -EALREADY) {
		log_info("%s: xid %#x: no reply: %s", c->peer_str, r->x.xid, strerror(-rc));
	}
	rpc_dispatch_done(c->l->srv, &r->x);
	req_free(r);
	pthread_mutex_lock(&c->lock);
	c->inflight--;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	conn_put(c);
}

/* Turn one received record into a request for the workers. */
static int submit_call(struct tcp_conn *c, uint8_t *call, size_t len)
{
	struct tcp_req *r = calloc(1, sizeof(*r));
	/* most replies are small (bulk data is spliced in by writev): grow on demand */
	size_t cap = c->l->p.max_reply < FIRST_REPLY ? c->l->p.max_reply : FIRST_REPLY;

	if (!r || !(r->x.reply = malloc(cap))) {
		free(r);
		free(call);
		return -ENOMEM;
	}
	r->conn = c;
	r->call = call;
	r->work.run = tcp_req_run;
	r->res_ddp.ops = &tcp_ddp_ops;
	r->x.call = call;
	r->x.call_len = len;
	r->x.peer = (struct sockaddr *)&c->peer;
	r->x.peer_len = c->peer_len;
	r->x.get_buf = tcp_get_buf;
	r->x.xprt_req = r;
	r->x.reply_cap = cap;
	r->x.res_ddp = &r->res_ddp;
	pthread_mutex_lock(&c->lock);
	while (c->inflight >= c->l->p.max_inflight)
		pthread_cond_wait(&c->cond, &c->lock);
	c->inflight++;
	c->refs++;
	pthread_mutex_unlock(&c->lock);
	rpc_server_submit(c->l->srv, &r->work);
	return 0;
}

static void *conn_reader(void *arg)
{
	struct tcp_conn *c = arg;
	uint8_t *call;
	size_t len;
	int rc;

	while ((rc = rpc_rec_read(c->fd, c->l->p.max_record, &call, &len)) == 0) {
		if (submit_call(c, call, len))
			break;
	}
	if (rc == -EMSGSIZE)
		log_warn("%s: record larger than %zu bytes, closing", c->peer_str,
			 c->l->p.max_record);
	shutdown(c->fd, SHUT_RDWR);
	conn_put(c);
	return NULL;
}

static void start_conn(struct tcp_listener *l, int fd, struct sockaddr_storage *ss, socklen_t len)
{
	struct tcp_conn *c = calloc(1, sizeof(*c));
	pthread_attr_t attr;
	pthread_t t;

	if (!c) {
		close(fd);
		return;
	}
	c->l = l;
	c->fd = fd;
	c->peer = *ss;
	c->peer_len = len;
	c->refs = 1; /* the reader's */
	net_addr_str((struct sockaddr *)ss, c->peer_str, sizeof(c->peer_str));
	if (l->p.send_deadline_ms) {
		struct timeval tv = {.tv_sec = l->p.send_deadline_ms / 1000,
				     .tv_usec = (suseconds_t)(l->p.send_deadline_ms % 1000) * 1000};

		/* a send that moves nothing this long fails with EAGAIN */
		if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)))
			log_warn("%s: no send deadline: %s", c->peer_str, strerror(errno));
	}
	pthread_mutex_init(&c->wlock, NULL);
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->cond, NULL);
	pthread_mutex_lock(&l->lock);
	c->next = l->conns;
	l->conns = c;
	l->nconns++;
	pthread_mutex_unlock(&l->lock);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, conn_reader, c) != 0) {
		log_err("%s: cannot start a reader thread", c->peer_str);
		conn_put(c);
	}
	pthread_attr_destroy(&attr);
	log_debug("%s: connected", c->peer_str);
}

/* The listening socket is readable: a connection to take. */
static void accept_ready(void *arg)
{
	struct tcp_listener *l = arg;
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int fd = accept4(l->fd, (struct sockaddr *)&ss, &len, SOCK_CLOEXEC);

	if (fd >= 0)
		start_conn(l, fd, &ss, len);
}

int rpc_tcp_listen(struct rpc_server *srv, const char *host, const char *port,
		   const struct rpc_tcp_params *p, struct tcp_listener **out)
{
	struct tcp_listener *l = calloc(1, sizeof(*l));
	const char *err = "";
	int rc;

	if (!l)
		return -ENOMEM;
	l->srv = srv;
	l->p = *p;
	l->fd = net_listen_tcp(host, port, 128, &err);
	if (l->fd < 0) {
		rc = l->fd;
		log_err("cannot listen on TCP %s:%s: %s", host ? host : "*", port, err);
		free(l);
		return rc;
	}
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->cond, NULL);
	rc = evloop_serve_fd(l->fd, accept_ready, l, "rpc-tcp-accept", &l->acceptor);
	if (rc) {
		close(l->fd);
		free(l);
		return rc;
	}
	*out = l;
	return 0;
}

int rpc_tcp_port(const struct tcp_listener *l)
{
	return net_local_port(l->fd);
}

unsigned rpc_tcp_nconns(struct tcp_listener *l)
{
	unsigned n;

	pthread_mutex_lock(&l->lock);
	n = l->nconns;
	pthread_mutex_unlock(&l->lock);
	return n;
}

void rpc_tcp_stop(struct tcp_listener *l)
{
	if (!l)
		return;
	evloop_destroy(l->acceptor);
	close(l->fd);
	pthread_mutex_lock(&l->lock);
	for (struct tcp_conn *c = l->conns; c; c = c->next)
		shutdown(c->fd, SHUT_RDWR);
	while (l->nconns)
		pthread_cond_wait(&l->cond, &l->lock);
	pthread_mutex_unlock(&l->lock);
	pthread_mutex_destroy(&l->lock);
	pthread_cond_destroy(&l->cond);
	free(l);
}
