/*
 * nlm.c: the lock manager's lock owners and lock operations (TEST, LOCK,
 * CANCEL, UNLOCK, FREE_ALL), and its life. Client hosts are in nlm_host.c,
 * blocked requests and their grants in nlm_block.c, share reservations in
 * nlm_share.c.
 *
 * Why the locks live in the kernel. Each lock owner (client host, file,
 * owner handle, svid) gets an open file description of the exported file of
 * its own, and its locks are open-file-description locks on it
 * (osdep_lock.h). The kernel then does what a lock manager must: a new range
 * replaces or merges with the owner's own ranges and an unlock splits them,
 * exactly as POSIX says, and any other owner's conflicting range (another
 * client's, another owner's of the same client, or a local process's fcntl,
 * lockf or OFD lock on the same file) makes the request fail. That is sound
 * because an OFD lock's owner is the description, never the server process:
 * two owners on two descriptions conflict with each other as two processes
 * would, while a classic POSIX lock, owned by the process, would let every
 * client's locks merge into the server's own. Local processes see the
 * clients' locks (F_GETLK reports them, with pid -1) and clients see theirs.
 * On a CephFS export the owner's file is an open file on the cluster instead,
 * and its locks are the cluster's (ceph_ll_setlk, owned by that open file),
 * which the MDS arbitrates with the same POSIX rules between every client of
 * the filesystem: the lock managers of all heads exporting it, and CephFS
 * mounts elsewhere (backend_lock.h).
 *
 * What it costs: one descriptor per owner that holds or waits for a lock.
 * The Linux client makes one owner per process and file, so a client holds as
 * many descriptors as its processes hold locked files; server.nlm.
 * owners_per_client bounds that per client and server.nlm.clients_max the
 * clients, and past either a request gets NLM4_DENIED_NOLOCKS. An owner's
 * description is closed as soon as it holds and waits for nothing.
 *
 * The ranges are copied here too (nlm_range.c), only to name the holder in
 * TEST's answer and to know when an owner holds nothing; the kernel decides.
 */
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/resource.h>

#include "common/base/log.h"
#include "common/base/osdep_lock.h"
#include "server/backend_lock.h"
#include "server/nlm_int.h"

/* See nlm_int.h. */
uint64_t nlm_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* See nlm_int.h. */
int nlm_in_grace(const struct nlm *n)
{
	return nlm_now_ms() < n->grace_end_ms;
}

/* An NLM range as [start, end): NLM4_FBIG past what the kernel takes; a
 * range that would end past it goes to the end of the file, as on Linux. */
static nlm4_stats to_range(uint64_t off, uint64_t len, uint64_t *start, uint64_t *end)
{
	if (off > (uint64_t)INT64_MAX)
		return NLM4_FBIG;
	*start = off;
	*end = len == 0 || len > (uint64_t)INT64_MAX - off ? NLM_TO_EOF : off + len;
	return NLM4_GRANTED;
}

static struct osdep_lock to_osdep(int type, uint64_t start, uint64_t end)
{
	return (struct osdep_lock){
		.type = type == 2   ? OSDEP_LOCK_WRITE
			: type == 1 ? OSDEP_LOCK_READ
				    : OSDEP_LOCK_UNLOCK,
		.start = (int64_t)start,
		.len = end == NLM_TO_EOF ? 0 : (int64_t)(end - start),
	};
}

/* ---- owners */

static struct nlm_owner *owner_find(struct nlm_part *p, struct nlm_host *h, const nlm4_lock *l)
{
	for (struct nlm_owner *o = p->owners; o; o = o->next)
		if (o->host == h && o->svid == l->svid && o->fhlen == l->fh.nlm4_netobj_len &&
		    o->ohlen == l->oh.nlm4_netobj_len &&
		    memcmp(o->fh, l->fh.nlm4_netobj_val, o->fhlen) == 0 &&
		    (o->ohlen == 0 || memcmp(o->oh, l->oh.nlm4_netobj_val, o->ohlen) == 0))
			return o;
	return NULL;
}

/* See nlm_int.h. */
nlm4_stats nlm_open_stat(int rc)
{
	switch (rc) {
	case -ESTALE:
		return NLM4_STALE_FH;
	case -EMFILE:
	case -ENFILE:
	case -ENOMEM:
		return NLM4_DENIED_NOLOCKS;
	default:
		return NLM4_FAILED;
	}
}

/* The owner of l for host h in p, opened if new; *st says why not. */
static struct nlm_owner *owner_get(struct nlm *n, struct nlm_part *p, struct nlm_host *h,
				   const nlm4_lock *l, const struct nfs_lock_call *lc,
				   const struct rpc_req *call, nlm4_stats *st)
{
	struct nlm_owner *o = owner_find(p, h, l);
	struct nfs_lock_file lf;
	int rc;

	if (o)
		return o;
	if (h->nowners >= n->p.owners_per_client || n->nowners >= n->owners_max) {
		log_warn("NLM: client '%s' has %u lock owners, all clients %u "
			 "(server.nlm.owners_per_client, half the descriptor limit)",
			 h->name, h->nowners, n->nowners);
		n->nolocks++;
		*st = NLM4_DENIED_NOLOCKS;
		return NULL;
	}
	if ((o = calloc(1, sizeof(*o))) == NULL ||
	    (l->oh.nlm4_netobj_len && (o->oh = malloc(l->oh.nlm4_netobj_len)) == NULL)) {
		free(o);
		*st = NLM4_DENIED_NOLOCKS;
		return NULL;
	}
	/* counted now: another export's turn checks the same bounds meanwhile */
	n->nowners++;
	h->nowners++;
	pthread_mutex_unlock(&n->lock); /* storage: see nlm_int.h */
	rc = nfs_backend_open_locked(n->be, lc, call, 1, &lf);
	pthread_mutex_lock(&n->lock);
	if (rc) {
		n->nowners--;
		h->nowners--;
		nlm_host_touch(h);
		free(o->oh);
		free(o);
		*st = nlm_open_stat(rc);
		return NULL;
	}
	o->part = p;
	o->host = h;
	o->fhlen = l->fh.nlm4_netobj_len;
	memcpy(o->fh, l->fh.nlm4_netobj_val, o->fhlen);
	o->ohlen = l->oh.nlm4_netobj_len;
	if (o->ohlen)
		memcpy(o->oh, l->oh.nlm4_netobj_val, o->ohlen);
	o->svid = l->svid;
	o->lf = lf;
	o->next = p->owners;
	p->owners = o;
	nlm_host_touch(h);
	return o;
}

/* See nlm_int.h. */
void nlm_owner_maybe_free(struct nlm *n, struct nlm_owner *o)
{
	if (o->ranges.n || o->nblocked)
		return;
	for (struct nlm_owner **p = &o->part->owners; *p; p = &(*p)->next) {
		if (*p == o) {
			*p = o->next;
			break;
		}
	}
	for (struct nlm_grant *g = n->grants; g; g = g->next)
		if (g->owner == o)
			g->owner = NULL;
	for (struct nlm_grant *g = n->undo; g; g = g->next)
		if (g->owner == o)
			g->owner = NULL;
	pthread_mutex_unlock(&n->lock); /* storage: see nlm_int.h */
	nfs_lock_close(&o->lf);
	pthread_mutex_lock(&n->lock);
	n->nowners--; /* after the close: its descriptor counts until then */
	o->host->nowners--;
	nlm_host_touch(o->host);
	free(o->ranges.v);
	free(o->oh);
	free(o);
}

/* See nlm_int.h. */
int nlm_owner_apply(struct nlm *n, struct nlm_owner *o, uint64_t start, uint64_t end, int type)
{
	struct osdep_lock l = to_osdep(type, start, end);
	struct nlm_ranges next;
	unsigned more;
	int rc;

	if ((rc = nlm_ranges_apply(&o->ranges, start, end, type, &next)) != 0)
		return rc;
	more = next.n > o->ranges.n ? (unsigned)(next.n - o->ranges.n) : 0;
	if (more && o->host->nlocks + more > n->p.locks_per_client) {
		free(next.v);
		return -ENOSPC;
	}
	o->host->nlocks += more;	/* counted now: another export's turn checks it meanwhile */
	pthread_mutex_unlock(&n->lock); /* storage: see nlm_int.h */
	rc = nfs_lock_set(&o->lf, &l);
	pthread_mutex_lock(&n->lock);
	o->host->nlocks -= more;
	if (rc != 0) {
		free(next.v);
		return rc;
	}
	o->host->nlocks = o->host->nlocks + (unsigned)next.n - (unsigned)o->ranges.n;
	free(o->ranges.v);
	o->ranges = next;
	nlm_host_touch(o->host);
	return 0;
}

/* ---- the operations */

/* Check what every call about a lock has: a caller name, a handle. */
static nlm4_stats lock_args_ok(const nlm4_lock *l, uint64_t *start, uint64_t *end)
{
	if (l->caller_name == NULL || l->caller_name[0] == '\0')
		return NLM4_FAILED;
	if (l->fh.nlm4_netobj_len == 0 || l->fh.nlm4_netobj_len > NLM_FH_MAX)
		return NLM4_STALE_FH;
	return to_range(l->l_offset, l->l_len, start, end);
}

/* The holder of the conflicting range c on o's file, for TEST's answer. */
static void find_holder(struct nlm *n, const struct nlm_owner *self, dev_t dev, ino_t ino,
			const struct osdep_lock *c, nlm4_holder *out)
{
	uint64_t end = c->len == 0 ? NLM_TO_EOF : (uint64_t)c->start + (uint64_t)c->len;
	struct nlm_range hit;

	out->exclusive = c->type == OSDEP_LOCK_WRITE;
	out->l_offset = (uint64_t)c->start;
	out->l_len = (uint64_t)c->len;
	out->svid = c->pid; /* a local process: its pid */
	out->oh.nlm4_netobj_len = 0;
	out->oh.nlm4_netobj_val = NULL;
	for (struct nlm_part *p = n->parts; p; p = p->next) {
		for (struct nlm_owner *o = p->owners; o; o = o->next) {
			if (o == self || o->lf.dev != dev || o->lf.ino != ino ||
			    !nlm_ranges_find(&o->ranges, c->start, end, out->exclusive, &hit))
				continue;
			out->svid = o->svid;
			if (o->ohlen && (out->oh.nlm4_netobj_val = malloc(o->ohlen)) != NULL) {
				memcpy(out->oh.nlm4_netobj_val, o->oh, o->ohlen);
				out->oh.nlm4_netobj_len = (u_int)o->ohlen;
			}
			return;
		}
	}
}

/* See nlm_int.h. */
nlm4_stats nlm_do_test(struct nlm *n, const struct rpc_req *call, const nlm4_testargs *a,
		       nlm4_holder *holder)
{
	struct nfs_lock_call lc;
	struct nfs_lock_file lf, *f;
	struct nlm_part *p;
	struct osdep_lock l;
	uint64_t start, end;
	nlm4_stats st;
	int rc;

	if ((st = lock_args_ok(&a->alock, &start, &end)) != NLM4_GRANTED)
		return st;
	if (nlm_in_grace(n)) {
		n->grace_refused++;
		return NLM4_DENIED_GRACE_PERIOD;
	}
	if ((rc = nlm_enter(n, &a->alock.fh, call, &p, &lc)) != 0)
		return rc != -ETIMEDOUT ? nlm_open_stat(rc) : NLM4_DENIED_GRACE_PERIOD;
	struct nlm_host *h = nlm_host_find(n, a->alock.caller_name, call->peer);
	struct nlm_owner *o = h ? owner_find(p, h, &a->alock) : NULL;

	pthread_mutex_unlock(&n->lock); /* storage: see nlm_int.h (o stays, with the turn) */
	f = o ? &o->lf : &lf;
	if (o == NULL && (rc = nfs_backend_open_locked(n->be, &lc, call, 1, &lf)) != 0) {
		st = nlm_open_stat(rc);
		f = NULL;
	}
	if (f) {
		l = to_osdep(a->exclusive ? 2 : 1, start, end);
		rc = nfs_lock_test(f, &l);
		pthread_mutex_lock(&n->lock);
		if (rc == 0 && l.type != OSDEP_LOCK_UNLOCK)
			find_holder(n, o, f->dev, f->ino, &l, holder);
		pthread_mutex_unlock(&n->lock);
		st = rc ? NLM4_FAILED : l.type == OSDEP_LOCK_UNLOCK ? NLM4_GRANTED : NLM4_DENIED;
	}
	if (f == &lf)
		nfs_lock_close(&lf);
	nlm_leave(n, p, &lc);
	return st;
}

/* LOCK for an owner in hand. */
static nlm4_stats lock_owner(struct nlm *n, struct nlm_owner *o, const struct rpc_req *call,
			     const nlm4_lockargs *a, uint64_t start, uint64_t end, int via_msg)
{
	int rc;

	if (a->exclusive && !o->lf.writable)
		return NLM4_ROFS;
	rc = nlm_owner_apply(n, o, start, end, a->exclusive ? 2 : 1);
	if (rc == 0) {
		n->granted++;
		return NLM4_GRANTED;
	}
	if (rc == -ENOSPC || rc == -ENOLCK || rc == -ENOMEM) {
		log_warn("NLM: client '%s' holds %u locks (server.nlm.locks_per_client)",
			 o->host->name, o->host->nlocks);
		n->nolocks++;
		return NLM4_DENIED_NOLOCKS;
	}
	if (rc != -EAGAIN)
		return NLM4_FAILED;
	if (a->block)
		return nlm_block_queue(n, o, start, end, a->exclusive, via_msg, call);
	n->denied++;
	return NLM4_DENIED;
}

/* See nlm_int.h. */
nlm4_stats nlm_do_lock(struct nlm *n, const struct rpc_req *call, const nlm4_lockargs *a,
		       int via_msg, int monitor)
{
	struct nfs_lock_call lc;
	struct nlm_part *p;
	struct nlm_host *h;
	struct nlm_owner *o;
	uint64_t start, end;
	nlm4_stats st;
	int rc;

	if ((st = lock_args_ok(&a->alock, &start, &end)) != NLM4_GRANTED)
		return st;
	if (nlm_in_grace(n) != !!a->reclaim) {
		n->grace_refused++;
		return NLM4_DENIED_GRACE_PERIOD;
	}
	/* a reclaim refused for the grace period would count as never lost */
	if ((rc = nlm_enter(n, &a->alock.fh, call, &p, &lc)) != 0)
		return rc != -ETIMEDOUT ? nlm_open_stat(rc)
		       : a->reclaim	? NLM4_DENIED_NOLOCKS
					: NLM4_DENIED_GRACE_PERIOD;
	if ((h = nlm_host_get(n, a->alock.caller_name, call->peer, call->peer_len)) == NULL) {
		n->nolocks++;
		st = NLM4_DENIED_NOLOCKS;
	} else {
		h->pins++; /* owner_get lets go of nlm->lock before h holds anything */
		if ((o = owner_get(n, p, h, &a->alock, &lc, call, &st)) != NULL) {
			st = lock_owner(n, o, call, a, start, end, via_msg);
			/* a blocked request is granted later (GRANTED): monitored now,
			 * as Linux's lockd monitors every monitored LOCK's client */
			if ((st == NLM4_GRANTED || st == NLM4_BLOCKED) && monitor)
				nsm_monitor(n, h);
			nlm_owner_maybe_free(n, o);
		}
		h->pins--;
		nlm_host_touch(h);
	}
	pthread_mutex_unlock(&n->lock);
	nlm_leave(n, p, &lc);
	return st;
}

/* What CANCEL and UNLOCK answer when rc kept them from the partition: as
 * on Linux, nothing to release (no such export) is no error; anything else
 * is, so that the client does not forget a lock the server still holds. */
static nlm4_stats release_stat(int rc)
{
	return rc == -ESTALE	  ? NLM4_GRANTED
	       : rc == -ETIMEDOUT ? NLM4_DENIED_GRACE_PERIOD
				  : nlm_open_stat(rc);
}

/* See nlm_int.h. */
nlm4_stats nlm_do_cancel(struct nlm *n, const struct rpc_req *call, const nlm4_cancargs *a)
{
	struct nfs_lock_call lc;
	struct nlm_part *p;
	struct nlm_host *h;
	struct nlm_owner *o;
	struct nlm_block *b;
	uint64_t start, end;
	nlm4_stats st;
	int rc;

	if ((st = lock_args_ok(&a->alock, &start, &end)) != NLM4_GRANTED)
		return st;
	if (nlm_in_grace(n)) {
		n->grace_refused++;
		return NLM4_DENIED_GRACE_PERIOD;
	}
	if ((rc = nlm_enter(n, &a->alock.fh, call, &p, &lc)) != 0)
		return release_stat(rc);
	if ((h = nlm_host_find(n, a->alock.caller_name, call->peer)) != NULL &&
	    (o = owner_find(p, h, &a->alock)) != NULL &&
	    (b = nlm_block_find(o, start, end, a->exclusive)) != NULL)
		nlm_block_free(n, b);
	pthread_mutex_unlock(&n->lock);
	nlm_leave(n, p, &lc);
	return NLM4_GRANTED; /* as on Linux: nothing to cancel is no error */
}

/* See nlm_int.h. */
nlm4_stats nlm_do_unlock(struct nlm *n, const struct rpc_req *call, const nlm4_unlockargs *a)
{
	struct nfs_lock_call lc;
	struct nlm_part *p;
	struct nlm_host *h;
	struct nlm_owner *o;
	uint64_t start, end;
	nlm4_stats st;
	dev_t dev;
	ino_t ino;
	int rc;

	if ((st = lock_args_ok(&a->alock, &start, &end)) != NLM4_GRANTED)
		return st;
	if (nlm_in_grace(n)) {
		n->grace_refused++;
		return NLM4_DENIED_GRACE_PERIOD;
	}
	if ((rc = nlm_enter(n, &a->alock.fh, call, &p, &lc)) != 0)
		return release_stat(rc);
	if ((h = nlm_host_find(n, a->alock.caller_name, call->peer)) != NULL &&
	    (o = owner_find(p, h, &a->alock)) != NULL) {
		dev = o->lf.dev;
		ino = o->lf.ino;
		if (nlm_owner_apply(n, o, start, end, 0) != 0)
			st = NLM4_FAILED;
		/* as on Linux, an unlock also cancels the owner's waits on the range */
		for (struct nlm_block *b = p->blocked, *next; b; b = next) {
			next = b->next;
			if (b->owner == o && b->start < end && b->end > start) {
				nlm_block_unlink(b);
				free(b);
			}
		}
		nlm_owner_maybe_free(n, o);
		nlm_blocked_retry(n, p, 0, dev, ino);
	}
	pthread_mutex_unlock(&n->lock);
	nlm_leave(n, p, &lc);
	return st;
}

/* See nlm_int.h. */
void nlm_host_drop(struct nlm *n, struct nlm_part *p, struct nlm_host *h)
{
	struct nlm_share *s, **sp;
	struct nlm_block *b, *nextb;
	struct nlm_owner *o, *nexto;

	for (b = p->blocked; b; b = nextb) {
		nextb = b->next;
		if (b->owner->host == h)
			nlm_block_free(n, b);
	}
	for (sp = &n->shares; (s = *sp) != NULL;) {
		if (s->host == h && s->part == p) {
			*sp = s->next;
			h->nlocks--;
			p->nshares--;
			free(s->oh);
			free(s);
		} else {
			sp = &s->next;
		}
	}
	for (o = p->owners; o; o = nexto) {
		nexto = o->next;
		if (o->host != h)
			continue;
		if (o->ranges.n && nlm_blocked_elsewhere(n, p, o->lf.dev, o->lf.ino))
			nlm_cb_kick(n); /* the file is in another export too: the tick tries them */
		h->nlocks -= (unsigned)o->ranges.n;
		o->ranges.n = 0;
		nlm_owner_maybe_free(n, o); /* closing drops its locks in the kernel */
	}
	nlm_host_touch(h);
	nlm_blocked_retry(n, p, 1, 0, 0);
}

/* See nlm_int.h. */
void nlm_do_free_all(struct nlm *n, const struct sockaddr *peer, const char *name)
{
	struct nlm_host *h;

	if (name == NULL)
		return;
	pthread_mutex_lock(&n->lock);
	if ((h = nlm_host_find(n, name, peer)) != NULL) {
		log_info("NLM: FREE_ALL from '%s': its locks are released at each export's "
			 "next turn",
			 name);
		nlm_host_mark_drop(n, h);
	}
	pthread_mutex_unlock(&n->lock);
	if (h)
		nlm_cb_kick(n); /* each export's next turn drops it */
}

/* ---- life */

/* Lock owners may take at most half the process's descriptors: NFS keeps the
 * rest, whatever clients lock. */
static void owners_budget(struct nlm *n)
{
	uint64_t want = (uint64_t)n->p.clients_max * n->p.owners_per_client;
	struct rlimit rl;

	n->owners_max = want > UINT32_MAX ? UINT32_MAX : (unsigned)want;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur / 2 < n->owners_max) {
		n->owners_max = (unsigned)(rl.rlim_cur / 2);
		log_notice("NLM: at most %u lock owners (half the descriptor limit %llu), fewer "
			   "than clients_max x owners_per_client",
			   n->owners_max, (unsigned long long)rl.rlim_cur);
	}
}

/* See nlm.h. */
int nlm_create(const struct nlm_params *p, struct nfs_backend *be, struct nlm **out)
{
	struct nlm *n = calloc(1, sizeof(*n));
	int rc;

	if (n == NULL)
		return -ENOMEM;
	n->p = *p;
	n->be = be;
	pthread_mutex_init(&n->lock, NULL);
	if ((n->state_dir = strdup(p->state_dir)) == NULL) {
		free(n);
		return -ENOMEM;
	}
	n->p.state_dir = n->state_dir;
	if (p->name)
		snprintf(n->name, sizeof(n->name), "%s", p->name);
	else if (gethostname(n->name, sizeof(n->name) - 1) != 0)
		snprintf(n->name, sizeof(n->name), "localhost");
	n->grace_end_ms = nlm_now_ms() + (uint64_t)p->grace_s * 1000;
	owners_budget(n);
	if ((rc = workq_create(1, "nlm-tick", &n->tickq)) != 0 || (rc = nlm_cb_start(n)) != 0 ||
	    (rc = nsm_start(n)) != 0) {
		nlm_destroy(n);
		return rc;
	}
	if (p->grace_s)
		log_notice("NLM: grace period of %u s: only reclaims are granted until it ends",
			   p->grace_s);
	*out = n;
	return 0;
}

/* See nlm.h. */
void nlm_destroy(struct nlm *n)
{
	struct nlm_grant *g;

	if (n == NULL)
		return;
	nlm_cb_halt(n);		 /* no tick is queued from now on */
	workq_destroy(n->tickq); /* after its last tick */
	nlm_cb_stop(n);
	pthread_mutex_lock(&n->lock); /* the storage calls let go of it */
	for (struct nlm_part *p = n->parts; p; p = p->next)
		while (p->blocked)
			nlm_block_free(n, p->blocked);
	while ((g = n->grants) != NULL) {
		n->grants = g->next;
		free(g);
	}
	while ((g = n->undo) != NULL) {
		n->undo = g->next;
		free(g);
	}
	while (n->shares) {
		struct nlm_share *s = n->shares;

		n->shares = s->next;
		free(s->oh);
		free(s);
	}
	for (struct nlm_part *p = n->parts; p; p = p->next) {
		while (p->owners) {
			struct nlm_owner *o = p->owners;

			o->ranges.n = 0;
			nlm_owner_maybe_free(n, o);
		}
	}
	nlm_parts_free(n);
	while (n->hosts) {
		struct nlm_host *h = n->hosts;

		n->hosts = h->next;
		free(h->name); /* monitored hosts stay recorded: they hear from us at restart */
		free(h);
	}
	pthread_mutex_unlock(&n->lock);
	pthread_mutex_destroy(&n->lock);
	free(n->state_dir);
	free(n);
}

/* See nlm.h. */
void nlm_get_stats(struct nlm *n, struct nlm_stats *st)
{
	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&n->lock);
	st->clients = n->nhosts;
	st->owners = n->nowners;
	for (struct nlm_part *p = n->parts; p; p = p->next)
		for (struct nlm_block *b = p->blocked; b; b = b->next)
			st->blocked++;
	st->granted = n->granted;
	st->denied = n->denied;
	st->blocked_total = n->blocked_n;
	st->nolocks = n->nolocks;
	st->grace_refused = n->grace_refused;
	st->callbacks_failed = n->callbacks_failed;
	st->reboots = n->reboots;
	st->nsm_state = n->nsm_state;
	pthread_mutex_unlock(&n->lock);
}

/* See nlm.h. */
void nlm_print_stats(struct nlm *n, FILE *f)
{
	struct nlm_stats st;

	if (n == NULL)
		return;
	nlm_get_stats(n, &st);
	fprintf(f,
		"nlm.clients %u\nnlm.owners %u\nnlm.blocked %u\nnlm.granted %llu\n"
		"nlm.denied %llu\nnlm.blocked_total %llu\nnlm.nolocks %llu\n"
		"nlm.grace_refused %llu\nnlm.callbacks_failed %llu\nnlm.reboots %llu\n"
		"nsm.state %d\n",
		st.clients, st.owners, st.blocked, st.granted, st.denied, st.blocked_total,
		st.nolocks, st.grace_refused, st.callbacks_failed, st.reboots, st.nsm_state);
}
