/*
 * fuse_fs.h: the NFSv3 client as a FUSE low-level file system. Each FUSE node
 * is one NFS file handle; requests run on libfuse's worker threads and become
 * NFS calls made with the requesting process's uid, gid and groups.
 */
#ifndef NFSRDMA_FUSE_FS_H
#define NFSRDMA_FUSE_FS_H

#define FUSE_USE_VERSION 32
#include <fuse_lowlevel.h>
#include <pthread.h>

#include "client/nfs3_clnt.h"

#define NFSFS_NODE_BUCKETS 4096

struct nfsfs_node;

struct nfsfs {
	struct nfs3c *c;
	struct fuse_session *se; /* for notifications to the kernel */
	int direct_io;
	int noac;
	double entry_timeout; /* seconds a name -> node mapping may be cached */
	pthread_mutex_t lock; /* the node table */
	struct nfsfs_node *nodes[NFSFS_NODE_BUCKETS];
	struct nfsfs_node *root;
	size_t nnodes;
	unsigned nopen;	    /* open files on the mount */
	unsigned silly_seq; /* the counter in hidden names */
	struct nlmc *nlm;   /* the server's lock manager; NULL: nolock */
};

/* The operations table, and the file system around a mounted client. */
extern const struct fuse_lowlevel_ops nfsfs_ops;
int nfsfs_init(struct nfsfs *fs, struct nfs3c *c, int direct_io, int noac, unsigned acdirmin);
void nfsfs_fini(struct nfsfs *fs);

/* Internal to fuse_fs*.c: nodes, credentials, replies. */

/* Where a file unlinked while open hides until its last close (fuse_fs_silly.c). */
struct nfsfs_silly {
	struct nfs3c_fh dir;
	char name[40]; /* "" while not hidden */
	struct rpc_cred cred;
};

struct nfsfs_node {
	struct nfsfs_node *next;
	struct nfs3c_fh fh;
	uint64_t nlookup;
	/* what the last open saw, to keep the kernel's page cache across opens */
	uint64_t open_size;
	nfstime3 open_mtime;
	int have_open_attrs;
	unsigned nopen; /* open files */
	struct nfsfs_silly silly;
};

/* An open file: its node, its write state, and the opener's credential. */
struct nfsfs_open {
	struct nfsfs_node *node;
	struct nfs3c_file *wf; /* NULL for read-only opens until a write comes */
	struct rpc_cred cred;
	int flags;
};

struct nfsfs *nfsfs_of(fuse_req_t req);
struct nfsfs_node *nfsfs_node(struct nfsfs *fs, fuse_ino_t ino);
/* The node for fh, its lookup count raised by one. */
struct nfsfs_node *nfsfs_node_get(struct nfsfs *fs, const struct nfs3c_fh *fh);
void nfsfs_node_forget(struct nfsfs *fs, struct nfsfs_node *n, uint64_t nlookup);
void nfsfs_cred(fuse_req_t req, struct rpc_cred *cr);
void nfsfs_to_stat(const fattr3 *a, struct stat *st);
double nfsfs_attr_timeout(struct nfsfs *fs, const struct nfs3c_fh *fh);
/* Reply with a new entry (lookup count raised), or the error. */
void nfsfs_reply_entry(fuse_req_t req, struct nfsfs *fs, int rc, const struct nfs3c_fh *fh,
		       const fattr3 *a);
void nfsfs_reply_err(fuse_req_t req, int rc);
/* SETATTR of the size, after committing what is uncommitted. */
int nfsfs_truncate(struct nfsfs *fs, const struct rpc_cred *cr, const struct nfs3c_fh *fh,
		   uint64_t size, fattr3 *a);

/* Open files per node, and silly rename (fuse_fs_silly.c). */
void nfsfs_open_ref(struct nfsfs *fs, struct nfsfs_node *n);
/* The last close of a hidden file removes it; the REMOVE's error, if any. */
int nfsfs_open_unref(struct nfsfs *fs, struct nfsfs_node *n);
/* Before name in dir is unlinked or renamed over: if it is a file open here
 * (and not keep, the file renamed onto it), rename it to a hidden name.
 * 1 if it was hidden (nothing left to remove), 0 if not open, or -errno. */
int nfsfs_silly_rename(struct nfsfs *fs, const struct rpc_cred *cr, const struct nfs3c_fh *dir,
		       const char *name, const struct nfs3c_fh *keep);
void nfsfs_silly_cleanup(struct nfsfs *fs);
nlink_t nfsfs_nlink(struct nfsfs *fs, struct nfsfs_node *n, const fattr3 *a);

/* Operations in fuse_fs_file.c and fuse_fs_dir.c. */
void nfsfs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void nfsfs_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		  struct fuse_file_info *fi);
void nfsfs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi);
void nfsfs_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		 struct fuse_file_info *fi);
void nfsfs_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void nfsfs_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi);
void nfsfs_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void nfsfs_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void nfsfs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		   struct fuse_file_info *fi);
void nfsfs_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi);
void nfsfs_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);

/* Locks through the server's NLM (fuse_fs_lock.c): add getlk, setlk and flock
 * to ops (a mount without them has the kernel's local locks); and at a close,
 * drop what the closing owner holds on the file. */
struct nlmc;
void nfsfs_ops_locks(struct fuse_lowlevel_ops *ops);
int nfsfs_locks_close(struct nfsfs *fs, fuse_ino_t ino, struct fuse_file_info *fi);

#endif
