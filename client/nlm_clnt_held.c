/*
 * nlm_clnt_held.c: the table of what lock owners hold (see nlm_clnt_held.h).
 * A lock or an unlock first cuts the range out of what the pair holds, then a
 * lock adds it; ranges are not merged, and a pair keeps at most
 * NLMC_RANGES_MAX of them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "client/nlm_clnt_held.h"
#include "common/base/log.h"

static struct nlmc_held *find(struct nlmc_heldset *s, const struct nfs3c_fh *fh, uint64_t owner,
			      struct nlmc_held ***prev)
{
	for (struct nlmc_held **p = &s->head; *p; p = &(*p)->next) {
		if ((*p)->owner == owner && nfs3c_fh_equal(&(*p)->fh, fh)) {
			if (prev)
				*prev = p;
			return *p;
		}
	}
	return NULL;
}

/* h's ranges without [start, end), and with it if lock (excl); 0 or -ENOLCK. */
static int cut_and_add(struct nlmc_held *h, uint64_t start, uint64_t end, int lock, int excl)
{
	struct nlmc_range *out = calloc(2 * h->nr + 1, sizeof(*out));
	unsigned k = 0;

	if (out == NULL)
		return -ENOLCK;
	for (unsigned i = 0; i < h->nr; i++) {
		struct nlmc_range r = h->r[i];

		if (r.end <= start || r.start >= end) {
			out[k++] = r;
			continue;
		}
		if (r.start < start)
			out[k++] = (struct nlmc_range){r.start, start, r.excl};
		if (r.end > end)
			out[k++] = (struct nlmc_range){end, r.end, r.excl};
	}
	if (lock)
		out[k++] = (struct nlmc_range){start, end, excl};
	if (k > NLMC_RANGES_MAX) {
		free(out);
		return -ENOLCK;
	}
	free(h->r);
	h->r = out;
	h->nr = k;
	return 0;
}

/* The exclusive end of [start, start + len) (len 0: to the end). */
static uint64_t range_end(uint64_t start, uint64_t len)
{
	return len == 0 || start + len < start ? UINT64_MAX : start + len;
}

/* See nlm_clnt_held.h. */
int nlmc_held_apply(struct nlmc_heldset *s, const struct nfs3c_fh *fh, uint64_t owner,
		    uint32_t svid, int type, uint64_t start, uint64_t len)
{
	uint64_t end = range_end(start, len);
	struct nlmc_held **prev = NULL, *h = find(s, fh, owner, &prev);
	int rc;

	if (h == NULL && type == F_UNLCK)
		return 0;
	if (h == NULL) {
		if (s->n >= s->max_owners) {
			log_warn("locks: %u file and owner pairs hold locks: no more", s->n);
			return -ENOLCK;
		}
		if ((h = calloc(1, sizeof(*h))) == NULL)
			return -ENOLCK;
		h->fh = *fh;
		h->owner = owner;
		h->next = s->head;
		s->head = h;
		s->n++;
		prev = &s->head;
	}
	if (svid)
		h->svid = svid;
	rc = cut_and_add(h, start, end, type != F_UNLCK, type == F_WRLCK);
	if (rc)
		log_warn("locks: one owner holds %u ranges of a file: no more", h->nr);
	if (h->nr == 0) {
		*prev = h->next;
		s->n--;
		nlmc_held_free(h);
	}
	return rc;
}

/* See nlm_clnt_held.h. */
struct nlmc_held *nlmc_held_take(struct nlmc_heldset *s, const struct nfs3c_fh *fh, uint64_t owner)
{
	struct nlmc_held **prev = NULL, *h = find(s, fh, owner, &prev);

	if (h) {
		*prev = h->next;
		s->n--;
	}
	return h;
}

/* See nlm_clnt_held.h. The ranges do not overlap: each step goes on from
 * the end of the one that holds pos. */
int nlmc_held_covers(struct nlmc_heldset *s, const struct nfs3c_fh *fh, uint64_t owner,
		     uint64_t start, uint64_t len, int excl)
{
	struct nlmc_held *h = find(s, fh, owner, NULL);
	uint64_t end = range_end(start, len), pos = start;
	unsigned i;

	while (h && pos < end) {
		for (i = 0; i < h->nr && !(h->r[i].start <= pos && pos < h->r[i].end); i++)
			;
		if (i == h->nr || !h->r[i].excl != !excl)
			return 0;
		pos = h->r[i].end;
	}
	return h != NULL;
}

/* See nlm_clnt_held.h. */
void nlmc_held_set_cred(struct nlmc_heldset *s, const struct nfs3c_fh *fh, uint64_t owner,
			const struct rpc_cred *cred)
{
	struct nlmc_held *h = find(s, fh, owner, NULL);

	if (h)
		h->cred = *cred;
}

/* See nlm_clnt_held.h. */
const struct rpc_cred *nlmc_held_cred(const struct nlmc_held *h)
{
	return h->cred.flavor ? &h->cred : NULL;
}

/* See nlm_clnt_held.h. */
uint32_t nlmc_held_svid(struct nlmc_heldset *s, const struct nfs3c_fh *fh, uint64_t owner)
{
	struct nlmc_held *h = find(s, fh, owner, NULL);

	return h ? h->svid : 0;
}

/* See nlm_clnt_held.h. */
void nlmc_held_free(struct nlmc_held *h)
{
	if (h) {
		free(h->r);
		free(h);
	}
}

/* See nlm_clnt_held.h. */
void nlmc_held_clear(struct nlmc_heldset *s)
{
	while (s->head) {
		struct nlmc_held *h = s->head;

		s->head = h->next;
		nlmc_held_free(h);
	}
	s->n = 0;
}
