/*
 * nlm_cb.c: the nlm thread. It makes the calls the lock manager owes clients
 * (GRANTED, the _RES answers of the asynchronous procedures, SM_NOTIFY after
 * a restart), each to the port the client's rpcbind names, over UDP, with a
 * bounded number of tries; and every NLM_TICK_MS (or sooner when kicked) it
 * lets nlm_tick retry blocked requests. The queue is bounded (NLM_CB_QUEUE);
 * one thread serves every client, so a client that does not answer costs the
 * others at most CB_TRY_MS per try.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <rpc/rpc.h>
#include <rpc/clnt_soc.h>
#include <rpc/pmap_prot.h>

#include "common/base/clock.h"
#include "common/base/log.h"
#include "server/nlm_int.h"

#define CB_TRY_MS   1500 /* one try: the call and its UDP retransmissions */
#define CB_PAUSE_MS 2000 /* between tries */
#define CB_ARGS_MAX 4096 /* encoded arguments of one call */
#define CB_PER_PEER                                                                                \
	32 /* calls waiting for one client: a flood of _MSG calls                                  \
	      cannot fill the queue that others' GRANTED go through */

struct cb_job {
	struct cb_job *next;
	struct sockaddr_in addr;
	uint32_t prog, vers, proc;
	char args[CB_ARGS_MAX];
	u_int args_len;
	xdrproc_t xdr_res;
	size_t res_size;
	nlm_cb_done done;
	void *arg;
	unsigned tries_left;
	uint64_t due_ms;
};

struct nlm_cb {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	int started, stopping, kicked;
	struct cb_job *head;
	unsigned njobs;
};

/* Arguments encoded in advance, put on the wire as they are. */
struct raw_args {
	char *p;
	u_int len;
};

static bool_t xdr_raw_args(XDR *xdrs, struct raw_args *r)
{
	return xdrs->x_op != XDR_ENCODE || XDR_PUTBYTES(xdrs, r->p, r->len);
}

static bool_t xdr_nothing(XDR *xdrs, void *unused)
{
	(void)xdrs;
	(void)unused;
	return TRUE;
}

/* The client's port for prog/vers over UDP, from its rpcbind (PMAP v2): 0
 * when it has none or does not answer. */
static unsigned short client_port(struct nlm *n, struct sockaddr_in sin, uint32_t prog,
				  uint32_t vers)
{
	struct timeval wait = {0, 500000}, total = {1, 500000};
	struct pmap pm = {.pm_prog = prog, .pm_vers = vers, .pm_prot = IPPROTO_UDP};
	unsigned short port = 0;
	int sock = RPC_ANYSOCK;
	CLIENT *c;

	sin.sin_port = htons((unsigned short)n->p.client_rpcbind_port);
	if ((c = clntudp_create(&sin, NLM_PMAP_PROGRAM, NLM_PMAP_V2, wait, &sock)) == NULL)
		return 0;
	if (clnt_call(c, NLM_PMAP_GETPORT, (xdrproc_t)xdr_pmap, (char *)&pm, (xdrproc_t)xdr_u_short,
		      (char *)&port, total) != RPC_SUCCESS)
		port = 0;
	clnt_destroy(c);
	return port;
}

/* One try of j: 0 with *res decoded (if j has a result), or -1. */
static int try_call(struct nlm *n, struct cb_job *j, void *res)
{
	struct timeval wait = {0, 500000}, total = {CB_TRY_MS / 1000, (CB_TRY_MS % 1000) * 1000};
	struct raw_args ra = {j->args, j->args_len};
	struct sockaddr_in sin = j->addr;
	int sock = RPC_ANYSOCK, rc = -1;
	CLIENT *c;

	if ((sin.sin_port = htons(client_port(n, sin, j->prog, j->vers))) == 0)
		return -1;
	if ((c = clntudp_create(&sin, j->prog, j->vers, wait, &sock)) == NULL)
		return -1;
	if (clnt_call(c, j->proc, (xdrproc_t)xdr_raw_args, (char *)&ra,
		      j->xdr_res ? j->xdr_res : (xdrproc_t)xdr_nothing, res, total) == RPC_SUCCESS)
		rc = 0;
	clnt_destroy(c);
	return rc;
}

/* Run j once: done, or back in the queue for another try. */
static void run_job(struct nlm *n, struct cb_job *j)
{
	struct nlm_cb *cb = n->cb;
	void *res = j->res_size ? calloc(1, j->res_size) : NULL;
	int ok = (j->res_size == 0 || res != NULL) && try_call(n, j, res) == 0;

	if (!ok && --j->tries_left > 0) {
		free(res);
		pthread_mutex_lock(&cb->lock);
		j->due_ms = nlm_now_ms() + CB_PAUSE_MS;
		j->next = cb->head;
		cb->head = j;
		cb->njobs++;
		pthread_mutex_unlock(&cb->lock);
		return;
	}
	if (!ok) {
		char ip[INET_ADDRSTRLEN] = "?";

		inet_ntop(AF_INET, &j->addr.sin_addr, ip, sizeof(ip));
		log_info("NLM: call %u of program %u to %s went unanswered", j->proc, j->prog, ip);
	}
	if (j->done)
		j->done(n, j->arg, ok, ok ? res : NULL);
	if (res) {
		xdr_free(j->xdr_res, res);
		free(res);
	}
	free(j);
}

/* The first job due by now, out of the queue; else NULL and *wait_ms. */
static struct cb_job *take_due(struct nlm_cb *cb, long *wait_ms)
{
	uint64_t now = nlm_now_ms(), first = now + NLM_TICK_MS;
	struct cb_job **best = NULL, *j;

	for (struct cb_job **p = &cb->head; *p; p = &(*p)->next) {
		if ((*p)->due_ms <= now && (best == NULL || (*p)->due_ms < (*best)->due_ms))
			best = p;
		if ((*p)->due_ms < first)
			first = (*p)->due_ms;
	}
	if (best == NULL) {
		*wait_ms = first > now ? (long)(first - now) : 0;
		return NULL;
	}
	j = *best;
	*best = j->next;
	cb->njobs--;
	return j;
}

static void *cb_main(void *arg)
{
	struct nlm *n = arg;
	struct nlm_cb *cb = n->cb;
	uint64_t next_tick = nlm_now_ms() + NLM_TICK_MS;
	struct cb_job *j;
	long wait_ms;

	pthread_mutex_lock(&cb->lock);
	while (!cb->stopping) {
		if (cb->kicked || nlm_now_ms() >= next_tick) {
			cb->kicked = 0;
			pthread_mutex_unlock(&cb->lock);
			nlm_tick(n);
			pthread_mutex_lock(&cb->lock);
			next_tick = nlm_now_ms() + NLM_TICK_MS;
			continue;
		}
		if ((j = take_due(cb, &wait_ms)) != NULL) {
			pthread_mutex_unlock(&cb->lock);
			run_job(n, j);
			pthread_mutex_lock(&cb->lock);
			continue;
		}
		if (nlm_now_ms() + (uint64_t)wait_ms > next_tick)
			wait_ms = (long)(next_tick - nlm_now_ms());
		if (wait_ms > 0) {
			struct timespec ts = clock_deadline(CLOCK_REALTIME, wait_ms);

			pthread_cond_timedwait(&cb->cond, &cb->lock, &ts);
		}
	}
	pthread_mutex_unlock(&cb->lock);
	return NULL;
}

/* See nlm_int.h. */
int nlm_cb_start(struct nlm *n)
{
	struct nlm_cb *cb = calloc(1, sizeof(*cb));
	int rc;

	if (cb == NULL)
		return -ENOMEM;
	pthread_mutex_init(&cb->lock, NULL);
	pthread_cond_init(&cb->cond, NULL);
	n->cb = cb;
	if ((rc = pthread_create(&cb->thread, NULL, cb_main, n)) != 0) {
		log_err("NLM: cannot start its thread: %s", strerror(rc));
		return -rc;
	}
	pthread_setname_np(cb->thread, "nlm");
	cb->started = 1;
	return 0;
}

/* See nlm_int.h. */
void nlm_cb_stop(struct nlm *n)
{
	struct nlm_cb *cb = n->cb;
	struct cb_job *j;

	if (cb == NULL)
		return;
	pthread_mutex_lock(&cb->lock);
	cb->stopping = 1;
	pthread_cond_signal(&cb->cond);
	pthread_mutex_unlock(&cb->lock);
	if (cb->started)
		pthread_join(cb->thread, NULL);
	while ((j = cb->head) != NULL) {
		cb->head = j->next;
		if (j->done)
			j->done(n, j->arg, -1, NULL);
		free(j);
	}
	pthread_cond_destroy(&cb->cond);
	pthread_mutex_destroy(&cb->lock);
	free(cb);
	n->cb = NULL;
}

/* Calls waiting for the client at addr. Under cb->lock. */
static unsigned peer_jobs(struct nlm_cb *cb, const struct sockaddr_in *addr)
{
	unsigned k = 0;

	for (struct cb_job *j = cb->head; j; j = j->next)
		k += j->addr.sin_addr.s_addr == addr->sin_addr.s_addr;
	return k;
}

/* See nlm_int.h. */
int nlm_cb_call(struct nlm *n, const struct sockaddr *addr, socklen_t alen, uint32_t prog,
		uint32_t vers, uint32_t proc, xdrproc_t xdr_args, const void *args,
		xdrproc_t xdr_res, size_t res_size, nlm_cb_done done, void *arg)
{
	struct nlm_cb *cb = n->cb;
	struct cb_job *j;
	XDR xdrs;
	int ok;

	if (addr == NULL || addr->sa_family != AF_INET || alen < sizeof(struct sockaddr_in)) {
		log_info("NLM: no call back to a client that is not on IPv4");
		return -EAFNOSUPPORT;
	}
	if ((j = calloc(1, sizeof(*j))) == NULL)
		return -ENOMEM;
	xdrmem_create(&xdrs, j->args, sizeof(j->args), XDR_ENCODE);
	ok = xdr_args(&xdrs, (void *)args);
	j->args_len = xdr_getpos(&xdrs);
	xdr_destroy(&xdrs);
	if (!ok) {
		free(j);
		return -EMSGSIZE;
	}
	memcpy(&j->addr, addr, sizeof(j->addr));
	j->prog = prog;
	j->vers = vers;
	j->proc = proc;
	j->xdr_res = xdr_res;
	j->res_size = res_size;
	j->done = done;
	j->arg = arg;
	/* an answer to a _MSG call (no one waits for it) is sent once: the
	 * client asks again if it is lost */
	j->tries_left = done == NULL ? 1 : n->p.callback_retries ? n->p.callback_retries : 1;
	j->due_ms = nlm_now_ms();
	pthread_mutex_lock(&cb->lock);
	if (cb->njobs >= NLM_CB_QUEUE || peer_jobs(cb, &j->addr) >= CB_PER_PEER) {
		char ip[INET_ADDRSTRLEN] = "?";
		unsigned all = cb->njobs;

		pthread_mutex_unlock(&cb->lock);
		inet_ntop(AF_INET, &j->addr.sin_addr, ip, sizeof(ip));
		log_warn("NLM: too many calls back waiting (%u in all, at most %d per client): one "
			 "more to %s dropped",
			 all, CB_PER_PEER, ip);
		free(j);
		return -ENOSPC;
	}
	j->next = cb->head;
	cb->head = j;
	cb->njobs++;
	pthread_cond_signal(&cb->cond);
	pthread_mutex_unlock(&cb->lock);
	return 0;
}

/* See nlm_int.h. */
void nlm_cb_kick(struct nlm *n)
{
	struct nlm_cb *cb = n->cb;

	if (cb == NULL)
		return;
	pthread_mutex_lock(&cb->lock);
	cb->kicked = 1;
	pthread_cond_signal(&cb->cond);
	pthread_mutex_unlock(&cb->lock);
}
