/*
 * nfs3_clnt_dir.c: listing a directory with READDIRPLUS (names, handles and
 * attributes in one go), or READDIR where the server does not support it.
 * Replies longer than an inline message come back in a Reply chunk over RDMA,
 * so every call says how long its reply may be (reply_hint).
 */
#include <search.h>
#include <stdlib.h>
#include <string.h>

#include "client/nfs3_clnt_int.h"
#include "common/base/log.h"

#define DIR_MAXCOUNT  32768 /* bytes of READDIRPLUS reply asked for */
#define DIR_DIRCOUNT  8192  /* bytes of names and cookies in it */
#define DIR_MAX_CALLS 1000000

/* Hand one READDIRPLUS entry to fn; caches what it carries. */
static int plus_entry(struct nfs3c *c, uint64_t gen, const entryplus3 *e,
		      int (*fn)(void *, const struct nfs3c_dirent *), void *arg)
{
	struct nfs3c_fh fh;
	struct nfs3c_dirent d = {.name = e->name, .fileid = e->fileid, .cookie = e->cookie};

	if (e->name_handle.handle_follows &&
	    nfs3c_fh_from_xdr(&e->name_handle.post_op_fh3_u.handle, &fh) == 0) {
		d.fh = &fh;
		if (e->name_attributes.attributes_follow) {
			d.attr = &e->name_attributes.post_op_attr_u.attributes;
			nfs3c_attr_update(c, gen, &fh, d.attr);
		}
	}
	return fn(arg, &d);
}

/* One READDIRPLUS call from *cookie; sets *eof, advances cookie and verifier.
 * Returns 0, the callback's non-zero value, or -errno. */
static int plus_once(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *dir,
		     uint64_t *cookie, cookieverf3 verf, int *eof,
		     int (*fn)(void *, const struct nfs3c_dirent *), void *arg)
{
	READDIRPLUS3args a = {
		.cookie = *cookie, .dircount = DIR_DIRCOUNT, .maxcount = DIR_MAXCOUNT};
	READDIRPLUS3res r;
	struct nfs3c_req rq;
	int rc;

	memset(&r, 0, sizeof(r));
	nfs3c_fh_to_xdr(dir, &a.dir);
	memcpy(a.cookieverf, verf, NFS3_COOKIEVERFSIZE);
	nfs3c_req_init(&rq, NFSPROC3_READDIRPLUS, (xdrproc_t)xdr_READDIRPLUS3args, &a,
		       (xdrproc_t)xdr_READDIRPLUS3res, &r);
	rq.call.reply_hint = DIR_MAXCOUNT + 1024;
	if ((rc = nfs3c_call(c, cr, &rq)) != 0)
		return rc;
	if (r.status == NFS3_OK) {
		READDIRPLUS3resok *ok = &r.READDIRPLUS3res_u.resok;

		nfs3c_attr_post(c, rq.gen, dir, &ok->dir_attributes);
		memcpy(verf, ok->cookieverf, NFS3_COOKIEVERFSIZE);
		*eof = ok->reply.eof;
		for (entryplus3 *e = ok->reply.entries; e && rc == 0; e = e->nextentry) {
			rc = plus_entry(c, rq.gen, e, fn, arg);
			*cookie = e->cookie;
		}
		if (!ok->reply.entries && !*eof)
			rc = -EIO; /* no progress and no end: a broken server */
	} else {
		rc = nfs3c_errno(r.status);
	}
	nfs3c_call_done(c, &rq);
	return rc;
}

/* The same with READDIR: names and file ids only. */
static int plain_once(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *dir,
		      uint64_t *cookie, cookieverf3 verf, int *eof,
		      int (*fn)(void *, const struct nfs3c_dirent *), void *arg)
{
	READDIR3args a = {.cookie = *cookie, .count = DIR_MAXCOUNT};
	READDIR3res r;
	struct nfs3c_req rq;
	int rc;

	memset(&r, 0, sizeof(r));
	nfs3c_fh_to_xdr(dir, &a.dir);
	memcpy(a.cookieverf, verf, NFS3_COOKIEVERFSIZE);
	nfs3c_req_init(&rq, NFSPROC3_READDIR, (xdrproc_t)xdr_READDIR3args, &a,
		       (xdrproc_t)xdr_READDIR3res, &r);
	rq.call.reply_hint = DIR_MAXCOUNT + 1024;
	if ((rc = nfs3c_call(c, cr, &rq)) != 0)
		return rc;
	if (r.status == NFS3_OK) {
		READDIR3resok *ok = &r.READDIR3res_u.resok;

		nfs3c_attr_post(c, rq.gen, dir, &ok->dir_attributes);
		memcpy(verf, ok->cookieverf, NFS3_COOKIEVERFSIZE);
		*eof = ok->reply.eof;
		for (entry3 *e = ok->reply.entries; e && rc == 0; e = e->nextentry) {
			struct nfs3c_dirent d = {
				.name = e->name, .fileid = e->fileid, .cookie = e->cookie};

			rc = fn(arg, &d);
			*cookie = e->cookie;
		}
		if (!ok->reply.entries && !*eof)
			rc = -EIO;
	} else {
		rc = nfs3c_errno(r.status);
	}
	nfs3c_call_done(c, &rq);
	return rc;
}

/* One listing: the caller's callback, the entries so far, the cookies asked with. */
struct listing {
	struct nfs3c *c;
	int (*fn)(void *arg, const struct nfs3c_dirent *e);
	void *arg;
	unsigned entries;
	void *asked; /* tsearch tree of the cookies the listing asked with */
};

static int cookie_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Every entry passes here: past the listing's ceiling, the listing ends. */
static int count_entry(void *arg, const struct nfs3c_dirent *e)
{
	struct listing *l = arg;

	if (++l->entries > l->c->p.dir_max) {
		if (nfs3c_first_warning(l->c, NFS3C_WARN_DIR_MAX))
			log_warn("server %s: a directory lists more than %u entries (dir_max): "
				 "stopped",
				 l->c->host, l->c->p.dir_max);
		return -EOVERFLOW;
	}
	return l->fn(l->arg, e);
}

/* Whether the listing asked with cookie before (a server handing back a cookie
 * it gave already would loop for ever); remembers it if not. */
static int asked_before(struct listing *l, uint64_t cookie)
{
	uint64_t *k = malloc(sizeof(*k)), **found;

	if (!k)
		return -ENOMEM;
	*k = cookie;
	found = tsearch(k, &l->asked, cookie_cmp);
	if (!found) {
		free(k);
		return -ENOMEM;
	}
	if (*found == k)
		return 0;
	free(k);
	if (nfs3c_first_warning(l->c, NFS3C_WARN_DIR_LOOP))
		log_warn("server %s: readdir loop: cookie %llu came back; the listing stops",
			 l->c->host, (unsigned long long)cookie);
	return -ELOOP;
}

/* Forget the cookies asked with (tdelete, as POSIX has no tdestroy). */
static void forget_asked(struct listing *l)
{
	while (l->asked) {
		uint64_t *k = *(uint64_t **)l->asked;

		tdelete(k, &l->asked, cookie_cmp);
		free(k);
	}
}

/* See nfs3_clnt.h: READDIRPLUS until eof, READDIR if the server has none. */
int nfs3c_readdir(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *dir,
		  int (*fn)(void *arg, const struct nfs3c_dirent *e), void *arg)
{
	struct listing l = {.c = c, .fn = fn, .arg = arg};
	cookieverf3 verf = {0};
	uint64_t cookie = 0;
	int eof = 0, rc = 0, plus = 1;

	for (unsigned n = 0; !eof && rc == 0 && n < DIR_MAX_CALLS; n++) {
		if ((rc = asked_before(&l, cookie)) != 0)
			break;
		rc = plus ? plus_once(c, cr, dir, &cookie, verf, &eof, count_entry, &l)
			  : plain_once(c, cr, dir, &cookie, verf, &eof, count_entry, &l);
		if (rc == -ENOTSUP && plus && cookie == 0) {
			plus = 0; /* NFS3ERR_NOTSUPP: READDIR instead, from the start */
			forget_asked(&l);
			rc = 0;
		}
	}
	forget_asked(&l);
	return rc;
}
