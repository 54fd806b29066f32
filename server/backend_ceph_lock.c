/*
 * backend_ceph_lock.c: lock files on a CephFS export (backend_lock.h). A lock
 * owner gets an open file of its own on the cluster (ceph_ll_open), and its
 * locks are the cluster's: ceph_ll_setlk and ceph_ll_getlk with that open file
 * as the owner. The MDS arbitrates them with POSIX's rules between the lock
 * managers of every head exporting the filesystem and any other CephFS
 * client, and closing the file releases them. The file is opened with the
 * server's identity, as the POSIX backend opens its lock files: the export's
 * rules decide, read-only where it is. An export that a reload closes while
 * owners still hold files keeps its mount until the last of them is closed
 * (ce_lock_files_put).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "server/backend_ceph.h"
#include "server/backend_int.h"
#include "server/backend_lock.h"

/* One owner's open file on the cluster. */
struct ce_lock {
	struct ceph_export *ce;
	Inode *in;
	Fh *fh;
};

/* The cluster's lock owner: one per open file. */
static uint64_t owner_of(const struct ce_lock *k)
{
	return (uint64_t)(uintptr_t)k;
}

static struct flock to_flock(const struct osdep_lock *l)
{
	struct flock fl;

	memset(&fl, 0, sizeof(fl));
	fl.l_type = l->type == OSDEP_LOCK_WRITE	 ? F_WRLCK
		    : l->type == OSDEP_LOCK_READ ? F_RDLCK
						 : F_UNLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = l->start;
	fl.l_len = l->len;
	return fl;
}

static int ce_lock_set(struct nfs_lock_file *f, const struct osdep_lock *l)
{
	struct ce_lock *k = f->priv;
	struct flock fl = to_flock(l);
	int r = ceph_ll_setlk(k->ce->cm, k->fh, &fl, owner_of(k), 0);

	return r == -EWOULDBLOCK ? -EAGAIN : r;
}

static int ce_lock_test(struct nfs_lock_file *f, struct osdep_lock *l)
{
	struct ce_lock *k = f->priv;
	struct flock fl = to_flock(l);
	int r = ceph_ll_getlk(k->ce->cm, k->fh, &fl, owner_of(k));

	if (r < 0)
		return r;
	if (fl.l_type == F_UNLCK) {
		l->type = OSDEP_LOCK_UNLOCK;
		return 0;
	}
	l->type = fl.l_type == F_WRLCK ? OSDEP_LOCK_WRITE : OSDEP_LOCK_READ;
	l->start = fl.l_start;
	l->len = fl.l_len;
	l->pid = fl.l_pid;
	return 0;
}

static void ce_lock_close(struct nfs_lock_file *f)
{
	struct ce_lock *k = f->priv;

	ceph_ll_close(k->ce->cm, k->fh); /* the owner's locks go with it */
	ceph_ll_put(k->ce->cm, k->in);
	ce_lock_files_put(k->ce);
	free(k);
	f->priv = NULL;
}

static const struct nfs_lock_ops ce_lock_ops = {
	.set = ce_lock_set,
	.test = ce_lock_test,
	.close = ce_lock_close,
};

/* The device the lock manager knows a file of ce's at snapshot snap by
 * (with its inode number): one for each file system and snapshot, whatever
 * export reaches it, as inode numbers repeat across file systems and in
 * snapshots. Its top bit set: no local device's number, so never a POSIX
 * export's file. */
static dev_t lock_dev(const struct ceph_export *ce, uint64_t snap)
{
	uint64_t v = ((uint64_t)ce->fscid + 1) * 0x9e3779b97f4a7c15ull ^ snap;

	return (dev_t)(v | 1ull << 63);
}

/* See export.h (be_ceph_ops.open_locked). */
int ce_open_locked(struct nfs_req *req, const nfs_fh3 *fh, int rights, struct nfs_lock_file *out)
{
	struct ce_lock *k = calloc(1, sizeof(*k));
	struct ce_obj o;
	nfsstat3 st;
	int r = -EACCES, ro;

	if (k == NULL)
		return -ENOMEM;
	if ((st = ce_resolve(req, fh, 0, &o)) != NFS3_OK) {
		free(k);
		return be_lock_errno(st);
	}
	st = !S_ISREG(o.st.st_mode) ? NFS3ERR_INVAL
	     : rights && !o.rule.no_auth_nlm && o.uid != o.st.st_uid
		     ? ce_check(&o, R_OK) /* as may_lock */
		     : NFS3_OK;
	if (st != NFS3_OK) {
		ce_release(&o);
		free(k);
		return be_lock_errno(st);
	}
	ro = be_export_check(req, o.exp, BE_MODIFY) != NFS3_OK;
	if (!ro)
		r = ceph_ll_open(o.ce->cm, o.in, O_RDWR, &k->fh, ceph_mount_perms(o.ce->cm));
	if (ro || r == -EACCES || r == -EROFS || r == -EPERM) {
		ro = 1;
		r = ceph_ll_open(o.ce->cm, o.in, O_RDONLY, &k->fh, ceph_mount_perms(o.ce->cm));
	}
	if (r < 0) {
		ce_release(&o);
		free(k);
		return r == -ENOENT ? -ESTALE : r;
	}
	k->ce = o.ce;
	k->in = o.in; /* the open file keeps the inode reference */
	o.in = NULL;
	ce_lock_files_get(k->ce);
	*out = (struct nfs_lock_file){.ops = &ce_lock_ops,
				      .fd = -1,
				      .priv = k,
				      .writable = !ro,
				      .dev = lock_dev(o.ce, o.stx.stx_dev),
				      .ino = o.st.st_ino};
	ce_release(&o);
	return 0;
}
