/*
 * rpcrdma_svc_admit.c: how many RPC/RDMA connections the server holds, and
 * for how long. Each holds its receive buffers and queue pairs (about 1 MB),
 * so: at most max_conns at once, past which the one idle the longest is
 * closed to make room (as the Linux server does) or the newcomer is rejected;
 * at most max_conns_per_addr from one address; and one that has had no call
 * for idle_ms, with nothing in flight, is closed (clients reconnect). All of
 * it runs on the endpoint's event loop.
 */
#include <stdio.h>
#include <string.h>

#include "common/base/log.h"
#include "common/base/net.h"
#include "rpcrdma_svc.h"

#define SHED_MIN_IDLE_MS 1000 /* a connection idle less than this is never shed */

/* Since when c has been idle (nothing received, running, exposed or waiting
 * for the device), or 0 if it is busy. Takes c->lock. */
static uint64_t idle_since(struct rr_conn *c)
{
	struct svc_conn *sc = c->side;
	uint64_t since;

	pthread_mutex_lock(&c->lock);
	since = sc->active || sc->exp_head || sc->dev_head || sc->send_wait || sc->nomsg_wait
			? 0
			: sc->last_ns;
	pthread_mutex_unlock(&c->lock);
	return since;
}

/* See rpcrdma_svc.h. */
int rrs_admit(struct rr_server *srv, struct vb_conn *vc)
{
	struct rr_ep *ep = srv->ep;
	uint64_t now = clock_now_ns(), oldest = now - (uint64_t)SHED_MIN_IDLE_MS * 1000000;
	unsigned total = 0, from_addr = 0;
	struct rr_conn *victim = NULL;
	int ok = 1;

	pthread_mutex_lock(&ep->lock);
	for (struct rr_conn *c = ep->conns; c; c = c->next) {
		struct svc_conn *sc = c->side;
		uint64_t since;

		if (!sc || rr_conn_is_dead(c))
			continue; /* going: it does not count */
		total++;
		from_addr += vc->peer_addr_len && sc->peer_addr_len &&
			     net_same_host(&sc->peer_addr, &vc->peer_addr);
		if ((since = idle_since(c)) && since <= oldest) {
			victim = c;
			oldest = since;
		}
	}
	if (ep->p.max_conns_per_addr && from_addr >= ep->p.max_conns_per_addr) {
		log_warn("%s: rejected: already %u connections from this address", vc->peer,
			 from_addr);
		ok = 0;
	} else if (ep->p.max_conns && total >= ep->p.max_conns) {
		if (victim) {
			log_info("%s: idle for %llu ms, closed to make room for another client",
				 victim->peer, (unsigned long long)((now - oldest) / 1000000));
			rr_stat_add(&ep->st.conns_shed, 1);
			rr_conn_fail(victim, "closed to make room");
		} else {
			log_warn("%s: rejected: %u connections, none idle", vc->peer, total);
			ok = 0;
		}
	}
	pthread_mutex_unlock(&ep->lock);
	if (!ok)
		rr_stat_add(&ep->st.conns_refused, 1);
	return ok;
}

/* See rpcrdma_svc.h. Called under ep->lock, as the tick walks the connections. */
void rrs_idle_check(struct rr_conn *c, uint64_t now)
{
	struct rr_ep *ep = c->ep;
	uint64_t since;
	char why[64];

	if (!ep->p.idle_ms || rr_conn_is_dead(c) || !(since = idle_since(c)) ||
	    !clock_passed(now, since, (uint64_t)ep->p.idle_ms * 1000000))
		return;
	rr_stat_add(&ep->st.idle_closed, 1);
	snprintf(why, sizeof(why), "idle for %u ms", ep->p.idle_ms);
	rr_conn_fail(c, why);
}
