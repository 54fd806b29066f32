/*
 * backend_ceph.c: the CephFS backend (be_ceph_ops): an export's mount of the
 * cluster through libcephfs's low-level calls (as NFS-Ganesha's FSAL_CEPH
 * uses them), handles, attributes, and the procedures on one object
 * (GETATTR, SETATTR, LOOKUP, ACCESS, READLINK, READ, WRITE, COMMIT, FSSTAT,
 * FSINFO, PATHCONF). The others are in backend_ceph_dir.c.
 *
 * A handle is the backend's usual header and MAC around what the cluster
 * names: the filesystem id, the inode number and the snapshot id. Every head
 * that mounts the same CephFS with the same handle key (server.handle_key_file)
 * makes and takes the same handles, and a head that restarts finds an inode
 * it has never seen with ceph_ll_lookup_inode. Each call runs with a UserPerm
 * of the caller after the export's squashing, so the cluster checks access.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/statvfs.h>

#include "common/base/log.h"
#include "server/backend_ceph.h"

/* The handle's backend part: fscid, ino, snapid, each 8 bytes big-endian. */
#define CE_FH_LEN 24

static void put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (56 - 8 * i));
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

/* The backend part of the handle of (ino, snap) on ce. */
static void ce_ofh(const struct ceph_export *ce, uint64_t ino, uint64_t snap, struct osdep_fh *ofh)
{
	ofh->len = CE_FH_LEN;
	put64(ofh->data, (uint64_t)ce->fscid);
	put64(ofh->data + 8, ino);
	put64(ofh->data + 16, snap);
}

/* Set one ceph option, logging which one was refused. */
static int ce_conf(struct export *e, struct ceph_mount_info *cm, const char *opt, const char *val)
{
	int r = ceph_conf_set(cm, opt, val);

	if (r < 0)
		log_err("export '%s': ceph option %s = %s refused: %s", e->path, opt, val,
			strerror(-r));
	return r;
}

/* Create, configure and mount the export's cluster client. */
static int ce_mount(struct export *e, struct ceph_export *ce)
{
	const char *id = e->conf.ceph.client_id ? e->conf.ceph.client_id : "admin";
	const char *conf = e->conf.ceph.conf_file;
	const char *root = e->conf.ceph.root ? e->conf.ceph.root : "/";
	char timeout[16];
	int r;

	snprintf(timeout, sizeof(timeout), "%u",
		 e->conf.ceph.mount_timeout_s ? e->conf.ceph.mount_timeout_s : 30);
	if ((r = ceph_create(&ce->cm, id)) < 0) {
		log_err("export '%s': cannot create a ceph client as client.%s: %s", e->path, id,
			strerror(-r));
		return r;
	}
	if (conf && (r = ceph_conf_read_file(ce->cm, conf)) < 0) {
		log_err("export '%s': cannot read %s: %s", e->path, conf, strerror(-r));
		return r;
	}
	if ((e->conf.ceph.keyring &&
	     (r = ce_conf(e, ce->cm, "keyring", e->conf.ceph.keyring)) < 0) ||
	    (r = ce_conf(e, ce->cm, "client_mount_timeout", timeout)) < 0 ||
	    (r = ce_conf(e, ce->cm, "rados_mon_op_timeout", timeout)) < 0)
		return r;
	log_info("export '%s': mounting %s of the CephFS of %s as client.%s", e->path, root,
		 conf ? conf : "(default ceph.conf)", id);
	if ((r = ceph_mount(ce->cm, root)) < 0) {
		log_err("export '%s': cannot reach the Ceph cluster of %s as client.%s to mount "
			"%s: %s%s",
			e->path, conf ? conf : "(default ceph.conf)", id, root, strerror(-r),
			r == -ETIMEDOUT || r == -ENOTCONN
				? " (no monitor answered within ceph.mount_timeout_s)"
			: r == -ENOENT ? " (no such directory in the CephFS: ceph.root)"
			: r == -EACCES || r == -EPERM
				? " (the cephx key or its caps refuse it: ceph.keyring)"
				: "");
		return r;
	}
	return 0;
}

/* See export.h: open a CephFS export (be_ceph_ops.open). */
static int ce_open(struct export *e)
{
	struct ceph_export *ce = calloc(1, sizeof(*ce));
	struct ceph_statx stx;
	int r;

	if ((e->priv = ce) == NULL)
		return -ENOMEM;
	pthread_mutex_init(&ce->lock, NULL);
	pthread_cond_init(&ce->cond, NULL);
	ce->timeout_s = e->conf.ceph.mount_timeout_s ? e->conf.ceph.mount_timeout_s : 30;
	if ((r = ce_mount(e, ce)) < 0)
		return r;
	if ((r = ceph_ll_lookup_root(ce->cm, &ce->root)) < 0 ||
	    (r = ceph_ll_getattr(ce->cm, ce->root, &stx, CE_WANT | CEPH_STATX_INO, 0,
				 ceph_mount_perms(ce->cm))) < 0) {
		log_err("export '%s': cannot read the root of the CephFS mount: %s", e->path,
			strerror(-r));
		return r;
	}
	if (!S_ISDIR(stx.stx_mode)) {
		log_err("export '%s': ceph.root is not a directory", e->path);
		return -ENOTDIR;
	}
	ce->fscid = ceph_get_fs_cid(ce->cm);
	ce->root_ino = stx.stx_ino;
	ce->root_snap = stx.stx_dev;
	ce_ofh(ce, ce->root_ino, ce->root_snap, &e->root_fh);
	e->id = e->conf.fsid ? e->conf.fsid : export_id_for_path(e->path);
	log_notice("export '%s': CephFS filesystem %lld, root inode %llx", e->path,
		   (long long)ce->fscid, (unsigned long long)ce->root_ino);
	return 0;
}

/* Free an export's mount state, its unmount done. */
static void ce_free(struct ceph_export *ce)
{
	pthread_mutex_destroy(&ce->lock);
	pthread_cond_destroy(&ce->cond);
	free(ce);
}

/* The unmount, on a thread of its own: it flushes to a cluster that may no
 * longer answer. The last of it and its waiter frees ce. */
static void *ce_unmount_main(void *arg)
{
	struct ceph_export *ce = arg;
	int abandoned;

	if (ce->root)
		ceph_ll_put(ce->cm, ce->root);
	ceph_shutdown(ce->cm);
	pthread_mutex_lock(&ce->lock);
	ce->unmounted = 1;
	abandoned = ce->abandoned;
	pthread_cond_signal(&ce->cond);
	pthread_mutex_unlock(&ce->lock);
	if (abandoned)
		ce_free(ce);
	return NULL;
}

/* See export.h (be_ceph_ops.close). A stop never waits longer than
 * ceph.mount_timeout_s for the cluster: past it, the unmount is left to
 * finish (or not) on its own thread. */
static void ce_close(struct export *e)
{
	struct ceph_export *ce = e->priv;
	struct timespec until;
	pthread_t t;
	int done;

	e->priv = NULL;
	if (ce == NULL)
		return;
	if (ce->cm == NULL || pthread_create(&t, NULL, ce_unmount_main, ce) != 0) {
		if (ce->cm)
			ceph_shutdown(ce->cm);
		ce_free(ce);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ce->timeout_s;
	pthread_mutex_lock(&ce->lock);
	while (!ce->unmounted && pthread_cond_timedwait(&ce->cond, &ce->lock, &until) == 0)
		;
	done = ce->unmounted;
	ce->abandoned = !done;
	pthread_mutex_unlock(&ce->lock);
	if (done) {
		pthread_join(t, NULL);
		ce_free(ce);
	} else {
		log_warn("export '%s': the cluster did not answer the unmount in %u s: left behind",
			 e->path, ce->timeout_s);
		pthread_detach(t);
	}
}

/* See backend_ceph.h. */
void ce_stat_from(const struct ceph_statx *stx, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_mode = stx->stx_mode;
	st->st_nlink = stx->stx_nlink;
	st->st_uid = stx->stx_uid;
	st->st_gid = stx->stx_gid;
	st->st_size = (off_t)stx->stx_size;
	st->st_blocks = (blkcnt_t)stx->stx_blocks;
	st->st_rdev = stx->stx_rdev;
	st->st_ino = stx->stx_ino;
	st->st_atim = stx->stx_atime;
	st->st_mtim = stx->stx_mtime;
	st->st_ctim = stx->stx_ctime;
}

/* See backend_ceph.h. */
nfsstat3 ce_fh_make(const struct export *e, const struct ceph_statx *stx, nfs_fh3 *out)
{
	unsigned char buf[NFS3_FHSIZE];
	struct osdep_fh ofh;
	size_t len;

	ce_ofh(e->priv, stx->stx_ino, stx->stx_dev, &ofh);
	if (be_fh_encode(e, &ofh, buf, &len) < 0)
		return NFS3ERR_SERVERFAULT;
	if ((out->data.data_val = malloc(len)) == NULL)
		return NFS3ERR_JUKEBOX;
	memcpy(out->data.data_val, buf, len);
	out->data.data_len = (u_int)len;
	return NFS3_OK;
}

/* The caller's identity on o's export, as a UserPerm. */
static nfsstat3 ce_perm(struct nfs_req *req, struct ce_obj *o)
{
	be_req_rule(req, o->exp, &o->rule);
	export_map_cred(&o->rule, &req->cred, &o->uid, &o->gid, &o->ngids, o->gids);
	o->perm = ceph_userperm_new(o->uid, o->gid, (int)o->ngids, o->gids);
	return o->perm ? NFS3_OK : NFS3ERR_JUKEBOX;
}

/* The inode a handle's backend part names, with a reference. */
static nfsstat3 ce_find(struct ce_obj *o, const struct osdep_fh *ofh)
{
	uint64_t ino, snap;
	int r;

	if (ofh->len != CE_FH_LEN)
		return NFS3ERR_BADHANDLE;
	if ((int64_t)get64(ofh->data) != o->ce->fscid)
		return NFS3ERR_STALE;
	ino = get64(ofh->data + 8);
	snap = get64(ofh->data + 16);
	if (snap == CEPH_NOSNAP) {
		struct inodeno_t i = {ino};

		r = ceph_ll_lookup_inode(o->ce->cm, i, &o->in);
	} else {
		vinodeno_t v = {{ino}, {snap}};

		r = ceph_ll_lookup_vino(o->ce->cm, v, &o->in);
	}
	if (r < 0) {
		o->in = NULL;
		return r == -ENOMEM ? NFS3ERR_JUKEBOX : r == -EIO ? NFS3ERR_IO : NFS3ERR_STALE;
	}
	return NFS3_OK;
}

/* See backend_ceph.h. */
int ce_refresh(struct ce_obj *o)
{
	int r = ceph_ll_getattr(o->ce->cm, o->in, &o->stx, CE_WANT | CEPH_STATX_INO, 0, o->perm);

	if (r == 0)
		ce_stat_from(&o->stx, &o->st);
	return r;
}

/* See backend_ceph.h. */
nfsstat3 ce_resolve(struct nfs_req *req, const nfs_fh3 *fh, unsigned flags, struct ce_obj *o)
{
	struct osdep_fh ofh;
	uint32_t id;
	nfsstat3 st;
	int r;

	memset(o, 0, sizeof(*o));
	if ((st = be_fh_parse(&req->be->fh_key, fh, &id, &ofh)) != NFS3_OK)
		return st;
	if ((o->exp = be_export_by_id(req->be, id)) == NULL || o->exp->ops != &be_ceph_ops)
		return NFS3ERR_STALE;
	o->ce = o->exp->priv;
	if ((st = be_export_check(req, o->exp, flags)) != NFS3_OK ||
	    (st = ce_perm(req, o)) != NFS3_OK || (st = ce_find(o, &ofh)) != NFS3_OK) {
		ce_release(o);
		return st;
	}
	/* the object's own attributes: with the server's identity, as fstat */
	r = ceph_ll_getattr(o->ce->cm, o->in, &o->stx, CE_WANT | CEPH_STATX_INO, 0,
			    ceph_mount_perms(o->ce->cm));
	if (r < 0 || o->stx.stx_nlink == 0) {
		ce_release(o);
		return r == -ENOMEM ? NFS3ERR_JUKEBOX : NFS3ERR_STALE;
	}
	ce_stat_from(&o->stx, &o->st);
	return NFS3_OK;
}

/* See backend_ceph.h. */
nfsstat3 ce_dir_resolve(struct nfs_req *req, const nfs_fh3 *fh, unsigned flags, struct ce_obj *o)
{
	nfsstat3 st = ce_resolve(req, fh, flags, o);

	if (st == NFS3_OK && !S_ISDIR(o->st.st_mode)) {
		ce_release(o);
		st = NFS3ERR_NOTDIR;
	}
	return st;
}

/* See backend_ceph.h. */
void ce_release(struct ce_obj *o)
{
	if (o->in)
		ceph_ll_put(o->ce->cm, o->in);
	if (o->perm)
		ceph_userperm_destroy(o->perm);
	o->in = NULL;
	o->perm = NULL;
}

/* See backend_ceph.h. */
int ce_is_root(const struct ce_obj *o)
{
	return o->stx.stx_ino == o->ce->root_ino && o->stx.stx_dev == o->ce->root_snap;
}

/* See backend_ceph.h. */
void ce_post_attr(struct ce_obj *o, post_op_attr *out)
{
	out->attributes_follow = o->in != NULL && ce_refresh(o) == 0;
	if (out->attributes_follow)
		be_fattr(o->exp, &o->st, &out->post_op_attr_u.attributes);
}

/* See backend_ceph.h. */
void ce_wcc(struct ce_obj *o, wcc_data *out)
{
	struct stat before = o->st;

	be_pre_attr(&before, &out->before);
	ce_post_attr(o, &out->after);
}

/* GETATTR: the object's attributes. */
static void ce_proc_getattr(struct nfs_req *req, void *argp, void *resp)
{
	GETATTR3args *a = argp;
	GETATTR3res *r = resp;
	struct ce_obj o;

	if ((r->status = ce_resolve(req, &a->object, 0, &o)) != NFS3_OK)
		return;
	be_fattr(o.exp, &o.st, &r->GETATTR3res_u.resok.obj_attributes);
	ce_release(&o);
}

/* See backend_ceph.h. */
nfsstat3 ce_sattr(const sattr3 *sa, struct ceph_statx *stx, int *mask)
{
	struct timespec now = {0, 0};

	memset(stx, 0, sizeof(*stx));
	*mask = 0;
	if ((sa->atime.set_it == SET_TO_CLIENT_TIME &&
	     sa->atime.set_atime_u.atime.nseconds >= 1000000000u) ||
	    (sa->mtime.set_it == SET_TO_CLIENT_TIME &&
	     sa->mtime.set_mtime_u.mtime.nseconds >= 1000000000u))
		return NFS3ERR_INVAL;
	if (sa->size.set_it) {
		if (sa->size.set_size3_u.size > INT64_MAX)
			return NFS3ERR_FBIG;
		stx->stx_size = sa->size.set_size3_u.size;
		*mask |= CEPH_SETATTR_SIZE;
	}
	if (sa->mode.set_it) {
		stx->stx_mode = sa->mode.set_mode3_u.mode & 07777;
		*mask |= CEPH_SETATTR_MODE;
	}
	if (sa->uid.set_it) {
		stx->stx_uid = sa->uid.set_uid3_u.uid;
		*mask |= CEPH_SETATTR_UID;
	}
	if (sa->gid.set_it) {
		stx->stx_gid = sa->gid.set_gid3_u.gid;
		*mask |= CEPH_SETATTR_GID;
	}
	/* the server's clock, set as a time (as FSAL_CEPH does): the _NOW
	 * flags alone leave the times as they were in libcephfs 16 */
	if (sa->atime.set_it == SET_TO_SERVER_TIME || sa->mtime.set_it == SET_TO_SERVER_TIME)
		clock_gettime(CLOCK_REALTIME, &now);
	if (sa->atime.set_it == SET_TO_SERVER_TIME) {
		stx->stx_atime = now;
		*mask |= CEPH_SETATTR_ATIME;
	}
	if (sa->atime.set_it == SET_TO_CLIENT_TIME) {
		stx->stx_atime.tv_sec = sa->atime.set_atime_u.atime.seconds;
		stx->stx_atime.tv_nsec = sa->atime.set_atime_u.atime.nseconds;
		*mask |= CEPH_SETATTR_ATIME;
	}
	if (sa->mtime.set_it == SET_TO_SERVER_TIME) {
		stx->stx_mtime = now;
		*mask |= CEPH_SETATTR_MTIME;
	}
	if (sa->mtime.set_it == SET_TO_CLIENT_TIME) {
		stx->stx_mtime.tv_sec = sa->mtime.set_mtime_u.mtime.seconds;
		stx->stx_mtime.tv_nsec = sa->mtime.set_mtime_u.mtime.nseconds;
		*mask |= CEPH_SETATTR_MTIME;
	}
	return NFS3_OK;
}

static int ce_mode_allows(const struct ce_obj *o, int want);

/* Apply mask of stx (from sa) to o, in three steps so that none undoes
 * another: the size, by the server for the file's owner (who may always
 * truncate their file, as knfsd and the POSIX backend allow: a file created
 * with mode 0 and then truncated); owner, group and mode as the caller; the
 * times last, so that the truncation's stamps do not replace them. Times
 * set to now are the server's for anyone who may write the file (utimensat
 * allows it; libcephfs 16 only lets the owner set a time). */
static int ce_setattr(struct ce_obj *o, const sattr3 *sa, const struct ceph_statx *stx, int mask)
{
	const int times = CEPH_SETATTR_ATIME | CEPH_SETATTR_MTIME;
	int now_only =
		sa->atime.set_it != SET_TO_CLIENT_TIME && sa->mtime.set_it != SET_TO_CLIENT_TIME;
	const UserPerm *mine = ceph_mount_perms(o->ce->cm);
	struct ceph_statx x; /* libcephfs may write into what it is given */
	int e = 0;

	if (mask & CEPH_SETATTR_SIZE) {
		x = *stx;
		e = ceph_ll_setattr(o->ce->cm, o->in, &x, CEPH_SETATTR_SIZE,
				    o->st.st_uid == o->uid ? mine : o->perm);
	}
	if (e == 0 && (mask & ~(times | CEPH_SETATTR_SIZE))) {
		x = *stx;
		e = ceph_ll_setattr(o->ce->cm, o->in, &x, mask & ~(times | CEPH_SETATTR_SIZE),
				    o->perm);
	}
	if (e == 0 && (mask & times)) {
		x = *stx;
		e = ceph_ll_setattr(o->ce->cm, o->in, &x, mask & times,
				    now_only && o->uid != o->st.st_uid && ce_mode_allows(o, W_OK)
					    ? mine
					    : o->perm);
	}
	return e;
}

/* SETATTR: change attributes if the guard (the client's idea of ctime) still
 * holds; the cluster checks the caller may. A symlink's mode is left alone. */
static void ce_proc_setattr(struct nfs_req *req, void *argp, void *resp)
{
	SETATTR3args *a = argp;
	SETATTR3res *r = resp;
	struct ceph_statx stx;
	struct ce_obj o;
	int mask, e;

	if ((r->status = ce_resolve(req, &a->object, BE_MODIFY, &o)) != NFS3_OK)
		return;
	if (a->guard.check &&
	    (a->guard.sattrguard3_u.obj_ctime.seconds != (uint32)o.st.st_ctim.tv_sec ||
	     a->guard.sattrguard3_u.obj_ctime.nseconds != (uint32)o.st.st_ctim.tv_nsec))
		r->status = NFS3ERR_NOT_SYNC;
	else if ((r->status = ce_sattr(&a->new_attributes, &stx, &mask)) == NFS3_OK) {
		if (S_ISLNK(o.st.st_mode))
			mask &= ~CEPH_SETATTR_MODE;
		if ((mask & CEPH_SETATTR_SIZE) && !S_ISREG(o.st.st_mode))
			r->status = S_ISDIR(o.st.st_mode) ? NFS3ERR_ISDIR : NFS3ERR_INVAL;
		else if ((e = ce_setattr(&o, &a->new_attributes, &stx, mask)) < 0)
			r->status = nfs3_errno_to_stat(-e);
	}
	ce_wcc(&o, &r->SETATTR3res_u.resok.obj_wcc);
	ce_release(&o);
}

/* LOOKUP: the handle and attributes of a name; ".." of the root is the root. */
static void ce_proc_lookup(struct nfs_req *req, void *argp, void *resp)
{
	LOOKUP3args *a = argp;
	LOOKUP3res *r = resp;
	LOOKUP3resok *ok = &r->LOOKUP3res_u.resok;
	const char *name = a->what.name;
	struct ceph_statx stx;
	struct stat st;
	struct ce_obj d;
	Inode *in = NULL;
	int e;

	if ((r->status = ce_dir_resolve(req, &a->what.dir, 0, &d)) != NFS3_OK)
		return;
	if ((r->status = be_name_check(name)) == NFS3_OK) {
		if (ce_is_root(&d) && strcmp(name, "..") == 0)
			name = ".";
		e = ceph_ll_lookup(d.ce->cm, d.in, name, &in, &stx, CE_WANT | CEPH_STATX_INO, 0,
				   d.perm);
		if (e < 0)
			r->status = nfs3_errno_to_stat(-e);
		else if ((r->status = ce_fh_make(d.exp, &stx, &ok->object)) == NFS3_OK) {
			ce_stat_from(&stx, &st);
			be_post_attr_st(d.exp, &st, &ok->obj_attributes);
		}
		if (in)
			ceph_ll_put(d.ce->cm, in);
	}
	ce_post_attr(&d, r->status == NFS3_OK ? &ok->dir_attributes
					      : &r->LOOKUP3res_u.resfail.dir_attributes);
	ce_release(&d);
}

/* Whether the mode bits of o give its caller all of want (R_OK, W_OK, X_OK). */
static int ce_mode_allows(const struct ce_obj *o, int want)
{
	mode_t m = o->st.st_mode;
	int in_group = o->gid == o->st.st_gid;
	unsigned bits;

	if (o->uid == 0)
		return !(want & X_OK) || S_ISDIR(m) || (m & 0111);
	for (size_t i = 0; i < o->ngids && !in_group; i++)
		in_group = o->gids[i] == o->st.st_gid;
	bits = o->uid == o->st.st_uid ? (m >> 6) & 7 : in_group ? (m >> 3) & 7 : m & 7;
	return ((unsigned)want & bits) == (unsigned)want;
}

/* ACCESS: the asked rights the mode bits give the caller (Pacific has no
 * ll access call; POSIX ACLs on CephFS are not consulted here). */
static void ce_proc_access(struct nfs_req *req, void *argp, void *resp)
{
	ACCESS3args *a = argp;
	ACCESS3res *r = resp;
	struct ce_obj o;
	uint32 got = 0;
	int dir;

	if ((r->status = ce_resolve(req, &a->object, 0, &o)) != NFS3_OK)
		return;
	dir = S_ISDIR(o.st.st_mode);
	if (ce_mode_allows(&o, R_OK))
		got |= ACCESS3_READ;
	if (ce_mode_allows(&o, W_OK))
		got |= ACCESS3_MODIFY | ACCESS3_EXTEND | (dir ? ACCESS3_DELETE : 0);
	if (ce_mode_allows(&o, X_OK))
		got |= dir ? ACCESS3_LOOKUP : ACCESS3_EXECUTE;
	if (o.rule.ro)
		got &= ~(uint32)(ACCESS3_MODIFY | ACCESS3_EXTEND | ACCESS3_DELETE);
	r->ACCESS3res_u.resok.access = got & a->access;
	be_post_attr_st(o.exp, &o.st, &r->ACCESS3res_u.resok.obj_attributes);
	ce_release(&o);
}

/* READLINK: a symlink's target. */
static void ce_proc_readlink(struct nfs_req *req, void *argp, void *resp)
{
	READLINK3args *a = argp;
	READLINK3res *r = resp;
	char buf[NFS3_MAXPATHLEN + 1];
	struct ce_obj o;
	int n;

	if ((r->status = ce_resolve(req, &a->symlink, 0, &o)) != NFS3_OK)
		return;
	be_post_attr_st(o.exp, &o.st, &r->READLINK3res_u.resok.symlink_attributes);
	if (!S_ISLNK(o.st.st_mode))
		r->status = NFS3ERR_INVAL;
	else if ((n = ceph_ll_readlink(o.ce->cm, o.in, buf, sizeof(buf) - 1, o.perm)) < 0)
		r->status = nfs3_errno_to_stat(-n);
	else if ((r->READLINK3res_u.resok.data = strndup(buf, (size_t)n)) == NULL)
		r->status = NFS3ERR_JUKEBOX;
	ce_release(&o);
}

/* Open o for I/O. The owner always may (as knfsd and the POSIX backend
 * allow, for writes to a file created read-only): then the server's own
 * identity opens it; anyone else opens it as themselves. */
static nfsstat3 ce_open_io(struct ce_obj *o, int write, struct Fh **fh)
{
	const UserPerm *who = o->st.st_uid == o->uid ? ceph_mount_perms(o->ce->cm) : o->perm;
	int e;

	if (!S_ISREG(o->st.st_mode))
		return S_ISDIR(o->st.st_mode) ? NFS3ERR_ISDIR : NFS3ERR_INVAL;
	e = ceph_ll_open(o->ce->cm, o->in, write ? O_WRONLY : O_RDONLY, fh, who);
	if (e < 0 && !write && o->st.st_uid != o->uid && ce_mode_allows(o, X_OK))
		e = ceph_ll_open(o->ce->cm, o->in, O_RDONLY, fh, ceph_mount_perms(o->ce->cm));
	return e < 0 ? nfs3_errno_to_stat(-e) : NFS3_OK;
}

/* A buffer for READ data: the transport's if it offers one, else malloc. */
static char *read_buf(struct nfs_req *req, size_t len)
{
	return req->get_buf ? req->get_buf(req->buf_opaque, len) : malloc(len);
}

/* READ body: up to count bytes from the file. */
static nfsstat3 ce_read_data(struct nfs_req *req, struct ce_obj *o, const READ3args *a,
			     READ3resok *ok)
{
	size_t count = a->count < req->be->max_io ? a->count : req->be->max_io, done = 0;
	struct Fh *fh = NULL;
	nfsstat3 st;
	int n = 0;

	if (a->offset > INT64_MAX)
		return NFS3ERR_INVAL;
	if ((st = ce_open_io(o, 0, &fh)) != NFS3_OK)
		return st;
	if (count && (ok->data.data_val = read_buf(req, count)) == NULL)
		st = NFS3ERR_JUKEBOX;
	while (st == NFS3_OK && done < count) {
		n = ceph_ll_read(o->ce->cm, fh, (int64_t)(a->offset + done), count - done,
				 ok->data.data_val + done);
		if (n < 0)
			st = nfs3_errno_to_stat(-n);
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	ceph_ll_close(o->ce->cm, fh);
	if (st != NFS3_OK)
		return st;
	ok->data.data_len = (u_int)done;
	ok->count = (count3)done;
	ok->eof = done < count || a->offset + done >= (uint64_t)o->st.st_size;
	return NFS3_OK;
}

/* READ: up to count bytes (capped at the max I/O size). */
static void ce_proc_read(struct nfs_req *req, void *argp, void *resp)
{
	READ3args *a = argp;
	READ3res *r = resp;
	READ3resok *ok = &r->READ3res_u.resok;
	struct ce_obj o;

	if ((r->status = ce_resolve(req, &a->file, 0, &o)) != NFS3_OK)
		return;
	r->status = ce_read_data(req, &o, a, ok);
	if (r->status != NFS3_OK && ok->data.data_val) {
		if (!req->get_buf)
			free(ok->data.data_val);
		ok->data.data_val = NULL;
		ok->data.data_len = 0;
	}
	ce_post_attr(&o, &ok->file_attributes);
	ce_release(&o);
}

/* WRITE body: write all, then make it stable as asked. */
static nfsstat3 ce_write_data(struct nfs_req *req, struct ce_obj *o, const WRITE3args *a,
			      WRITE3resok *ok)
{
	struct Fh *fh = NULL;
	size_t done = 0;
	nfsstat3 st;
	int n;

	if (a->count > a->data.data_len || a->count > req->be->max_io)
		return NFS3ERR_INVAL;
	if (a->offset > INT64_MAX || a->count > INT64_MAX - a->offset)
		return NFS3ERR_FBIG;
	if (o->st.st_uid != o->uid && !ce_mode_allows(o, W_OK))
		return NFS3ERR_ACCES;
	if ((st = ce_open_io(o, 1, &fh)) != NFS3_OK)
		return st;
	while (st == NFS3_OK && done < a->count) {
		n = ceph_ll_write(o->ce->cm, fh, (int64_t)(a->offset + done), a->count - done,
				  a->data.data_val + done);
		if (n <= 0)
			st = n < 0 ? nfs3_errno_to_stat(-n) : NFS3ERR_IO;
		else
			done += (size_t)n;
	}
	/* an async export says the data is stable without making it so */
	if (st == NFS3_OK && a->stable != UNSTABLE && !o->rule.async &&
	    (n = ceph_ll_fsync(o->ce->cm, fh, a->stable == DATA_SYNC)) < 0)
		st = nfs3_errno_to_stat(-n);
	ceph_ll_close(o->ce->cm, fh);
	if (st != NFS3_OK)
		return st;
	ok->count = a->count;
	ok->committed = a->stable == UNSTABLE || a->stable == DATA_SYNC ? a->stable : FILE_SYNC;
	memcpy(ok->verf, req->be->write_verf, NFS3_WRITEVERFSIZE);
	return NFS3_OK;
}

/* WRITE: args->data may point into a transport buffer; it is only read. */
static void ce_proc_write(struct nfs_req *req, void *argp, void *resp)
{
	WRITE3args *a = argp;
	WRITE3res *r = resp;
	struct ce_obj o;

	if ((r->status = ce_resolve(req, &a->file, BE_MODIFY, &o)) != NFS3_OK)
		return;
	r->status = ce_write_data(req, &o, a, &r->WRITE3res_u.resok);
	ce_wcc(&o, &r->WRITE3res_u.resok.file_wcc);
	ce_release(&o);
}

/* COMMIT: earlier UNSTABLE writes of this head reach the cluster's disks
 * (the whole file, whatever the range), for a caller who may write it. */
static void ce_proc_commit(struct nfs_req *req, void *argp, void *resp)
{
	COMMIT3args *a = argp;
	COMMIT3res *r = resp;
	struct ce_obj o;
	int e;

	if ((r->status = ce_resolve(req, &a->file, BE_MODIFY, &o)) != NFS3_OK)
		return;
	if (!S_ISREG(o.st.st_mode))
		r->status = S_ISDIR(o.st.st_mode) ? NFS3ERR_ISDIR : NFS3ERR_INVAL;
	else if (o.st.st_uid != o.uid && !ce_mode_allows(&o, W_OK))
		r->status = NFS3ERR_ACCES;
	else if (!o.rule.async && (e = ceph_ll_sync_inode(o.ce->cm, o.in, 0)) < 0)
		r->status = nfs3_errno_to_stat(-e);
	memcpy(r->COMMIT3res_u.resok.verf, req->be->write_verf, NFS3_WRITEVERFSIZE);
	ce_wcc(&o, &r->COMMIT3res_u.resok.file_wcc);
	ce_release(&o);
}

/* FSSTAT: space and file counts of the CephFS. */
static void ce_proc_fsstat(struct nfs_req *req, void *argp, void *resp)
{
	FSSTAT3args *a = argp;
	FSSTAT3res *r = resp;
	FSSTAT3resok *ok = &r->FSSTAT3res_u.resok;
	struct statvfs vfs;
	struct ce_obj o;
	int e;

	if ((r->status = ce_resolve(req, &a->fsroot, 0, &o)) != NFS3_OK)
		return;
	be_post_attr_st(o.exp, &o.st, &ok->obj_attributes);
	if ((e = ceph_ll_statfs(o.ce->cm, o.in, &vfs)) < 0) {
		r->status = nfs3_errno_to_stat(-e);
	} else {
		ok->tbytes = (uint64_t)vfs.f_blocks * vfs.f_frsize;
		ok->fbytes = (uint64_t)vfs.f_bfree * vfs.f_frsize;
		ok->abytes = (uint64_t)vfs.f_bavail * vfs.f_frsize;
		ok->tfiles = vfs.f_files;
		ok->ffiles = vfs.f_ffree;
		ok->afiles = vfs.f_favail;
		ok->invarsec = 0;
	}
	ce_release(&o);
}

/* FSINFO: the server's limits, as for the POSIX backend. */
static void ce_proc_fsinfo(struct nfs_req *req, void *argp, void *resp)
{
	FSINFO3args *a = argp;
	FSINFO3res *r = resp;
	FSINFO3resok *ok = &r->FSINFO3res_u.resok;
	uint32_t max = req->be->max_io;
	struct ce_obj o;

	if ((r->status = ce_resolve(req, &a->fsroot, 0, &o)) != NFS3_OK)
		return;
	be_post_attr_st(o.exp, &o.st, &ok->obj_attributes);
	ok->rtmax = ok->rtpref = ok->wtmax = ok->wtpref = max;
	ok->rtmult = ok->wtmult = 4096;
	ok->dtpref = max < 32768 ? max : 32768;
	ok->maxfilesize = INT64_MAX;
	ok->time_delta.seconds = 0;
	ok->time_delta.nseconds = 1;
	ok->properties = FSF3_LINK | FSF3_SYMLINK | FSF3_HOMOGENEOUS | FSF3_CANSETTIME;
	ce_release(&o);
}

/* PATHCONF: CephFS's name and link limits. */
static void ce_proc_pathconf(struct nfs_req *req, void *argp, void *resp)
{
	PATHCONF3args *a = argp;
	PATHCONF3res *r = resp;
	PATHCONF3resok *ok = &r->PATHCONF3res_u.resok;
	struct ce_obj o;

	if ((r->status = ce_resolve(req, &a->object, 0, &o)) != NFS3_OK)
		return;
	be_post_attr_st(o.exp, &o.st, &ok->obj_attributes);
	ok->linkmax = 65000;
	ok->name_max = NFS3_MAXNAMLEN;
	ok->no_trunc = TRUE;
	ok->chown_restricted = TRUE;
	ok->case_insensitive = FALSE;
	ok->case_preserving = TRUE;
	ce_release(&o);
}

/* See export.h. */
const struct be_ops be_ceph_ops = {
	.name = "cephfs",
	.never_inline = 1, /* every libcephfs call may wait on the cluster */
	.open = ce_open,
	.close = ce_close,
	.nfs3 =
		{
			[NFSPROC3_GETATTR] = ce_proc_getattr,
			[NFSPROC3_SETATTR] = ce_proc_setattr,
			[NFSPROC3_LOOKUP] = ce_proc_lookup,
			[NFSPROC3_ACCESS] = ce_proc_access,
			[NFSPROC3_READLINK] = ce_proc_readlink,
			[NFSPROC3_READ] = ce_proc_read,
			[NFSPROC3_WRITE] = ce_proc_write,
			[NFSPROC3_CREATE] = ce_proc_create,
			[NFSPROC3_MKDIR] = ce_proc_mkdir,
			[NFSPROC3_SYMLINK] = ce_proc_symlink,
			[NFSPROC3_MKNOD] = ce_proc_mknod,
			[NFSPROC3_REMOVE] = ce_proc_remove,
			[NFSPROC3_RMDIR] = ce_proc_rmdir,
			[NFSPROC3_RENAME] = ce_proc_rename,
			[NFSPROC3_LINK] = ce_proc_link,
			[NFSPROC3_READDIR] = ce_proc_readdir,
			[NFSPROC3_READDIRPLUS] = ce_proc_readdirplus,
			[NFSPROC3_FSSTAT] = ce_proc_fsstat,
			[NFSPROC3_FSINFO] = ce_proc_fsinfo,
			[NFSPROC3_PATHCONF] = ce_proc_pathconf,
			[NFSPROC3_COMMIT] = ce_proc_commit,
		},
};
