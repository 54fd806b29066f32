/*
 * verbs.h: the one verbs interface the protocol core sees.
 *
 * Each provider (platform/soft: software RDMA over stream sockets;
 * platform/linux: rdma-core; platform/illumos: IBTL-like verbs) fills one
 * `const struct vb_ops` with named initializers. An op a provider leaves NULL
 * answers -EOPNOTSUPP through the vb_* wrappers below; nothing crashes.
 *
 * Objects: every object starts with the common struct below, which a provider
 * embeds as the first member of its own struct and downcasts to. A "connection"
 * (struct vb_conn) is a reliable-connected queue pair together with its
 * connection-manager identity, as with an rdma_cm id.
 *
 * Conventions: functions return 0 or a negative errno. All ops are safe to call
 * from several threads, as ibverbs' are. Remote addresses are the peer's virtual
 * addresses of a registration (as ibverbs' VA-based MRs), keys are 32 bits.
 */
#ifndef NFSRDMA_VERBS_H
#define NFSRDMA_VERBS_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define VB_NAME_MAX	    64
#define VB_MAX_PRIVATE_DATA 56 /* what an IB CM REQ carries; RFC 8797 needs 8 */
#define VB_DEFAULT_RD_ATOM  8  /* default IRD/ORD when the caller says 0 */

struct vb_ops;

struct vb_device {
	const struct vb_ops *ops;
	char name[VB_NAME_MAX]; /* e.g. "soft", "rxe0", "mlx5_0" */
	const char *provider;	/* "soft", "rdma-core", "ibtl" */
};

struct vb_pd {
	struct vb_device *dev;
};

struct vb_cq {
	struct vb_device *dev;
	void *context; /* the user's */
};

/* Access rights of a registration or window binding. */
enum vb_access {
	VB_ACCESS_LOCAL_WRITE = 1 << 0,
	VB_ACCESS_REMOTE_READ = 1 << 1,
	VB_ACCESS_REMOTE_WRITE = 1 << 2,
	VB_ACCESS_MW_BIND = 1 << 3, /* memory windows may be bound to this MR */
};
#define VB_ACCESS_REMOTE (VB_ACCESS_REMOTE_READ | VB_ACCESS_REMOTE_WRITE)

struct vb_mr {
	struct vb_pd *pd;
	void *addr;
	size_t length;
	uint32_t lkey;
	uint32_t rkey; /* meaningful only with a remote access right */
	unsigned access;
};

/* A memory window: a fresh rkey per binding over a range of an MR. */
struct vb_mw {
	struct vb_pd *pd;
	uint32_t rkey; /* key of the current binding; 0 when unbound */
};

struct vb_listener {
	struct vb_device *dev;
	void *context;
};

struct vb_conn {
	struct vb_device *dev;
	struct vb_pd *pd;		   /* set by create_qp */
	struct vb_cq *send_cq;		   /* set by create_qp */
	struct vb_cq *recv_cq;		   /* set by create_qp */
	void *context;			   /* the user's */
	char peer[VB_NAME_MAX];		   /* "address:port" of the other side, for logs */
	struct sockaddr_storage peer_addr; /* the other side's address, for access checks */
	socklen_t peer_addr_len;	   /* 0 where the provider cannot tell */
	uint8_t ird;			   /* RDMA Reads the peer may have outstanding at us */
	uint8_t ord;			   /* RDMA Reads we may have outstanding at the peer */
};

struct vb_device_attr {
	uint32_t max_sge;   /* per work request */
	uint32_t max_qp_wr; /* per queue */
	uint32_t max_cqe;
	uint64_t max_mr_size;
	uint8_t max_qp_rd_atom;	     /* largest IRD a QP can have */
	uint8_t max_qp_init_rd_atom; /* largest ORD a QP can have */
	uint8_t has_mw;		     /* memory windows work */
	uint8_t has_send_inv;	     /* VB_WR_SEND_WITH_INV can be posted */
	uint8_t mw_remote_inv;	     /* a peer's Send with Invalidate unbinds our windows */
};

struct vb_qp_cap {
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
};

struct vb_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

enum vb_wr_opcode {
	VB_WR_SEND,
	VB_WR_SEND_WITH_INV, /* Send that invalidates invalidate_rkey at the peer */
	VB_WR_RDMA_WRITE,
	VB_WR_RDMA_READ,
};

enum vb_send_flags {
	VB_SEND_SIGNALED = 1 << 0, /* produce a completion on success */
	VB_SEND_FENCE = 1 << 1,	   /* wait for earlier RDMA Reads to finish first */
	VB_SEND_INLINE = 1 << 2,   /* copy the data at post time (length <= max_inline_data) */
	/* a Send that the peer answers (an RPC call or reply): the peer may hold
	 * its acknowledgement for the answer to carry (the soft provider, see
	 * VB_SOFT_ACK_DELAY_MS; others ignore it) */
	VB_SEND_ANSWERED = 1 << 3,
};

struct vb_send_wr {
	uint64_t wr_id;
	struct vb_send_wr *next;
	struct vb_sge *sg_list;
	int num_sge;
	enum vb_wr_opcode opcode;
	unsigned send_flags;
	uint64_t remote_addr;	  /* RDMA Write/Read */
	uint32_t rkey;		  /* RDMA Write/Read */
	uint32_t invalidate_rkey; /* SEND_WITH_INV */
};

struct vb_recv_wr {
	uint64_t wr_id;
	struct vb_recv_wr *next;
	struct vb_sge *sg_list;
	int num_sge;
};

enum vb_wc_status {
	VB_WC_SUCCESS,
	VB_WC_LOC_LEN_ERR,     /* a Send did not fit the posted Receive */
	VB_WC_LOC_PROT_ERR,    /* local key or bounds wrong */
	VB_WC_REM_ACCESS_ERR,  /* the peer refused our rkey, bounds or rights */
	VB_WC_REM_INV_REQ_ERR, /* the peer saw an invalid request (e.g. IRD exceeded) */
	VB_WC_REM_OP_ERR,
	VB_WC_RNR_RETRY_EXC_ERR, /* no Receive posted at the peer, retries exhausted */
	VB_WC_RETRY_EXC_ERR,	 /* transport retries exhausted (peer gone) */
	VB_WC_WR_FLUSH_ERR,	 /* flushed: the QP went to error or was disconnected */
	VB_WC_MW_BIND_ERR,
	VB_WC_GENERAL_ERR,
};

enum vb_wc_opcode {
	VB_WC_SEND,
	VB_WC_RDMA_WRITE,
	VB_WC_RDMA_READ,
	VB_WC_BIND_MW,
	VB_WC_LOCAL_INV,
	VB_WC_RECV,
};

enum vb_wc_flags {
	VB_WC_WITH_INV = 1 << 0, /* the received Send invalidated invalidated_rkey */
};

struct vb_wc {
	uint64_t wr_id;
	struct vb_conn *conn;
	enum vb_wc_status status;
	enum vb_wc_opcode opcode; /* valid for receives and successful sends */
	uint32_t byte_len;	  /* received bytes (RECV) */
	uint32_t invalidated_rkey;
	unsigned wc_flags;
};

/* What connect, accept and reject carry (RFC 8797 private data among it). */
struct vb_conn_param {
	const void *private_data;
	uint8_t private_data_len;
	uint8_t responder_resources; /* our IRD: 0 = default */
	uint8_t initiator_depth;     /* our ORD: 0 = default */
};

enum vb_cm_event_type {
	VB_CM_CONNECT_REQUEST, /* listener: a peer wants to connect */
	VB_CM_ESTABLISHED,
	VB_CM_REJECTED,	   /* private data holds the reject's */
	VB_CM_UNREACHABLE, /* address, route or peer could not be reached */
	VB_CM_DISCONNECTED,
	VB_CM_ERROR,
};

struct vb_cm_event {
	enum vb_cm_event_type type;
	int status;	      /* negative errno for errors */
	struct vb_conn *conn; /* CONNECT_REQUEST: the new, not yet accepted conn */
	uint8_t private_data[VB_MAX_PRIVATE_DATA];
	uint8_t private_data_len;
	uint8_t responder_resources; /* the peer's IRD (request/established) */
	uint8_t initiator_depth;     /* the peer's ORD */
};

/*
 * The ops table. Required: open, close, query_device, alloc_pd, dealloc_pd,
 * create_cq, destroy_cq, cq_fd, cq_arm, cq_ack, poll_cq, reg_mr, dereg_mr,
 * the connection ops, post_send, post_recv. Optional (may be NULL): the
 * memory-window ops and cq_drive.
 */
struct vb_ops {
	const char *name;

	/* Open a device by name, or the provider's best one for NULL; -ENODEV if none. */
	int (*open)(const char *name, struct vb_device **out);
	void (*close)(struct vb_device *dev);
	int (*query_device)(struct vb_device *dev, struct vb_device_attr *attr);

	int (*alloc_pd)(struct vb_device *dev, struct vb_pd **out);
	int (*dealloc_pd)(struct vb_pd *pd);

	/* Completion queues with a pollable fd: readable once armed and a completion arrived. */
	int (*create_cq)(struct vb_device *dev, int cqe, struct vb_cq **out);
	int (*destroy_cq)(struct vb_cq *cq);
	int (*cq_fd)(struct vb_cq *cq);
	int (*cq_arm)(struct vb_cq *cq); /* request an event for the next completion */
	int (*cq_ack)(struct vb_cq *cq); /* consume the event that made the fd readable */
	int (*poll_cq)(struct vb_cq *cq, int n, struct vb_wc *wc); /* >= 0 completions, or -errno */
	/* Optional, before any QP uses the CQ: its consumer promises to watch
	 * cq_fd for as long as QPs use it and, whenever it is readable, to ack,
	 * poll until empty, arm and poll again. A provider that does its
	 * progress work in software may then do the work of the CQ's
	 * connections in poll_cq, on the consumer's thread, instead of handing
	 * it over from a thread of its own; cq_fd may then change, and be
	 * readable with no completion to give. -EOPNOTSUPP where it cannot. */
	int (*cq_drive)(struct vb_cq *cq);

	int (*reg_mr)(struct vb_pd *pd, void *addr, size_t len, unsigned access,
		      struct vb_mr **out);
	int (*dereg_mr)(struct vb_mr *mr);

	int (*alloc_mw)(struct vb_pd *pd, struct vb_mw **out);
	/* Bind mw over [addr, addr+len) of mr with a fresh rkey (mw->rkey); len 0 invalidates.
	 * Ordered with the conn's later work requests; completes as VB_WC_BIND_MW if signaled. */
	int (*bind_mw)(struct vb_conn *conn, struct vb_mw *mw, struct vb_mr *mr, void *addr,
		       size_t len, unsigned access, uint64_t wr_id, int signaled);
	int (*dealloc_mw)(struct vb_mw *mw);

	/* Passive side: host NULL = any address; "unix:/path" = AF_UNIX where supported. */
	int (*listen)(struct vb_device *dev, const char *host, const char *port, int backlog,
		      struct vb_listener **out);
	int (*listener_fd)(struct vb_listener *l);
	/* Next CONNECT_REQUEST, or -EAGAIN. */
	int (*listener_get_event)(struct vb_listener *l, struct vb_cm_event *ev);
	int (*listener_destroy)(struct vb_listener *l);

	/* Active side: resolve the peer and bind a new conn to this device (blocking). */
	int (*resolve)(struct vb_device *dev, const char *host, const char *port, int timeout_ms,
		       struct vb_conn **out);
	int (*create_qp)(struct vb_conn *conn, struct vb_pd *pd, struct vb_cq *send_cq,
			 struct vb_cq *recv_cq, const struct vb_qp_cap *cap);
	int (*connect)(struct vb_conn *conn, const struct vb_conn_param *param);
	int (*accept)(struct vb_conn *conn, const struct vb_conn_param *param);
	int (*reject)(struct vb_conn *conn, const void *private_data, uint8_t len);
	int (*disconnect)(struct vb_conn *conn);
	/* The conn's own event fd and events: ESTABLISHED, REJECTED, UNREACHABLE, DISCONNECTED. */
	int (*conn_fd)(struct vb_conn *conn);
	int (*conn_get_event)(struct vb_conn *conn, struct vb_cm_event *ev); /* or -EAGAIN */
	/* Destroy the QP and the conn; outstanding work is flushed first. */
	int (*conn_destroy)(struct vb_conn *conn);

	int (*post_send)(struct vb_conn *conn, struct vb_send_wr *wr, struct vb_send_wr **bad);
	int (*post_recv)(struct vb_conn *conn, struct vb_recv_wr *wr, struct vb_recv_wr **bad);
};

/* ---- the provider registry (platform/providers.c) ---- */

/* NULL-terminated list of the providers built in, best first. */
extern const struct vb_ops *const vb_providers[];

/*
 * Open a device by configuration name: "auto" (the first provider with a
 * device, rdma-core before soft), "soft", or a device name such as "rxe0".
 */
int vb_open(const char *spec, struct vb_device **out);
void vb_close(struct vb_device *dev);
/* A provider of list (NULL: vb_providers) that spec may open a device of
 * (as vb_open reads it) and that has no memory-window ops, so that
 * registration = fastreg cannot work there; NULL when there is none. */
const struct vb_ops *vb_windowless_provider(const struct vb_ops *const *list, const char *spec);

const char *vb_wc_status_str(enum vb_wc_status status);
const char *vb_cm_event_str(enum vb_cm_event_type type);

/* ---- calls through the table: optional ops answer -EOPNOTSUPP ---- */

#define VB_CALL(dev, op, ...) ((dev)->ops->op ? (dev)->ops->op(__VA_ARGS__) : -EOPNOTSUPP)

static inline int vb_query_device(struct vb_device *d, struct vb_device_attr *a)
{
	return VB_CALL(d, query_device, d, a);
}
static inline int vb_alloc_pd(struct vb_device *d, struct vb_pd **o)
{
	return VB_CALL(d, alloc_pd, d, o);
}
static inline int vb_dealloc_pd(struct vb_pd *pd)
{
	return VB_CALL(pd->dev, dealloc_pd, pd);
}
static inline int vb_create_cq(struct vb_device *d, int cqe, struct vb_cq **o)
{
	return VB_CALL(d, create_cq, d, cqe, o);
}
static inline int vb_destroy_cq(struct vb_cq *cq)
{
	return VB_CALL(cq->dev, destroy_cq, cq);
}
static inline int vb_cq_fd(struct vb_cq *cq)
{
	return VB_CALL(cq->dev, cq_fd, cq);
}
static inline int vb_cq_arm(struct vb_cq *cq)
{
	return VB_CALL(cq->dev, cq_arm, cq);
}
static inline int vb_cq_ack(struct vb_cq *cq)
{
	return VB_CALL(cq->dev, cq_ack, cq);
}
static inline int vb_cq_drive(struct vb_cq *cq)
{
	return VB_CALL(cq->dev, cq_drive, cq);
}
static inline int vb_poll_cq(struct vb_cq *cq, int n, struct vb_wc *wc)
{
	return cq->dev->ops->poll_cq(cq, n, wc);
}
static inline int vb_reg_mr(struct vb_pd *pd, void *addr, size_t len, unsigned access,
			    struct vb_mr **o)
{
	return VB_CALL(pd->dev, reg_mr, pd, addr, len, access, o);
}
static inline int vb_dereg_mr(struct vb_mr *mr)
{
	return VB_CALL(mr->pd->dev, dereg_mr, mr);
}
static inline int vb_alloc_mw(struct vb_pd *pd, struct vb_mw **o)
{
	return VB_CALL(pd->dev, alloc_mw, pd, o);
}
static inline int vb_bind_mw(struct vb_conn *c, struct vb_mw *mw, struct vb_mr *mr, void *addr,
			     size_t len, unsigned access, uint64_t wr_id, int signaled)
{
	return VB_CALL(c->dev, bind_mw, c, mw, mr, addr, len, access, wr_id, signaled);
}
static inline int vb_dealloc_mw(struct vb_mw *mw)
{
	return VB_CALL(mw->pd->dev, dealloc_mw, mw);
}
static inline int vb_listen(struct vb_device *d, const char *host, const char *port, int backlog,
			    struct vb_listener **o)
{
	return VB_CALL(d, listen, d, host, port, backlog, o);
}
static inline int vb_listener_fd(struct vb_listener *l)
{
	return VB_CALL(l->dev, listener_fd, l);
}
static inline int vb_listener_get_event(struct vb_listener *l, struct vb_cm_event *ev)
{
	return VB_CALL(l->dev, listener_get_event, l, ev);
}
static inline int vb_listener_destroy(struct vb_listener *l)
{
	return VB_CALL(l->dev, listener_destroy, l);
}
static inline int vb_resolve(struct vb_device *d, const char *host, const char *port,
			     int timeout_ms, struct vb_conn **o)
{
	return VB_CALL(d, resolve, d, host, port, timeout_ms, o);
}
static inline int vb_create_qp(struct vb_conn *c, struct vb_pd *pd, struct vb_cq *scq,
			       struct vb_cq *rcq, const struct vb_qp_cap *cap)
{
	return VB_CALL(c->dev, create_qp, c, pd, scq, rcq, cap);
}
static inline int vb_connect(struct vb_conn *c, const struct vb_conn_param *p)
{
	return VB_CALL(c->dev, connect, c, p);
}
static inline int vb_accept(struct vb_conn *c, const struct vb_conn_param *p)
{
	return VB_CALL(c->dev, accept, c, p);
}
static inline int vb_reject(struct vb_conn *c, const void *pdata, uint8_t len)
{
	return VB_CALL(c->dev, reject, c, pdata, len);
}
static inline int vb_disconnect(struct vb_conn *c)
{
	return VB_CALL(c->dev, disconnect, c);
}
static inline int vb_conn_fd(struct vb_conn *c)
{
	return VB_CALL(c->dev, conn_fd, c);
}
static inline int vb_conn_get_event(struct vb_conn *c, struct vb_cm_event *ev)
{
	return VB_CALL(c->dev, conn_get_event, c, ev);
}
static inline int vb_conn_destroy(struct vb_conn *c)
{
	return VB_CALL(c->dev, conn_destroy, c);
}
static inline int vb_post_send(struct vb_conn *c, struct vb_send_wr *wr, struct vb_send_wr **bad)
{
	return c->dev->ops->post_send(c, wr, bad);
}
static inline int vb_post_recv(struct vb_conn *c, struct vb_recv_wr *wr, struct vb_recv_wr **bad)
{
	return c->dev->ops->post_recv(c, wr, bad);
}

#endif
