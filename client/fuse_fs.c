/*
 * fuse_fs.c: the FUSE low-level file system: the node table (FUSE node id ->
 * NFS handle, with the kernel's lookup counts), credentials, attributes, and
 * the operations on names. Files and directories are in fuse_fs_file.c and
 * fuse_fs_dir.c.
 *
 * A node id is the node's address (the root is FUSE_ROOT_ID); a node lives
 * until the kernel forgets every lookup of it. The same handle always maps to
 * the same node, so hard links share one.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "client/fuse_fs.h"
#include "common/base/log.h"

/* rename's flags are the FUSE protocol's (Linux's renameat2 values), whatever
 * the host's own headers say. */
#define FUSE_RENAME_NOREPLACE (1u << 0)

/* The file system a request is for. Every operation starts here, so this is
 * also where the calls the thread makes next are told whose they are: a
 * killed caller's give up (nfs3c_caller_set). */
struct nfsfs *nfsfs_of(fuse_req_t req)
{
	struct nfsfs *fs = fuse_req_userdata(req);

	(void)nfs3c_caller_set((int)fuse_req_ctx(req)->pid);
	return fs;
}

/* The node behind a FUSE node id. */
struct nfsfs_node *nfsfs_node(struct nfsfs *fs, fuse_ino_t ino)
{
	return ino == FUSE_ROOT_ID ? fs->root : (struct nfsfs_node *)(uintptr_t)ino;
}

/* The FUSE node id of n. */
static fuse_ino_t node_ino(struct nfsfs *fs, struct nfsfs_node *n)
{
	return n == fs->root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)n;
}

/* See fuse_fs.h: find or add the node of fh. */
struct nfsfs_node *nfsfs_node_get(struct nfsfs *fs, const struct nfs3c_fh *fh)
{
	unsigned b = nfs3c_fh_hash(fh) % NFSFS_NODE_BUCKETS;
	struct nfsfs_node *n;

	pthread_mutex_lock(&fs->lock);
	for (n = fs->nodes[b]; n; n = n->next)
		if (nfs3c_fh_equal(&n->fh, fh))
			break;
	if (!n && (n = calloc(1, sizeof(*n))) != NULL) {
		n->fh = *fh;
		n->next = fs->nodes[b];
		fs->nodes[b] = n;
		fs->nnodes++;
	}
	if (n)
		n->nlookup++;
	pthread_mutex_unlock(&fs->lock);
	return n;
}

/* Drop nlookup of the kernel's lookups; the last one frees the node (never the root). */
void nfsfs_node_forget(struct nfsfs *fs, struct nfsfs_node *n, uint64_t nlookup)
{
	unsigned b = nfs3c_fh_hash(&n->fh) % NFSFS_NODE_BUCKETS;
	int gone = 0;

	pthread_mutex_lock(&fs->lock);
	n->nlookup = nlookup > n->nlookup ? 0 : n->nlookup - nlookup;
	if (n->nlookup == 0 && n != fs->root) {
		for (struct nfsfs_node **pp = &fs->nodes[b]; *pp; pp = &(*pp)->next) {
			if (*pp == n) {
				*pp = n->next;
				break;
			}
		}
		fs->nnodes--;
		gone = 1;
	}
	pthread_mutex_unlock(&fs->lock);
	if (gone)
		free(n);
}

/* The requesting process's uid, gid and groups, as an AUTH_SYS credential. */
void nfsfs_cred(fuse_req_t req, struct rpc_cred *cr)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	gid_t groups[RPC_MAX_GIDS];
	int n = fuse_req_getgroups(req, RPC_MAX_GIDS, groups);

	memset(cr, 0, sizeof(*cr));
	cr->flavor = AUTH_SYS;
	cr->uid = ctx->uid;
	cr->gid = ctx->gid;
	if (n > RPC_MAX_GIDS)
		n = RPC_MAX_GIDS;
	for (int i = 0; i < n; i++)
		cr->gids[cr->ngids++] = groups[i];
}

/* NFS attributes as struct stat (st_ino is the file id, shared by hard links). */
void nfsfs_to_stat(const fattr3 *a, struct stat *st)
{
	static const mode_t types[] = {
		[NF3REG] = S_IFREG, [NF3DIR] = S_IFDIR,	  [NF3BLK] = S_IFBLK, [NF3CHR] = S_IFCHR,
		[NF3LNK] = S_IFLNK, [NF3SOCK] = S_IFSOCK, [NF3FIFO] = S_IFIFO};

	memset(st, 0, sizeof(*st));
	st->st_ino = a->fileid;
	st->st_mode = ((unsigned)a->type < sizeof(types) / sizeof(types[0]) ? types[a->type] : 0) |
		      (a->mode & 07777);
	st->st_nlink = a->nlink;
	st->st_uid = a->uid;
	st->st_gid = a->gid;
	st->st_size = (off_t)a->size;
	st->st_blocks = (blkcnt_t)((a->used + 511) / 512);
	st->st_blksize = 65536;
	st->st_rdev = makedev(a->rdev.specdata1, a->rdev.specdata2);
	st->st_atim.tv_sec = a->atime.seconds;
	st->st_atim.tv_nsec = a->atime.nseconds;
	st->st_mtim.tv_sec = a->mtime.seconds;
	st->st_mtim.tv_nsec = a->mtime.nseconds;
	st->st_ctim.tv_sec = a->ctime.seconds;
	st->st_ctim.tv_nsec = a->ctime.nseconds;
}

/* Seconds the kernel may keep the attributes: what our cache still gives them. */
double nfsfs_attr_timeout(struct nfsfs *fs, const struct nfs3c_fh *fh)
{
	return fs->noac ? 0.0 : nfs3c_attr_valid_ms(fs->c, fh) / 1000.0;
}

/* Reply with a negative (or positive) errno; 0 is success. */
void nfsfs_reply_err(fuse_req_t req, int rc)
{
	fuse_reply_err(req, rc < 0 ? -rc : rc);
}

/* See fuse_fs.h. */
void nfsfs_reply_entry(fuse_req_t req, struct nfsfs *fs, int rc, const struct nfs3c_fh *fh,
		       const fattr3 *a)
{
	struct fuse_entry_param e;
	struct nfsfs_node *n;

	if (rc)
		return nfsfs_reply_err(req, rc);
	if (!(n = nfsfs_node_get(fs, fh)))
		return nfsfs_reply_err(req, -ENOMEM);
	memset(&e, 0, sizeof(e));
	e.ino = node_ino(fs, n);
	nfsfs_to_stat(a, &e.attr);
	e.attr_timeout = nfsfs_attr_timeout(fs, fh);
	e.entry_timeout = fs->entry_timeout;
	if (fuse_reply_entry(req, &e) != 0)
		nfsfs_node_forget(fs, n, 1); /* the kernel never saw it */
}

/* ---- operations on nodes and names ---- */

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	struct nfsfs *fs = userdata;
	unsigned w = nfs3c_wsize(fs->c);

	conn->max_write = w < (1u << 20) ? (w < 4096 ? 4096 : w) : (1u << 20);
	/* open truncates after its ACCESS check (fuse_fs_file.c), as one step */
	if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
		conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
}

/* lookup: LOOKUP, and a node for the kernel. */
static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct nfsfs *fs = nfsfs_of(req);
	struct rpc_cred cr;
	struct nfs3c_fh fh;
	fattr3 a;
	int rc;

	nfsfs_cred(req, &cr);
	rc = nfs3c_lookup(fs->c, &cr, &nfsfs_node(fs, parent)->fh, name, &fh, &a);
	nfsfs_reply_entry(req, fs, rc, &fh, &a);
}

/* forget: the kernel dropped nlookup references. */
static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	struct nfsfs *fs = nfsfs_of(req);

	nfsfs_node_forget(fs, nfsfs_node(fs, ino), nlookup);
	fuse_reply_none(req);
}

/* forget for many nodes at once. */
static void op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	struct nfsfs *fs = nfsfs_of(req);

	for (size_t i = 0; i < count; i++)
		nfsfs_node_forget(fs, nfsfs_node(fs, forgets[i].ino), forgets[i].nlookup);
	fuse_reply_none(req);
}

/* Reply to getattr/setattr with a's attributes. */
static void reply_attr(fuse_req_t req, struct nfsfs *fs, struct nfsfs_node *n, const fattr3 *a)
{
	struct stat st;

	nfsfs_to_stat(a, &st);
	st.st_nlink = nfsfs_nlink(fs, n, a);
	fuse_reply_attr(req, &st, nfsfs_attr_timeout(fs, &n->fh));
}

/* getattr: from the attribute cache, else GETATTR. */
static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct nfsfs *fs = nfsfs_of(req);
	struct nfsfs_node *n = nfsfs_node(fs, ino);
	struct rpc_cred cr;
	fattr3 a;
	int rc;

	nfsfs_cred(req, &cr);
	rc = nfs3c_getattr(fs->c, &cr, &n->fh, 0, &a);
	if (rc)
		return nfsfs_reply_err(req, rc);
	reply_attr(req, fs, n, &a);
}

/* A FUSE time into an NFS settable time. */
static void set_time(int now, int given, const struct timespec *ts, time_how *how, nfstime3 *t)
{
	if (now) {
		*how = SET_TO_SERVER_TIME;
	} else if (given) {
		/* NFSv3 seconds are unsigned 32 bits: clamped, as the Linux client does */
		*how = SET_TO_CLIENT_TIME;
		t->seconds = ts->tv_sec < 0	       ? 0
			     : ts->tv_sec > UINT32_MAX ? UINT32_MAX
						       : (uint32_t)ts->tv_sec;
		t->nseconds = (uint32_t)ts->tv_nsec;
	} else {
		*how = DONT_CHANGE;
	}
}

/* Before a size change, commit what is uncommitted: a resend after a server
 * restart must not bring back bytes past the new end. */
static int commit_before_truncate(struct nfsfs *fs, const struct rpc_cred *cr,
				  const struct nfs3c_fh *fh)
{
	struct nfs3c_file *f = nfs3c_file_get(fs->c, fh);
	int rc;

	if (!f)
		return -ENOMEM;
	rc = nfs3c_commit(fs->c, cr, f);
	nfs3c_file_put(fs->c, f, cr);
	return rc;
}

/* See fuse_fs.h. */
int nfsfs_truncate(struct nfsfs *fs, const struct rpc_cred *cr, const struct nfs3c_fh *fh,
		   uint64_t size, fattr3 *a)
{
	sattr3 s;
	int rc = commit_before_truncate(fs, cr, fh);

	memset(&s, 0, sizeof(s));
	s.size.set_it = 1;
	s.size.set_size3_u.size = size;
	return rc ? rc : nfs3c_setattr(fs->c, cr, fh, &s, a);
}

/* Whether a SETATTR is the kernel dropping setuid/setgid before a write or
 * truncate by a caller without CAP_FSETID (it sends one even with
 * FUSE_CAP_HANDLE_KILLPRIV, which libfuse turns on): the mode alone, as cached
 * less those bits, asked by someone who is neither the owner nor root (the
 * kernel lets no one else chmod: default_permissions). The server refuses that
 * chmod to anyone but the owner, and drops the bits itself when it writes or
 * truncates as such a caller; *a becomes the attributes the file will have. */
static int is_kill_priv(struct nfsfs *fs, const struct rpc_cred *cr, const struct nfs3c_fh *fh,
			const struct stat *attr, int to_set, fattr3 *a)
{
	const mode_t priv = S_ISUID | S_ISGID;

	if (to_set != FUSE_SET_ATTR_MODE || cr->uid == 0 ||
	    nfs3c_getattr(fs->c, cr, fh, 0, a) != 0 || a->uid == cr->uid || !(a->mode & priv) ||
	    (attr->st_mode & 07777) != (a->mode & 07777 & ~priv) || (attr->st_mode & priv))
		return 0;
	a->mode &= ~priv;
	nfs3c_attr_forget(fs->c, fh);
	return 1;
}

/* setattr: chmod, chown, truncate and utimes as one SETATTR. */
static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	struct nfsfs *fs = nfsfs_of(req);
	struct nfsfs_node *n = nfsfs_node(fs, ino);
	struct nfs3c_fh *fh = &n->fh;
	struct rpc_cred cr;
	sattr3 s;
	fattr3 a;
	int rc = 0;

	nfsfs_cred(req, &cr);
	if (is_kill_priv(fs, &cr, fh, attr, to_set, &a))
		return reply_attr(req, fs, n, &a);
	memset(&s, 0, sizeof(s));
	if ((s.mode.set_it = (to_set & FUSE_SET_ATTR_MODE) != 0))
		s.mode.set_mode3_u.mode = attr->st_mode & 07777;
	if ((s.uid.set_it = (to_set & FUSE_SET_ATTR_UID) != 0))
		s.uid.set_uid3_u.uid = attr->st_uid;
	if ((s.gid.set_it = (to_set & FUSE_SET_ATTR_GID) != 0))
		s.gid.set_gid3_u.gid = attr->st_gid;
	if ((s.size.set_it = (to_set & FUSE_SET_ATTR_SIZE) != 0)) {
		s.size.set_size3_u.size = (uint64_t)attr->st_size;
		rc = commit_before_truncate(fs, &cr, fh);
	}
	set_time(to_set & FUSE_SET_ATTR_ATIME_NOW, to_set & FUSE_SET_ATTR_ATIME, &attr->st_atim,
		 &s.atime.set_it, &s.atime.set_atime_u.atime);
	set_time(to_set & FUSE_SET_ATTR_MTIME_NOW, to_set & FUSE_SET_ATTR_MTIME, &attr->st_mtim,
		 &s.mtime.set_it, &s.mtime.set_mtime_u.mtime);
	if (rc == 0)
		rc = nfs3c_setattr(fs->c, &cr, fh, &s, &a);
	if (rc)
		return nfsfs_reply_err(req, rc);
	reply_attr(req, fs, n, &a);
}

/* readlink: READLINK. */
static void op_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct nfsfs *fs = nfsfs_of(req);
	char buf[NFS3_MAXPATHLEN + 1];
	struct rpc_cred cr;
	int rc;

	nfsfs_cred(req, &cr);
	rc = nfs3c_readlink(fs->c, &cr, &nfsfs_node(fs, ino)->fh, buf, sizeof(buf));
	if (rc)
		return nfsfs_reply_err(req, rc);
	fuse_reply_readlink(req, buf);
}

/* mknod: regular files by CREATE, devices, FIFOs and sockets by MKNOD. */
static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	struct nfsfs *fs = nfsfs_of(req);
	const struct nfs3c_fh *dir = &nfsfs_node(fs, parent)->fh;
	struct rpc_cred cr;
	struct nfs3c_fh fh;
	fattr3 a;
	ftype3 t;
	int rc;

	nfsfs_cred(req, &cr);
	switch (mode & S_IFMT) {
	case S_IFREG:
		rc = nfs3c_create(fs->c, &cr, dir, name, mode, 1, &fh, &a);
		return nfsfs_reply_entry(req, fs, rc, &fh, &a);
	case S_IFCHR:
		t = NF3CHR;
		break;
	case S_IFBLK:
		t = NF3BLK;
		break;
	case S_IFIFO:
		t = NF3FIFO;
		break;
	case S_IFSOCK:
		t = NF3SOCK;
		break;
	default:
		return nfsfs_reply_err(req, -EINVAL);
	}
	rc = nfs3c_mknod(fs->c, &cr, dir, name, t, mode, major(rdev), minor(rdev), &fh, &a);
	nfsfs_reply_entry(req, fs, rc, &fh, &a);
}

/* mkdir: MKDIR. */
static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	struct nfsfs *fs = nfsfs_of(req);
	struct rpc_cred cr;
	struct nfs3c_fh fh;
	fattr3 a;
	int rc;

	nfsfs_cred(req, &cr);
	rc = nfs3c_mkdir(fs->c, &cr, &nfsfs_node(fs, parent)->fh, name, mode, &fh, &a);
	nfsfs_reply_entry(req, fs, rc, &fh, &a);
}

/* symlink: SYMLINK. */
static void op_symlink(fuse_req_t req, const char *target, fuse_ino_t parent, const char *name)
{
	struct nfsfs *fs = nfsfs_of(req);
	struct rpc_cred cr;
	struct nfs3c_fh fh;
	fattr3 a;
	int rc;

	nfsfs_cred(req, &cr);
	rc = nfs3c_symlink(fs->c, &cr, &nfsfs_node(fs, parent)->fh, name, target, &fh, &a);
	nfsfs_reply_entry(req, fs, rc, &fh, &a);
}

/* unlink: REMOVE, or a rename to a hidden name while the file is open here. */
static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct nfsfs *fs = nfsfs_of(req);
	const struct nfs3c_fh *dir = &nfsfs_node(fs, parent)->fh;
	struct rpc_cred cr;
	int rc;

	nfsfs_cred(req, &cr);
	rc = nfsfs_silly_rename(fs, &cr, dir, name, NULL);
	if (rc == 0)
		rc = nfs3c_remove(fs->c, &cr, dir, name);
	nfsfs_reply_err(req, rc > 0 ? 0 : rc);
}

/* rmdir: RMDIR. */
static void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct nfsfs *fs = nfsfs_of(req);
	struct rpc_cred cr;

	nfsfs_cred(req, &cr);
	nfsfs_reply_err(req, nfs3c_rmdir(fs->c, &cr, &nfsfs_node(fs, parent)->fh, name));
}

/* rename: RENAME; RENAME_NOREPLACE by a LOOKUP first, RENAME_EXCHANGE refused.
 * A target open here is hidden first (silly rename), so that it stays usable. */
static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		      const char *newname, unsigned int flags)
{
	struct nfsfs *fs = nfsfs_of(req);
	const struct nfs3c_fh *from = &nfsfs_node(fs, parent)->fh;
	const struct nfs3c_fh *to = &nfsfs_node(fs, newparent)->fh;
	struct rpc_cred cr;
	struct nfs3c_fh fh;
	int rc = 0;

	nfsfs_cred(req, &cr);
	if (flags & ~(unsigned)FUSE_RENAME_NOREPLACE)
		return nfsfs_reply_err(req, -EINVAL); /* RENAME_EXCHANGE: NFSv3 has none */
	if (flags & FUSE_RENAME_NOREPLACE) {
		rc = nfs3c_lookup(fs->c, &cr, to, newname, &fh, NULL);
		if (rc != -ENOENT)
			return nfsfs_reply_err(req, rc ? rc : -EEXIST);
		rc = 0;
	} else if (__atomic_load_n(&fs->nopen, __ATOMIC_RELAXED) > 0 &&
		   nfs3c_lookup(fs->c, &cr, from, name, &fh, NULL) == 0) {
		rc = nfsfs_silly_rename(fs, &cr, to, newname, &fh);
	}
	if (rc >= 0)
		rc = nfs3c_rename(fs->c, &cr, from, name, to, newname);
	nfsfs_reply_err(req, rc);
}

/* link: LINK, the same node under one more name. */
static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	struct nfsfs *fs = nfsfs_of(req);
	const struct nfs3c_fh *fh = &nfsfs_node(fs, ino)->fh;
	struct rpc_cred cr;
	fattr3 a;
	int rc;

	nfsfs_cred(req, &cr);
	rc = nfs3c_link(fs->c, &cr, fh, &nfsfs_node(fs, newparent)->fh, newname, &a);
	nfsfs_reply_entry(req, fs, rc, fh, &a);
}

/* statfs: FSSTAT in 4 KiB blocks. */
static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct nfsfs *fs = nfsfs_of(req);
	struct statvfs sv;
	struct rpc_cred cr;
	FSSTAT3resok r;
	int rc;

	nfsfs_cred(req, &cr);
	rc = nfs3c_fsstat(fs->c, &cr, &nfsfs_node(fs, ino)->fh, &r);
	if (rc)
		return nfsfs_reply_err(req, rc);
	memset(&sv, 0, sizeof(sv));
	sv.f_bsize = sv.f_frsize = 4096;
	sv.f_blocks = r.tbytes / 4096;
	sv.f_bfree = r.fbytes / 4096;
	sv.f_bavail = r.abytes / 4096;
	sv.f_files = r.tfiles;
	sv.f_ffree = r.ffiles;
	sv.f_favail = r.afiles;
	sv.f_namemax = NFS3_MAXNAMLEN;
	fuse_reply_statfs(req, &sv);
}

/* access: ACCESS with the caller's credential (F_OK: the file exists). */
static void op_access(fuse_req_t req, fuse_ino_t ino, int mask)
{
	struct nfsfs *fs = nfsfs_of(req);
	const struct nfs3c_fh *fh = &nfsfs_node(fs, ino)->fh;
	uint32_t want = 0, got = 0;
	struct rpc_cred cr;
	fattr3 a;
	int rc;

	nfsfs_cred(req, &cr);
	if (mask == F_OK)
		return nfsfs_reply_err(req, nfs3c_getattr(fs->c, &cr, fh, 0, &a));
	if (mask & R_OK)
		want |= ACCESS3_READ;
	if (mask & W_OK)
		want |= ACCESS3_MODIFY | ACCESS3_EXTEND;
	if (mask & X_OK)
		want |= ACCESS3_EXECUTE | ACCESS3_LOOKUP;
	rc = nfs3c_access(fs->c, &cr, fh, want, &got);
	if (rc == 0 && (((mask & R_OK) && !(got & ACCESS3_READ)) ||
			((mask & W_OK) && !(got & (ACCESS3_MODIFY | ACCESS3_EXTEND))) ||
			((mask & X_OK) && !(got & (ACCESS3_EXECUTE | ACCESS3_LOOKUP)))))
		rc = -EACCES;
	nfsfs_reply_err(req, rc);
}

const struct fuse_lowlevel_ops nfsfs_ops = {
	.init = op_init,
	.lookup = op_lookup,
	.forget = op_forget,
	.forget_multi = op_forget_multi,
	.getattr = op_getattr,
	.setattr = op_setattr,
	.readlink = op_readlink,
	.mknod = op_mknod,
	.mkdir = op_mkdir,
	.symlink = op_symlink,
	.unlink = op_unlink,
	.rmdir = op_rmdir,
	.rename = op_rename,
	.link = op_link,
	.open = nfsfs_open,
	.create = nfsfs_create,
	.read = nfsfs_read,
	.write = nfsfs_write,
	.flush = nfsfs_flush,
	.fsync = nfsfs_fsync,
	.release = nfsfs_release,
	.opendir = nfsfs_opendir,
	.readdir = nfsfs_readdir,
	.readdirplus = nfsfs_readdirplus,
	.releasedir = nfsfs_releasedir,
	.statfs = op_statfs,
	.access = op_access,
};

/* See fuse_fs.h: the root node comes from the mounted handle. */
int nfsfs_init(struct nfsfs *fs, struct nfs3c *c, int direct_io, int noac, unsigned acdirmin)
{
	memset(fs, 0, sizeof(*fs));
	fs->c = c;
	fs->direct_io = direct_io;
	fs->noac = noac;
	fs->entry_timeout = noac ? 0.0 : (double)acdirmin;
	pthread_mutex_init(&fs->lock, NULL);
	fs->root = nfsfs_node_get(fs, nfs3c_root(c));
	return fs->root ? 0 : -ENOMEM;
}

/* Free every node; the session is gone. */
void nfsfs_fini(struct nfsfs *fs)
{
	for (unsigned b = 0; b < NFSFS_NODE_BUCKETS; b++) {
		while (fs->nodes[b]) {
			struct nfsfs_node *n = fs->nodes[b];

			fs->nodes[b] = n->next;
			free(n);
		}
	}
	pthread_mutex_destroy(&fs->lock);
}
