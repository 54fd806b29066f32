/*
 * vbench_peer.c: nfsrdma-vbench's helpers that both processes use (an
 * endpoint on the device, posting, waiting for completions and connection
 * events) and the passive process, which answers the active one's control
 * messages and serves its RDMA Writes, Reads and Sends.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/base/log.h"
#include "common/rpcrdma/rpcrdma_reg.h"
#include "vbench.h"

/* Report a failure and end this process (the benchmark cannot go on). */
void vbench_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "nfsrdma-vbench: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

/* Monotonic seconds. */
double vbench_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Up to n completions, waiting on the CQ's event fd when there are none. */
int vbench_wait_wcs(struct ep *e, struct vb_wc *wc, int n)
{
	for (;;) {
		int got = vb_poll_cq(e->cq, n, wc);

		if (got != 0)
			return got < 0 ? (vbench_die("poll_cq: %s", strerror(-got)), 0) : got;
		vb_cq_arm(e->cq);
		if ((got = vb_poll_cq(e->cq, n, wc)) != 0)
			return got < 0 ? (vbench_die("poll_cq: %s", strerror(-got)), 0) : got;
		struct pollfd p = {.fd = vb_cq_fd(e->cq), .events = POLLIN};
		if (poll(&p, 1, 30000) != 1)
			vbench_die("no completion within 30 s");
		vb_cq_ack(e->cq);
	}
}

/* Any failed work request ends the benchmark. */
void vbench_check_wc(const struct vb_wc *wc)
{
	if (wc->status != VB_WC_SUCCESS)
		vbench_die("work request %llu failed: %s", (unsigned long long)wc->wr_id,
			   vb_wc_status_str(wc->status));
}

/* Post one Receive over p. */
void vbench_post_recv(struct ep *e, uint64_t id, void *p, uint32_t len)
{
	struct vb_sge s = {.addr = (uintptr_t)p, .length = len, .lkey = e->mr->lkey};
	struct vb_recv_wr wr = {.wr_id = id, .sg_list = &s, .num_sge = 1};
	int rc = vb_post_recv(e->conn, &wr, NULL);

	if (rc)
		vbench_die("post_recv: %s", strerror(-rc));
}

/* Post one Send over p, signaled or not. */
void vbench_post_send(struct ep *e, uint64_t id, void *p, uint32_t len, bool signaled)
{
	struct vb_sge s = {.addr = (uintptr_t)p, .length = len, .lkey = e->mr->lkey};
	struct vb_send_wr wr = {.wr_id = id,
				.sg_list = &s,
				.num_sge = 1,
				.opcode = VB_WR_SEND,
				.send_flags = signaled ? VB_SEND_SIGNALED : 0};
	int rc = vb_post_send(e->conn, &wr, NULL);

	if (rc)
		vbench_die("post_send: %s", strerror(-rc));
}

/* Open the device, a PD, one CQ and one registered region of len bytes. */
void vbench_ep_open(struct ep *e, const char *device, size_t len)
{
	int rc;

	memset(e, 0, sizeof(*e));
	if ((rc = vb_open(device, &e->dev)) != 0)
		vbench_die("cannot open device %s: %s", device, strerror(-rc));
	if (vb_alloc_pd(e->dev, &e->pd) || vb_create_cq(e->dev, 4096, &e->cq))
		vbench_die("cannot allocate a PD and a CQ");
	e->len = len;
	e->buf = rr_mem_alloc(len); /* as the transport's own: huge pages from 2 MiB */
	if (e->buf == NULL)
		vbench_die("out of memory");
	memset(e->buf, 0x5a, len);
	rc = vb_reg_mr(e->pd, e->buf, len, VB_ACCESS_LOCAL_WRITE | VB_ACCESS_REMOTE, &e->mr);
	if (rc)
		vbench_die("cannot register %zu bytes: %s", len, strerror(-rc));
}

/* Tear an endpoint down. */
void vbench_ep_close(struct ep *e)
{
	if (e->conn)
		vb_conn_destroy(e->conn);
	if (e->lst)
		vb_listener_destroy(e->lst);
	vb_dereg_mr(e->mr);
	vb_destroy_cq(e->cq);
	vb_dealloc_pd(e->pd);
	vb_close(e->dev);
	free(e->buf);
}

/* The next CM event on a conn, which must be want. */
void vbench_wait_event(struct vb_conn *c, enum vb_cm_event_type want, struct vb_cm_event *ev)
{
	struct pollfd p = {.fd = vb_conn_fd(c), .events = POLLIN};

	while (vb_conn_get_event(c, ev) == -EAGAIN)
		if (poll(&p, 1, 30000) != 1)
			vbench_die("no connection event within 30 s");
	if (ev->type != want)
		vbench_die("connection event %s (status %d), expected %s",
			   vb_cm_event_str(ev->type), ev->status, vb_cm_event_str(want));
}

const struct vb_qp_cap vbench_qp_cap = {
	.max_send_wr = 128, .max_recv_wr = NRECV + 8, .max_send_sge = 1, .max_recv_sge = 1};

/* ---- passive process ---- */

/* Read exactly n bytes from a TCP socket. */
bool vbench_read_full(int fd, void *p, size_t n)
{
	while (n) {
		ssize_t r = read(fd, p, n);

		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			return false;
		}
		p = (char *)p + r;
		n -= (size_t)r;
	}
	return true;
}

/* Write exactly n bytes to a TCP socket. */
bool vbench_write_full(int fd, const void *p, size_t n)
{
	while (n) {
		ssize_t r = write(fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		p = (const char *)p + r;
		n -= (size_t)r;
	}
	return true;
}

/* TCP baseline, receiving end: header {size, total}, total bytes read size at a time, ack. */
static void tcp_sink(int fd, uint8_t *buf)
{
	uint64_t hdr[2];
	char ack = 1;

	if (!vbench_read_full(fd, hdr, sizeof(hdr)) || hdr[0] == 0 || hdr[0] > MAXSZ)
		vbench_die("TCP baseline: bad header");
	for (uint64_t left = hdr[1]; left;) {
		size_t want = left < hdr[0] ? left : hdr[0];
		ssize_t r = read(fd, buf, want);

		if (r <= 0)
			vbench_die("TCP baseline: read: %s", r ? strerror(errno) : "EOF");
		left -= (uint64_t)r;
	}
	if (!vbench_write_full(fd, &ack, 1))
		vbench_die("TCP baseline: ack");
}

/* Listen, accept one conn with our region's address in the private data. */
static void passive_accept(struct ep *e, const char *port)
{
	struct peer_info pi = {.addr = (uintptr_t)e->buf, .rkey = e->mr->rkey};
	struct vb_conn_param cp = {.private_data = &pi, .private_data_len = sizeof(pi)};
	struct pollfd p = {.fd = vb_listener_fd(e->lst), .events = POLLIN};
	struct vb_cm_event ev;

	while (vb_listener_get_event(e->lst, &ev) == -EAGAIN)
		if (poll(&p, 1, 30000) != 1)
			vbench_die("no connect request within 30 s");
	e->conn = ev.conn;
	if (vb_create_qp(e->conn, e->pd, e->cq, e->cq, &vbench_qp_cap))
		vbench_die("create_qp failed");
	for (int i = 0; i < NRECV; i++)
		vbench_post_recv(e, (uint64_t)i, e->buf + AREA + (size_t)i * MAXSZ, MAXSZ);
	if (vb_accept(e->conn, &cp))
		vbench_die("accept failed");
	vbench_wait_event(e->conn, VB_CM_ESTABLISHED, &ev);
}

/* Serve control messages and count data messages until told to quit. */
static void passive_loop(struct ep *e, int tlfd)
{
	uint8_t *reply = e->buf + AREA + (size_t)NRECV * MAXSZ;
	uint32_t pp = 0;
	uint64_t count = 0;
	int tfd = -1;
	struct vb_wc wc[32];

	for (;;) {
		int n = vbench_wait_wcs(e, wc, 32);

		for (int i = 0; i < n; i++) {
			vbench_check_wc(&wc[i]);
			if (wc[i].opcode != VB_WC_RECV)
				continue;
			uint8_t *msg = e->buf + AREA + wc[i].wr_id * MAXSZ;
			struct ctl *c = (struct ctl *)msg;
			if (wc[i].byte_len != sizeof(*c) || c->magic != CTL_MAGIC) {
				count++;
				if (pp) /* every 16th signaled: the queue is reaped in order */
					vbench_post_send(e, 1, reply, pp, count % 16 == 1);
			} else if (c->cmd == CMD_QUIT) {
				if (tfd >= 0)
					close(tfd);
				return;
			} else if (c->cmd == CMD_PINGPONG) {
				pp = c->size;
				count = 0;
			} else if (c->cmd == CMD_COUNT) {
				struct ctl *r = (struct ctl *)reply;

				*r = (struct ctl){
					.magic = CTL_MAGIC, .cmd = CMD_REPLY, .count = count};
				vbench_post_send(e, 2, r, sizeof(*r), true);
				pp = 0;
				count = 0;
			} else if (c->cmd == CMD_TCP) {
				if (tfd < 0 && (tfd = accept(tlfd, NULL, NULL)) < 0)
					vbench_die("TCP baseline: accept: %s", strerror(errno));
				tcp_sink(tfd, reply + MAXSZ);
			}
			vbench_post_recv(e, wc[i].wr_id, msg, MAXSZ);
		}
	}
}

/* The passive process: listen, accept, serve until told to quit. */
int run_passive(const struct opts *o, const char *port, int tlfd, int ready_fd)
{
	struct ep e;
	char one = 1;

	vbench_ep_open(&e, o->device, AREA + (size_t)NRECV * MAXSZ + 2 * MAXSZ + 4096);
	if (vb_listen(e.dev, o->addr, port, 8, &e.lst))
		vbench_die("cannot listen on %s:%s", o->addr, port);
	if (write(ready_fd, &one, 1) != 1)
		vbench_die("cannot signal readiness");
	close(ready_fd);
	passive_accept(&e, port);
	passive_loop(&e, tlfd);
	close(tlfd);
	vbench_ep_close(&e);
	return 0;
}
