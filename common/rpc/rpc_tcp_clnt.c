/*
 * rpc_tcp_clnt.c: the RPC client over TCP. Callers encode and write their call
 * under the write lock and sleep on their own waiter; one reader thread reads
 * replies and hands each to the waiter with its xid. If the connection breaks,
 * every waiter gets -ECONNRESET and later calls fail at once: the caller (the
 * NFS client) reconnects by creating a new client.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "common/base/clock.h"
#include "common/base/log.h"
#include "common/base/net.h"
#include "rpc.h"
#include "rpc_tcp.h"

#define CALL_HDR_ROOM	65536
#define DEFAULT_TIMEOUT 60000

struct waiter {
	uint32_t xid;
	struct waiter *next;
	pthread_cond_t cond;
	uint8_t *reply;
	size_t len;
	int err;
	int done;
};

struct tcp_clnt {
	struct rpc_clnt base;
	int fd;
	size_t max_record;
	pthread_t reader;
	pthread_mutex_t wlock; /* serialises writes on fd */
	pthread_mutex_t lock;  /* protects waiters, dead */
	struct waiter *waiters;
	int dead;
};

struct clnt_ddp {
	struct rpc_ddp base;
	struct rpc_call *call;
};

static int clnt_ddp_get(struct rpc_ddp *ddp, XDR *xdrs, uint32_t len, void **data)
{
	return rpc_clnt_ddp_get_inline(((struct clnt_ddp *)ddp)->call, xdrs, len, data);
}

static const struct rpc_ddp_ops clnt_ddp_ops = {.get = clnt_ddp_get, .put = rpc_rec_ddp_put};

/* Fail every waiter: the connection is gone. Called with lock held. */
static void fail_all(struct tcp_clnt *c, int err)
{
	c->dead = err;
	for (struct waiter *w = c->waiters; w; w = w->next) {
		w->err = err;
		w->done = 1;
		pthread_cond_signal(&w->cond);
	}
	c->waiters = NULL;
}

static void *reader_main(void *arg)
{
	struct tcp_clnt *c = arg;
	uint8_t *buf;
	size_t len;
	uint32_t xid;
	int rc;

	while ((rc = rpc_rec_read(c->fd, c->max_record, &buf, &len)) == 0) {
		struct waiter **pp, *w = NULL;

		if (rpc_peek_xid(buf, len, &xid) == 0) {
			pthread_mutex_lock(&c->lock);
			for (pp = &c->waiters; *pp; pp = &(*pp)->next) {
				if ((*pp)->xid == xid) {
					w = *pp;
					*pp = w->next;
					w->reply = buf;
					w->len = len;
					w->done = 1;
					pthread_cond_signal(&w->cond);
					break;
				}
			}
			pthread_mutex_unlock(&c->lock);
		}
		if (!w) {
			log_debug("reply for unknown xid %#x dropped", xid);
			free(buf);
		}
	}
	/* whatever ended the stream (EOF, an error, a record over the limit), the
	 * byte stream is lost: the connection ends and every call gets
	 * -ECONNRESET, which the caller answers by reconnecting */
	if (rc == -EMSGSIZE)
		log_warn("a reply record over %zu bytes: the connection ends", c->max_record);
	else if (rc != -ECONNRESET && rc != -EPIPE && rc != -ENODATA)
		log_info("reading replies: %s: the connection ends", strerror(-rc));
	shutdown(c->fd, SHUT_RDWR);
	pthread_mutex_lock(&c->lock);
	fail_all(c, -ECONNRESET);
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

/* Wait for w until done or the deadline; unlinks w on timeout. Lock held. */
static void wait_reply(struct tcp_clnt *c, struct waiter *w, int timeout_ms)
{
	struct timespec ts = clock_deadline(CLOCK_MONOTONIC, timeout_ms);

	while (!w->done) {
		if (pthread_cond_timedwait(&w->cond, &c->lock, &ts) == ETIMEDOUT && !w->done) {
			for (struct waiter **pp = &c->waiters; *pp; pp = &(*pp)->next) {
				if (*pp == w) {
					*pp = w->next;
					break;
				}
			}
			w->err = -ETIMEDOUT;
			w->done = 1;
		}
	}
}

static int tcp_call(struct rpc_clnt *base, struct rpc_call *call)
{
	struct tcp_clnt *c = (struct tcp_clnt *)base;
	struct clnt_ddp ddp = {.base.ops = &clnt_ddp_ops, .call = call};
	pthread_condattr_t ca;
	struct waiter w = {0};
	uint8_t *buf = malloc(CALL_HDR_ROOM);
	int len, rc;

	call->xprt_priv = NULL;
	if (!buf)
		return -ENOMEM;
	w.xid = rpc_clnt_xid(base, call);
	len = rpc_encode_call(base, w.xid, call, buf, CALL_HDR_ROOM, &ddp.base);
	if (len < 0) {
		free(buf);
		return len;
	}
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w.cond, &ca);
	pthread_condattr_destroy(&ca);

	pthread_mutex_lock(&c->lock);
	rc = c->dead;
	if (rc == 0) {
		w.next = c->waiters;
		c->waiters = &w;
	}
	pthread_mutex_unlock(&c->lock);
	if (rc == 0 && (rc = rpc_rec_write(c->fd, &c->wlock, buf, (size_t)len, &ddp.base)) != 0) {
		shutdown(c->fd, SHUT_RDWR); /* the reader fails every waiter, us included */
		rc = 0;
	}
	free(buf);
	if (rc == 0) {
		pthread_mutex_lock(&c->lock);
		wait_reply(c, &w, call->timeout_ms ? call->timeout_ms : DEFAULT_TIMEOUT);
		pthread_mutex_unlock(&c->lock);
		rc = w.err;
	}
	pthread_cond_destroy(&w.cond);
	if (rc == 0) {
		ddp.base.nitems = 0;
		rc = rpc_decode_reply(base, w.xid, call, w.reply, w.len, &ddp.base);
		if (rc == 0)
			call->xprt_priv = w.reply; /* results may point into it */
		else
			free(w.reply);
	}
	return rc;
}

static void tcp_free_res(struct rpc_clnt *base, struct rpc_call *call)
{
	xdr_free(call->xdr_res, call->res);
	free(call->xprt_priv);
	call->xprt_priv = NULL;
}

static void tcp_destroy(struct rpc_clnt *base)
{
	struct tcp_clnt *c = (struct tcp_clnt *)base;

	shutdown(c->fd, SHUT_RDWR);
	pthread_join(c->reader, NULL);
	close(c->fd);
	pthread_mutex_destroy(&c->wlock);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* The reader sees the socket end and fails every waiter. */
static void tcp_abort(struct rpc_clnt *base)
{
	shutdown(((struct tcp_clnt *)base)->fd, SHUT_RDWR);
}

static const struct rpc_clnt_ops tcp_clnt_ops = {
	.call = tcp_call,
	.free_res = tcp_free_res,
	.destroy = tcp_destroy,
	.abort = tcp_abort,
};

int rpc_tcp_clnt_create(const char *host, const char *port, int timeout_ms, size_t max_record,
			struct rpc_clnt **out)
{
	struct tcp_clnt *c = calloc(1, sizeof(*c));
	int rc;

	if (!c)
		return -ENOMEM;
	c->fd = net_connect_tcp(host, port, timeout_ms);
	if (c->fd < 0) {
		rc = c->fd;
		free(c);
		return rc;
	}
	rpc_clnt_init(&c->base, &tcp_clnt_ops);
	c->max_record = max_record;
	pthread_mutex_init(&c->wlock, NULL);
	pthread_mutex_init(&c->lock, NULL);
	rc = pthread_create(&c->reader, NULL, reader_main, c);
	if (rc) {
		close(c->fd);
		free(c);
		return -rc;
	}
	*out = &c->base;
	return 0;
}
