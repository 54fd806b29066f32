/*
 * rpc.h: ONC RPC (RFC 5531) for nfsrdma, independent of the transport.
 *
 * Call and reply headers are framed with libtirpc's XDR (xdr_callmsg,
 * xdr_replymsg) over memory streams. Credentials: AUTH_NONE, AUTH_SYS and the
 * integrity flavour AUTH_NFSRDMA_HMAC (see integrity.h and nfsrdma-server(8)).
 *
 * Direct data placement (DDP): RFC 8166/8267 let a transport move a "DDP-eligible"
 * item (NFS READ and WRITE data, READLINK and SYMLINK paths) by RDMA instead of
 * inline. An XDR routine for such an item calls xdr_ddp_opaque(), which asks the
 * struct rpc_ddp bound to that very stream (rpc_ddp_bind) to take the bytes from a
 * chunk or put them into one; on any other stream (xdr_sizeof, xdr_free, a
 * caller's own) the item is plain inline XDR. The binding is per thread and
 * names the XDR object, because libtirpc leaves x_public uninitialised.
 */
#ifndef NFSRDMA_RPC_H
#define NFSRDMA_RPC_H

#include <errno.h>
#include <stdint.h>
#include <sys/socket.h>
#include <rpc/rpc.h>

#include "common/base/workq.h"

#define RPC_MAX_GIDS	   16
#define RPC_MAX_AUTH_BYTES 400	  /* RFC 5531 opaque_auth body limit */
#define AUTH_NFSRDMA_HMAC  390500 /* our integrity flavour (see integrity.h) */

/* Who is calling, after the credential was checked. */
struct rpc_cred {
	uint32_t flavor; /* AUTH_NONE, AUTH_SYS or AUTH_NFSRDMA_HMAC */
	uint32_t uid, gid;
	uint32_t ngids;
	uint32_t gids[RPC_MAX_GIDS];
};

/* ---- direct data placement ---- */

#define RPC_DDP_MAX_ITEMS 4

/* A DDP-eligible item the transport moved out of (or into) the inline stream. */
struct rpc_ddp_item {
	uint32_t pos; /* XDR position in the inline stream where it belongs */
	void *data;
	uint32_t len; /* without XDR padding */
};

struct rpc_ddp;
struct rpc_ddp_ops {
	/* Decoding: find the item of len bytes at the stream's position, from a
	 * chunk or inline; *data points at it. Returns 0 or -errno. */
	int (*get)(struct rpc_ddp *ddp, XDR *xdrs, uint32_t len, void **data);
	/* Encoding: move len bytes by RDMA if the peer offered a chunk for them,
	 * else encode them inline. Returns 0 or -errno. */
	int (*put)(struct rpc_ddp *ddp, XDR *xdrs, void *data, uint32_t len);
};

struct rpc_ddp {
	const struct rpc_ddp_ops *ops;
	unsigned nitems; /* items reduced out of the stream */
	struct rpc_ddp_item items[RPC_DDP_MAX_ITEMS];
};

/* Make ddp serve the DDP items of xdrs in this thread; rpc_ddp_bind(NULL, NULL) ends it. */
void rpc_ddp_bind(XDR *xdrs, struct rpc_ddp *ddp);
/* Record an item as reduced (moved by RDMA); -E2BIG past RPC_DDP_MAX_ITEMS. */
int rpc_ddp_note(struct rpc_ddp *ddp, uint32_t pos, void *data, uint32_t len);
/* The inline behaviour, for transports and streams without chunks. */
extern const struct rpc_ddp_ops rpc_ddp_inline_ops;

/* XDR a DDP-eligible variable-length opaque: the length word, then the bytes
 * through the stream's struct rpc_ddp. Decoding does not allocate: *data points
 * into the stream or a chunk buffer (or the client's destination). */
bool_t xdr_ddp_opaque(XDR *xdrs, char **data, u_int *len, u_int maxlen);

/* ---- programs and the server side ---- */

struct rpc_req;

struct rpc_proc_desc {
	const char *name;
	xdrproc_t xdr_args;
	xdrproc_t xdr_res;
	size_t args_size;
	size_t res_size;
	void (*fn)(struct rpc_req *req, void *args, void *res);
	/* Free what fn put in res (NULL: xdr_free(xdr_res, res)). */
	void (*free_res)(struct rpc_req *req, void *res);
	unsigned flags; /* RPC_DESC_* */
};

/* Not idempotent: its replies are kept for retransmissions (rpc_drc.h). */
#define RPC_DESC_REPLY_CACHE 0x1

struct rpc_program {
	uint32_t prog;
	uint32_t vers;
	const struct rpc_proc_desc *procs;
	uint32_t nprocs;
	void *ctx; /* handed to the procedures as req->prog_ctx */
	/* Optional: whether peer may send this program calls whose arguments a
	 * transport must fetch first (RDMA Reads); asked before fetching. */
	int (*peer_ok)(void *ctx, const struct sockaddr *peer);
	/* Optional: whether a call of procedure proc may run to completion on the
	 * thread that received it (an event loop), with req->nowait; NULL: never.
	 * Asked on that thread, so it must not block either. */
	int (*may_inline)(void *ctx, uint32_t proc);
};

/* What a procedure sees of its call. */
struct rpc_req {
	uint32_t xid, prog, vers, proc;
	struct rpc_cred cred;
	const struct sockaddr *peer;
	socklen_t peer_len;
	int integrity_ok;     /* the call carried a valid MIC */
	int secure_transport; /* the transport counts as a privileged port (RPC/RDMA,
				 as on Linux's server) */
	void *prog_ctx;
	/* A buffer of len bytes for bulk results, which the transport can send by
	 * RDMA without copying; valid until the reply is sent. NULL on failure. */
	void *(*get_buf)(struct rpc_req *req, size_t len);
	void *xprt_req;	 /* the transport's request */
	int nowait;	 /* in: on an event loop: nothing may wait (no disk, no peer) */
	int would_block; /* out: with nowait, it would have had to: the call runs
			    again, from the start, on a worker */
};

/* The transport a call came on, for the statistics. */
enum rpc_xprt {
	RPC_XPRT_TCP,
	RPC_XPRT_UDP,
	RPC_XPRT_RDMA,
};
#define RPC_XPRT_N 3

/* Reply status when a call is not run. */
enum rpc_reject {
	RPC_OK = 0,
	RPC_PROG_UNAVAIL,
	RPC_PROG_MISMATCH,
	RPC_PROC_UNAVAIL,
	RPC_GARBAGE_ARGS,
	RPC_SYSTEM_ERR,
	RPC_RPC_MISMATCH,
	RPC_AUTH_ERROR,
};

struct integrity_key;
struct rpc_server;
struct rpc_drc_entry;
struct rpc_drc_stats;

/*
 * One call as a transport delivers it to the dispatcher, and the room for its
 * reply. The transport fills the input half, the dispatcher the output half.
 */
/* Bytes of a call's decoded arguments, and of its results, that its
 * rpc_xreq holds itself, so that dispatching allocates nothing for them:
 * every NFSv3 and MOUNT procedure's (CREATE3res, 256 on LP64, is the
 * largest); a larger one is allocated. */
#define RPC_XREQ_STORE 288

struct rpc_xreq {
	/* in */
	const uint8_t *call; /* inline RPC message: header and arguments */
	size_t call_len;
	struct rpc_ddp *args_ddp; /* chunks holding argument data; NULL = inline only */
	const struct sockaddr *peer;
	socklen_t peer_len;
	int secure_transport; /* see struct rpc_req */
	enum rpc_xprt xprt;   /* for the statistics (zeroed: TCP) */
	void *(*get_buf)(struct rpc_req *req, size_t len);
	void *xprt_req;
	int refuse_why; /* set by rpc_precheck: answer AUTH_ERROR with this, unrun */
	int nowait;	/* run inline: rpc_dispatch may return -EAGAIN (see rpc_req) */
	/* out: the reply is encoded into reply[0, reply_len) */
	uint8_t *reply;
	size_t reply_cap;
	size_t reply_len;
	struct rpc_ddp *res_ddp;      /* chunks for result data; NULL = inline only */
	uint32_t xid;		      /* valid once the header decoded */
	uint32_t vers_low, vers_high; /* PROG_MISMATCH: the versions we have */
	/* dispatcher-private: results to free after the transport sent them */
	const struct rpc_proc_desc *desc;
	void *args, *res; /* in args_store and res_store where they fit */
	union rpc_store {
		void *p;
		uint64_t u;
		double d;
		unsigned char b[RPC_XREQ_STORE];
	} args_store, res_store;
	struct rpc_req req;
	enum rpc_reject status;
	int ran;			 /* the procedure ran: its results need freeing */
	struct rpc_drc_entry *drc_entry; /* the reply cache's entry waiting for this reply */
};

struct rpc_server_params {
	unsigned threads;		 /* worker threads */
	const struct integrity_key *key; /* NULL: the integrity flavour is refused */
	unsigned drc_entries;		 /* duplicate request cache size; 0: none */
	unsigned replay_contexts;	 /* integrity: sender contexts remembered (0: 4096) */
	unsigned replay_window_s;	 /* integrity: how far off a sender's clock may be
					    (0: 300 s) */
	size_t mem_budget;		 /* bytes the byte-stream transports may hold for
					    calls and replies; 0: no limit */
	int inline_calls;		 /* let transports run cheap calls on their loops */
};

int rpc_server_create(const struct rpc_server_params *p, struct rpc_server **out);
int rpc_server_add_program(struct rpc_server *srv, const struct rpc_program *prog);
/* Whether the call in call[0, len) may run to completion on the thread that
 * received it, with x->nowait (rpc_dispatch may then say -EAGAIN): from its
 * header alone (program, procedure, credential flavour), without decoding it;
 * never when the server was created without inline_calls, nor for the
 * integrity flavour (its sequence number cannot be spent twice). Never blocks. */
int rpc_server_may_inline(struct rpc_server *srv, const uint8_t *call, size_t len);
/* Queue work for the worker threads (never blocks). */
void rpc_server_submit(struct rpc_server *srv, struct work *w);
/* Stop the workers after the queued work has run, and free the server. */
void rpc_server_destroy(struct rpc_server *srv);
/*
 * The memory budget the TCP and UDP transports draw from for their calls and
 * replies. A transport reserves a call's worst case before it reads the call
 * (rpc_mem_reserve fails past the budget: it stops reading until calls finish
 * and give theirs back), charges what it must hold anyway (rpc_mem_charge: the
 * bytes of a call it has begun to read) and releases both when the reply is
 * out.
 */
int rpc_mem_reserve(struct rpc_server *srv, size_t n);
void rpc_mem_charge(struct rpc_server *srv, size_t n);
void rpc_mem_release(struct rpc_server *srv, size_t n);
/* Whether n more would fit now. */
int rpc_mem_fits(struct rpc_server *srv, size_t n);
/* In use now, the most so far, and the budget (0: none). */
void rpc_server_get_mem(struct rpc_server *srv, size_t *used, size_t *peak, size_t *budget);
/* Upper bounds of the call latency histogram's buckets, in nanoseconds; a
 * last bucket (+Inf) follows them. */
#define RPC_LAT_BUCKETS 16
extern const uint64_t rpc_lat_bound_ns[RPC_LAT_BUCKETS];

/* One procedure's calls on one transport: how many ran, and how long each
 * took from its decoded arguments to its result (not counting the reply). */
struct rpc_op_stats {
	uint64_t calls;
	uint64_t sum_ns;
	uint64_t bucket[RPC_LAT_BUCKETS + 1]; /* calls per bucket, not cumulative */
};
/* Called for each procedure of each program, on each transport. */
typedef void (*rpc_op_fn)(void *arg, const struct rpc_program *prog,
			  const struct rpc_proc_desc *proc, enum rpc_xprt xprt,
			  const struct rpc_op_stats *st);
/* A snapshot of every procedure's statistics, through fn. */
void rpc_server_each_op(struct rpc_server *srv, rpc_op_fn fn, void *arg);
/* Calls answered without running, per transport and reason (enum rpc_reject). */
void rpc_server_get_rejects(struct rpc_server *srv, uint64_t out[RPC_XPRT_N][RPC_AUTH_ERROR + 1]);
/* "tcp", "udp", "rdma". */
const char *rpc_xprt_name(enum rpc_xprt x);
/* "garbage_args", "auth_error", ...: a reject as a metric label. */
const char *rpc_reject_label(enum rpc_reject r);

/* The duplicate request cache's counters (all 0 without one). */
void rpc_server_get_drc_stats(struct rpc_server *srv, struct rpc_drc_stats *st);
struct rpc_replay_stats;
/* What the integrity flavour's replay check turned away (all 0 without a key). */
void rpc_server_get_replay_stats(struct rpc_server *srv, struct rpc_replay_stats *st);

/*
 * Decode the call in x, check its credential (and MIC), run the procedure and
 * encode the reply into x->reply. Returns 0 with a reply; -EBADMSG when the
 * message is too short to carry an xid or is not a CALL (the transport drops
 * it); -EALREADY when it is a retransmission of a call still running (the
 * transport sends nothing); -EMSGSIZE when the results do not fit in x->reply_cap: the transport
 * may point x->reply at more room and call rpc_reencode(), which falls back to
 * a SYSTEM_ERR reply if they still do not fit; -EAGAIN, only with x->nowait,
 * when the procedure would have had to wait (the transport calls
 * rpc_dispatch_done() and hands the call to a worker, which dispatches it
 * again from the start). Must be followed by rpc_dispatch_done() once the
 * transport no longer needs the results.
 */
int rpc_dispatch(struct rpc_server *srv, struct rpc_xreq *x);
/*
 * Before a transport fetches a call's arguments (RDMA Reads of its chunks):
 * whether its header, inline in x->call, would let it run: RPC version 2, a
 * CALL to a program, version and procedure served here, a credential
 * accepted here, and a peer the program takes such calls from. RPC_OK, or
 * the status rpc_dispatch will answer it with, from the header alone (the
 * arguments need not be fetched). x->peer must be set.
 */
enum rpc_reject rpc_precheck(struct rpc_server *srv, struct rpc_xreq *x);
int rpc_reencode(struct rpc_server *srv, struct rpc_xreq *x);
void rpc_dispatch_done(struct rpc_server *srv, struct rpc_xreq *x);

/* ---- the client side ---- */

/* How a client transport moves one call; see rpc_clnt_call(). */
struct rpc_call {
	uint32_t prog, vers, proc;
	xdrproc_t xdr_args;
	void *args;
	xdrproc_t xdr_res;
	void *res;
	/* Where bulk result data (READ) should land, so a transport can RDMA-Write
	 * it straight there; the result's data pointer then points into it. */
	void *reply_data;
	uint32_t reply_data_len;
	/* Expected reply size beyond inline (READDIR...): a transport may offer a
	 * reply chunk of this size. 0 = small reply. */
	uint32_t reply_hint;
	int timeout_ms;	 /* 0 = the client's default */
	void *xprt_priv; /* the transport's, until rpc_clnt_free_res */
	/* Who this call is made for (a FUSE mount serves many users); NULL = c->cred. */
	const struct rpc_cred *cred;
	/* 0: the transport takes a new xid. A retransmission of a call that may
	 * have run passes the first try's, so that the server's reply cache
	 * recognises it (rpc_drc.h). */
	uint32_t xid;
};

struct rpc_clnt;
struct rpc_clnt_ops {
	int (*call)(struct rpc_clnt *c, struct rpc_call *call);
	void (*free_res)(struct rpc_clnt *c, struct rpc_call *call);
	void (*destroy)(struct rpc_clnt *c);
	/* End the connection now (any thread): calls waiting on it return
	 * -ECONNRESET at once, later calls fail; destroy is still needed. */
	void (*abort)(struct rpc_clnt *c);
	/* Optional (RPC/RDMA): read len bytes of the server's memory at addr
	 * under key rkey into buf with one RDMA Read, no call (Optimistic RDMA).
	 * 0, or -errno: -ECONNRESET when the connection is dead (a bad key kills
	 * it). NULL: the transport has none. */
	int (*read_remote)(struct rpc_clnt *c, uint64_t addr, uint32_t rkey, void *buf,
			   uint32_t len);
};

struct rpc_clnt {
	const struct rpc_clnt_ops *ops;
	struct rpc_cred cred;		 /* what calls carry */
	const struct integrity_key *key; /* non-NULL: use AUTH_NFSRDMA_HMAC */
	uint32_t next_xid;
	uint64_t ctx; /* integrity: this client's context, random */
	uint32_t seq; /* integrity sequence numbers in it */
};

/*
 * Make a call and wait for its reply. Returns 0 with call->res decoded (free
 * with rpc_clnt_free_res), or a negative errno: -ETIMEDOUT, -ECONNRESET (the
 * connection broke; the call may or may not have run), -EACCES (auth error),
 * -EPROTO (the server refused: program/procedure/arguments), -EBADMSG (the
 * reply could not be decoded or its MIC was wrong).
 */
static inline int rpc_clnt_call(struct rpc_clnt *c, struct rpc_call *call)
{
	return c->ops->call(c, call);
}
/* See rpc_clnt_ops.read_remote; -EOPNOTSUPP where the transport has none. */
static inline int rpc_clnt_read_remote(struct rpc_clnt *c, uint64_t addr, uint32_t rkey, void *buf,
				       uint32_t len)
{
	return c->ops->read_remote ? c->ops->read_remote(c, addr, rkey, buf, len) : -EOPNOTSUPP;
}
static inline void rpc_clnt_free_res(struct rpc_clnt *c, struct rpc_call *call)
{
	c->ops->free_res(c, call);
}
static inline void rpc_clnt_destroy(struct rpc_clnt *c)
{
	c->ops->destroy(c);
}
static inline void rpc_clnt_abort(struct rpc_clnt *c)
{
	c->ops->abort(c);
}

/* Encode a call (header, credential, arguments) into buf; returns its length
 * or -errno. ddp may reduce bulk argument data into chunks. */
int rpc_encode_call(struct rpc_clnt *c, uint32_t xid, const struct rpc_call *call, uint8_t *buf,
		    size_t cap, struct rpc_ddp *ddp);
/* Decode a reply for xid into call->res; ddp provides result data moved by RDMA. */
int rpc_decode_reply(struct rpc_clnt *c, uint32_t xid, struct rpc_call *call, const uint8_t *buf,
		     size_t len, struct rpc_ddp *ddp);
/* Client decode of a bulk item that came inline: copied into call->reply_data
 * when the caller gave one big enough, else pointed at in the stream. */
int rpc_clnt_ddp_get_inline(struct rpc_call *call, XDR *xdrs, uint32_t len, void **data);
/* The xid of a reply (or call), or -EBADMSG if too short. */
int rpc_peek_xid(const uint8_t *buf, size_t len, uint32_t *xid);
/* The xid for call: call->xid if set, else a new one of c's. */
uint32_t rpc_clnt_xid(struct rpc_clnt *c, const struct rpc_call *call);
/* A starting point for a sequence of xids that differs between processes and starts. */
uint32_t rpc_xid_seed(void);
/* A transport's client starts here: its ops, AUTH_SYS, xids from a random start. */
void rpc_clnt_init(struct rpc_clnt *c, const struct rpc_clnt_ops *ops);

const char *rpc_reject_str(enum rpc_reject r);

#endif
