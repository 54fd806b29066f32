/*
 * export.h: one exported directory at run time: its id (stable across
 * restarts), its root, and its rules (client list, read-only, squashing,
 * integrity) applied to each call.
 */
#ifndef NFSRDMA_EXPORT_H
#define NFSRDMA_EXPORT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/rpc/integrity.h"
#include "common/base/osdep.h"
#include "common/nfs/nfs3_xdr.h"
#include "server/backend.h"
#include "server/call_gate.h"

struct export;
struct fh_index;
struct nfs_req;

/*
 * A backend: what an export's handles name and how its procedures reach the
 * files. The POSIX backend (be_posix_ops, local directories) is the
 * procedures in nfs3_proc*.c; each other backend fills its own table. A call
 * goes to the table of the export its handle names (be_dispatch).
 */
struct nfs_lock_file;

struct be_ops {
	const char *name;
	/* Open the export's root (its id, root handle and backend state); 0 or a
	 * negative errno, logged with what is wrong. */
	int (*open)(struct export *e);
	/* Give back what open took; safe after a failed open. */
	void (*close)(struct export *e);
	/* Every call may block (a network file system): none runs on an event
	 * loop (server.inline_calls); the call goes to a worker. */
	int never_inline;
	/* The NFSv3 procedures by number; NFSPROC3_NULL is never called. */
	void (*nfs3[NFS3_NPROCS])(struct nfs_req *req, void *args, void *res);
	/* Open a regular file for a lock owner, with the backend's own locks,
	 * checking the caller's right to lock it where rights
	 * (server/backend_lock.h); NULL: the backend has no locks. */
	int (*open_locked)(struct nfs_req *req, const nfs_fh3 *fh, int rights,
			   struct nfs_lock_file *out);
};

extern const struct be_ops be_posix_ops;
extern const struct be_ops be_ceph_ops; /* where configure found libcephfs */

struct export
{
	uint32_t id;
	char *path;  /* as configured, without trailing slashes */
	int root_fd; /* the root directory, opened O_RDONLY|O_DIRECTORY */
	dev_t dev;   /* its file system: handles elsewhere are refused */
	ino_t ino;
	struct osdep_fh root_fh;
	struct fh_index *fhx;		    /* portable handles' index; NULL: the OS's handles */
	int user_ident;			    /* userspace identity checks (backend_ident.c) */
	const struct integrity_key *fh_key; /* the backend's: signs our handles */
	struct nfs_export_conf conf;	    /* path and clients point at our copies */
	char **clients;
	const struct be_ops *ops; /* the export's backend */
	void *priv;		  /* its state (NULL for POSIX) */
	struct call_gate gate;	  /* its NFS calls in the backend (be_dispatch) */
};

/* The export id derived from a (real) path: 32-bit FNV-1a, never 0. */
uint32_t export_id_for_path(const char *path);
/* Open the export conf describes. Returns 0 or a negative errno, logged with
 * the path and what is wrong. */
int export_open(struct export *e, const struct nfs_export_conf *conf);
/* The POSIX backend's open and close (be_posix_ops). */
int export_posix_open(struct export *e);
void export_posix_close(struct export *e);
/* Release what export_open took; safe on a zeroed or half-opened export. */
void export_close(struct export *e);
/* Whether the client may use the export (its access list admits it). */
int export_client_ok(const struct export *e, const struct sockaddr *sa);
/* What the export grants the client at sa: fills *r and returns 1, or returns
 * 0 (r zeroed) when the access list does not admit it. */
int export_rule(const struct export *e, const struct sockaddr *sa, struct nfs_client_rule *r);
/* The identity a call runs with under rule r: AUTH_NONE and squashing map to
 * the anonymous ids; gids has room for NFS_CRED_MAX_GIDS. */
void export_map_cred(const struct nfs_client_rule *r, const struct nfs_cred *in, uid_t *uid,
		     gid_t *gid, size_t *ngids, gid_t *gids);

#endif
