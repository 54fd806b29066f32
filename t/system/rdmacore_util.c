/* rdmacore_util.c: TAP harness and connected-pair fixture for the rdma-core device tests. */
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/base/log.h"
#include "t/system/rdmacore_util.h"
#include "platform/ibverbs/verbs_rdmacore.h"

const char *t_device;
const char *t_addr;
static char skip_reason[200];
static const char *todo_reason;
static unsigned next_port;

/* Report a failed check as a TAP diagnostic. */
void t_fail(const char *file, int line, const char *what)
{
	printf("# %s:%d: check failed: %s\n", file, line, what);
}

/* Report a failed equality with both values. */
void t_fail_eq(const char *file, int line, const char *a, const char *b, long long va, long long vb)
{
	printf("# %s:%d: %s == %s failed: %lld != %lld\n", file, line, a, b, va, vb);
}

/* Record why a case skips; the case returns this value. */
int t_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(skip_reason, sizeof(skip_reason), fmt, ap);
	va_end(ap);
	return T_SKIPPED;
}

/* Known device bug: the case's result is reported with a TODO directive. */
void t_todo(const char *reason)
{
	todo_reason = reason;
}

/* Milliseconds on the monotonic clock. */
static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Run one case with a fresh fixture; 0 pass, T_SKIPPED, or -1. */
static int run_case(const struct t_case *tc)
{
	struct pair p;
	int rc;

	if (getenv("T_ONLY") && strstr(getenv("T_ONLY"), tc->name) == NULL)
		return t_skip("not in T_ONLY");
	if (tc->needs_addr && t_addr == NULL)
		return t_skip("VB_ADDR is not set (an IP address of the device)");
	if ((rc = pair_open(&p)) != 0) {
		printf("# fixture: cannot open device, PD, CQs or MRs: %s\n", strerror(-rc));
		pair_close(&p);
		return -1;
	}
	rc = tc->fn(&p);
	pair_close(&p);
	return rc;
}

/* Whole run: skip the lot without a device, else one TAP line per case. */
int t_run(const struct t_case *cases, size_t n)
{
	struct vb_device *dev;
	int rc, failed = 0;

	if (getenv("VB_DEBUG"))
		log_set_level(LOG_LVL_DEBUG); /* the provider's view of every event and error */
	t_device = getenv("VB_DEVICE");
	t_addr = getenv("VB_ADDR");
	next_port = getenv("VB_PORT") ? (unsigned)atoi(getenv("VB_PORT"))
				      : 20000 + (unsigned)getpid() % 20000;
	if ((rc = vb_rdmacore_ops.open(t_device, &dev)) != 0) {
		printf("1..0 # SKIP no rdma-core device%s%s (%s)\n", t_device ? " " : "",
		       t_device ? t_device : "", strerror(-rc));
		return 0;
	}
	printf("# device %s\n", dev->name);
	vb_rdmacore_ops.close(dev);
	printf("1..%zu\n", n);
	for (size_t i = 0; i < n; i++) {
		long long t0 = now_ms();

		fflush(stdout);
		todo_reason = NULL;
		rc = run_case(&cases[i]);
		if (rc == T_SKIPPED)
			printf("ok %zu - %s # SKIP %s\n", i + 1, cases[i].name, skip_reason);
		else if (todo_reason)
			printf("%s %zu - %s (%lld ms) # TODO %s\n", rc == 0 ? "ok" : "not ok",
			       i + 1, cases[i].name, now_ms() - t0, todo_reason);
		else
			printf("%s %zu - %s (%lld ms)\n", rc == 0 ? "ok" : "not ok", i + 1,
			       cases[i].name, now_ms() - t0);
		failed += rc < 0 && todo_reason == NULL;
	}
	return failed ? 1 : 0;
}

/* Device, PD, one CQ and one registered buffer per side. */
int pair_open(struct pair *p)
{
	const unsigned all = VB_ACCESS_LOCAL_WRITE | VB_ACCESS_REMOTE | VB_ACCESS_MW_BIND;
	int rc;

	memset(p, 0, sizeof(*p));
	if ((rc = vb_rdmacore_ops.open(t_device, &p->dev)) != 0 ||
	    (rc = vb_query_device(p->dev, &p->attr)) != 0 || (rc = vb_alloc_pd(p->dev, &p->pd)))
		return rc;
	for (int i = 0; i < 2; i++) {
		if ((rc = vb_create_cq(p->dev, 64, &p->cq[i])) != 0)
			return rc;
		if (posix_memalign((void **)&p->buf[i], 4096, PAIR_BUF) != 0)
			return -ENOMEM;
		memset(p->buf[i], 0, PAIR_BUF);
		if ((rc = vb_reg_mr(p->pd, p->buf[i], PAIR_BUF, all, &p->mr[i])) != 0)
			return rc;
	}
	return 0;
}

/* Destroy what exists, conns first (they hold the CQs and PD). */
void pair_close(struct pair *p)
{
	/* The window first: a bound one holds its QP (rxe waits ~50 s in TCG for it). */
	if (p->mw)
		vb_dealloc_mw(p->mw);
	for (int i = 0; i < 2; i++)
		if (p->c[i])
			vb_conn_destroy(p->c[i]);
	if (p->l)
		vb_listener_destroy(p->l);
	for (int i = 0; i < 2; i++) {
		if (p->mr[i])
			vb_dereg_mr(p->mr[i]);
		free(p->buf[i]);
		if (p->cq[i])
			vb_destroy_cq(p->cq[i]);
	}
	if (p->pd)
		vb_dealloc_pd(p->pd);
	if (p->dev)
		vb_rdmacore_ops.close(p->dev); /* these tests use the provider directly */
	memset(p, 0, sizeof(*p));
}

/* Small RC QP on side i's CQ. */
int pair_create_qp(struct pair *p, int side, struct vb_conn *conn)
{
	struct vb_qp_cap cap = {.max_send_wr = 32,
				.max_recv_wr = 32,
				.max_send_sge = 2,
				.max_recv_sge = 2,
				.max_inline_data = 64};

	return vb_create_qp(conn, p->pd, p->cq[side], p->cq[side], &cap);
}

/* Listen, resolve, connect; return with the passive side's request in req_ev. */
int pair_request(struct pair *p, const struct vb_conn_param *req, struct vb_cm_event *req_ev)
{
	int rc;

	snprintf(p->port, sizeof(p->port), "%u", next_port++);
	if ((rc = vb_listen(p->dev, t_addr, p->port, 4, &p->l)) != 0 ||
	    (rc = vb_resolve(p->dev, t_addr, p->port, 10000, &p->c[0])) != 0 ||
	    (rc = pair_create_qp(p, 0, p->c[0])) != 0 || (rc = vb_connect(p->c[0], req)) != 0 ||
	    (rc = wait_listener_event(p->l, req_ev, T_WAIT_MS)) != 0) {
		printf("# pair_request on %s:%s: %s\n", t_addr, p->port, strerror(-rc));
		return rc;
	}
	if (req_ev->type != VB_CM_CONNECT_REQUEST || req_ev->conn == NULL)
		return -EPROTO;
	p->c[1] = req_ev->conn;
	return pair_create_qp(p, 1, p->c[1]);
}

/* Full connect: request, accept, ESTABLISHED on both sides. */
int pair_connect(struct pair *p, const struct vb_conn_param *req, const struct vb_conn_param *rep,
		 struct vb_cm_event *req_ev, struct vb_cm_event est[2])
{
	struct vb_cm_event rev, e[2];
	int rc;

	req_ev = req_ev ? req_ev : &rev;
	est = est ? est : e;
	if ((rc = pair_request(p, req, req_ev)) != 0 || (rc = vb_accept(p->c[1], rep)) != 0)
		return rc;
	for (int i = 0; i < 2; i++) {
		if ((rc = wait_conn_event(p->c[i], &est[i], T_WAIT_MS)) != 0)
			return rc;
		if (est[i].type != VB_CM_ESTABLISHED) {
			printf("# side %d: event %d instead of established (status %d)\n", i,
			       (int)est[i].type, est[i].status);
			return -EPROTO;
		}
	}
	return 0;
}

/* Poll fd for input up to ms. */
int wait_readable(int fd, int ms)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};

	return poll(&pfd, 1, ms) > 0;
}

/* Next conn event, waiting on the conn's own fd. */
int wait_conn_event(struct vb_conn *c, struct vb_cm_event *ev, int ms)
{
	long long end = now_ms() + ms;
	int rc;

	while ((rc = vb_conn_get_event(c, ev)) == -EAGAIN) {
		if (now_ms() >= end)
			return -ETIMEDOUT;
		wait_readable(vb_conn_fd(c), (int)(end - now_ms()));
	}
	return rc;
}

/* Next listener event, waiting on the listener's fd. */
int wait_listener_event(struct vb_listener *l, struct vb_cm_event *ev, int ms)
{
	long long end = now_ms() + ms;
	int rc;

	while ((rc = vb_listener_get_event(l, ev)) == -EAGAIN) {
		if (now_ms() >= end)
			return -ETIMEDOUT;
		wait_readable(vb_listener_fd(l), (int)(end - now_ms()));
	}
	return rc;
}

/* Next completion, by polling (with short sleeps) up to ms. */
int wait_wc(struct vb_cq *cq, struct vb_wc *wc, int ms)
{
	long long end = now_ms() + ms;
	int n;

	while ((n = vb_poll_cq(cq, 1, wc)) == 0) {
		if (now_ms() >= end)
			return -ETIMEDOUT;
		usleep(200);
	}
	return n < 0 ? n : 0;
}

/* One receive of buf[side][off, off+len). */
int post_recv_at(struct pair *p, int side, uint64_t wr_id, size_t off, uint32_t len)
{
	struct vb_sge sge = {(uint64_t)(uintptr_t)(p->buf[side] + off), len, p->mr[side]->lkey};
	struct vb_recv_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = 1};

	return vb_post_recv(p->c[side], &wr, NULL);
}

/* One signaled SEND / RDMA WRITE / RDMA READ of buf[side][off, off+len). */
int post_one(struct pair *p, int side, enum vb_wr_opcode op, uint64_t wr_id, size_t off,
	     uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct vb_sge sge = {(uint64_t)(uintptr_t)(p->buf[side] + off), len, p->mr[side]->lkey};
	struct vb_send_wr wr = {.wr_id = wr_id,
				.sg_list = &sge,
				.num_sge = 1,
				.opcode = op,
				.send_flags = VB_SEND_SIGNALED,
				.remote_addr = raddr,
				.rkey = rkey};

	return vb_post_send(p->c[side], &wr, NULL);
}
