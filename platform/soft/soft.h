/*
 * soft.h: the software RDMA provider's internals (platform/soft).
 *
 * A reliable-connected queue pair is one stream socket (TCP with TCP_NODELAY,
 * or AF_UNIX for "unix:/path"). The wire format is in soft_wire.h.
 *
 * Threading model
 * ---------------
 * Each opened device runs one progress engine thread (soft_engine.c) that
 * plays the NIC: it owns a poller (common/base/poller.h) over every listener
 * and connection socket of the device plus a wake fd, reads every socket, runs the
 * responder side of every request, sends acknowledgements and read responses,
 * fires timers (RNR deadline, connect timeout) and carries out commands that
 * must not race with it (destroying a connection or a listener). Sockets are
 * non-blocking; nothing ever blocks on one. post_send first tries to transmit
 * from the caller's thread (non-blocking); whatever does not fit is finished
 * by the engine when the socket becomes writable.
 *
 * Locks, and what each protects (take them in this order, outer first; never
 * two of the same kind at once):
 *   cq->pump         a driven CQ's pump (soft_cq), outermost.
 *   conn->lock       everything in a soft_conn: CM state, send and receive
 *                    queues, rx/tx state, its event queue. Held across that
 *                    connection's (non-blocking) socket calls.
 *   listener->lock   a listener's queues of pending and requesting conns.
 *   cq->lock         a CQ's ring, arm flag and overflow flag.
 *   dev->keys.lock   the key table, MR in-flight counts, window bindings;
 *                    dev->keys.idle is signalled when an MR's in-flight count
 *                    drops to zero (deregistration waits on it).
 *   eng->lock        the engine's ready list, timer list and command list.
 * The engine takes eng->lock only to pick work, never while calling out.
 */
#ifndef NFSRDMA_SOFT_H
#define NFSRDMA_SOFT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "common/base/poller.h"
#include "common/verbs.h"
#include "soft_list.h"
#include "soft_wire.h"

#define SOFT_MAX_SGE	 32
#define SOFT_MAX_QP_WR	 16384
#define SOFT_MAX_CQE	 (1 << 20)
#define SOFT_MAX_RD_ATOM 128
#define SOFT_MAX_INLINE	 512
#define SOFT_MAX_MSG	 (1u << 31) /* largest message, as IB's 2 GiB */
#define SOFT_MAX_MR_SIZE (1ULL << 46)
#define SOFT_TX_RING	 16 /* messages picked for transmission at once */
#define SOFT_CMA_MAX_SEG 4  /* segments of a Write copied directly */
/* Whether RDMA data of len bytes is copied between the processes (soft_cma.c). */
#define SOFT_CMA_SIZE_OK(len) ((len) >= SOFT_CMA_MIN && (len) <= SOFT_CMA_MAX)
#define SOFT_CMA_MIN	      (16u << 10) /* smaller Writes and Reads go through the socket */
#define SOFT_CMA_MAX	      (64u << 20) /* and larger ones (a copy must not come back short) */
#define SOFT_RX_BUF	      (64 * 1024)
#define SOFT_MAX_PENDING      1024    /* half-open conns per listener */
#define SOFT_UNIX_PREFIX      "unix:" /* host of an AF_UNIX address: "unix:/path" */

/* ---- device, PD, keys (soft_dev.c, soft_mr.c) ---- */

/* One entry of the key table: an lkey or rkey of an MR, or a window's rkey. */
enum soft_key_kind { SOFT_KEY_LKEY, SOFT_KEY_MR_RKEY, SOFT_KEY_MW_RKEY };

struct soft_key {
	uint32_t key;
	uint8_t kind;
	uint32_t cma_word;     /* since a peer was let copy through it (soft_cma.c), or 0 */
	struct soft_mr *mr;    /* the registration the key leads to */
	struct soft_mw *mw;    /* SOFT_KEY_MW_RKEY */
	struct soft_key *next; /* hash chain */
};

struct soft_keytab {
	pthread_mutex_t lock;
	pthread_cond_t idle;
	struct soft_key **slots;
	uint32_t nslots, count;
	uint8_t pool[256]; /* random bytes from getentropy, consumed 4 at a time */
	uint32_t pool_left;
};

struct soft_engine;

struct soft_device {
	struct vb_device base;
	struct soft_keytab keys;
	struct soft_engine *eng;
	int sockbuf;	 /* SO_SNDBUF/SO_RCVBUF (VB_SOFT_SOCKBUF); 0: the default */
	bool direct_tx;	 /* post_send transmits from the caller's thread (VB_SOFT_DIRECT_TX) */
	bool cq_drive;	 /* CQs may be driven by their consumers (VB_SOFT_CQ_DRIVE) */
	bool local_unix; /* loopback connections go over AF_UNIX (VB_SOFT_LOCAL_UNIX) */
	bool cma;	 /* and RDMA data is copied between the processes (VB_SOFT_CMA) */
	bool no_mw;	 /* test only: no memory windows, like some devices (VB_SOFT_NO_MW) */
	unsigned long cred_epoch; /* the opener's credentials (osdep_cred_epoch) */
	/* test only (VB_SOFT_SILENT): as responder, never answer RDMA Reads, or
	 * never acknowledge, like a peer that stopped responding */
	bool silent_reads, silent_acks;
	int cred_warned;
	/* test only (VB_SOFT_FAIL_POST): the nth post_send carrying fail_op fails */
	enum soft_fail_mode { SOFT_FAIL_NONE, SOFT_FAIL_REFUSE, SOFT_FAIL_DOORBELL } fail_mode;
	int fail_op; /* a vb_wr_opcode, or -1 for any */
	unsigned fail_countdown;
};

struct soft_pd {
	struct vb_pd base;
	unsigned users; /* MRs, MWs and QPs using it, under keys.lock */
};

struct soft_mr {
	struct vb_mr base;
	struct soft_key lkey, rkey;
	unsigned inflight; /* accesses under way, under keys.lock */
	unsigned mw_bound; /* windows bound to it, under keys.lock */
	bool pinned;
};

struct soft_mw {
	struct vb_mw base;
	struct soft_key node; /* in the table while bound */
	bool bound;	      /* the fields below are valid; under keys.lock */
	uint64_t addr, len;
	unsigned access;
};

/* A window binding as posted, carried out in send-queue order. */
struct soft_bind {
	struct soft_mw *mw;
	struct soft_mr *mr;
	uint64_t addr, len;
	unsigned access;
	uint32_t rkey;
};

static inline struct soft_device *soft_dev(struct vb_device *d)
{
	return (struct soft_device *)d;
}

int soft_keys_init(struct soft_keytab *t);
void soft_keys_fini(struct soft_keytab *t);
/* A remote access of len bytes at addr with rkey, from a QP in pd; takes an
 * in-flight ref. With word non-NULL, the peer is to copy the data itself:
 * *word is the address of the key's generation word (0 if none is left) and
 * word[1] its value (soft_cma.c). */
enum vb_wc_status soft_keys_remote(struct soft_device *dev, struct vb_pd *pd, uint32_t rkey,
				   uint64_t addr, uint32_t len, unsigned need, struct soft_mr **mrp,
				   uint64_t *word);
/* Resolve local SGEs into iovecs with in-flight refs (mrs[i]); LOC_PROT_ERR if invalid. */
enum vb_wc_status soft_keys_local(struct soft_device *dev, struct vb_pd *pd,
				  const struct vb_sge *sge, int n, unsigned need, struct iovec *iov,
				  int *niov, struct soft_mr **mrs, int *nmr);
/* Drop the in-flight refs taken by the two calls above. */
void soft_mr_put(struct soft_device *dev, struct soft_mr **mrs, int n);
/* Carry out a posted window binding; false if it is invalid. */
bool soft_mw_bind_exec(struct soft_device *dev, struct vb_pd *pd, const struct soft_bind *b);
/* Invalidate a window's rkey as SEND_WITH_INV asks; false if not a window of pd. */
bool soft_mw_invalidate(struct soft_device *dev, struct vb_pd *pd, uint32_t rkey);
uint32_t soft_keys_random(struct soft_keytab *t); /* under t->lock */

int soft_reg_mr(struct vb_pd *pd, void *addr, size_t len, unsigned access, struct vb_mr **out);
int soft_dereg_mr(struct vb_mr *mr);
int soft_alloc_mw(struct vb_pd *pd, struct vb_mw **out);
int soft_bind_mw(struct vb_conn *conn, struct vb_mw *mw, struct vb_mr *mr, void *addr, size_t len,
		 unsigned access, uint64_t wr_id, int signaled);
int soft_dealloc_mw(struct vb_mw *mw);

/* ---- completion queues (soft_cq.c) ---- */

struct soft_conn;

/* A driven CQ (vb_cq_drive; VB_SOFT_CQ_DRIVE=0 refuses it): its consumer
 * reads the sockets of its connections itself. cq_fd is then `drive`'s own
 * descriptor, a poller of the wake fd and of those sockets (while connected,
 * for reading; the engine keeps connecting, writing when a socket was full,
 * timers and kicks), and poll_cq first runs the receive side of every
 * connection whose socket is readable, on the consumer's thread. One thread
 * at a time pumps (cq->pump, outermost of the locks), and a connection is
 * freed only after its teardown took cq->pump, so that a pump never holds a
 * connection that is gone. The poll that follows an arm does not pump: a
 * readable socket keeps cq_fd readable, so what it would have found wakes
 * the consumer instead (one system call fewer per wake-up). */
struct soft_cq {
	struct vb_cq base;
	pthread_mutex_t lock;
	struct vb_wc *ring;
	uint32_t cap, head, count;
	struct wakefd wake; /* readable when armed and a completion arrives */
	bool armed, overflow;
	bool posted;	      /* wake has an event that cq_ack has not taken */
	bool armed_pump;      /* driven: armed, and no poll since (it need not pump) */
	unsigned users;	      /* QPs attached */
	struct poller *drive; /* driven: the poller cq_fd is (see above); NULL if not */
	pthread_mutex_t pump;
	/* The connection that attached to it alone, for sends and receives
	 * both, while it is attached and no other is (under lock; cleared under
	 * pump too, by the teardown of a driven one): its pump reads that socket
	 * without asking the poller first, which costs no more when it is empty
	 * and saves a system call when it is not. */
	struct soft_conn *sole;
};

int soft_create_cq(struct vb_device *dev, int cqe, struct vb_cq **out);
int soft_destroy_cq(struct vb_cq *cq);
int soft_cq_fd(struct vb_cq *cq);
int soft_cq_arm(struct vb_cq *cq);
int soft_cq_ack(struct vb_cq *cq);
int soft_poll_cq(struct vb_cq *cq, int n, struct vb_wc *wc);
int soft_cq_drive(struct vb_cq *cq);
/* Queue one completion; signals the fd if armed; overflow is logged and sticky. */
void soft_cq_push(struct soft_cq *cq, const struct vb_wc *wc);
void soft_cq_use(struct soft_cq *cq, struct soft_conn *c, int delta);
/* The driven CQ whose consumer reads c's socket once connected, or NULL
 * (send and receive completions must go to that one CQ). */
struct soft_cq *soft_cq_driving(struct soft_conn *c);
/* Take a conn's socket out of its driven CQ's poller, with no pump under
 * way, before the conn is freed (the engine's teardown). */
void soft_cq_forget(struct soft_conn *c);

/* ---- connections and queue pairs (soft_cm.c, soft_qp.c, soft_tx.c, soft_rx.c) ---- */

enum soft_poll_type {
	SOFT_POLL_WAKE,
	SOFT_POLL_LISTENER,
	SOFT_POLL_LOCAL_LISTENER,
	SOFT_POLL_CONN
};

struct soft_pollobj {
	enum soft_poll_type type;
	bool watched;	 /* in the engine's poller (soft_engine_want) */
	unsigned events; /* POLLER_IN/OUT it is watched for */
};

enum soft_cm_state {
	SOFT_CM_IDLE,	    /* resolved, not connected */
	SOFT_CM_CONNECTING, /* active: TCP connect under way */
	SOFT_CM_HELLO_SENT, /* active: waiting for ACCEPT or REJECT */
	SOFT_CM_WAIT_HELLO, /* passive: socket accepted, waiting for HELLO */
	SOFT_CM_REQUEST,    /* passive: CONNECT_REQUEST raised; waiting for accept/reject */
	SOFT_CM_ACCEPTED,   /* passive: ACCEPT sent (QP usable), waiting for RTU */
	SOFT_CM_CONNECTED,
	SOFT_CM_REJECTED, /* reject sent or received */
	SOFT_CM_CLOSED,	  /* disconnected, unreachable or failed */
};

enum soft_qp_state { SOFT_QP_NONE, SOFT_QP_INIT, SOFT_QP_RTS, SOFT_QP_ERROR };

enum soft_wqe_state {
	SOFT_WQE_QUEUED, /* posted, not yet picked for transmission */
	SOFT_WQE_PICKED, /* in the tx ring */
	SOFT_WQE_SENT,	 /* on the wire; waits for its ACK or Read response */
	SOFT_WQE_DONE,	 /* finished successfully (acked, read landed, bind done) */
	SOFT_WQE_FAILED, /* finished with `status` */
};

#define SOFT_WR_BIND 255 /* a window binding in the send queue */

struct soft_swqe {
	uint64_t wr_id;
	uint64_t remote_addr;
	uint32_t rkey, inv_rkey;
	uint32_t seq, len;
	uint8_t opcode; /* enum vb_wr_opcode, or SOFT_WR_BIND */
	uint8_t state;	/* enum soft_wqe_state */
	uint8_t status; /* enum vb_wc_status when FAILED */
	bool signaled, fence, is_inline, answered;
	int num_sge;
	struct vb_sge *sge;   /* max_send_sge entries */
	uint8_t *inline_data; /* max_inline_data bytes */
	struct soft_bind bind;
};

struct soft_rwqe {
	uint64_t wr_id;
	int num_sge;
	struct vb_sge *sge; /* max_recv_sge entries */
};

enum soft_tx_kind { SOFT_TX_CTRL, SOFT_TX_WQE, SOFT_TX_RESP };

/* One message picked for transmission: header, payload iovecs and the refs it holds. */
struct soft_txmsg {
	uint8_t hdr[SOFT_HDR_LEN];
	uint8_t kind;
	uint8_t op;
	uint32_t wqe; /* SQ index (SOFT_TX_WQE) */
	uint32_t total, done;
	int niov, nmr;
	struct iovec iov[SOFT_MAX_SGE];
	struct soft_mr *mrs[SOFT_MAX_SGE];
	uint8_t small[SOFT_MAX_INLINE]; /* inline data or private data */
};

/* A Read the responder owes the initiator. */
struct soft_resp {
	uint32_t seq, len;
	uint64_t addr;
	struct soft_mr *mr;
	bool cma;	  /* the peer copies it itself: send the grant (soft_cma.c) */
	uint64_t word[2]; /* then the key's generation word: address, value */
};

enum soft_rx_kind { SOFT_RX_NONE, SOFT_RX_DATA, SOFT_RX_DISCARD };

struct soft_rx {
	uint8_t *buf; /* staging: headers and small payloads */
	uint32_t rd, wr;
	uint32_t readahead;  /* how much to read into staging after a payload */
	bool in_msg;	     /* hdr is being received */
	bool stalled;	     /* RNR: a Send waits for a Receive */
	bool drained;	     /* this pump's last read came short: the socket is empty */
	uint64_t stalled_ms; /* since when */
	struct soft_hdr hdr;
	uint32_t left; /* payload bytes still to come */
	int niov, iov_idx, nmr;
	struct iovec iov[SOFT_MAX_SGE];
	struct soft_mr *mrs[SOFT_MAX_SGE];
	uint8_t pdata[VB_MAX_PRIVATE_DATA];
	uint8_t cma[16 * SOFT_CMA_MAX_SEG]; /* a segment list (soft_cma.c) */
	uint32_t wqe;			    /* SQ index of the Read being answered (READ_RESP) */
};

struct soft_conn {
	struct vb_conn base;
	struct soft_pollobj po;	 /* in the engine's poller */
	struct soft_pollobj cpo; /* in its driven CQ's poller (soft_cq) */
	struct soft_device *dev;
	pthread_mutex_t lock;
	int fd;		  /* the stream socket, -1 before connect */
	struct wakefd ev; /* conn_fd: a semaphore, one count per queued event */
	enum soft_cm_state cm;
	enum soft_qp_state qp;
	bool active, shut_pending, shut_done, disc_posted, tx_closed;

	struct sockaddr_storage sa; /* the peer (active side) */
	socklen_t salen;
	int timeout_ms;

	struct vb_cm_event evq[4]; /* events for conn_get_event */
	unsigned ev_head, ev_count;
	struct vb_cm_event req;		/* the HELLO, as CONNECT_REQUEST */
	struct soft_listener *listener; /* while owned by a listener, under its lock */
	struct soft_list lnode;		/* on the listener's pending/request list */

	struct vb_qp_cap cap;
	unsigned rnr_timeout_ms;
	unsigned ack_timeout_ms; /* a request unanswered this long fails RETRY_EXC */
	unsigned ack_delay_ms;	 /* the ACK of an answered Send waits this long for
				    the answer (VB_SOFT_ACK_DELAY_MS) */
	uint64_t ack_wait_ms;	 /* since when the oldest send WR waits for the peer; 0: none */
	bool no_ord_throttle;
	uint8_t my_ird, my_ord;

	/* send queue: ring of cap.max_send_wr; head = oldest unfinished, tx = next to pick */
	struct soft_swqe *sq;
	uint32_t sq_head, sq_tx, sq_count;
	uint32_t sq_unpicked; /* WRs from sq_tx on, not yet picked (sq_tx alone is ambiguous when
				 full) */
	uint32_t next_seq;    /* seq of the next request */
	uint32_t acked_seq;   /* last request the peer acknowledged */
	unsigned reads_out;   /* our Reads on the wire, not yet answered */
	/* receive queue */
	struct soft_rwqe *rq;
	uint32_t rq_head, rq_count;

	/* responder side */
	uint32_t rx_expect; /* seq of the next request from the peer */
	uint32_t ack_seq;
	bool ack_pending;
	bool ack_hold;	       /* its requests end with an answered Send: it waits for the answer */
	uint64_t ack_hold_end; /* until then at most, set by the first of them; 0: none */
	struct soft_resp *resp; /* Reads owed, ring of SOFT_MAX_RD_ATOM */
	uint32_t resp_head, resp_count;
	unsigned reads_in; /* Reads accepted and not fully answered */

	/* what the tx pump sends besides the send queue */
	uint8_t cm_op; /* a CM message to send, or SOFT_OP_NONE */
	uint8_t cm_pdata[VB_MAX_PRIVATE_DATA];
	uint8_t cm_pdata_len;
	/* cross-memory attach (soft_cma.c): the peer's pid; probe and OK owed;
	 * the peer copies our data (it answered our probe); we copy its data */
	pid_t cma_pid;
	int cma_pidfd; /* that very process (a pid can be reused once it is gone), or -1 */
	bool cma_probe_owed, cma_ok_owed, cma_peer_copies, cma_we_copy;
	/* our generation word (soft_cma.c; 0: none) and the value the peer was
	 * told; the address of the peer's and the value it told us */
	uint32_t cma_word;
	uint64_t cma_gen, cma_peer_gen_addr, cma_peer_gen;
	uint8_t final_op; /* NAK or ERR after an error, or SOFT_OP_NONE */
	uint8_t final_status;
	uint32_t final_seq;

	struct soft_txmsg *tx; /* ring of SOFT_TX_RING */
	uint32_t tx_head, tx_count;
	struct soft_rx rx;

	/* engine linkage, under eng->lock */
	struct soft_list ready_node;
	unsigned ready_flags;
	struct soft_list timer_node;
	uint64_t deadline_ms;
};

/* One of a listener's AF_UNIX listeners of the local carrier (soft_local.c). */
struct soft_local_lsn {
	struct soft_pollobj po;
	struct soft_listener *l;
	int fd;	    /* -1 if none */
	int family; /* AF_INET or AF_INET6: what its peers are said to be */
};

struct soft_listener {
	struct vb_listener base;
	struct soft_pollobj po;
	pthread_mutex_t lock;
	int fd;
	struct soft_local_lsn local[2]; /* an IPv4 and an IPv6 name at most */
	struct wakefd ev;		/* listener_fd: a semaphore, one count per request */
	int spare_fd;			/* /dev/null, given up to refuse a peer when out of fds */
	struct soft_list pending;	/* conns waiting for their HELLO */
	struct soft_list requests;	/* conns with a CONNECT_REQUEST to hand out */
	unsigned nconns;		/* on either list: bounded, against floods */
	unsigned hello_ms;		/* a new socket must say HELLO within this */
};

static inline struct soft_conn *soft_conn(struct vb_conn *c)
{
	return (struct soft_conn *)c;
}

/* soft_cm.c */
int soft_listen(struct vb_device *dev, const char *host, const char *port, int backlog,
		struct vb_listener **out);
int soft_listener_fd(struct vb_listener *l);
int soft_listener_get_event(struct vb_listener *l, struct vb_cm_event *ev);
int soft_listener_destroy(struct vb_listener *l);
int soft_resolve(struct vb_device *dev, const char *host, const char *port, int timeout_ms,
		 struct vb_conn **out);
int soft_connect(struct vb_conn *conn, const struct vb_conn_param *param);
int soft_accept(struct vb_conn *conn, const struct vb_conn_param *param);
int soft_reject(struct vb_conn *conn, const void *private_data, uint8_t len);
int soft_disconnect(struct vb_conn *conn);
int soft_conn_fd(struct vb_conn *conn);
int soft_conn_get_event(struct vb_conn *conn, struct vb_cm_event *ev);
int soft_conn_destroy(struct vb_conn *conn);
/* Engine side: a listener socket (local's if not NULL, else l->fd) is readable. */
void soft_listener_io(struct soft_listener *l, struct soft_local_lsn *local);
/* Engine side: free a listener-owned conn that failed before its HELLO. */
void soft_cm_reap(struct soft_conn *c);
/* Queue a CM event on the conn's fd (conn->lock held). */
void soft_conn_event(struct soft_conn *c, enum vb_cm_event_type type, int status,
		     const uint8_t *pdata, uint8_t len);
/* Handle a received CM message (HELLO/ACCEPT/REJECT/RTU); conn->lock held. */
void soft_cm_recv(struct soft_conn *c, const struct soft_hdr *h, const uint8_t *pdata);
/* The active side's TCP connect finished (or failed); conn->lock held. */
void soft_cm_connected(struct soft_conn *c);
/* The socket failed or hit EOF: flush, DISCONNECTED or UNREACHABLE; conn->lock held. */
void soft_conn_broken(struct soft_conn *c, int err);
void soft_conn_free(struct soft_conn *c);
struct soft_conn *soft_conn_new(struct soft_device *dev);

/* soft_qp.c */
int soft_create_qp(struct vb_conn *conn, struct vb_pd *pd, struct vb_cq *send_cq,
		   struct vb_cq *recv_cq, const struct vb_qp_cap *cap);
int soft_post_send(struct vb_conn *conn, struct vb_send_wr *wr, struct vb_send_wr **bad);
int soft_post_recv(struct vb_conn *conn, struct vb_recv_wr *wr, struct vb_recv_wr **bad);
void soft_qp_free(struct soft_conn *c);
/* Who moved the QP to error, which decides what the peer is told. */
enum soft_err_origin {
	SOFT_ERR_RESPONDER, /* we refused the peer's request final_seq: send NAK */
	SOFT_ERR_LOCAL,	    /* our own WR failed locally: send ERR */
	SOFT_ERR_PEER,	    /* the peer sent NAK or ERR: tell nothing */
	SOFT_ERR_QUIET,	    /* disconnect, socket loss, destroy: tell nothing */
};
/* Move the QP to error: finish what is done, fail what failed, flush the rest. */
void soft_qp_error(struct soft_conn *c, enum soft_err_origin origin, uint32_t seq,
		   enum vb_wc_status status);
/* Retire finished send WRs from the head of the SQ, in post order. */
void soft_sq_retire(struct soft_conn *c);
/* Mark the oldest unfinished send WR failed with status (soft_qp_error reports it). */
void soft_sq_fail_head(struct soft_conn *c, enum vb_wc_status status);
/* Complete the head Receive with status (and byte_len, flags, key). */
void soft_rq_complete(struct soft_conn *c, enum vb_wc_status status, uint32_t byte_len,
		      unsigned flags, uint32_t inv_rkey);
/* The NAK for our request seq arrived. */
void soft_sq_nak(struct soft_conn *c, uint32_t seq, enum vb_wc_status status);

/* soft_tx.c */
/* Send what can be sent without blocking; conn->lock held. True when more remains. */
bool soft_tx_pump(struct soft_conn *c);
/* Drop picked messages (QP error); keep the one half-sent if keep_partial. */
void soft_tx_drop(struct soft_conn *c, bool keep_partial);

/* soft_rx.c */
int soft_rx_init(struct soft_rx *rx);
void soft_rx_fini(struct soft_conn *c);
/* Receive and process what the socket has; conn->lock held. True when more remains. */
bool soft_rx_pump(struct soft_conn *c);
/* Release what a half-received message holds (QP error); conn->lock held. */
void soft_rx_abort(struct soft_conn *c);

/* ---- the progress engine (soft_engine.c) ---- */

enum soft_ready { SOFT_READY_RX = 1, SOFT_READY_TX = 2 };

int soft_engine_start(struct soft_device *dev);
void soft_engine_stop(struct soft_device *dev);
/* Add a socket to the engine's poller, for POLLER_IN/OUT (common/base/poller.h). */
int soft_engine_watch(struct soft_engine *e, int fd, struct soft_pollobj *po, unsigned events);
/* Change what it is watched for; 0 takes it out of the poller until wanted again. */
void soft_engine_want(struct soft_engine *e, int fd, struct soft_pollobj *po, unsigned events);
/* The same for any poller p. */
void soft_poller_want(struct poller *p, int fd, struct soft_pollobj *po, unsigned events);
/* Socket work for one connection, from the engine or a driven CQ's pump:
 * finish a connect, receive (rx), send, and watch the socket for what it
 * can use next. */
void soft_conn_work(struct soft_conn *c, bool rx, bool tx);
/* A driven CQ's pump, for its sole connection: the receive side as if the
 * socket were readable, if its CQ's poller watches it for reading. */
void soft_conn_drive_rx(struct soft_conn *c);
void soft_engine_unwatch(struct soft_engine *e, int fd);
/* Take c off the ready and timer lists (before freeing it). */
void soft_engine_forget(struct soft_engine *e, struct soft_conn *c);
/* Ask the engine to run rx and/or tx for c soon. */
void soft_engine_kick(struct soft_engine *e, struct soft_conn *c, unsigned what);
/* Arm (ms > 0) or cancel (0) c's deadline; the engine then calls soft_conn_timeout. */
void soft_engine_timer(struct soft_engine *e, struct soft_conn *c, unsigned ms);
/* Run fn(arg) in the engine thread and wait for it (destroying what it may be using). */
void soft_engine_call(struct soft_engine *e, void (*fn)(void *), void *arg);
/* The engine's call at c's deadline (conn->lock held). */
void soft_conn_timeout(struct soft_conn *c);
/* Once connected, c's one timer at its nearest deadline: an RNR stall's and
 * the oldest send WR's wait for the peer (conn->lock held). */
void soft_conn_arm(struct soft_conn *c);
/* The peer answered one of our requests, or more; or the SQ got its first
 * unfinished WR: the wait for the peer starts again (conn->lock held). */
void soft_sq_progress(struct soft_conn *c);
uint64_t soft_now_ms(void);

/* soft_dev.c */
extern const struct vb_ops vb_soft_ops;
unsigned soft_env_uint(const char *name, unsigned def, unsigned min, unsigned max);
/* Socket helpers shared by the two sides of the connection manager (soft_cm.c). */
void soft_tune_socket(struct soft_device *dev, int fd, int family);
void soft_addr_name(const struct sockaddr *sa, socklen_t len, char *out, size_t n);
/* "unix:/path" into ss; -EINVAL if host is not of that form or too long. */
int soft_unix_addr(const char *host, struct sockaddr_storage *ss, socklen_t *len);
/* The kernel's rule for uverbs and rdma_cm files, which rxe and siw post
 * through: a thread whose credentials changed after the device was opened may
 * not post, poll, arm, register or connect on it. 0, or -EACCES (logged once
 * per device). */
int soft_cred_check(struct vb_device *d);

/* soft_cma.c: RDMA data copied between the processes of a local connection. */
/* Whether this end of c can: VB_SOFT_CMA and the local carrier. */
bool soft_cma_able(struct soft_conn *c);
/* The peer said it can too: note its pid and owe it a probe, if this end can. */
void soft_cma_peer_able(struct soft_conn *c);
/* The probe's payload into out (SOFT_CMA_PROBE_LEN bytes): the probe word's
 * address and c's generation word's (a slot taken now) with its value. */
#define SOFT_CMA_PROBE_LEN 24
uint32_t soft_cma_probe_payload(struct soft_conn *c, uint8_t *out);
/* Generation words: 64-bit words in memory that this process never frees,
 * which a peer reads after copying to learn whether the copy still counts.
 * get: a word (its number, never 0), or 0 if none is left; value, addr: its
 * value and address; raise: change its value, before letting go of what it
 * guards; put: raise it and give it back (0: nothing to do). */
uint32_t soft_cma_word_get(void);
uint64_t soft_cma_word_value(uint32_t w);
uint64_t soft_cma_word_addr(uint32_t w);
void soft_cma_word_raise(uint32_t w);
void soft_cma_word_put(uint32_t w);
/* c is about to flush (its QP goes to error) or to be freed: raise its
 * generation word, so that the peer stops copying from it. */
void soft_cma_raise(struct soft_conn *c);
/* c is freed: raise its word and give its slot back. */
void soft_cma_release(struct soft_conn *c);
/* The peer's probe: if its word is in reach, we copy from now on and owe CMA_OK. */
void soft_cma_probe_recv(struct soft_conn *c, const uint8_t *payload, uint32_t len);
/* A segment list: encode n iovecs into out (16 bytes each); its length. */
uint32_t soft_cma_encode(const struct iovec *iov, int n, uint8_t *out);
/* Decode len bytes of list into iov: how many segments, or -1 unless there are
 * 1..SOFT_CMA_MAX_SEG of them adding up to total. */
int soft_cma_decode(const uint8_t *in, uint32_t len, uint64_t total, struct iovec *iov);
/* Copy len bytes from the peer's segments to local; false (logged) unless
 * all of them came and the peer's generation word still holds its value
 * afterwards (the peer flushed nothing meanwhile). */
bool soft_cma_read(struct soft_conn *c, void *local, size_t len, const struct iovec *remote, int n);
/* A Read's grant: the key's generation word (address, value) into out; its
 * length (SOFT_CMA_GRANT_LEN). */
#define SOFT_CMA_GRANT_LEN 16
uint32_t soft_cma_grant(const uint64_t word[2], uint8_t *out);
/* The same for a Read that the peer let us copy (its READ_RESP's grant):
 * len bytes at the peer's addr into the local iovecs; the key's generation
 * word (grant: its address and value) must hold too. */
bool soft_cma_pull(struct soft_conn *c, const struct iovec *local, int n, uint64_t addr, size_t len,
		   const uint8_t *grant);

/* soft_local.c: the local carrier (AF_UNIX between two ends on this host). */
/* Non-blocking AF_UNIX listeners under the local names of the address inet_fd
 * is bound to, in out[] (fd and family; the others' fd -1): one, or two for
 * an IPv6 wildcard that takes IPv4 too. None if that is not a loopback or
 * wildcard address or the carrier is off; a name another listener has is
 * said in the log and left out. */
void soft_local_listen(struct soft_device *dev, int inet_fd, int backlog,
		       struct soft_local_lsn out[2]);
/* A non-blocking AF_UNIX socket connected to the listener that has the local
 * name of sa (127.0.0.1 or ::1); -1 if there is none, it runs as a user who
 * may not hold the port, or the carrier is off. */
int soft_local_connect(struct soft_device *dev, const struct sockaddr *sa);
/* The loopback address of family, port 0: the address of the local peer on
 * fd; its name for logs and statistics ("127.0.0.1:local-PID") in name. */
void soft_local_peer(int family, int fd, struct sockaddr_storage *ss, socklen_t *len, char *name,
		     size_t n);
/* Whether this post_send (whose first WR is wr) is the one VB_SOFT_FAIL_POST
 * asks to fail; the mode if so, SOFT_FAIL_NONE if not. */
enum soft_fail_mode soft_fail_post(struct soft_device *dev, const struct vb_send_wr *wr);

#endif
