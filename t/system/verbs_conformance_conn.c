/*
 * verbs_conformance_conn.c: opening the device, connecting (private data,
 * reject, nobody listening, nobody answering), the soft provider's local carrier, disconnecting, 64
 * connections at once and connections torn down while data moves. Part of
 * t/system/verbs_conformance (the helpers: verbs_conformance.c).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/verbs.h"
#include "verbs_conformance.h"

/* ---- device and connection management ---- */

void open_names(void **state)
{
	struct vb_device *d = NULL;

	assert_int_equal(vb_open("no-such-device-xyz", &d), -ENODEV);
	assert_null(d);
	assert_true(attr.max_sge >= 1 && attr.max_qp_wr >= 64 && attr.max_cqe >= 256);
	assert_true(attr.max_qp_rd_atom >= 1 && attr.max_qp_init_rd_atom >= 1);
	assert_true(attr.max_mr_size >= (1u << 20));
}

/* Private data travels both ways; IRD/ORD are negotiated down. */
void connect_private_data(void **state)
{
	struct pair pr = {0};
	struct pair_opts o = {.req_pdata = "hello from the active side",
			      .acc_pdata = "welcome, says passive",
			      .a_ord = 16,
			      .a_ird = 16,
			      .p_ird = 4,
			      .p_ord = 2};

	pair_open_opts(&pr, &o);
	assert_true(pr.a->ord >= 1 && pr.a->ord <= 4); /* min(16, peer IRD 4) */
	assert_true(pr.p->ord >= 1 && pr.p->ord <= 2); /* its own ORD 2 */
	assert_true(pr.p->ird >= pr.a->ord);	       /* the peer cannot exceed us */
	assert_true(pr.a->ird >= pr.p->ord);
	pair_close(&pr);
}

/* A reject reaches the active side with its private data. */
void connect_rejected(void **state)
{
	struct pair pr = {0};
	struct pair_opts o = {.req_pdata = "may I?", .cap = default_cap()};
	struct vb_cm_event ev;

	pair_res(&pr);
	pr.a = start_active(&pr, &o);
	expect_request(&ev);
	pr.p = ev.conn;
	assert_int_equal(vb_reject(pr.p, "no: full", 8), 0);
	expect_event(pr.a, VB_CM_REJECTED, &ev);
	assert_true(ev.private_data_len >= 8);
	assert_memory_equal(ev.private_data, "no: full", 8);
	pair_close(&pr);
}

/* Nobody listening: UNREACHABLE with an error status. */
void connect_unreachable(void **state)
{
	struct pair pr = {0};
	struct pair_opts o = {.cap = default_cap()};
	struct vb_cm_event ev;
	struct vb_conn *c;
	char bad[300];

	pair_res(&pr);
	if (strncmp(addr, "unix:", 5) == 0) {
		snprintf(bad, sizeof(bad), "%s.nobody", addr);
		assert_int_equal(vb_resolve(dev, bad, NULL, TMO_MS, &c), 0);
	} else {
		assert_int_equal(vb_resolve(dev, addr, "1", TMO_MS, &c), 0); /* nothing on port 1 */
	}
	assert_int_equal(vb_create_qp(c, pr.apd, pr.ascq, pr.arcq, &o.cap), 0);
	assert_int_equal(vb_connect(c, NULL), 0);
	if (is_soft) {
		expect_event(c, VB_CM_UNREACHABLE, &ev);
		assert_true(ev.status < 0);
	} else { /* IB CM answers "no such service" with a reject */
		long long end = now_ms() + TMO_MS;

		while (vb_conn_get_event(c, &ev) == -EAGAIN && now_ms() < end)
			wait_fd(vb_conn_fd(c), 100);
		assert_true(ev.type == VB_CM_UNREACHABLE || ev.type == VB_CM_REJECTED);
	}
	pr.a = c;
	pair_close(&pr);
}

/* A TCP port on 127.0.0.1 (into hole) that never answers a connect: a
 * listener with no room in its accept queue (backlog 0, one connection
 * already waiting) drops the SYN. *fds gets the two sockets to close. */
static void blackhole(char *hole, size_t len, int fds[2])
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sa);

	fds[0] = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fds[0] >= 0);
	assert_int_equal(bind(fds[0], (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fds[0], 0), 0);
	assert_int_equal(getsockname(fds[0], (struct sockaddr *)&sa, &sl), 0);
	fds[1] = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(fds[1], (struct sockaddr *)&sa, sizeof(sa)), 0);
	snprintf(hole, len, "%u", ntohs(sa.sin_port));
}

/* A peer that never answers the connect: UNREACHABLE once the connect's
 * timeout is spent, on a device just opened too, whose engine has not yet
 * looked at a deadline. Soft provider over TCP (the case is its own). */
void connect_timeout(void **state)
{
	struct vb_qp_cap cap = default_cap();
	struct vb_device *d;
	struct vb_cm_event ev;
	struct vb_conn *c;
	struct vb_pd *pd;
	struct vb_cq *scq, *rcq;
	long long start, took;
	char hole[16];
	int fds[2], rc;

	if (!is_soft || strncmp(addr, "unix:", 5) == 0) {
		print_message("# connect_timeout: for the soft provider over TCP only\n");
		return;
	}
	blackhole(hole, sizeof(hole), fds);
	assert_int_equal(vb_open("soft", &d), 0);
	assert_int_equal(vb_alloc_pd(d, &pd), 0);
	assert_int_equal(vb_create_cq(d, 16, &scq), 0);
	assert_int_equal(vb_create_cq(d, 16, &rcq), 0);
	assert_int_equal(vb_resolve(d, "127.0.0.1", hole, 300, &c), 0);
	assert_int_equal(vb_create_qp(c, pd, scq, rcq, &cap), 0);
	start = now_ms();
	assert_int_equal(vb_connect(c, NULL), 0);
	while ((rc = vb_conn_get_event(c, &ev)) == -EAGAIN && now_ms() < start + 5000)
		wait_fd(vb_conn_fd(c), 100);
	took = now_ms() - start;
	print_message("# an event after %lld ms (timeout 300 ms)\n", took);
	assert_int_equal(rc, 0);
	assert_int_equal(ev.type, VB_CM_UNREACHABLE);
	assert_true(took < 3000);
	assert_int_equal(vb_conn_destroy(c), 0);
	assert_int_equal(vb_destroy_cq(scq), 0);
	assert_int_equal(vb_destroy_cq(rcq), 0);
	assert_int_equal(vb_dealloc_pd(pd), 0);
	vb_close(d);
	close(fds[1]);
	close(fds[0]);
}

/* The port of an AF_INET/AF_INET6 address; whether it is a loopback one in
 * *lo (::1, 127/8, or 127/8 mapped to IPv6, as a "::" listener sees an IPv4
 * peer over TCP). */
static unsigned port_of(const struct vb_conn *c, bool *lo)
{
	const struct sockaddr_storage *ss = &c->peer_addr;

	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)ss;

		*lo = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr) ||
		      (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) && in6->sin6_addr.s6_addr[12] == 127);
		return ntohs(in6->sin6_port);
	}
	assert_int_equal(ss->ss_family, AF_INET);
	*lo = ntohl(((const struct sockaddr_in *)(const void *)ss)->sin_addr.s_addr) >> 24 == 127;
	return ntohs(((const struct sockaddr_in *)(const void *)ss)->sin_port);
}

/* Connect from dev to listener l (of device ldev) at to, port lport; whether
 * the listener saw the peer come over the local carrier: 127.0.0.1 or ::1
 * with port 0 and the name "ADDR:local-PID" (else a loopback address and a
 * port). */
static bool came_local(struct vb_device *ldev, struct vb_listener *l, const char *to,
		       const char *lport)
{
	struct vb_qp_cap cap = default_cap();
	struct vb_cq *cq[4];
	struct vb_pd *pd[2];
	struct vb_conn *a, *p;
	struct vb_cm_event ev;
	char want[64];
	bool lo, local;

	assert_int_equal(vb_alloc_pd(dev, &pd[0]), 0);
	assert_int_equal(vb_alloc_pd(ldev, &pd[1]), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(vb_create_cq(i < 2 ? dev : ldev, 64, &cq[i]), 0);
	assert_int_equal(vb_resolve(dev, to, lport, TMO_MS, &a), 0);
	assert_int_equal(vb_create_qp(a, pd[0], cq[0], cq[1], &cap), 0);
	assert_int_equal(vb_connect(a, NULL), 0);
	while (vb_listener_get_event(l, &ev) == -EAGAIN)
		assert_true(wait_fd(vb_listener_fd(l), TMO_MS));
	p = ev.conn;
	assert_int_equal(vb_create_qp(p, pd[1], cq[2], cq[3], &cap), 0);
	assert_int_equal(vb_accept(p, NULL), 0);
	expect_event(a, VB_CM_ESTABLISHED, &ev);
	expect_event(p, VB_CM_ESTABLISHED, &ev);
	local = port_of(p, &lo) == 0;
	assert_true(lo);
	snprintf(want, sizeof(want), ":local-%d", (int)getpid());
	assert_int_equal(strstr(p->peer, want) != NULL, local);
	assert_int_equal(vb_conn_destroy(a), 0);
	assert_int_equal(vb_conn_destroy(p), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(vb_destroy_cq(cq[i]), 0);
	assert_int_equal(vb_dealloc_pd(pd[0]), 0);
	assert_int_equal(vb_dealloc_pd(pd[1]), 0);
	return local;
}

/* A child of another user (nobody) that holds the local name of port
 * before anyone listens there, until killed (or 30 s have passed, should
 * the case fail before it kills it). */
static pid_t squat(const char *lport)
{
	struct sockaddr_un un = {.sun_family = AF_UNIX};
	int fds[2], fd;
	pid_t pid;
	char c;

	assert_int_equal(pipe(fds), 0);
	snprintf(un.sun_path + 1, sizeof(un.sun_path) - 1, "nfsrdma-soft:%c:%s",
		 strchr(addr, ':') ? '6' : '4', lport);
	if ((pid = fork()) == 0) {
		alarm(30);
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (setgid(65534) != 0 || setuid(65534) != 0 ||
		    bind(fd, (struct sockaddr *)&un,
			 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
				     strlen(un.sun_path + 1))) != 0 ||
		    listen(fd, 8) != 0)
			_exit(1);
		if (write(fds[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(fds[1]);
	assert_true(pid > 0);
	assert_int_equal(read(fds[0], &c, 1), 1);
	close(fds[0]);
	return pid;
}

/* Soft, to 127.0.0.1 or ::1 on Linux: the connection goes over AF_UNIX
 * unless VB_SOFT_LOCAL_UNIX=0; to a listener without the carrier, or one
 * whose local name another user took first, it goes over TCP. */
void local_carrier(void **state)
{
	const char *env = getenv("VB_SOFT_LOCAL_UNIX");
	bool on = env == NULL || strcmp(env, "0") != 0;
	struct vb_listener *l2;
	struct vb_device *d2;
	char p2[16];
	pid_t pid;

	if (!is_soft || (strcmp(addr, "127.0.0.1") != 0 && strcmp(addr, "::1") != 0))
		skip_because("the local carrier is the soft provider's, to 127.0.0.1 or ::1");
#ifndef __linux__
	skip_because("the local carrier needs Linux's abstract socket names");
#endif
	assert_int_equal(came_local(dev, lst, addr, port), on);

	/* a device opened with the carrier off has no local name to reach */
	assert_int_equal(setenv("VB_SOFT_LOCAL_UNIX", "0", 1), 0);
	assert_int_equal(vb_open("soft", &d2), 0);
	assert_int_equal(on ? unsetenv("VB_SOFT_LOCAL_UNIX") : 0, 0);
	free_port(p2);
	assert_int_equal(vb_listen(d2, addr, p2, 8, &l2), 0);
	assert_false(came_local(d2, l2, addr, p2));
	assert_int_equal(vb_listener_destroy(l2), 0);
	vb_close(d2);

	/* "::" takes IPv4 too: it has both local names */
	free_port(p2);
	if (vb_listen(dev, "::", p2, 8, &l2) == 0) {
		assert_int_equal(came_local(dev, l2, "127.0.0.1", p2), on);
		assert_int_equal(came_local(dev, l2, "::1", p2), on);
		assert_int_equal(vb_listener_destroy(l2), 0);
	} else {
		printf("# no IPv6 here: \"::\" not tried\n");
	}

	/* a name squatted by another user: not trusted, TCP reaches the listener */
	if (geteuid() != 0)
		return;
	free_port(p2);
	pid = squat(p2);
	assert_int_equal(vb_listen(dev, addr, p2, 8, &l2), 0);
	assert_false(came_local(dev, l2, addr, p2));
	assert_int_equal(vb_listener_destroy(l2), 0);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* ---- disconnect ---- */

void disconnect_flushes(void **state)
{
	struct pair pr = {0};
	struct buf a, p;
	struct vb_cm_event ev;

	pair_open(&pr);
	buf_new(&a, pr.apd, 8192, VB_ACCESS_LOCAL_WRITE, 39);
	buf_new(&p, pr.ppd, 8192, VB_ACCESS_LOCAL_WRITE, 40);
	for (int i = 0; i < 3; i++) {
		post_recv1(pr.a, 10 + i, &a, 0, 8192);
		post_recv1(pr.p, 20 + i, &p, 0, 8192);
	}
	assert_int_equal(vb_disconnect(pr.a), 0);
	for (int i = 0; i < 3; i++)
		expect_wc(pr.arcq, 10 + i, VB_WC_WR_FLUSH_ERR);
	expect_event(pr.a, VB_CM_DISCONNECTED, &ev);
	expect_event(pr.p, VB_CM_DISCONNECTED, &ev);
	for (int i = 0; i < 3; i++)
		expect_wc(pr.prcq, 20 + i, VB_WC_WR_FLUSH_ERR);
	buf_free(&a);
	buf_free(&p);
	pair_close(&pr);
}

/* The peer destroying its conn is a disconnect here, with flushes. */
void peer_vanishes(void **state)
{
	struct pair pr = {0};
	struct buf a;
	struct vb_cm_event ev;

	pair_open(&pr);
	buf_new(&a, pr.apd, 8192, VB_ACCESS_LOCAL_WRITE, 41);
	post_recv1(pr.a, 7, &a, 0, 8192);
	assert_int_equal(vb_conn_destroy(pr.p), 0); /* the socket / QP just goes away */
	pr.p = NULL;
	expect_event(pr.a, VB_CM_DISCONNECTED, &ev);
	expect_wc(pr.arcq, 7, VB_WC_WR_FLUSH_ERR);
	buf_free(&a);
	pair_close(&pr);
}

/* ---- many connections at once ---- */

enum { NCONN = 64, MSGS = 8, MSZ = 4096, WSZ = 65536 };

struct many {
	struct pair pr[NCONN];
	struct buf src[NCONN], dst[NCONN], wdst[NCONN];
	int recvd[NCONN], sent[NCONN];
};

/* Which pair a completion belongs to. */
static int pair_of(struct many *m, struct vb_conn *c)
{
	for (int i = 0; i < NCONN; i++)
		if (m->pr[i].a == c || m->pr[i].p == c)
			return i;
	fail_msg("completion for an unknown conn");
	return -1;
}

/* Receives, a Write and Sends for pair i. */
static void many_post(struct many *m, int i)
{
	struct pair *pr = &m->pr[i];

	for (int k = 0; k < MSGS; k++)
		post_recv1(pr->p, (uint64_t)k, &m->dst[i], (size_t)k * MSZ, MSZ);
	post1(pr->a, 100, VB_WR_RDMA_WRITE, &m->src[i], 0, WSZ, raddr(&m->wdst[i], 0),
	      m->wdst[i].mr->rkey, 0);
	for (int k = 0; k < MSGS; k++)
		post1(pr->a, (uint64_t)k, VB_WR_SEND, &m->src[i], (size_t)k * MSZ, MSZ, 0, 0,
		      VB_SEND_SIGNALED);
}

/* Every Receive and every Send completed, in order per conn, data intact. */
static void many_check(struct many *m, struct vb_cq *prcq, struct vb_cq *scq)
{
	struct vb_wc wc;

	for (int n = 0; n < NCONN * MSGS; n++) {
		assert_true(get_wc(prcq, &wc, TMO_MS));
		assert_int_equal(wc.status, VB_WC_SUCCESS);
		int i = pair_of(m, wc.conn);
		assert_int_equal(wc.wr_id, m->recvd[i]++); /* in order per conn */
		assert_memory_equal(m->dst[i].p + wc.wr_id * MSZ, m->src[i].p + wc.wr_id * MSZ,
				    MSZ);
		if (m->recvd[i] == MSGS) /* Write before Send: landed */
			assert_memory_equal(m->wdst[i].p, m->src[i].p, WSZ);
	}
	for (int n = 0; n < NCONN * MSGS; n++) {
		assert_true(get_wc(scq, &wc, TMO_MS));
		assert_int_equal(wc.status, VB_WC_SUCCESS);
		int i = pair_of(m, wc.conn);
		assert_int_equal(wc.wr_id, m->sent[i]++);
	}
}

/* 64 connections move data at once; per-conn order holds, data intact. */
void many_connections(void **state)
{
	struct many *m = calloc(1, sizeof(*m));
	struct vb_pd *apd, *ppd;
	struct vb_cq *scq, *rcq, *pscq, *prcq;

	assert_non_null(m);
	assert_int_equal(vb_alloc_pd(dev, &apd), 0);
	assert_int_equal(vb_alloc_pd(dev, &ppd), 0);
	assert_int_equal(vb_create_cq(dev, NCONN * MSGS * 2, &scq), 0);
	assert_int_equal(vb_create_cq(dev, NCONN * MSGS * 2, &rcq), 0);
	assert_int_equal(vb_create_cq(dev, NCONN * MSGS * 2, &pscq), 0);
	assert_int_equal(vb_create_cq(dev, NCONN * MSGS * 2, &prcq), 0);
	for (int i = 0; i < NCONN; i++) {
		struct pair *pr = &m->pr[i];
		struct pair_opts o = {.cap = {.max_send_wr = 16,
					      .max_recv_wr = 16,
					      .max_send_sge = 1,
					      .max_recv_sge = 1}};

		*pr = (struct pair){.shared = true,
				    .apd = apd,
				    .ppd = ppd,
				    .ascq = scq,
				    .arcq = rcq,
				    .pscq = pscq,
				    .prcq = prcq};
		pair_open_opts(pr, &o);
		buf_new(&m->src[i], apd, WSZ > MSGS * MSZ ? WSZ : MSGS * MSZ, 0, 100 + (unsigned)i);
		buf_new(&m->dst[i], ppd, MSGS * MSZ, VB_ACCESS_LOCAL_WRITE, 0);
		buf_new(&m->wdst[i], ppd, WSZ, VB_ACCESS_LOCAL_WRITE | VB_ACCESS_REMOTE_WRITE, 0);
	}
	for (int i = 0; i < NCONN; i++) /* everything in flight on all conns at once */
		many_post(m, i);
	many_check(m, prcq, scq);
	for (int i = 0; i < NCONN; i++) {
		pair_close(&m->pr[i]);
		buf_free(&m->src[i]);
		buf_free(&m->dst[i]);
		buf_free(&m->wdst[i]);
	}
	assert_int_equal(vb_destroy_cq(scq), 0);
	assert_int_equal(vb_destroy_cq(rcq), 0);
	assert_int_equal(vb_destroy_cq(pscq), 0);
	assert_int_equal(vb_destroy_cq(prcq), 0);
	assert_int_equal(vb_dealloc_pd(apd), 0);
	assert_int_equal(vb_dealloc_pd(ppd), 0);
	free(m);
}

/* ---- churn: connections torn down while data moves ---- */

/* One short-lived pair with Writes and Sends in flight, ended the way k says. */
static void churn_one(int k)
{
	struct pair pr = {0};
	struct buf src, dst;
	struct vb_cm_event ev;
	struct vb_wc wc;

	pair_open(&pr);
	buf_new(&src, pr.apd, 1 << 20, 0, 60);
	buf_new(&dst, pr.ppd, 1 << 20, VB_ACCESS_LOCAL_WRITE | VB_ACCESS_REMOTE_WRITE, 61);
	for (int i = 0; i < 4; i++)
		post_recv1(pr.p, (uint64_t)i, &dst, (size_t)i * 4096, 4096);
	for (int i = 0; i < 8; i++)
		post1(pr.a, (uint64_t)i, i % 2 ? VB_WR_SEND : VB_WR_RDMA_WRITE, &src, 0,
		      i % 2 ? 4096 : 1 << 20, raddr(&dst, 0), dst.mr->rkey, VB_SEND_SIGNALED);
	switch (k % 4) {
	case 0: /* the active side disconnects at once */
		assert_int_equal(vb_disconnect(pr.a), 0);
		expect_event(pr.p, VB_CM_DISCONNECTED, &ev);
		break;
	case 1: /* the passive side disconnects at once */
		assert_int_equal(vb_disconnect(pr.p), 0);
		expect_event(pr.a, VB_CM_DISCONNECTED, &ev);
		break;
	case 2: /* the passive side just goes away */
		assert_int_equal(vb_conn_destroy(pr.p), 0);
		pr.p = NULL;
		expect_event(pr.a, VB_CM_DISCONNECTED, &ev);
		break;
	default: /* the active side goes away with everything in flight */
		break;
	}
	/* every send WR completes, one way or the other, exactly once */
	if (k % 4 != 3)
		for (int i = 0; i < 8; i++) {
			assert_true(get_wc(pr.ascq, &wc, TMO_MS));
			assert_int_equal(wc.wr_id, i);
			assert_true(wc.status == VB_WC_SUCCESS || wc.status == VB_WC_WR_FLUSH_ERR);
		}
	if (pr.a) /* with its MRs still registered: destroy flushes first */
		assert_int_equal(vb_conn_destroy(pr.a), 0);
	pr.a = NULL;
	buf_free(&src);
	buf_free(&dst);
	pair_close(&pr);
}

void churn(void **state)
{
	for (int k = 0; k < 40; k++)
		churn_one(k);
}
