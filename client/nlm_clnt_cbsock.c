/*
 * nlm_clnt_cbsock.c: the sockets of the client's lock callback service and
 * its life: one port over UDP and TCP (the port the kernel chooses is taken
 * only if it is free over TCP too, or lockcbport=), registered with this
 * host's rpcbind; its thread, which reads datagrams and at most CB_CONNS TCP
 * connections (one record-marked call at a time each, idle ones closed) and
 * hands each call to nlm_clnt_cb.c; nlmc_start and nlmc_stop.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <rpc/rpc.h>
#include <rpc/pmap_prot.h>

#include "client/nlm_clnt_int.h"
#include "common/base/clock.h"
#include "common/base/log.h"
#include "common/base/net.h"
#include "common/nfs/nlm_prog.h"
#include "common/rpc/rpcb.h"

static void conn_close(struct nlmc_cbconn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->have = 0;
	memset(c->fwd, 0, sizeof(c->fwd));
}

/* The connection to give up for a new one: a free slot, else the idlest of
 * the peer that holds the most (a peer that opens many pushes out its own,
 * not the server's). */
static struct nlmc_cbconn *conn_victim(struct nlmc *n)
{
	struct nlmc_cbconn *v = NULL;
	unsigned most = 0;

	for (unsigned i = 0; i < CB_CONNS; i++) {
		struct nlmc_cbconn *c = &n->conns[i];
		unsigned same = 0;

		if (c->fd < 0)
			return c;
		for (unsigned j = 0; j < CB_CONNS; j++)
			same += net_same_ip((const struct sockaddr *)&c->peer,
					    (const struct sockaddr *)&n->conns[j].peer);
		if (same > most || (same == most && c->last_ms < v->last_ms)) {
			v = c;
			most = same;
		}
	}
	return v;
}

/* A new connection to the TCP port. Out of descriptors, the port is left
 * alone a second (the connection waiting would wake every poll). */
static void conn_accept(struct nlmc *n, uint64_t now)
{
	struct sockaddr_storage peer;
	socklen_t plen = sizeof(peer);
	int fd = accept4(n->cbtcp, (struct sockaddr *)&peer, &plen, SOCK_NONBLOCK | SOCK_CLOEXEC);
	struct nlmc_cbconn *c;

	if (fd < 0) {
		if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
			n->accept_pause_until = now + 1000;
		return;
	}
	c = conn_victim(n);
	conn_close(c);
	c->fd = fd;
	c->peer = peer;
	c->last_ms = now;
}

/* One call whole in c (len bytes after its record mark): served, its
 * answers on c. */
static void conn_serve(struct nlmc *n, struct nlmc_cbconn *c, size_t len)
{
	struct net_dgram_peer from;
	socklen_t tolen = sizeof(from.to);

	memset(&from, 0, sizeof(from));
	from.len = sizeof(from.sa);
	if (getpeername(c->fd, (struct sockaddr *)&from.sa, &from.len) != 0) {
		conn_close(c);
		return;
	}
	if (getsockname(c->fd, (struct sockaddr *)&from.to, &tolen) != 0)
		memset(&from.to, 0, sizeof(from.to));
	n->reply_conn = c;
	nlmc_serve_datagram(n, c->buf + 4, len, &from);
	n->reply_conn = NULL;
}

/* See nlm_clnt_int.h. */
void nlmc_conn_read(struct nlmc *n, struct nlmc_cbconn *c, uint64_t now)
{
	ssize_t got = recv(c->fd, c->buf + c->have, sizeof(c->buf) - c->have, MSG_DONTWAIT);
	uint32_t mark;
	size_t len;

	if (got <= 0) {
		if (got == 0 || (errno != EAGAIN && errno != EINTR))
			conn_close(c);
		return;
	}
	c->have += (size_t)got;
	c->last_ms = now;
	while (c->have >= 4) {
		memcpy(&mark, c->buf, 4);
		len = ntohl(mark) & 0x7fffffffu;
		if (!(ntohl(mark) & 0x80000000u) || len > CB_MSG_MAX) {
			conn_close(c);
			return;
		}
		if (c->have < 4 + len)
			return;
		conn_serve(n, c, len);
		if (c->fd < 0)
			return;
		c->have -= 4 + len;
		memmove(c->buf, c->buf + 4 + len, c->have);
	}
}

static void *cb_main(void *arg)
{
	struct nlmc *n = arg;
	struct pollfd pfd[2 + CB_CONNS];
	char buf[FWD_HDR + CB_MSG_MAX];
	struct net_dgram_peer from;
	uint64_t now;
	ssize_t got;

	while (!__atomic_load_n(&n->stop, __ATOMIC_ACQUIRE)) {
		pfd[0] = (struct pollfd){.fd = n->cbfd, .events = POLLIN};
		/* fd -1: not polled (none, or paused) */
		pfd[1] = (struct pollfd){
			.fd = clock_now_ns() / 1000000 < n->accept_pause_until ? -1 : n->cbtcp,
			.events = POLLIN};
		for (unsigned i = 0; i < CB_CONNS; i++)
			pfd[2 + i] = (struct pollfd){.fd = n->conns[i].fd, .events = POLLIN};
		if (poll(pfd, 2 + CB_CONNS, 200) < 0)
			continue;
		now = clock_now_ns() / 1000000;
		if (pfd[0].revents & POLLIN) {
			got = net_recv_dgram(n->cbfd, buf, sizeof(buf), MSG_DONTWAIT, &from);
			if (got > 0 && from.sa.ss_family == n->cbfamily &&
			    from.len <= sizeof(from.sa))
				nlmc_serve_datagram(n, buf, (size_t)got, &from);
		}
		for (unsigned i = 0; i < CB_CONNS; i++) {
			struct nlmc_cbconn *c = &n->conns[i];

			if (c->fd >= 0 && pfd[2 + i].revents)
				nlmc_conn_read(n, c, now);
			else if (c->fd >= 0 && now - c->last_ms > CB_CONN_IDLE_MS)
				conn_close(c);
			for (unsigned j = 0; j < FWD_PER_CONN; j++)
				if (c->fwd[j].port && now > c->fwd[j].until)
					c->fwd[j].port = 0; /* no answer: the server asks again */
		}
		if (pfd[1].revents & POLLIN)
			conn_accept(n, now);
	}
	return NULL;
}

/* Register or unregister (set 0) our callback port for family's netid
 * over proto (udp, udp6, tcp, tcp6) with this host's rpcbind, over TCP so that a host without one
 * answers at once. 1 if done: another client of this host may hold the slot
 * (it forwards our GRANTED), or no rpcbind runs (then blocked requests are
 * asked again every repoll_s). */
static int rpcb_call_local(struct nlmc *n, int set, int family, int proto)
{
	struct timeval tv = {.tv_sec = 2, .tv_usec = 0};
	struct sockaddr_storage sa;
	struct rpcb_call q;
	socklen_t salen = net_addr_loopback4(AF_INET, PMAPPORT, &sa);
	CLIENT *c;

	rpcb_set_call(&q, set, family, NLM_PROGRAM, NLM_V4, proto, n->cbport);
	if ((c = nlmc_tcp_client(&sa, salen, PMAPPROG, q.vers, 2000)) == NULL)
		return 0;
	if (clnt_call(c, q.proc, q.xdr_args, q.args, q.xdr_res, q.res, tv) != RPC_SUCCESS)
		q.ok = FALSE;
	clnt_destroy(c);
	return q.ok == TRUE;
}

/* Listen on the callback port over TCP too (the family of the UDP socket):
 * a server calls back over the transport our calls came by, which is TCP.
 * 0, or -errno with *why (the port taken over TCP: callbacks come over UDP
 * only). */
static int listen_tcp(struct nlmc *n, const char **why)
{
	char port[16];
	int fd, e;

	snprintf(port, sizeof(port), "%u", n->cbport);
	*why = "cannot listen";
	fd = net_listen_tcp(n->cbfamily == AF_INET6 ? "::" : "0.0.0.0", port, CB_CONNS, why);
	if (fd >= 0 && fcntl(fd, F_SETFL, O_NONBLOCK) != 0) {
		e = errno;
		*why = strerror(e);
		close(fd);
		fd = -e;
	}
	if (fd < 0)
		return fd;
	n->cbtcp = fd;
	return 0;
}

/* The callback port: UDP at p->cbport, and TCP on the same number. Left to
 * the kernel (0), a UDP port whose number is taken over TCP (by a listener,
 * or by a connection this host made, in TIME_WAIT too) is kept aside while
 * another is taken (so that it does not come again), up to CB_PORT_TRIES;
 * after those, at a port asked for, or on another error of TCP, callbacks
 * come over UDP only. 0, or -errno of UDP (said in err). */
static int bind_port(struct nlmc *n, char *err, size_t errlen)
{
	int aside[CB_PORT_TRIES], naside = 0, rc = 0, port = 0;
	const char *why = "";

	for (;;) {
		if ((n->cbfd = net_udp_socket(n->p.cbport, 0, &n->cbfamily)) < 0 ||
		    (port = net_local_port(n->cbfd)) < 0) {
			rc = n->cbfd < 0 ? n->cbfd : port;
			snprintf(err, errlen, "lock callbacks: cannot bind UDP port %u: %s",
				 n->p.cbport, strerror(-rc));
			break;
		}
		n->cbport = (unsigned short)port;
		rc = listen_tcp(n, &why);
		if (rc != -EADDRINUSE || n->p.cbport != 0 || naside + 1 == CB_PORT_TRIES) {
			if (rc != 0)
				log_info("locks: no NLM callbacks over TCP on port %u: %s",
					 n->cbport, why);
			rc = 0;
			break;
		}
		aside[naside++] = n->cbfd;
	}
	while (naside > 0)
		close(aside[--naside]);
	return rc;
}

/* See nlm_clnt.h. */
int nlmc_start(const struct nlmc_params *p, struct nlmc **out, char *err, size_t errlen)
{
	struct nlmc *n = calloc(1, sizeof(*n));
	int rc;

	if (n == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	n->p = *p;
	n->cbfd = n->cbtcp = -1;
	for (unsigned i = 0; i < CB_CONNS; i++)
		n->conns[i].fd = -1;
	snprintf(n->host, sizeof(n->host), "%s", p->host);
	if (gethostname(n->caller, sizeof(n->caller) - 1) != 0 || n->caller[0] == '\0')
		snprintf(n->caller, sizeof(n->caller), "localhost");
	if (getrandom(n->cookie, sizeof(n->cookie), 0) != (ssize_t)sizeof(n->cookie) ||
	    getrandom(&n->state, sizeof(n->state), 0) != (ssize_t)sizeof(n->state)) {
		snprintf(err, errlen, "no random numbers: %s", strerror(errno));
		free(n);
		return -EIO;
	}
	n->state |= 1; /* odd: up */
	pthread_mutex_init(&n->call_lock, NULL);
	pthread_cond_init(&n->connect_end, NULL);
	pthread_mutex_init(&n->lock, NULL);
	pthread_cond_init(&n->reclaim_cond, NULL);
	n->held.max_owners = p->max_owners;
	if ((rc = bind_port(n, err, errlen)) != 0) {
		nlmc_stop(n);
		return rc;
	}
	n->cb_local = (rc = net_udp_pktinfo(n->cbfd, n->cbfamily)) == 0;
	if (rc != 0)
		log_warn("locks: the callback port cannot tell its address (%s): GRANTED forwarded "
			 "by another mount of this host is not taken, nor one over TCP passed to "
			 "it",
			 strerror(-rc));
	if (pthread_create(&n->thread, NULL, cb_main, n) != 0) {
		snprintf(err, errlen, "cannot start a thread");
		nlmc_stop(n);
		return -EAGAIN;
	}
	n->thread_started = 1;
	if (pthread_create(&n->reclaimer, NULL, nlmc_reclaim_main, n) != 0) {
		snprintf(err, errlen, "cannot start a thread");
		nlmc_stop(n);
		return -EAGAIN;
	}
	n->reclaimer_started = 1;
	if (!p->no_rpcbind) {
		n->registered = rpcb_call_local(n, 1, AF_INET, IPPROTO_UDP) ? REG_IPV4 : 0;
		if (n->cbfamily == AF_INET6 && rpcb_call_local(n, 1, AF_INET6, IPPROTO_UDP))
			n->registered |= REG_IPV6;
		if (n->cbtcp >= 0 && rpcb_call_local(n, 1, AF_INET, IPPROTO_TCP))
			n->registered |= REG_TCP4;
		if (n->cbtcp >= 0 && n->cbfamily == AF_INET6 &&
		    rpcb_call_local(n, 1, AF_INET6, IPPROTO_TCP))
			n->registered |= REG_TCP6;
	}
	if (!n->registered && !p->no_rpcbind)
		log_info("locks: NLM callbacks on port %u are not registered with rpcbind",
			 n->cbport);
	*out = n;
	return 0;
}

/* See nlm_clnt.h. */
void nlmc_stop(struct nlmc *n)
{
	if (n == NULL)
		return;
	if (n->registered & REG_IPV4)
		(void)rpcb_call_local(n, 0, AF_INET, IPPROTO_UDP);
	if (n->registered & REG_IPV6)
		(void)rpcb_call_local(n, 0, AF_INET6, IPPROTO_UDP);
	if (n->registered & REG_TCP4)
		(void)rpcb_call_local(n, 0, AF_INET, IPPROTO_TCP);
	if (n->registered & REG_TCP6)
		(void)rpcb_call_local(n, 0, AF_INET6, IPPROTO_TCP);
	pthread_mutex_lock(&n->lock);
	__atomic_store_n(&n->stop, 1, __ATOMIC_RELEASE);
	pthread_cond_signal(&n->reclaim_cond);
	pthread_mutex_unlock(&n->lock);
	if (n->thread_started)
		pthread_join(n->thread, NULL);
	if (n->reclaimer_started)
		pthread_join(n->reclaimer, NULL);
	if (n->cbfd >= 0)
		close(n->cbfd);
	if (n->cbtcp >= 0)
		close(n->cbtcp);
	for (unsigned i = 0; i < CB_CONNS; i++)
		conn_close(&n->conns[i]);
	nlmc_disconnect(n);
	nlmc_held_clear(&n->held);
	pthread_cond_destroy(&n->reclaim_cond);
	pthread_cond_destroy(&n->connect_end);
	pthread_mutex_destroy(&n->call_lock);
	pthread_mutex_destroy(&n->lock);
	free(n);
}

/* See nlm_clnt.h. */
unsigned nlmc_cbport(const struct nlmc *n)
{
	return n->cbport;
}
