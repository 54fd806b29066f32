/*
 * nlm_clnt_wait_test.c: a blocked lock request of the client's lock manager
 * (client/nlm_clnt.c) and its interruption, against a fake server's NLM over
 * loopback TCP that answers LOCK with BLOCKED and holds its answer to CANCEL
 * (answering other calls meanwhile) until the test lets it go, so that the
 * order of events is the test's:
 * - a GRANTED that comes while the interrupted request's CANCEL is on its
 *   way is denied (the caller is told EINTR: the lock must not become ours,
 *   or the server would hold it for an owner that never unlocks it);
 * - a GRANTED taken before the interruption wins: the lock is held, and the
 *   caller is told so;
 * - a GRANTED that comes while a LOCK of the interrupted request is on its
 *   way (the client asks again every second here) is taken: the server
 *   answers that LOCK GRANTED too, and the caller gets the lock;
 * - a GRANTED sent again after the lock was taken is answered GRANTED, and
 *   DENIED once the lock is released;
 * - a call is not held up by another's slow answer (the CANCEL held): calls
 *   of several threads go out at once on the one connection;
 * - calls that need a connection to a server that takes none share one
 *   connect's wait, rather than waiting in turn;
 * - a GRANTED_MSG (Linux's lockd grants so), over UDP or TCP, wakes the
 *   request as a GRANTED does, and is answered with a GRANTED_RES call that
 *   carries its cookie, only when it came from the server;
 * - a request refused for the grace period is sent again, and is not taken
 *   as the server's restart: the locks held are not reclaimed (a server
 *   whose storage stalls refuses so too);
 * - a mount that signs its calls (the fake server signs its answers) takes
 *   a GRANTED, which is never signed, as a reason to ask the server again,
 *   not as the lock: one the server did not send leaves the request waiting;
 *   woken so, then interrupted, it counts the range as held (the server may
 *   have granted it), so that the owner's release unlocks it there.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <rpc/rpc.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "client/nlm_clnt.h"
#include "common/base/clock.h"
#include "common/base/log.h"
#include "common/base/net.h"
#include "common/nfs/nlm_prog.h"
#include "common/nfs/nlm_prot.h"
#include "common/rpc/integrity.h"
#include "common/rpc/rpc.h"
#include "common/rpc/rpc_auth.h"
#include "t/unit/udp_rpc_call.h"

/* The key of the signed cases (setup_signed): the fake server signs its
 * answers with it. NULL: the others. */
static struct integrity_key signing_key;
static const struct integrity_key *reply_key;

/* The fake server: what it saw, and the CANCEL it holds. */
struct fake {
	int lfd, fd; /* listening; the connection (-1 until accepted) */
	unsigned port;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int locks, reclaims, cancels, unlocks, tests, go;
	nlm4_stats lock_answer; /* what LOCK is answered (NLM4_BLOCKED) */
	uint32_t hold;		/* the procedure whose answer waits for go (NLM4_CANCEL) */
	uint32_t held_xid;	/* the call not answered yet, or 0 */
	/* the last LOCK's lock, for a GRANTED that names it */
	char oh[64], fh[NFS3_FHSIZE];
	u_int ohlen, fhlen;
	uint64_t off, len;
	int excl;
	/* the GRANTED_RES calls seen, the last one's cookie and status */
	int granted_res;
	char res_cookie[32];
	u_int res_cookie_len;
	nlm4_stats res_stat;
};

/* One record-marked call from fd into buf; its length, or -1. */
static ssize_t read_record(int fd, char *buf, size_t cap)
{
	uint32_t mark;
	size_t len;

	if (net_read_full(fd, &mark, 4) != 0)
		return -1;
	len = ntohl(mark) & 0x7fffffff;
	if (!(ntohl(mark) & 0x80000000) || len > cap || net_read_full(fd, buf, len) != 0)
		return -1;
	return (ssize_t)len;
}

/* Answer call xid on fd with results res (by xr), signed with reply_key
 * if set. Under f->lock: the fake's thread and the test's both answer. */
static int answer_with(int fd, uint32_t xid, xdrproc_t xr, void *res)
{
	/* signed: the verifier's body (the MIC) is the 32 bytes before the
	 * accept_stat word, which the MIC covers from */
	enum { MIC_AT = 5 * 4, RES_AT = MIC_AT + INTEGRITY_MIC_LEN };
	uint8_t mic[INTEGRITY_MIC_LEN] = {0};
	struct rpc_msg m = {.rm_xid = xid, .rm_direction = REPLY};
	char buf[512];
	uint32_t mark;
	XDR x;

	m.rm_reply.rp_stat = MSG_ACCEPTED;
	m.acpted_rply.ar_verf = _null_auth;
	if (reply_key)
		m.acpted_rply.ar_verf =
			(struct opaque_auth){AUTH_NFSRDMA_HMAC, (caddr_t)mic, INTEGRITY_MIC_LEN};
	m.acpted_rply.ar_stat = SUCCESS;
	m.acpted_rply.ar_results.where = res;
	m.acpted_rply.ar_results.proc = xr;
	xdrmem_create(&x, buf + 4, sizeof(buf) - 4, XDR_ENCODE);
	if (!xdr_replymsg(&x, &m))
		return -1;
	if (reply_key) {
		if (rpc_reply_mic(reply_key, xid, (uint8_t *)buf + 4, RES_AT, xdr_getpos(&x), NULL,
				  mic) != 0)
			return -1;
		memcpy(buf + 4 + MIC_AT, mic, sizeof(mic));
	}
	mark = htonl(0x80000000u | xdr_getpos(&x));
	memcpy(buf, &mark, 4);
	return write(fd, buf, 4 + xdr_getpos(&x)) == (ssize_t)(4 + xdr_getpos(&x)) ? 0 : -1;
}

/* answer_with() nlm4_res stat (for TEST, an nlm4_testres without a
 * holder: the same bytes). */
static int answer(int fd, uint32_t xid, nlm4_stats stat)
{
	nlm4_res r = {.stat = stat};

	return answer_with(fd, xid, (xdrproc_t)xdr_nlm4_res, &r);
}

/* Keep the cookie and status of a GRANTED_RES call (its arguments at x). */
static void saw_res(struct fake *f, XDR *x)
{
	nlm4_res r;

	memset(&r, 0, sizeof(r));
	if (!xdr_nlm4_res(x, &r))
		return;
	pthread_mutex_lock(&f->lock);
	f->res_cookie_len =
		r.cookie.nlm4_netobj_len <= sizeof(f->res_cookie) ? r.cookie.nlm4_netobj_len : 0;
	memcpy(f->res_cookie, r.cookie.nlm4_netobj_val, f->res_cookie_len);
	f->res_stat = r.stat;
	pthread_mutex_unlock(&f->lock);
	xdr_free((xdrproc_t)xdr_nlm4_res, (char *)&r);
}

/* Keep the lock of a LOCK call (its arguments at x). */
static void saw_lock(struct fake *f, XDR *x)
{
	nlm4_lockargs a;

	memset(&a, 0, sizeof(a));
	if (!xdr_nlm4_lockargs(x, &a))
		return;
	pthread_mutex_lock(&f->lock);
	f->ohlen = a.alock.oh.nlm4_netobj_len < sizeof(f->oh) ? a.alock.oh.nlm4_netobj_len : 0;
	memcpy(f->oh, a.alock.oh.nlm4_netobj_val, f->ohlen);
	f->fhlen = a.alock.fh.nlm4_netobj_len <= sizeof(f->fh) ? a.alock.fh.nlm4_netobj_len : 0;
	memcpy(f->fh, a.alock.fh.nlm4_netobj_val, f->fhlen);
	f->off = a.alock.l_offset;
	f->len = a.alock.l_len;
	f->excl = a.exclusive;
	f->reclaims += a.reclaim;
	pthread_mutex_unlock(&f->lock);
	xdr_free((xdrproc_t)xdr_nlm4_lockargs, (char *)&a);
}

/* The fake server's thread: one connection, its calls answered in turn. */
static void *fake_main(void *arg)
{
	struct fake *f = arg;
	int fd = accept(f->lfd, NULL, NULL);
	char buf[4096];
	ssize_t len;

	pthread_mutex_lock(&f->lock);
	f->fd = fd;
	pthread_mutex_unlock(&f->lock);
	while (fd >= 0 && (len = read_record(fd, buf, sizeof(buf))) > 0) {
		char cred[MAX_AUTH_BYTES], verf[MAX_AUTH_BYTES];
		struct rpc_msg m;
		nlm4_stats st = NLM4_GRANTED;
		XDR x;

		memset(&m, 0, sizeof(m));
		m.rm_call.cb_cred.oa_base = cred; /* else decoding allocates them */
		m.rm_call.cb_verf.oa_base = verf;
		xdrmem_create(&x, buf, (u_int)len, XDR_DECODE);
		if (!xdr_callmsg(&x, &m))
			break;
		if (m.rm_call.cb_proc == NLM4_LOCK) {
			saw_lock(f, &x);
			pthread_mutex_lock(&f->lock);
			st = f->lock_answer;
			pthread_mutex_unlock(&f->lock);
		}
		if (m.rm_call.cb_proc == NLM4_GRANTED_RES)
			saw_res(f, &x);
		xdr_destroy(&x);
		pthread_mutex_lock(&f->lock);
		f->unlocks += m.rm_call.cb_proc == NLM4_UNLOCK;
		f->tests += m.rm_call.cb_proc == NLM4_TEST;
		/* counted with the decision to hold or answer, so that a test
		 * that sees the count sees the decision made */
		f->locks += m.rm_call.cb_proc == NLM4_LOCK;
		f->cancels += m.rm_call.cb_proc == NLM4_CANCEL;
		f->granted_res += m.rm_call.cb_proc == NLM4_GRANTED_RES;
		if (m.rm_call.cb_proc == f->hold && !f->go && !f->held_xid) {
			f->held_xid = m.rm_xid; /* answered GRANTED when the test says go */
		} else if (m.rm_call.cb_proc == NLM4_GRANTED_RES
				   ? answer_with(fd, m.rm_xid, (xdrproc_t)xdr_void, NULL) != 0
				   : answer(fd, m.rm_xid, st) != 0) {
			pthread_mutex_unlock(&f->lock);
			break;
		}
		pthread_cond_broadcast(&f->cond);
		pthread_mutex_unlock(&f->lock);
	}
	pthread_mutex_lock(&f->lock);
	f->fd = -1;
	pthread_mutex_unlock(&f->lock);
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* How long a case waits for the fake server in all (each call of the
 * client, even one that changes nothing, wakes a wait). */
#define FAKE_WAIT_MS 10000

/* One wait on f->cond (under f->lock) until end; -1 when that came. */
static int fake_wait(struct fake *f, const struct timespec *end)
{
	return pthread_cond_timedwait(&f->cond, &f->lock, end) == ETIMEDOUT ? -1 : 0;
}

/* Wait (under f->lock, at most 10 s) until *count passes n; 0, or -1. */
static int fake_until(struct fake *f, const int *count, int n)
{
	struct timespec end = clock_deadline(CLOCK_REALTIME, FAKE_WAIT_MS);

	while (*count <= n)
		if (fake_wait(f, &end) != 0)
			return -1;
	return 0;
}

/* The test's state: the fake server, the client, and the blocked request. */
struct fx {
	struct fake f;
	struct nlmc *n;
	pthread_t locker;
	struct nfs3c_fh fh;
	struct nlmc_wait *w; /* while nlmc_lock waits (under f.lock) */
	int rc;		     /* nlmc_lock's answer */
	int joined;
};

static void waiting(void *arg, struct nlmc_wait *w)
{
	struct fx *t = arg;

	pthread_mutex_lock(&t->f.lock);
	t->w = w;
	pthread_cond_broadcast(&t->f.cond);
	pthread_mutex_unlock(&t->f.lock);
}

static void *locker_main(void *arg)
{
	struct fx *t = arg;
	struct nlmc_lock l = {
		.fh = &t->fh, .owner = 42, .svid = 7, .type = F_WRLCK, .start = 0, .len = 100};

	t->rc = nlmc_lock(t->n, &l, 1, waiting, t);
	return NULL;
}

/* Interrupt the request if it still waits (under t->f.lock). */
static void interrupt_waiting(struct fx *t)
{
	if (t->w)
		nlmc_interrupt(t->n, t->w);
}

/* Let the fake server answer CANCEL from now on, and wait for nlmc_lock's
 * answer (in t->rc). */
static void finish(struct fx *t)
{
	pthread_mutex_lock(&t->f.lock);
	t->f.go = 1;
	if (t->f.held_xid && t->f.fd >= 0)
		answer(t->f.fd, t->f.held_xid, NLM4_GRANTED);
	t->f.held_xid = 0;
	pthread_cond_broadcast(&t->f.cond);
	pthread_mutex_unlock(&t->f.lock);
	if (!t->joined)
		pthread_join(t->locker, NULL);
	t->joined = 1;
}

static int setup(void **state)
{
	static struct fx t;
	struct nlmc_params p;
	struct timespec end;
	const char *why;
	char err[256];

	memset(&t, 0, sizeof(t));
	t.f.fd = -1;
	t.f.hold = NLM4_CANCEL;
	t.f.lock_answer = NLM4_BLOCKED;
	log_set_level(LOG_LVL_ERR);
	pthread_mutex_init(&t.f.lock, NULL);
	pthread_cond_init(&t.f.cond, NULL);
	t.f.lfd = net_listen_tcp("127.0.0.1", "0", 1, &why);
	if (t.f.lfd < 0 || pthread_create(&t.f.thread, NULL, fake_main, &t.f) != 0)
		return -1;
	nlmc_params_defaults(&p);
	p.host = "127.0.0.1";
	p.port = (unsigned)net_local_port(t.f.lfd);
	p.no_rpcbind = 1;
	/* a blocked request asks again every second; a signed one not before
	 * the case is over, so that a LOCK it sends comes of a GRANTED */
	p.repoll_s = reply_key ? 60 : 1;
	p.key = reply_key;
	if (nlmc_start(&p, &t.n, err, sizeof(err)) != 0) {
		fprintf(stderr, "nlmc_start: %s\n", err);
		return -1;
	}
	t.fh.len = 8;
	memcpy(t.fh.data, "FILEHNDL", 8);
	if (pthread_create(&t.locker, NULL, locker_main, &t) != 0)
		return -1;
	/* until the request is blocked on the server and waits here */
	end = clock_deadline(CLOCK_REALTIME, FAKE_WAIT_MS);
	pthread_mutex_lock(&t.f.lock);
	while (t.f.locks == 0 || t.w == NULL)
		if (fake_wait(&t.f, &end) != 0)
			break;
	pthread_mutex_unlock(&t.f.lock);
	*state = &t;
	return t.f.locks && t.w ? 0 : -1;
}

static int teardown(void **state)
{
	struct fx *t = *state;

	/* a case that failed before its request ended: it would wait for ever
	 * (BLOCKED, asked again every second) */
	pthread_mutex_lock(&t->f.lock);
	if (!t->joined)
		interrupt_waiting(t);
	pthread_mutex_unlock(&t->f.lock);
	finish(t);
	nlmc_stop(t->n); /* closes the connection: the fake server's thread ends */
	shutdown(t->f.lfd, SHUT_RDWR);
	pthread_join(t->f.thread, NULL);
	close(t->f.lfd);
	return 0;
}

/* The server's GRANTED (or GRANTED_MSG) of the blocked lock with cookie (5
 * bytes). */
static nlm4_testargs grant_args(struct fx *t, char *cookie)
{
	return (nlm4_testargs){.cookie = {5, cookie},
			       .exclusive = t->f.excl,
			       .alock = {.caller_name = "server",
					 .fh = {t->f.fhlen, t->f.fh},
					 .oh = {t->f.ohlen, t->f.oh},
					 .svid = 7,
					 .l_offset = t->f.off,
					 .l_len = t->f.len}};
}

/* The server's GRANTED (proc NLM4_GRANTED_PROC, answered with an nlm4_res
 * whose status is returned) or GRANTED_MSG (answered with nothing: 0) of the
 * blocked lock with cookie (5 bytes), over UDP to the callback service from
 * loopback address src. */
static nlm4_stats grant_from(struct fx *t, uint32_t proc, const char *src, char *cookie)
{
	struct sockaddr_in me = {.sin_family = AF_INET};
	struct sockaddr_in to = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)nlmc_cbport(t->n)),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct timeval tv = {.tv_sec = 5, .tv_usec = 0};
	nlm4_testargs a = grant_args(t, cookie);
	nlm4_res r;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(inet_pton(AF_INET, src, &me.sin_addr), 1);
	assert_int_equal(bind(fd, (struct sockaddr *)&me, sizeof(me)), 0);
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	memset(&r, 0, sizeof(r));
	assert_int_equal(udp_rpc_call(fd, (struct sockaddr *)&to, sizeof(to), NLM_PROGRAM, NLM_V4,
				      proc, (xdrproc_t)xdr_nlm4_testargs, &a, 0,
				      proc == NLM4_GRANTED_PROC ? (xdrproc_t)xdr_nlm4_res
								: (xdrproc_t)xdr_void,
				      &r),
			 SUCCESS);
	close(fd);
	if (proc != NLM4_GRANTED_PROC)
		return 0;
	xdr_free((xdrproc_t)xdr_nlm4_res, (char *)&r);
	return r.stat;
}

/* The same GRANTED_MSG over TCP (Linux's lockd calls back by the transport
 * the client's calls came by): 0 when it was answered, accepted. */
static int grant_msg_tcp(struct fx *t)
{
	struct timeval tv = {.tv_sec = 5, .tv_usec = 0};
	struct sockaddr_in to = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)nlmc_cbport(t->n)),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	nlm4_testargs a = grant_args(t, "grant");
	struct rpc_msg r;
	char buf[4096];
	ssize_t len = 4 + rpc_call_record(buf, sizeof(buf), 77, NLM_PROGRAM, NLM_V4,
					  NLM4_GRANTED_MSG, (xdrproc_t)xdr_nlm4_testargs, &a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), ok;
	XDR x;

	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
	    connect(fd, (struct sockaddr *)&to, sizeof(to)) != 0 ||
	    write(fd, buf, (size_t)len) != len || (len = read_record(fd, buf, sizeof(buf))) <= 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	memset(&r, 0, sizeof(r));
	r.acpted_rply.ar_results.where = NULL;
	r.acpted_rply.ar_results.proc = (xdrproc_t)xdr_void;
	xdrmem_create(&x, buf, (u_int)len, XDR_DECODE);
	ok = xdr_replymsg(&x, &r) && r.rm_xid == 77 && r.rm_reply.rp_stat == MSG_ACCEPTED &&
	     r.acpted_rply.ar_stat == SUCCESS;
	xdr_destroy(&x);
	return ok ? 0 : -1;
}

/* grant_from() the server (127.0.0.1), cookie "grant". */
static nlm4_stats grant_by(struct fx *t, uint32_t proc)
{
	return grant_from(t, proc, "127.0.0.1", "grant");
}

/* grant_by() GRANTED: its answer. */
static nlm4_stats grant(struct fx *t)
{
	return grant_by(t, NLM4_GRANTED_PROC);
}

/* A GRANTED_MSG (over TCP if tcp) wakes the request, which takes the lock;
 * the server is answered with a GRANTED_RES call that carries the cookie and
 * says GRANTED. */
static void granted_msg(void **state, int tcp)
{
	struct fx *t = *state;
	char cookie[sizeof(t->f.res_cookie)];
	u_int cookie_len;
	nlm4_stats st;
	int rc;

	if (tcp)
		assert_int_equal(grant_msg_tcp(t), 0);
	else
		assert_int_equal(grant_by(t, NLM4_GRANTED_MSG), 0);
	finish(t);
	assert_int_equal(t->rc, 0);
	pthread_mutex_lock(&t->f.lock);
	rc = fake_until(&t->f, &t->f.granted_res, 0);
	cookie_len = t->f.res_cookie_len;
	memcpy(cookie, t->f.res_cookie, sizeof(cookie));
	st = t->f.res_stat;
	pthread_mutex_unlock(&t->f.lock);
	assert_int_equal(rc, 0);
	assert_int_equal(cookie_len, 5);
	assert_memory_equal(cookie, "grant", 5);
	assert_int_equal(st, NLM4_GRANTED);
	assert_int_equal(nlmc_release_owner(t->n, &t->fh, 42), 0);
}

static void granted_msg_answered_by_res(void **state)
{
	granted_msg(state, 0);
}

static void granted_msg_over_tcp(void **state)
{
	granted_msg(state, 1);
}

/* A GRANTED_MSG from another address wakes the request (as a GRANTED
 * would), but is not answered with a GRANTED_RES: that goes to the server
 * on our connection, and would let anyone say no for us. The server's own,
 * sent next, is answered, and is the first GRANTED_RES the server sees. */
static void granted_res_only_to_server(void **state)
{
	struct fx *t = *state;
	char cookie[sizeof(t->f.res_cookie)];
	u_int cookie_len;
	int rc, n;

	assert_int_equal(grant_from(t, NLM4_GRANTED_MSG, "127.0.0.2", "forge"), 0);
	finish(t);
	assert_int_equal(t->rc, 0);
	assert_int_equal(grant_by(t, NLM4_GRANTED_MSG), 0);
	pthread_mutex_lock(&t->f.lock);
	rc = fake_until(&t->f, &t->f.granted_res, 0);
	n = t->f.granted_res;
	cookie_len = t->f.res_cookie_len;
	memcpy(cookie, t->f.res_cookie, sizeof(cookie));
	pthread_mutex_unlock(&t->f.lock);
	assert_int_equal(rc, 0);
	assert_int_equal(n, 1);
	assert_int_equal(cookie_len, 5);
	assert_memory_equal(cookie, "grant", 5);
	assert_int_equal(nlmc_release_owner(t->n, &t->fh, 42), 0);
}

/* Interrupted, the request sends CANCEL; a GRANTED before its answer is
 * denied, and the caller gets EINTR. */
static void granted_after_interrupt_denied(void **state)
{
	struct fx *t = *state;
	int rc;

	pthread_mutex_lock(&t->f.lock);
	nlmc_interrupt(t->n, t->w);
	rc = fake_until(&t->f, &t->f.cancels, 0);
	pthread_mutex_unlock(&t->f.lock);
	assert_int_equal(rc, 0);
	assert_int_equal(grant(t), NLM4_DENIED);
	finish(t);
	assert_int_equal(t->rc, -EINTR);
}

/* A GRANTED taken, then the interruption if the request still waits (it
 * has mostly woken by then: the order cannot be forced from here): the lock
 * is held, no CANCEL goes, and it is released by an UNLOCK. */
static void granted_before_interrupt_wins(void **state)
{
	struct fx *t = *state;

	assert_int_equal(grant(t), NLM4_GRANTED);
	pthread_mutex_lock(&t->f.lock);
	interrupt_waiting(t);
	pthread_mutex_unlock(&t->f.lock);
	finish(t);
	assert_int_equal(t->rc, 0);
	assert_int_equal(t->f.cancels, 0);
	assert_int_equal(nlmc_release_owner(t->n, &t->fh, 42), 0);
	pthread_mutex_lock(&t->f.lock);
	assert_int_equal(t->f.unlocks, 1);
	pthread_mutex_unlock(&t->f.lock);
}

/* The server sends its GRANTED again (our answer to the first was lost or
 * late, and it resends until answered): the lock taken, the second is
 * answered GRANTED too (a DENIED would have the server give back a lock
 * the owner holds); once the lock is released, DENIED. */
static void granted_again_after_taken(void **state)
{
	struct fx *t = *state;

	assert_int_equal(grant(t), NLM4_GRANTED);
	finish(t);
	assert_int_equal(t->rc, 0);
	assert_int_equal(grant(t), NLM4_GRANTED);
	assert_int_equal(nlmc_release_owner(t->n, &t->fh, 42), 0);
	assert_int_equal(grant(t), NLM4_DENIED);
	pthread_mutex_lock(&t->f.lock);
	assert_int_equal(t->f.unlocks, 1);
	pthread_mutex_unlock(&t->f.lock);
}

struct second {
	struct fx *t;
	int rc;
};

static void *second_main(void *arg)
{
	struct second *q = arg;
	struct nlmc_lock l = {
		.fh = &q->t->fh, .owner = 43, .svid = 8, .type = F_WRLCK, .start = 200, .len = 100};

	q->rc = nlmc_lock(q->t->n, &l, 0, NULL, NULL);
	return NULL;
}

/* With a lock held, another request refused for the grace period (sent
 * again every second) until the server grants it: no LOCK with reclaim set
 * goes meanwhile (before, the first refusal had the reclaimer send the held
 * lock again at once). */
static void grace_refusal_is_no_restart(void **state)
{
	struct fx *t = *state;
	struct second q = {.t = t};
	pthread_t th;
	int locks, rc, reclaims;

	assert_int_equal(grant(t), NLM4_GRANTED);
	finish(t);
	assert_int_equal(t->rc, 0);
	pthread_mutex_lock(&t->f.lock);
	t->f.lock_answer = NLM4_DENIED_GRACE_PERIOD;
	locks = t->f.locks;
	pthread_mutex_unlock(&t->f.lock);
	assert_int_equal(pthread_create(&th, NULL, second_main, &q), 0);
	pthread_mutex_lock(&t->f.lock);
	rc = fake_until(&t->f, &t->f.locks, locks + 3); /* refused 4 times: 3 s */
	t->f.lock_answer = NLM4_GRANTED;
	reclaims = t->f.reclaims;
	pthread_mutex_unlock(&t->f.lock);
	pthread_join(th, NULL);
	assert_int_equal(rc, 0);
	assert_int_equal(q.rc, 0);
	assert_int_equal(reclaims, 0);
	assert_int_equal(nlmc_release_owner(t->n, &t->fh, 42), 0);
	assert_int_equal(nlmc_release_owner(t->n, &t->fh, 43), 0);
}

struct tester {
	struct fx *t;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int done, rc, type;
};

static void *tester_main(void *arg)
{
	struct tester *q = arg;
	struct nlmc_lock l = {
		.fh = &q->t->fh, .owner = 43, .svid = 8, .type = F_WRLCK, .start = 0, .len = 100};
	pid_t pid;
	int rc = nlmc_test(q->t->n, &l, &pid);

	pthread_mutex_lock(&q->lock);
	q->rc = rc;
	q->type = l.type;
	q->done = 1;
	pthread_cond_signal(&q->cond);
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

/* While the interrupted request's CANCEL waits for its answer, another
 * thread's TEST is answered (within 5 s; before, it waited for the CANCEL). */
static void calls_go_out_at_once(void **state)
{
	struct fx *t = *state;
	struct tester q = {
		.t = t, .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
	struct timespec until;
	pthread_t th;
	int answered, rc;

	pthread_mutex_lock(&t->f.lock);
	nlmc_interrupt(t->n, t->w);
	rc = fake_until(&t->f, &t->f.cancels, 0);
	pthread_mutex_unlock(&t->f.lock);
	assert_int_equal(rc, 0);
	assert_int_equal(pthread_create(&th, NULL, tester_main, &q), 0);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 5;
	pthread_mutex_lock(&q.lock);
	while (!q.done && pthread_cond_timedwait(&q.cond, &q.lock, &until) == 0)
		;
	answered = q.done;
	pthread_mutex_unlock(&q.lock);
	finish(t); /* the CANCEL answered: the request ends, and a held-up TEST too */
	pthread_join(th, NULL);
	assert_int_equal(t->rc, -EINTR);
	assert_true(answered);
	assert_int_equal(q.rc, 0);
	assert_int_equal(q.type, F_UNLCK);
	pthread_mutex_lock(&t->f.lock);
	assert_int_equal(t->f.tests, 1);
	pthread_mutex_unlock(&t->f.lock);
}

/* The request asks again (its LOCK held unanswered), is interrupted, and
 * the server's GRANTED comes: taken; the LOCK's answer GRANTED gives the
 * caller the lock, which an UNLOCK releases. */
static void granted_while_lock_on_its_way(void **state)
{
	struct fx *t = *state;
	int rc, locks;

	pthread_mutex_lock(&t->f.lock);
	t->f.hold = NLM4_LOCK;
	locks = t->f.locks;
	rc = fake_until(&t->f, &t->f.locks, locks); /* the next LOCK, held */
	if (rc == 0)
		nlmc_interrupt(t->n, t->w);
	pthread_mutex_unlock(&t->f.lock);
	assert_int_equal(rc, 0);
	assert_int_equal(grant(t), NLM4_GRANTED);
	finish(t);
	assert_int_equal(t->rc, 0);
	assert_int_equal(nlmc_release_owner(t->n, &t->fh, 42), 0);
	pthread_mutex_lock(&t->f.lock);
	assert_int_equal(t->f.unlocks, 1);
	assert_int_equal(t->f.cancels, 0);
	pthread_mutex_unlock(&t->f.lock);
}

/* A server whose NLM takes no connection (its listen queue full, so a
 * connect waits for its timeout, as to a host that drops them): the client
 * with its filler connection and listener. */
struct dead {
	struct fx t;
	int lfd, filler;
};

static int setup_dead(void **state)
{
	static struct dead d;
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sa);
	struct nlmc_params p;
	char err[256];

	memset(&d, 0, sizeof(d));
	log_set_level(LOG_LVL_ERR);
	d.lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	d.filler = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (d.lfd < 0 || d.filler < 0 || bind(d.lfd, (struct sockaddr *)&sa, len) != 0 ||
	    listen(d.lfd, 0) != 0 || getsockname(d.lfd, (struct sockaddr *)&sa, &len) != 0 ||
	    connect(d.filler, (struct sockaddr *)&sa, len) != 0)
		return -1;
	nlmc_params_defaults(&p);
	p.host = "127.0.0.1";
	p.port = ntohs(sa.sin_port);
	p.no_rpcbind = 1;
	p.timeout_ms = 1000;
	if (nlmc_start(&p, &d.t.n, err, sizeof(err)) != 0) {
		fprintf(stderr, "nlmc_start: %s\n", err);
		return -1;
	}
	d.t.fh.len = 8;
	memcpy(d.t.fh.data, "FILEHNDL", 8);
	*state = &d;
	return 0;
}

static int teardown_dead(void **state)
{
	struct dead *d = *state;

	nlmc_stop(d->t.n);
	close(d->filler);
	close(d->lfd);
	return 0;
}

/* Four callers at once fail with ENOLCK after one connect's timeout (1 s),
 * sharing it, not after one each in turn (4 s). */
static void one_connect_for_all(void **state)
{
	struct dead *d = *state;
	struct tester q[4];
	pthread_t th[4];
	struct timespec t0, t1;
	long ms;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < 4; i++) {
		q[i] = (struct tester){.t = &d->t,
				       .lock = PTHREAD_MUTEX_INITIALIZER,
				       .cond = PTHREAD_COND_INITIALIZER};
		assert_int_equal(pthread_create(&th[i], NULL, tester_main, &q[i]), 0);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	printf("# 4 callers failed in %ld ms\n", ms);
	for (int i = 0; i < 4; i++)
		assert_int_equal(q[i].rc, -ENOLCK);
	assert_true(ms < 2500);
}

/* The signed cases: the client signs its calls with signing_key, and the
 * fake server its answers. */
static int setup_signed(void **state)
{
	static const char bytes[] = "nlm_clnt_wait_test's signing key";

	if (integrity_key_set(&signing_key, bytes, sizeof(bytes) - 1, 0) != 0)
		return -1;
	reply_key = &signing_key;
	return setup(state);
}

static int teardown_signed(void **state)
{
	int rc = teardown(state);

	reply_key = NULL;
	integrity_key_clear(&signing_key);
	return rc;
}

/* Whether f has seen more than n LOCKs within 10 s. */
static int locks_pass(struct fake *f, int n)
{
	int rc;

	pthread_mutex_lock(&f->lock);
	rc = fake_until(f, &f->locks, n);
	pthread_mutex_unlock(&f->lock);
	return rc == 0;
}

/* A signed mount's blocked request woken by a GRANTED asks the server again
 * before it takes the lock: one the server did not send (it still answers
 * BLOCKED) leaves it waiting; once the server answers GRANTED, the next
 * GRANTED gives it the lock. */
static void signed_granted_asks_again(void **state)
{
	struct fx *t = *state;
	int locks, waits;

	pthread_mutex_lock(&t->f.lock);
	locks = t->f.locks;
	pthread_mutex_unlock(&t->f.lock);
	assert_int_equal(grant(t), NLM4_GRANTED); /* it woke the wait */
	assert_true(locks_pass(&t->f, locks));	  /* and the LOCK went again */
	usleep(300 * 1000);			  /* BLOCKED, and the wait again */
	pthread_mutex_lock(&t->f.lock);
	waits = t->w != NULL; /* nlmc_lock has not returned */
	t->f.lock_answer = NLM4_GRANTED;
	locks = t->f.locks;
	pthread_mutex_unlock(&t->f.lock);
	assert_true(waits);
	assert_int_equal(grant(t), NLM4_GRANTED);
	assert_true(locks_pass(&t->f, locks));
	finish(t);
	assert_int_equal(t->rc, 0);
}

/* A signed mount's request woken by a GRANTED asks again, is refused for
 * the grace period, and is interrupted while it waits to ask again: the
 * caller gets EINTR, but the server may hold the lock it granted, so the
 * range counts as held and the owner's release sends an UNLOCK. */
static void woken_then_interrupted_releases(void **state)
{
	struct fx *t = *state;
	int locks, unlocks;

	pthread_mutex_lock(&t->f.lock);
	t->f.lock_answer = NLM4_DENIED_GRACE_PERIOD;
	locks = t->f.locks;
	pthread_mutex_unlock(&t->f.lock);
	assert_int_equal(grant(t), NLM4_GRANTED);
	assert_true(locks_pass(&t->f, locks)); /* asked again: refused */
	pthread_mutex_lock(&t->f.lock);
	interrupt_waiting(t);
	pthread_mutex_unlock(&t->f.lock);
	finish(t);
	assert_int_equal(t->rc, -EINTR);
	assert_int_equal(nlmc_release_owner(t->n, &t->fh, 42), 0);
	pthread_mutex_lock(&t->f.lock);
	unlocks = t->f.unlocks;
	pthread_mutex_unlock(&t->f.lock);
	assert_int_equal(unlocks, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(granted_after_interrupt_denied, setup, teardown),
		cmocka_unit_test_setup_teardown(granted_before_interrupt_wins, setup, teardown),
		cmocka_unit_test_setup_teardown(granted_while_lock_on_its_way, setup, teardown),
		cmocka_unit_test_setup_teardown(granted_again_after_taken, setup, teardown),
		cmocka_unit_test_setup_teardown(granted_msg_answered_by_res, setup, teardown),
		cmocka_unit_test_setup_teardown(granted_msg_over_tcp, setup, teardown),
		cmocka_unit_test_setup_teardown(granted_res_only_to_server, setup, teardown),
		cmocka_unit_test_setup_teardown(grace_refusal_is_no_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(calls_go_out_at_once, setup, teardown),
		cmocka_unit_test_setup_teardown(one_connect_for_all, setup_dead, teardown_dead),
		cmocka_unit_test_setup_teardown(signed_granted_asks_again, setup_signed,
						teardown_signed),
		cmocka_unit_test_setup_teardown(woken_then_interrupted_releases, setup_signed,
						teardown_signed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
