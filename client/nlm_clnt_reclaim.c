/*
 * nlm_clnt_reclaim.c: reclaim after the server restarts. A thread takes every
 * lock held back (LOCK with reclaim) when SM_NOTIFY says the server restarted
 * or when the connection to the server's NLM had to be made again while
 * locks are held; not for a request refused for the grace period, which a
 * server whose storage stalls answers too (Linux's client does not either).
 * The same thread answers the server's GRANTED_MSG calls (Linux's lockd
 * grants blocked locks so) with GRANTED_RES, which the callback service,
 * whose thread must not wait on the server, leaves to it.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <rpc/rpc.h>

#include "client/nlm_clnt_int.h"
#include "common/base/log.h"
#include "common/nfs/nlm_prog.h"
#include "common/nfs/nlm_prot.h"

#define RECLAIM_CHECK_MS 2000 /* while locks are held: has the server restarted? */

/* The server told us it restarted (SM_NOTIFY): reclaim. */
void nlmc_reclaim_want(struct nlmc *n)
{
	pthread_mutex_lock(&n->lock);
	n->reclaim_wanted = 1;
	pthread_cond_signal(&n->reclaim_cond);
	pthread_mutex_unlock(&n->lock);
}

/* See nlm_clnt_int.h. */
void nlmc_res_queue(struct nlmc *n, const nlm4_res *r)
{
	pthread_mutex_lock(&n->lock);
	if (n->nres < RES_MAX && r->cookie.nlm4_netobj_len <= RES_COOKIE_MAX) {
		struct nlmc_res *q = &n->res[n->nres++];

		if (r->cookie.nlm4_netobj_len) /* else its pointer may be NULL */
			memcpy(q->cookie, r->cookie.nlm4_netobj_val, r->cookie.nlm4_netobj_len);
		q->len = r->cookie.nlm4_netobj_len;
		q->stat = r->stat;
		pthread_cond_signal(&n->reclaim_cond);
	}
	pthread_mutex_unlock(&n->lock);
}

/* Send the GRANTED_RES answers queued (under n->lock, let go of meanwhile). */
static void send_res(struct nlmc *n)
{
	struct nlmc_res q[RES_MAX];
	unsigned k = n->nres;

	memcpy(q, n->res, k * sizeof(q[0]));
	n->nres = 0;
	pthread_mutex_unlock(&n->lock);
	for (unsigned i = 0; i < k && !__atomic_load_n(&n->stop, __ATOMIC_ACQUIRE); i++) {
		nlm4_res r = {.cookie = {q[i].len, q[i].cookie}, .stat = q[i].stat};

		if (nlmc_call(n, NULL, NLM4_GRANTED_RES, (xdrproc_t)xdr_nlm4_res, &r,
			      (xdrproc_t)xdr_void, NULL) != 0)
			log_debug("locks: a GRANTED_RES did not reach the server");
	}
	pthread_mutex_lock(&n->lock);
}

/* One range to reclaim, with copies of what its pair keeps. */
struct reclaim {
	struct nlmc_lock l;
	struct nfs3c_fh fh;
	struct rpc_cred cred;
};

/* LOCK with reclaim for every range held, each for whom it was taken; the
 * number lost. */
static unsigned reclaim_all(struct nlmc *n, unsigned *total)
{
	struct reclaim *all = NULL;
	unsigned k = 0, lost = 0, cap = 0;

	pthread_mutex_lock(&n->lock);
	for (struct nlmc_held *h = n->held.head; h; h = h->next)
		cap += h->nr;
	if (cap && (all = calloc(cap, sizeof(*all))) == NULL)
		cap = 0;
	for (struct nlmc_held *h = n->held.head; h && k < cap; h = h->next) {
		for (unsigned i = 0; i < h->nr && k < cap; i++, k++) {
			all[k].fh = h->fh;
			all[k].cred = h->cred;
			all[k].l = (struct nlmc_lock){
				.fh = &all[k].fh,
				.cred = nlmc_held_cred(h) ? &all[k].cred : NULL,
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
			.exclusive = all[i].l.type == F_WRLCK, .reclaim = 1, .state = n->state};
		nlm4_res r;
		char oh[OH_LEN];
		uint32_t ck;

		nlmc_set_cookie(n, &ck, &a.cookie);
		nlmc_fill_alock(n, &all[i].l, oh, &a.alock);
		memset(&r, 0, sizeof(r));
		if (nlmc_call(n, all[i].l.cred, NLM4_LOCK, (xdrproc_t)xdr_nlm4_lockargs, &a,
			      (xdrproc_t)xdr_nlm4_res, &r) != 0) {
			lost++;
			continue;
		}
		/* not in grace: the server never lost it */
		lost += r.stat != NLM4_GRANTED && r.stat != NLM4_DENIED_GRACE_PERIOD;
		xdr_free((xdrproc_t)xdr_nlm4_res, (char *)&r);
	}
	free(all);
	*total = k;
	return lost;
}

/* Whether the connection to the server's NLM had to be made again (it may
 * have restarted): an NLM NULL call on it, only while locks are held. */
static int reconnected(struct nlmc *n)
{
	int again;

	if (nlmc_call(n, NULL, NLM4_NULL, (xdrproc_t)xdr_void, NULL, (xdrproc_t)xdr_void, NULL) !=
	    0)
		return 0;
	pthread_mutex_lock(&n->call_lock);
	again = n->reconnected;
	n->reconnected = 0;
	pthread_mutex_unlock(&n->call_lock);
	return again;
}

/* The reclaimer: on SM_NOTIFY or a new connection while locks are held
 * (checked every RECLAIM_CHECK_MS), reclaim them all; and send the
 * GRANTED_RES answers queued. */
void *nlmc_reclaim_main(void *arg)
{
	struct nlmc *n = arg;
	unsigned total, lost;
	struct timespec ts;
	int want, held;

	pthread_mutex_lock(&n->lock);
	while (!n->stop) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += RECLAIM_CHECK_MS / 1000;
		if (!n->reclaim_wanted && n->nres == 0)
			pthread_cond_timedwait(&n->reclaim_cond, &n->lock, &ts);
		if (n->stop)
			break;
		send_res(n);
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
