/*
 * nlm.c: the lock manager's state and its lock operations.
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

#define HOST_IDLE_MS 120000 /* a host holding nothing is forgotten after this */

/* See nlm_int.h. */
uint64_t nlm_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int in_grace(const struct nlm *n)
{
	return nlm_now_ms() < n->grace_end_ms;
}

/* An NLM range as [start, end): NLM4_FBIG past what the kernel takes; a
 * range that would end past it goes to the end of the file, as on Linux. */
static nlm4_stats to_range(uint64_t off, uint64_t len, int64_t *start, int64_t *end)
{
	if (off > (uint64_t)INT64_MAX)
		return NLM4_FBIG;
	*start = (int64_t)off;
	*end = len == 0 || len > (uint64_t)INT64_MAX - off ? NLM_TO_EOF : (int64_t)(off + len);
	return NLM4_GRANTED;
}

static struct osdep_lock to_osdep(int type, int64_t start, int64_t end)
{
	return (struct osdep_lock){
		.type = type == 2   ? OSDEP_LOCK_WRITE
			: type == 1 ? OSDEP_LOCK_READ
				    : OSDEP_LOCK_UNLOCK,
		.start = start,
		.len = end == NLM_TO_EOF ? 0 : end - start,
	};
}

/* ---- hosts */

/* Whether a and b are the same IP address (ports aside). */
static int same_ip(const struct sockaddr *a, const struct sockaddr_storage *b)
{
	if (a->sa_family != b->ss_family)
		return 0;
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->sa_family == AF_INET6)
		return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			      &((const struct sockaddr_in6 *)b)->sin6_addr,
			      sizeof(struct in6_addr)) == 0;
	return 0;
}

/* See nlm_int.h. A client is its caller name and its address, as on Linux:
 * another machine cannot act on a client's locks by giving its name. */
struct nlm_host *nlm_host_find(struct nlm *n, const char *name, const struct sockaddr *peer)
{
	for (struct nlm_host *h = n->hosts; h; h = h->next)
		if (strcmp(h->name, name) == 0 && (peer == NULL || same_ip(peer, &h->addr)))
			return h;
	return NULL;
}

static int host_empty(const struct nlm_host *h)
{
	return h->nowners == 0 && h->nlocks == 0 && h->nblocked == 0;
}

static void host_free(struct nlm *n, struct nlm_host *h)
{
	for (struct nlm_host **p = &n->hosts; *p; p = &(*p)->next) {
		if (*p == h) {
			*p = h->next;
			break;
		}
	}
	if (h->monitored)
		nsm_unmonitor(n, h);
	n->nhosts--;
	free(h->name);
	free(h);
}

/* Forget hosts that held nothing for older_ms (0: every empty host). */
static void hosts_gc(struct nlm *n, uint64_t older_ms)
{
	uint64_t now = nlm_now_ms();
	struct nlm_host *h = n->hosts, *next;

	for (; h; h = next) {
		next = h->next;
		if (host_empty(h) && h->idle_since_ms && now - h->idle_since_ms >= older_ms)
			host_free(n, h);
	}
}

/* The host named name (made if new), its address brought up to date. */
static struct nlm_host *host_get(struct nlm *n, const char *name, const struct sockaddr *peer,
				 socklen_t plen)
{
	struct nlm_host *h = nlm_host_find(n, name, peer);

	if (h == NULL) {
		if (n->nhosts >= n->p.clients_max)
			hosts_gc(n, 0);
		if (n->nhosts >= n->p.clients_max) {
			log_warn(
				"NLM: %u clients hold locks: '%s' refused (server.nlm.clients_max)",
				n->nhosts, name);
			return NULL;
		}
		if ((h = calloc(1, sizeof(*h))) == NULL || (h->name = strdup(name)) == NULL) {
			free(h);
			return NULL;
		}
		h->next = n->hosts;
		n->hosts = h;
		n->nhosts++;
		h->idle_since_ms = nlm_now_ms();
	}
	if (peer && plen <= sizeof(h->addr)) {
		memcpy(&h->addr, peer, plen);
		h->addrlen = plen;
	}
	return h;
}

static void host_touch(struct nlm_host *h)
{
	h->idle_since_ms = host_empty(h) ? nlm_now_ms() : 0;
}

/* ---- owners */

static struct nlm_owner *owner_find(struct nlm *n, struct nlm_host *h, const nlm4_lock *l)
{
	for (struct nlm_owner *o = n->owners; o; o = o->next)
		if (o->host == h && o->svid == l->svid && o->fhlen == l->fh.nlm4_netobj_len &&
		    o->ohlen == l->oh.nlm4_netobj_len &&
		    memcmp(o->fh, l->fh.nlm4_netobj_val, o->fhlen) == 0 &&
		    (o->ohlen == 0 || memcmp(o->oh, l->oh.nlm4_netobj_val, o->ohlen) == 0))
			return o;
	return NULL;
}

/* What a failure to open the file means to the client. */
static nlm4_stats open_stat(int rc)
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

/* The owner of l for host h, opened if new; *st says why not. */
static struct nlm_owner *owner_get(struct nlm *n, struct nlm_host *h, const nlm4_lock *l,
				   nlm4_stats *st)
{
	struct nlm_owner *o = owner_find(n, h, l);
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
	rc = nfs_backend_open_locked(n->be, (const struct sockaddr *)&h->addr, h->addrlen,
				     l->fh.nlm4_netobj_val, l->fh.nlm4_netobj_len, &lf);
	if (rc) {
		*st = open_stat(rc);
		return NULL;
	}
	if ((o = calloc(1, sizeof(*o))) == NULL ||
	    (l->oh.nlm4_netobj_len && (o->oh = malloc(l->oh.nlm4_netobj_len)) == NULL)) {
		free(o);
		close(lf.fd);
		*st = NLM4_DENIED_NOLOCKS;
		return NULL;
	}
	o->host = h;
	o->fhlen = l->fh.nlm4_netobj_len;
	memcpy(o->fh, l->fh.nlm4_netobj_val, o->fhlen);
	o->ohlen = l->oh.nlm4_netobj_len;
	if (o->ohlen)
		memcpy(o->oh, l->oh.nlm4_netobj_val, o->ohlen);
	o->svid = l->svid;
	o->fd = lf.fd;
	o->writable = lf.writable;
	o->dev = lf.dev;
	o->ino = lf.ino;
	o->next = n->owners;
	n->owners = o;
	n->nowners++;
	h->nowners++;
	host_touch(h);
	return o;
}

/* Close o if it holds and waits for nothing (closing drops its locks). */
static void owner_maybe_free(struct nlm *n, struct nlm_owner *o)
{
	if (o->ranges.n || o->nblocked)
		return;
	for (struct nlm_owner **p = &n->owners; *p; p = &(*p)->next) {
		if (*p == o) {
			*p = o->next;
			break;
		}
	}
	for (struct nlm_grant *g = n->grants; g; g = g->next)
		if (g->owner == o)
			g->owner = NULL;
	close(o->fd);
	n->nowners--;
	o->host->nowners--;
	host_touch(o->host);
	free(o->ranges.v);
	free(o->oh);
	free(o);
}

/* Lock (type 1, 2) or unlock (0) [start, end) for o in the kernel and in the
 * copy; -EAGAIN on a conflict, -ENOSPC past the client's range limit. */
static int owner_apply(struct nlm *n, struct nlm_owner *o, int64_t start, int64_t end, int type)
{
	struct osdep_lock l = to_osdep(type, start, end);
	struct nlm_ranges next;
	int rc;

	if ((rc = nlm_ranges_apply(&o->ranges, start, end, type, &next)) != 0)
		return rc;
	if (next.n > o->ranges.n &&
	    o->host->nlocks + (next.n - o->ranges.n) > n->p.locks_per_client) {
		free(next.v);
		return -ENOSPC;
	}
	if ((rc = osdep_lock_set(o->fd, &l)) != 0) {
		free(next.v);
		return rc;
	}
	o->host->nlocks = o->host->nlocks + (unsigned)next.n - (unsigned)o->ranges.n;
	free(o->ranges.v);
	o->ranges = next;
	host_touch(o->host);
	return 0;
}

/* ---- blocked requests */

static struct nlm_block *block_find(struct nlm *n, const struct nlm_owner *o, int64_t start,
				    int64_t end, int exclusive)
{
	for (struct nlm_block *b = n->blocked; b; b = b->next)
		if (b->owner == o && b->start == start && b->end == end &&
		    b->exclusive == exclusive)
			return b;
	return NULL;
}

static void block_unlink(struct nlm *n, struct nlm_block *b)
{
	for (struct nlm_block **p = &n->blocked; *p; p = &(*p)->next) {
		if (*p == b) {
			*p = b->next;
			break;
		}
	}
	b->owner->nblocked--;
	b->owner->host->nblocked--;
	host_touch(b->owner->host);
}

static void block_free(struct nlm *n, struct nlm_block *b)
{
	struct nlm_owner *o = b->owner;

	block_unlink(n, b);
	free(b);
	owner_maybe_free(n, o);
}

/* The alock of a GRANTED call for o's range. */
static void fill_alock(const struct nlm_owner *o, int64_t start, int64_t end, nlm4_lock *l)
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
static void grant_undo(struct nlm *n, struct nlm_owner *o, int64_t start, int64_t end)
{
	if (o == NULL)
		return;
	log_info("NLM: client '%s' did not take a granted lock: released", o->host->name);
	n->callbacks_failed++;
	if (owner_apply(n, o, start, end, 0) == 0)
		nlm_cb_kick(n);
	owner_maybe_free(n, o);
}

static struct nlm_grant *grant_take(struct nlm *n, uint64_t id)
{
	for (struct nlm_grant **p = &n->grants; *p; p = &(*p)->next) {
		struct nlm_grant *g = *p;

		if (g->id == id) {
			*p = g->next;
			return g;
		}
	}
	return NULL;
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
		grant_undo(n, g->owner, g->start, g->end);
	} else if (g && r == NULL) {
		/* GRANTED_MSG went: the answer comes as GRANTED_RES */
		g->next = n->grants;
		n->grants = g;
		g = NULL;
	}
	pthread_mutex_unlock(&n->lock);
	free(g);
}

/* See nlm_int.h. */
void nlm_granted_res(struct nlm *n, const nlm4_netobj *cookie, nlm4_stats st)
{
	struct nlm_grant *g;
	uint64_t id;

	if (cookie->nlm4_netobj_len != sizeof(id))
		return;
	memcpy(&id, cookie->nlm4_netobj_val, sizeof(id));
	pthread_mutex_lock(&n->lock);
	g = grant_take(n, id);
	if (g && st != NLM4_GRANTED)
		grant_undo(n, g->owner, g->start, g->end);
	pthread_mutex_unlock(&n->lock);
	free(g);
}

/* A blocked request got its lock: tell the client (GRANTED, or GRANTED_MSG
 * to a client that asked with LOCK_MSG). */
static void block_granted(struct nlm *n, struct nlm_block *b)
{
	struct nlm_owner *o = b->owner;
	struct nlm_host *h = o->host;
	int64_t start = b->start, end = b->end;
	nlm4_testargs a = {.exclusive = b->exclusive};
	struct nlm_grant *g = calloc(1, sizeof(*g));
	uint64_t id = ++n->next_cookie;
	int via_msg = b->via_msg, rc = -ENOMEM;

	n->granted++;
	block_unlink(n, b);
	free(b);
	a.cookie.nlm4_netobj_val = (char *)&id;
	a.cookie.nlm4_netobj_len = sizeof(id);
	fill_alock(o, start, end, &a.alock);
	if (g) {
		*g = (struct nlm_grant){.id = id,
					.owner = o,
					.start = start,
					.end = end,
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

/* Try the blocked requests (on the file dev/ino only, unless all): grant
 * those that can go now, drop those past their deadline. */
static void blocked_retry(struct nlm *n, int all, dev_t dev, ino_t ino)
{
	uint64_t now = nlm_now_ms();
	struct nlm_block *b = n->blocked, *next;

	for (; b; b = next) {
		next = b->next;
		if (!all && (b->owner->dev != dev || b->owner->ino != ino))
			continue;
		if (now >= b->deadline_ms) {
			log_info("NLM: a blocked lock of '%s' waited %u s: dropped",
				 b->owner->host->name, n->p.blocked_timeout_s);
			block_free(n, b);
			continue;
		}
		if (in_grace(n))
			continue;
		/* granting frees b only (its owner holds the lock now), so next stays */
		if (owner_apply(n, b->owner, b->start, b->end, b->exclusive ? 2 : 1) == 0)
			block_granted(n, b);
	}
}

/* Forget grants whose GRANTED_RES never came: the GRANTED_MSG itself was
 * delivered, so the client has the lock. */
static void grants_expire(struct nlm *n)
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

/* See nlm_int.h. */
void nlm_tick(struct nlm *n)
{
	pthread_mutex_lock(&n->lock);
	grants_expire(n);
	blocked_retry(n, 1, 0, 0);
	hosts_gc(n, HOST_IDLE_MS);
	pthread_mutex_unlock(&n->lock);
}

/* ---- the operations */

/* Check what every call about a lock has: a caller name, a handle. */
static nlm4_stats lock_args_ok(const nlm4_lock *l, int64_t *start, int64_t *end)
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
	int64_t end = c->len == 0 ? NLM_TO_EOF : c->start + c->len;
	struct nlm_range hit;

	out->exclusive = c->type == OSDEP_LOCK_WRITE;
	out->l_offset = (uint64_t)c->start;
	out->l_len = (uint64_t)c->len;
	out->svid = c->pid; /* a local process: its pid */
	out->oh.nlm4_netobj_len = 0;
	out->oh.nlm4_netobj_val = NULL;
	for (struct nlm_owner *o = n->owners; o; o = o->next) {
		if (o == self || o->dev != dev || o->ino != ino ||
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

/* See nlm_int.h. */
nlm4_stats nlm_do_test(struct nlm *n, const struct sockaddr *peer, socklen_t plen,
		       const nlm4_testargs *a, nlm4_holder *holder)
{
	struct nfs_lock_file lf;
	struct osdep_lock l;
	int64_t start, end;
	nlm4_stats st;
	int rc, fd;

	if ((st = lock_args_ok(&a->alock, &start, &end)) != NLM4_GRANTED)
		return st;
	if (in_grace(n)) {
		n->grace_refused++;
		return NLM4_DENIED_GRACE_PERIOD;
	}
	pthread_mutex_lock(&n->lock);
	struct nlm_host *h = nlm_host_find(n, a->alock.caller_name, peer);
	struct nlm_owner *o = h ? owner_find(n, h, &a->alock) : NULL;

	if (o) {
		fd = o->fd;
	} else {
		rc = nfs_backend_open_locked(n->be, peer, plen, a->alock.fh.nlm4_netobj_val,
					     a->alock.fh.nlm4_netobj_len, &lf);
		if (rc) {
			pthread_mutex_unlock(&n->lock);
			return open_stat(rc);
		}
		fd = lf.fd;
	}
	l = to_osdep(a->exclusive ? 2 : 1, start, end);
	rc = osdep_lock_test(fd, &l);
	if (rc == 0 && l.type != OSDEP_LOCK_UNLOCK)
		find_holder(n, o, o ? o->dev : lf.dev, o ? o->ino : lf.ino, &l, holder);
	pthread_mutex_unlock(&n->lock);
	if (o == NULL)
		close(fd);
	if (rc)
		return NLM4_FAILED;
	return l.type == OSDEP_LOCK_UNLOCK ? NLM4_GRANTED : NLM4_DENIED;
}

/* Queue a blocked request (or find it queued: a client asks again). */
static nlm4_stats block_queue(struct nlm *n, struct nlm_owner *o, int64_t start, int64_t end,
			      int exclusive, int via_msg)
{
	struct nlm_block *b = block_find(n, o, start, end, exclusive);

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
		b->next = n->blocked;
		n->blocked = b;
		o->nblocked++;
		o->host->nblocked++;
		host_touch(o->host);
	}
	b->deadline_ms = nlm_now_ms() + (uint64_t)n->p.blocked_timeout_s * 1000;
	n->blocked_n++;
	return NLM4_BLOCKED;
}

/* LOCK for an owner in hand. */
static nlm4_stats lock_owner(struct nlm *n, struct nlm_owner *o, const nlm4_lockargs *a,
			     int64_t start, int64_t end, int via_msg)
{
	int rc;

	if (a->exclusive && !o->writable)
		return NLM4_ROFS;
	rc = owner_apply(n, o, start, end, a->exclusive ? 2 : 1);
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
		return block_queue(n, o, start, end, a->exclusive, via_msg);
	n->denied++;
	return NLM4_DENIED;
}

/* See nlm_int.h. */
nlm4_stats nlm_do_lock(struct nlm *n, const struct sockaddr *peer, socklen_t plen,
		       const nlm4_lockargs *a, int via_msg, int monitor)
{
	struct nlm_host *h;
	struct nlm_owner *o;
	int64_t start, end;
	nlm4_stats st;

	if ((st = lock_args_ok(&a->alock, &start, &end)) != NLM4_GRANTED)
		return st;
	if (in_grace(n) != !!a->reclaim) {
		n->grace_refused++;
		return NLM4_DENIED_GRACE_PERIOD;
	}
	pthread_mutex_lock(&n->lock);
	if ((h = host_get(n, a->alock.caller_name, peer, plen)) == NULL) {
		n->nolocks++;
		st = NLM4_DENIED_NOLOCKS;
	} else if ((o = owner_get(n, h, &a->alock, &st)) != NULL) {
		st = lock_owner(n, o, a, start, end, via_msg);
		if (st == NLM4_GRANTED && monitor && !h->monitored)
			nsm_monitor(n, h);
		owner_maybe_free(n, o);
	}
	pthread_mutex_unlock(&n->lock);
	return st;
}

/* See nlm_int.h. */
nlm4_stats nlm_do_cancel(struct nlm *n, const struct sockaddr *peer, const nlm4_cancargs *a)
{
	struct nlm_host *h;
	struct nlm_owner *o;
	struct nlm_block *b;
	int64_t start, end;
	nlm4_stats st;

	if ((st = lock_args_ok(&a->alock, &start, &end)) != NLM4_GRANTED)
		return st;
	if (in_grace(n)) {
		n->grace_refused++;
		return NLM4_DENIED_GRACE_PERIOD;
	}
	pthread_mutex_lock(&n->lock);
	if ((h = nlm_host_find(n, a->alock.caller_name, peer)) != NULL &&
	    (o = owner_find(n, h, &a->alock)) != NULL &&
	    (b = block_find(n, o, start, end, a->exclusive)) != NULL)
		block_free(n, b);
	pthread_mutex_unlock(&n->lock);
	return NLM4_GRANTED; /* as on Linux: nothing to cancel is no error */
}

/* See nlm_int.h. */
nlm4_stats nlm_do_unlock(struct nlm *n, const struct sockaddr *peer, const nlm4_unlockargs *a)
{
	struct nlm_host *h;
	struct nlm_owner *o;
	int64_t start, end;
	nlm4_stats st;
	dev_t dev;
	ino_t ino;

	if ((st = lock_args_ok(&a->alock, &start, &end)) != NLM4_GRANTED)
		return st;
	if (in_grace(n)) {
		n->grace_refused++;
		return NLM4_DENIED_GRACE_PERIOD;
	}
	pthread_mutex_lock(&n->lock);
	if ((h = nlm_host_find(n, a->alock.caller_name, peer)) != NULL &&
	    (o = owner_find(n, h, &a->alock)) != NULL) {
		dev = o->dev;
		ino = o->ino;
		if (owner_apply(n, o, start, end, 0) != 0)
			st = NLM4_FAILED;
		/* as on Linux, an unlock also cancels the owner's waits on the range */
		for (struct nlm_block *b = n->blocked, *next; b; b = next) {
			next = b->next;
			if (b->owner == o && b->start < end && b->end > start) {
				block_unlink(n, b);
				free(b);
			}
		}
		owner_maybe_free(n, o);
		blocked_retry(n, 0, dev, ino);
	}
	pthread_mutex_unlock(&n->lock);
	return st;
}

/* ---- shares (DOS share reservations: the server's own, the kernel has none) */

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
			free(s->oh);
			free(s);
			return 1;
		}
	}
	return 0;
}

/* SHARE for host h on dev/ino: a new share replaces the owner's own. */
static nlm4_stats share_add(struct nlm *n, struct nlm_host *h, const nlm4_share *sh, dev_t dev,
			    ino_t ino)
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
	if (!h->monitored)
		nsm_monitor(n, h);
	return NLM4_GRANTED;
}

/* See nlm_int.h. */
nlm4_stats nlm_do_share(struct nlm *n, const struct sockaddr *peer, socklen_t plen,
			const nlm4_shareargs *a, int unshare)
{
	const nlm4_share *sh = &a->share;
	struct nfs_lock_file lf;
	struct nlm_host *h;
	nlm4_stats st = NLM4_GRANTED;
	int rc;

	if (sh->caller_name == NULL || sh->caller_name[0] == '\0' ||
	    (unsigned)sh->mode > NLM4_FSM_DRW || (unsigned)sh->access > NLM4_FSA_RW)
		return NLM4_FAILED;
	if (sh->fh.nlm4_netobj_len == 0 || sh->fh.nlm4_netobj_len > NLM_FH_MAX)
		return NLM4_STALE_FH;
	if (unshare ? in_grace(n) : in_grace(n) != !!a->reclaim) {
		n->grace_refused++;
		return NLM4_DENIED_GRACE_PERIOD;
	}
	rc = nfs_backend_open_locked(n->be, peer, plen, sh->fh.nlm4_netobj_val,
				     sh->fh.nlm4_netobj_len, &lf);
	if (rc)
		return open_stat(rc);
	close(lf.fd);
	pthread_mutex_lock(&n->lock);
	if (unshare) {
		if ((h = nlm_host_find(n, sh->caller_name, peer)) != NULL) {
			share_drop(n, h, &sh->oh, lf.dev, lf.ino);
			host_touch(h);
		}
	} else if ((h = host_get(n, sh->caller_name, peer, plen)) == NULL) {
		n->nolocks++;
		st = NLM4_DENIED_NOLOCKS;
	} else {
		st = share_add(n, h, sh, lf.dev, lf.ino);
		host_touch(h);
	}
	pthread_mutex_unlock(&n->lock);
	return st;
}

/* See nlm_int.h. */
void nlm_host_drop(struct nlm *n, struct nlm_host *h)
{
	struct nlm_share *s, **sp;
	struct nlm_block *b, *nextb;
	struct nlm_owner *o, *nexto;

	for (b = n->blocked; b; b = nextb) {
		nextb = b->next;
		if (b->owner->host == h)
			block_free(n, b);
	}
	for (sp = &n->shares; (s = *sp) != NULL;) {
		if (s->host == h) {
			*sp = s->next;
			h->nlocks--;
			free(s->oh);
			free(s);
		} else {
			sp = &s->next;
		}
	}
	for (o = n->owners; o; o = nexto) {
		nexto = o->next;
		if (o->host != h)
			continue;
		h->nlocks -= (unsigned)o->ranges.n;
		o->ranges.n = 0;
		owner_maybe_free(n, o); /* closing drops its locks in the kernel */
	}
	host_touch(h);
	blocked_retry(n, 1, 0, 0);
}

/* See nlm_int.h. */
void nlm_do_free_all(struct nlm *n, const struct sockaddr *peer, const char *name)
{
	struct nlm_host *h;

	if (name == NULL)
		return;
	pthread_mutex_lock(&n->lock);
	if ((h = nlm_host_find(n, name, peer)) != NULL) {
		log_info("NLM: FREE_ALL from '%s': its locks are released", name);
		nlm_host_drop(n, h);
	}
	pthread_mutex_unlock(&n->lock);
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
	if ((rc = nlm_cb_start(n)) != 0 || (rc = nsm_start(n)) != 0) {
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
	nlm_cb_stop(n);
	while (n->blocked)
		block_free(n, n->blocked);
	while ((g = n->grants) != NULL) {
		n->grants = g->next;
		free(g);
	}
	while (n->shares) {
		struct nlm_share *s = n->shares;

		n->shares = s->next;
		free(s->oh);
		free(s);
	}
	while (n->owners) {
		struct nlm_owner *o = n->owners;

		o->ranges.n = 0;
		owner_maybe_free(n, o);
	}
	while (n->hosts) {
		struct nlm_host *h = n->hosts;

		n->hosts = h->next;
		free(h->name); /* monitored hosts stay recorded: they hear from us at restart */
		free(h);
	}
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
	for (struct nlm_block *b = n->blocked; b; b = b->next)
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
