/*
 * rpc_tcp.c: RPC over TCP with RFC 5531 record marking: the server's listeners.
 *
 * A listener accepts in a loop of its own and gives each connection to one of
 * a fixed set of I/O loops (rpc_tcp_conn.c), so the thread count does not
 * depend on the number of clients. It holds at most max_conns connections
 * (shedding the longest idle to make room) and max_conns_per_addr from one
 * address. Accept failures (out of descriptors) shed an idle connection and
 * back off instead of spinning.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "common/base/clock.h"
#include "common/base/evloop.h"
#include "common/base/log.h"
#include "common/base/net.h"
#include "rpc.h"
#include "rpc_tcp_int.h"

#define SHED_MIN_IDLE_MS      1000 /* a connection idle less than this is never shed */
#define ACCEPT_BACKOFF_MS     10   /* first pause after a failed accept, doubled ... */
#define ACCEPT_BACKOFF_MAX_MS 500  /* ... up to this */
#define MAX_LOOPS	      16

/* See rpc_tcp_int.h. */
void tcp_conn_gone(struct tcp_conn *c)
{
	struct tcp_listener *l = c->l;

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
}

/* Close the connection idle the longest (none in flight, idle at least
 * SHED_MIN_IDLE_MS) to make room. Under l->lock. Returns whether one was. */
static bool shed_idle_locked(struct tcp_listener *l)
{
	uint64_t now = clock_now_ns(), oldest = now - (uint64_t)SHED_MIN_IDLE_MS * 1000000;
	struct tcp_conn *victim = NULL;

	for (struct tcp_conn *c = l->conns; c; c = c->next) {
		uint64_t since = c->shed ? 0 : tcp_conn_idle_since(c);

		if (since && since <= oldest) {
			victim = c;
			oldest = since;
		}
	}
	if (!victim)
		return false;
	victim->shed = true;
	l->nshed++;
	shutdown(victim->fd, SHUT_RDWR); /* its loop sees the hang-up and lets go of it */
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
		from_addr += !c->shed && net_same_host(&c->peer, ss);
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
	char who[NET_ADDR_STRLEN];

	if (fd < 0) {
		accept_failed(l, errno);
		return;
	}
	l->backoff_ms = 0;
	if (!admit(l, &ss, net_addr_str((struct sockaddr *)&ss, who, sizeof(who)))) {
		close(fd);
		return;
	}
	tcp_conn_start(l, fd, &ss, len);
}

/* The I/O loops: p->loops, or one per processor. */
static int start_loops(struct tcp_listener *l)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned n = l->p.loops ? l->p.loops : (unsigned)(cpus > 0 ? cpus : 1);
	int rc = 0;

	l->nloops = n < MAX_LOOPS ? n : MAX_LOOPS;
	if (!(l->loops = calloc(l->nloops, sizeof(*l->loops))))
		return -ENOMEM;
	for (unsigned i = 0; i < l->nloops && rc == 0; i++) {
		struct tcp_loop *lp = &l->loops[i];

		lp->l = l;
		if ((rc = evloop_create(&lp->ev)) != 0)
			break;
		evloop_set_spin(lp->ev, l->p.spin_us);
		evloop_set_spin_max(lp->ev, l->p.spin_max_us);
		rc = evloop_add_timer(lp->ev, TCP_TICK_MS, tcp_loop_tick, lp, NULL);
		rc = rc < 0 ? rc : evloop_start(lp->ev, "rpc-tcp-io");
	}
	return rc;
}

static void stop_loops(struct tcp_listener *l)
{
	for (unsigned i = 0; l->loops && i < l->nloops; i++)
		evloop_destroy(l->loops[i].ev);
	free(l->loops);
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
	if ((rc = start_loops(l)) != 0 ||
	    (rc = evloop_serve_fd(l->fd, accept_ready, l, "rpc-tcp-accept", &l->acceptor)) != 0) {
		log_err("cannot start the TCP event loops: %s", strerror(-rc));
		stop_loops(l);
		close(l->fd);
		pthread_mutex_destroy(&l->lock);
		pthread_cond_destroy(&l->cond);
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

/* See rpc_tcp.h. Connections being shed are still open: they are listed. */
void rpc_tcp_each_peer(struct tcp_listener *l, rpc_peer_fn fn, void *arg)
{
	pthread_mutex_lock(&l->lock);
	for (struct tcp_conn *c = l->conns; c != NULL; c = c->next)
		fn(arg, (const struct sockaddr *)&c->peer, c->peer_len);
	pthread_mutex_unlock(&l->lock);
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
	stop_loops(l);
	pthread_mutex_destroy(&l->lock);
	pthread_cond_destroy(&l->cond);
	free(l);
}
