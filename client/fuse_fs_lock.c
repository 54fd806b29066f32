/*
 * fuse_fs_lock.c: fcntl and flock locks on the mount through the server's
 * lock manager (client/nlm_clnt.c), unless the mount says nolock (then these
 * operations are not offered and the kernel keeps locks, local to this mount).
 * fcntl locks belong to the kernel's lock owner (one per process); flock
 * locks are whole-file locks of the open file, as the Linux NFS client
 * emulates them, so the two kinds conflict. flush (every close) drops the
 * closing process's locks on the file, as POSIX says; release drops an open
 * file's flock lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>

#include "client/fuse_fs.h"
#include "client/nlm_clnt.h"

/* A blocking request's interruption: FUSE calls on_interrupt from another thread. */
struct lock_intr {
	fuse_req_t req;
	struct nlmc *nlm;
	struct nlmc_wait *w;
};

static void on_interrupt(fuse_req_t req, void *data)
{
	struct lock_intr *li = data;

	(void)req;
	nlmc_interrupt(li->nlm, li->w);
}

/* nlmc_lock's wait begins (w) or ends (NULL). */
static void waiting(void *arg, struct nlmc_wait *w)
{
	struct lock_intr *li = arg;

	li->w = w;
	if (w)
		fuse_req_interrupt_func(li->req, on_interrupt, li);
	else
		fuse_req_interrupt_func(li->req, NULL, NULL);
}

/* The NLM lock a FUSE lock request names, made for the file's opener (its
 * credential into *cr), as Linux's client sends it: the server checks its
 * right to the file. FUSE asks only for regular files, whose fi->fh is
 * their open file; without one, the process asking. */
static struct nlmc_lock lock_of(fuse_req_t req, struct nfsfs *fs, fuse_ino_t ino,
				const struct fuse_file_info *fi, const struct flock *lock,
				struct rpc_cred *cr)
{
	const struct nfsfs_open *of = (const struct nfsfs_open *)(uintptr_t)fi->fh;

	if (of)
		*cr = of->cred;
	else
		nfsfs_cred(req, cr);
	return (struct nlmc_lock){.fh = &nfsfs_node(fs, ino)->fh,
				  .owner = fi->lock_owner,
				  .svid = (uint32_t)lock->l_pid,
				  .type = lock->l_type,
				  .start = (uint64_t)lock->l_start,
				  .len = (uint64_t)lock->l_len,
				  .cred = cr};
}

/* getlk: TEST. */
static void op_getlk(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, struct flock *lock)
{
	struct nfsfs *fs = nfsfs_of(req);
	struct rpc_cred cr;
	struct nlmc_lock l = lock_of(req, fs, ino, fi, lock, &cr);
	struct flock out;
	pid_t pid;
	int rc = nlmc_test(fs->nlm, &l, &pid);

	if (rc) {
		fuse_reply_err(req, -rc);
		return;
	}
	memset(&out, 0, sizeof(out));
	out.l_type = (short)l.type;
	out.l_whence = SEEK_SET;
	if (l.type != F_UNLCK) {
		out.l_start = (off_t)l.start;
		out.l_len = l.len > INT64_MAX ? 0 : (off_t)l.len;
		out.l_pid = pid;
	}
	fuse_reply_lock(req, &out);
}

/* One lock or unlock of l on ino, waiting if asked. A lock taken is a point
 * of coherence, as in Linux's client: what other clients wrote before they
 * let go is read after it, so the file's attributes and the kernel's pages of
 * it are dropped. */
static int set_lock(fuse_req_t req, struct nfsfs *fs, fuse_ino_t ino, struct nlmc_lock *l,
		    int sleep)
{
	struct lock_intr li = {.req = req, .nlm = fs->nlm};
	int rc;

	if (l->type == F_UNLCK)
		return nlmc_unlock(fs->nlm, l);
	rc = nlmc_lock(fs->nlm, l, sleep, waiting, &li);
	if (rc == 0) {
		nfs3c_attr_forget(fs->c, l->fh);
		if (fs->se)
			fuse_lowlevel_notify_inval_inode(fs->se, ino, 0, 0);
	}
	return rc;
}

/* setlk: LOCK (block when sleep) or UNLOCK. */
static void op_setlk(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, struct flock *lock,
		     int sleep)
{
	struct nfsfs *fs = nfsfs_of(req);
	struct rpc_cred cr;
	struct nlmc_lock l = lock_of(req, fs, ino, fi, lock, &cr);

	if (lock->l_start < 0 || lock->l_len < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	fuse_reply_err(req, -set_lock(req, fs, ino, &l, sleep));
}

/* flock: a whole-file lock of the open file. */
static void op_flock(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, int op)
{
	struct nfsfs *fs = nfsfs_of(req);
	int how = op & ~LOCK_NB;
	struct flock whole = {.l_type = how == LOCK_SH	 ? F_RDLCK
					: how == LOCK_EX ? F_WRLCK
							 : F_UNLCK,
			      .l_pid = fuse_req_ctx(req)->pid};
	struct rpc_cred cr;
	struct nlmc_lock l = lock_of(req, fs, ino, fi, &whole, &cr);

	if (how != LOCK_SH && how != LOCK_EX && how != LOCK_UN) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	fuse_reply_err(req, -set_lock(req, fs, ino, &l, !(op & LOCK_NB)));
}

/* See fuse_fs.h. */
int nfsfs_locks_close(struct nfsfs *fs, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (fs->nlm == NULL)
		return 0;
	return nlmc_release_owner(fs->nlm, &nfsfs_node(fs, ino)->fh, fi->lock_owner);
}

/* See fuse_fs.h. */
void nfsfs_ops_locks(struct fuse_lowlevel_ops *ops)
{
	ops->getlk = op_getlk;
	ops->setlk = op_setlk;
	ops->flock = op_flock;
}
