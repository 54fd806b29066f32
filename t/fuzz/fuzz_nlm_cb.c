/*
 * fuzz_nlm_cb: libFuzzer target for the nfsrdma-client's lock callback
 * service (client/nlm_clnt_cb*.c), the UDP port where anyone on the network
 * reaches a client that runs as root: the server's GRANTED callbacks,
 * SM_NOTIFY, GRANTED calls another client of this host forwards (FWD_MAGIC)
 * and rpcbind's GETPORT and GETADDR. Each input is one datagram from 127.0.0.1 (so that the
 * forwarded kind is taken as such), handed to the service's handler
 * (nlmc_serve_datagram) as its thread would after recvfrom: what is fuzzed is
 * the RPC call header, the arguments, the matching of a GRANTED against the
 * blocked requests, forwarding, the wake of the reclaimer and the answers.
 *
 * The client comes from nlmc_start, as a mount's does, but does not register
 * with this host's rpcbind (a registration left behind would take real
 * clients' callbacks). Its server, 127.0.0.1 at a TCP port the harness holds
 * bound without listening, refuses every call at once (the reclaimer calls it
 * while locks are held and on each SM_NOTIFY). Only a server's answers make a
 * lock held or a request blocked, so two held locks and one blocked request
 * are put in place through nlm_clnt_int.h, under a fixed cookie that the seeds
 * in t/fuzz/corpus/nlm_cb name (owner in host byte order; port 0: this
 * client). The service's sockets (UDP, and the TCP port it listens on) are
 * then replaced by an unbound AF_UNIX one: answers and forwards are encoded
 * but sent nowhere, since a forwarded datagram names where its answer goes
 * and a GRANTED's owner handle the local port to forward it to, and no
 * connection reaches the service. A GRANTED_MSG of ours from 127.0.0.1 (the
 * server) has the reclaimer send GRANTED_RES to the refusing port.
 *
 * Built with FUZZ_CB_TCP (fuzz_nlm_cbtcp.c, seeds in t/fuzz/corpus/nlm_cbtcp)
 * it fuzzes the TCP side instead: each input is one connection from
 * 127.0.0.1 to the service's reader (nlmc_conn_read), its record-marked calls
 * (fragments, lengths, records cut anywhere) served as above with the answers
 * on the connection, which the harness reads and drops. The input's first two
 * bytes are how many bytes go per write (1 to a record's most), the reader
 * running after each; the rest is the stream. The connection is the harness's
 * own (loopback, never listened for by the service's thread), reset at the
 * end of the input. Built by `make fuzz`, run by `make fuzz-run`.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "client/nlm_clnt_int.h"
#include "common/base/log.h"
#include "common/base/net.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define COOKIE	  "nlmcfuzz" /* this client's 8 bytes in every owner handle */
#define FH	  "FUZZFH-0" /* the one file, 8 bytes */
#define FROM_PORT 700	     /* where the datagrams come from */
#define HELD_A	  1	     /* owner of [0, 100) exclusive */
#define HELD_B	  2	     /* owner of [200, EOF) shared */
#define WAITING	  3	     /* waits for [0, 100) exclusive */

static struct nlmc *nlmc;
static struct nlmc_wait blocked;
/* from 127.0.0.1 to 127.0.0.1, as the service's socket sees it (so that the
 * forwarded kind is taken as such) */
static struct net_dgram_peer from;

/* A TCP port of 127.0.0.1 bound by us and never listened on: connecting to it
 * is refused. */
static unsigned refusing_port(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) != 0)
		abort();
	return ntohs(sa.sin_port); /* fd stays open for the process's life */
}

/* The service's socket, under the number its thread polls, becomes one from
 * which nothing can be sent to an IP address; checked. */
static void mute(struct nlmc *n)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	/* the TCP port too: no connection from outside reaches the service */
	if (fd < 0 || dup3(fd, n->cbfd, O_CLOEXEC) != n->cbfd ||
	    (n->cbtcp >= 0 && dup3(fd, n->cbtcp, O_CLOEXEC) != n->cbtcp))
		abort();
	close(fd);
	if (sendto(n->cbfd, "x", 1, 0, (struct sockaddr *)&from.sa, from.len) >= 0)
		abort();
}

/* The client, its held locks and its blocked request, made once. */
static void setup(void)
{
	struct nfs3c_fh fh = {.len = 8};
	struct nlmc_params p;
	char err[256];

	log_set_level(LOG_LVL_ERR);
	nlmc_params_defaults(&p);
	p.host = "127.0.0.1";
	p.port = refusing_port();
	p.no_rpcbind = 1;
	if (nlmc_start(&p, &nlmc, err, sizeof(err)) != 0)
		abort();
	if ((from.len = net_addr_loopback4(nlmc->cbfamily, FROM_PORT, &from.sa)) == 0 ||
	    net_addr_loopback4(nlmc->cbfamily, 0, &from.to) == 0)
		abort();
	mute(nlmc);
	memcpy(fh.data, FH, 8);
	blocked.fh = fh;
	blocked.owner = WAITING;
	blocked.off = 0;
	blocked.len = 100;
	blocked.excl = 1;
	pthread_cond_init(&blocked.cond, NULL);
	pthread_mutex_lock(&nlmc->lock);
	memcpy(nlmc->cookie, COOKIE, 8);
	if (nlmc_held_apply(&nlmc->held, &fh, HELD_A, 101, F_WRLCK, 0, 100) != 0 ||
	    nlmc_held_apply(&nlmc->held, &fh, HELD_B, 102, F_RDLCK, 200, 0) != 0)
		abort();
	blocked.next = nlmc->waiters;
	nlmc->waiters = &blocked;
	nlmc->nwaiters++;
	pthread_mutex_unlock(&nlmc->lock);
}

/* The blocked request waits again, as wait_for leaves it after a wake. */
static void rewait(void)
{
	pthread_mutex_lock(&nlmc->lock);
	blocked.granted = 0;
	pthread_mutex_unlock(&nlmc->lock);
}

#ifndef FUZZ_CB_TCP
/* One datagram, in a buffer of exactly its size (a read past it is caught). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf;

	if (!nlmc)
		setup();
	if ((buf = malloc(size ? size : 1)) == NULL)
		abort();
	memcpy(buf, data, size);
	nlmc_serve_datagram(nlmc, buf, size, &from);
	free(buf);
	rewait();
	return 0;
}
#else
/* A connection on loopback: *ours, the harness's end (non-blocking), and
 * c->fd, the service's (as conn_accept makes it). */
static void connect_pair(struct nlmc_cbconn *c, int *ours)
{
	static int lfd = -1;
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sa);

	if (lfd < 0 && ((lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
			bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(lfd, 1) != 0))
		abort();
	if (getsockname(lfd, (struct sockaddr *)&sa, &len) != 0 ||
	    (*ours = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    connect(*ours, (struct sockaddr *)&sa, len) != 0 ||
	    (c->fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) < 0 ||
	    fcntl(*ours, F_SETFL, O_NONBLOCK) != 0 ||
	    setsockopt(*ours, IPPROTO_TCP, TCP_NODELAY, &(int){1}, sizeof(int)) != 0)
		abort(); /* no delay: each write goes at once, none held back by Nagle */
	c->have = 0;
	c->last_ms = 0;
	len = sizeof(c->peer);
	if (getpeername(c->fd, (struct sockaddr *)&c->peer, &len) != 0)
		abort();
}

/* Bytes waiting on fd to be read (FIONREAD), or to be sent (SIOCOUTQNSD:
 * not yet sent; sent and not acknowledged, they have arrived on loopback). */
static int waiting(int fd, unsigned long what)
{
	int k = 0;

	return ioctl(fd, what, &k) == 0 ? k : 0;
}

/* Until all the harness wrote has reached the service's end and been read
 * (or the reader closed it), the answers read and dropped; at most 5 s. */
static void settle(struct nlmc_cbconn *c, int ours)
{
	struct pollfd p = {.fd = c->fd, .events = POLLIN};
	char sink[4096];

	for (int i = 0; c->fd >= 0 && i < 500; i++) {
		while (read(ours, sink, sizeof(sink)) > 0)
			;
		if (waiting(c->fd, FIONREAD) > 0)
			nlmc_conn_read(nlmc, c, 0);
		else if (waiting(ours, SIOCOUTQNSD) == 0)
			return;
		else
			(void)poll(&p, 1, 10);
	}
	if (c->fd >= 0)
		abort(); /* the bytes never came */
}

/* One connection: the stream written chunk bytes at a time, the service's
 * reader run after each until it has read what came (or closed); answers
 * read and dropped. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct nlmc_cbconn c;
	size_t chunk;
	int ours;

	if (!nlmc)
		setup();
	if (size < 2)
		return 0;
	chunk = 1 + ((size_t)data[0] << 8 | data[1]) % sizeof(c.buf);
	data += 2;
	size -= 2;
	connect_pair(&c, &ours);
	for (size_t off = 0; off < size && c.fd >= 0; off += chunk) {
		size_t k = size - off < chunk ? size - off : chunk;

		if (write(ours, data + off, k) != (ssize_t)k)
			abort(); /* at most a record's room: the socket takes it */
		settle(&c, ours);
	}
	/* the peer goes, with a reset (no TIME_WAIT: a run makes a connection
	 * per input, and the host's other sockets need its ports); the reader
	 * closes its end at the error */
	if (setsockopt(ours, SOL_SOCKET, SO_LINGER, &(struct linger){1, 0},
		       sizeof(struct linger)) != 0)
		abort();
	close(ours);
	if (c.fd >= 0) {
		struct pollfd p = {.fd = c.fd, .events = POLLIN};

		while (c.fd >= 0 && poll(&p, 1, 5000) == 1)
			nlmc_conn_read(nlmc, &c, 0);
		if (c.fd >= 0)
			abort(); /* the reset did not close it */
	}
	rewait();
	return 0;
}
#endif
