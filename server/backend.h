/*
 * backend.h: the POSIX backend the NFSv3 and MOUNT v3 procedures run against:
 * the exports, their access rules, the file-handle and fd cache state and the
 * write verifier. Create one at start-up; every worker thread then calls the
 * procedures in nfs3.h with it at the same time.
 */
#ifndef NFSRDMA_BACKEND_H
#define NFSRDMA_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* RPC auth flavors the backend tells apart (RFC 5531, RFC 2203). */
#define NFS_AUTH_NONE	    0
#define NFS_AUTH_SYS	    1
#define NFS_AUTH_RPCSEC_GSS 6

#define NFS_CRED_MAX_GIDS 16

/* The caller's identity, as the RPC layer verified it. AUTH_NONE callers get
 * the export's anonymous ids; for any other flavor uid/gid/gids are used as
 * given (subject to root_squash/all_squash). */
struct nfs_cred {
	uint32_t flavor;
	uint32_t uid, gid;
	uint32_t ngids;
	uint32_t gids[NFS_CRED_MAX_GIDS];
};

/* What serves an export's files. */
enum nfs_backend_kind {
	NFS_BACKEND_POSIX,  /* path is a local directory */
	NFS_BACKEND_CEPHFS, /* ceph.root of a CephFS, through libcephfs */
};

/* How a POSIX export makes file handles (server/fh_index.h). */
enum nfs_fh_scheme {
	NFS_FH_AUTO,	 /* native where the OS has them, else portable */
	NFS_FH_NATIVE,	 /* osdep_fh_get/osdep_fh_open */
	NFS_FH_PORTABLE, /* fh_index: inode, generation, stamp */
};

/* How a POSIX export acts as the caller (server/backend_ident.c). */
enum nfs_identity {
	NFS_ID_AUTO,	  /* native where the OS has per-thread identities, else userspace */
	NFS_ID_NATIVE,	  /* osdep_cred_set: the kernel checks as the caller */
	NFS_ID_USERSPACE, /* the server keeps its identity and checks itself */
};

/* What an export grants one client. */
struct nfs_client_rule {
	int ro;		 /* refuse every modifying procedure with NFS3ERR_ROFS */
	int root_squash; /* uid 0 (and gid 0) -> anon_uid/anon_gid */
	int all_squash;	 /* every caller -> anon_uid/anon_gid */
	int secure;	 /* TCP and UDP calls from ports >= 1024 get NFS3ERR_PERM */
	int async;	 /* WRITE and COMMIT reply without making data stable */
	int no_auth_nlm; /* a lock owner's file opens for any caller (else: the
			    owner, or a caller who may read it) */
	uint32_t anon_uid, anon_gid;
};

/* One export as the configuration gives it; nfs_backend_create copies it. */
struct nfs_export_conf {
	const char *path; /* POSIX: absolute path of an existing directory; CephFS: the
			     name clients mount */
	uint32_t fsid;	  /* export id in handles; 0: a hash of the real path */
	int ro;		  /* refuse every modifying procedure with NFS3ERR_ROFS */
	int root_squash;  /* uid 0 (and gid 0) -> anon_uid/anon_gid */
	int all_squash;	  /* every caller -> anon_uid/anon_gid */
	uint32_t anon_uid, anon_gid;
	int integrity_required; /* calls without a valid integrity MIC get NFS3ERR_ACCES */
	/* Access list: client_allowed(acl, sa) != 0 admits the client. NULL
	 * client_allowed admits everyone. The acl pointer is not copied. */
	const void *acl;
	int (*client_allowed)(const void *acl, const struct sockaddr *sa);
	/* Optional, per-client rules (exports(5) gives each client its own):
	 * client_rule(acl, sa, &rule) fills what the first client entry matching
	 * sa is granted and returns nonzero, or returns 0 for a client not on the
	 * list. When set, it replaces client_allowed and ro..anon_gid above. */
	int (*client_rule)(const void *acl, const struct sockaddr *sa, struct nfs_client_rule *out);
	/* Client names shown by MOUNT EXPORT as the export's groups. */
	const char *const *clients;
	size_t nclients;
	enum nfs_backend_kind backend;
	enum nfs_fh_scheme handles;   /* for NFS_BACKEND_POSIX */
	const char *handle_index_dir; /* where portable handles' indexes are */
	enum nfs_identity identity;   /* for NFS_BACKEND_POSIX */
	int ordma;		      /* READs fill the Optimistic RDMA cache (POSIX) */
	struct {
		const char *conf_file, *client_id, *keyring; /* keyring NULL: conf_file's */
		const char *root;			     /* the directory in the CephFS */
		unsigned mount_timeout_s;
	} ceph; /* for NFS_BACKEND_CEPHFS; used by create/reload only */
};

struct nfs_backend;

/* Open the n exports and set up the backend; max_io bounds READ/WRITE sizes
 * (FSINFO rtmax/wtmax), 4096 .. NFS3_MAXDATA. Returns 0 or a negative errno,
 * after logging which export or setting is wrong. */
int nfs_backend_create(const struct nfs_export_conf *exports, size_t n, uint32_t max_io,
		       struct nfs_backend **out);
/* The key that signs file handles (16..64 bytes), so that clients can only use
 * handles the server gave out; set it before serving. Until then a random key
 * is used, and handles do not survive a restart. 0 or -EINVAL. */
int nfs_backend_set_handle_key(struct nfs_backend *be, const void *key, size_t len);
/* The share of the workers one export's calls, and the lock manager's, may
 * hold (threads less one, all of 1), and how long their storage may go
 * without finishing any of them before they are answered NFS3ERR_JUKEBOX
 * (NLM4_DENIED_GRACE_PERIOD) (0: for ever), which also bounds how long a
 * reload waits for calls (server/call_gate.c). Until called: no share and
 * no timeout. */
void nfs_backend_set_limits(struct nfs_backend *be, unsigned threads, unsigned storage_timeout_s);
/* Close everything; no procedure may be running. NULL is fine. */
void nfs_backend_destroy(struct nfs_backend *be);
struct ordma_cache;
/* Whether some POSIX export has ordma on (and wants a cache). */
int nfs_backend_wants_ordma(const struct nfs_backend *be);
/* Give the backend the Optimistic RDMA block cache (it is the backend's to
 * free now), exposed to clients under rkey. 0, or -EBUSY if it has one. */
int nfs_backend_set_ordma(struct nfs_backend *be, struct ordma_cache *c, uint32_t rkey);
/* Its counters (all 0 without a cache). */
struct ordma_cache_stats;
void nfs_backend_ordma_stats(struct nfs_backend *be, struct ordma_cache_stats *out);
/* Portable handles (server/fh_index.h), summed over the exports that use
 * them: how many do, the objects their indexes hold, the searches of an
 * export for an object whose entry was lost or out of date, and those that
 * found it; and the exports that check callers' permissions in user space
 * (server.identity, server/backend_ident.c). */
struct nfs_handle_stats {
	uint64_t exports, entries, walks, found;
	uint64_t userspace_identity;
};
void nfs_backend_handle_stats(struct nfs_backend *be, struct nfs_handle_stats *out);
/* Replace the exports (SIGHUP): calls in flight finish under the old rules,
 * later ones see the new. Exports keep their ids, so handles stay valid. On
 * error the old exports stay: -EBUSY when calls were still in the exports'
 * storage after the storage timeout (each such export named in the log). */
int nfs_backend_reload(struct nfs_backend *be, const struct nfs_export_conf *exports, size_t n);
/* Every procedure runs between these two (the RPC glue calls them). */
void nfs_backend_enter(struct nfs_backend *be);
/* Whether any export takes calls from sa (its client list allows it); never
 * waits (during a reload of the exports: yes). */
int nfs_backend_peer_known(struct nfs_backend *be, const struct sockaddr *sa);
void nfs_backend_leave(struct nfs_backend *be);
/* nfs_backend_enter for a call run on an event loop: 0 instead of waiting
 * while the exports are reloaded (the call then goes to a worker). */
int nfs_backend_try_enter(struct nfs_backend *be);
/* Whether cheap calls (NFS_PROC_INLINE) may run on an event loop at all: not
 * on a backend whose every call may block (a network file system's), which
 * says so with nfs_backend_never_inline, nor during a reload. Never waits. */
int nfs_backend_may_inline(struct nfs_backend *be);
void nfs_backend_never_inline(struct nfs_backend *be);
/* The export id (as in handles) of export i, in the order given to create. */
uint32_t nfs_backend_export_id(const struct nfs_backend *be, size_t i);
/* The 8-byte write verifier of this server instance. */
void nfs_backend_write_verf(const struct nfs_backend *be, unsigned char verf[8]);

#endif
