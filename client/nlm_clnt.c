/*
 * nlm_clnt.c: lock calls to the server's NLM v4 over TCP (one connection,
 * made at the first lock, calls one at a time, each bounded by timeout_ms),
 * and the UDP service that receives its GRANTED callbacks (see nlm_clnt.h).
 * A lock owner is named on the wire by an owner handle of 18 bytes: this
 * client's random cookie, the kernel's lock owner, and our callback port, so
 * that a GRANTED reaching another nfsrdma-client of this host (the one
 * rpcbind names) is forwarded here.
 */
#include <arpa/inet.h>
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
#include <sys/random.h>
#include <sys/socket.h>
#include <rpc/rpc.h>
#include <rpc/pmap_prot.h>

#include "client/nlm_clnt.h"
#include "client/nlm_clnt_held.h"
#include "common/base/log.h"
#include "common/nfs/nlm_prog.h"
#include "common/nfs/nlm_prot.h"
#include "common/nfs/nsm_prot.h"

#define OH_LEN		 18 /* cookie (8), lock owner (8), callback port (2) */
#define FWD_MAGIC	 "NLMF"
#define FWD_HDR		 12 /* magic, the caller's IPv4 address and port, 2 spare */
#define MSG_MAX		 4096
#define GRACE_WAIT_MS	 1000 /* a request refused for the grace period is sent again */
#define GRACE_MAX_MS	 (300 * 1000)
#define RECLAIM_CHECK_MS 2000 /* while locks are held: has the server restarted? */

struct nlmc_wait {
	struct nlmc_wait *next;
	struct nfs3c_fh fh;
	uint64_t owner, off, len;
	int excl;
	int granted, interrupted;
	pthread_cond_t cond;
};

struct nlmc {
	struct nlmc_params p;
	char host[256];	  /* the server */
	char caller[256]; /* our caller_name: this host's name */
	uint8_t cookie[8];
	int32_t state; /* our NSM state number */

	pthread_mutex_t call_lock; /* the connection; calls go one at a time */
	CLIENT *clnt;
	int no_nlm_logged;
	uint32_t next_cookie;

	pthread_mutex_t lock; /* waiters, held, reclaim */
	struct nlmc_wait *waiters;
	unsigned nwaiters;
	struct nlmc_heldset held;
	int ever_connected, reconnected; /* under call_lock */
	int reclaim_wanted;		 /* SM_NOTIFY or a grace period seen */
	pthread_cond_t reclaim_cond;
	pthread_t reclaimer;
	int reclaimer_started;

	int cbfd;
	unsigned short cbport;
	pthread_t thread;
	int thread_started;
	int stop;
	int registered; /* with this host's rpcbind */
};

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

/* A TCP connection to host:port within timeout_ms, or -1. */
static int tcp_connect(const struct sockaddr_in *sa, int timeout_ms)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct pollfd pfd = {.fd = fd, .events = POLLOUT};
	int err = 0;
	socklen_t elen = sizeof(err);

	if (fd < 0)
		return -1;
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) != 0 &&
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

/* An RPC client for prog/vers at sa, or NULL. */
static CLIENT *tcp_client(struct sockaddr_in *sa, uint32_t prog, uint32_t vers, int timeout_ms)
{
	int fd = tcp_connect(sa, timeout_ms);
	CLIENT *c;

	if (fd < 0)
		return NULL;
	if ((c = clnttcp_create(sa, prog, vers, &fd, 0, 0)) == NULL) {
		close(fd);
		return NULL;
	}
	clnt_control(c, CLSET_FD_CLOSE, NULL);
	return c;
}

/* Where the server's NLM listens over TCP: port=, else rpcbind, else 2049. */
static int nlm_addr(struct nlmc *n, struct sockaddr_in *sa)
{
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai;
	struct timeval tv = {.tv_sec = n->p.timeout_ms / 1000, .tv_usec = 0};
	struct pmap pm = {.pm_prog = NLM_PROGRAM, .pm_vers = NLM_V4, .pm_prot = IPPROTO_TCP};
	u_short port = 0;
	CLIENT *pc;

	if (getaddrinfo(n->host, NULL, &hints, &ai) != 0)
		return -1;
	memcpy(sa, ai->ai_addr, sizeof(*sa));
	freeaddrinfo(ai);
	if (n->p.port) {
		sa->sin_port = htons((u_short)n->p.port);
		return 0;
	}
	sa->sin_port = htons(PMAPPORT);
	if ((pc = tcp_client(sa, PMAPPROG, PMAPVERS, n->p.timeout_ms)) != NULL) {
		if (clnt_call(pc, PMAPPROC_GETPORT, (xdrproc_t)xdr_pmap, (char *)&pm,
			      (xdrproc_t)xdr_u_short, (char *)&port, tv) != RPC_SUCCESS)
			port = 0;
		clnt_destroy(pc);
	}
	sa->sin_port = htons(port ? port : 2049);
	return 0;
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

/* One NLM call; 0, or -ENOLCK when the server's NLM cannot be reached. A
 * broken connection is made again once. */
static int call(struct nlmc *n, uint32_t proc, xdrproc_t xa, void *a, xdrproc_t xr, void *r)
{
	struct timeval tv = {.tv_sec = n->p.timeout_ms / 1000,
			     .tv_usec = (n->p.timeout_ms % 1000) * 1000};
	enum clnt_stat st = RPC_CANTSEND;
	struct sockaddr_in sa;
	int rc = 0;

	pthread_mutex_lock(&n->call_lock);
	for (int tries = 0; tries < 2; tries++) {
		if (n->clnt == NULL) {
			if (nlm_addr(n, &sa) != 0) {
				rc = no_nlm(n, "cannot resolve the host");
				break;
			}
			if ((n->clnt = tcp_client(&sa, NLM_PROGRAM, NLM_V4, n->p.timeout_ms)) ==
			    NULL) {
				rc = no_nlm(n, "cannot connect over TCP");
				break;
			}
			auth_destroy(n->clnt->cl_auth);
			n->clnt->cl_auth = authunix_create_default();
			n->reconnected |= n->ever_connected; /* the server may have restarted */
			n->ever_connected = 1;
		}
		st = clnt_call(n->clnt, proc, xa, a, xr, r, tv);
		if (st == RPC_SUCCESS) {
			n->no_nlm_logged = 0;
			break;
		}
		clnt_destroy(n->clnt);
		n->clnt = NULL;
		if (st == RPC_PROGUNAVAIL || st == RPC_PROGVERSMISMATCH || st == RPC_PROCUNAVAIL ||
		    st == RPC_TIMEDOUT || tries == 1) {
			rc = no_nlm(n, clnt_sperrno(st));
			break;
		}
	}
	pthread_mutex_unlock(&n->call_lock);
	return rc;
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
static void fill_alock(struct nlmc *n, const struct nlmc_lock *l, char *oh, nlm4_lock *a)
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

static void set_cookie(struct nlmc *n, uint32_t *c, nlm4_netobj *o)
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

	set_cookie(n, &ck, &a.cookie);
	fill_alock(n, l, oh, &a.alock);
	for (uint64_t t0 = now_ms();;) {
		memset(&r, 0, sizeof(r));
		if ((rc = call(n, NLM4_TEST, (xdrproc_t)xdr_nlm4_testargs, &a,
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
	pthread_mutex_unlock(&n->lock);
	return rc;
}

/* The server is in its grace period, or told us it restarted: reclaim. */
static void want_reclaim(struct nlmc *n)
{
	pthread_mutex_lock(&n->lock);
	n->reclaim_wanted = 1;
	pthread_cond_signal(&n->reclaim_cond);
	pthread_mutex_unlock(&n->lock);
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
	rc = w->interrupted ? -EINTR : w->granted ? 1 : 0;
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

/* CANCEL a blocked request. */
static void cancel(struct nlmc *n, nlm4_lockargs *la)
{
	nlm4_cancargs a = {
		.cookie = la->cookie, .block = 1, .exclusive = la->exclusive, .alock = la->alock};
	nlm4_res r;

	memset(&r, 0, sizeof(r));
	if (call(n, NLM4_CANCEL, (xdrproc_t)xdr_nlm4_cancargs, &a, (xdrproc_t)xdr_nlm4_res, &r) ==
	    0)
		xdr_free((xdrproc_t)xdr_nlm4_res, (char *)&r);
}

/* LOCK, and while BLOCKED (or refused for the grace period) the waits. */
static int lock_loop(struct nlmc *n, nlm4_lockargs *a, struct nlmc_wait *w)
{
	uint64_t t0 = now_ms();
	nlm4_res r;
	int rc, got;

	for (;;) {
		memset(&r, 0, sizeof(r));
		if ((rc = call(n, NLM4_LOCK, (xdrproc_t)xdr_nlm4_lockargs, a,
			       (xdrproc_t)xdr_nlm4_res, &r)) != 0)
			return rc;
		xdr_free((xdrproc_t)xdr_nlm4_res, (char *)&r);
		if (r.stat == NLM4_DENIED_GRACE_PERIOD && now_ms() - t0 < GRACE_MAX_MS) {
			if (!a->reclaim)
				want_reclaim(n); /* a restart we were not told of */
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
		if (got == 1)
			return 0;
		if (got < 0) {
			cancel(n, a);
			return -EINTR;
		}
		/* no GRANTED yet: ask again, as Linux does */
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
	int rc;

	if (l->type == F_UNLCK)
		return nlmc_unlock(n, l);
	set_cookie(n, &ck, &a.cookie);
	fill_alock(n, l, oh, &a.alock);
	if (wait) {
		if ((w = wait_add(n, l)) == NULL)
			return -ENOLCK;
		if (waiting)
			waiting(arg, w);
	}
	rc = lock_loop(n, &a, w);
	if (w) {
		if (waiting)
			waiting(arg, NULL);
		wait_del(n, w);
	}
	if (rc == 0 && held_apply(n, l) != 0) {
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
	set_cookie(n, &ck, &a.cookie);
	fill_alock(n, &ul, oh, &a.alock);
	for (uint64_t t0 = now_ms();;) {
		memset(&r, 0, sizeof(r));
		if ((rc = call(n, NLM4_UNLOCK, (xdrproc_t)xdr_nlm4_unlockargs, &a,
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

	pthread_mutex_lock(&n->lock);
	h = nlmc_held_take(&n->held, fh, owner);
	pthread_mutex_unlock(&n->lock);
	if (h == NULL)
		return 0;
	l.svid = h->svid;
	nlmc_held_free(h);
	return nlmc_unlock(n, &l);
}

/* ---- reclaim after the server restarts */

/* LOCK with reclaim for every range held; the number lost. */
static unsigned reclaim_all(struct nlmc *n, unsigned *total)
{
	struct nlmc_lock *all = NULL;
	struct nfs3c_fh *fhs = NULL;
	unsigned k = 0, lost = 0, cap = 0;

	pthread_mutex_lock(&n->lock);
	for (struct nlmc_held *h = n->held.head; h; h = h->next)
		cap += h->nr;
	if (cap && ((all = calloc(cap, sizeof(*all))) == NULL ||
		    (fhs = calloc(cap, sizeof(*fhs))) == NULL))
		cap = 0;
	for (struct nlmc_held *h = n->held.head; h && k < cap; h = h->next) {
		for (unsigned i = 0; i < h->nr && k < cap; i++, k++) {
			fhs[k] = h->fh;
			all[k] = (struct nlmc_lock){
				.fh = &fhs[k],
				.owner = h->owner,
				.svid = h->svid,
				.type = h->r[i].excl ? F_WRLCK : F_RDLCK,
				.start = h->r[i].start,
				.len = h->r[i].end == UINT64_MAX ? 0 : h->r[i].end - h->r[i].start};
		}
	}
	pthread_mutex_unlock(&n->lock);
	for (unsigned i = 0; i < k; i++) {
		nlm4_lockargs a = {
			.exclusive = all[i].type == F_WRLCK, .reclaim = 1, .state = n->state};
		nlm4_res r;
		char oh[OH_LEN];
		uint32_t ck;

		set_cookie(n, &ck, &a.cookie);
		fill_alock(n, &all[i], oh, &a.alock);
		memset(&r, 0, sizeof(r));
		if (call(n, NLM4_LOCK, (xdrproc_t)xdr_nlm4_lockargs, &a, (xdrproc_t)xdr_nlm4_res,
			 &r) != 0) {
			lost++;
			continue;
		}
		/* not in grace: the server never lost it */
		lost += r.stat != NLM4_GRANTED && r.stat != NLM4_DENIED_GRACE_PERIOD;
		xdr_free((xdrproc_t)xdr_nlm4_res, (char *)&r);
	}
	free(all);
	free(fhs);
	*total = k;
	return lost;
}

/* Whether the connection to the server's NLM had to be made again (it may
 * have restarted): an NLM NULL call on it, only while locks are held. */
static int reconnected(struct nlmc *n)
{
	int again;

	if (call(n, NLM4_NULL, (xdrproc_t)xdr_void, NULL, (xdrproc_t)xdr_void, NULL) != 0)
		return 0;
	pthread_mutex_lock(&n->call_lock);
	again = n->reconnected;
	n->reconnected = 0;
	pthread_mutex_unlock(&n->call_lock);
	return again;
}

/* The reclaimer: on SM_NOTIFY, a grace period seen, or a new connection
 * while locks are held (checked every RECLAIM_CHECK_MS), reclaim them all. */
static void *reclaim_main(void *arg)
{
	struct nlmc *n = arg;
	unsigned total, lost;
	struct timespec ts;
	int want, held;

	pthread_mutex_lock(&n->lock);
	while (!n->stop) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += RECLAIM_CHECK_MS / 1000;
		if (!n->reclaim_wanted)
			pthread_cond_timedwait(&n->reclaim_cond, &n->lock, &ts);
		if (n->stop)
			break;
		want = n->reclaim_wanted;
		n->reclaim_wanted = 0;
		held = n->held.n > 0;
		pthread_mutex_unlock(&n->lock);
		if (held && (reconnected(n) || want)) {
			lost = reclaim_all(n, &total);
			if (lost)
				log_warn("locks: the server restarted: %u of %u locks could not be "
					 "reclaimed",
					 lost, total);
			else
				log_info("locks: reclaimed %u locks after the server restarted",
					 total);
		}
		pthread_mutex_lock(&n->lock);
	}
	pthread_mutex_unlock(&n->lock);
	return NULL;
}

/* ---- the callback service */

/* Send the accepted answer (results res by xr) of xid to sa. */
static void reply(struct nlmc *n, uint32_t xid, const struct sockaddr_in *sa, xdrproc_t xr,
		  void *res, enum accept_stat ast)
{
	struct rpc_msg m;
	char buf[MSG_MAX];
	XDR x;

	memset(&m, 0, sizeof(m));
	m.rm_xid = xid;
	m.rm_direction = REPLY;
	m.rm_reply.rp_stat = MSG_ACCEPTED;
	m.acpted_rply.ar_verf = _null_auth;
	m.acpted_rply.ar_stat = ast;
	m.acpted_rply.ar_results.where = res;
	m.acpted_rply.ar_results.proc = xr ? xr : (xdrproc_t)xdr_void;
	if (ast == PROG_MISMATCH)
		m.acpted_rply.ar_vers.low = m.acpted_rply.ar_vers.high = NLM_V4;
	xdrmem_create(&x, buf, sizeof(buf), XDR_ENCODE);
	if (xdr_replymsg(&x, &m))
		(void)sendto(n->cbfd, buf, xdr_getpos(&x), 0, (const struct sockaddr *)sa,
			     sizeof(*sa));
	xdr_destroy(&x);
}

/* A GRANTED for one of our waits: wake it. NLM4_GRANTED if one waited. */
static nlm4_stats granted(struct nlmc *n, const nlm4_testargs *a)
{
	const nlm4_lock *l = &a->alock;
	nlm4_stats st = NLM4_DENIED;
	uint64_t owner;

	if (l->oh.nlm4_netobj_len != OH_LEN || memcmp(l->oh.nlm4_netobj_val, n->cookie, 8) != 0 ||
	    l->fh.nlm4_netobj_len > NFS3_FHSIZE)
		return NLM4_DENIED;
	memcpy(&owner, l->oh.nlm4_netobj_val + 8, 8);
	pthread_mutex_lock(&n->lock);
	for (struct nlmc_wait *w = n->waiters; w; w = w->next) {
		if (w->owner == owner && w->off == l->l_offset && w->len == l->l_len &&
		    w->excl == !!a->exclusive && w->fh.len == l->fh.nlm4_netobj_len &&
		    memcmp(w->fh.data, l->fh.nlm4_netobj_val, w->fh.len) == 0) {
			w->granted = 1;
			pthread_cond_signal(&w->cond);
			st = NLM4_GRANTED;
			break;
		}
	}
	pthread_mutex_unlock(&n->lock);
	return st;
}

/* A GRANTED whose owner handle names another client's callback port: pass
 * the datagram there with who sent it (that client answers the server).
 * 1 if forwarded. */
static int forward(struct nlmc *n, const nlm4_testargs *a, const struct sockaddr_in *from,
		   const char *msg, size_t len)
{
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	char buf[FWD_HDR + MSG_MAX];
	uint16_t port;

	if (a->alock.oh.nlm4_netobj_len != OH_LEN || len > MSG_MAX)
		return 0;
	memcpy(&port, a->alock.oh.nlm4_netobj_val + 16, 2);
	if (ntohs(port) == n->cbport || port == 0)
		return 0;
	to.sin_port = port;
	memcpy(buf, FWD_MAGIC, 4);
	memcpy(buf + 4, &from->sin_addr, 4);
	memcpy(buf + 8, &from->sin_port, 2);
	memset(buf + 10, 0, 2);
	memcpy(buf + FWD_HDR, msg, len);
	(void)sendto(n->cbfd, buf, FWD_HDR + len, 0, (struct sockaddr *)&to, sizeof(to));
	return 1;
}

/* One NLM call to us. */
static void serve_nlm(struct nlmc *n, uint32_t xid, uint32_t proc, XDR *x,
		      const struct sockaddr_in *from, int forwarded, const char *msg, size_t len)
{
	nlm4_testargs a;
	nlm4_res r;

	if (proc == NLM4_NULL) {
		reply(n, xid, from, NULL, NULL, SUCCESS);
		return;
	}
	if (proc != NLM4_GRANTED_PROC) {
		reply(n, xid, from, NULL, NULL, PROC_UNAVAIL);
		return;
	}
	memset(&a, 0, sizeof(a));
	if (!xdr_nlm4_testargs(x, &a)) {
		reply(n, xid, from, NULL, NULL, GARBAGE_ARGS);
	} else if (forwarded || !forward(n, &a, from, msg, len)) {
		r.cookie = a.cookie;
		r.stat = granted(n, &a);
		reply(n, xid, from, (xdrproc_t)xdr_nlm4_res, &r, SUCCESS);
	}
	xdr_free((xdrproc_t)xdr_nlm4_testargs, (char *)&a);
}

/* SM_NOTIFY: a monitored host (the server, as it says) restarted. The
 * reclaimer takes our locks back; other mounts of this host find out by
 * their new connection. */
static void nsm_notify(struct nlmc *n, XDR *x, const struct sockaddr_in *from)
{
	nsm_stat_chge sc;
	char ip[INET_ADDRSTRLEN] = "?";

	memset(&sc, 0, sizeof(sc));
	if (!xdr_nsm_stat_chge(x, &sc))
		return;
	inet_ntop(AF_INET, &from->sin_addr, ip, sizeof(ip));
	log_info("locks: '%s' (%s) restarted (state %d): reclaiming", sc.mon_name, ip, sc.state);
	xdr_free((xdrproc_t)xdr_nsm_stat_chge, (char *)&sc);
	want_reclaim(n);
}

/* One datagram: a call to NLM, NSM or PMAP GETPORT (for ourselves). */
static void serve_one(struct nlmc *n, char *buf, size_t len, struct sockaddr_in from)
{
	char creds[2 * MAX_AUTH_BYTES];
	struct rpc_msg m;
	int forwarded = 0;
	struct pmap pm;
	u_int port;
	XDR x;

	if (len >= FWD_HDR && memcmp(buf, FWD_MAGIC, 4) == 0 &&
	    from.sin_addr.s_addr == htonl(INADDR_LOOPBACK)) {
		memcpy(&from.sin_addr, buf + 4, 4);
		memcpy(&from.sin_port, buf + 8, 2);
		buf += FWD_HDR;
		len -= FWD_HDR;
		forwarded = 1;
	}
	memset(&m, 0, sizeof(m));
	m.rm_call.cb_cred.oa_base = creds;
	m.rm_call.cb_verf.oa_base = creds + MAX_AUTH_BYTES;
	xdrmem_create(&x, buf, (u_int)len, XDR_DECODE);
	if (!xdr_callmsg(&x, &m) || m.rm_direction != CALL) {
		xdr_destroy(&x);
		return;
	}
	if (m.rm_call.cb_prog == NLM_PROGRAM && m.rm_call.cb_vers == NLM_V4) {
		serve_nlm(n, m.rm_xid, (uint32_t)m.rm_call.cb_proc, &x, &from, forwarded, buf, len);
	} else if (m.rm_call.cb_prog == NSM_PROGRAM && m.rm_call.cb_proc == NSM_NULL) {
		reply(n, m.rm_xid, &from, NULL, NULL, SUCCESS);
	} else if (m.rm_call.cb_prog == NSM_PROGRAM && m.rm_call.cb_proc == NSM_NOTIFY) {
		nsm_notify(n, &x, &from);
		reply(n, m.rm_xid, &from, NULL, NULL, SUCCESS);
	} else if (m.rm_call.cb_prog == PMAPPROG && m.rm_call.cb_proc == PMAPPROC_GETPORT &&
		   xdr_pmap(&x, &pm)) {
		/* for a server told to ask here: NLM v4 over UDP is this port */
		port = ((pm.pm_prog == NLM_PROGRAM && pm.pm_vers == NLM_V4) ||
			(pm.pm_prog == NSM_PROGRAM && pm.pm_vers == NSM_V1)) &&
				       pm.pm_prot == IPPROTO_UDP
			       ? n->cbport
			       : 0;
		reply(n, m.rm_xid, &from, (xdrproc_t)xdr_u_int, &port, SUCCESS);
	} else if (m.rm_call.cb_prog == NLM_PROGRAM) {
		reply(n, m.rm_xid, &from, NULL, NULL, PROG_MISMATCH);
	} else {
		reply(n, m.rm_xid, &from, NULL, NULL, PROG_UNAVAIL);
	}
	xdr_destroy(&x);
}

static void *cb_main(void *arg)
{
	struct nlmc *n = arg;
	struct pollfd pfd = {.fd = n->cbfd, .events = POLLIN};
	char buf[FWD_HDR + MSG_MAX];
	struct sockaddr_in from;
	socklen_t flen;
	ssize_t got;

	while (!__atomic_load_n(&n->stop, __ATOMIC_ACQUIRE)) {
		if (poll(&pfd, 1, 200) <= 0)
			continue;
		flen = sizeof(from);
		got = recvfrom(n->cbfd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from,
			       &flen);
		if (got > 0 && flen >= sizeof(from) && from.sin_family == AF_INET)
			serve_one(n, buf, (size_t)got, from);
	}
	return NULL;
}

/* Register (PMAPPROC_SET) or unregister our callback port with this host's
 * rpcbind, over TCP so that a host without one answers at once. 1 if done:
 * another client of this host may hold the slot (it forwards our GRANTED),
 * or no rpcbind runs (then blocked requests are asked again every repoll_s). */
static int pmap_call(struct nlmc *n, u_long proc)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons(PMAPPORT),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct pmap pm = {.pm_prog = NLM_PROGRAM,
			  .pm_vers = NLM_V4,
			  .pm_prot = IPPROTO_UDP,
			  .pm_port = n->cbport};
	struct timeval tv = {.tv_sec = 2, .tv_usec = 0};
	bool_t ok = FALSE;
	CLIENT *c = tcp_client(&sa, PMAPPROG, PMAPVERS, 2000);

	if (c == NULL)
		return 0;
	if (clnt_call(c, proc, (xdrproc_t)xdr_pmap, (char *)&pm, (xdrproc_t)xdr_bool, (char *)&ok,
		      tv) != RPC_SUCCESS)
		ok = FALSE;
	clnt_destroy(c);
	return ok == TRUE;
}

/* See nlm_clnt.h. */
int nlmc_start(const struct nlmc_params *p, struct nlmc **out, char *err, size_t errlen)
{
	struct nlmc *n = calloc(1, sizeof(*n));
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((u_short)p->cbport)};
	socklen_t slen = sizeof(sa);

	if (n == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	n->p = *p;
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
	pthread_mutex_init(&n->lock, NULL);
	pthread_cond_init(&n->reclaim_cond, NULL);
	n->held.max_owners = p->max_owners;
	n->cbfd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (n->cbfd < 0 || bind(n->cbfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    getsockname(n->cbfd, (struct sockaddr *)&sa, &slen) != 0) {
		snprintf(err, errlen, "lock callbacks: cannot bind UDP port %u: %s", p->cbport,
			 strerror(errno));
		nlmc_stop(n);
		return -EADDRINUSE;
	}
	n->cbport = ntohs(sa.sin_port);
	if (pthread_create(&n->thread, NULL, cb_main, n) != 0) {
		snprintf(err, errlen, "cannot start a thread");
		nlmc_stop(n);
		return -EAGAIN;
	}
	n->thread_started = 1;
	if (pthread_create(&n->reclaimer, NULL, reclaim_main, n) != 0) {
		snprintf(err, errlen, "cannot start a thread");
		nlmc_stop(n);
		return -EAGAIN;
	}
	n->reclaimer_started = 1;
	n->registered = pmap_call(n, PMAPPROC_SET);
	if (!n->registered)
		log_info("locks: NLM callbacks on UDP port %u are not registered with rpcbind",
			 n->cbport);
	*out = n;
	return 0;
}

/* See nlm_clnt.h. */
void nlmc_stop(struct nlmc *n)
{
	if (n == NULL)
		return;
	if (n->registered)
		(void)pmap_call(n, PMAPPROC_UNSET);
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
	if (n->clnt)
		clnt_destroy(n->clnt);
	nlmc_held_clear(&n->held);
	pthread_cond_destroy(&n->reclaim_cond);
	pthread_mutex_destroy(&n->call_lock);
	pthread_mutex_destroy(&n->lock);
	free(n);
}

/* See nlm_clnt.h. */
unsigned nlmc_cbport(const struct nlmc *n)
{
	return n->cbport;
}
