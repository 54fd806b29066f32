/*
 * nlm_share.c: DOS share reservations (SHARE, UNSHARE): the server's own, as
 * the kernel has none. A share names the access it takes and the access it
 * denies others on a file; one conflicting with another owner's is refused.
 * Each counts against server.nlm.locks_per_client like a lock range.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/backend_lock.h"
#include "server/nlm_int.h"

static int share_conflicts(const struct nlm_share *s, int mode, int access)
{
	return (access & s->mode) || (mode & s->access);
}

/* Whether s is the share of owner oh of host h on dev/ino. */
static int share_is(const struct nlm_share *s, const struct nlm_host *h, const nlm4_netobj *oh,
		    dev_t dev, ino_t ino)
{
	return s->host == h && s->dev == dev && s->ino == ino && s->ohlen == oh->nlm4_netobj_len &&
	       (s->ohlen == 0 || memcmp(s->oh, oh->nlm4_netobj_val, s->ohlen) == 0);
}

/* Drop owner oh of host h's share on dev/ino, if any: 1 if there was one. */
static int share_drop(struct nlm *n, struct nlm_host *h, const nlm4_netobj *oh, dev_t dev,
		      ino_t ino)
{
	for (struct nlm_share **p = &n->shares, *s; (s = *p) != NULL; p = &s->next) {
		if (share_is(s, h, oh, dev, ino)) {
			*p = s->next;
			h->nlocks--;
			s->part->nshares--;
			free(s->oh);
			free(s);
			return 1;
		}
	}
	return 0;
}

/* SHARE for host h on dev/ino, a file of p's: a new share replaces the
 * owner's own. The shares of every partition conflict: a file may be in two
 * exports. */
static nlm4_stats share_add(struct nlm *n, struct nlm_part *p, struct nlm_host *h,
			    const nlm4_share *sh, dev_t dev, ino_t ino)
{
	int mode = (int)sh->mode, access = (int)sh->access, had = 0;
	struct nlm_share *s;

	for (s = n->shares; s; s = s->next) {
		if (share_is(s, h, &sh->oh, dev, ino))
			had = 1;
		else if (s->dev == dev && s->ino == ino && share_conflicts(s, mode, access))
			return n->denied++, NLM4_DENIED;
	}
	if ((!had && h->nlocks >= n->p.locks_per_client) || (s = calloc(1, sizeof(*s))) == NULL)
		return n->nolocks++, NLM4_DENIED_NOLOCKS;
	if (sh->oh.nlm4_netobj_len && (s->oh = malloc(sh->oh.nlm4_netobj_len)) == NULL) {
		free(s);
		return n->nolocks++, NLM4_DENIED_NOLOCKS;
	}
	share_drop(n, h, &sh->oh, dev, ino);
	s->part = p;
	p->nshares++;
	s->host = h;
	s->ohlen = sh->oh.nlm4_netobj_len;
	if (s->ohlen)
		memcpy(s->oh, sh->oh.nlm4_netobj_val, s->ohlen);
	s->dev = dev;
	s->ino = ino;
	s->mode = mode;
	s->access = access;
	s->next = n->shares;
	n->shares = s;
	h->nlocks++;
	nsm_monitor(n, h);
	return NLM4_GRANTED;
}

/* See nlm_int.h. */
nlm4_stats nlm_do_share(struct nlm *n, const struct rpc_req *call, const nlm4_shareargs *a,
			int unshare)
{
	const nlm4_share *sh = &a->share;
	struct nfs_lock_file lf;
	struct nfs_lock_call lc;
	struct nlm_part *p;
	struct nlm_host *h;
	nlm4_stats st = NLM4_GRANTED;
	int rc;

	if (sh->caller_name == NULL || sh->caller_name[0] == '\0' ||
	    (unsigned)sh->mode > NLM4_FSM_DRW || (unsigned)sh->access > NLM4_FSA_RW)
		return NLM4_FAILED;
	if (sh->fh.nlm4_netobj_len == 0 || sh->fh.nlm4_netobj_len > NLM_FH_MAX)
		return NLM4_STALE_FH;
	if (unshare ? nlm_in_grace(n) : nlm_in_grace(n) != !!a->reclaim) {
		n->grace_refused++;
		return NLM4_DENIED_GRACE_PERIOD;
	}
	if ((rc = nlm_enter(n, &sh->fh, call, &p, &lc)) != 0)
		return rc != -ETIMEDOUT		? nlm_open_stat(rc)
		       : !unshare && a->reclaim ? NLM4_DENIED_NOLOCKS
						: NLM4_DENIED_GRACE_PERIOD;
	pthread_mutex_unlock(&n->lock); /* storage: see nlm_int.h */
	/* UNSHARE only drops what the client holds: no right is checked (Linux's
	 * lockd finds the file that the share keeps open) */
	rc = nfs_backend_open_locked(n->be, &lc, call, !unshare, &lf);
	if (rc) {
		nlm_leave(n, p, &lc);
		return nlm_open_stat(rc);
	}
	nfs_lock_close(&lf);
	pthread_mutex_lock(&n->lock);
	if (unshare) {
		if ((h = nlm_host_find(n, sh->caller_name, call->peer)) != NULL) {
			share_drop(n, h, &sh->oh, lf.dev, lf.ino);
			nlm_host_touch(h);
		}
	} else if ((h = nlm_host_get(n, sh->caller_name, call->peer, call->peer_len)) == NULL) {
		n->nolocks++;
		st = NLM4_DENIED_NOLOCKS;
	} else {
		h->pins++; /* share_add's nsm_monitor lets go of nlm->lock */
		st = share_add(n, p, h, sh, lf.dev, lf.ino);
		h->pins--;
		nlm_host_touch(h);
	}
	pthread_mutex_unlock(&n->lock);
	nlm_leave(n, p, &lc);
	return st;
}
