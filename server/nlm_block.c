/*
 * nlm_block.c: blocked lock requests and their grants. A LOCK that conflicts
 * and may wait is queued here (server.nlm.blocked_per_client at most per
 * client, each for server.nlm.blocked_timeout_s); it is tried again when a
 * lock on its file goes and at every tick of the nlm thread. When it gets its
 * lock the client is told with a GRANTED call (GRANTED_MSG if it asked with
 * LOCK_MSG), and a lock the client does not take (no answer, or it says
 * no) is released.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "common/base/log.h"
#include "common/base/net.h"
#include "server/nlm_int.h"

/* See nlm_int.h. */
struct nlm_block *nlm_block_find(const struct nlm_owner *o, uint64_t start, uint64_t end,
				 int exclusive)
{
	for (struct nlm_block *b = o->part->blocked; b; b = b->next)
		if (b->owner == o && b->start == start && b->end == end &&
		    b->exclusive == exclusive)
			return b;
	return NULL;
}

/* See nlm_int.h. */
void nlm_block_unlink(struct nlm_block *b)
{
	for (struct nlm_block **p = &b->owner->part->blocked; *p; p = &(*p)->next) {
		if (*p == b) {
			*p = b->next;
			break;
		}
	}
	b->owner->nblocked--;
	b->owner->host->nblocked--;
	nlm_host_touch(b->owner->host);
}

/* See nlm_int.h. */
void nlm_block_free(struct nlm *n, struct nlm_block *b)
{
	struct nlm_owner *o = b->owner;

	nlm_block_unlink(b);
	free(b);
	nlm_owner_maybe_free(n, o);
}

/* See nlm_int.h. */
nlm4_stats nlm_block_queue(struct nlm *n, struct nlm_owner *o, uint64_t start, uint64_t end,
			   int exclusive, int via_msg, const struct rpc_req *call)
{
	struct nlm_block *b = nlm_block_find(o, start, end, exclusive);

	if (b == NULL) {
		if (o->host->nblocked >= n->p.blocked_per_client) {
			log_warn("NLM: client '%s' has %u blocked requests "
				 "(server.nlm.blocked_per_client)",
				 o->host->name, o->host->nblocked);
			n->nolocks++;
			return NLM4_DENIED_NOLOCKS;
		}
		if ((b = calloc(1, sizeof(*b))) == NULL)
			return NLM4_DENIED_NOLOCKS;
		*b = (struct nlm_block){.owner = o,
					.start = start,
					.end = end,
					.exclusive = exclusive,
					.via_msg = via_msg};
		b->next = o->part->blocked;
		o->part->blocked = b;
		o->nblocked++;
		o->host->nblocked++;
		nlm_host_touch(o->host);
	}
	b->signed_req |= call->integrity_ok; /* an unsigned copy does not unsign it */
	b->deadline_ms = nlm_now_ms() + (uint64_t)n->p.blocked_timeout_s * 1000;
	n->blocked_n++;
	return NLM4_BLOCKED;
}

/* The alock of a GRANTED call for o's range. */
static void fill_alock(const struct nlm_owner *o, uint64_t start, uint64_t end, nlm4_lock *l)
{
	l->caller_name = o->host->name;
	l->fh.nlm4_netobj_val = (char *)o->fh;
	l->fh.nlm4_netobj_len = (u_int)o->fhlen;
	l->oh.nlm4_netobj_val = o->oh;
	l->oh.nlm4_netobj_len = (u_int)o->ohlen;
	l->svid = o->svid;
	l->l_offset = (uint64_t)start;
	l->l_len = end == NLM_TO_EOF ? 0 : (uint64_t)(end - start);
}

/* The client did not take a granted lock (no answer, or it said no): give it
 * back, and close its owner if that was all it held. */
static void grant_undo(struct nlm *n, struct nlm_owner *o, uint64_t start, uint64_t end)
{
	if (o == NULL)
		return;
	log_info("NLM: client '%s' did not take a granted lock: released", o->host->name);
	n->callbacks_failed++;
	if (nlm_owner_apply(n, o, start, end, 0) == 0)
		nlm_cb_kick(n);
	nlm_owner_maybe_free(n, o);
}

static struct nlm_grant **grant_find(struct nlm *n, uint64_t id)
{
	struct nlm_grant **p = &n->grants;

	while (*p && (*p)->id != id)
		p = &(*p)->next;
	return p;
}

static struct nlm_grant *grant_take(struct nlm *n, uint64_t id)
{
	struct nlm_grant **p = grant_find(n, id), *g = *p;

	if (g)
		*p = g->next;
	return g;
}

/* A cookie for a GRANTED call that no other grant has and nobody can guess
 * (a GRANTED_RES that says no gives the lock back), or -EIO. */
static int grant_cookie(struct nlm *n, uint64_t *id)
{
	do {
		if (getrandom(id, sizeof(*id), 0) != (ssize_t)sizeof(*id)) {
			log_err("NLM: no random cookie for a GRANTED call: %s", strerror(errno));
			return -EIO;
		}
	} while (*grant_find(n, *id) != NULL);
	return 0;
}

/* See nlm_int.h. New entries come in at the head of n->undo meanwhile. */
void nlm_grants_undo(struct nlm *n, struct nlm_part *p)
{
	for (struct nlm_grant **gp = &n->undo, *g; (g = *gp) != NULL;) {
		if (g->owner != NULL && g->owner->part != p) {
			gp = &g->next;
			continue;
		}
		*gp = g->next;
		grant_undo(n, g->owner, g->start, g->end); /* lets go of nlm->lock */
		free(g);
		gp = &n->undo; /* the list may have changed meanwhile */
	}
}

/* See nlm_int.h. */
void nlm_grants_expire(struct nlm *n)
{
	uint64_t now = nlm_now_ms();

	for (struct nlm_grant **p = &n->grants; *p;) {
		struct nlm_grant *g = *p;

		if (now >= g->deadline_ms) {
			*p = g->next;
			free(g);
		} else {
			p = &g->next;
		}
	}
}

/* The client did not take g's lock: given back at its partition's next turn
 * (it goes into storage, see nlm_int.h), which the nlm thread is asked for
 * now. */
static void grant_refused(struct nlm *n, struct nlm_grant *g)
{
	g->next = n->undo;
	n->undo = g;
	nlm_cb_kick(n);
}

/* The GRANTED (or GRANTED_MSG) call is over. */
static void granted_done(struct nlm *n, void *arg, int ok, void *res)
{
	uint64_t id = (uint64_t)(uintptr_t)arg;
	const nlm4_res *r = res;
	struct nlm_grant *g;

	if (ok < 0)
		return; /* stopping: nlm_destroy frees the grants */
	pthread_mutex_lock(&n->lock);
	g = grant_take(n, id);
	if (g && (!ok || (r && r->stat != NLM4_GRANTED))) {
		grant_refused(n, g);
		g = NULL;
	} else if (g && r == NULL) {
		/* GRANTED_MSG went: the answer comes as GRANTED_RES */
		g->next = n->grants;
		n->grants = g;
		g = NULL;
	}
	pthread_mutex_unlock(&n->lock);
	free(g);
}

/* Why call may not answer for g (NULL: it may): it must come from where
 * the GRANTED_MSG went, signed if the request was. */
static const char *res_refused(const struct nlm_grant *g, const struct rpc_req *call)
{
	if (call->peer == NULL || !net_same_ip(call->peer, (const struct sockaddr *)&g->addr))
		return "from another address";
	if (g->signed_req && !call->integrity_ok)
		return "unsigned";
	return NULL;
}

/* See nlm_int.h. */
void nlm_granted_res(struct nlm *n, const struct rpc_req *call, const nlm4_netobj *cookie,
		     nlm4_stats st)
{
	struct nlm_grant **p, *g;
	const char *why;
	uint64_t id;

	if (cookie->nlm4_netobj_len != sizeof(id))
		return;
	memcpy(&id, cookie->nlm4_netobj_val, sizeof(id));
	pthread_mutex_lock(&n->lock);
	p = grant_find(n, id);
	if ((g = *p) != NULL && (why = res_refused(g, call)) != NULL) {
		log_warn("NLM: a GRANTED_RES for a lock of '%s' came %s: ignored",
			 g->owner ? g->owner->host->name : "?", why);
		g = NULL;
	} else if (g) {
		*p = g->next;
	}
	if (g && st != NLM4_GRANTED) {
		grant_refused(n, g);
		g = NULL;
	}
	pthread_mutex_unlock(&n->lock);
	free(g);
}

/* A blocked request got its lock: tell the client (GRANTED, or GRANTED_MSG
 * to a client that asked with LOCK_MSG). */
static void block_granted(struct nlm *n, struct nlm_block *b)
{
	struct nlm_owner *o = b->owner;
	struct nlm_host *h = o->host;
	uint64_t start = b->start, end = b->end;
	nlm4_testargs a = {.exclusive = b->exclusive};
	struct nlm_grant *g = calloc(1, sizeof(*g));
	uint64_t id = 0;
	int via_msg = b->via_msg, signed_req = b->signed_req, rc = -ENOMEM;

	n->granted++;
	nlm_block_unlink(b);
	free(b);
	a.cookie.nlm4_netobj_val = (char *)&id;
	a.cookie.nlm4_netobj_len = sizeof(id);
	fill_alock(o, start, end, &a.alock);
	if (g && (rc = grant_cookie(n, &id)) != 0) {
		free(g);
		g = NULL;
	}
	if (g) {
		*g = (struct nlm_grant){.id = id,
					.owner = o,
					.start = start,
					.end = end,
					.addr = h->addr,
					.signed_req = signed_req,
					.deadline_ms = nlm_now_ms() + NLM_GRANT_WAIT_MS};
		g->next = n->grants;
		n->grants = g;
		rc = nlm_cb_call(
			n, (struct sockaddr *)&h->addr, h->addrlen, NLM_PROGRAM, NLM_V4,
			via_msg ? NLM4_GRANTED_MSG : NLM4_GRANTED_PROC,
			(xdrproc_t)xdr_nlm4_testargs, &a, via_msg ? NULL : (xdrproc_t)xdr_nlm4_res,
			via_msg ? 0 : sizeof(nlm4_res), granted_done, (void *)(uintptr_t)id);
		if (rc)
			free(grant_take(n, id));
	}
	if (rc)
		grant_undo(n, o, start, end);
}

/* See nlm_int.h. */
int nlm_blocked_elsewhere(struct nlm *n, const struct nlm_part *p, dev_t dev, ino_t ino)
{
	for (struct nlm_part *q = n->parts; q; q = q->next)
		for (struct nlm_block *b = q->blocked; q != p && b; b = b->next)
			if (b->owner->lf.dev == dev && b->owner->lf.ino == ino)
				return 1;
	return 0;
}

/* See nlm_int.h. */
void nlm_blocked_retry(struct nlm *n, struct nlm_part *p, int all, dev_t dev, ino_t ino)
{
	uint64_t now = nlm_now_ms();
	struct nlm_block *b = p->blocked, *next;

	for (; b; b = next) {
		next = b->next;
		if (!all && (b->owner->lf.dev != dev || b->owner->lf.ino != ino))
			continue;
		if (now >= b->deadline_ms) {
			log_info("NLM: a blocked lock of '%s' waited %u s: dropped",
				 b->owner->host->name, n->p.blocked_timeout_s);
			nlm_block_free(n, b);
			continue;
		}
		if (nlm_in_grace(n))
			continue;
		/* granting frees b only (its owner holds the lock now), so next stays */
		if (nlm_owner_apply(n, b->owner, b->start, b->end, b->exclusive ? 2 : 1) == 0)
			block_granted(n, b);
	}
	if (!all && nlm_blocked_elsewhere(n, p, dev, ino))
		nlm_cb_kick(n); /* the file is in another export too: the tick tries those */
}
