/*
 * vbench.h: what the two halves of nfsrdma-vbench share (vbench.c: the active
 * process, output and start-up; vbench_peer.c: the helpers both processes use
 * and the passive process).
 */
#ifndef NFSRDMA_VBENCH_H
#define NFSRDMA_VBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/verbs.h"

#define MAXSZ	   (1u << 20)
#define AREA	   (16u << 20) /* the window for Writes and Reads */
#define NRECV	   64	       /* passive receive pool, MAXSZ each */
#define CTL_MAGIC  0x76626e63u
#define MAX_POINTS 16
#define MAX_REPS   9

enum cmd { CMD_PINGPONG = 1, CMD_COUNT, CMD_TCP, CMD_QUIT, CMD_REPLY };

struct ctl {
	uint32_t magic, cmd, size, pad;
	uint64_t count;
	uint8_t fill[40];
};

/* What the passive side tells the active side in its accept private data. */
struct peer_info {
	uint64_t addr;
	uint32_t rkey, pad;
};

struct ep {
	struct vb_device *dev;
	struct vb_pd *pd;
	struct vb_cq *cq;
	struct vb_conn *conn;
	struct vb_listener *lst;
	uint8_t *buf;
	size_t len;
	struct vb_mr *mr;
};

struct opts {
	const char *device, *csv;
	const char *addr; /* where the verbs side listens and connects */
	size_t sizes[MAX_POINTS];
	int nsizes, depths[MAX_POINTS], ndepths;
	double secs;
	int reps;
	bool quick;
};

enum op { OP_WRITE, OP_READ, OP_SEND, NOPS };

/* Medians over the repetitions. */
struct results {
	double bw[NOPS][MAX_POINTS][MAX_POINTS]; /* MB/s by op, size, depth */
	double tcp[MAX_POINTS], lat[MAX_POINTS], reg[MAX_POINTS];
};

/* Every sample, by repetition. */
struct samples {
	double bw[NOPS][MAX_POINTS][MAX_POINTS][MAX_REPS];
	double tcp[MAX_POINTS][MAX_REPS], lat[MAX_POINTS][MAX_REPS], reg[MAX_POINTS][MAX_REPS];
};

/* Both processes' helpers and the passive process (vbench_peer.c). */
extern const struct vb_qp_cap vbench_qp_cap; /* every QP of both processes */
void vbench_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
double vbench_now_s(void);
/* Wait for n completions of e's CQ into wc; returns how many came. */
int vbench_wait_wcs(struct ep *e, struct vb_wc *wc, int n);
void vbench_check_wc(const struct vb_wc *wc);
void vbench_post_recv(struct ep *e, uint64_t id, void *p, uint32_t len);
void vbench_post_send(struct ep *e, uint64_t id, void *p, uint32_t len, bool signaled);
void vbench_ep_open(struct ep *e, const char *device, size_t len);
void vbench_ep_close(struct ep *e);
void vbench_wait_event(struct vb_conn *c, enum vb_cm_event_type want, struct vb_cm_event *ev);
bool vbench_read_full(int fd, void *p, size_t n);
bool vbench_write_full(int fd, const void *p, size_t n);
/* The passive process: serve the active one until it says quit. */
int run_passive(const struct opts *o, const char *port, int tlfd, int ready_fd);

#endif
