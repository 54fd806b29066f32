/*
 * nlm_test_cb.c: the clients' side of the server's calls back: an
 * rpcbind (PMAP GETPORT) naming the test's NLM and NSM services, those
 * services (GRANTED, the _RES calls, SM_NOTIFY) on one UDP socket each on
 * 127.0.0.1, and the events they record for the cases to wait on.
 * Part of t/system/nlm_test (see nlm_test.c).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <rpc/rpc.h>
#include <rpc/pmap_prot.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "common/nfs/nlm_prog.h"
#include "common/nfs/nlm_prot.h"
#include "common/nfs/nsm_prot.h"
#include "nlm_test.h"

unsigned short pmap_port;
static unsigned short cb_port;

/* ---- what the server called back */

#define MAX_EVENTS 256
static struct event events[MAX_EVENTS];
static unsigned nevents;
static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ev_cond = PTHREAD_COND_INITIALIZER;

uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void record(const struct event *e)
{
	pthread_mutex_lock(&ev_lock);
	if (nevents < MAX_EVENTS)
		events[nevents++] = *e;
	pthread_cond_broadcast(&ev_cond);
	pthread_mutex_unlock(&ev_lock);
}

/* Wait at most ms for an event that match accepts; take it out. */
int wait_event(ev_match match, const void *arg, int ms, struct event *out)
{
	uint64_t end = now_ms() + (uint64_t)ms;
	int found = 0;

	pthread_mutex_lock(&ev_lock);
	while (!found) {
		for (unsigned i = 0; i < nevents && !found; i++) {
			if (match(&events[i], arg)) {
				if (out)
					*out = events[i];
				events[i] = events[--nevents];
				found = 1;
			}
		}
		if (found || now_ms() >= end)
			break;
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 50 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&ev_cond, &ev_lock, &ts);
	}
	pthread_mutex_unlock(&ev_lock);
	return found;
}

int match_granted_svid(const struct event *e, const void *arg)
{
	return (e->kind == EV_GRANTED || e->kind == EV_GRANTED_MSG) &&
	       e->svid == *(const int32_t *)arg;
}

int match_res_proc(const struct event *e, const void *arg)
{
	return e->kind == EV_RES && e->proc == *(const uint32_t *)arg;
}

int match_notify(const struct event *e, const void *arg)
{
	(void)arg;
	return e->kind == EV_NOTIFY;
}

/* ---- the client side's services: rpcbind, NLM, NSM (one UDP socket) */

static void pmap_dispatch(struct svc_req *rq, SVCXPRT *x)
{
	struct pmap pm;
	u_short port = 0;

	if (rq->rq_proc == 0) {
		svc_sendreply(x, (xdrproc_t)xdr_void, NULL);
		return;
	}
	if (rq->rq_proc != PMAPPROC_GETPORT) {
		svcerr_noproc(x);
		return;
	}
	memset(&pm, 0, sizeof(pm));
	if (!svc_getargs(x, (xdrproc_t)xdr_pmap, (char *)&pm)) {
		svcerr_decode(x);
		return;
	}
	if ((pm.pm_prog == NLM_PROGRAM && pm.pm_vers == NLM_V4) ||
	    (pm.pm_prog == NSM_PROGRAM && pm.pm_vers == NSM_V1))
		port = cb_port;
	svc_sendreply(x, (xdrproc_t)xdr_u_short, (char *)&port);
}

static void set_cookie(struct event *e, const nlm4_netobj *c)
{
	e->cookie_len = c->nlm4_netobj_len < sizeof(e->cookie) ? c->nlm4_netobj_len : 0;
	memcpy(e->cookie, c->nlm4_netobj_val, e->cookie_len);
}

/* GRANTED and GRANTED_MSG: record the lock; GRANTED answers "taken". */
static void nlm_granted(struct svc_req *rq, SVCXPRT *x)
{
	struct event e = {.kind = rq->rq_proc == NLM4_GRANTED_PROC ? EV_GRANTED : EV_GRANTED_MSG};
	nlm4_testargs a;

	memset(&a, 0, sizeof(a));
	if (!svc_getargs(x, (xdrproc_t)xdr_nlm4_testargs, (char *)&a)) {
		svcerr_decode(x);
		return;
	}
	e.svid = a.alock.svid;
	e.off = a.alock.l_offset;
	e.len = a.alock.l_len;
	set_cookie(&e, &a.cookie);
	if (rq->rq_proc == NLM4_GRANTED_PROC) {
		nlm4_res r = {.cookie = a.cookie, .stat = NLM4_GRANTED};

		svc_sendreply(x, (xdrproc_t)xdr_nlm4_res, (char *)&r);
	} else {
		svc_sendreply(x, (xdrproc_t)xdr_void, NULL);
	}
	record(&e);
	svc_freeargs(x, (xdrproc_t)xdr_nlm4_testargs, (char *)&a);
}

static void nlm_dispatch(struct svc_req *rq, SVCXPRT *x)
{
	struct event e = {.kind = EV_RES, .proc = rq->rq_proc};

	switch (rq->rq_proc) {
	case NLM4_GRANTED_PROC:
	case NLM4_GRANTED_MSG:
		nlm_granted(rq, x);
		return;
	case NLM4_TEST_RES: {
		nlm4_testres r;

		memset(&r, 0, sizeof(r));
		if (!svc_getargs(x, (xdrproc_t)xdr_nlm4_testres, (char *)&r)) {
			svcerr_decode(x);
			return;
		}
		e.stat = r.stat.stat;
		set_cookie(&e, &r.cookie);
		svc_freeargs(x, (xdrproc_t)xdr_nlm4_testres, (char *)&r);
		break;
	}
	case NLM4_LOCK_RES:
	case NLM4_CANCEL_RES:
	case NLM4_UNLOCK_RES: {
		nlm4_res r;

		memset(&r, 0, sizeof(r));
		if (!svc_getargs(x, (xdrproc_t)xdr_nlm4_res, (char *)&r)) {
			svcerr_decode(x);
			return;
		}
		e.stat = r.stat;
		set_cookie(&e, &r.cookie);
		svc_freeargs(x, (xdrproc_t)xdr_nlm4_res, (char *)&r);
		break;
	}
	default:
		svcerr_noproc(x);
		return;
	}
	svc_sendreply(x, (xdrproc_t)xdr_void, NULL);
	record(&e);
}

static void nsm_dispatch(struct svc_req *rq, SVCXPRT *x)
{
	struct event e = {.kind = EV_NOTIFY};
	nsm_stat_chge a;

	if (rq->rq_proc != NSM_NOTIFY) {
		svcerr_noproc(x);
		return;
	}
	memset(&a, 0, sizeof(a));
	if (!svc_getargs(x, (xdrproc_t)xdr_nsm_stat_chge, (char *)&a)) {
		svcerr_decode(x);
		return;
	}
	snprintf(e.name, sizeof(e.name), "%s", a.mon_name);
	e.state = a.state;
	svc_sendreply(x, (xdrproc_t)xdr_void, NULL);
	record(&e);
	svc_freeargs(x, (xdrproc_t)xdr_nsm_stat_chge, (char *)&a);
}

static void *svc_thread(void *arg)
{
	(void)arg;
	svc_run();
	return NULL;
}

/* A UDP socket on 127.0.0.1 only: the client at 127.0.0.3 answers nothing. */
static int loopback_socket(void)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	return fd;
}

void start_services(void)
{
	SVCXPRT *pm = svcudp_create(loopback_socket()), *cb = svcudp_create(loopback_socket());
	pthread_t th;

	assert_non_null(pm);
	assert_non_null(cb);
	pmap_port = pm->xp_port;
	cb_port = cb->xp_port;
	assert_true(svc_register(pm, PMAPPROG, PMAPVERS, pmap_dispatch, 0));
	assert_true(svc_register(cb, NLM_PROGRAM, NLM_V4, nlm_dispatch, 0));
	assert_true(svc_register(cb, NSM_PROGRAM, NSM_V1, nsm_dispatch, 0));
	assert_int_equal(pthread_create(&th, NULL, svc_thread, NULL), 0);
	pthread_detach(th);
}
