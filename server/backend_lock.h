/*
 * backend_lock.h: the one way the lock manager (server/nlm.c) reaches the
 * backend: a file handle from an NLM call turned into an open file of the
 * export, checked as an NFS call on it would be. Kept apart from backend.h so
 * the backend can change shape without the lock manager noticing.
 */
#ifndef NFSRDMA_BACKEND_LOCK_H
#define NFSRDMA_BACKEND_LOCK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "common/base/osdep_lock.h"

struct call_gate;
struct export;
struct nfs_lock_call;
struct nfs_backend;
struct nfs_lock_file;
struct rpc_req;

/* How locks are taken on a lock file: the kernel's (POSIX exports) or the
 * cluster's (CephFS). */
struct nfs_lock_ops {
	int (*set)(struct nfs_lock_file *f, const struct osdep_lock *l);
	int (*test)(struct nfs_lock_file *f, struct osdep_lock *l);
	void (*close)(struct nfs_lock_file *f);
};

/* What nfs_backend_open_locked opened: the file, as one lock owner's own. */
struct nfs_lock_file {
	const struct nfs_lock_ops *ops;
	int fd;	      /* POSIX: a new open file description */
	void *priv;   /* CephFS: the owner's open file on the cluster */
	int writable; /* opened read-write; else read-only */
	dev_t dev;    /* the file's identity, to find other owners' locks on it */
	ino_t ino;
};

/*
 * Open the regular file that the NFS handle of call c names for a lock owner, as an
 * open file of its own (never a cached or shared one: each owner's locks
 * belong to it, and go when it is closed). The export's rules for the
 * lock manager's RPC call apply as for an NFS call (client list, secure
 * port, integrity; read-write if the export and file allow, else
 * read-only), and with rights its caller, after the export's squashing, must
 * own the file or have the right to read it, as on the Linux server, unless
 * the export's rule for it says no_auth_nlm (rights 0: no right is checked,
 * for what only drops what the client holds). The file is opened as the
 * server, not as the caller: the lock owner's later calls reuse it. On a CephFS
 * export the locks are the cluster's, so that the clients of every head
 * exporting it exclude each other.
 * 0, or -ESTALE (unknown, forged or vanished handle), -EACCES (client or
 * caller not allowed), -EINVAL (not a regular file), -EMFILE/-ENFILE, -EIO
 * (the check or the storage failed), other -errno.
 * Blocks (CephFS: on the cluster): never called on an event loop; c is
 * between nfs_backend_lock_enter and nfs_backend_lock_leave.
 */
int nfs_backend_open_locked(struct nfs_backend *be, const struct nfs_lock_call *c,
			    const struct rpc_req *call, int rights, struct nfs_lock_file *out);

/* A lock manager's call inside the backend (nfs_backend_lock_enter). */
struct nfs_lock_call {
	struct export *exp; /* the export the handle names, or NULL */
	const void *fh;	    /* the handle */
	size_t fhlen;
};

/*
 * Around each call of the lock manager that may go into the storage (opening
 * a lock file with nfs_backend_open_locked, which only runs inside, and taking,
 * testing or releasing locks), for the export that the file handle fh names
 * (fhlen bytes; fh NULL: none, the lock manager's own work), made by RPC
 * call call (NULL: the lock manager's own work): through turn,
 * the gate of the lock manager's calls for that export (at most one such
 * call at once), and counting in the export's share of the workers as its
 * NFS calls do (server/call_gate.c); exports are not reloaded meanwhile.
 * 0 (then nfs_backend_lock_leave after), -EACCES when the export requires
 * integrity and call carried no valid MIC (every lock call on its files
 * must, not only those that open one), or -ETIMEDOUT when another call
 * through turn or the export's share kept it waiting a second, or when the
 * storage has stalled (no call through turn has finished for
 * server.storage_timeout_s: a CephFS cluster that hangs): the call is
 * answered NLM4_DENIED_GRACE_PERIOD, and the client tries again.
 */
int nfs_backend_lock_enter(struct nfs_backend *be, struct call_gate *turn, const void *fh,
			   size_t fhlen, const struct rpc_req *call, struct nfs_lock_call *c);
void nfs_backend_lock_leave(struct nfs_backend *be, struct call_gate *turn,
			    struct nfs_lock_call *c);

/* The export id in handle fh (fhlen bytes), whether or not an export has it
 * now; 0 if fh is none of ours. */
uint32_t nfs_backend_fh_export(const void *fh, size_t fhlen);
/* The path of the export that has id now, in *path (allocated): 0, -ESTALE
 * if none has, -ENOMEM. */
int nfs_backend_export_path(struct nfs_backend *be, uint32_t id, char **path);

/* Take (UNLOCK: release) a range for f's owner, without waiting: 0, -EAGAIN
 * when another owner (here, a local process, or for CephFS a client of
 * another head) holds a conflicting lock, other -errno. */
static inline int nfs_lock_set(struct nfs_lock_file *f, const struct osdep_lock *l)
{
	return f->ops->set(f, l);
}

/* Whether l would conflict with another owner's lock: 0 with l->type UNLOCK
 * when not, else the first conflicting lock in *l. */
static inline int nfs_lock_test(struct nfs_lock_file *f, struct osdep_lock *l)
{
	return f->ops->test(f, l);
}

/* Close f: its owner's locks go. */
static inline void nfs_lock_close(struct nfs_lock_file *f)
{
	f->ops->close(f);
}

#endif
