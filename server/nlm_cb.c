/*
 * nlm_cb.c: the nlm event loop. It makes the calls the lock manager owes
 * clients (GRANTED, the _RES answers of the asynchronous procedures,
 * SM_NOTIFY after a restart) and, every NLM_TICK_MS or sooner when kicked,
 * lets nlm_tick retry blocked requests. Calls go over one non-blocking UDP
 * socket (IPv6 taking IPv4 too, or IPv4 only on a host without IPv6) and
 * never wait: each asks the client's rpcbind for the port of the program
 * (rpcb.h: PMAP GETPORT over IPv4, RPCB GETADDR over IPv6), then calls it
 * there, resending every CB_RESEND_MS;
 * a try that gets no answer within CB_TRY_MS is tried again after
 * CB_PAUSE_MS, up to server.nlm.callback_retries tries. So a client that does
 * not answer delays no one else's calls. The queue is bounded: NLM_CB_QUEUE
 * calls in all, CB_PER_PEER for one client.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <rpc/rpc.h>
#include <rpc/pmap_prot.h>

#include "common/base/evloop.h"
#include "common/base/log.h"
#include "common/base/net.h"
#include "common/rpc/rpcb.h"
#include "server/nlm_int.h"

#define CB_TRY_MS    1500 /* one try: GETPORT and the call, with resends */
#define CB_RESEND_MS 500  /* a datagram without an answer is sent again */
#define CB_PAUSE_MS  2000 /* between tries */
#define CB_STEP_MS   100  /* how often resends and due calls are looked at */
#define CB_ARGS_MAX  4096 /* encoded arguments of one call */
#define CB_MSG_MAX   (CB_ARGS_MAX + 512)
#define CB_PER_PEER                                                                                \
	32 /* calls waiting for one client: a flood of _MSG calls                                  \
	      cannot fill the queue that others' GRANTED go through */

enum cb_state {
	CB_IDLE,      /* waiting for due_ms */
	CB_WAIT_PORT, /* GETPORT sent to the client's rpcbind */
	CB_WAIT_REPLY /* the call sent */
};

struct cb_job {
	struct cb_job *next;
	struct sockaddr_storage addr; /* the client, as the socket sends to it; the port is found */
	socklen_t addrlen;
	uint32_t prog, vers, proc;
	char args[CB_ARGS_MAX];
	u_int args_len;
	xdrproc_t xdr_res;
	size_t res_size;
	nlm_cb_done done;
	void *arg;
	unsigned tries_left;
	enum cb_state state;
	uint32_t xid;
	unsigned short port;
	uint64_t due_ms, try_end_ms, resend_ms;
};

struct nlm_cb {
	pthread_mutex_t lock; /* the queue: any thread adds, the loop runs it */
	struct cb_job *head;
	unsigned njobs;
	struct evloop *loop;
	int fd, family; /* the UDP socket all calls go out on, AF_INET6 or AF_INET */
	uint32_t next_xid;
	unsigned steps; /* CB_STEP_MS ticks since the last nlm_tick */
};

static bool_t xdr_nothing(XDR *xdrs, void *unused)
{
	(void)xdrs;
	(void)unused;
	return TRUE;
}

/* Encode a call of prog/vers/proc (AUTH_NONE) with xid and its arguments
 * (xdr_args over args, or the raw bytes raw/rawlen) into buf; its length or 0. */
static u_int encode_call(char *buf, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
			 xdrproc_t xdr_args, void *args, const char *raw, u_int rawlen)
{
	struct rpc_msg msg;
	u_int len = 0;
	XDR xdrs;

	memset(&msg, 0, sizeof(msg));
	msg.rm_xid = xid;
	msg.rm_direction = CALL;
	msg.rm_call.cb_rpcvers = RPC_MSG_VERSION;
	msg.rm_call.cb_prog = prog;
	msg.rm_call.cb_vers = vers;
	msg.rm_call.cb_proc = proc;
	msg.rm_call.cb_cred.oa_flavor = AUTH_NONE;
	msg.rm_call.cb_verf.oa_flavor = AUTH_NONE;
	xdrmem_create(&xdrs, buf, CB_MSG_MAX, XDR_ENCODE);
	if (xdr_callmsg(&xdrs, &msg) &&
	    (xdr_args ? xdr_args(&xdrs, args) : XDR_PUTBYTES(&xdrs, (char *)raw, rawlen)))
		len = xdr_getpos(&xdrs);
	xdr_destroy(&xdrs);
	return len;
}

/* The question for j's port to the client's rpcbind, in q. */
static void getport_call(const struct cb_job *j, struct rpcb_call *q)
{
	rpcb_getport_call(q, net_addr_is_v6((const struct sockaddr *)&j->addr) ? AF_INET6 : AF_INET,
			  j->prog, j->vers, IPPROTO_UDP);
}

/* Send j's current message (GETPORT, or the call) again or for the first time. */
static void send_job(struct nlm *n, struct cb_job *j)
{
	struct nlm_cb *cb = n->cb;
	struct sockaddr_storage to = j->addr;
	char buf[CB_MSG_MAX];
	struct rpcb_call q;
	u_int len;

	if (j->state == CB_WAIT_PORT) {
		getport_call(j, &q);
		net_addr_set_port(&to, n->p.client_rpcbind_port);
		len = encode_call(buf, j->xid, PMAPPROG, q.vers, q.proc, q.xdr_args, q.args, NULL,
				  0);
	} else {
		net_addr_set_port(&to, j->port);
		len = encode_call(buf, j->xid, j->prog, j->vers, j->proc, NULL, NULL, j->args,
				  j->args_len);
	}
	if (len)
		(void)sendto(cb->fd, buf, len, 0, (struct sockaddr *)&to, j->addrlen);
	j->resend_ms = nlm_now_ms() + CB_RESEND_MS;
}

/* Start a try of j now: ask the client's rpcbind first. */
static void start_try(struct nlm *n, struct cb_job *j)
{
	j->state = CB_WAIT_PORT;
	j->xid = n->cb->next_xid++;
	j->try_end_ms = nlm_now_ms() + CB_TRY_MS;
	send_job(n, j);
}

/* Take j out of the queue. Under cb->lock. */
static void unlink_job(struct nlm_cb *cb, struct cb_job *j)
{
	for (struct cb_job **p = &cb->head; *p; p = &(*p)->next) {
		if (*p == j) {
			*p = j->next;
			cb->njobs--;
			return;
		}
	}
}

/* j is over (out of the queue): tell its owner, free it. No lock held. */
static void finish(struct nlm *n, struct cb_job *j, int ok, void *res)
{
	if (!ok) {
		char ip[NET_HOST_STRLEN];

		log_info("NLM: call %u of program %u to %s went unanswered", j->proc, j->prog,
			 net_host_str((const struct sockaddr *)&j->addr, ip, sizeof(ip)));
	}
	if (j->done)
		j->done(n, j->arg, ok, ok ? res : NULL);
	free(j);
}

/* A try of j failed: another later, or the end. Under cb->lock; returns j
 * when it is over (unlinked), else NULL. */
static struct cb_job *try_failed(struct nlm_cb *cb, struct cb_job *j)
{
	if (--j->tries_left > 0) {
		j->state = CB_IDLE;
		j->due_ms = nlm_now_ms() + CB_PAUSE_MS;
		return NULL;
	}
	unlink_job(cb, j);
	return j;
}

/* Start due calls, resend unanswered ones, end tries past their time. */
static void pump(struct nlm *n)
{
	struct nlm_cb *cb = n->cb;
	struct cb_job *j, *over;
	uint64_t now = nlm_now_ms();

	for (;;) {
		over = NULL;
		pthread_mutex_lock(&cb->lock);
		for (j = cb->head; j && !over; j = j->next) {
			if (j->state == CB_IDLE && now >= j->due_ms)
				start_try(n, j);
			else if (j->state != CB_IDLE && now >= j->try_end_ms)
				over = try_failed(cb, j);
			else if (j->state != CB_IDLE && now >= j->resend_ms)
				send_job(n, j);
		}
		pthread_mutex_unlock(&cb->lock);
		if (over == NULL)
			return;
		finish(n, over, 0, NULL);
	}
}

/* The reply to the GETPORT or the call of the job with xid, in buf. */
static void got_reply(struct nlm *n, const char *buf, size_t len,
		      const struct sockaddr_storage *from)
{
	struct nlm_cb *cb = n->cb;
	struct cb_job *j, *over = NULL;
	unsigned short port = 0;
	struct rpcb_call q;
	struct rpc_msg msg;
	void *res = NULL;
	uint32_t xid;
	int ok;
	XDR xdrs;

	if (len < 4)
		return;
	memcpy(&xid, buf, 4);
	xid = ntohl(xid);
	pthread_mutex_lock(&cb->lock);
	for (j = cb->head; j; j = j->next)
		if (j->state != CB_IDLE && j->xid == xid && net_same_host(&j->addr, from))
			break;
	if (j == NULL) {
		pthread_mutex_unlock(&cb->lock);
		return; /* late, or not ours */
	}
	if (j->state == CB_WAIT_REPLY && j->res_size && (res = calloc(1, j->res_size)) == NULL) {
		pthread_mutex_unlock(&cb->lock);
		return;
	}
	getport_call(j, &q);
	memset(&msg, 0, sizeof(msg));
	msg.acpted_rply.ar_verf = _null_auth;
	msg.acpted_rply.ar_results.where = j->state == CB_WAIT_PORT ? q.res : res;
	msg.acpted_rply.ar_results.proc = j->state == CB_WAIT_PORT ? q.xdr_res
					  : j->xdr_res		   ? j->xdr_res
								   : (xdrproc_t)xdr_nothing;
	xdrmem_create(&xdrs, (char *)buf, (u_int)len, XDR_DECODE);
	ok = xdr_replymsg(&xdrs, &msg) && msg.rm_reply.rp_stat == MSG_ACCEPTED &&
	     msg.acpted_rply.ar_stat == SUCCESS;
	xdr_destroy(&xdrs);
	if (j->state == CB_WAIT_PORT)
		port = (unsigned short)rpcb_getport_result(&q);
	if (j->state == CB_WAIT_PORT && ok && port != 0) {
		j->port = port;
		j->state = CB_WAIT_REPLY;
		j->xid = cb->next_xid++;
		send_job(n, j);
	} else if (j->state == CB_WAIT_PORT || !ok) {
		over = try_failed(cb, j); /* no such program there, or refused */
	} else {
		xdrproc_t proc = msg.acpted_rply.ar_results.proc;

		unlink_job(cb, j);
		pthread_mutex_unlock(&cb->lock);
		finish(n, j, 1, res);
		if (res) {
			xdr_free(proc, res);
			free(res);
		}
		return;
	}
	pthread_mutex_unlock(&cb->lock);
	if (res) {
		xdr_free(msg.acpted_rply.ar_results.proc, res);
		free(res);
	}
	if (over)
		finish(n, over, 0, NULL);
}

/* The socket is readable: every datagram waiting. */
static void on_readable(void *arg)
{
	struct nlm *n = arg;
	char buf[CB_MSG_MAX];
	struct sockaddr_storage from;
	socklen_t flen;
	ssize_t got;

	for (;;) {
		flen = sizeof(from);
		got = recvfrom(n->cb->fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &flen);
		if (got < 0)
			return;
		if (flen <= sizeof(from) && from.ss_family == n->cb->family)
			got_reply(n, buf, (size_t)got, &from);
	}
}

/* Every CB_STEP_MS: the calls, and every NLM_TICK_MS the lock manager's tick. */
static void on_step(void *arg)
{
	struct nlm *n = arg;

	pump(n);
	if (++n->cb->steps >= NLM_TICK_MS / CB_STEP_MS) {
		n->cb->steps = 0;
		nlm_tick(n);
	}
}

/* Kicked: the lock manager's tick now, then whatever it queued. */
static void on_kick(void *arg)
{
	struct nlm *n = arg;

	nlm_tick(n);
	pump(n);
}

/* A call was queued: start it now. */
static void on_queued(void *arg)
{
	pump(arg);
}

/* See nlm_int.h. */
int nlm_cb_start(struct nlm *n)
{
	struct nlm_cb *cb = calloc(1, sizeof(*cb));
	int rc;

	if (cb == NULL)
		return -ENOMEM;
	pthread_mutex_init(&cb->lock, NULL);
	n->cb = cb;
	cb->next_xid = (uint32_t)nlm_now_ms() * 2654435761u;
	if ((cb->fd = net_udp_socket(0, SOCK_NONBLOCK, &cb->family)) < 0) {
		log_err("NLM: no UDP socket for calls to clients: %s", strerror(-cb->fd));
		return cb->fd;
	}
	if ((rc = evloop_create(&cb->loop)) != 0 ||
	    (rc = evloop_add(cb->loop, cb->fd, on_readable, n)) != 0 ||
	    (rc = evloop_add_timer(cb->loop, CB_STEP_MS, on_step, n, NULL)) != 0 ||
	    (rc = evloop_start(cb->loop, "nlm")) != 0) {
		log_err("NLM: cannot start its event loop: %s", strerror(-rc));
		return rc;
	}
	return 0;
}

/* See nlm_int.h. */
void nlm_cb_halt(struct nlm *n)
{
	if (n->cb && n->cb->loop) {
		evloop_destroy(n->cb->loop);
		n->cb->loop = NULL;
	}
}

/* See nlm_int.h. */
void nlm_cb_stop(struct nlm *n)
{
	struct nlm_cb *cb = n->cb;
	struct cb_job *j;

	if (cb == NULL)
		return;
	if (cb->loop)
		evloop_destroy(cb->loop);
	if (cb->fd >= 0)
		close(cb->fd);
	while ((j = cb->head) != NULL) {
		cb->head = j->next;
		if (j->done)
			j->done(n, j->arg, -1, NULL);
		free(j);
	}
	pthread_mutex_destroy(&cb->lock);
	free(cb);
	n->cb = NULL;
}

/* Calls waiting for the client at addr. Under cb->lock. */
static unsigned peer_jobs(struct nlm_cb *cb, const struct sockaddr_storage *addr)
{
	unsigned k = 0;

	for (struct cb_job *j = cb->head; j; j = j->next)
		k += net_same_host(&j->addr, addr);
	return k;
}

/* See nlm_int.h. */
int nlm_cb_call(struct nlm *n, const struct sockaddr *addr, socklen_t alen, uint32_t prog,
		uint32_t vers, uint32_t proc, xdrproc_t xdr_args, const void *args,
		xdrproc_t xdr_res, size_t res_size, nlm_cb_done done, void *arg)
{
	struct nlm_cb *cb = n->cb;
	struct sockaddr_storage ss;
	struct cb_job *j;
	XDR xdrs;
	int ok;

	if (cb == NULL || cb->loop == NULL)
		return -ESHUTDOWN; /* stopping */
	if (addr == NULL || alen > sizeof(ss) ||
	    !((addr->sa_family == AF_INET && alen >= sizeof(struct sockaddr_in)) ||
	      (addr->sa_family == AF_INET6 && alen >= sizeof(struct sockaddr_in6)))) {
		log_info("NLM: no call back to a client that is not on IP");
		return -EAFNOSUPPORT;
	}
	memset(&ss, 0, sizeof(ss));
	memcpy(&ss, addr, alen);
	if ((j = calloc(1, sizeof(*j))) == NULL)
		return -ENOMEM;
	if ((j->addrlen = net_addr_for(cb->family, &ss, &j->addr)) == 0) {
		free(j);
		log_info("NLM: no call back to an IPv6 client from a host without IPv6");
		return -EAFNOSUPPORT;
	}
	xdrmem_create(&xdrs, j->args, sizeof(j->args), XDR_ENCODE);
	ok = xdr_args(&xdrs, (void *)args);
	j->args_len = xdr_getpos(&xdrs);
	xdr_destroy(&xdrs);
	if (!ok) {
		free(j);
		return -EMSGSIZE;
	}
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
	j->state = CB_IDLE;
	j->due_ms = nlm_now_ms();
	pthread_mutex_lock(&cb->lock);
	if (cb->njobs >= NLM_CB_QUEUE || peer_jobs(cb, &j->addr) >= CB_PER_PEER) {
		char ip[NET_HOST_STRLEN];
		unsigned all = cb->njobs;

		pthread_mutex_unlock(&cb->lock);
		net_host_str((const struct sockaddr *)&j->addr, ip, sizeof(ip));
		log_warn("NLM: too many calls back waiting (%u in all, at most %d per client): one "
			 "more to %s dropped",
			 all, CB_PER_PEER, ip);
		free(j);
		return -ENOSPC;
	}
	j->next = cb->head;
	cb->head = j;
	cb->njobs++;
	pthread_mutex_unlock(&cb->lock);
	if (evloop_call(cb->loop, on_queued, n) != 0)
		log_debug("NLM: the loop will start the call at its next step");
	return 0;
}

/* See nlm_int.h. */
void nlm_cb_kick(struct nlm *n)
{
	if (n->cb && n->cb->loop && evloop_call(n->cb->loop, on_kick, n) != 0)
		log_debug("NLM: blocked requests will be tried at the next tick");
}
