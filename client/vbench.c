/*
 * vbench.c: nfsrdma-vbench, the verbs microbenchmark.
 *
 * Forks a passive and an active process that open the same provider and
 * connect over loopback, then measures, for message sizes 4 KiB..1 MiB:
 *   - RDMA Write, RDMA Read and Send bandwidth at queue depths 1, 4, 16;
 *   - half round-trip latency of a Send ping-pong;
 *   - the cost of registering + deregistering a buffer of that size, and the
 *     ping-pong latency with that cost added ("latency with registration");
 *   - plain TCP loopback bandwidth between the same two processes, as the
 *     baseline, and the ratio of the best verbs bandwidth to it.
 * Prints a table; --csv FILE also writes every figure as CSV.
 *
 * The passive process registers one region: a 16 MiB window the active side
 * writes to and reads from, a pool of receive buffers and a reply area; it
 * answers control messages (ping-pong mode, message count, TCP run, quit)
 * that travel as 64-byte Sends.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/base/log.h"
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
	size_t sizes[MAX_POINTS];
	int nsizes, depths[MAX_POINTS], ndepths;
	double secs;
	int reps;
	bool quick;
};

enum op { OP_WRITE, OP_READ, OP_SEND, NOPS };
static const char *const op_names[NOPS] = {"write", "read", "send"};

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

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Report a failure and end this process (the benchmark cannot go on). */
static void die(const char *fmt, ...)
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
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Up to n completions, waiting on the CQ's event fd when there are none. */
static int wait_wcs(struct ep *e, struct vb_wc *wc, int n)
{
	for (;;) {
		int got = vb_poll_cq(e->cq, n, wc);

		if (got != 0)
			return got < 0 ? (die("poll_cq: %s", strerror(-got)), 0) : got;
		vb_cq_arm(e->cq);
		if ((got = vb_poll_cq(e->cq, n, wc)) != 0)
			return got < 0 ? (die("poll_cq: %s", strerror(-got)), 0) : got;
		struct pollfd p = {.fd = vb_cq_fd(e->cq), .events = POLLIN};
		if (poll(&p, 1, 30000) != 1)
			die("no completion within 30 s");
		vb_cq_ack(e->cq);
	}
}

/* Any failed work request ends the benchmark. */
static void check_wc(const struct vb_wc *wc)
{
	if (wc->status != VB_WC_SUCCESS)
		die("work request %llu failed: %s", (unsigned long long)wc->wr_id,
		    vb_wc_status_str(wc->status));
}

/* Post one Receive over p. */
static void post_recv(struct ep *e, uint64_t id, void *p, uint32_t len)
{
	struct vb_sge s = {.addr = (uintptr_t)p, .length = len, .lkey = e->mr->lkey};
	struct vb_recv_wr wr = {.wr_id = id, .sg_list = &s, .num_sge = 1};
	int rc = vb_post_recv(e->conn, &wr, NULL);

	if (rc)
		die("post_recv: %s", strerror(-rc));
}

/* Post one Send over p, signaled or not. */
static void post_send(struct ep *e, uint64_t id, void *p, uint32_t len, bool signaled)
{
	struct vb_sge s = {.addr = (uintptr_t)p, .length = len, .lkey = e->mr->lkey};
	struct vb_send_wr wr = {.wr_id = id,
				.sg_list = &s,
				.num_sge = 1,
				.opcode = VB_WR_SEND,
				.send_flags = signaled ? VB_SEND_SIGNALED : 0};
	int rc = vb_post_send(e->conn, &wr, NULL);

	if (rc)
		die("post_send: %s", strerror(-rc));
}

/* Open the device, a PD, one CQ and one registered region of len bytes. */
static void ep_open(struct ep *e, const char *device, size_t len)
{
	int rc;

	memset(e, 0, sizeof(*e));
	if ((rc = vb_open(device, &e->dev)) != 0)
		die("cannot open device %s: %s", device, strerror(-rc));
	if (vb_alloc_pd(e->dev, &e->pd) || vb_create_cq(e->dev, 4096, &e->cq))
		die("cannot allocate a PD and a CQ");
	e->len = len;
	e->buf = aligned_alloc(4096, len);
	if (e->buf == NULL)
		die("out of memory");
	memset(e->buf, 0x5a, len);
	rc = vb_reg_mr(e->pd, e->buf, len, VB_ACCESS_LOCAL_WRITE | VB_ACCESS_REMOTE, &e->mr);
	if (rc)
		die("cannot register %zu bytes: %s", len, strerror(-rc));
}

/* Tear an endpoint down. */
static void ep_close(struct ep *e)
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
static void wait_event(struct vb_conn *c, enum vb_cm_event_type want, struct vb_cm_event *ev)
{
	struct pollfd p = {.fd = vb_conn_fd(c), .events = POLLIN};

	while (vb_conn_get_event(c, ev) == -EAGAIN)
		if (poll(&p, 1, 30000) != 1)
			die("no connection event within 30 s");
	if (ev->type != want)
		die("connection event %s (status %d), expected %s", vb_cm_event_str(ev->type),
		    ev->status, vb_cm_event_str(want));
}

static const struct vb_qp_cap qp_cap = {
	.max_send_wr = 128, .max_recv_wr = NRECV + 8, .max_send_sge = 1, .max_recv_sge = 1};

/* ---- passive process ---- */

/* Read exactly n bytes from a TCP socket. */
static bool read_full(int fd, void *p, size_t n)
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
static bool write_full(int fd, const void *p, size_t n)
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

	if (!read_full(fd, hdr, sizeof(hdr)) || hdr[0] == 0 || hdr[0] > MAXSZ)
		die("TCP baseline: bad header");
	for (uint64_t left = hdr[1]; left;) {
		size_t want = left < hdr[0] ? left : hdr[0];
		ssize_t r = read(fd, buf, want);

		if (r <= 0)
			die("TCP baseline: read: %s", r ? strerror(errno) : "EOF");
		left -= (uint64_t)r;
	}
	if (!write_full(fd, &ack, 1))
		die("TCP baseline: ack");
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
			die("no connect request within 30 s");
	e->conn = ev.conn;
	if (vb_create_qp(e->conn, e->pd, e->cq, e->cq, &qp_cap))
		die("create_qp failed");
	for (int i = 0; i < NRECV; i++)
		post_recv(e, (uint64_t)i, e->buf + AREA + (size_t)i * MAXSZ, MAXSZ);
	if (vb_accept(e->conn, &cp))
		die("accept failed");
	wait_event(e->conn, VB_CM_ESTABLISHED, &ev);
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
		int n = wait_wcs(e, wc, 32);

		for (int i = 0; i < n; i++) {
			check_wc(&wc[i]);
			if (wc[i].opcode != VB_WC_RECV)
				continue;
			uint8_t *msg = e->buf + AREA + wc[i].wr_id * MAXSZ;
			struct ctl *c = (struct ctl *)msg;
			if (wc[i].byte_len != sizeof(*c) || c->magic != CTL_MAGIC) {
				count++;
				if (pp) /* every 16th signaled: the queue is reaped in order */
					post_send(e, 1, reply, pp, count % 16 == 1);
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
				post_send(e, 2, r, sizeof(*r), true);
				pp = 0;
				count = 0;
			} else if (c->cmd == CMD_TCP) {
				if (tfd < 0 && (tfd = accept(tlfd, NULL, NULL)) < 0)
					die("TCP baseline: accept: %s", strerror(errno));
				tcp_sink(tfd, reply + MAXSZ);
			}
			post_recv(e, wc[i].wr_id, msg, MAXSZ);
		}
	}
}

/* The passive process: listen, accept, serve until told to quit. */
static int run_passive(const struct opts *o, const char *port, int tlfd, int ready_fd)
{
	struct ep e;
	char one = 1;

	ep_open(&e, o->device, AREA + (size_t)NRECV * MAXSZ + 2 * MAXSZ + 4096);
	if (vb_listen(e.dev, "127.0.0.1", port, 8, &e.lst))
		die("cannot listen on 127.0.0.1:%s", port);
	if (write(ready_fd, &one, 1) != 1)
		die("cannot signal readiness");
	close(ready_fd);
	passive_accept(&e, port);
	passive_loop(&e, tlfd);
	close(tlfd);
	ep_close(&e);
	return 0;
}

/* ---- active process ---- */

struct active {
	struct ep e;
	struct peer_info pi;
	int tfd;
	uint8_t *ctl; /* the last MAXSZ of the region: control messages and replies */
};

/* Send a control message; with want_reply, wait for the passive side's answer. */
static uint64_t ctl_call(struct active *a, enum cmd cmd, uint32_t size, bool want_reply)
{
	struct ctl *c = (struct ctl *)a->ctl, *r = (struct ctl *)(a->ctl + 4096);
	struct vb_wc wc[8];
	bool sent = false, got = !want_reply;

	if (want_reply)
		post_recv(&a->e, 901, r, sizeof(*r));
	*c = (struct ctl){.magic = CTL_MAGIC, .cmd = cmd, .size = size};
	post_send(&a->e, 900, c, sizeof(*c), true);
	while (!sent || !got) {
		int n = wait_wcs(&a->e, wc, 8);

		for (int i = 0; i < n; i++) {
			check_wc(&wc[i]);
			sent |= wc[i].wr_id == 900;
			got |= wc[i].wr_id == 901;
		}
	}
	return want_reply ? r->count : 0;
}

/* Post up to k signaled WRs of one kind in one chain; each of the depth WRs
 * outstanding has its own buffer (and remote buffer), as an application would. */
static void post_chain(struct active *a, enum op op, size_t size, int depth, uint64_t *posted,
		       int k)
{
	static const enum vb_wr_opcode opc[NOPS] = {VB_WR_RDMA_WRITE, VB_WR_RDMA_READ, VB_WR_SEND};
	struct vb_send_wr wr[16];
	struct vb_sge s[16];
	size_t slots = (size_t)depth * size <= AREA ? (size_t)depth : AREA / size;
	int rc;

	for (int i = 0; i < k; i++) {
		size_t off = (size_t)((*posted + (uint64_t)i) % slots) * size;

		s[i] = (struct vb_sge){.addr = (uintptr_t)(a->e.buf + off),
				       .length = (uint32_t)size,
				       .lkey = a->e.mr->lkey};
		wr[i] = (struct vb_send_wr){.wr_id = *posted + (uint64_t)i,
					    .sg_list = &s[i],
					    .num_sge = 1,
					    .opcode = opc[op],
					    .send_flags = VB_SEND_SIGNALED,
					    .remote_addr = a->pi.addr + off,
					    .rkey = a->pi.rkey,
					    .next = i + 1 < k ? &wr[i + 1] : NULL};
	}
	if ((rc = vb_post_send(a->e.conn, wr, NULL)) != 0)
		die("post_send: %s", strerror(-rc));
	*posted += (uint64_t)k;
}

/* Bandwidth in MB/s of op at size with depth WRs outstanding, for secs seconds. */
static double run_bw(struct active *a, enum op op, size_t size, int depth, double secs)
{
	uint64_t posted = 0, done = 0;
	struct vb_wc wc[32];
	double t0, t1;

	if (op == OP_SEND)
		ctl_call(a, CMD_COUNT, 0, true); /* zero the passive side's count */
	t0 = now_s();
	for (;;) {
		bool more = now_s() - t0 < secs;

		if (more && posted - done < (uint64_t)depth) {
			int k = depth - (int)(posted - done);

			post_chain(a, op, size, depth, &posted, k > 16 ? 16 : k);
		}
		if (posted == done)
			break;
		int n = wait_wcs(&a->e, wc, 32);
		for (int i = 0; i < n; i++)
			check_wc(&wc[i]);
		done += (uint64_t)n;
	}
	t1 = now_s();
	if (op == OP_SEND && ctl_call(a, CMD_COUNT, 0, true) != done)
		die("the passive side counted a different number of Sends");
	return (double)done * (double)size / (t1 - t0) / 1e6;
}

/* Half round trip of a Send ping-pong of size bytes, in microseconds. As
 * perftest's send_lat does, only every 16th Send is signaled and each round
 * waits for the answer's Receive only. */
static double run_latency(struct active *a, size_t size, double secs)
{
	uint8_t *rb = a->e.buf + AREA;
	struct vb_wc wc[4];
	long iters = 0;
	double t0 = 0;

	ctl_call(a, CMD_PINGPONG, (uint32_t)size, false);
	for (long i = 0;; i++) {
		bool answered = false;

		if (i == 10)
			t0 = now_s(); /* after a warm-up */
		if (i > 10 && (now_s() - t0 >= secs && iters >= 20))
			break;
		if (i > 10)
			iters++;
		post_recv(&a->e, 2, rb, (uint32_t)size);
		post_send(&a->e, 1, a->e.buf, (uint32_t)size, i % 16 == 0);
		while (!answered) {
			int n = wait_wcs(&a->e, wc, 4);

			for (int k = 0; k < n; k++) {
				check_wc(&wc[k]);
				answered |= wc[k].wr_id == 2;
			}
		}
	}
	double t = now_s() - t0;
	ctl_call(a, CMD_COUNT, 0, true); /* leave ping-pong mode */
	return t / (double)iters / 2 * 1e6;
}

/* Register + deregister a fresh buffer of size bytes, in microseconds. */
static double run_reg(struct active *a, size_t size, double secs)
{
	uint8_t *p = aligned_alloc(4096, size);
	long n = 0;
	double t0 = now_s();

	if (p == NULL)
		die("out of memory");
	memset(p, 1, size);
	do {
		struct vb_mr *mr;
		int rc = vb_reg_mr(a->e.pd, p, size, VB_ACCESS_LOCAL_WRITE | VB_ACCESS_REMOTE, &mr);

		if (rc)
			die("reg_mr of %zu bytes: %s", size, strerror(-rc));
		vb_dereg_mr(mr);
		n++;
	} while (now_s() - t0 < secs || n < 10);
	double t = now_s() - t0;
	free(p);
	return t / (double)n * 1e6;
}

/* One TCP transfer of total bytes in size-byte writes; returns seconds. */
static double tcp_once(struct active *a, size_t size, uint64_t total)
{
	uint64_t hdr[2] = {size, total};
	uint8_t *src = a->e.buf;
	char ack;
	double t0;

	ctl_call(a, CMD_TCP, (uint32_t)size, false);
	t0 = now_s();
	if (!write_full(a->tfd, hdr, sizeof(hdr)))
		die("TCP baseline: write: %s", strerror(errno));
	for (uint64_t left = total; left;) {
		size_t n = left < size ? (size_t)left : size;

		if (!write_full(a->tfd, src, n))
			die("TCP baseline: write: %s", strerror(errno));
		left -= n;
	}
	if (!read_full(a->tfd, &ack, 1))
		die("TCP baseline: no ack");
	return now_s() - t0;
}

/* TCP loopback bandwidth in MB/s for size-byte writes, about secs long. */
static double run_tcp(struct active *a, size_t size, double secs)
{
	uint64_t probe = 32u << 20;
	double rate = (double)probe / tcp_once(a, size, probe);
	uint64_t total = (uint64_t)(rate * secs);

	if (total < probe)
		total = probe;
	total -= total % size;
	return (double)total / tcp_once(a, size, total) / 1e6;
}

/* Connect to the passive side (verbs and TCP). */
static void active_connect(struct active *a, const struct opts *o, const char *port, int tport)
{
	struct vb_cm_event ev;
	struct sockaddr_in sin = {.sin_family = AF_INET,
				  .sin_port = htons((uint16_t)tport),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};

	ep_open(&a->e, o->device, AREA + 2 * MAXSZ);
	a->ctl = a->e.buf + AREA + MAXSZ;
	if (vb_resolve(a->e.dev, "127.0.0.1", port, 5000, &a->e.conn) ||
	    vb_create_qp(a->e.conn, a->e.pd, a->e.cq, a->e.cq, &qp_cap) ||
	    vb_connect(a->e.conn, NULL))
		die("cannot connect to 127.0.0.1:%s", port);
	wait_event(a->e.conn, VB_CM_ESTABLISHED, &ev);
	if (ev.private_data_len < sizeof(a->pi))
		die("the passive side sent no region address");
	memcpy(&a->pi, ev.private_data, sizeof(a->pi));
	a->tfd = socket(AF_INET, SOCK_STREAM, 0);
	if (a->tfd < 0 || connect(a->tfd, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		die("TCP baseline: connect: %s", strerror(errno));
}

/* The median of n samples (sorts them). */
static double median(double *v, int n)
{
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One repetition of every point, TCP and verbs interleaved size by size, so that
 * load from elsewhere on the machine hits the baseline and the provider alike. */
static void measure_once(struct active *a, const struct opts *o, struct samples *m, int rep)
{
	for (int s = 0; s < o->nsizes; s++) {
		size_t sz = o->sizes[s];

		m->tcp[s][rep] = run_tcp(a, sz, o->secs);
		for (int op = 0; op < NOPS; op++)
			for (int d = 0; d < o->ndepths; d++)
				m->bw[op][s][d][rep] =
					run_bw(a, (enum op)op, sz, o->depths[d], o->secs);
		m->lat[s][rep] = run_latency(a, sz, o->secs);
		m->reg[s][rep] = run_reg(a, sz, o->secs / 2);
	}
}

/* Every measurement, o->reps times; medians into r. */
static void measure(struct active *a, const struct opts *o, struct results *r)
{
	struct samples *m = calloc(1, sizeof(*m));

	if (m == NULL)
		die("out of memory");
	for (int rep = 0; rep < o->reps; rep++) {
		measure_once(a, o, m, rep);
		fprintf(stderr, "nfsrdma-vbench: repetition %d of %d done\n", rep + 1, o->reps);
	}
	for (int s = 0; s < o->nsizes; s++) {
		for (int op = 0; op < NOPS; op++)
			for (int d = 0; d < o->ndepths; d++)
				r->bw[op][s][d] = median(m->bw[op][s][d], o->reps);
		r->tcp[s] = median(m->tcp[s], o->reps);
		r->lat[s] = median(m->lat[s], o->reps);
		r->reg[s] = median(m->reg[s], o->reps);
	}
	free(m);
}

/* ---- output ---- */

static double best_bw(const struct opts *o, const struct results *r, int op, int s)
{
	double b = 0;

	for (int d = 0; d < o->ndepths; d++)
		if (r->bw[op][s][d] > b)
			b = r->bw[op][s][d];
	return b;
}

/* The results as a table on stdout. */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1 /* ASan makes mlock a no-op and slows everything down */
#else
#define SANITIZED 0
#endif

static void print_table(const struct opts *o, const struct results *r, const char *dev)
{
	if (SANITIZED)
		printf("WARNING: built with AddressSanitizer: mlock is a no-op and copies are "
		       "instrumented, so these figures are not representative; use a plain "
		       "build\n");
	printf("nfsrdma-vbench: device %s, %ld CPUs, %.2f s per point, median of %d runs\n\n", dev,
	       sysconf(_SC_NPROCESSORS_ONLN), o->secs, o->reps);
	printf("bandwidth, MB/s (qd = work requests outstanding); tcp = plain TCP loopback\n");
	printf("%8s %-6s", "size", "op");
	for (int d = 0; d < o->ndepths; d++)
		printf(" %7s%-2d", "qd", o->depths[d]);
	printf(" %9s %8s\n", "tcp", "best/tcp");
	for (int s = 0; s < o->nsizes; s++)
		for (int op = 0; op < NOPS; op++) {
			printf("%8zu %-6s", o->sizes[s], op_names[op]);
			for (int d = 0; d < o->ndepths; d++)
				printf(" %9.0f", r->bw[op][s][d]);
			printf(" %9.0f %8.2f\n", r->tcp[s], best_bw(o, r, op, s) / r->tcp[s]);
		}
	printf("\nlatency, microseconds: Send ping-pong half round trip, registration\n");
	printf("%8s %12s %12s %14s\n", "size", "ping-pong", "reg+dereg", "with reg");
	for (int s = 0; s < o->nsizes; s++)
		printf("%8zu %12.1f %12.1f %14.1f\n", o->sizes[s], r->lat[s], r->reg[s],
		       r->lat[s] + r->reg[s]);
}

/* The results as CSV, one figure per line. */
static void write_csv(const struct opts *o, const struct results *r, const char *dev)
{
	FILE *f = fopen(o->csv, "w");

	if (f == NULL)
		die("cannot write %s: %s", o->csv, strerror(errno));
	fprintf(f, "device,metric,op,size,qd,value,unit\n");
	fprintf(f, "%s,sanitized_build,,,,%d,\n", dev, SANITIZED);
	for (int s = 0; s < o->nsizes; s++) {
		size_t sz = o->sizes[s];

		for (int op = 0; op < NOPS; op++) {
			for (int d = 0; d < o->ndepths; d++)
				fprintf(f, "%s,bandwidth,%s,%zu,%d,%.1f,MB/s\n", dev, op_names[op],
					sz, o->depths[d], r->bw[op][s][d]);
			fprintf(f, "%s,ratio_to_tcp,%s,%zu,best,%.3f,\n", dev, op_names[op], sz,
				best_bw(o, r, op, s) / r->tcp[s]);
		}
		fprintf(f, "%s,bandwidth,tcp,%zu,,%.1f,MB/s\n", dev, sz, r->tcp[s]);
		fprintf(f, "%s,latency,send,%zu,1,%.2f,us\n", dev, sz, r->lat[s]);
		fprintf(f, "%s,reg_dereg,mr,%zu,,%.2f,us\n", dev, sz, r->reg[s]);
		fprintf(f, "%s,latency_with_reg,send,%zu,1,%.2f,us\n", dev, sz,
			r->lat[s] + r->reg[s]);
	}
	if (fclose(f) != 0)
		die("cannot write %s: %s", o->csv, strerror(errno));
}

/* The active process: connect, measure, report, tell the passive side to quit. */
static int run_active(const struct opts *o, const char *port, int tport)
{
	struct active a = {0};
	struct results *r = calloc(1, sizeof(*r));
	char dev[VB_NAME_MAX + 16];

	if (r == NULL)
		die("out of memory");
	active_connect(&a, o, port, tport);
	snprintf(dev, sizeof(dev), "%s", a.e.dev->name);
	measure(&a, o, r);
	ctl_call(&a, CMD_QUIT, 0, false);
	close(a.tfd);
	print_table(o, r, dev);
	if (o->csv)
		write_csv(o, r, dev);
	ep_close(&a.e);
	free(r);
	return 0;
}

/* ---- start-up ---- */

/* A listening TCP socket on a free loopback port; its port in *port. */
static int tcp_listener(int *port)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(fd, 4) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) < 0)
		die("cannot open a loopback TCP socket: %s", strerror(errno));
	*port = ntohs(sin.sin_port);
	return fd;
}

/* Parse "a,b,c" of numbers with an optional k/m suffix into out. */
static int parse_list(const char *s, const char *what, size_t *out, long max)
{
	int n = 0;

	for (const char *p = s; *p && n < MAX_POINTS; n++) {
		char *end;
		long v = strtol(p, &end, 10);

		if (*end == 'k' || *end == 'K')
			v *= 1024, end++;
		else if (*end == 'm' || *end == 'M')
			v *= 1024 * 1024, end++;
		if (end == p || v < 1 || v > max || (*end && *end != ','))
			die("bad %s list '%s': numbers 1..%ld, comma-separated", what, s, max);
		out[n] = (size_t)v;
		p = *end ? end + 1 : end;
	}
	return n;
}

/* Command-line help. */
static void usage(void)
{
	printf("usage: nfsrdma-vbench [--device NAME] [--quick] [--csv FILE] [--time SECONDS]\n"
	       "                      [--sizes 4k,64k,1m] [--depths 1,4,16] [--reps N]\n"
	       "  --device  verbs device: auto (default), soft, or a device name like rxe0\n"
	       "  --quick   fewer sizes and 0.2 s per point (make bench-verbs)\n"
	       "  --csv     also write every figure to FILE as CSV\n"
	       "  --time    seconds per point (default 0.5, quick 0.2)\n"
	       "  --reps    repetitions; figures are medians (default 3)\n");
}

/* Options into o; bad values end the program with the reason. */
static void parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{"device", 1, 0, 'd'}, {"csv", 1, 0, 'c'},   {"time", 1, 0, 't'},
		{"quick", 0, 0, 'q'},  {"sizes", 1, 0, 's'}, {"depths", 1, 0, 'D'},
		{"help", 0, 0, 'h'},   {"reps", 1, 0, 'r'},  {0, 0, 0, 0},
	};
	const char *sizes = NULL, *depths = "1,4,16";
	size_t dv[MAX_POINTS];
	int c;

	*o = (struct opts){.device = "auto", .secs = 0.5, .reps = 3};
	while ((c = getopt_long(argc, argv, "d:c:t:qs:D:hr:", lo, NULL)) != -1) {
		switch (c) {
		case 'd':
			o->device = optarg;
			break;
		case 'c':
			o->csv = optarg;
			break;
		case 'q':
			o->quick = true;
			break;
		case 's':
			sizes = optarg;
			break;
		case 'D':
			depths = optarg;
			break;
		case 't':
			o->secs = atof(optarg);
			if (o->secs <= 0 || o->secs > 60)
				die("--time must be in (0, 60] seconds");
			break;
		case 'r':
			o->reps = atoi(optarg);
			if (o->reps < 1 || o->reps > MAX_REPS)
				die("--reps must be in [1, %d]", MAX_REPS);
			break;
		case 'h':
			usage();
			exit(0);
		default:
			usage();
			exit(2);
		}
	}
	if (o->quick && o->secs == 0.5)
		o->secs = 0.2;
	if (sizes == NULL)
		sizes = o->quick ? "4k,16k,64k,256k,1m" : "4k,8k,16k,32k,64k,128k,256k,512k,1m";
	o->nsizes = parse_list(sizes, "size", o->sizes, MAXSZ);
	o->ndepths = parse_list(depths, "depth", dv, 64);
	for (int i = 0; i < o->ndepths; i++)
		o->depths[i] = (int)dv[i];
}

/* Fork the passive side, run the active side, wait for both. */
int main(int argc, char **argv)
{
	struct opts o;
	int ready[2], tport, tlfd, vport, status;
	char port[16];
	pid_t pid;

	parse_args(argc, argv, &o);
	log_set_level(LOG_LVL_WARN);
	signal(SIGPIPE, SIG_IGN);
	tlfd = tcp_listener(&tport);
	close(tcp_listener(&vport)); /* a free port for the verbs listener */
	snprintf(port, sizeof(port), "%d", vport);
	if (pipe(ready) < 0)
		die("pipe: %s", strerror(errno));
	if ((pid = fork()) < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		close(ready[0]);
		return run_passive(&o, port, tlfd, ready[1]);
	}
	close(ready[1]);
	close(tlfd);
	char one;
	if (read(ready[0], &one, 1) != 1)
		die("the passive process did not start");
	close(ready[0]);
	run_active(&o, port, tport);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		die("the passive process failed");
	return 0;
}
