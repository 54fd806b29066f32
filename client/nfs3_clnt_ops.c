/*
 * nfs3_clnt_ops.c: the procedures on names: LOOKUP, CREATE, MKDIR, SYMLINK,
 * MKNOD, REMOVE, RMDIR, RENAME, LINK, READLINK, and FSSTAT.
 *
 * Calls are retried over new connections with new xids, so a server without a
 * duplicate request cache may run a non-idempotent call twice. When a call
 * that took more than one try fails the way a second run of it would (EEXIST
 * after creating, ENOENT after removing), the first run succeeded: it is
 * reported as success, as NFS clients do.
 */
#include <stdlib.h>
#include <string.h>

#include "client/nfs3_clnt_int.h"

/* The directory-operation arguments for name in dir; -ENAMETOOLONG for a name
 * NFSv3 cannot carry (as the Linux client says before it sends anything). */
static int dirop(const struct nfs3c_fh *dir, const char *name, diropargs3 *d)
{
	if (strlen(name) > NFS3_MAXNAMLEN)
		return -ENAMETOOLONG;
	nfs3c_fh_to_xdr(dir, &d->dir);
	d->name = (char *)name; /* only encoded */
	return 0;
}

/* See nfs3_clnt.h. */
int nfs3c_lookup(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *dir,
		 const char *name, struct nfs3c_fh *out, fattr3 *out_attr)
{
	LOOKUP3args a;
	LOOKUP3res r;
	struct nfs3c_req rq;
	int rc, fetch = 0;

	memset(&r, 0, sizeof(r));
	if ((rc = dirop(dir, name, &a.what)) != 0)
		return rc;
	nfs3c_req_init(&rq, NFSPROC3_LOOKUP, (xdrproc_t)xdr_LOOKUP3args, &a,
		       (xdrproc_t)xdr_LOOKUP3res, &r);
	if ((rc = nfs3c_call(c, cr, &rq)) != 0)
		return rc;
	if (r.status == NFS3_OK) {
		LOOKUP3resok *ok = &r.LOOKUP3res_u.resok;

		nfs3c_attr_post(c, rq.gen, dir, &ok->dir_attributes);
		rc = nfs3c_fh_from_xdr(&ok->object, out);
		if (rc == 0)
			nfs3c_attr_post(c, rq.gen, out, &ok->obj_attributes);
		if (rc == 0 && out_attr) {
			if (ok->obj_attributes.attributes_follow)
				*out_attr = ok->obj_attributes.post_op_attr_u.attributes;
			else
				fetch = 1;
		}
	} else {
		nfs3c_attr_post(c, rq.gen, dir, &r.LOOKUP3res_u.resfail.dir_attributes);
		rc = nfs3c_errno(r.status);
	}
	nfs3c_call_done(c, &rq);
	return fetch ? nfs3c_getattr(c, cr, out, 0, out_attr) : rc;
}

/*
 * The common tail of CREATE, MKDIR, SYMLINK and MKNOD, whose results have the
 * same shape. Returns 0, -errno, or 1 when the handle must be looked up by
 * name, 2 when only the attributes must be fetched (after call_done).
 */
static int made(struct nfs3c *c, const struct nfs3c_fh *dir, nfsstat3 st,
		const struct nfs3c_req *rq, const post_op_fh3 *obj, const post_op_attr *oa,
		const wcc_data *dw, struct nfs3c_fh *out, fattr3 *out_attr)
{
	nfs3c_attr_wcc(c, rq->gen, dir, dw);
	if (st == NFS3ERR_EXIST && rq->tries > 1)
		return 1; /* an earlier try made it */
	if (st != NFS3_OK)
		return nfs3c_errno(st);
	if (!obj->handle_follows || nfs3c_fh_from_xdr(&obj->post_op_fh3_u.handle, out) != 0)
		return 1;
	nfs3c_attr_post(c, rq->gen, out, oa);
	if (!out_attr)
		return 0;
	if (!oa->attributes_follow)
		return 2;
	*out_attr = oa->post_op_attr_u.attributes;
	return 0;
}

/* What made() asked for, once the call's results are freed. */
static int made_finish(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *dir,
		       const char *name, int rc, struct nfs3c_fh *out, fattr3 *out_attr)
{
	if (rc == 1)
		return nfs3c_lookup(c, cr, dir, name, out, out_attr);
	if (rc == 2)
		return nfs3c_getattr(c, cr, out, 0, out_attr);
	return rc;
}

/* A sattr3 that sets only the mode. */
static void sattr_mode(sattr3 *s, uint32_t mode)
{
	memset(s, 0, sizeof(*s));
	s->mode.set_it = TRUE;
	s->mode.set_mode3_u.mode = mode & 07777;
}

/* EXCLUSIVE create leaves the verifier in the times: set mode and times now. */
static int after_exclusive(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *fh,
			   uint32_t mode, fattr3 *out_attr)
{
	sattr3 s;
	fattr3 tmp;

	sattr_mode(&s, mode);
	s.atime.set_it = SET_TO_SERVER_TIME;
	s.mtime.set_it = SET_TO_SERVER_TIME;
	return nfs3c_setattr(c, cr, fh, &s, out_attr ? out_attr : &tmp);
}

/* See nfs3_clnt.h. */
int nfs3c_create(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *dir,
		 const char *name, uint32_t mode, int excl, struct nfs3c_fh *out, fattr3 *out_attr)
{
	CREATE3args a;
	CREATE3res r;
	struct nfs3c_req rq;
	int rc;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	if ((rc = dirop(dir, name, &a.where)) != 0)
		return rc;
	if (excl) {
		uint64_t v = nfs3c_now_ms() ^ ((uint64_t)random() << 20) ^ (uintptr_t)&a;

		a.how.mode = EXCLUSIVE;
		memcpy(a.how.createhow3_u.verf, &v, sizeof(v));
	} else {
		a.how.mode = UNCHECKED;
		sattr_mode(&a.how.createhow3_u.obj_attributes, mode);
	}
	nfs3c_req_init(&rq, NFSPROC3_CREATE, (xdrproc_t)xdr_CREATE3args, &a,
		       (xdrproc_t)xdr_CREATE3res, &r);
	if ((rc = nfs3c_call(c, cr, &rq)) != 0)
		return rc;
	if (r.status == NFS3ERR_EXIST && excl)
		rq.tries = 1; /* EXCLUSIVE is retransmission-safe: EEXIST is real */
	rc = made(c, dir, r.status, &rq, &r.CREATE3res_u.resok.obj,
		  &r.CREATE3res_u.resok.obj_attributes,
		  r.status == NFS3_OK ? &r.CREATE3res_u.resok.dir_wcc
				      : &r.CREATE3res_u.resfail.dir_wcc,
		  out, out_attr);
	nfs3c_call_done(c, &rq);
	rc = made_finish(c, cr, dir, name, rc, out, out_attr);
	if (rc == 0 && excl)
		rc = after_exclusive(c, cr, out, mode, out_attr);
	return rc;
}

/* See nfs3_clnt.h. */
int nfs3c_mkdir(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *dir,
		const char *name, uint32_t mode, struct nfs3c_fh *out, fattr3 *out_attr)
{
	MKDIR3args a;
	MKDIR3res r;
	struct nfs3c_req rq;
	int rc;

	memset(&r, 0, sizeof(r));
	if ((rc = dirop(dir, name, &a.where)) != 0)
		return rc;
	sattr_mode(&a.attributes, mode);
	nfs3c_req_init(&rq, NFSPROC3_MKDIR, (xdrproc_t)xdr_MKDIR3args, &a, (xdrproc_t)xdr_MKDIR3res,
		       &r);
	if ((rc = nfs3c_call(c, cr, &rq)) != 0)
		return rc;
	rc = made(c, dir, r.status, &rq, &r.MKDIR3res_u.resok.obj,
		  &r.MKDIR3res_u.resok.obj_attributes,
		  r.status == NFS3_OK ? &r.MKDIR3res_u.resok.dir_wcc
				      : &r.MKDIR3res_u.resfail.dir_wcc,
		  out, out_attr);
	nfs3c_call_done(c, &rq);
	return made_finish(c, cr, dir, name, rc, out, out_attr);
}

/* See nfs3_clnt.h. */
int nfs3c_symlink(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *dir,
		  const char *name, const char *target, struct nfs3c_fh *out, fattr3 *out_attr)
{
	SYMLINK3args a;
	SYMLINK3res r;
	struct nfs3c_req rq;
	int rc;

	memset(&r, 0, sizeof(r));
	if ((rc = dirop(dir, name, &a.where)) != 0)
		return rc;
	sattr_mode(&a.symlink.symlink_attributes, 0777);
	if (strlen(target) > NFS3_MAXPATHLEN)
		return -ENAMETOOLONG;
	a.symlink.symlink_data = (char *)target;
	nfs3c_req_init(&rq, NFSPROC3_SYMLINK, (xdrproc_t)xdr_SYMLINK3args, &a,
		       (xdrproc_t)xdr_SYMLINK3res, &r);
	if ((rc = nfs3c_call(c, cr, &rq)) != 0)
		return rc;
	rc = made(c, dir, r.status, &rq, &r.SYMLINK3res_u.resok.obj,
		  &r.SYMLINK3res_u.resok.obj_attributes,
		  r.status == NFS3_OK ? &r.SYMLINK3res_u.resok.dir_wcc
				      : &r.SYMLINK3res_u.resfail.dir_wcc,
		  out, out_attr);
	nfs3c_call_done(c, &rq);
	return made_finish(c, cr, dir, name, rc, out, out_attr);
}

/* See nfs3_clnt.h. */
int nfs3c_mknod(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *dir,
		const char *name, ftype3 type, uint32_t mode, uint32_t major, uint32_t minor,
		struct nfs3c_fh *out, fattr3 *out_attr)
{
	MKNOD3args a;
	MKNOD3res r;
	struct nfs3c_req rq;
	int rc;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	if ((rc = dirop(dir, name, &a.where)) != 0)
		return rc;
	a.what.type = type;
	if (type == NF3CHR || type == NF3BLK) {
		sattr_mode(&a.what.mknoddata3_u.device.dev_attributes, mode);
		a.what.mknoddata3_u.device.spec.specdata1 = major;
		a.what.mknoddata3_u.device.spec.specdata2 = minor;
	} else if (type == NF3FIFO || type == NF3SOCK) {
		sattr_mode(&a.what.mknoddata3_u.pipe_attributes, mode);
	} else {
		return -EINVAL;
	}
	nfs3c_req_init(&rq, NFSPROC3_MKNOD, (xdrproc_t)xdr_MKNOD3args, &a, (xdrproc_t)xdr_MKNOD3res,
		       &r);
	if ((rc = nfs3c_call(c, cr, &rq)) != 0)
		return rc;
	rc = made(c, dir, r.status, &rq, &r.MKNOD3res_u.resok.obj,
		  &r.MKNOD3res_u.resok.obj_attributes,
		  r.status == NFS3_OK ? &r.MKNOD3res_u.resok.dir_wcc
				      : &r.MKNOD3res_u.resfail.dir_wcc,
		  out, out_attr);
	nfs3c_call_done(c, &rq);
	return made_finish(c, cr, dir, name, rc, out, out_attr);
}

/* The handle of name in dir, if it exists, so its cached attributes (its link
 * count changes) can be dropped after a REMOVE or RENAME over it. */
static int victim(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *dir,
		  const char *name, struct nfs3c_fh *out)
{
	if (c->p.noac || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return 0;
	return nfs3c_lookup(c, cr, dir, name, out, NULL) == 0;
}

/* REMOVE (rmdir 0) or RMDIR (rmdir 1). */
static int remove_common(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *dir,
			 const char *name, int rmdir)
{
	REMOVE3args a; /* RMDIR3args has the same shape */
	REMOVE3res r;  /* and so has RMDIR3res */
	struct nfs3c_req rq;
	struct nfs3c_fh v;
	int rc, have_v = victim(c, cr, dir, name, &v);

	memset(&r, 0, sizeof(r));
	if ((rc = dirop(dir, name, &a.object)) != 0)
		return rc;
	nfs3c_req_init(&rq, rmdir ? NFSPROC3_RMDIR : NFSPROC3_REMOVE,
		       rmdir ? (xdrproc_t)xdr_RMDIR3args : (xdrproc_t)xdr_REMOVE3args, &a,
		       rmdir ? (xdrproc_t)xdr_RMDIR3res : (xdrproc_t)xdr_REMOVE3res, &r);
	if ((rc = nfs3c_call(c, cr, &rq)) != 0)
		return rc;
	nfs3c_attr_wcc(c, rq.gen, dir, &r.REMOVE3res_u.resok.dir_wcc);
	if (r.status == NFS3ERR_NOENT && rq.tries > 1)
		r.status = NFS3_OK; /* an earlier try removed it */
	rc = nfs3c_errno(r.status);
	nfs3c_call_done(c, &rq);
	if (have_v)
		nfs3c_attr_forget(c, &v);
	return rc;
}

/* See nfs3_clnt.h. */
int nfs3c_remove(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *dir,
		 const char *name)
{
	return remove_common(c, cr, dir, name, 0);
}

/* See nfs3_clnt.h. */
int nfs3c_rmdir(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *dir,
		const char *name)
{
	return remove_common(c, cr, dir, name, 1);
}

/* See nfs3_clnt.h. */
int nfs3c_rename(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *fdir,
		 const char *fname, const struct nfs3c_fh *tdir, const char *tname)
{
	RENAME3args a;
	RENAME3res r;
	struct nfs3c_req rq;
	struct nfs3c_fh v;
	int rc, have_v = victim(c, cr, tdir, tname, &v);

	memset(&r, 0, sizeof(r));
	if ((rc = dirop(fdir, fname, &a.from)) != 0)
		return rc;
	if ((rc = dirop(tdir, tname, &a.to)) != 0)
		return rc;
	nfs3c_req_init(&rq, NFSPROC3_RENAME, (xdrproc_t)xdr_RENAME3args, &a,
		       (xdrproc_t)xdr_RENAME3res, &r);
	if ((rc = nfs3c_call(c, cr, &rq)) != 0)
		return rc;
	nfs3c_attr_wcc(c, rq.gen, fdir, &r.RENAME3res_u.resok.fromdir_wcc);
	nfs3c_attr_wcc(c, rq.gen, tdir, &r.RENAME3res_u.resok.todir_wcc);
	if (r.status == NFS3ERR_NOENT && rq.tries > 1)
		r.status = NFS3_OK; /* an earlier try moved it */
	rc = nfs3c_errno(r.status);
	nfs3c_call_done(c, &rq);
	if (have_v)
		nfs3c_attr_forget(c, &v);
	return rc;
}

/* See nfs3_clnt.h. */
int nfs3c_link(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *fh,
	       const struct nfs3c_fh *dir, const char *name, fattr3 *out_attr)
{
	LINK3args a;
	LINK3res r;
	struct nfs3c_req rq;
	int rc;

	memset(&r, 0, sizeof(r));
	nfs3c_fh_to_xdr(fh, &a.file);
	if ((rc = dirop(dir, name, &a.link)) != 0)
		return rc;
	nfs3c_req_init(&rq, NFSPROC3_LINK, (xdrproc_t)xdr_LINK3args, &a, (xdrproc_t)xdr_LINK3res,
		       &r);
	if ((rc = nfs3c_call(c, cr, &rq)) != 0)
		return rc;
	nfs3c_attr_post(c, rq.gen, fh, &r.LINK3res_u.resok.file_attributes);
	nfs3c_attr_wcc(c, rq.gen, dir, &r.LINK3res_u.resok.linkdir_wcc);
	if (r.status == NFS3ERR_EXIST && rq.tries > 1)
		r.status = NFS3_OK; /* an earlier try linked it */
	rc = nfs3c_errno(r.status);
	nfs3c_call_done(c, &rq);
	if (rc == 0 && out_attr)
		rc = nfs3c_getattr(c, cr, fh, 0, out_attr);
	return rc;
}

/* See nfs3_clnt.h. */
int nfs3c_readlink(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *fh, char *buf,
		   size_t cap)
{
	READLINK3args a;
	READLINK3res r;
	struct nfs3c_req rq;
	int rc;

	memset(&r, 0, sizeof(r));
	nfs3c_fh_to_xdr(fh, &a.symlink);
	nfs3c_req_init(&rq, NFSPROC3_READLINK, (xdrproc_t)xdr_READLINK3args, &a,
		       (xdrproc_t)xdr_READLINK3res, &r);
	rq.call.reply_hint = NFS3_MAXPATHLEN + 512;
	if ((rc = nfs3c_call(c, cr, &rq)) != 0)
		return rc;
	nfs3c_attr_post(c, rq.gen, fh, &r.READLINK3res_u.resok.symlink_attributes);
	rc = nfs3c_errno(r.status);
	if (rc == 0) {
		const char *t = r.READLINK3res_u.resok.data;

		if (!t || strlen(t) >= cap)
			rc = t ? -ENAMETOOLONG : -EIO;
		else
			memcpy(buf, t, strlen(t) + 1);
	}
	nfs3c_call_done(c, &rq);
	return rc;
}

/* See nfs3_clnt.h. */
int nfs3c_null(struct nfs3c *c)
{
	nfsstat3 none = NFS3_OK; /* NULL has no result; nfs3c_call reads a status */
	struct nfs3c_req rq;
	int rc;

	nfs3c_req_init(&rq, NFSPROC3_NULL, (xdrproc_t)xdr_void, NULL, (xdrproc_t)xdr_void, &none);
	rc = nfs3c_call(c, NULL, &rq);
	nfs3c_call_done(c, &rq);
	return rc;
}

/* See nfs3_clnt.h. */
int nfs3c_fsstat(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *fh,
		 FSSTAT3resok *out)
{
	FSSTAT3args a;
	FSSTAT3res r;
	struct nfs3c_req rq;
	int rc;

	memset(&r, 0, sizeof(r));
	nfs3c_fh_to_xdr(fh, &a.fsroot);
	nfs3c_req_init(&rq, NFSPROC3_FSSTAT, (xdrproc_t)xdr_FSSTAT3args, &a,
		       (xdrproc_t)xdr_FSSTAT3res, &r);
	if ((rc = nfs3c_call(c, cr, &rq)) != 0)
		return rc;
	rc = nfs3c_errno(r.status);
	if (rc == 0) {
		*out = r.FSSTAT3res_u.resok;
		nfs3c_attr_post(c, rq.gen, fh, &out->obj_attributes);
	}
	nfs3c_call_done(c, &rq);
	return rc;
}
