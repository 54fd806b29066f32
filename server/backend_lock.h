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

struct nfs_backend;

/* What nfs_backend_open_locked found. */
struct nfs_lock_file {
	int fd;	      /* a new open file description (the caller closes it) */
	int writable; /* opened read-write; else read-only */
	dev_t dev;    /* the file's identity, to find other owners' locks on it */
	ino_t ino;
};

/*
 * Open the regular file that the NFS handle fh names for a lock owner, as a
 * new open file description (never a cached or shared one: each owner's locks
 * belong to its own). The export's rules for client apply as for an NFS call
 * (client list; read-write if the export and file allow, else read-only).
 * 0, or -ESTALE (unknown, forged or vanished handle), -EOPNOTSUPP (an export
 * whose backend has no locks yet: CephFS), -EACCES (client not
 * allowed), -EINVAL (not a regular file), -EMFILE/-ENFILE, other -errno.
 */
int nfs_backend_open_locked(struct nfs_backend *be, const struct sockaddr *client,
			    socklen_t client_len, const void *fh, size_t fhlen,
			    struct nfs_lock_file *out);

#endif
