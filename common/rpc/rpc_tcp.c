/*
 * rpc_tcp.c: RPC over TCP with RFC 5531 record marking, server and client.
 *
 * Server: an event loop accepting per listener, one reader thread per connection,
 * calls run in the rpc_server's workers, replies written under the connection's
 * write lock. A listener holds at most max_conns connections (shedding the
 * longest idle to make room) and max_conns_per_addr from one address; a
 * connection with nothing to do for idle_ms is closed, and one whose call or
 * reply stalls for send_deadline_ms is dropped. Accept failures (out of
 * descriptors) shed an idle connection and back off instead of spinning.
 * Bulk result data (READ) is not copied into the reply: the DDP hook reduces
 * it out of the stream and the writer splices it back with writev.
 * Ownership: a request owns its call buffer, reply buffer and bulk buffer until
 * it has been written; a connection lives until its reader has exited and its
 * last request has been written (refs).
 */
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "common/base/clock.h"
#include "common/base/evloop.h"
#include "common/base/log.h"
#include "common/base/net.h"
#include "rpc.h"
#include "rpc_tcp.h"

#define FIRST_REPLY	      65536 /* the reply room a call gets before it needs more */
#define SHED_MIN_IDLE_MS      1000  /* a connection idle less than this is never shed */
#define ACCEPT_BACKOFF_MS     10    /* first pause after a failed accept, doubled ... */
#define ACCEPT_BACKOFF_MAX_MS 500   /* ... up to this */

struct tcp_listener {
	struct rpc_server *srv;
	struct rpc_tcp_params p;
	int fd;
	struct evloop *acceptor;
	pthread_mutex_t lock; /* protects conns, nconns, nshed */
	pthread_cond_t cond;
	struct tcp_conn *conns;
	unsigned nconns;
	unsigned nshed;		 /* of nconns, being closed to make room */
	unsigned backoff_ms;	 /* acceptor thread only */
	struct rpc_tcp_stats st; /* counters, atomic */
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
	uint64_t last_ns; /* a call last arrived or was answered (atomic) */
	bool shed;	  /* under l->lock: closed to make room */
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
	l->nshed -= c->shed;
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
			__atomic_add_fetch(&c->l->st.deadline_drops, 1, __ATOMIC_RELAXED);
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
	__atomic_store_n(&c->last_ns, clock_now_ns(), __ATOMIC_RELAXED);
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

/* Calls of c being served now. */
static unsigned inflight(struct tcp_conn *c)
{
	unsigned n;

	pthread_mutex_lock(&c->lock);
	n = c->inflight;
	pthread_mutex_unlock(&c->lock);
	return n;
}

/* Wait until the next call begins to arrive (the deadline on reads is for a
 * call begun, not for the wait between calls). Returns 0 (or the error poll
 * met), or -ETIMEDOUT once the connection has been idle, with no call in
 * flight, for idle_ms. */
static int wait_for_call(struct tcp_conn *c)
{
	struct pollfd p = {.fd = c->fd, .events = POLLIN};
	unsigned idle_ms = c->l->p.idle_ms;

	for (;;) {
		uint64_t idle =
			(clock_now_ns() - __atomic_load_n(&c->last_ns, __ATOMIC_RELAXED)) / 1000000;
		int wait = idle < idle_ms ? (int)(idle_ms - idle) : 0, rc;

		if (idle_ms == 0)
			wait = -1;
		else if (inflight(c))
			wait = (int)idle_ms; /* not idle: calls are being served */
		else if (wait == 0)
			return -ETIMEDOUT;
		rc = poll(&p, 1, wait);
		if (rc > 0)
			return 0;
		if (rc < 0 && errno != EINTR)
			return -errno;
	}
}

static void *conn_reader(void *arg)
{
	struct tcp_conn *c = arg;
	uint8_t *call;
	size_t len;
	int rc;

	while ((rc = wait_for_call(c)) == 0 &&
	       (rc = rpc_rec_read(c->fd, c->l->p.max_record, &call, &len)) == 0) {
		__atomic_store_n(&c->last_ns, clock_now_ns(), __ATOMIC_RELAXED);
		if (submit_call(c, call, len))
			break;
	}
	if (rc == -EMSGSIZE) {
		log_warn("%s: record larger than %zu bytes, closing", c->peer_str,
			 c->l->p.max_record);
	} else if (rc == -ETIMEDOUT) {
		log_info("%s: idle for %u ms, closing", c->peer_str, c->l->p.idle_ms);
		__atomic_add_fetch(&c->l->st.idle_closed, 1, __ATOMIC_RELAXED);
	} else if (rc == -EAGAIN) {
		log_warn("%s: sent part of a call, then nothing for %u ms, closing", c->peer_str,
			 c->l->p.send_deadline_ms);
		__atomic_add_fetch(&c->l->st.deadline_drops, 1, __ATOMIC_RELAXED);
	}
	shutdown(c->fd, SHUT_RDWR);
	conn_put(c);
	return NULL;
}

/* Whether two addresses are the same host (ports aside). */
static bool same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			      &((const struct sockaddr_in6 *)b)->sin6_addr,
			      sizeof(struct in6_addr)) == 0;
	return false;
}

/* Close the connection idle the longest (none in flight, idle at least
 * SHED_MIN_IDLE_MS) to make room. Under l->lock. Returns whether one was. */
static bool shed_idle_locked(struct tcp_listener *l)
{
	uint64_t now = clock_now_ns(), oldest = now - (uint64_t)SHED_MIN_IDLE_MS * 1000000;
	struct tcp_conn *victim = NULL;

	for (struct tcp_conn *c = l->conns; c; c = c->next) {
		uint64_t last = __atomic_load_n(&c->last_ns, __ATOMIC_RELAXED);

		if (!c->shed && last <= oldest && !inflight(c)) {
			victim = c;
			oldest = last;
		}
	}
	if (!victim)
		return false;
	victim->shed = true;
	l->nshed++;
	shutdown(victim->fd, SHUT_RDWR); /* its reader ends and lets go of it */
	__atomic_add_fetch(&l->st.shed, 1, __ATOMIC_RELAXED);
	log_info("%s: idle for %llu ms, closed to make room for another client", victim->peer_str,
		 (unsigned long long)((now - oldest) / 1000000));
	return true;
}

/* Whether a new connection from ss is within the limits (shedding an idle one
 * if that makes room). */
static bool admit(struct tcp_listener *l, const struct sockaddr_storage *ss, const char *who)
{
	unsigned from_addr = 0;
	bool ok = true;

	pthread_mutex_lock(&l->lock);
	for (struct tcp_conn *c = l->conns; c && l->p.max_conns_per_addr; c = c->next)
		from_addr += !c->shed && same_host(&c->peer, ss);
	if (l->p.max_conns_per_addr && from_addr >= l->p.max_conns_per_addr) {
		log_warn("%s: refused: already %u connections from this address", who, from_addr);
		ok = false;
	} else if (l->p.max_conns && l->nconns - l->nshed >= l->p.max_conns &&
		   !shed_idle_locked(l)) {
		log_warn("%s: refused: %u connections, none idle", who, l->nconns - l->nshed);
		ok = false;
	}
	pthread_mutex_unlock(&l->lock);
	if (!ok)
		__atomic_add_fetch(&l->st.refused, 1, __ATOMIC_RELAXED);
	return ok;
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
	c->last_ns = clock_now_ns();
	net_addr_str((struct sockaddr *)ss, c->peer_str, sizeof(c->peer_str));
	if (l->p.send_deadline_ms) {
		struct timeval tv = {.tv_sec = l->p.send_deadline_ms / 1000,
				     .tv_usec = (suseconds_t)(l->p.send_deadline_ms % 1000) * 1000};

		/* a send or a read (once a call has begun: wait_for_call polls
		 * before) that moves nothing this long fails with EAGAIN */
		if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
		    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
			log_warn("%s: no deadline: %s", c->peer_str, strerror(errno));
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

/* accept failed for want of descriptors or memory: the listener stays
 * readable, so make room (an idle connection) and pause the acceptor, longer
 * each time, instead of spinning. */
static void accept_failed(struct tcp_listener *l, int err)
{
	if (err == EAGAIN || err == EINTR || err == ECONNABORTED)
		return;
	__atomic_add_fetch(&l->st.accept_errors, 1, __ATOMIC_RELAXED);
	log_warn("cannot accept a connection: %s; pausing %u ms", strerror(err),
		 l->backoff_ms ? l->backoff_ms : ACCEPT_BACKOFF_MS);
	if (err == EMFILE || err == ENFILE) {
		pthread_mutex_lock(&l->lock);
		shed_idle_locked(l);
		pthread_mutex_unlock(&l->lock);
	}
	l->backoff_ms = l->backoff_ms ? l->backoff_ms * 2 : ACCEPT_BACKOFF_MS;
	if (l->backoff_ms > ACCEPT_BACKOFF_MAX_MS)
		l->backoff_ms = ACCEPT_BACKOFF_MAX_MS;
	usleep(l->backoff_ms * 1000); /* the acceptor's loop serves this listener only */
}

/* The listening socket is readable: a connection to take. */
static void accept_ready(void *arg)
{
	struct tcp_listener *l = arg;
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int fd = accept4(l->fd, (struct sockaddr *)&ss, &len, SOCK_CLOEXEC);
	char who[64];

	if (fd < 0) {
		accept_failed(l, errno);
		return;
	}
	l->backoff_ms = 0;
	if (!admit(l, &ss, net_addr_str((struct sockaddr *)&ss, who, sizeof(who)))) {
		close(fd);
		return;
	}
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

void rpc_tcp_get_stats(struct tcp_listener *l, struct rpc_tcp_stats *st)
{
	st->conns = rpc_tcp_nconns(l);
	st->refused = __atomic_load_n(&l->st.refused, __ATOMIC_RELAXED);
	st->shed = __atomic_load_n(&l->st.shed, __ATOMIC_RELAXED);
	st->idle_closed = __atomic_load_n(&l->st.idle_closed, __ATOMIC_RELAXED);
	st->deadline_drops = __atomic_load_n(&l->st.deadline_drops, __ATOMIC_RELAXED);
	st->accept_errors = __atomic_load_n(&l->st.accept_errors, __ATOMIC_RELAXED);
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
