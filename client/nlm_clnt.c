/*
 * nlm_clnt.c: lock calls to the server's NLM v4 over TCP (one connection,
 * made at the first lock, calls of several threads on it at once, each
 * bounded by timeout_ms),
 * and the lock operations of nlm_clnt.h: TEST, LOCK (with the wait for a
 * blocked request's GRANTED), UNLOCK, and what each lock owner holds. A lock
 * owner is named on the wire by an owner handle of 18 bytes: this client's
 * random cookie, the kernel's lock owner, and our callback port, so that a
 * GRANTED reaching another nfsrdma-client of this host (the one rpcbind names)
 * is forwarded here. The callback service is nlm_clnt_cb.c (what it
 * answers) and nlm_clnt_cbsock.c (its sockets), reclaim after the server
 * restarts nlm_clnt_reclaim.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <rpc/rpc.h>
#include <rpc/pmap_prot.h>

#include "client/nlm_clnt_int.h"
#include "common/base/log.h"
#include "common/base/net.h"
#include "common/nfs/nlm_prog.h"
#include "common/nfs/nlm_prot.h"
#include "common/rpc/rpc_tcp.h"
#include "common/rpc/rpcb.h"

#define GRACE_WAIT_MS  1000 /* a request refused for the grace period is sent again */
#define GRACE_MAX_MS   (300 * 1000)
#define NLM_MAX_RECORD 65536 /* the largest NLM reply taken (a TEST's: its holder's owner) */

/* See nlm_clnt.h. */
void nlmc_params_defaults(struct nlmc_params *p)
{
	memset(p, 0, sizeof(*p));
	p->timeout_ms = 10000;
	p->repoll_s = 30;
	p->max_waiters = 256;
	p->max_owners = 4096;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- calls to the server */

/* A TCP connection to sa within timeout_ms, or -1. */
static int tcp_connect(const struct sockaddr_storage *sa, socklen_t salen, int timeout_ms)
{
	int fd = socket(sa->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct pollfd pfd = {.fd = fd, .events = POLLOUT};
	int err = 0;
	socklen_t elen = sizeof(err);

	if (fd < 0)
		return -1;
	if (connect(fd, (const struct sockaddr *)sa, salen) != 0 &&
	    (errno != EINPROGRESS || poll(&pfd, 1, timeout_ms) != 1 ||
	     getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0 || err != 0)) {
		close(fd);
		return -1;
	}
	if (fcntl(fd, F_SETFL, 0) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* See nlm_clnt_int.h. */
CLIENT *nlmc_tcp_client(const struct sockaddr_storage *sa, socklen_t salen, uint32_t prog,
			uint32_t vers, int timeout_ms)
{
	struct netbuf nb = {.maxlen = salen, .len = salen, .buf = (void *)sa};
	int fd = tcp_connect(sa, salen, timeout_ms);
	CLIENT *c;

	if (fd < 0)
		return NULL;
	if ((c = clnt_vc_create(fd, &nb, prog, vers, 0, 0)) == NULL) {
		close(fd);
		return NULL;
	}
	clnt_control(c, CLSET_FD_CLOSE, NULL);
	return c;
}

/* The server's NFS TCP port, where nfsrdma-server serves NLM too. */
static unsigned nfs_port(const struct nlmc *n)
{
	return n->p.nfs_port ? n->p.nfs_port : 2049;
}

/* The port of the server's NLM over TCP at host (numeric, of family):
 * lockport=, else what its rpcbind says there (rpcb_getport; a Linux
 * server's lockd has a port of its own) unless that is the port that last
 * refused lock calls (refused), else its NFS TCP port. */
static unsigned nlm_port(struct nlmc *n, int family, const char *host, unsigned refused)
{
	unsigned port;

	if (n->p.port)
		return n->p.port;
	port = rpcb_getport(host, family, NLM_PROGRAM, NLM_V4, IPPROTO_TCP, n->p.timeout_ms);
	return port && port != refused ? port : nfs_port(n);
}

/* An RPC client of the NLM at host:port over TCP, or NULL. */
static struct rpc_clnt *nlm_try(struct nlmc *n, const char *host, unsigned port)
{
	struct rpc_clnt *c;
	char ps[16];

	snprintf(ps, sizeof(ps), "%u", port);
	return rpc_tcp_clnt_create(host, ps, n->p.timeout_ms, NLM_MAX_RECORD, &c) == 0 ? c : NULL;
}

/* A connection to the server's NLM: each of the host's addresses in turn
 * (a name may give IPv6 and IPv4, and the server listen on one), as the NFS
 * connection is made. NULL with *why set if none answers. Its calls carry
 * this process's AUTH_SYS credentials, as libtirpc's authunix_create_default
 * would (each call may name other ones), signed with the mount's key if it
 * has one. */
static struct rpc_clnt *nlm_connect(struct nlmc *n, unsigned refused, const char **why)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res, *ai;
	struct rpc_clnt *c = NULL;
	char host[NET_HOST_STRLEN];
	unsigned p, q, known;

	if (getaddrinfo(n->host, NULL, &hints, &res) != 0) {
		*why = "cannot resolve the host";
		return NULL;
	}
	*why = "cannot connect over TCP";
	for (ai = res; ai && c == NULL; ai = ai->ai_next) {
		if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
			continue;
		net_host_str(ai->ai_addr, host, sizeof(host));
		/* the port found last time, asked for again if it does not
		 * answer (a restarted lockd may have another) or refused */
		known = n->port_known != refused ? n->port_known : 0;
		p = known ? known : nlm_port(n, ai->ai_family, host, refused);
		c = nlm_try(n, host, p);
		if (c == NULL && known && (q = nlm_port(n, ai->ai_family, host, refused)) != p)
			c = nlm_try(n, host, p = q);
		n->port_known = c ? p : 0;
	}
	if (c) {
		c->cred.uid = (uint32_t)geteuid();
		c->cred.gid = (uint32_t)getegid();
		c->key = n->p.key;
		pthread_mutex_lock(&n->lock);
		n->nsrv = 0;
		for (ai = res; ai && n->nsrv < SRV_ADDRS; ai = ai->ai_next)
			if (ai->ai_addrlen <= sizeof(n->srv[0]))
				memcpy(&n->srv[n->nsrv++], ai->ai_addr, ai->ai_addrlen);
		pthread_mutex_unlock(&n->lock);
	}
	freeaddrinfo(res);
	return c;
}

/* Why a call failed, logged once per kind until a call succeeds. */
static int no_nlm(struct nlmc *n, const char *why)
{
	if (!n->no_nlm_logged) {
		log_warn(
			"locks: no lock manager (NLM v4) answers on %s: %s; locks fail with ENOLCK "
			"(mount with nolock for local locks)",
			n->host, why);
		n->no_nlm_logged = 1;
	}
	return -ENOLCK;
}

/* Drop a hold on c; the last one closes it. Under call_lock. True if c is
 * to be destroyed (after call_lock is let go). */
static bool conn_put(struct nlmc_conn *c)
{
	return --c->refs == 0;
}

static void conn_destroy(struct nlmc_conn *c)
{
	rpc_clnt_destroy(c->rpc);
	free(c);
}

/* See nlm_clnt_int.h. */
void nlmc_disconnect(struct nlmc *n)
{
	struct nlmc_conn *c = n->conn;

	n->conn = NULL;
	if (c && conn_put(c))
		conn_destroy(c);
}

/* The connection calls go on, made if need be, held for the caller; NULL
 * (after no_nlm) when the server's NLM cannot be reached. One call makes
 * it, without call_lock (calls on a connection already made go on); the
 * calls that come meanwhile wait for that one's end and share its failure,
 * so that a server that does not answer costs them one wait, not one each
 * in turn (one made, then dropped before they ran, is made anew). */
static struct nlmc_conn *conn_get(struct nlmc *n)
{
	struct nlmc_conn *c;
	const char *why = "out of memory";
	unsigned failed, refused;

	pthread_mutex_lock(&n->call_lock);
	failed = n->connects_failed;
	while (n->conn == NULL && n->connecting)
		pthread_cond_wait(&n->connect_end, &n->call_lock);
	if (n->conn == NULL && n->connects_failed != failed) {
		pthread_mutex_unlock(&n->call_lock); /* the one waited for failed */
		return NULL;
	}
	if (n->conn == NULL) {
		n->connecting = 1;
		refused = n->port_refused;
		pthread_mutex_unlock(&n->call_lock);
		if ((c = calloc(1, sizeof(*c))) != NULL &&
		    (c->rpc = nlm_connect(n, refused, &why)) == NULL) {
			free(c);
			c = NULL;
		}
		if (c)
			c->port = n->port_known;
		pthread_mutex_lock(&n->call_lock);
		n->connecting = 0;
		pthread_cond_broadcast(&n->connect_end);
		if (c == NULL) {
			n->connects_failed++;
			no_nlm(n, why);
			pthread_mutex_unlock(&n->call_lock);
			return NULL;
		}
		c->refs = 1; /* n->conn's */
		n->conn = c;
		if (!n->port_passed_over) /* then the server may have restarted */
			n->reconnected |= n->ever_connected;
		n->port_passed_over = 0;
		n->ever_connected = 1;
	}
	c = n->conn;
	c->refs++;
	pthread_mutex_unlock(&n->call_lock);
	return c;
}

/* A call of proc refused (PROG_UNAVAIL, PROC_UNAVAIL or a version mismatch)
 * on connection c: whether c's port is passed over (under call_lock). It is
 * when proc is one of the four lock calls, which every lock manager takes,
 * and lockport= did not name the port: a lock callback service of a mount on
 * the server's host registers NLM too, and takes none. The next connection
 * then tries what rpcbind names but that port, else the NFS port (where
 * nfsrdma-server's NLM is, unregistered); where the NFS port refused,
 * rpcbind is asked again (a lockd may have registered since). The next
 * connection is no sign of a server restart. */
static bool pass_over(struct nlmc *n, struct nlmc_conn *c, uint32_t proc)
{
	if (n->p.port ||
	    (proc != NLM4_TEST && proc != NLM4_LOCK && proc != NLM4_CANCEL && proc != NLM4_UNLOCK))
		return false;
	if (n->port_refused != c->port)
		log_notice("locks: port %u on %s refuses lock calls (not the server's lock "
			   "manager: a mount's callback service?); trying %s",
			   c->port, n->host,
			   c->port == nfs_port(n) ? "what rpcbind names" : "the NFS port");
	n->port_refused = c->port;
	n->port_passed_over = 1;
	return true;
}

/* One NLM call, for cred (NULL: this process); 0, or -ENOLCK when the
 * server's NLM cannot be reached. Calls of several threads go out at once
 * on the one connection. A broken connection is made again once, as is one
 * to a port passed over (pass_over); one that timed out is left to the
 * calls still on it, and the next call makes a new one. */
int nlmc_call(struct nlmc *n, const struct rpc_cred *cred, uint32_t proc, xdrproc_t xa, void *a,
	      xdrproc_t xr, void *r)
{
	bool again = true;
	int rc = 0;

	for (int tries = 0; tries < 2 && again; tries++) {
		struct rpc_call call = {.prog = NLM_PROGRAM,
					.vers = NLM_V4,
					.proc = proc,
					.xdr_args = xa,
					.args = a,
					.xdr_res = xr,
					.res = r,
					.timeout_ms = n->p.timeout_ms,
					.cred = cred};
		struct nlmc_conn *c = conn_get(n);
		bool last;

		if (c == NULL)
			return -ENOLCK;
		rc = rpc_clnt_call(c->rpc, &call);
		if (rc == 0) {
			/* the results stay decoded in r for the caller to free */
			call.xdr_res = (xdrproc_t)xdr_void;
			rpc_clnt_free_res(c->rpc, &call);
		}
		pthread_mutex_lock(&n->call_lock);
		again = rc == -ECONNRESET || (rc == -EPROTO && pass_over(n, c, proc));
		if (rc == 0)
			n->no_nlm_logged = 0;
		else if (n->conn == c)
			nlmc_disconnect(n); /* n's hold; c lives on while calls hold it */
		last = conn_put(c);
		if (rc != 0 && (!again || tries == 1))
			no_nlm(n, strerror(-rc));
		pthread_mutex_unlock(&n->call_lock);
		if (last)
			conn_destroy(c);
	}
	return rc == 0 ? 0 : -ENOLCK;
}

/* The errno of an NLM answer. */
static int stat_errno(nlm4_stats s)
{
	switch (s) {
	case NLM4_GRANTED:
		return 0;
	case NLM4_DENIED:
		return -EAGAIN;
	case NLM4_DEADLCK:
		return -EDEADLK;
	case NLM4_ROFS:
		return -EROFS;
	case NLM4_STALE_FH:
		return -ESTALE;
	case NLM4_FBIG:
		return -EFBIG;
	default:
		return -ENOLCK;
	}
}

/* The owner handle of owner (oh must hold OH_LEN bytes). */
static void owner_handle(const struct nlmc *n, uint64_t owner, char *oh)
{
	uint16_t port = htons(n->cbport);

	memcpy(oh, n->cookie, 8);
	memcpy(oh + 8, &owner, 8);
	memcpy(oh + 16, &port, 2);
}

/* Fill alock for l (oh and cookie are the caller's buffers). */
void nlmc_fill_alock(struct nlmc *n, const struct nlmc_lock *l, char *oh, nlm4_lock *a)
{
	owner_handle(n, l->owner, oh);
	a->caller_name = n->caller;
	a->fh.nlm4_netobj_val = (char *)l->fh->data;
	a->fh.nlm4_netobj_len = l->fh->len;
	a->oh.nlm4_netobj_val = oh;
	a->oh.nlm4_netobj_len = OH_LEN;
	a->svid = (int)l->svid;
	a->l_offset = l->start;
	a->l_len = l->len;
}

/* See nlm_clnt_int.h. */
void nlmc_set_cookie(struct nlmc *n, uint32_t *c, nlm4_netobj *o)
{
	*c = __atomic_add_fetch(&n->next_cookie, 1, __ATOMIC_RELAXED);
	o->nlm4_netobj_val = (char *)c;
	o->nlm4_netobj_len = sizeof(*c);
}

/* See nlm_clnt.h. */
int nlmc_test(struct nlmc *n, struct nlmc_lock *l, pid_t *pid)
{
	nlm4_testargs a = {.exclusive = l->type == F_WRLCK};
	nlm4_testres r;
	char oh[OH_LEN];
	uint32_t ck;
	int rc;

	nlmc_set_cookie(n, &ck, &a.cookie);
	nlmc_fill_alock(n, l, oh, &a.alock);
	for (uint64_t t0 = now_ms();;) {
		memset(&r, 0, sizeof(r));
		if ((rc = nlmc_call(n, l->cred, NLM4_TEST, (xdrproc_t)xdr_nlm4_testargs, &a,
				    (xdrproc_t)xdr_nlm4_testres, &r)) != 0)
			return rc;
		if (r.stat.stat != NLM4_DENIED_GRACE_PERIOD || now_ms() - t0 > GRACE_MAX_MS)
			break;
		xdr_free((xdrproc_t)xdr_nlm4_testres, (char *)&r);
		usleep(GRACE_WAIT_MS * 1000);
	}
	*pid = 0;
	if (r.stat.stat == NLM4_GRANTED) {
		l->type = F_UNLCK;
	} else if (r.stat.stat == NLM4_DENIED) {
		nlm4_holder *h = &r.stat.nlm4_testrply_u.holder;

		l->type = h->exclusive ? F_WRLCK : F_RDLCK;
		l->start = h->l_offset;
		l->len = h->l_len;
		l->svid = (uint32_t)h->svid;
		*pid = (pid_t)h->svid;
	} else {
		rc = stat_errno(r.stat.stat);
	}
	xdr_free((xdrproc_t)xdr_nlm4_testres, (char *)&r);
	return rc;
}

/* Record l (granted or unlocked) in what its owner holds. */
static int held_apply(struct nlmc *n, const struct nlmc_lock *l)
{
	int rc;

	pthread_mutex_lock(&n->lock);
	rc = nlmc_held_apply(&n->held, l->fh, l->owner, l->svid, l->type, l->start, l->len);
	if (rc == 0 && l->type != F_UNLCK && l->cred)
		nlmc_held_set_cred(&n->held, l->fh, l->owner, l->cred);
	pthread_mutex_unlock(&n->lock);
	return rc;
}

/* Register a wait for l (before the call that may block). */
static struct nlmc_wait *wait_add(struct nlmc *n, const struct nlmc_lock *l)
{
	struct nlmc_wait *w = NULL;

	pthread_mutex_lock(&n->lock);
	if (n->nwaiters < n->p.max_waiters && (w = calloc(1, sizeof(*w))) != NULL) {
		w->fh = *l->fh;
		w->owner = l->owner;
		w->off = l->start;
		w->len = l->len;
		w->excl = l->type == F_WRLCK;
		pthread_cond_init(&w->cond, NULL);
		w->next = n->waiters;
		n->waiters = w;
		n->nwaiters++;
	}
	pthread_mutex_unlock(&n->lock);
	if (w == NULL)
		log_warn("locks: %u blocked requests wait already: no more", n->p.max_waiters);
	return w;
}

static void wait_del(struct nlmc *n, struct nlmc_wait *w)
{
	pthread_mutex_lock(&n->lock);
	for (struct nlmc_wait **p = &n->waiters; *p; p = &(*p)->next) {
		if (*p == w) {
			*p = w->next;
			n->nwaiters--;
			break;
		}
	}
	pthread_mutex_unlock(&n->lock);
	pthread_cond_destroy(&w->cond);
	free(w);
}

/* Wait for w's GRANTED, its interruption, or ms: 1 granted, -EINTR, 0 time. */
static int wait_for(struct nlmc *n, struct nlmc_wait *w, unsigned ms)
{
	struct timespec ts;
	int rc = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&n->lock);
	while (!w->granted && !w->interrupted &&
	       pthread_cond_timedwait(&w->cond, &n->lock, &ts) == 0)
		;
	/* a GRANTED taken before the interruption wins: the lock is ours */
	rc = w->granted ? 1 : w->interrupted ? -EINTR : 0;
	w->granted = 0;
	pthread_mutex_unlock(&n->lock);
	return rc;
}

/* See nlm_clnt.h. */
void nlmc_interrupt(struct nlmc *n, struct nlmc_wait *w)
{
	pthread_mutex_lock(&n->lock);
	w->interrupted = 1;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&n->lock);
}

/* CANCEL a blocked request (for cred). */
static void cancel(struct nlmc *n, const struct rpc_cred *cred, nlm4_lockargs *la)
{
	nlm4_cancargs a = {
		.cookie = la->cookie, .block = 1, .exclusive = la->exclusive, .alock = la->alock};
	nlm4_res r;

	memset(&r, 0, sizeof(r));
	if (nlmc_call(n, cred, NLM4_CANCEL, (xdrproc_t)xdr_nlm4_cancargs, &a,
		      (xdrproc_t)xdr_nlm4_res, &r) == 0)
		xdr_free((xdrproc_t)xdr_nlm4_res, (char *)&r);
}

/* Set whether w's LOCK is on its way. */
static void wait_calling(struct nlmc *n, struct nlmc_wait *w, int calling)
{
	if (w == NULL)
		return;
	pthread_mutex_lock(&n->lock);
	w->calling = calling;
	pthread_mutex_unlock(&n->lock);
}

/* LOCK for cred, and while BLOCKED (or refused for the grace period) the
 * waits. *unsure: a LOCK got no answer, or a GRANTED came that the LOCK sent
 * again did not confirm (the server may hold, or yet grant, the lock). */
static int lock_loop(struct nlmc *n, const struct rpc_cred *cred, nlm4_lockargs *a,
		     struct nlmc_wait *w, int *unsure)
{
	uint64_t t0 = now_ms();
	nlm4_res r;
	int rc, got, woke = 0;

	for (;;) {
		memset(&r, 0, sizeof(r));
		wait_calling(n, w, 1);
		rc = nlmc_call(n, cred, NLM4_LOCK, (xdrproc_t)xdr_nlm4_lockargs, a,
			       (xdrproc_t)xdr_nlm4_res, &r);
		wait_calling(n, w, 0);
		if (rc != 0) {
			*unsure = 1;
			return rc;
		}
		xdr_free((xdrproc_t)xdr_nlm4_res, (char *)&r);
		*unsure = woke;
		if (r.stat != NLM4_DENIED_GRACE_PERIOD)
			t0 = now_ms(); /* GRACE_MAX_MS counts refusals in a row */
		/* not a restart in itself (a server whose storage stalls refuses so
		 * too): one is heard of by SM_NOTIFY or the connection made again */
		if (r.stat == NLM4_DENIED_GRACE_PERIOD && now_ms() - t0 < GRACE_MAX_MS) {
			if (w && wait_for(n, w, GRACE_WAIT_MS) < 0)
				return -EINTR;
			if (w == NULL)
				usleep(GRACE_WAIT_MS * 1000);
			continue;
		}
		if (r.stat != NLM4_BLOCKED)
			return stat_errno(r.stat);
		if (w == NULL)
			return -ENOLCK; /* blocked without asking to block */
		got = wait_for(n, w, n->p.repoll_s * 1000);
		/* a signed mount takes no unsigned GRANTED at its word: anyone who
		 * saw the owner handle could send one; the LOCK sent again is
		 * answered GRANTED by a server that granted (the owner holds the
		 * range), else BLOCKED */
		if (got == 1 && !n->p.key)
			return 0;
		woke |= got == 1;
		if (got < 0) {
			cancel(n, cred, a);
			return -EINTR;
		}
		/* no GRANTED yet (or one to check): ask again, as Linux does */
	}
}

/* See nlm_clnt.h. */
int nlmc_lock(struct nlmc *n, const struct nlmc_lock *l, int wait,
	      void (*waiting)(void *arg, struct nlmc_wait *w), void *arg)
{
	nlm4_lockargs a = {.block = wait != 0, .exclusive = l->type == F_WRLCK, .state = n->state};
	struct nlmc_wait *w = NULL;
	char oh[OH_LEN];
	uint32_t ck;
	int rc, held_rc = 0, unsure = 0;

	if (l->type == F_UNLCK)
		return nlmc_unlock(n, l);
	nlmc_set_cookie(n, &ck, &a.cookie);
	nlmc_fill_alock(n, l, oh, &a.alock);
	if (wait) {
		if ((w = wait_add(n, l)) == NULL)
			return -ENOLCK;
		if (waiting)
			waiting(arg, w);
	}
	rc = lock_loop(n, l->cred, &a, w, &unsure);
	/* Counted as held before the wait goes, so that the server's GRANTED
	 * sent again finds the lock held (nlm_clnt_cb.c, granted). Also where
	 * the server may grant it after we stopped waiting (its storage was
	 * slow): so that its owner's close or unlock releases it there, as
	 * Linux releases a lock it may have been granted; the caller still
	 * gets the error. */
	if (rc == 0 || unsure)
		held_rc = held_apply(n, l);
	if (w) {
		if (waiting)
			waiting(arg, NULL);
		wait_del(n, w);
	}
	if (rc != 0)
		return rc;
	if (held_rc != 0) {
		struct nlmc_lock u = *l;

		u.type = F_UNLCK;
		(void)nlmc_unlock(n, &u);
		rc = -ENOLCK;
	}
	return rc;
}

/* See nlm_clnt.h. */
int nlmc_unlock(struct nlmc *n, const struct nlmc_lock *l)
{
	struct nlmc_lock ul = *l;
	nlm4_unlockargs a;
	nlm4_res r;
	char oh[OH_LEN];
	uint32_t ck;
	int rc;

	/* the kernel gives no pid with an unlock: the owner's, as it locked */
	pthread_mutex_lock(&n->lock);
	if (ul.svid == 0)
		ul.svid = nlmc_held_svid(&n->held, l->fh, l->owner);
	pthread_mutex_unlock(&n->lock);
	nlmc_set_cookie(n, &ck, &a.cookie);
	nlmc_fill_alock(n, &ul, oh, &a.alock);
	for (uint64_t t0 = now_ms();;) {
		memset(&r, 0, sizeof(r));
		if ((rc = nlmc_call(n, l->cred, NLM4_UNLOCK, (xdrproc_t)xdr_nlm4_unlockargs, &a,
				    (xdrproc_t)xdr_nlm4_res, &r)) != 0)
			return rc;
		xdr_free((xdrproc_t)xdr_nlm4_res, (char *)&r);
		if (r.stat != NLM4_DENIED_GRACE_PERIOD || now_ms() - t0 > GRACE_MAX_MS)
			break;
		usleep(GRACE_WAIT_MS * 1000);
	}
	if (r.stat == NLM4_GRANTED) {
		struct nlmc_lock u = *l;

		u.type = F_UNLCK;
		(void)held_apply(n, &u);
	}
	return stat_errno(r.stat);
}

/* See nlm_clnt.h. */
int nlmc_release_owner(struct nlmc *n, const struct nfs3c_fh *fh, uint64_t owner)
{
	struct nlmc_lock l = {.fh = fh, .owner = owner, .type = F_UNLCK};
	struct nlmc_held *h;
	int rc;

	pthread_mutex_lock(&n->lock);
	h = nlmc_held_take(&n->held, fh, owner);
	pthread_mutex_unlock(&n->lock);
	if (h == NULL)
		return 0;
	l.svid = h->svid;
	l.cred = nlmc_held_cred(h);
	rc = nlmc_unlock(n, &l);
	nlmc_held_free(h);
	return rc;
}
