/*
 * backend_ceph.c: the CephFS backend (be_ceph_ops): an export's mount of the
 * cluster through libcephfs's low-level calls (as NFS-Ganesha's FSAL_CEPH
 * uses them) and its unmount, handles, resolving one to an inode with the
 * caller's UserPerm, and the attributes the procedures report. The
 * procedures are in backend_ceph_attr.c (GETATTR, SETATTR, LOOKUP, ACCESS,
 * READLINK, FSSTAT, FSINFO, PATHCONF), backend_ceph_io.c (READ, WRITE,
 * COMMIT) and backend_ceph_dir.c (the namespace and listings).
 *
 * A handle is the backend's usual header and MAC around what the cluster
 * names: the filesystem id, the inode number and the snapshot id. Every head
 * that mounts the same CephFS with the same handle key (server.handle_key_file)
 * makes and takes the same handles, and a head that restarts finds an inode
 * it has never seen with ceph_ll_lookup_vino (its own inode cache first,
 * else one LOOKUPINO to the MDS). Each call runs with a UserPerm
 * of the caller after the export's squashing, so the cluster checks access.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
	    (r = ce_conf(e, ce->cm, "rados_mon_op_timeout", timeout)) < 0 ||
	    /* libcephfs checks each caller's rights, with POSIX ACLs as the
	     * kernel's CephFS client does (Ceph's default: mode bits only),
	     * whatever the ceph.conf says for its other clients */
	    (r = ce_conf(e, ce->cm, "client_permissions", "true")) < 0 ||
	    (r = ce_conf(e, ce->cm, "fuse_default_permissions", "false")) < 0 ||
	    (r = ce_conf(e, ce->cm, "client_acl_type", "posix_acl")) < 0)
		return r;
	/* the mode a create asks for is final (the NFS client applied its
	 * caller's umask); with ACLs on, libcephfs applies its own (022) where
	 * the directory has no default ACL */
	ceph_umask(ce->cm, 0);
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
	pthread_condattr_t ca;
	int r;

	if ((e->priv = ce) == NULL)
		return -ENOMEM;
	pthread_mutex_init(&ce->lock, NULL);
	pthread_cond_init(&ce->cond, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ce->sweep_cond, &ca);
	pthread_condattr_destroy(&ca);
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
	ce_files_start(ce);
	return 0;
}

/* Free an export's mount state, its unmount done. */
static void ce_free(struct ceph_export *ce)
{
	pthread_mutex_destroy(&ce->lock);
	pthread_cond_destroy(&ce->cond);
	pthread_cond_destroy(&ce->sweep_cond);
	free(ce);
}

/* The unmount, on a thread of its own: it flushes to a cluster that may no
 * longer answer. The last of it and its waiter frees ce. */
static void *ce_unmount_main(void *arg)
{
	struct ceph_export *ce = arg;
	int abandoned;

	ce_files_stop(ce);
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

/* Unmount and free ce (what: the export, for the log). A stop never waits
 * longer than ceph.mount_timeout_s for the cluster: past it, the unmount is
 * left to finish (or not) on its own thread. */
static void ce_unmount(struct ceph_export *ce, const char *what)
{
	struct timespec until;
	pthread_t t;
	int done;

	if (ce->cm == NULL || pthread_create(&t, NULL, ce_unmount_main, ce) != 0) {
		ce_files_stop(ce);
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
			 what, ce->timeout_s);
		pthread_detach(t);
	}
}

/* See export.h (be_ceph_ops.close): the mount goes now, or with the last
 * lock file that still uses it. */
static void ce_close(struct export *e)
{
	struct ceph_export *ce = e->priv;
	unsigned busy;

	e->priv = NULL;
	if (ce == NULL)
		return;
	pthread_mutex_lock(&ce->lock);
	ce->retired = 1;
	busy = ce->lock_files;
	pthread_mutex_unlock(&ce->lock);
	if (busy)
		log_info("export '%s': its CephFS mount stays until its %u lock owners are gone",
			 e->path, busy);
	else
		ce_unmount(ce, e->path);
}

/* See backend_ceph.h. */
void ce_lock_files_get(struct ceph_export *ce)
{
	pthread_mutex_lock(&ce->lock);
	ce->lock_files++;
	pthread_mutex_unlock(&ce->lock);
}

/* See backend_ceph.h. */
void ce_lock_files_put(struct ceph_export *ce)
{
	int last;

	pthread_mutex_lock(&ce->lock);
	last = --ce->lock_files == 0 && ce->retired;
	pthread_mutex_unlock(&ce->lock);
	if (last)
		ce_unmount(ce, "(closed before its last lock owner)");
}

/* See backend_ceph.h. CephFS numbers inodes from (rank + 1) << 40, below
 * 2^48 but for MDS rank 255; tags: 0 live, 0xffff a .snap, and 1..0xfffe
 * from the snapshot id, which the cluster counts up from 1 (two snapshots of
 * one file 65,534 ids apart share a tag). */
uint64_t ce_fileid(const struct ceph_statx *stx)
{
	uint64_t snap = stx->stx_dev, tag;

	if (snap == CEPH_NOSNAP)
		return stx->stx_ino;
	tag = snap == CE_SNAPDIR ? 0xffff : snap % 0xfffe + 1;
	return stx->stx_ino ^ tag << 48;
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
	st->st_ino = ce_fileid(stx);
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
	r = ceph_ll_lookup_vino(o->ce->cm, (vinodeno_t){{ino}, {snap}}, &o->in);
	if (r < 0) {
		o->in = NULL;
		return ce_find_stat(r);
	}
	return NFS3_OK;
}

/* See backend_ceph.h. Only the cluster's word that the inode is gone makes a
 * handle stale: a client drops what it has of a stale file, and the error
 * reaches its applications. */
nfsstat3 ce_find_stat(int r)
{
	return r == -ESTALE || r == -ENOENT ? NFS3ERR_STALE : nfs3_errno_to_stat(-r);
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
		return r < 0 ? ce_find_stat(r) : NFS3ERR_STALE;
	}
	ce_stat_from(&o->stx, &o->st);
	return NFS3_OK;
}

/* See backend_ceph.h. A directory in a snapshot is read-only, and linked to
 * its snapshot before it is read (ce_snap_link). */
nfsstat3 ce_dir_resolve(struct nfs_req *req, const nfs_fh3 *fh, unsigned flags, struct ce_obj *o)
{
	nfsstat3 st = ce_resolve(req, fh, flags, o);
	int in_snap, r;

	if (st != NFS3_OK)
		return st;
	in_snap = o->stx.stx_dev != CEPH_NOSNAP && o->stx.stx_dev != CE_SNAPDIR;
	if (!S_ISDIR(o->st.st_mode))
		st = NFS3ERR_NOTDIR;
	else if (in_snap && (flags & BE_MODIFY))
		st = NFS3ERR_ROFS;
	else if (in_snap && (r = ce_snap_link(o)) < 0)
		st = ce_find_stat(r);
	if (st != NFS3_OK)
		ce_release(o);
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

/* See backend_ceph.h. A directory with the root's inode number is the root
 * itself, its .snap (snapshot CEPH_SNAPDIR) or one of its snapshots; libcephfs
 * answers ".." of each from the MDS, with ceph.root's parent where a
 * snapshot was not reached through its .snap (after a restart, say). */
int ce_dotdot(const struct ce_obj *d, struct ceph_statx *stx)
{
	uint64_t snap = d->stx.stx_dev, up;
	Inode *in;
	int r;

	if (d->stx.stx_ino != d->ce->root_ino)
		return 0;
	if (snap == d->ce->root_snap) {
		*stx = d->stx;
		return 1;
	}
	up = snap == CE_SNAPDIR ? d->ce->root_snap : CE_SNAPDIR;
	r = ceph_ll_lookup_vino(d->ce->cm, (vinodeno_t){{d->ce->root_ino}, {up}}, &in);
	if (r < 0)
		return r;
	r = ceph_ll_getattr(d->ce->cm, in, stx, CE_WANT | CEPH_STATX_INO, 0,
			    ceph_mount_perms(d->ce->cm));
	ceph_ll_put(d->ce->cm, in);
	return r < 0 ? r : 1;
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
	.open_locked = ce_open_locked,
};
