/*
 * nlm_turn.c: the lock manager's turns, one per export. The lock state of
 * one export's files (its owners and blocked requests, the shares on them)
 * is a partition with a turn of its own, so that a call held in one export's
 * storage (a CephFS whose MDS hangs) keeps waiting only that export's lock
 * calls, never another's. A partition is made at the first lock call on an
 * export and forgotten by the tick once it holds nothing; what must be done
 * in storage for every export (a rebooted client's locks dropped, a grant
 * given back, blocked requests tried again) is done by each partition at its
 * next turn, a turn that cannot come (a stalled export) leaving it to the
 * tick after. See nlm_int.h for what the turn keeps in place.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/base/log.h"
#include "server/backend_lock.h"
#include "server/nlm_int.h"

/* The partition of export id, or NULL. Under nlm->lock. */
static struct nlm_part *part_find(struct nlm *n, uint32_t id)
{
	for (struct nlm_part *p = n->parts; p; p = p->next)
		if (p->id == id)
			return p;
	return NULL;
}

/* The partition of export id, held (users), made if an export has that id
 * now: 0, -ESTALE if none has, -ENOMEM. Without nlm->lock. */
static int part_get(struct nlm *n, uint32_t id, struct nlm_part **out)
{
	struct nlm_part *p;
	char *name;
	int rc;

	pthread_mutex_lock(&n->lock);
	if ((p = part_find(n, id)) != NULL)
		p->users++;
	pthread_mutex_unlock(&n->lock);
	if ((*out = p) != NULL)
		return 0;
	if (id == 0)
		return -ESTALE;
	if ((rc = nfs_backend_export_path(n->be, id, &name)) != 0)
		return rc;
	pthread_mutex_lock(&n->lock);
	if ((p = part_find(n, id)) == NULL && (p = calloc(1, sizeof(*p))) != NULL) {
		p->id = id;
		p->name = name;
		name = NULL;
		call_gate_init(&p->turn, "the lock manager", p->name, "NLM4_DENIED_GRACE_PERIOD");
		p->drop_seen = n->drop_epoch; /* it holds nothing of earlier drops */
		p->next = n->parts;
		n->parts = p;
	}
	if (p)
		p->users++;
	pthread_mutex_unlock(&n->lock);
	free(name);
	*out = p;
	return p ? 0 : -ENOMEM;
}

/* Let go of p. Under nlm->lock. */
static void part_put(struct nlm_part *p)
{
	p->users--;
}

static void part_free(struct nlm_part *p)
{
	call_gate_destroy(&p->turn);
	free(p->name);
	free(p);
}

/* Forget partitions that nobody holds and that hold nothing. Under nlm->lock. */
static void parts_gc(struct nlm *n)
{
	for (struct nlm_part **pp = &n->parts, *p; (p = *pp) != NULL;) {
		if (p->users == 0 && p->owners == NULL && p->blocked == NULL && p->nshares == 0) {
			*pp = p->next;
			part_free(p);
		} else {
			pp = &p->next;
		}
	}
}

/* p's turn for call (fh and call NULL: the lock manager's own work), then
 * nlm_turn_lock: 0 with nlm->lock held, or -errno of nfs_backend_lock_enter
 * (-ETIMEDOUT, -EACCES). p is held. */
static int part_enter(struct nlm *n, struct nlm_part *p, const void *fh, size_t fhlen,
		      const struct rpc_req *call, struct nfs_lock_call *lc)
{
	int rc = nfs_backend_lock_enter(n->be, &p->turn, fh, fhlen, call, lc);

	if (rc == 0)
		nlm_turn_lock(n, p);
	return rc;
}

/* See nlm_int.h. */
int nlm_enter(struct nlm *n, const nlm4_netobj *fh, const struct rpc_req *call,
	      struct nlm_part **out, struct nfs_lock_call *lc)
{
	struct nlm_part *p;
	int rc;

	rc = part_get(n, nfs_backend_fh_export(fh->nlm4_netobj_val, fh->nlm4_netobj_len), &p);
	if (rc != 0)
		return rc;
	if ((rc = part_enter(n, p, fh->nlm4_netobj_val, fh->nlm4_netobj_len, call, lc)) != 0) {
		pthread_mutex_lock(&n->lock);
		part_put(p);
		pthread_mutex_unlock(&n->lock);
		return rc;
	}
	*out = p;
	return 0;
}

/* See nlm_int.h. */
void nlm_leave(struct nlm *n, struct nlm_part *p, struct nfs_lock_call *lc)
{
	nfs_backend_lock_leave(n->be, &p->turn, lc);
	pthread_mutex_lock(&n->lock);
	part_put(p);
	pthread_mutex_unlock(&n->lock);
}

/* See nlm_int.h. The hosts stay in place across the storage calls while
 * pinned, and new ones come in at the head of the list. A host marked again
 * while they are dropped is dropped again before the undo (harmless: the
 * turn is held); one marked after that is dropped at the next turn, as one
 * marked during this turn's own call is. */
void nlm_turn_lock(struct nlm *n, struct nlm_part *p)
{
	pthread_mutex_lock(&n->lock);
	while (p->drop_seen != n->drop_epoch) {
		uint64_t upto = n->drop_epoch;

		for (struct nlm_host *h = n->hosts, *next; h; h = next) {
			if (h->drop_epoch > p->drop_seen) {
				h->pins++;
				nlm_host_drop(n, p, h);
				h->pins--;
			}
			next = h->next;
		}
		p->drop_seen = upto;
	}
	nlm_grants_undo(n, p);
}

/* With each partition's turn (the lock manager's own: fh NULL), what waits
 * for it and a retry of its blocked requests; one whose turn does not come
 * (busy, or its storage stalled) at the next tick. */
static void each_part(struct nlm *n)
{
	struct nfs_lock_call lc;
	struct nlm_part *p, *next;

	pthread_mutex_lock(&n->lock);
	for (p = n->parts; p; p = next) {
		p->users++;
		pthread_mutex_unlock(&n->lock);
		if (part_enter(n, p, NULL, 0, NULL, &lc) == 0) {
			nlm_blocked_retry(n, p, 1, 0, 0);
			pthread_mutex_unlock(&n->lock);
			nfs_backend_lock_leave(n->be, &p->turn, &lc);
		}
		pthread_mutex_lock(&n->lock);
		next = p->next; /* p stays in the list while held */
		part_put(p);
	}
	pthread_mutex_unlock(&n->lock);
}

/* The tick's work that goes into storage, on the nlm-tick thread. */
static void tick_run(struct work *w)
{
	struct nlm *n = (struct nlm *)((char *)w - offsetof(struct nlm, tick_work));

	pthread_mutex_lock(&n->lock);
	n->tick_queued = 0; /* a kick from now on runs it again */
	pthread_mutex_unlock(&n->lock);
	each_part(n);
	pthread_mutex_lock(&n->lock);
	nlm_hosts_gc(n, NLM_HOST_IDLE_MS);
	parts_gc(n);
	pthread_mutex_unlock(&n->lock);
}

/* See nlm_int.h. */
void nlm_tick(struct nlm *n)
{
	int queue;

	pthread_mutex_lock(&n->lock);
	nlm_grants_expire(n);
	queue = !n->tick_queued;
	n->tick_queued = 1;
	pthread_mutex_unlock(&n->lock);
	if (queue) {
		n->tick_work.run = tick_run;
		workq_submit(n->tickq, &n->tick_work);
	}
}

/* See nlm_int.h. With nlm_destroy's lock held, no call running. */
void nlm_parts_free(struct nlm *n)
{
	while (n->parts) {
		struct nlm_part *p = n->parts;

		n->parts = p->next;
		part_free(p);
	}
}
