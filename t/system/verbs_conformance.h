/*
 * verbs_conformance.h: what the parts of t/system/verbs_conformance share: the
 * device and listener every case uses, a connected pair of conns, registered
 * buffers, the helpers over them (verbs_conformance.c) and the cases, one
 * file per topic (verbs_conformance_*.c).
 */
#ifndef NFSRDMA_T_VERBS_CONFORMANCE_H
#define NFSRDMA_T_VERBS_CONFORMANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/verbs.h"

#define TMO_MS	   10000 /* for anything that should happen promptly */
#define RNR_TMO_MS 30000 /* providers may retry RNR for a long time */
#define PAGE	   4096

/* Skip this case and say why: cmocka's skip() takes no reason, so the reason
 * goes out first as "# skip because: WHY" (t/lab/verbs-lab.sh puts it on the
 * case's SKIP line). Needs cmocka.h. */
#define skip_because(why)                                                                          \
	do {                                                                                       \
		print_message("# skip because: %s\n", why);                                        \
		skip();                                                                            \
	} while (0)

/* Set up once for every case (verbs_conformance.c). */
extern struct vb_device *dev;
extern struct vb_device_attr attr;
extern struct vb_listener *lst;
extern char addr[256], port[16];
extern bool is_soft;

struct pair {
	struct vb_pd *apd, *ppd;
	struct vb_cq *ascq, *arcq, *pscq, *prcq;
	struct vb_conn *a, *p;
	bool shared; /* PDs and CQs belong to the caller */
};

struct pair_opts {
	const char *req_pdata, *acc_pdata;
	uint8_t a_ird, a_ord, p_ird, p_ord;
	struct vb_qp_cap cap;
};

struct buf {
	uint8_t *p;
	size_t len;
	struct vb_mr *mr;
};

/* Helpers (verbs_conformance.c). */
long long now_ms(void);
/* Wait until fd is readable; false on timeout. */
bool wait_fd(int fd, int ms);
/* The next completion on cq within ms; false on timeout. */
bool get_wc(struct vb_cq *cq, struct vb_wc *wc, int ms);
/* The next completion must be wr_id with status st (within ms, or TMO_MS). */
void expect_wc_tmo(struct vb_cq *cq, uint64_t wr_id, enum vb_wc_status st, int ms);
void expect_wc(struct vb_cq *cq, uint64_t wr_id, enum vb_wc_status st);
/* No completion may be waiting on cq. */
void expect_no_wc(struct vb_cq *cq);
/* The next CM event on conn; it must be of type want. */
void expect_event(struct vb_conn *c, enum vb_cm_event_type want, struct vb_cm_event *ev);
/* The listener's next CONNECT_REQUEST. */
void expect_request(struct vb_cm_event *ev);
/* A free TCP port on addr (an IP address), as a decimal string. */
void free_port(char out[16]);
/* Queue sizes most cases use. */
struct vb_qp_cap default_cap(void);
/* Active conn resolved, QP created, connect started. */
struct vb_conn *start_active(struct pair *pr, const struct pair_opts *o);
/* Allocate a pair's PDs and CQs unless the caller supplies them. */
void pair_res(struct pair *pr);
/* Connect a pair through the listener (with options, or the defaults). */
void pair_open_opts(struct pair *pr, const struct pair_opts *opts);
void pair_open(struct pair *pr);
/* Wait until both ends of a pair copy each other's RDMA data directly, where
 * the soft provider does that (verbs_conformance_cma.c). */
void cma_wait(struct pair *pr);
/* Whether the active end of a pair copies the data of its large Reads itself
 * (the soft provider's cross-memory copies, verbs_conformance_cma.c). */
bool cma_pulls(struct pair *pr);
/* Tear a pair down; conns flush whatever is outstanding. */
void pair_close(struct pair *pr);
/* A page-aligned buffer, filled with a pattern seeded by seed, registered with access. */
void buf_new(struct buf *b, struct vb_pd *pd, size_t len, unsigned access, unsigned seed);
void buf_free(struct buf *b);
/* An SGE over [off, off+len) of b. */
struct vb_sge sge_of(struct buf *b, size_t off, uint32_t len);
/* Post one send-side WR over the SGEs s[0..n). */
void post_sges(struct vb_conn *c, uint64_t id, enum vb_wr_opcode op, struct vb_sge *s, int n,
	       uint64_t raddr, uint32_t rkey, unsigned flags);
/* Post one Receive, or one send-side WR, over one SGE of b. */
void post_recv1(struct vb_conn *c, uint64_t id, struct buf *b, size_t off, uint32_t len);
void post1(struct vb_conn *c, uint64_t id, enum vb_wr_opcode op, struct buf *b, size_t off,
	   uint32_t len, uint64_t raddr, uint32_t rkey, unsigned flags);
/* The remote address of offset off in b (VA-based keys). */
uint64_t raddr(const struct buf *b, size_t off);

/* The cases, in verbs_conformance_conn.c ... */
void open_names(void **state);
void connect_private_data(void **state);
void connect_rejected(void **state);
void connect_unreachable(void **state);
void connect_timeout(void **state);
void local_carrier(void **state);
void disconnect_flushes(void **state);
void peer_vanishes(void **state);
void many_connections(void **state);
void churn(void **state);
/* ... verbs_conformance_data.c ... */
void send_recv_order(void **state);
void write_then_send(void **state);
void rdma_read_sges(void **state);
void rdma_write_sges(void **state);
void full_send_queue(void **state);
void mixed_order_and_fence(void **state);
void inline_send(void **state);
void answered_send(void **state);
void answered_hold_write(void **state);
void rnr_then_receive(void **state);
void rnr_retries_exhausted(void **state);
void ord_throttles_reads(void **state);
void ird_enforced(void **state);
void cq_event_fd(void **state);
void cq_overflow_reported(void **state);
void driven_cq(void **state);
void driven_cq_shared(void **state);
void threads_share_a_qp(void **state);
/* ... verbs_conformance_access.c ... */
void bad_rkey(void **state);
void lkey_is_not_rkey(void **state);
void out_of_bounds(void **state);
void missing_access_right(void **state);
void wrong_pd(void **state);
void dereg_while_peer_holds_key(void **state);
void dereg_waits_for_inflight(void **state);
void recv_too_small(void **state);
void mw_bind_write_rebind(void **state);
void mw_range_and_rights(void **state);
void mw_unbind_len0(void **state);
void mw_send_with_invalidate(void **state);
/* ... verbs_conformance_cma.c ... */
void cross_memory_copies(void **state);
void cross_memory_off(void **state);
void cross_memory_flushed(void **state);
void cross_memory_reads(void **state);
/* ... and verbs_conformance_hostile.c. */
void hostile_handshake(void **state);
void hostile_requests(void **state);
void hostile_silent_peer(void **state);
void hostile_unanswered(void **state);
void hostile_out_of_descriptors(void **state);

#endif
