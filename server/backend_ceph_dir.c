/*
 * backend_ceph_dir.c: the CephFS backend's namespace procedures (CREATE,
 * MKDIR, SYMLINK, MKNOD, REMOVE, RMDIR, RENAME, LINK) and listings (READDIR,
 * READDIRPLUS). Each runs as the caller's UserPerm, so the cluster decides
 * who may change a directory.
 *
 * Cookies are CephFS's own directory offsets (ceph_telldir after each
 * entry), which stay meaningful while the directory changes and on every
 * head; the cookie verifier is always zero, as in the POSIX backend.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/log.h"
#include "server/backend_ceph.h"

/* Start a call on where->name: the directory (ROFS on ro exports), the name. */
static nfsstat3 dirop_begin(struct nfs_req *req, const diropargs3 *where, struct ce_obj *d,
			    wcc_data *wcc)
{
	nfsstat3 st = ce_dir_resolve(req, &where->dir, BE_MODIFY, d);

	if (st != NFS3_OK)
		return st;
	if ((st = be_name_check(where->name)) != NFS3_OK) {
		ce_wcc(d, wcc);
		ce_release(d);
	}
	return st;
}

/* End a dirop: the directory's wcc_data, its reference given back. */
static void dirop_end(struct ce_obj *d, wcc_data *wcc)
{
	ce_wcc(d, wcc);
	ce_release(d);
}

/* The result of a call that made in (attributes stx) in d: apply the rest of
 * sa (what creating did not set) as the caller, then handle and attributes.
 * Drops the reference on in. */
static nfsstat3 made_object(struct ce_obj *d, Inode *in, struct ceph_statx *stx, const sattr3 *sa,
			    post_op_fh3 *fh, post_op_attr *attr)
{
	struct ceph_statx set;
	struct stat st;
	nfsstat3 s = NFS3_OK;
	int mask = 0, e;

	if (sa && (s = ce_sattr(sa, &set, &mask)) == NFS3_OK) {
		mask &= ~CEPH_SETATTR_MODE; /* given at creation */
		if (S_ISLNK(stx->stx_mode))
			mask &= ~CEPH_SETATTR_SIZE;
		if (mask && (e = ceph_ll_setattr(d->ce->cm, in, &set, mask, d->perm)) < 0)
			s = nfs3_errno_to_stat(-e);
	}
	if (s == NFS3_OK && mask)
		ceph_ll_getattr(d->ce->cm, in, stx, CE_WANT | CEPH_STATX_INO, 0, d->perm);
	if (s == NFS3_OK) {
		fh->handle_follows = ce_fh_make(d->exp, stx, &fh->post_op_fh3_u.handle) == NFS3_OK;
		ce_stat_from(stx, &st);
		be_post_attr_st(d->exp, &st, attr);
	}
	ceph_ll_put(d->ce->cm, in);
	return s;
}

/* The mode a sattr3 asks for, or def. */
static mode_t sattr_mode(const sattr3 *sa, mode_t def)
{
	return sa && sa->mode.set_it ? sa->mode.set_mode3_u.mode & 07777 : def;
}

/* The EXCLUSIVE verifier as the times it is stored in (atime, mtime), as the
 * POSIX backend keeps it. */
static void verf_times(const createverf3 v, struct ceph_statx *stx)
{
	const unsigned char *p = (const unsigned char *)v;

	memset(stx, 0, sizeof(*stx));
	stx->stx_atime.tv_sec = (time_t)(((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
					  (uint32_t)p[2] << 8 | p[3]) &
					 0x7fffffff);
	stx->stx_mtime.tv_sec = (time_t)(((uint32_t)p[4] << 24 | (uint32_t)p[5] << 16 |
					  (uint32_t)p[6] << 8 | p[7]) &
					 0x7fffffff);
}

/* An existing name for CREATE: UNCHECKED applies only the size; EXCLUSIVE
 * succeeds when the stored verifier is the call's (a retransmission). */
static nfsstat3 create_existing(struct ce_obj *d, const CREATE3args *a, CREATE3resok *ok)
{
	const sattr3 *sa = &a->how.createhow3_u.obj_attributes;
	struct ceph_statx stx, v;
	Inode *in = NULL;
	sattr3 size_only;
	int e = ceph_ll_lookup(d->ce->cm, d->in, a->where.name, &in, &stx, CE_WANT | CEPH_STATX_INO,
			       0, d->perm);

	if (e < 0)
		return nfs3_errno_to_stat(-e);
	if (!S_ISREG(stx.stx_mode)) {
		ceph_ll_put(d->ce->cm, in);
		return NFS3ERR_EXIST;
	}
	if (a->how.mode == EXCLUSIVE) {
		verf_times(a->how.createhow3_u.verf, &v);
		if (stx.stx_atime.tv_sec != v.stx_atime.tv_sec ||
		    stx.stx_mtime.tv_sec != v.stx_mtime.tv_sec) {
			ceph_ll_put(d->ce->cm, in);
			return NFS3ERR_EXIST;
		}
		sa = NULL;
	} else {
		memset(&size_only, 0, sizeof(size_only));
		size_only.size = sa->size;
		sa = &size_only;
	}
	return made_object(d, in, &stx, sa, &ok->obj, &ok->obj_attributes);
}

/* CREATE body: a new regular file, or what the mode says of an existing one. */
static nfsstat3 create_file(struct ce_obj *d, const CREATE3args *a, CREATE3resok *ok)
{
	const sattr3 *sa = a->how.mode == EXCLUSIVE ? NULL : &a->how.createhow3_u.obj_attributes;
	struct ceph_statx stx, v;
	struct Fh *fh = NULL;
	Inode *in = NULL;
	int e;

	if (a->how.mode != UNCHECKED && a->how.mode != GUARDED && a->how.mode != EXCLUSIVE)
		return NFS3ERR_INVAL;
	e = ceph_ll_create(d->ce->cm, d->in, a->where.name, sattr_mode(sa, 0644),
			   O_CREAT | O_EXCL | O_WRONLY, &in, &fh, &stx, CE_WANT | CEPH_STATX_INO, 0,
			   d->perm);
	if (e == -EEXIST && a->how.mode != GUARDED)
		return create_existing(d, a, ok);
	if (e < 0)
		return nfs3_errno_to_stat(-e);
	ceph_ll_close(d->ce->cm, fh);
	if (a->how.mode == EXCLUSIVE) {
		verf_times(a->how.createhow3_u.verf, &v);
		e = ceph_ll_setattr(d->ce->cm, in, &v, CEPH_SETATTR_ATIME | CEPH_SETATTR_MTIME,
				    d->perm);
		if (e == 0)
			e = ceph_ll_getattr(d->ce->cm, in, &stx, CE_WANT | CEPH_STATX_INO, 0,
					    d->perm);
		if (e < 0) {
			ceph_ll_put(d->ce->cm, in);
			return nfs3_errno_to_stat(-e);
		}
	}
	return made_object(d, in, &stx, sa, &ok->obj, &ok->obj_attributes);
}

/* See backend_ceph.h. CREATE: a regular file, UNCHECKED, GUARDED or EXCLUSIVE. */
void ce_proc_create(struct nfs_req *req, void *argp, void *resp)
{
	CREATE3args *a = argp;
	CREATE3res *r = resp;
	CREATE3resok *ok = &r->CREATE3res_u.resok;
	struct ce_obj d;

	if ((r->status = dirop_begin(req, &a->where, &d, &r->CREATE3res_u.resfail.dir_wcc)) !=
	    NFS3_OK)
		return;
	r->status = create_file(&d, a, ok);
	dirop_end(&d, r->status == NFS3_OK ? &ok->dir_wcc : &r->CREATE3res_u.resfail.dir_wcc);
}

/* See backend_ceph.h. MKDIR: a directory with the given attributes. */
void ce_proc_mkdir(struct nfs_req *req, void *argp, void *resp)
{
	MKDIR3args *a = argp;
	MKDIR3res *r = resp;
	MKDIR3resok *ok = &r->MKDIR3res_u.resok;
	struct ceph_statx stx;
	struct ce_obj d;
	Inode *in = NULL;
	int e;

	if ((r->status = dirop_begin(req, &a->where, &d, &r->MKDIR3res_u.resfail.dir_wcc)) !=
	    NFS3_OK)
		return;
	e = ceph_ll_mkdir(d.ce->cm, d.in, a->where.name, sattr_mode(&a->attributes, 0755), &in,
			  &stx, CE_WANT | CEPH_STATX_INO, 0, d.perm);
	if (e < 0)
		r->status = nfs3_errno_to_stat(-e);
	else
		r->status =
			made_object(&d, in, &stx, &a->attributes, &ok->obj, &ok->obj_attributes);
	dirop_end(&d, r->status == NFS3_OK ? &ok->dir_wcc : &r->MKDIR3res_u.resfail.dir_wcc);
}

/* See backend_ceph.h. SYMLINK: a symlink to symlink_data (stored as given). */
void ce_proc_symlink(struct nfs_req *req, void *argp, void *resp)
{
	SYMLINK3args *a = argp;
	SYMLINK3res *r = resp;
	SYMLINK3resok *ok = &r->SYMLINK3res_u.resok;
	const char *target = a->symlink.symlink_data;
	struct ceph_statx stx;
	struct ce_obj d;
	Inode *in = NULL;
	int e;

	if ((r->status = dirop_begin(req, &a->where, &d, &r->SYMLINK3res_u.resfail.dir_wcc)) !=
	    NFS3_OK)
		return;
	if (target == NULL || target[0] == '\0')
		r->status = NFS3ERR_INVAL;
	else if ((e = ceph_ll_symlink(d.ce->cm, d.in, a->where.name, target, &in, &stx,
				      CE_WANT | CEPH_STATX_INO, 0, d.perm)) < 0)
		r->status = nfs3_errno_to_stat(-e);
	else
		r->status = made_object(&d, in, &stx, &a->symlink.symlink_attributes, &ok->obj,
					&ok->obj_attributes);
	dirop_end(&d, r->status == NFS3_OK ? &ok->dir_wcc : &r->SYMLINK3res_u.resfail.dir_wcc);
}

/* See backend_ceph.h. MKNOD: a device (root only: the cluster does not
 * check it), socket or FIFO. */
void ce_proc_mknod(struct nfs_req *req, void *argp, void *resp)
{
	MKNOD3args *a = argp;
	MKNOD3res *r = resp;
	MKNOD3resok *ok = &r->MKNOD3res_u.resok;
	const sattr3 *sa = NULL;
	struct ceph_statx stx;
	struct ce_obj d;
	Inode *in = NULL;
	mode_t mode;
	dev_t dev;
	int e;

	if ((r->status = dirop_begin(req, &a->where, &d, &r->MKNOD3res_u.resfail.dir_wcc)) !=
	    NFS3_OK)
		return;
	if ((r->status = be_mknod_args(&a->what, &mode, &dev, &sa)) == NFS3_OK &&
	    (r->status = be_mknod_allowed(d.uid, mode)) == NFS3_OK) {
		e = ceph_ll_mknod(d.ce->cm, d.in, a->where.name, mode | sattr_mode(sa, 0644), dev,
				  &in, &stx, CE_WANT | CEPH_STATX_INO, 0, d.perm);
		r->status = e < 0 ? nfs3_errno_to_stat(-e)
				  : made_object(&d, in, &stx, sa, &ok->obj, &ok->obj_attributes);
	}
	dirop_end(&d, r->status == NFS3_OK ? &ok->dir_wcc : &r->MKNOD3res_u.resfail.dir_wcc);
}

/* See backend_ceph.h. REMOVE: unlink a non-directory. */
void ce_proc_remove(struct nfs_req *req, void *argp, void *resp)
{
	REMOVE3args *a = argp;
	REMOVE3res *r = resp;
	struct ceph_statx was;
	struct ce_obj d;
	Inode *in;
	int e;

	if ((r->status = dirop_begin(req, &a->object, &d, &r->REMOVE3res_u.resok.dir_wcc)) !=
	    NFS3_OK)
		return;
	ce_files_lookup(&d, a->object.name, &in, &was);
	if ((e = ceph_ll_unlink(d.ce->cm, d.in, a->object.name, d.perm)) < 0)
		r->status = nfs3_errno_to_stat(-e);
	ce_files_forget(d.ce, in, &was, e == 0);
	dirop_end(&d, &r->REMOVE3res_u.resok.dir_wcc);
}

/* See backend_ceph.h. RMDIR: remove an empty directory ("." is INVAL). */
void ce_proc_rmdir(struct nfs_req *req, void *argp, void *resp)
{
	RMDIR3args *a = argp;
	RMDIR3res *r = resp;
	struct ce_obj d;
	int e;

	if ((r->status = dirop_begin(req, &a->object, &d, &r->RMDIR3res_u.resok.dir_wcc)) !=
	    NFS3_OK)
		return;
	if (strcmp(a->object.name, ".") == 0)
		r->status = NFS3ERR_INVAL;
	else if (strcmp(a->object.name, "..") == 0)
		r->status = NFS3ERR_NOTEMPTY;
	else if ((e = ceph_ll_rmdir(d.ce->cm, d.in, a->object.name, d.perm)) < 0)
		r->status = e == -EEXIST ? NFS3ERR_NOTEMPTY : nfs3_errno_to_stat(-e);
	dirop_end(&d, &r->RMDIR3res_u.resok.dir_wcc);
}

/* Resolve two handles of one call (RENAME, LINK): both on one export, else
 * XDEV. On NFS3_OK both must be released. */
static nfsstat3 resolve_pair(struct nfs_req *req, const nfs_fh3 *fa, const nfs_fh3 *fb,
			     struct ce_obj *a, struct ce_obj *b, int a_is_dir)
{
	nfsstat3 st = a_is_dir ? ce_dir_resolve(req, fa, BE_MODIFY, a)
			       : ce_resolve(req, fa, BE_MODIFY, a);

	if (st != NFS3_OK)
		return st;
	st = ce_dir_resolve(req, fb, BE_MODIFY, b);
	if (st == NFS3_OK && a->exp != b->exp) {
		ce_release(b);
		st = NFS3ERR_XDEV;
	}
	if (st != NFS3_OK)
		ce_release(a);
	return st;
}

/* See backend_ceph.h. RENAME: from.dir/from.name -> to.dir/to.name. */
void ce_proc_rename(struct nfs_req *req, void *argp, void *resp)
{
	RENAME3args *a = argp;
	RENAME3res *r = resp;
	RENAME3resok *ok = &r->RENAME3res_u.resok;
	struct ceph_statx was;
	struct ce_obj from, to;
	Inode *in = NULL;
	int e = -1;

	if ((r->status = resolve_pair(req, &a->from.dir, &a->to.dir, &from, &to, 1)) != NFS3_OK)
		return;
	if ((r->status = be_name_check(a->from.name)) == NFS3_OK &&
	    (r->status = be_name_check(a->to.name)) == NFS3_OK) {
		/* a file renamed over goes */
		ce_files_lookup(&to, a->to.name, &in, &was);
		e = ceph_ll_rename(from.ce->cm, from.in, a->from.name, to.in, a->to.name,
				   from.perm);
		if (e < 0)
			r->status = nfs3_errno_to_stat(-e);
		ce_files_forget(to.ce, in, &was, e == 0);
	}
	ce_wcc(&from, &ok->fromdir_wcc);
	ce_wcc(&to, &ok->todir_wcc);
	ce_release(&to);
	ce_release(&from);
}

/* See backend_ceph.h. LINK: a new name link.dir/link.name for file. */
void ce_proc_link(struct nfs_req *req, void *argp, void *resp)
{
	LINK3args *a = argp;
	LINK3res *r = resp;
	LINK3resok *ok = &r->LINK3res_u.resok;
	struct ce_obj file, dir;
	int e;

	if ((r->status = resolve_pair(req, &a->file, &a->link.dir, &file, &dir, 0)) != NFS3_OK)
		return;
	if (S_ISDIR(file.st.st_mode))
		r->status = NFS3ERR_ISDIR;
	else if ((r->status = be_name_check(a->link.name)) == NFS3_OK &&
		 (e = ceph_ll_link(file.ce->cm, file.in, dir.in, a->link.name, file.perm)) < 0)
		r->status = nfs3_errno_to_stat(-e);
	ce_post_attr(&file, &ok->file_attributes);
	ce_wcc(&dir, &ok->linkdir_wcc);
	ce_release(&dir);
	ce_release(&file);
}

/* A listing in progress. */
struct rd_walk {
	struct ceph_dir_result *dir;
	struct ce_obj *d;
};

/* Open the directory as the caller at cookie (its verifier must be zero).
 * The caller must be allowed to read and search it, as on POSIX exports
 * (rd_open in nfs3_proc_readdir.c): the cluster's opendir asks for read
 * alone, and the entries' handles would let a caller past a directory it
 * may not search. */
static nfsstat3 rd_open(struct ce_obj *d, cookie3 cookie, const cookieverf3 verf, struct rd_walk *w)
{
	static const cookieverf3 zero;
	nfsstat3 st;
	int e;

	if (cookie != 0 && (memcmp(verf, zero, sizeof(zero)) != 0 || cookie > INT64_MAX))
		return NFS3ERR_BAD_COOKIE;
	if ((st = ce_check(d, R_OK | X_OK)) != NFS3_OK)
		return st;
	w->d = d;
	if ((e = ceph_ll_opendir(d->ce->cm, d->in, &w->dir, d->perm)) < 0)
		return nfs3_errno_to_stat(-e);
	if (cookie != 0)
		ceph_seekdir(d->ce->cm, w->dir, (int64_t)cookie);
	return NFS3_OK;
}

/* The next entry (with attributes and an inode reference if in is not NULL)
 * and the cookie after it: 1, 0 at the end, or -errno. */
static int rd_next(struct rd_walk *w, struct dirent *de, struct ceph_statx *stx, Inode **in,
		   cookie3 *cookie)
{
	int r = in ? ceph_readdirplus_r(w->d->ce->cm, w->dir, de, stx, CE_WANT | CEPH_STATX_INO, 0,
					in)
		   : ceph_readdir_r(w->d->ce->cm, w->dir, de);

	if (r > 0)
		*cookie = (cookie3)ceph_telldir(w->d->ce->cm, w->dir);
	return r;
}

/* The attributes entry de of d shows, stx being what readdirplus gave: stx,
 * or for ".." what ce_dotdot gives where it answers (in *up); NULL where
 * that fails. */
static const struct ceph_statx *entry_stx(const struct ce_obj *d, const struct dirent *de,
					  const struct ceph_statx *stx, struct ceph_statx *up)
{
	int r;

	if (strcmp(de->d_name, "..") != 0 || (r = ce_dotdot(d, up)) == 0)
		return stx;
	return r < 0 ? NULL : up;
}

/* The fileid of entry de of d: d_ino in a live directory, whose entries are
 * live too; elsewhere (a .snap lists snapshots, a snapshot's ".." may be
 * its .snap) from the entry's own attributes, which need its inode. */
static int entry_fileid(struct rd_walk *w, struct dirent *de, cookie3 *cookie, uint64_t *fileid)
{
	struct ceph_statx stx, up;
	const struct ceph_statx *as;
	Inode *in = NULL;
	int r;

	if (w->d->stx.stx_dev == CEPH_NOSNAP) {
		if ((r = rd_next(w, de, NULL, NULL, cookie)) > 0)
			*fileid = de->d_ino;
		return r;
	}
	if ((r = rd_next(w, de, &stx, &in, cookie)) <= 0)
		return r;
	if (in)
		ceph_ll_put(w->d->ce->cm, in);
	as = entry_stx(w->d, de, &stx, &up);
	*fileid = ce_fileid(as ? as : &w->d->stx);
	return r;
}

/* READDIR body: entries that fit count. */
static nfsstat3 readdir_fill(struct nfs_req *req, struct ce_obj *d, const READDIR3args *a,
			     READDIR3resok *ok)
{
	size_t count = a->count < req->be->max_io ? a->count : req->be->max_io;
	size_t used = RD_BASE, n = 0;
	entry3 **tail = &ok->reply.entries;
	cookie3 pos = a->cookie, next = 0;
	struct rd_walk w;
	struct dirent de;
	uint64_t fileid = 0;
	nfsstat3 st;
	int r = 0;

	if ((st = rd_open(d, a->cookie, a->cookieverf, &w)) != NFS3_OK)
		return st;
	while (n < NFS3_READDIR_MAX_ENTRIES && (r = entry_fileid(&w, &de, &next, &fileid)) > 0) {
		size_t sz = RD_ENTRY(strlen(de.d_name));

		if (used + sz > count) {
			ceph_seekdir(d->ce->cm, w.dir, (int64_t)pos);
			break;
		}
		if ((*tail = calloc(1, sizeof(**tail))) == NULL ||
		    ((*tail)->name = strdup(de.d_name)) == NULL) {
			r = -ENOMEM;
			break;
		}
		(*tail)->fileid = fileid;
		(*tail)->cookie = next;
		tail = &(*tail)->nextentry;
		used += sz;
		pos = next;
		n++;
	}
	ok->reply.eof = r == 0;
	ceph_ll_releasedir(d->ce->cm, w.dir);
	if (r < 0)
		return nfs3_errno_to_stat(-r);
	return n == 0 && !ok->reply.eof ? NFS3ERR_TOOSMALL : NFS3_OK;
}

/* See backend_ceph.h. READDIR: names and fileids from cookie on. */
void ce_proc_readdir(struct nfs_req *req, void *argp, void *resp)
{
	READDIR3args *a = argp;
	READDIR3res *r = resp;
	READDIR3resok *ok = &r->READDIR3res_u.resok;
	struct ce_obj d;

	if ((r->status = ce_dir_resolve(req, &a->dir, 0, &d)) != NFS3_OK)
		return;
	r->status = readdir_fill(req, &d, a, ok);
	if (r->status != NFS3_OK) {
		READDIR3res all = {.status = NFS3_OK};

		all.READDIR3res_u.resok.reply.entries = ok->reply.entries;
		nfs3_readdir_free(&all);
		ok->reply.entries = NULL;
	}
	ce_post_attr(&d, &ok->dir_attributes);
	ce_release(&d);
}

/* A READDIRPLUS entry with its handle and attributes; ".." never leads out
 * of the export (ce_dotdot: without a handle where that fails). */
static entryplus3 *entryplus_new(struct ce_obj *d, const struct dirent *de,
				 const struct ceph_statx *stx, cookie3 cookie)
{
	entryplus3 *e = calloc(1, sizeof(*e));
	const struct ceph_statx *as;
	struct ceph_statx up;
	struct stat st;

	if (e == NULL || (e->name = strdup(de->d_name)) == NULL) {
		free(e);
		return NULL;
	}
	e->cookie = cookie;
	if ((as = entry_stx(d, de, stx, &up)) == NULL) {
		e->fileid = ce_fileid(&d->stx);
		return e; /* neither attributes nor handle */
	}
	e->fileid = ce_fileid(as);
	ce_stat_from(as, &st);
	be_post_attr_st(d->exp, &st, &e->name_attributes);
	e->name_handle.handle_follows =
		ce_fh_make(d->exp, as, &e->name_handle.post_op_fh3_u.handle) == NFS3_OK;
	return e;
}

/* Whether an entry with this name still fits dircount and maxcount; the
 * first always may, as far as dircount goes. */
static int rdp_fits(size_t *dirused, size_t *maxused, const READDIRPLUS3args *a, size_t maxcount,
		    size_t namelen, size_t n)
{
	size_t dsz = RD_ENTRY(namelen) - 4, msz = RD_ENTRY(namelen) + RD_PLUS_EXTRA;

	if (*maxused + msz > maxcount || (n > 0 && *dirused + dsz > a->dircount))
		return 0;
	*dirused += dsz;
	*maxused += msz;
	return 1;
}

/* READDIRPLUS body. */
static nfsstat3 readdirplus_fill(struct nfs_req *req, struct ce_obj *d, const READDIRPLUS3args *a,
				 READDIRPLUS3resok *ok)
{
	size_t maxcount = a->maxcount < req->be->max_io ? a->maxcount : req->be->max_io;
	size_t dirused = 0, maxused = RD_BASE, n = 0;
	entryplus3 **tail = &ok->reply.entries;
	cookie3 pos = a->cookie, next = 0;
	struct ceph_statx stx;
	struct rd_walk w;
	struct dirent de;
	Inode *in = NULL;
	nfsstat3 st;
	int r = 0;

	if ((st = rd_open(d, a->cookie, a->cookieverf, &w)) != NFS3_OK)
		return st;
	while (n < NFS3_READDIR_MAX_ENTRIES && (r = rd_next(&w, &de, &stx, &in, &next)) > 0) {
		if (in)
			ceph_ll_put(d->ce->cm, in);
		in = NULL;
		if (!rdp_fits(&dirused, &maxused, a, maxcount, strlen(de.d_name), n)) {
			ceph_seekdir(d->ce->cm, w.dir, (int64_t)pos);
			break;
		}
		if ((*tail = entryplus_new(d, &de, &stx, next)) == NULL) {
			r = -ENOMEM;
			break;
		}
		tail = &(*tail)->nextentry;
		pos = next;
		n++;
	}
	ok->reply.eof = r == 0;
	ceph_ll_releasedir(d->ce->cm, w.dir);
	if (r < 0)
		return nfs3_errno_to_stat(-r);
	return n == 0 && !ok->reply.eof ? NFS3ERR_TOOSMALL : NFS3_OK;
}

/* See backend_ceph.h. READDIRPLUS: entries with attributes and handles. */
void ce_proc_readdirplus(struct nfs_req *req, void *argp, void *resp)
{
	READDIRPLUS3args *a = argp;
	READDIRPLUS3res *r = resp;
	READDIRPLUS3resok *ok = &r->READDIRPLUS3res_u.resok;
	struct ce_obj d;

	if ((r->status = ce_dir_resolve(req, &a->dir, 0, &d)) != NFS3_OK)
		return;
	r->status = readdirplus_fill(req, &d, a, ok);
	if (r->status != NFS3_OK) {
		READDIRPLUS3res all = {.status = NFS3_OK};

		all.READDIRPLUS3res_u.resok.reply.entries = ok->reply.entries;
		nfs3_readdirplus_free(&all);
		ok->reply.entries = NULL;
	}
	ce_post_attr(&d, &ok->dir_attributes);
	ce_release(&d);
}
