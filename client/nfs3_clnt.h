/*
 * nfs3_clnt.h: an NFSv3 client library over struct rpc_clnt (RPC/RDMA or TCP).
 *
 * nfs3c_mount() connects, asks MOUNT v3 for the export's root handle and
 * FSINFO for the transfer sizes. Every call after that goes through one
 * connection shared by all threads: calls run concurrently up to the
 * transport's credits (rpc_clnt_call is thread-safe and waits for a credit).
 * When the connection breaks or a call times out, the call is retried on a new
 * connection, made with backoff, for as long as params.retry_ms allows (0:
 * forever, like a "hard" NFS mount), so a server restart is survived.
 *
 * Writes: UNSTABLE writes are remembered (a copy of the data, bounded by
 * dirty_max bytes for the whole client) until a COMMIT answers with the
 * verifier they were written under; when a COMMIT or a later WRITE shows a
 * different verifier (the server restarted and may have lost them), they are
 * written again and committed again.
 *
 * Attributes are cached per handle for acregmin..acregmax (files) or
 * acdirmin..acdirmax (directories) seconds, growing while they do not change.
 *
 * Every function returns 0 or a negative errno (nfsstat3 mapped by
 * nfs3c_errno). cred NULL means the client's default credential.
 */
#ifndef NFSRDMA_NFS3_CLNT_H
#define NFSRDMA_NFS3_CLNT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/rpc/integrity.h"
#include "common/rpc/rpc.h"
#include "common/rpcrdma/rpcrdma.h"
#include "common/nfs/nfs3_prot.h"
#include "common/nfs/nfs3_xdr.h"
#include "common/nfs/ordma.h"

#define NFS3C_RDMA_PORT "20049"
#define NFS3C_TCP_PORT	"2049"

enum nfs3c_proto {
	NFS3C_PROTO_RDMA,
	NFS3C_PROTO_TCP,
};

struct nfs3c_params {
	const char *host;
	const char *export;
	enum nfs3c_proto proto;
	const char *port;	     /* NULL: 20049 (rdma) or 2049 (tcp) */
	enum nfs3c_proto mountproto; /* MOUNT's transport (TCP when proto is TCP) */
	const char *mountport;	     /* NULL: rdma: the NFS port; tcp: rpcbind, else NFS port */
	const char *heads;	     /* NULL, or more heads of the same export: "HOST[:PORT]+..." */
	struct rr_params rr;	     /* the RPC/RDMA transport (proto rdma) */
	uint32_t rsize, wsize;	     /* 0: the server's preferred size */
	unsigned acregmin, acregmax; /* seconds */
	unsigned acdirmin, acdirmax; /* seconds */
	int noac;		     /* cache no attributes */
	const struct integrity_key *key; /* non-NULL: sign every call (AUTH_NFSRDMA_HMAC) */
	int timeout_ms;			 /* one try of one call */
	int retry_ms;			 /* keep retrying a call this long; 0: forever */
	int connect_timeout_ms;		 /* one connection attempt; 0: timeo, at most 5 s */
	size_t dirty_max;		 /* bytes of unstable writes kept for resending */
	unsigned dir_max;		 /* most entries one directory listing may have */
	struct rpc_cred cred;		 /* the default credential */
	int ordma;	   /* Optimistic RDMA: small READs by RDMA Reads of the server's cache */
	unsigned nconnect; /* transports to the server, calls taking them in turn; 0: 1 */
};

#define NFS3C_NCONNECT_MAX 16 /* as Linux's nconnect= */

#define NFS3C_DIR_MAX (1u << 22) /* entries in one directory listing, by default */

struct nfsrdma_config;
/* Fill p with the defaults: those of the configuration file's settings
 * (nfsrdma.conf(5): RDMA, provider "auto", 30 s calls, hard), and the rest. */
void nfs3c_params_defaults(struct nfs3c_params *p);
/* Set what the configuration's client section says of NFS (protocol, sizes,
 * attribute cache, timeo, dir_max); the RPC/RDMA transport's settings are
 * rr_params_from_config's. */
void nfs3c_params_from_config(const struct nfsrdma_config *c, struct nfs3c_params *p);
/* How long one connection attempt waits: connect_timeout_ms, or else timeo
 * (as the Linux client derives it) but at most 5 s, so that stopping never
 * waits long for a connection under way. */
int nfs3c_connect_timeout_ms(const struct nfs3c_params *p);

/* A file handle, by value. */
struct nfs3c_fh {
	uint32_t len;
	uint8_t data[NFS3_FHSIZE];
};

/* Handles as hash keys. */
uint32_t nfs3c_fh_hash(const struct nfs3c_fh *fh);
int nfs3c_fh_equal(const struct nfs3c_fh *a, const struct nfs3c_fh *b);
/* Handles between our form and the XDR form (which points at ours);
 * from_xdr: -EBADMSG for an empty or oversized one. */
void nfs3c_fh_to_xdr(const struct nfs3c_fh *fh, nfs_fh3 *x);
int nfs3c_fh_from_xdr(const nfs_fh3 *x, struct nfs3c_fh *fh);

/* Per NFSv3 procedure (NULL .. COMMIT), as mountstats(8) shows them. */
struct nfs3c_op_stats {
	uint64_t ops;	  /* calls made */
	uint64_t trans;	  /* sends, retransmissions included */
	uint64_t errors;  /* calls that failed: no answer, or an NFS error */
	uint64_t rtt_us;  /* sum of each call's last round trip */
	uint64_t exec_us; /* sum of each call's whole time, retries included */
};

/* Counters, for tests, bench and `nfsrdma-client stats`. */
/* Optimistic RDMA's miss causes: enum ordma_miss (common/nfs/ordma.h), then: */
#define NFS3C_ORDMA_NOREF  ORDMA_MISS_N
#define NFS3C_ORDMA_ERROR  (ORDMA_MISS_N + 1)
#define NFS3C_ORDMA_CAUSES (ORDMA_MISS_N + 2)
/* Its name ("noref", "torn", ...). */
const char *nfs3c_ordma_cause(unsigned cause);

struct nfs3c_stats {
	uint64_t calls, retries, reconnects, jukebox;
	uint64_t writes_resent, commits, verf_changes;
	uint64_t attr_hits, attr_misses;
	uint64_t
		attr_stale; /* replies whose attributes were older than the cache's, or unordered */
	uint64_t dirty_now, dirty_peak;
	/* buffers made for unstable write data, and the spare ones' bytes now */
	uint64_t wbufs_made, wbufs_spare;
	uint64_t bytes_read, bytes_written; /* READ and WRITE data */
	struct nfs3c_op_stats op[NFS3_NPROCS];
	uint64_t head_switches; /* moves to another head (heads=) */
	uint64_t head;		/* the head in use: 0 the server's, 1.. heads='s */
	uint64_t transports;	/* of the connection in use now (nconnect); 0: none */
	/* Optimistic RDMA (-o ordma): READs served by an RDMA Read of the
	 * server's cache; misses by cause (NFS3C_ORDMA_NOREF: no reference,
	 * NFS3C_ORDMA_ERROR: the RDMA Read or the attributes failed, else the
	 * enum ordma_miss of the slot's check); READs sent after a miss; MAPs. */
	uint64_t ordma_hits, ordma_fallbacks, ordma_maps;
	uint64_t ordma_miss[NFS3C_ORDMA_CAUSES];
};

/* Most heads one mount may have (the server's and heads='s). */
#define NFS3C_HEADS_MAX 16

/* Split "HOST[:PORT]+HOST[:PORT]..." (IPv6 as [ADDR]:PORT): fn is called for
 * each head with its host and port (NULL: defport); 0, or -EINVAL with err
 * naming the bad entry. */
int nfs3c_heads_parse(const char *list, int (*fn)(void *arg, const char *host, const char *port),
		      void *arg, char *err, size_t errlen);

struct nfs3c;

/* Connect, MNT the export, FSINFO. On failure, err says why in words. */
int nfs3c_mount(const struct nfs3c_params *p, struct nfs3c **out, char *err, size_t errlen);
/* Stop waiting for the server: calls retrying a connection fail with -EIO,
 * later calls get one try; after timeo (at most 5 s), whatever still waits
 * for the server fails with -EIO and no call is made any more. For shutting
 * down (unmount, a signal) whatever the server does. */
void nfs3c_shutdown(struct nfs3c *c);
/* Commit what is uncommitted, UMNT, disconnect, free; bounded in time as
 * nfs3c_shutdown says, which it starts. */
void nfs3c_unmount(struct nfs3c *c);
/* The local thread that the calls this thread makes from now on are for (a
 * FUSE request's caller), 0: none; returns the previous one. Once it has
 * been killed, such a call stops retrying and fails with -EINTR, hard mount
 * or not, as Linux's are killable: at once between tries, within a second
 * while it waits to reconnect, after at most timeo while it waits for a
 * reply; and the thread's later calls for it fail unsent. WRITE and COMMIT
 * go on: their data outlives the writer. */
int nfs3c_caller_set(int tid);

const struct nfs3c_fh *nfs3c_root(const struct nfs3c *c);
/* The transfer sizes in use (after FSINFO), and the server's maximum file size. */
uint32_t nfs3c_rsize(const struct nfs3c *c);
uint32_t nfs3c_wsize(const struct nfs3c *c);
void nfs3c_get_stats(struct nfs3c *c, struct nfs3c_stats *out);
/* The transport's counters (RDMA only; zeros over TCP). */
void nfs3c_get_xprt_stats(struct nfs3c *c, struct rr_stats *out);
/* What `nfsrdma-client stats` prints for a mount: its transport and settings,
 * the counters, and per procedure the calls, errors, average RTT and
 * execution time (nfs3_clnt_stats.c). */
void nfs3c_print_stats(struct nfs3c *c, FILE *out);

/* nfsstat3 -> negative errno, and its name. */
int nfs3c_errno(nfsstat3 st);
const char *nfs3c_stat_name(nfsstat3 st);

/* ---- attributes ---- */

#define NFS3C_NOCACHE 1 /* nfs3c_getattr: ask the server */

int nfs3c_getattr(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *fh, int flags,
		  fattr3 *out);
/* How many more milliseconds the cached attributes of fh stay valid (0: none). */
unsigned nfs3c_attr_valid_ms(struct nfs3c *c, const struct nfs3c_fh *fh);
/* Forget what is cached about fh. */
void nfs3c_attr_forget(struct nfs3c *c, const struct nfs3c_fh *fh);
/* out (optional) gets the attributes after the change. */
int nfs3c_setattr(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *fh,
		  const sattr3 *sa, fattr3 *out);
int nfs3c_access(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *fh,
		 uint32_t want, uint32_t *granted);

/* ---- names ---- */

/* out_attr may be NULL; when the server sends none, the attributes are fetched. */
int nfs3c_lookup(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *dir,
		 const char *name, struct nfs3c_fh *out, fattr3 *out_attr);
/* Create a regular file: excl uses EXCLUSIVE (safe to retransmit), then sets mode. */
int nfs3c_create(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *dir,
		 const char *name, uint32_t mode, int excl, struct nfs3c_fh *out, fattr3 *out_attr);
int nfs3c_mkdir(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *dir,
		const char *name, uint32_t mode, struct nfs3c_fh *out, fattr3 *out_attr);
int nfs3c_symlink(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *dir,
		  const char *name, const char *target, struct nfs3c_fh *out, fattr3 *out_attr);
/* type NF3CHR, NF3BLK, NF3FIFO or NF3SOCK. */
int nfs3c_mknod(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *dir,
		const char *name, ftype3 type, uint32_t mode, uint32_t major, uint32_t minor,
		struct nfs3c_fh *out, fattr3 *out_attr);
int nfs3c_remove(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *dir,
		 const char *name);
int nfs3c_rmdir(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *dir,
		const char *name);
int nfs3c_rename(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *fdir,
		 const char *fname, const struct nfs3c_fh *tdir, const char *tname);
int nfs3c_link(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *fh,
	       const struct nfs3c_fh *dir, const char *name, fattr3 *out_attr);
/* The target into buf (NUL-terminated); -ENAMETOOLONG if it does not fit. */
int nfs3c_readlink(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *fh, char *buf,
		   size_t cap);

/* One directory entry; fh and attr are NULL when the server sent none. */
struct nfs3c_dirent {
	const char *name;
	uint64_t fileid;
	uint64_t cookie;
	const struct nfs3c_fh *fh;
	const fattr3 *attr;
};
/* Call fn for every entry (READDIRPLUS, falling back to READDIR when the server
 * does not support it); fn returning non-zero stops the listing with that value. */
int nfs3c_readdir(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *dir,
		  int (*fn)(void *arg, const struct nfs3c_dirent *e), void *arg);
int nfs3c_fsstat(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *fh,
		 FSSTAT3resok *out);
/* The NULL procedure: one round trip that does nothing (bench's bare call rate). */
int nfs3c_null(struct nfs3c *c);

/* ---- data ---- */

/* Read up to len bytes at off into buf, in rsize pieces; *got is what was read
 * (short only at end of file); *eof (optional) is set at end of file. A piece
 * that fails fails the read (with *got what the pieces before it brought). */
int nfs3c_read(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *fh, uint64_t off,
	       void *buf, size_t len, size_t *got, int *eof);

/* A buffer for len bytes of data to READ into or WRITE from, or NULL (no
 * memory): a free slot of the block the mount registers where len is at
 * most wsize and one is free, else page-aligned memory of malloc's. Over
 * RPC/RDMA with reg=fastreg, in Read-Write mode, the server places a READ
 * into a slot itself, behind a window the call invalidates, instead of the
 * client copying it out of the transport's buffers. A slot held is one fewer
 * for unstable writes (which then use malloc's). The contents are not
 * cleared. Give it back with nfs3c_iobuf_put before nfs3c_unmount. */
void *nfs3c_iobuf_get(struct nfs3c *c, size_t len);
void nfs3c_iobuf_put(struct nfs3c *c, void *buf);

/* The write state of one file: its uncommitted writes. Shared by every opener. */
struct nfs3c_file;
struct nfs3c_file *nfs3c_file_get(struct nfs3c *c, const struct nfs3c_fh *fh);
/* Drop a reference; the last one commits what is still uncommitted and
 * returns the outcome. */
int nfs3c_file_put(struct nfs3c *c, struct nfs3c_file *f, const struct rpc_cred *cr);
/* Write len bytes at off, in wsize pieces. UNSTABLE data is kept until
 * nfs3c_commit (or until dirty_max forces a commit). */
int nfs3c_write(struct nfs3c *c, const struct rpc_cred *cr, struct nfs3c_file *f, uint64_t off,
		const void *buf, size_t len, stable_how how);
/* Commit f's unstable writes, rewriting them while the verifier changes.
 * When the COMMIT fails, what it could not make stable is dropped and the
 * error returned, as is that of a commit_all that failed on f since. */
int nfs3c_commit(struct nfs3c *c, const struct rpc_cred *cr, struct nfs3c_file *f);
/* Bytes of f not yet committed. */
size_t nfs3c_file_dirty(struct nfs3c_file *f);
/* Commit every file's unstable writes: the first error (each file's also
 * kept for its own next nfs3c_commit). */
int nfs3c_commit_all(struct nfs3c *c);

#endif
