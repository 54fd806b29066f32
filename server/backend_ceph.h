/*
 * backend_ceph.h: what the CephFS backend's files share (backend_ceph*.c):
 * an export's libcephfs mount, an object a handle resolved to (an Inode
 * reference, its attributes, the caller's UserPerm), handles made from what
 * the cluster names, attributes from struct ceph_statx, and the procedures
 * be_ceph_ops (backend_ceph.c) lists. Every call here blocks on the cluster:
 * they run on the worker pool only (nfs3_procs).
 */
#ifndef NFSRDMA_BACKEND_CEPH_H
#define NFSRDMA_BACKEND_CEPH_H

#include <pthread.h>

#include <cephfs/libcephfs.h>

#include "server/fhcache.h"
#include "server/nfs3_proc.h"

/* The attributes every call asks for. */
#define CE_WANT (CEPH_STATX_BASIC_STATS)
/* The snapshot number of a .snap directory (libcephfs has CEPH_NOSNAP only). */
#define CE_SNAPDIR ((uint64_t)-1)

/* An export's mount of the cluster. */
struct ceph_export {
	struct ceph_mount_info *cm;
	Inode *root;
	uint64_t root_ino, root_snap;
	int64_t fscid;	    /* the filesystem's id in the cluster: in every handle */
	unsigned timeout_s; /* ceph.mount_timeout_s: also bounds the unmount's wait */
	/* the unmount (ce_close): done under lock, signalled on cond */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int unmounted, abandoned;
	unsigned lock_files; /* under lock: the lock manager's open files */
	int retired;	     /* under lock: closed; the last lock file unmounts */
	/* the files READ and WRITE keep open (backend_ceph_files.c); NULL: none */
	struct fhcache *files;
	pthread_t sweeper;	   /* closes the idle ones; stops on sweep_stop (under lock) */
	pthread_cond_t sweep_cond; /* CLOCK_MONOTONIC */
	int sweep_stop;
};

/* An object a handle resolved to, with the caller's identity on its export. */
struct ce_obj {
	struct export *exp;
	struct ceph_export *ce;
	Inode *in;
	struct ceph_statx stx;
	struct stat st;		     /* stx as struct stat, for the shared attribute code */
	struct nfs_client_rule rule; /* what the export grants the caller */
	UserPerm *perm;
	uid_t uid; /* after squashing */
	gid_t gid;
	size_t ngids;
	gid_t gids[NFS_CRED_MAX_GIDS];
};

/* Check fh (MAC, export, the export's rules) and take a reference on its
 * inode with the caller's UserPerm; on NFS3_OK ce_release(o) after. */
nfsstat3 ce_resolve(struct nfs_req *req, const nfs_fh3 *fh, unsigned flags, struct ce_obj *o);
/* The same for a directory (NOTDIR otherwise). */
nfsstat3 ce_dir_resolve(struct nfs_req *req, const nfs_fh3 *fh, unsigned flags, struct ce_obj *o);
void ce_release(struct ce_obj *o);
/* What a failure r (-errno) to find or stat a handle's inode answers: STALE
 * for an inode that is gone, else what the error says (a cluster that does
 * not answer in time: JUKEBOX, so that the client tries again). */
nfsstat3 ce_find_stat(int r);
/* Refresh o->stx/st from the cluster; 0 or -errno. */
int ce_refresh(struct ce_obj *o);
/* ".." of directory d where libcephfs would answer with what lies outside
 * the export (the CephFS parent of ceph.root): for the export's root and its
 * .snap, the root; for a snapshot of the root, the root's .snap. 1 with its
 * attributes in *stx; 0 where libcephfs's own ".." is right; or -errno. */
int ce_dotdot(const struct ce_obj *d, struct ceph_statx *stx);

/* Link d, a directory of a snapshot, to the snapshot (backend_ceph_snap.c),
 * as a walk from the .snap would have: one found by its handle alone would
 * show the live directory's entries. 0, or -errno. */
int ce_snap_link(struct ce_obj *d);

/* Lock files (backend_ceph_lock.c): open one for a lock owner
 * (be_ceph_ops.open_locked); count them on their export, whose mount the
 * last one unmounts if the export was closed meanwhile. */
int ce_open_locked(struct nfs_req *req, const nfs_fh3 *fh, int rights, struct nfs_lock_file *out);
void ce_lock_files_get(struct ceph_export *ce);
void ce_lock_files_put(struct ceph_export *ce);

/* struct stat from what ceph_statx gives (st_ino: ce_fileid). */
void ce_stat_from(const struct ceph_statx *stx, struct stat *st);
/* The fileid of the inode stx names: a live one's number; in a snapshot or
 * for a .snap, the number with a tag of the snapshot in its top 16 bits, so
 * that a snapshot's file is not the live file (NFSv3 has one fsid for both,
 * where CephFS gives each snapshot its own st_dev). The same on every head. */
uint64_t ce_fileid(const struct ceph_statx *stx);
/* A handle for an inode with attributes stx on export e (malloc'd). */
nfsstat3 ce_fh_make(const struct export *e, const struct ceph_statx *stx, nfs_fh3 *out);
/* wcc_data: before as resolved, after from a fresh getattr of o. */
void ce_wcc(struct ce_obj *o, wcc_data *out);
/* post_op_attr from a fresh getattr of o. */
void ce_post_attr(struct ce_obj *o, post_op_attr *out);
/* sattr3 as ceph_ll_setattr takes it: fills stx and *mask; INVAL/FBIG. */
nfsstat3 ce_sattr(const sattr3 *sa, struct ceph_statx *stx, int *mask);
/* Whether o's caller may all of want (R_OK, W_OK, X_OK) on o, by its mode
 * bits and its POSIX ACL, for what libcephfs does not check itself: 1, 0,
 * or -errno where the cluster cannot give the ACL (-EIO: malformed). */
int ce_may(const struct ce_obj *o, int want);
/* The same as a status: OK, ACCES, or what the cluster's error says. */
nfsstat3 ce_check(const struct ce_obj *o, int want);

/* The attribute procedures (backend_ceph_attr.c). */
void ce_proc_getattr(struct nfs_req *req, void *argp, void *resp);
void ce_proc_setattr(struct nfs_req *req, void *argp, void *resp);
void ce_proc_lookup(struct nfs_req *req, void *argp, void *resp);
void ce_proc_access(struct nfs_req *req, void *argp, void *resp);
void ce_proc_readlink(struct nfs_req *req, void *argp, void *resp);
void ce_proc_fsstat(struct nfs_req *req, void *argp, void *resp);
void ce_proc_fsinfo(struct nfs_req *req, void *argp, void *resp);
void ce_proc_pathconf(struct nfs_req *req, void *argp, void *resp);

/* The open files of READ and WRITE (backend_ceph_files.c): start and stop
 * the export's cache (ce_open, the unmount), and how many it holds. */
void ce_files_start(struct ceph_export *ce);
void ce_files_stop(struct ceph_export *ce);
size_t ce_files_count(struct ceph_export *ce);
/* An open file for one call: from the cache (ent) or for the call alone. */
struct ce_file {
	struct Fh *fh;
	struct fhc_entry *ent;
};
/* Open o for READ or WRITE (ISDIR, INVAL for other types); ce_file_close after. */
nfsstat3 ce_file_open(struct ce_obj *o, int write, struct ce_file *f);
void ce_file_close(struct ce_obj *o, struct ce_file *f);
/* Before d/name goes (REMOVE, RENAME over it): *in its inode, referenced, if
 * the cache holds any file (else NULL); after, ce_files_forget closes the
 * cached file if gone says the name went, and puts in (NULL: nothing). */
void ce_files_lookup(struct ce_obj *d, const char *name, Inode **in, struct ceph_statx *stx);
void ce_files_forget(struct ceph_export *ce, Inode *in, const struct ceph_statx *stx, int gone);

/* READ, WRITE and COMMIT (backend_ceph_io.c). */
void ce_proc_read(struct nfs_req *req, void *argp, void *resp);
void ce_proc_write(struct nfs_req *req, void *argp, void *resp);
void ce_proc_commit(struct nfs_req *req, void *argp, void *resp);

/* The namespace and listing procedures (backend_ceph_dir.c). */
void ce_proc_create(struct nfs_req *req, void *argp, void *resp);
void ce_proc_mkdir(struct nfs_req *req, void *argp, void *resp);
void ce_proc_symlink(struct nfs_req *req, void *argp, void *resp);
void ce_proc_mknod(struct nfs_req *req, void *argp, void *resp);
void ce_proc_remove(struct nfs_req *req, void *argp, void *resp);
void ce_proc_rmdir(struct nfs_req *req, void *argp, void *resp);
void ce_proc_rename(struct nfs_req *req, void *argp, void *resp);
void ce_proc_link(struct nfs_req *req, void *argp, void *resp);
void ce_proc_readdir(struct nfs_req *req, void *argp, void *resp);
void ce_proc_readdirplus(struct nfs_req *req, void *argp, void *resp);

#endif
