/*
 * nfs3_clnt_int.h: what the files of the NFSv3 client library share: the
 * client, its connection, a call in progress, the attribute cache and the
 * write state of files.
 *
 * Locks, outermost first: nfs3c_file.io (rwlock: writes shared, resends
 * exclusive), nfs3c_file.commit_lock, nfs3c.files_lock, nfs3c_file.lock,
 * nfs3c.lock (connection state), attr cache lock. None is held across a call
 * except the first two.
 */
#ifndef NFSRDMA_NFS3_CLNT_INT_H
#define NFSRDMA_NFS3_CLNT_INT_H

#include <pthread.h>

#include "client/nfs3_clnt.h"
#include "common/nfs/mount_prot.h"

#define NFS3C_ATTR_BUCKETS   4096
#define NFS3C_ATTR_CHAIN_MAX 8
#define NFS3C_FILE_BUCKETS   256
#define NFS3C_MAX_IO	     (1u << 20) /* the largest transfer size we use */
#define NFS3C_BACKOFF_MAX_MS 5000 /* the longest wait between reconnections, or JUKEBOX tries */

/* One connection to the server: nconnect transports, each its own RPC
 * client (on RDMA its own device, event loop and credits); calls take them in
 * turn. Replaced whole (never repaired) when any of them breaks. */
struct nfs3c_conn {
	struct rpc_clnt *rpc[NFS3C_NCONNECT_MAX];
	unsigned nrpc;
	unsigned turn; /* atomic: the transport the next call takes */
	unsigned refs; /* calls using it, plus one while it is current */
	uint64_t id;   /* never reused within the client: what Optimistic RDMA's
			  references belong to */
};

struct attr_ent {
	struct attr_ent *next;
	struct nfs3c_fh fh;
	fattr3 a;
	uint64_t gen;	     /* the call generation when they came: later calls are newer */
	uint64_t when_ms;    /* fetched at (monotonic) */
	uint64_t grown_ms;   /* timeout_ms set at: it doubles once it has run out */
	uint32_t timeout_ms; /* valid this long after when_ms */
};

/* Data of a write, shared by the pieces a later overlapping write cut it into. */
struct wdata {
	unsigned refs;
	uint32_t cap;	    /* bytes holds this many */
	struct wdata *next; /* in the client's pool of spare buffers */
	uint8_t *bytes;	    /* in the slab, or just after this header */
	int in_slab;
};

/* One unstable write not yet known to be committed. */
struct wrec {
	struct wrec *next, *prev; /* newest first */
	uint64_t off;
	uint32_t len;
	uint8_t *data; /* inside buf */
	struct wdata *buf;
	uint8_t verf[NFS3_WRITEVERFSIZE];
	uint64_t seq; /* order of acknowledgement; pieces keep their parent's */
};

struct nfs3c_file {
	struct nfs3c_file *next; /* in the client's table */
	struct nfs3c_fh fh;
	unsigned refs;		     /* files_lock */
	pthread_rwlock_t io;	     /* writes shared, resends exclusive */
	pthread_mutex_t commit_lock; /* one COMMIT exchange at a time */
	pthread_mutex_t lock;	     /* recs, dirty, seq, verf */
	struct wrec *recs;	     /* never overlapping; newest first */
	void *recs_by_off;	     /* the same records in a tsearch tree by offset */
	uint64_t recs_end;	     /* no record ends after this: appends need not look */
	int maybe_stale;	     /* verf changed since every record was seen to match it */
	size_t dirty;
	uint64_t seq;
	uint8_t verf[NFS3_WRITEVERFSIZE]; /* the last one a WRITE or COMMIT returned */
	int have_verf;
	struct rpc_cred cred; /* the last writer's, for commits nobody asked for */
	int have_cred;
	int err; /* -errno of a COMMIT nobody asked for, whose writes were lost: for
		  * the next one of the file's own (nfs3c_commit) */
};

/* What a misbehaving server makes us log, once per mount each. */
enum nfs3c_warn {
	NFS3C_WARN_EMPTY_READ = 1 << 0,
	NFS3C_WARN_DIR_LOOP = 1 << 1,
	NFS3C_WARN_DIR_MAX = 1 << 2,
	NFS3C_WARN_FSINFO = 1 << 3,
	NFS3C_WARN_ORDMA = 1 << 4,
};
/* Whether w is to be logged now: the first time on this mount. */
#define nfs3c_first_warning(c, w) (!(__atomic_fetch_or(&(c)->warned, (w), __ATOMIC_RELAXED) & (w)))

/* One head of the export: a server that serves it (heads=). */
struct nfs3c_head {
	char *host, *port;
};

struct nfs3c {
	struct nfs3c_params p;
	/* host and port point at the head in use (heads[cur]); they change only
	 * under lock, and the strings live until the client is freed */
	const char *host, *port;
	char *export, *mountport;
	struct nfs3c_head heads[NFS3C_HEADS_MAX];
	size_t nheads, cur;
	size_t head_fails; /* connection attempts failed since the last success */
	struct nfs3c_fh root;
	uint32_t rsize, wsize;
	uint64_t maxfilesize;

	pthread_mutex_t lock; /* the connection state below */
	pthread_cond_t cond;
	struct nfs3c_conn *conn; /* current; NULL when there is none */
	int connecting, closing;
	int giving_up;	 /* nfs3c_shutdown: one more try per call, no waiting */
	int aborted;	 /* the stop's grace is over: every call fails with -EIO */
	unsigned warned; /* atomic: NFS3C_WARN_* already logged, each once per mount */
	pthread_t stopper;
	int stopper_running;
	int backoff_ms;
	uint64_t next_try_ms; /* no new connection attempt before this */
	int last_err;
	int down;    /* "not responding" was logged */
	int mounted; /* past nfs3c_mount: connection failures are logged */

	pthread_mutex_t attr_lock;
	uint64_t attr_gen;	  /* atomic: the last generation given to a call */
	uint64_t attr_forgot_gen; /* under attr_lock: generation of the last forget */
	struct attr_ent *attrs[NFS3C_ATTR_BUCKETS];

	pthread_mutex_t files_lock;
	struct nfs3c_file *files[NFS3C_FILE_BUCKETS];
	size_t dirty; /* uncommitted bytes of all files (atomic) */
	/* spare wsize buffers for the data of unstable writes (nfs3_clnt_wrec.c):
	 * the free slots of the slab, which the RPC/RDMA transport registers
	 * (rr_params.region) so that WRITEs go from there without a copy, and
	 * malloc's, used when every slot is (at most dirty_max + wsize bytes
	 * of spares in all) */
	pthread_mutex_t wpool_lock;
	struct wdata *wslot_free, *wpool;
	size_t wpool_bytes;
	uint8_t *wslab; /* mapped at mount; pinned whole where a connection registers it */
	size_t wslab_len;
	struct wdata *wslots; /* the slab's headers, made once wsize is known */

	uint64_t conn_ids; /* under lock: the last nfs3c_conn.id given */

	struct nfs3c_ordma *ordma; /* Optimistic RDMA (-o ordma); NULL: off */

	struct nfs3c_stats st; /* updated atomically */
	uint32_t next_xid;     /* atomic: one xid space across reconnects */
};

/* One call: fill call (prog, vers, proc, xdr, args, res, reply_*), then
 * nfs3c_call; after a 0 return, read res and end with nfs3c_call_done. */
struct nfs3c_req {
	struct rpc_call call;
	struct nfs3c_conn *conn;
	struct rpc_clnt *rpc; /* the transport of conn this try went on */
	unsigned tries;	      /* sends of its xid: > 1 means it may have run twice */
	unsigned sent;	      /* sends in all (a JUKEBOX's retry has a new xid) */
	uint64_t rtt_us;      /* the last send's round trip */
	uint64_t gen;	      /* attribute generation taken when it was first sent */
};

void nfs3c_stat_add(uint64_t *ctr, int64_t n);
uint64_t nfs3c_now_ms(void);
uint64_t nfs3c_now_us(void);

/* Send, retrying over new connections after a break or timeout, and after
 * NFS3ERR_JUKEBOX; 0 with results, or -errno (nfs3_clnt_call.c). */
int nfs3c_call(struct nfs3c *c, const struct rpc_cred *cr, struct nfs3c_req *rq);
void nfs3c_call_done(struct nfs3c *c, struct nfs3c_req *rq);
/* A connection for a call; conn_put gives it back, broken when it failed. */
int nfs3c_conn_get(struct nfs3c *c, uint64_t deadline_ms, struct nfs3c_conn **out);
void nfs3c_conn_put(struct nfs3c *c, struct nfs3c_conn *cn, int broken);
/* Stop using the current connection; it goes when its last call ends. */
void nfs3c_conn_close(struct nfs3c *c);
/* Move to the next head (c->lock held): the next connection goes there. */
void nfs3c_head_next(struct nfs3c *c, const char *why);

/* The NFS call of proc on c, with argument and result routines. */
void nfs3c_req_init(struct nfs3c_req *rq, uint32_t proc, xdrproc_t xa, void *args, xdrproc_t xr,
		    void *res);

/* Attribute cache (nfs3_clnt_attr.c). */
void nfs3c_attr_init(struct nfs3c *c);
void nfs3c_attr_fini(struct nfs3c *c);
/* Attributes from the reply to a call of generation gen (nfs3c_req.gen): taken
 * only if no later call's have been, so replies that overtake each other
 * never put older attributes over newer ones. */
void nfs3c_attr_update(struct nfs3c *c, uint64_t gen, const struct nfs3c_fh *fh, const fattr3 *a);
int nfs3c_attr_lookup(struct nfs3c *c, const struct nfs3c_fh *fh, fattr3 *out);
void nfs3c_attr_post(struct nfs3c *c, uint64_t gen, const struct nfs3c_fh *fh,
		     const post_op_attr *pa);
void nfs3c_attr_wcc(struct nfs3c *c, uint64_t gen, const struct nfs3c_fh *fh, const wcc_data *w);

/* Optimistic RDMA (nfs3_clnt_ordma.c, -o ordma). A READ of len bytes at off
 * inside one cached block the client holds a reference to is served by one
 * RDMA Read of the server's slot: 0 with *got and *eof, or -EAGAIN (a miss,
 * counted by cause) and the caller sends READ; after that READ, learn asks
 * the server (MAP) where the blocks around off are cached, at most once per
 * region every little while. */
int nfs3c_ordma_init(struct nfs3c *c);
void nfs3c_ordma_fini(struct nfs3c *c);
int nfs3c_ordma_read(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *fh,
		     uint64_t off, void *buf, uint32_t len, uint32_t *got, int *eof);
void nfs3c_ordma_learn(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *fh,
		       uint64_t off);

/* Write state (nfs3_clnt_io.c). */
void nfs3c_files_fini(struct nfs3c *c);

/* The records of unstable writes (nfs3_clnt_wrec.c); f->lock held for all but
 * the pool's init and fini. */
void nfs3c_wpool_init(struct nfs3c *c);
/* Once wsize is known (after FSINFO): the slab's slots. */
void nfs3c_wpool_carve(struct nfs3c *c);
void nfs3c_wpool_fini(struct nfs3c *c);
/* A copy of len bytes at data for a record, one reference; NULL: no memory.
 * An unstable WRITE is sent from it: in the slab, without another copy. */
struct wdata *nfs3c_wdata_copy(struct nfs3c *c, const void *data, uint32_t len);
/* Drop a reference (f->lock held, or the only one). */
void nfs3c_wdata_put(struct nfs3c *c, struct wdata *d);
/* A WRITE of [off, off + len) was acknowledged with verf: remember it if
 * unstable, cutting older records it covers; *stale: some record was written
 * under another verifier than this one. The record holds d, the data's copy
 * (the reference is taken over; NULL: data is copied now). */
int nfs3c_record(struct nfs3c *c, struct nfs3c_file *f, uint64_t off, const void *data,
		 struct wdata *d, uint32_t len, int unstable, const uint8_t *verf, int *stale);
/* Unlink and free r. */
void nfs3c_rec_drop(struct nfs3c *c, struct nfs3c_file *f, struct wrec *r);
/* f's latest verifier; a change may leave records stale. */
void nfs3c_set_verf(struct nfs3c_file *f, const uint8_t *verf);
/* Whether some record was written under another verifier than f's latest. */
int nfs3c_any_stale(struct nfs3c_file *f);

#endif
