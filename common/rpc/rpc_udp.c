/*
 * rpc_udp.c: RPC over UDP. An event loop receives datagrams and hands each to the
 * rpc_server's workers, which answer with sendto. A datagram is one whole call
 * (RFC 5531 over UDP has no record marking). Used for MOUNT, which mount.nfs
 * often asks over UDP. A flood is bounded by max_inflight: the receiving loop
 * waits for a call to finish before it reads the next datagram.
 */
#include <netdb.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "common/base/evloop.h"
#include "common/base/log.h"
#include "common/base/net.h"
#include "rpc_udp.h"

#define DGRAM_MAX 65536

struct udp_listener {
	struct rpc_server *srv;
	int fd;
	struct evloop *loop;  /* receives */
	pthread_mutex_t lock; /* protects inflight, peak */
	pthread_cond_t cond;
	unsigned inflight, peak;
	unsigned max_inflight;
};

struct udp_req {
	struct work work;
	struct udp_listener *l;
	struct rpc_xreq x;
	struct sockaddr_storage peer;
	socklen_t peer_len;
	void *bulk;
	uint8_t call[DGRAM_MAX];
	uint8_t reply[DGRAM_MAX];
};

static void *udp_get_buf(struct rpc_req *req, size_t len)
{
	struct udp_req *r = req->xprt_req;

	if (r->bulk || len > DGRAM_MAX)
		return NULL;
	return r->bulk = malloc(len ? len : 1);
}

/* A call slot is given back. */
static void udp_release(struct udp_listener *l)
{
	pthread_mutex_lock(&l->lock);
	l->inflight--;
	pthread_cond_broadcast(&l->cond);
	pthread_mutex_unlock(&l->lock);
}

static void udp_run(struct work *w)
{
	struct udp_req *r = (struct udp_req *)w;
	struct udp_listener *l = r->l;
	int rc = rpc_dispatch(l->srv, &r->x);

	if (rc == -EMSGSIZE)
		rc = rpc_reencode(l->srv, &r->x);
	if (rc == 0 && sendto(l->fd, r->reply, r->x.reply_len, 0, (struct sockaddr *)&r->peer,
			      r->peer_len) < 0)
		log_debug("reply not sent: %s", strerror(errno));
	rpc_dispatch_done(l->srv, &r->x);
	free(r->bulk);
	free(r);
	rpc_mem_release(l->srv, sizeof(*r));
	udp_release(l);
}

/* A datagram is waiting: one call for the workers, once a slot is free (the
 * loop serves this listener only, so waiting here is what stops reading). */
static void udp_ready(void *arg)
{
	struct udp_listener *l = arg;
	struct udp_req *r;
	ssize_t n;

	pthread_mutex_lock(&l->lock);
	while (l->inflight >= l->max_inflight)
		pthread_cond_wait(&l->cond, &l->lock);
	if (++l->inflight > l->peak)
		l->peak = l->inflight;
	pthread_mutex_unlock(&l->lock);
	if (!rpc_mem_reserve(l->srv, sizeof(*r))) {
		/* over the memory budget: UDP is allowed to lose it (clients resend) */
		uint8_t b[4];

		if (recv(l->fd, b, sizeof(b), MSG_DONTWAIT | MSG_TRUNC) >= 0)
			log_info("over the memory budget: a datagram dropped");
		udp_release(l);
		return;
	}
	if (!(r = calloc(1, sizeof(*r)))) {
		rpc_mem_release(l->srv, sizeof(*r));
		udp_release(l);
		return;
	}
	r->peer_len = sizeof(r->peer);
	n = recvfrom(l->fd, r->call, sizeof(r->call), MSG_DONTWAIT, (struct sockaddr *)&r->peer,
		     &r->peer_len);
	if (n <= 0) {
		free(r);
		rpc_mem_release(l->srv, sizeof(*r));
		udp_release(l);
		return;
	}
	r->l = l;
	r->work.run = udp_run;
	r->x = (struct rpc_xreq){.call = r->call,
				 .call_len = (size_t)n,
				 .peer = (struct sockaddr *)&r->peer,
				 .peer_len = r->peer_len,
				 .xprt = RPC_XPRT_UDP,
				 .get_buf = udp_get_buf,
				 .xprt_req = r,
				 .reply = r->reply,
				 .reply_cap = DGRAM_MAX};
	rpc_server_submit(l->srv, &r->work);
}

/* A bound UDP socket for host:port, or -errno. */
static int udp_bind(const char *host, const char *port)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC,
				 .ai_socktype = SOCK_DGRAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
	struct addrinfo *res, *ai;
	int fd = -1, rc = -EADDRNOTAVAIL;

	if (host && strcmp(host, "0.0.0.0") == 0)
		hints.ai_family = AF_INET;
	if (getaddrinfo(host, port, &hints, &res) != 0)
		return -EADDRNOTAVAIL;
	for (ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd >= 0)
			net_dual_stack(fd, ai->ai_family);
		if (fd >= 0 && bind(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
			rc = -errno;
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	return fd >= 0 ? fd : rc;
}

int rpc_udp_listen(struct rpc_server *srv, const char *host, const char *port,
		   unsigned max_inflight, struct udp_listener **out)
{
	struct udp_listener *l = calloc(1, sizeof(*l));
	int rc;

	if (!l)
		return -ENOMEM;
	l->srv = srv;
	l->max_inflight = max_inflight ? max_inflight : 1;
	l->fd = udp_bind(host, port);
	if (l->fd < 0) {
		rc = l->fd;
		log_err("cannot listen on UDP %s:%s: %s", host ? host : "*", port, strerror(-rc));
		free(l);
		return rc;
	}
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->cond, NULL);
	if ((rc = evloop_serve_fd(l->fd, udp_ready, l, "rpc-udp", &l->loop)) != 0) {
		close(l->fd);
		free(l);
		return rc;
	}
	*out = l;
	return 0;
}

unsigned rpc_udp_inflight_peak(struct udp_listener *l)
{
	unsigned n;

	pthread_mutex_lock(&l->lock);
	n = l->peak;
	pthread_mutex_unlock(&l->lock);
	return n;
}

void rpc_udp_stop(struct udp_listener *l)
{
	if (!l)
		return;
	evloop_destroy(l->loop);
	pthread_mutex_lock(&l->lock);
	while (l->inflight)
		pthread_cond_wait(&l->cond, &l->lock);
	pthread_mutex_unlock(&l->lock);
	close(l->fd);
	pthread_mutex_destroy(&l->lock);
	pthread_cond_destroy(&l->cond);
	free(l);
}
