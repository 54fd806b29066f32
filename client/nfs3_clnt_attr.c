/*
 * nfs3_clnt_attr.c: the attribute cache and the procedures about attributes
 * (GETATTR, SETATTR, ACCESS).
 *
 * Every reply's post-operation attributes refresh the cache. An entry stays
 * valid for a timeout that starts at acregmin (acdirmin for directories),
 * doubles at each refresh that finds the attributes unchanged, up to acregmax
 * (acdirmax), and drops back to the minimum when they change, as NFS clients
 * traditionally do. The cache is a hash table whose chains are capped, so its
 * memory is bounded; the oldest entry of a full chain goes, forgotten as a
 * stale one is (below).
 *
 * Attributes never go back in time (the Linux client's attr_gencount, and its
 * change-time check): every call takes a generation from a counter when it is
 * first sent, and an entry keeps the counter's value when it was filled. A
 * reply to a call sent after that ran on the server after what the entry
 * holds, and is taken. A reply to a call that was on the way at the same time
 * may have run before or after it (the server runs calls in parallel: a READ
 * sent after a WRITE may run first, and a READ's post-op attributes may arrive
 * after a truncating SETATTR's); the server's change time orders the two: a
 * newer ctime is taken, an older one is not, and two different sets of
 * attributes with one ctime (a coarse clock) cannot be ordered, so the entry
 * is forgotten. A forgotten entry leaves no generation behind, so after a
 * forget only calls sent after it may fill the cache again: in doubt, the next
 * GETATTR asks the server.
 */
#include <stdlib.h>
#include <string.h>

#include "client/nfs3_clnt_int.h"

/* An empty cache. */
void nfs3c_attr_init(struct nfs3c *c)
{
	pthread_mutex_init(&c->attr_lock, NULL);
}

/* Free every entry. */
void nfs3c_attr_fini(struct nfs3c *c)
{
	for (unsigned i = 0; i < NFS3C_ATTR_BUCKETS; i++) {
		while (c->attrs[i]) {
			struct attr_ent *e = c->attrs[i];

			c->attrs[i] = e->next;
			free(e);
		}
	}
	pthread_mutex_destroy(&c->attr_lock);
}

/* Find fh's entry and unlink it from its chain; lock held. */
static struct attr_ent *take(struct nfs3c *c, const struct nfs3c_fh *fh, unsigned *chain_len)
{
	struct attr_ent **pp = &c->attrs[nfs3c_fh_hash(fh) % NFS3C_ATTR_BUCKETS], *e;

	*chain_len = 0;
	for (; (e = *pp) != NULL; pp = &e->next) {
		if (nfs3c_fh_equal(&e->fh, fh)) {
			*pp = e->next;
			return e;
		}
		(*chain_len)++;
	}
	return NULL;
}

/* Whether the attributes that say "changed" (size, mtime, ctime) are equal. */
static int same_attrs(const fattr3 *a, const fattr3 *b)
{
	return a->size == b->size && a->mtime.seconds == b->mtime.seconds &&
	       a->mtime.nseconds == b->mtime.nseconds && a->ctime.seconds == b->ctime.seconds &&
	       a->ctime.nseconds == b->ctime.nseconds;
}

/* Whether the server changed the file later (> 0), earlier (< 0) or at the
 * same time (0) in b than in a, by the change time. */
static int ctime_cmp(const fattr3 *a, const fattr3 *b)
{
	if (a->ctime.seconds != b->ctime.seconds)
		return a->ctime.seconds < b->ctime.seconds ? 1 : -1;
	if (a->ctime.nseconds != b->ctime.nseconds)
		return a->ctime.nseconds < b->ctime.nseconds ? 1 : -1;
	return 0;
}

/* Whether the reply of a call first sent at gen, bringing a, is newer (> 0)
 * than e (NULL: no entry), older (< 0), or cannot be told (0). */
static int reply_order(const struct nfs3c *c, const struct attr_ent *e, uint64_t gen,
		       const fattr3 *a)
{
	int by_ctime;

	if (!e)
		return gen < c->attr_forgot_gen ? -1 : 1;
	if (gen > e->gen)
		return 1; /* sent after e was filled: it ran after e's call */
	if ((by_ctime = ctime_cmp(&e->a, a)) != 0)
		return by_ctime;
	return same_attrs(&e->a, a) ? 1 : 0;
}

/* Forget fh's entry (unlinked, or NULL): replies to calls sent so far may
 * carry what was just found stale; lock held. */
static void forget_locked(struct nfs3c *c, struct attr_ent *e)
{
	c->attr_forgot_gen = __atomic_load_n(&c->attr_gen, __ATOMIC_RELAXED) + 1;
	free(e);
}

/* Drop the last entry of a chain that is full, forgotten as a stale one is
 * (a reply on the way may be older than what it held); lock held. */
static void trim_chain(struct nfs3c *c, struct attr_ent **head)
{
	struct attr_ent **pp = head;
	unsigned n = 0;

	while (*pp && ++n < NFS3C_ATTR_CHAIN_MAX)
		pp = &(*pp)->next;
	while (*pp) {
		struct attr_ent *e = *pp;

		*pp = e->next;
		forget_locked(c, e);
	}
}

/* See nfs3_clnt_int.h: cache a for fh, growing or resetting its timeout. */
void nfs3c_attr_update(struct nfs3c *c, uint64_t gen, const struct nfs3c_fh *fh, const fattr3 *a)
{
	unsigned dir = a->type == NF3DIR, len;
	uint32_t lo = (dir ? c->p.acdirmin : c->p.acregmin) * 1000u;
	uint32_t hi = (dir ? c->p.acdirmax : c->p.acregmax) * 1000u;
	struct attr_ent *e, **head;
	uint64_t now;
	int order;

	if (c->p.noac)
		return;
	pthread_mutex_lock(&c->attr_lock);
	e = take(c, fh, &len);
	head = &c->attrs[nfs3c_fh_hash(fh) % NFS3C_ATTR_BUCKETS];
	if ((order = reply_order(c, e, gen, a)) <= 0) {
		nfs3c_stat_add(&c->st.attr_stale, 1);
		if (order < 0 && e) { /* older than what is known: kept */
			e->next = *head;
			*head = e;
		} else if (e) { /* in doubt: the next GETATTR asks */
			forget_locked(c, e);
		}
		pthread_mutex_unlock(&c->attr_lock);
		return;
	}
	if (!e && (e = calloc(1, sizeof(*e))) == NULL) {
		pthread_mutex_unlock(&c->attr_lock);
		return;
	}
	/* As Linux's client: unchanged attributes double the timeout only once
	 * it has run out since it was last set, not at every reply (a burst of
	 * calls would otherwise take it to the maximum at once); a change sets
	 * it back to the minimum. */
	now = nfs3c_now_ms();
	if (!e->fh.len || !same_attrs(&e->a, a)) {
		e->timeout_ms = lo;
		e->grown_ms = now;
	} else if (now >= e->grown_ms + e->timeout_ms) {
		e->timeout_ms = e->timeout_ms * 2 > hi ? hi : e->timeout_ms * 2;
		e->grown_ms = now;
	}
	if (e->timeout_ms < lo)
		e->timeout_ms = lo;
	e->fh = *fh;
	e->a = *a;
	e->gen = __atomic_load_n(&c->attr_gen, __ATOMIC_RELAXED);
	e->when_ms = now;
	e->next = *head;
	*head = e;
	trim_chain(c, head);
	pthread_mutex_unlock(&c->attr_lock);
}

/* Valid cached attributes of fh into out (optional); returns the ms they stay valid. */
static unsigned lookup_valid(struct nfs3c *c, const struct nfs3c_fh *fh, fattr3 *out)
{
	struct attr_ent *e;
	uint64_t now = nfs3c_now_ms();
	unsigned left = 0;

	pthread_mutex_lock(&c->attr_lock);
	for (e = c->attrs[nfs3c_fh_hash(fh) % NFS3C_ATTR_BUCKETS]; e; e = e->next) {
		if (nfs3c_fh_equal(&e->fh, fh)) {
			if (now < e->when_ms + e->timeout_ms) {
				left = (unsigned)(e->when_ms + e->timeout_ms - now);
				if (out)
					*out = e->a;
			}
			break;
		}
	}
	pthread_mutex_unlock(&c->attr_lock);
	return left;
}

/* Valid cached attributes of fh into out, or -ENOENT. */
int nfs3c_attr_lookup(struct nfs3c *c, const struct nfs3c_fh *fh, fattr3 *out)
{
	return lookup_valid(c, fh, out) ? 0 : -ENOENT;
}

/* See nfs3_clnt.h. */
unsigned nfs3c_attr_valid_ms(struct nfs3c *c, const struct nfs3c_fh *fh)
{
	return c->p.noac ? 0 : lookup_valid(c, fh, NULL);
}

/* See nfs3_clnt.h. */
void nfs3c_attr_forget(struct nfs3c *c, const struct nfs3c_fh *fh)
{
	unsigned len;

	pthread_mutex_lock(&c->attr_lock);
	forget_locked(c, take(c, fh, &len));
	pthread_mutex_unlock(&c->attr_lock);
}

/* Post-operation attributes: cache them, or forget stale ones. */
void nfs3c_attr_post(struct nfs3c *c, uint64_t gen, const struct nfs3c_fh *fh,
		     const post_op_attr *pa)
{
	if (pa->attributes_follow)
		nfs3c_attr_update(c, gen, fh, &pa->post_op_attr_u.attributes);
	else
		nfs3c_attr_forget(c, fh);
}

/* Weak cache consistency data: the "after" attributes count. */
void nfs3c_attr_wcc(struct nfs3c *c, uint64_t gen, const struct nfs3c_fh *fh, const wcc_data *w)
{
	nfs3c_attr_post(c, gen, fh, &w->after);
}

/* See nfs3_clnt.h. */
int nfs3c_getattr(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *fh, int flags,
		  fattr3 *out)
{
	GETATTR3args a;
	GETATTR3res r;
	struct nfs3c_req rq;
	int rc;

	if (!(flags & NFS3C_NOCACHE) && !c->p.noac && nfs3c_attr_lookup(c, fh, out) == 0) {
		nfs3c_stat_add(&c->st.attr_hits, 1);
		return 0;
	}
	nfs3c_stat_add(&c->st.attr_misses, 1);
	memset(&r, 0, sizeof(r));
	nfs3c_fh_to_xdr(fh, &a.object);
	nfs3c_req_init(&rq, NFSPROC3_GETATTR, (xdrproc_t)xdr_GETATTR3args, &a,
		       (xdrproc_t)xdr_GETATTR3res, &r);
	if ((rc = nfs3c_call(c, cr, &rq)) != 0)
		return rc;
	if (r.status == NFS3_OK) {
		*out = r.GETATTR3res_u.resok.obj_attributes;
		nfs3c_attr_update(c, rq.gen, fh, out);
	} else {
		rc = nfs3c_errno(r.status);
		if (r.status == NFS3ERR_STALE)
			nfs3c_attr_forget(c, fh);
	}
	nfs3c_call_done(c, &rq);
	return rc;
}

/* See nfs3_clnt.h. */
int nfs3c_setattr(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *fh,
		  const sattr3 *sa, fattr3 *out)
{
	SETATTR3args a = {.new_attributes = *sa};
	SETATTR3res r;
	struct nfs3c_req rq;
	int rc;

	memset(&r, 0, sizeof(r));
	nfs3c_fh_to_xdr(fh, &a.object);
	nfs3c_req_init(&rq, NFSPROC3_SETATTR, (xdrproc_t)xdr_SETATTR3args, &a,
		       (xdrproc_t)xdr_SETATTR3res, &r);
	if ((rc = nfs3c_call(c, cr, &rq)) != 0)
		return rc;
	/* both arms carry the same wcc_data */
	nfs3c_attr_wcc(c, rq.gen, fh, &r.SETATTR3res_u.resok.obj_wcc);
	rc = r.status == NFS3_OK ? 0 : nfs3c_errno(r.status);
	if (rc == 0 && out) {
		if (r.SETATTR3res_u.resok.obj_wcc.after.attributes_follow)
			*out = r.SETATTR3res_u.resok.obj_wcc.after.post_op_attr_u.attributes;
		else
			rc = 1; /* fetch below, after the results are freed */
	}
	nfs3c_call_done(c, &rq);
	return rc == 1 ? nfs3c_getattr(c, cr, fh, NFS3C_NOCACHE, out) : rc;
}

/* See nfs3_clnt.h. */
int nfs3c_access(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *fh,
		 uint32_t want, uint32_t *granted)
{
	ACCESS3args a = {.access = want};
	ACCESS3res r;
	struct nfs3c_req rq;
	int rc;

	memset(&r, 0, sizeof(r));
	nfs3c_fh_to_xdr(fh, &a.object);
	nfs3c_req_init(&rq, NFSPROC3_ACCESS, (xdrproc_t)xdr_ACCESS3args, &a,
		       (xdrproc_t)xdr_ACCESS3res, &r);
	if ((rc = nfs3c_call(c, cr, &rq)) != 0)
		return rc;
	if (r.status == NFS3_OK) {
		nfs3c_attr_post(c, rq.gen, fh, &r.ACCESS3res_u.resok.obj_attributes);
		*granted = r.ACCESS3res_u.resok.access;
	} else {
		rc = nfs3c_errno(r.status);
	}
	nfs3c_call_done(c, &rq);
	return rc;
}
