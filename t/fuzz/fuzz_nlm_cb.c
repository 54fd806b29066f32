/*
 * fuzz_nlm_cb: libFuzzer target for the nfsrdma-client's lock callback
 * service (client/nlm_clnt_cb.c), the UDP port where anyone on the network
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
 * server) has the reclaimer send GRANTED_RES to the refusing port. The
 * record-marked TCP path (conn_read) is not fuzzed. Built by `make fuzz`, run
 * by `make fuzz-run`.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
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
	pthread_mutex_lock(&nlmc->lock);
	blocked.granted = 0; /* still blocked, as wait_for leaves it after a wake */
	pthread_mutex_unlock(&nlmc->lock);
	return 0;
}
