/*
 * verbs_rdmacore.h: the rdma-core provider's private types, shared by its
 * files (verbs_rdmacore.c: device, PD, CQ, MR; verbs_rdmacore_cm.c:
 * resolve, QP, connect/accept/disconnect; verbs_rdmacore_event.c: conn
 * events; verbs_rdmacore_listen.c: listeners; verbs_rdmacore_post.c: post,
 * poll; verbs_rdmacore_mw.c: memory windows, bind, invalidation;
 * verbs_rdmacore_map.c: the key -> object maps).
 *
 * The provider speaks the libibverbs/librdmacm API: rdma-core's on Linux, and
 * the OFED libibverbs 1.1.8 / librdmacm 1.0.21 that illumos ships over
 * sol_uverbs (compiled and link-checked only: scripts/check-illumos.sh). That
 * older API has no memory windows or Send with Invalidate; configure builds
 * verbs_rdmacore_nomw.c in place of verbs_rdmacore_mw.c there.
 *
 * Every vb object is the first member of its rdma-core struct, so a vb pointer
 * downcasts with a plain cast (see the rdmacore_*_of helpers).
 */
#ifndef NFSRDMA_VERBS_RDMACORE_H
#define NFSRDMA_VERBS_RDMACORE_H

#include <netdb.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "common/verbs.h"

extern const struct vb_ops vb_rdmacore_ops;

/* ---- key -> object maps (verbs_rdmacore_map.c) ---- */

#define RDMACORE_MAP_BUCKETS 256 /* power of two */

/* One entry; lives inside its object, so mapping allocates nothing. */
struct rdmacore_map_node {
	uint32_t key;
	int mapped;
	void *obj;
	struct rdmacore_map_node *next;
};

/* Chained hash table behind a read-write lock. */
struct rdmacore_map {
	pthread_rwlock_t lock;
	struct rdmacore_map_node *bucket[RDMACORE_MAP_BUCKETS];
	unsigned count;
};

int rdmacore_map_init(struct rdmacore_map *map);
void rdmacore_map_destroy(struct rdmacore_map *map);
/* Map node->key to node->obj; -EEXIST if the key is taken. */
int rdmacore_map_insert(struct rdmacore_map *map, struct rdmacore_map_node *node);
/* Unmap node if it is mapped. */
void rdmacore_map_remove(struct rdmacore_map *map, struct rdmacore_map_node *node);
/* The object of key, or NULL (takes the read lock). */
void *rdmacore_map_find(struct rdmacore_map *map, uint32_t key);
/* The same under a lock the caller holds, for batches and read-modify-write. */
void rdmacore_map_rdlock(struct rdmacore_map *map);
void rdmacore_map_wrlock(struct rdmacore_map *map);
void rdmacore_map_unlock(struct rdmacore_map *map);
struct rdmacore_map_node *rdmacore_map_find_locked(struct rdmacore_map *map, uint32_t key);
int rdmacore_map_insert_locked(struct rdmacore_map *map, struct rdmacore_map_node *node);
void rdmacore_map_remove_locked(struct rdmacore_map *map, struct rdmacore_map_node *node);

/* ---- objects ---- */

struct rdmacore_device {
	struct vb_device base;
	struct ibv_context **list; /* rdma_get_devices(): kept so ctx stays librdmacm's */
	struct ibv_context *ctx;   /* the same context rdma_cm ids on this device carry */
	struct ibv_device_attr attr;
	int mw_type;		   /* enum ibv_mw_type; 0: no memory windows */
	unsigned wc_inv_flags;	   /* wc_flags bits meaning "with invalidate" (see rc_open) */
	struct rdmacore_map qpmap; /* qp_num -> struct vb_conn */
	struct rdmacore_map mwmap; /* rkey of a bound window -> struct rdmacore_mw */
};

struct rdmacore_pd {
	struct vb_pd base;
	struct ibv_pd *pd;
};

struct rdmacore_cq {
	struct vb_cq base;
	struct ibv_comp_channel *channel; /* non-blocking fd */
	struct ibv_cq *cq;
};

struct rdmacore_mr {
	struct vb_mr base;
	struct ibv_mr *mr;
};

struct rdmacore_mw {
	struct vb_mw base; /* base.rkey: 0 once unbound here or invalidated by the peer */
	struct ibv_mw *mw;
	struct ibv_mr *bound_mr;       /* the MR of the current binding */
	struct rdmacore_map_node node; /* in mwmap while bound */
};

struct rdmacore_listener {
	struct vb_listener base;
	struct rdma_event_channel *channel; /* non-blocking fd */
	struct rdma_cm_id *id;
};

/* Where a conn is in disconnecting; see verbs_rdmacore_event.c. */
enum rdmacore_disc {
	RDMACORE_DISC_NONE,	/* connected (or never was) */
	RDMACORE_DISC_PENDING,	/* we disconnected: DISCONNECTED to report */
	RDMACORE_DISC_REPORTED, /* DISCONNECTED reported: later ones are dropped */
};

struct rdmacore_conn {
	struct vb_conn base;
	struct rdma_event_channel *channel; /* this conn's own, non-blocking */
	int wake_fd;			    /* eventfd: a DISCONNECTED of our own is pending */
	int ep_fd;			    /* epoll over channel and wake_fd: the conn's fd */
	int disc;			    /* enum rdmacore_disc, accessed atomically */
	struct rdma_cm_id *id;
	struct ibv_qp *qp;	       /* id->qp once create_qp ran */
	struct rdmacore_map_node node; /* in qpmap while the QP exists */
	int passive;		       /* came from a listener */
	uint8_t peer_ird;	       /* passive: the request's responder_resources */
	uint8_t peer_ord;	       /* passive: the request's initiator_depth */
};

static inline struct rdmacore_device *rdmacore_device_of(struct vb_device *d)
{
	return (struct rdmacore_device *)d;
}
static inline struct rdmacore_conn *rdmacore_conn_of(struct vb_conn *c)
{
	return (struct rdmacore_conn *)c;
}

/* True when dev is one of ours (callers pass objects from any provider). */
static inline int rdmacore_is_ours(const struct vb_device *dev)
{
	return dev && dev->ops == &vb_rdmacore_ops;
}

/* ---- translations (verbs_rdmacore_post.c), testable without a device ---- */

/* vb access bits -> IBV_ACCESS_*; -EINVAL for unknown bits. */
int rdmacore_access_to_ibv(unsigned access, int *out);
enum vb_wc_status rdmacore_wc_status(enum ibv_wc_status status);
enum vb_wc_opcode rdmacore_wc_opcode(enum ibv_wc_opcode opcode);
/* One vb send WR -> ibv WR (SGEs shared, not copied); -EINVAL for a bad WR. */
int rdmacore_send_wr_to_ibv(const struct vb_send_wr *wr, struct ibv_send_wr *out);
/* One ibv completion -> vb completion; conn is looked up by the caller, inv_flags is
 * the device's wc_inv_flags. */
void rdmacore_wc_from_ibv(const struct ibv_wc *in, struct vb_conn *conn, unsigned inv_flags,
			  struct vb_wc *out);

/* The conn's QP, or NULL when conn is not ours or has no QP yet. */
static inline struct ibv_qp *rdmacore_conn_qp(struct vb_conn *conn)
{
	if (conn == NULL || !rdmacore_is_ours(conn->dev))
		return NULL;
	return rdmacore_conn_of(conn)->qp;
}

/* ---- memory windows and invalidation: verbs_rdmacore_mw.c where the API
 * has them, verbs_rdmacore_nomw.c (each says it has none) where not ---- */

/* The window type the device offers (enum ibv_mw_type), 0 for none. */
int rdmacore_mw_type(const struct ibv_device_attr *attr);
/* Which wc_flags bits mean that a receive invalidated a key; 0: none can. */
unsigned rdmacore_wc_inv_flags(const struct ibv_device_attr *attr);
/* vb window access (remote rights only) -> IBV_ACCESS_*; -EINVAL otherwise
 * (verbs_rdmacore_mw.c only). */
int rdmacore_mw_access_to_ibv(unsigned access, int *out);
/* The window ops (verbs_rdmacore_mw.c only): in the ops table where the API
 * has windows and Send with Invalidate, else left out (NULL). */
int rdmacore_alloc_mw(struct vb_pd *pd, struct vb_mw **out);
int rdmacore_dealloc_mw(struct vb_mw *mw);
int rdmacore_bind_mw(struct vb_conn *conn, struct vb_mw *mw, struct vb_mr *mr, void *addr,
		     size_t len, unsigned access, uint64_t wr_id, int signaled);
#if HAVE_DECL_IBV_ALLOC_MW && HAVE_DECL_IBV_WR_SEND_WITH_INV
#define RDMACORE_WINDOW_OPS                                                                        \
	.alloc_mw = rdmacore_alloc_mw, .bind_mw = rdmacore_bind_mw,                                \
	.dealloc_mw = rdmacore_dealloc_mw
#else
#define RDMACORE_WINDOW_OPS .alloc_mw = NULL, .bind_mw = NULL, .dealloc_mw = NULL
#endif
/* A received Send with Invalidate named rkey: if it is one of our windows, it is unbound. */
void rdmacore_mw_invalidated(struct rdmacore_device *d, uint32_t rkey);
/* Make out a Send with Invalidate of rkey: 0, or -EOPNOTSUPP. */
int rdmacore_send_inv(uint32_t rkey, struct ibv_send_wr *out);
/* Whether the device takes Send with Invalidate (and this build can post it). */
int rdmacore_send_inv_ok(const struct ibv_device_attr *attr);
/* Whether a peer's Send with Invalidate can unbind d's windows (type 2 only)
 * and its completions say so. */
int rdmacore_mw_remote_inv(const struct rdmacore_device *d);
/* The key a receive with invalidate invalidated. */
uint32_t rdmacore_wc_invalidated_rkey(const struct ibv_wc *wc);
/* Whether opcode is the completion of a Local Invalidate. */
int rdmacore_wc_is_local_inv(enum ibv_wc_opcode opcode);

/* ---- ops implemented in the other files ---- */

int rdmacore_poll_cq(struct vb_cq *cq, int n, struct vb_wc *wc);
int rdmacore_post_send(struct vb_conn *conn, struct vb_send_wr *wr, struct vb_send_wr **bad);
int rdmacore_post_recv(struct vb_conn *conn, struct vb_recv_wr *wr, struct vb_recv_wr **bad);

int rdmacore_listen(struct vb_device *dev, const char *host, const char *port, int backlog,
		    struct vb_listener **out);
int rdmacore_listener_fd(struct vb_listener *l);
int rdmacore_listener_get_event(struct vb_listener *l, struct vb_cm_event *ev);
int rdmacore_listener_destroy(struct vb_listener *l);
int rdmacore_resolve(struct vb_device *dev, const char *host, const char *port, int timeout_ms,
		     struct vb_conn **out);
int rdmacore_create_qp(struct vb_conn *conn, struct vb_pd *pd, struct vb_cq *send_cq,
		       struct vb_cq *recv_cq, const struct vb_qp_cap *cap);
int rdmacore_connect(struct vb_conn *conn, const struct vb_conn_param *param);
int rdmacore_accept(struct vb_conn *conn, const struct vb_conn_param *param);
int rdmacore_reject(struct vb_conn *conn, const void *private_data, uint8_t len);
int rdmacore_disconnect(struct vb_conn *conn);
int rdmacore_conn_fd(struct vb_conn *conn);
int rdmacore_conn_get_event(struct vb_conn *conn, struct vb_cm_event *ev);
int rdmacore_conn_destroy(struct vb_conn *conn);

/* ---- connection helpers shared by the cm, event and listen files ---- */

/* Make fd non-blocking; -errno on failure. */
int rdmacore_set_nonblock(int fd);
/* "addr:port" (or "[addr]:port") of sa, for logs and vb_conn.peer. */
/* Name the peer of c (for logs) and keep its address (for access checks). */
void rdmacore_set_peer(struct vb_conn *c, const struct sockaddr *sa);
void rdmacore_format_addr(const struct sockaddr *sa, char *buf, size_t len);
/* getaddrinfo for host:port (passive: for binding); -EADDRNOTAVAIL, logged, on failure. */
int rdmacore_lookup(const char *host, const char *port, int passive, struct addrinfo **res);
/* Checks shared by listen and resolve: ours, a port, and no AF_UNIX. */
int rdmacore_check_endpoint(struct vb_device *dev, const char *host, const char *port, void *out);
/* A new event channel with a non-blocking fd. */
int rdmacore_channel_new(struct rdma_event_channel **out);
/* Next event from ch: 0, -EAGAIN when none is waiting, or -errno. */
int rdmacore_next_event(struct rdma_event_channel *ch, struct rdma_cm_event **e);
/* A conn shell on dev with its channel and fds; the id is the caller's to attach. */
int rdmacore_conn_alloc(struct vb_device *dev, struct rdmacore_conn **out);
/* Undo rdmacore_conn_alloc (destroying the id, if one is attached). */
void rdmacore_conn_free(struct rdmacore_conn *c);
/* Give the QP (in RTS) the RNR timer we want peers to wait for. */
void rdmacore_set_rnr_timer(struct rdmacore_conn *c);
/* The peer's IRD/ORD of a connect request or reply, as vb_cm_event states them. */
void rdmacore_peer_rd_atom(const struct rdma_conn_param *p, struct vb_cm_event *ev);
/* An event's private data into ev (at most VB_MAX_PRIVATE_DATA bytes). */
void rdmacore_copy_private(const struct rdma_conn_param *p, struct vb_cm_event *ev);

#endif
