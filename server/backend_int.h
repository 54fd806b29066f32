/*
 * backend_int.h: what the procedure files (nfs3_proc*.c, mount3_proc.c) share
 * with the backend: its state, resolving a handle to an open object with the
 * export's rules applied, taking on the caller's identity, and attributes.
 */
#ifndef NFSRDMA_BACKEND_INT_H
#define NFSRDMA_BACKEND_INT_H

#include <pthread.h>
#include <sys/stat.h>

#include "common/rpc/integrity.h"
#include "common/base/osdep.h"
#include "server/export.h"
#include "server/fhcache.h"
#include "server/nfs3.h"
#include "server/ordma_cache.h"

/* Our handle: version, platform handle length, 2 zero bytes, export id (big
 * endian), platform handle, and a MAC of all that under the server's handle
 * key (HMAC-SHA256, the first BE_FH_MAC bytes), so that a client can only use
 * handles the server gave out. Every use checks all of it. */
#define BE_FH_VERSION 2
#define BE_FH_HDR     8
#define BE_FH_MAC     16

/* Bounds of the in-memory mount list (MOUNT DUMP), so no client can grow it
 * without limit. */
#define BE_MOUNTS_MAX 4096

struct be_mount {
	char *host, *path;
};

struct nfs_backend {
	/* The gate: calls are inside it while they run; a reload of the exports
	 * waits for them and holds new ones back (so it cannot starve). */
	pthread_mutex_t gate_lock;
	pthread_cond_t gate_cond;
	unsigned gate_calls;
	int gate_reloading;
	int never_inline;	/* every call may block: none runs on an event loop */
	struct export *exports; /* replaced only by a reload, inside the gate */
	size_t nexports;
	uint32_t max_io;
	unsigned char write_verf[8];
	struct integrity_key fh_key; /* signs handles; the exports point at it */
	struct fhcache *fds;
	int cred_ok; /* the server may act as callers (it is root): backend_ident.c */
	/* Optimistic RDMA (ordma_proc.c): the block cache, and where clients read
	 * it (its memory's address, length and key); NULL: none. */
	struct ordma_cache *ordma;
	uint64_t ordma_base, ordma_len;
	uint32_t ordma_rkey;
	/* the calls of one export (its gate), the lock manager's among them,
	 * take at most export_calls_max workers; a gate none of whose calls
	 * finished for storage_timeout_ns (0: never) is stalled (call_gate.c);
	 * atomic: a reload sets them */
	unsigned export_calls_max;
	uint64_t storage_timeout_ns;
	pthread_mutex_t mnt_lock;
	struct be_mount *mounts;
	size_t nmounts;
};

/* An object a handle resolved to: fd is an osdep PATH fd (or READ/RDWR when
 * asked), st its attributes when it was resolved. */
struct be_obj {
	struct export *exp;
	struct fhc_entry *ent;
	int fd;
	struct stat st;
	size_t fhlen;
	unsigned char fh[NFS3_FHSIZE];
};

/* be_resolve flags */
#define BE_MODIFY 0x1 /* the call changes things: NFS3ERR_ROFS on a ro export */

/* Check fh, find its export, apply the export's rules to the call, and open
 * (or find cached) the object as `kind` (READ/RDWR only for regular files:
 * ISDIR/INVAL otherwise). On NFS3_OK the caller must be_release(o). */
nfsstat3 be_resolve(struct nfs_req *req, const nfs_fh3 *fh, enum osdep_open_mode kind,
		    unsigned flags, struct be_obj *o);
void be_release(struct nfs_req *req, struct be_obj *o);
/* The export's rules for a call that named no handle (MOUNT). */
nfsstat3 be_export_check(const struct nfs_req *req, const struct export *e, unsigned flags);
/* What the export grants the caller (zeroed if nothing: be_export_check refused it). */
void be_req_rule(const struct nfs_req *req, const struct export *e, struct nfs_client_rule *r);
/* The export with this id / mount path, or NULL. */
struct export *be_export_by_id(struct nfs_backend *be, uint32_t id);
struct export *be_export_by_path(struct nfs_backend *be, const char *path);

/* Run NFSv3 procedure proc (not NULL) on the backend of the export that
 * args's leading handle names; a handle naming no export goes to the POSIX
 * procedures, which answer it (BADHANDLE, STALE). */
void be_dispatch(struct nfs_req *req, unsigned proc, void *args, void *res);
/* A call into the storage through gate g (an export's, the lock manager's),
 * with the backend's limits: see call_gate_in. */
int be_gate_in(const struct nfs_backend *be, struct call_gate *g, int nowait);
/* The export a handle's header names, without checking its MAC; NULL if
 * malformed or unknown. */
struct export *be_export_of_fh(struct nfs_backend *be, const nfs_fh3 *fh);
/* The errno backend_lock.h says for an NFS status of a lock file's open. */
int be_lock_errno(nfsstat3 st);
/* be_posix_ops.open_locked (backend_lock.c): kernel locks on a local file. */
int be_posix_open_locked(struct nfs_req *req, const nfs_fh3 *fh, int rights,
			 struct nfs_lock_file *out);
/* Check a handle's header and MAC and split it into export id and the
 * backend's part (ofh). NFS3_OK, BADHANDLE, STALE (a wrong MAC) or JUKEBOX. */
nfsstat3 be_fh_parse(const struct integrity_key *k, const nfs_fh3 *fh, uint32_t *id,
		     struct osdep_fh *ofh);

/* Take on the caller's identity (mapped by the export) for this thread, and
 * give it back. Resolve handles before entering: see osdep.h. With
 * req->nowait (an event loop) a call that needs a switch is not run there:
 * would_block and JUKEBOX, and it runs again on a worker. */
nfsstat3 be_cred_enter(struct nfs_req *req, const struct export *e);
void be_cred_leave(struct nfs_req *req);
/* be_cred_enter for a READ of the regular file o, with the caller's right to
 * read it decided (be_io_allowed); NFS3_OK only if it may. The read itself
 * needs no identity (o's fd is the server's), so on an event loop a caller
 * who needs a switch may still read there where the answer is already known:
 * the owner, or the caller (identity after mapping) the kernel last let read
 * o while its mode, owner and ctime were what they are now (kept in o's
 * fd-cache entry by the worker that asked the kernel, once the ctime is 2 s
 * old: timestamps advance in steps). Anyone else goes to a worker. */
nfsstat3 be_read_enter(struct nfs_req *req, struct be_obj *o);
/* The same for a WRITE (the right to write o). On an event loop, a caller
 * who needs a switch writes as the server there only if it owns o (which
 * may always write it, as on the Linux server; a kernel's answer to anyone
 * else would not outlive the write, which moves the ctime), o has no set-id
 * bit (the kernel clears those when anyone but root writes) and writing as
 * the server changes nothing else (osdep_write_as_anyone: no quotas or
 * reserved blocks that its privilege would pass; a loop's thread cannot
 * lower it). */
nfsstat3 be_write_enter(struct nfs_req *req, struct be_obj *o);
/* The same for ACCESS (bits of ACCESS3_*, before the export's ro rule): on an
 * event loop, whether the kernel's answer to this caller for want on o at its
 * current ctime is known (*got); be_access_keep, between be_cred_enter and
 * be_cred_leave on a worker that switched identity, keeps the answer with o's
 * fd-cache entry. */
int be_access_known(struct nfs_req *req, const struct be_obj *o, uint32_t want, uint32_t *got);
void be_access_keep(const struct be_obj *o, uint32_t want, uint32_t got);
/* Whether this thread has the server's own identity (after a failed
 * be_cred_leave it retries the restore): calls are refused while not. */
int be_identity_ok(void);

/* The userspace identity checks (backend_ident.c), made between
 * be_cred_enter and be_cred_leave before the system call they guard, as the
 * kernel would check the caller. With a native identity (or a server that
 * is not root) they allow everything: the kernel decides. st is the
 * object's attributes, fd an fd of it (for its ACL). */
/* Whether the caller has all of want (PERM_R/W/X) on fd: 0 or -errno.
 * Native: osdep_access as the thread's identity. */
int be_access(int fd, const struct stat *st, unsigned want);
/* The same as an NFS status (ACCES). */
nfsstat3 be_may(int fd, const struct stat *st, unsigned want);
/* May the caller make d/name? Search right on d, then (unless the name
 * exists, which the call itself refuses) write access. */
nfsstat3 be_may_create(const struct be_obj *d, const char *name);
/* May the caller remove victim (st_nlink 0: there is none) from d? Also
 * the sticky rule (PERM). */
nfsstat3 be_may_delete(const struct be_obj *d, const struct stat *victim);
/* May the caller move from/name (moved) to `to`, over victim (st_nlink 0:
 * none)? */
nfsstat3 be_may_rename(const struct be_obj *from, const char *name, const struct stat *moved,
		       const struct be_obj *to, const struct stat *victim);
/* May the caller give file a new name dir/name? */
nfsstat3 be_may_link(const struct be_obj *file, const struct be_obj *dir, const char *name);
/* May the caller make a node of this type (devices: root only)? */
nfsstat3 be_may_mknod(mode_t type);
/* The same for uid, whatever identity is in force (a backend that does not
 * take on the caller's, such as CephFS's, whose cluster lets any user who
 * may create in a directory make devices there). */
nfsstat3 be_mknod_allowed(uid_t uid, mode_t type);
/* May the caller apply sa to the object (fd, st)? May clear set-group-ID
 * from sa's mode, as the kernel does. */
nfsstat3 be_may_setattr(int fd, const struct stat *st, sattr3 *sa);
/* Give the object the caller just made (fd, st) to the caller, and say so
 * in st; dir is its directory's attributes. */
nfsstat3 be_own_new(int fd, const struct stat *dir, struct stat *st);
/* The caller wrote to or truncated the regular file fd (st: its attributes
 * before): clear its set-id bits as the kernel does for a writer other than
 * root. */
void be_wrote(int fd, const struct stat *st);

/* The export's handle scheme (native, or portable through its index): the
 * platform handle of dirfd/name, and an fd of the object one names (as
 * osdep_fh_get/osdep_fh_open). */
int be_fh_get(const struct export *e, int dirfd, const char *name, struct osdep_fh *ofh);
int be_fh_open(const struct export *e, const struct osdep_fh *ofh, enum osdep_open_mode mode);
/* Tell the scheme what the server did to a name: dir/name, which was st (as
 * it was before), went (a REMOVE, RMDIR, or a RENAME over it), or st was
 * renamed from fromdir/from (or, from NULL, linked) to todir/to. */
void be_fh_removed(const struct export *e, const struct stat *st, int dir, const char *name);
void be_fh_moved(const struct export *e, const struct stat *st, int fromdir, const char *from,
		 int todir, const char *to);

/* Encode our handle for a platform handle; 0 or -EOVERFLOW. */
int be_fh_encode(const struct export *e, const struct osdep_fh *ofh, unsigned char *buf,
		 size_t *len);
/* A handle (malloc'd, for a result) for dirfd/name on export e. */
nfsstat3 be_fh_make(const struct export *e, int dirfd, const char *name, nfs_fh3 *out);
/* The same into a post_op_fh3; leaves it empty on failure. */
void be_post_fh(const struct export *e, int dirfd, const char *name, post_op_fh3 *out);

/* Attributes. */
void be_fattr(const struct export *e, const struct stat *st, fattr3 *out);
void be_post_attr_st(const struct export *e, const struct stat *st, post_op_attr *out);
void be_post_attr_fd(const struct export *e, int fd, post_op_attr *out);
void be_pre_attr(const struct stat *st, pre_op_attr *out);
/* wcc_data with before (may be NULL) and a fresh fstat of fd after. */
void be_wcc(const struct export *e, int fd, const struct stat *before, wcc_data *out);
/* A name a client may create or look up: not empty, no '/', not too long. */
nfsstat3 be_name_check(const char *name);
/* FSINFO's limits, alike for every backend: all of ok but obj_attributes. */
void be_fsinfo_limits(const struct nfs_backend *be, FSINFO3resok *ok);
/* The mode and device mknod takes for a MKNOD request; BADTYPE otherwise. */
nfsstat3 be_mknod_args(const mknoddata3 *w, mode_t *mode, dev_t *dev, const sattr3 **sa);
/* May the caller (identity in force) read/write the regular file o? The
 * owner always may (as knfsd allows), and a reader may read what it may
 * execute; otherwise the file's permissions and ACLs decide. */
nfsstat3 be_io_allowed(const struct be_obj *o, uid_t uid, int write);
/* Optimistic RDMA (ordma_proc.c), for exports with ordma = true; nothing
 * elsewhere. Take the cache's generation before reading what a fill will
 * store; fill with the bytes a READ of the regular file o read at offset
 * (labelled with o->st's ctime, taken before the read); forget a file's
 * blocks before and after a change to it. */
uint64_t be_ordma_gen(const struct nfs_req *req, const struct be_obj *o);
void be_ordma_fill(const struct nfs_req *req, const struct be_obj *o, uint64_t gen, uint64_t offset,
		   const void *data, uint32_t len);
/* ... and the blocks of the file whose handle is fh (REMOVE, RENAME over it
 * too: they would only take room). */
void be_ordma_forget(const struct nfs_req *req, const struct export *e, const void *fh,
		     size_t fhlen);
/* The uid the thread runs with on export e for req (after squashing). */
uid_t be_req_uid(const struct nfs_req *req, const struct export *e);

#endif
