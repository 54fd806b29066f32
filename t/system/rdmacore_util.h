/*
 * rdmacore_util.h: a small TAP harness and a connected-pair fixture for the
 * rdma-core device tests (t/system/rdmacore_test.c).
 *
 * Own harness rather than cmocka: these tests must report "# SKIP reason"
 * per case (no device, no VB_ADDR, no memory windows), which cmocka 1.1
 * prints as "not ok", a failure for automake's TAP driver.
 */
#ifndef NFSRDMA_T_RDMACORE_UTIL_H
#define NFSRDMA_T_RDMACORE_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "common/verbs.h"

/* ---- harness ---- */

#define T_SKIPPED 1 /* a case's return value: skipped (reason given to t_skip) */

void t_fail(const char *file, int line, const char *what);
void t_fail_eq(const char *file, int line, const char *a, const char *b, long long va,
	       long long vb);
int t_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Mark the running case as a known failure of this device (TAP "# TODO": XFAIL/XPASS). */
void t_todo(const char *reason);

#define T_CHECK(cond)                                                                              \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			t_fail(__FILE__, __LINE__, #cond);                                         \
			return -1;                                                                 \
		}                                                                                  \
	} while (0)
#define T_EQ(a, b)                                                                                 \
	do {                                                                                       \
		long long t_a_ = (long long)(a), t_b_ = (long long)(b);                            \
		if (t_a_ != t_b_) {                                                                \
			t_fail_eq(__FILE__, __LINE__, #a, #b, t_a_, t_b_);                         \
			return -1;                                                                 \
		}                                                                                  \
	} while (0)

struct pair;

/* One case: fn gets a pair opened (pair_open) but not connected; the runner closes it. */
struct t_case {
	const char *name;
	int (*fn)(struct pair *p);
	int needs_addr; /* skipped without VB_ADDR */
};

/* Run the cases as one TAP stream; the exit code is 0 only when none failed. */
int t_run(const struct t_case *cases, size_t n);

/* ---- the fixture: two conns on one device, one PD, a CQ and a buffer per side ---- */

#define PAIR_BUF  65536
#define T_WAIT_MS 30000 /* generous: the lab runs ~50x slower than hardware */

struct pair {
	struct vb_device *dev;
	struct vb_device_attr attr;
	struct vb_pd *pd;
	struct vb_cq *cq[2]; /* [0] active side, [1] passive side: send and recv CQ */
	struct vb_listener *l;
	struct vb_conn *c[2]; /* [0] active, [1] passive */
	char *buf[2];
	struct vb_mr *mr[2]; /* buf[i], every right including MW_BIND */
	struct vb_mw *mw;    /* a window, when a case allocates one */
	char port[8];
};

extern const char *t_device; /* VB_DEVICE, NULL for the first device */
extern const char *t_addr;   /* VB_ADDR: an address of that device */

/* Device, PD, CQs and registered buffers. */
int pair_open(struct pair *p);
/* Listen on a fresh port, resolve and create both QPs; the passive conn is in c[1]. */
int pair_request(struct pair *p, const struct vb_conn_param *req, struct vb_cm_event *req_ev);
/* pair_request, accept with rep, and wait for ESTABLISHED on both sides. */
int pair_connect(struct pair *p, const struct vb_conn_param *req, const struct vb_conn_param *rep,
		 struct vb_cm_event *req_ev, struct vb_cm_event est[2]);
/* Destroy whatever of the pair exists. */
void pair_close(struct pair *p);

/* Create the QP of conn on side i's CQ with small default caps. */
int pair_create_qp(struct pair *p, int side, struct vb_conn *conn);
/* Next event of a conn / listener within ms; -ETIMEDOUT otherwise. */
int wait_conn_event(struct vb_conn *c, struct vb_cm_event *ev, int ms);
int wait_listener_event(struct vb_listener *l, struct vb_cm_event *ev, int ms);
/* Next completion of cq within ms; -ETIMEDOUT otherwise. */
int wait_wc(struct vb_cq *cq, struct vb_wc *wc, int ms);
/* Wait until fd is readable (ms); 1 readable, 0 timeout. */
int wait_readable(int fd, int ms);

/* Post one receive of len bytes at buf[side]+off. */
int post_recv_at(struct pair *p, int side, uint64_t wr_id, size_t off, uint32_t len);
/* Post one signaled send-type WR (SEND, RDMA WRITE/READ) of buf[side]+off. */
int post_one(struct pair *p, int side, enum vb_wr_opcode op, uint64_t wr_id, size_t off,
	     uint32_t len, uint64_t raddr, uint32_t rkey);

#endif
