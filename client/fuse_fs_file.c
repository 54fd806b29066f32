/*
 * fuse_fs_file.c: open files. Opening revalidates the attributes with the
 * server (close-to-open consistency) and asks ACCESS whether the caller may; the
 * kernel's page cache is kept only if the file did not change since the last
 * open. Writes go to the server at once as UNSTABLE WRITEs (FILE_SYNC and
 * DATA_SYNC for O_SYNC and O_DSYNC opens); flush (every close) and fsync
 * COMMIT them, so close() reports a failed write the way NFS does.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "client/fuse_fs.h"

/* The open file behind fi. */
static struct nfsfs_open *of_of(struct fuse_file_info *fi)
{
	return (struct nfsfs_open *)(uintptr_t)fi->fh;
}

/* Whether the kernel may keep its cached pages: same size and mtime as at the
 * last open. Records what this open saw. */
static int keep_cache(struct nfsfs *fs, struct nfsfs_node *n, const fattr3 *a)
{
	int keep;

	pthread_mutex_lock(&fs->lock);
	keep = n->have_open_attrs && n->open_size == a->size &&
	       n->open_mtime.seconds == a->mtime.seconds &&
	       n->open_mtime.nseconds == a->mtime.nseconds;
	n->open_size = a->size;
	n->open_mtime = a->mtime;
	n->have_open_attrs = 1;
	pthread_mutex_unlock(&fs->lock);
	return keep;
}

/* Make the open file for n; wf is taken for openers that may write. */
static struct nfsfs_open *open_new(struct nfsfs *fs, struct nfsfs_node *n,
				   const struct rpc_cred *cr, int flags)
{
	struct nfsfs_open *of = calloc(1, sizeof(*of));

	if (!of)
		return NULL;
	of->node = n;
	of->cred = *cr;
	of->flags = flags;
	if ((flags & O_ACCMODE) != O_RDONLY && !(of->wf = nfs3c_file_get(fs->c, &n->fh))) {
		free(of);
		return NULL;
	}
	nfsfs_open_ref(fs, n);
	return of;
}

/* Close an open file: what it wrote is committed, a hidden name removed on the
 * node's last close; the first error. */
static int open_free(struct nfsfs *fs, struct nfsfs_open *of)
{
	int rc = of->wf ? nfs3c_file_put(fs->c, of->wf, &of->cred) : 0;
	int r2 = nfsfs_open_unref(fs, of->node);

	free(of);
	return rc ? rc : r2;
}

/* What ACCESS must grant for an open with these flags. */
static uint32_t open_access(int flags)
{
	uint32_t want = 0;

	if ((flags & O_ACCMODE) != O_WRONLY)
		want |= ACCESS3_READ;
	if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC))
		want |= ACCESS3_MODIFY;
	return want;
}

/* open: ACCESS (the server's word, root squashing included) with fresh attributes, the
 * truncation of O_TRUNC once ACCESS allowed it (the kernel leaves it to us), then
 * the open file. */
void nfsfs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct nfsfs *fs = nfsfs_of(req);
	struct nfsfs_node *n = nfsfs_node(fs, ino);
	uint32_t want = open_access(fi->flags), got = 0;
	struct nfsfs_open *of;
	struct rpc_cred cr;
	fattr3 a;
	int rc;

	nfsfs_cred(req, &cr);
	/* one call for both: ACCESS's reply carries the attributes, which it puts
	 * in the cache (close-to-open); a GETATTR only if they did not come */
	rc = nfs3c_access(fs->c, &cr, &n->fh, want, &got);
	if (rc == 0)
		rc = nfs3c_getattr(fs->c, &cr, &n->fh, 0, &a);
	if (rc == 0 && a.type == NF3REG && (got & want) != want)
		rc = -EACCES;
	if (rc == 0 && a.type == NF3REG && (fi->flags & O_TRUNC))
		rc = nfsfs_truncate(fs, &cr, &n->fh, 0, &a);
	if (rc)
		return nfsfs_reply_err(req, rc);
	if (!(of = open_new(fs, n, &cr, fi->flags)))
		return nfsfs_reply_err(req, -ENOMEM);
	fi->fh = (uint64_t)(uintptr_t)of;
	fi->direct_io = fs->direct_io;
	fi->keep_cache = !fs->direct_io && keep_cache(fs, n, &a);
	/* close-to-open: the kernel's attributes (its idea of the size) come
	 * from our cache again, which this open has just refreshed */
	if (fs->se)
		fuse_lowlevel_notify_inval_inode(fs->se, ino, -1, 0);
	if (fuse_reply_open(req, fi) != 0)
		open_free(fs, of);
}

/* create: CREATE (EXCLUSIVE for O_EXCL), a node and an open file in one reply. */
void nfsfs_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		  struct fuse_file_info *fi)
{
	struct nfsfs *fs = nfsfs_of(req);
	struct fuse_entry_param e;
	struct nfsfs_open *of;
	struct nfsfs_node *n;
	struct rpc_cred cr;
	struct nfs3c_fh fh;
	fattr3 a;
	int rc;

	nfsfs_cred(req, &cr);
	rc = nfs3c_create(fs->c, &cr, &nfsfs_node(fs, parent)->fh, name, mode,
			  (fi->flags & O_EXCL) != 0, &fh, &a);
	if (rc)
		return nfsfs_reply_err(req, rc);
	if (!(n = nfsfs_node_get(fs, &fh)))
		return nfsfs_reply_err(req, -ENOMEM);
	if (!(of = open_new(fs, n, &cr, fi->flags))) {
		nfsfs_node_forget(fs, n, 1);
		return nfsfs_reply_err(req, -ENOMEM);
	}
	keep_cache(fs, n, &a);
	memset(&e, 0, sizeof(e));
	e.ino = n == fs->root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)n;
	nfsfs_to_stat(&a, &e.attr);
	e.attr_timeout = nfsfs_attr_timeout(fs, &fh);
	e.entry_timeout = fs->entry_timeout;
	fi->fh = (uint64_t)(uintptr_t)of;
	fi->direct_io = fs->direct_io;
	if (fuse_reply_create(req, &e, fi) != 0) {
		open_free(fs, of);
		nfsfs_node_forget(fs, n, 1);
	}
}

/* read: READ into a buffer (where the server can place the data), in rsize
 * pieces. */
void nfsfs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct nfsfs *fs = nfsfs_of(req);
	struct nfsfs_open *of = of_of(fi);
	char *buf = nfs3c_iobuf_get(fs->c, size);
	size_t got = 0;
	int rc;

	if (!buf)
		return nfsfs_reply_err(req, -ENOMEM);
	rc = nfs3c_read(fs->c, &of->cred, &of->node->fh, (uint64_t)off, buf, size, &got, NULL);
	if (rc)
		nfsfs_reply_err(req, rc);
	else
		fuse_reply_buf(req, buf, got);
	nfs3c_iobuf_put(fs->c, buf);
}

/* write: WRITE at once, UNSTABLE unless the open asked for sync. */
void nfsfs_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		 struct fuse_file_info *fi)
{
	struct nfsfs *fs = nfsfs_of(req);
	struct nfsfs_open *of = of_of(fi);
	stable_how how = (of->flags & O_SYNC) == O_SYNC ? FILE_SYNC
			 : (of->flags & O_DSYNC)	? DATA_SYNC
							: UNSTABLE;
	int rc;

	if (!of->wf && !(of->wf = nfs3c_file_get(fs->c, &of->node->fh)))
		return nfsfs_reply_err(req, -ENOMEM);
	rc = nfs3c_write(fs->c, &of->cred, of->wf, (uint64_t)off, buf, size, how);
	if (rc)
		return nfsfs_reply_err(req, rc);
	fuse_reply_write(req, size);
}

/* Commit what this file has uncommitted. */
static int commit_of(struct nfsfs *fs, struct nfsfs_open *of)
{
	return of->wf ? nfs3c_commit(fs->c, &of->cred, of->wf) : 0;
}

/* flush (each close): COMMIT, so close reports lost writes. */
void nfsfs_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct nfsfs *fs = nfsfs_of(req);
	int rc = commit_of(fs, of_of(fi));

	(void)nfsfs_locks_close(fs, ino, fi); /* the closing process's locks go */
	nfsfs_reply_err(req, rc);
}

/* fsync: COMMIT. */
void nfsfs_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	nfsfs_reply_err(req, commit_of(nfsfs_of(req), of_of(fi)));
}

/* release: the last close of this open; commits what is left and frees it. */
void nfsfs_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct nfsfs *fs = nfsfs_of(req);

	if (fi->flock_release)
		(void)nfsfs_locks_close(fs, ino, fi); /* the open file's flock lock */
	nfsfs_reply_err(req, open_free(fs, of_of(fi)));
}
