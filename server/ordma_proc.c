/*
 * ordma_proc.c: the server's side of Optimistic RDMA (issue 23) on POSIX
 * exports with ordma = true: READs fill the registered block cache
 * (server/ordma_cache.h), changes the server makes to a file forget its
 * blocks, and the side program's MAP (common/nfs/ordma_prot.x) tells a
 * client which blocks of a range are cached and where.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/log.h"
#include "server/backend_int.h"
#include "server/nfs3.h"

/* Reads larger than this do not fill the cache: Optimistic RDMA is for small
 * reads, and a large one would push out many blocks for one copy. */
#define ORDMA_FILL_MAX (64u * 1024)

/* See backend.h. */
int nfs_backend_set_ordma(struct nfs_backend *be, struct ordma_cache *c, uint32_t rkey)
{
	size_t len;

	if (be->ordma)
		return -EBUSY;
	be->ordma = c;
	be->ordma_base = (uint64_t)(uintptr_t)ordma_cache_mem(c, &len);
	be->ordma_len = len;
	be->ordma_rkey = rkey;
	return 0;
}

/* See backend.h. */
int nfs_backend_wants_ordma(const struct nfs_backend *be)
{
	for (size_t i = 0; i < be->nexports; i++)
		if (be->exports[i].conf.ordma && be->exports[i].ops == &be_posix_ops)
			return 1;
	return 0;
}

/* The cache, if o's export fills it. */
static struct ordma_cache *cache_of(const struct nfs_req *req, const struct be_obj *o)
{
	return o->exp->conf.ordma ? req->be->ordma : NULL;
}

/* See backend_int.h. */
uint64_t be_ordma_gen(const struct nfs_req *req, const struct be_obj *o)
{
	struct ordma_cache *c = cache_of(req, o);

	return c ? ordma_cache_gen(c, ordma_fh_hash(o->fh, o->fhlen)) : 0;
}

/* See backend_int.h. Whole blocks inside the range, and the last one short
 * where the file ends there. */
void be_ordma_fill(const struct nfs_req *req, const struct be_obj *o, uint64_t gen, uint64_t offset,
		   const void *data, uint32_t len)
{
	struct ordma_cache *c = cache_of(req, o);
	uint64_t change =
		ordma_change((uint32_t)o->st.st_ctim.tv_sec, (uint32_t)o->st.st_ctim.tv_nsec);
	uint64_t fh = ordma_fh_hash(o->fh, o->fhlen), size = (uint64_t)o->st.st_size;
	uint32_t block;

	if (!c || len == 0 || len > ORDMA_FILL_MAX || !S_ISREG(o->st.st_mode))
		return;
	block = ordma_cache_block(c);
	for (uint64_t off = offset + (block - offset % block) % block; off < offset + len;
	     off += block) {
		uint64_t n = offset + len - off;

		if (n > block)
			n = block;
		if (n == block || off + n == size)
			ordma_cache_fill(c, gen, fh, (uint64_t)o->st.st_ino, off, change,
					 (const char *)data + (off - offset), (uint32_t)n);
	}
}

/* See backend_int.h. */
void be_ordma_forget(const struct nfs_req *req, const struct export *e, const void *fh,
		     size_t fhlen)
{
	if (e->conf.ordma && req->be->ordma)
		ordma_cache_forget(req->be->ordma, ordma_fh_hash(fh, fhlen));
}

/* MAP: which blocks of the range are cached, and where. The caller must be
 * one who may READ the file; a file of an export without ordma, or a server
 * without a cache, is NFS3ERR_NOTSUPP. */
static void ordma_proc_map(struct nfs_req *req, void *argp, void *resp)
{
	ORDMAMAP3args *a = argp;
	ORDMAMAP3res *r = resp;
	ORDMAMAP3resok *ok = &r->ORDMAMAP3res_u.resok;
	struct ordma_ref refs[ORDMA_MAXREFS];
	struct ordma_cache *c;
	struct be_obj o;
	size_t n;

	r->status = be_resolve(req, &a->file, OSDEP_OPEN_PATH, 0, &o);
	if (r->status != NFS3_OK)
		return;
	if ((c = cache_of(req, &o)) == NULL)
		r->status = NFS3ERR_NOTSUPP;
	else if (!S_ISREG(o.st.st_mode))
		r->status = S_ISDIR(o.st.st_mode) ? NFS3ERR_ISDIR : NFS3ERR_INVAL;
	else if ((r->status = be_read_enter(req, &o)) == NFS3_OK)
		be_cred_leave(req);
	if (r->status != NFS3_OK) {
		be_release(req, &o);
		return;
	}
	n = ordma_cache_lookup(c, ordma_fh_hash(o.fh, o.fhlen), a->offset, a->count, refs,
			       ORDMA_MAXREFS);
	be_release(req, &o);
	ok->block = ordma_cache_block(c);
	ok->slot_size = (uint32)ordma_slot_size(ok->block);
	ok->rkey = req->be->ordma_rkey;
	ok->base = req->be->ordma_base;
	ok->length = req->be->ordma_len;
	ok->refs.refs_len = 0;
	ok->refs.refs_val = n ? calloc(n, sizeof(*ok->refs.refs_val)) : NULL;
	if (n && !ok->refs.refs_val) {
		r->status = NFS3ERR_JUKEBOX;
		return;
	}
	for (size_t i = 0; i < n; i++)
		ok->refs.refs_val[i] = (ordma_ref3){refs[i].offset, ok->base + refs[i].slot_off};
	ok->refs.refs_len = (u_int)n;
}

static void ordma_proc_null(struct nfs_req *req, void *argp, void *resp)
{
	(void)req, (void)argp, (void)resp;
}

const struct nfs_proc ordma_procs[ORDMA_NPROCS] = {
	[ORDMAPROC_NULL] = {&ordma_xdr_procs[ORDMAPROC_NULL], ordma_proc_null, NFS_PROC_INLINE},
	[ORDMAPROC_MAP] = {&ordma_xdr_procs[ORDMAPROC_MAP], ordma_proc_map, NFS_PROC_INLINE},
};
