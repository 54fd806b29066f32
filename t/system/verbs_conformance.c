/*
 * verbs_conformance: what every provider behind common/verbs.h must do, as
 * RC verbs do. Both sides run in this process: one listener, and per test a
 * passive and an active connection.
 *
 *   VB_DEVICE  device to open (default "soft"; e.g. "rxe0" in the Soft-RoCE lab)
 *   VB_ADDR    address to listen on and connect to (default 127.0.0.1;
 *              "unix:/path" for the soft provider's AF_UNIX mode)
 *   VB_PORT    port (default: a free one)
 *
 * Cases that need a provider feature say SKIP with the reason when it is
 * absent (memory windows without has_mw, the IRD check without the soft
 * provider's VB_SOFT_NO_ORD_THROTTLE knob).
 *
 * The cases are in verbs_conformance_*.c, one file per topic; this file has
 * the helpers they share (declared in verbs_conformance.h), the set-up and
 * the case table.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "common/base/log.h"
#include "common/verbs.h"
#include "verbs_conformance.h"

struct vb_device *dev;
struct vb_device_attr attr;
struct vb_listener *lst;
char addr[256], port[16];
bool is_soft;

/* ---- helpers ---- */

long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Wait until fd is readable; false on timeout. */
bool wait_fd(int fd, int ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, ms) == 1;
}

/* The next completion on cq within ms, using the armed-fd path; false on timeout. */
bool get_wc(struct vb_cq *cq, struct vb_wc *wc, int ms)
{
	long long end = now_ms() + ms;
	int n;

	for (;;) {
		if ((n = vb_poll_cq(cq, 1, wc)) != 0)
			break;
		assert_int_equal(vb_cq_arm(cq), 0);
		if ((n = vb_poll_cq(cq, 1, wc)) != 0)
			break;
		long long left = end - now_ms();
		if (left <= 0 || !wait_fd(vb_cq_fd(cq), (int)left))
			return false;
		assert_int_equal(vb_cq_ack(cq), 0);
	}
	assert_int_equal(n, 1);
	return true;
}

/* The next completion must be wr_id with status st. */
void expect_wc_tmo(struct vb_cq *cq, uint64_t wr_id, enum vb_wc_status st, int ms)
{
	struct vb_wc wc;

	if (!get_wc(cq, &wc, ms))
		fail_msg("no completion for wr_id %llu within %d ms (expected %s)",
			 (unsigned long long)wr_id, ms, vb_wc_status_str(st));
	if (wc.wr_id != wr_id || wc.status != st)
		fail_msg("completion wr_id %llu status '%s'; expected wr_id %llu status '%s'",
			 (unsigned long long)wc.wr_id, vb_wc_status_str(wc.status),
			 (unsigned long long)wr_id, vb_wc_status_str(st));
}

/* expect_wc_tmo with the default timeout. */
void expect_wc(struct vb_cq *cq, uint64_t wr_id, enum vb_wc_status st)
{
	expect_wc_tmo(cq, wr_id, st, TMO_MS);
}

/* No completion may be waiting on cq. */
void expect_no_wc(struct vb_cq *cq)
{
	struct vb_wc wc;

	assert_int_equal(vb_poll_cq(cq, 1, &wc), 0);
}

/* The next CM event on conn; it must be of type want. */
void expect_event(struct vb_conn *c, enum vb_cm_event_type want, struct vb_cm_event *ev)
{
	long long end = now_ms() + TMO_MS;
	int rc;

	while ((rc = vb_conn_get_event(c, ev)) == -EAGAIN && now_ms() < end)
		wait_fd(vb_conn_fd(c), 100);
	if (rc != 0)
		fail_msg("no CM event (expected %s): %d", vb_cm_event_str(want), rc);
	if (ev->type != want)
		fail_msg("CM event %s (status %d); expected %s", vb_cm_event_str(ev->type),
			 ev->status, vb_cm_event_str(want));
}

/* The listener's next CONNECT_REQUEST. */
void expect_request(struct vb_cm_event *ev)
{
	long long end = now_ms() + TMO_MS;
	int rc;

	while ((rc = vb_listener_get_event(lst, ev)) == -EAGAIN && now_ms() < end)
		wait_fd(vb_listener_fd(lst), 100);
	assert_int_equal(rc, 0);
	assert_int_equal(ev->type, VB_CM_CONNECT_REQUEST);
	assert_non_null(ev->conn);
}

/* Queue sizes most cases use. */
struct vb_qp_cap default_cap(void)
{
	return (struct vb_qp_cap){.max_send_wr = 64,
				  .max_recv_wr = 64,
				  .max_send_sge = 4,
				  .max_recv_sge = 4,
				  .max_inline_data = 64};
}

/* Active conn resolved, QP created, connect started. */
struct vb_conn *start_active(struct pair *pr, const struct pair_opts *o)
{
	struct vb_conn_param cp = {.responder_resources = o->a_ird, .initiator_depth = o->a_ord};
	struct vb_conn *c;

	if (o->req_pdata) {
		cp.private_data = o->req_pdata;
		cp.private_data_len = (uint8_t)strlen(o->req_pdata);
	}
	assert_int_equal(vb_resolve(dev, addr, port, TMO_MS, &c), 0);
	assert_int_equal(vb_create_qp(c, pr->apd, pr->ascq, pr->arcq, &o->cap), 0);
	assert_int_equal(vb_connect(c, &cp), 0);
	return c;
}

/* Allocate a pair's PDs and CQs unless the caller supplies them. */
void pair_res(struct pair *pr)
{
	if (pr->shared)
		return;
	assert_int_equal(vb_alloc_pd(dev, &pr->apd), 0);
	assert_int_equal(vb_alloc_pd(dev, &pr->ppd), 0);
	assert_int_equal(vb_create_cq(dev, 256, &pr->ascq), 0);
	assert_int_equal(vb_create_cq(dev, 256, &pr->arcq), 0);
	assert_int_equal(vb_create_cq(dev, 256, &pr->pscq), 0);
	assert_int_equal(vb_create_cq(dev, 256, &pr->prcq), 0);
}

/* Connect a pair through the listener, checking private data both ways. */
void pair_open_opts(struct pair *pr, const struct pair_opts *opts)
{
	struct pair_opts o = *opts;
	struct vb_cm_event ev;
	struct vb_conn_param cp;

	if (o.cap.max_send_wr == 0)
		o.cap = default_cap();
	pair_res(pr);
	pr->a = start_active(pr, &o);
	expect_request(&ev);
	pr->p = ev.conn;
	if (o.req_pdata) {
		assert_true(ev.private_data_len >= strlen(o.req_pdata));
		assert_memory_equal(ev.private_data, o.req_pdata, strlen(o.req_pdata));
	}
	assert_int_equal(vb_create_qp(pr->p, pr->ppd, pr->pscq, pr->prcq, &o.cap), 0);
	cp = (struct vb_conn_param){.responder_resources = o.p_ird, .initiator_depth = o.p_ord};
	if (o.acc_pdata) {
		cp.private_data = o.acc_pdata;
		cp.private_data_len = (uint8_t)strlen(o.acc_pdata);
	}
	assert_int_equal(vb_accept(pr->p, &cp), 0);
	expect_event(pr->a, VB_CM_ESTABLISHED, &ev);
	if (o.acc_pdata) {
		assert_true(ev.private_data_len >= strlen(o.acc_pdata));
		assert_memory_equal(ev.private_data, o.acc_pdata, strlen(o.acc_pdata));
	}
	expect_event(pr->p, VB_CM_ESTABLISHED, &ev);
	cma_wait(pr);
}

/* Connect a pair with default options. */
void pair_open(struct pair *pr)
{
	struct pair_opts o = {0};

	pair_open_opts(pr, &o);
}

/* Tear a pair down; conns flush whatever is outstanding. */
void pair_close(struct pair *pr)
{
	if (pr->a)
		assert_int_equal(vb_conn_destroy(pr->a), 0);
	if (pr->p)
		assert_int_equal(vb_conn_destroy(pr->p), 0);
	if (pr->shared)
		return;
	assert_int_equal(vb_destroy_cq(pr->ascq), 0);
	assert_int_equal(vb_destroy_cq(pr->arcq), 0);
	assert_int_equal(vb_destroy_cq(pr->pscq), 0);
	assert_int_equal(vb_destroy_cq(pr->prcq), 0);
	assert_int_equal(vb_dealloc_pd(pr->apd), 0);
	assert_int_equal(vb_dealloc_pd(pr->ppd), 0);
}

/* A page-aligned buffer, filled with a pattern seeded by seed, registered with access. */
void buf_new(struct buf *b, struct vb_pd *pd, size_t len, unsigned access, unsigned seed)
{
	b->len = len;
	b->p = aligned_alloc(PAGE, (len + PAGE - 1) / PAGE * PAGE);
	assert_non_null(b->p);
	for (size_t i = 0; i < len; i++)
		b->p[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 12));
	b->mr = NULL;
	if (pd)
		assert_int_equal(vb_reg_mr(pd, b->p, len, access, &b->mr), 0);
}

/* Deregister and free a buffer. */
void buf_free(struct buf *b)
{
	if (b->mr)
		assert_int_equal(vb_dereg_mr(b->mr), 0);
	free(b->p);
}

/* An SGE over [off, off+len) of b. */
struct vb_sge sge_of(struct buf *b, size_t off, uint32_t len)
{
	return (struct vb_sge){.addr = (uintptr_t)(b->p + off), .length = len, .lkey = b->mr->lkey};
}

/* Post one Receive over [off, off+len) of b. */
void post_recv1(struct vb_conn *c, uint64_t id, struct buf *b, size_t off, uint32_t len)
{
	struct vb_sge s = sge_of(b, off, len);
	struct vb_recv_wr wr = {.wr_id = id, .sg_list = &s, .num_sge = 1};

	assert_int_equal(vb_post_recv(c, &wr, NULL), 0);
}

/* Post one send-side WR over the SGEs s[0..n). */
void post_sges(struct vb_conn *c, uint64_t id, enum vb_wr_opcode op, struct vb_sge *s, int n,
	       uint64_t raddr, uint32_t rkey, unsigned flags)
{
	struct vb_send_wr wr = {.wr_id = id,
				.sg_list = s,
				.num_sge = n,
				.opcode = op,
				.send_flags = flags,
				.remote_addr = raddr,
				.rkey = rkey};

	assert_int_equal(vb_post_send(c, &wr, NULL), 0);
}

/* Post one send-side WR over one SGE of b. */
void post1(struct vb_conn *c, uint64_t id, enum vb_wr_opcode op, struct buf *b, size_t off,
	   uint32_t len, uint64_t raddr, uint32_t rkey, unsigned flags)
{
	struct vb_sge s = sge_of(b, off, len);

	post_sges(c, id, op, &s, 1, raddr, rkey, flags);
}

/* The remote address of offset off in b (VA-based keys). */
uint64_t raddr(const struct buf *b, size_t off)
{
	return (uintptr_t)b->p + off;
}

/* ---- set-up ---- */

/* A free TCP port on addr, or VB_PORT. */
static void pick_port(void)
{
	const char *env = getenv("VB_PORT");

	if (env && *env)
		snprintf(port, sizeof(port), "%s", env);
	else if (strncmp(addr, "unix:", 5) == 0)
		snprintf(port, sizeof(port), "0");
	else
		free_port(port);
}

/* See verbs_conformance.h. */
void free_port(char out[16])
{
	struct sockaddr_storage ss = {0};
	socklen_t len = sizeof(ss);
	int fd;

	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	if (inet_pton(AF_INET6, addr, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		len = sizeof(*s6);
	} else {
		assert_int_equal(inet_pton(AF_INET, addr, &s4->sin_addr), 1);
		s4->sin_family = AF_INET;
		len = sizeof(*s4);
	}
	fd = socket(ss.ss_family, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&ss, len), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&ss, &len), 0);
	snprintf(out, 16, "%u", ntohs(ss.ss_family == AF_INET6 ? s6->sin6_port : s4->sin_port));
	close(fd);
}

/* Open the device and the listener shared by every case. */
static int suite_setup(void **state)
{
	const char *name = getenv("VB_DEVICE"), *a = getenv("VB_ADDR");

	if (name == NULL || *name == '\0')
		name = "soft";
	snprintf(addr, sizeof(addr), "%s", a && *a ? a : "127.0.0.1");
	/* soft: RNR deadline short enough for the RNR case to finish quickly */
	setenv("VB_SOFT_RNR_TIMEOUT_MS", "1500", 0);
	setenv("VB_SOFT_HELLO_TIMEOUT_MS", "1000", 0); /* and for the silent-peer case */
	if (vb_open(name, &dev) != 0) {
		fprintf(stderr, "cannot open verbs device %s\n", name);
		return -1;
	}
	is_soft = strcmp(dev->provider, "soft") == 0;
	if (vb_query_device(dev, &attr) != 0)
		return -1;
	pick_port();
	if (vb_listen(dev, addr, port, 128, &lst) != 0) {
		fprintf(stderr, "cannot listen on %s port %s\n", addr, port);
		return -1;
	}
	return 0;
}

/* Close the listener and the device. */
static int suite_teardown(void **state)
{
	if (lst)
		vb_listener_destroy(lst);
	vb_close(dev);
	return 0;
}

/* Fork the passive side, run the active side, wait for both. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(open_names),
		cmocka_unit_test(connect_private_data),
		cmocka_unit_test(connect_rejected),
		cmocka_unit_test(connect_unreachable),
		cmocka_unit_test(connect_timeout),
		cmocka_unit_test(local_carrier),
		cmocka_unit_test(cross_memory_copies),
		cmocka_unit_test(cross_memory_off),
		cmocka_unit_test(cross_memory_flushed),
		cmocka_unit_test(cross_memory_reads),
		cmocka_unit_test(send_recv_order),
		cmocka_unit_test(write_then_send),
		cmocka_unit_test(rdma_read_sges),
		cmocka_unit_test(rdma_write_sges),
		cmocka_unit_test(full_send_queue),
		cmocka_unit_test(mixed_order_and_fence),
		cmocka_unit_test(inline_send),
		cmocka_unit_test(answered_send),
		cmocka_unit_test(answered_hold_write),
		cmocka_unit_test(bad_rkey),
		cmocka_unit_test(lkey_is_not_rkey),
		cmocka_unit_test(out_of_bounds),
		cmocka_unit_test(missing_access_right),
		cmocka_unit_test(wrong_pd),
		cmocka_unit_test(dereg_while_peer_holds_key),
		cmocka_unit_test(dereg_waits_for_inflight),
		cmocka_unit_test(recv_too_small),
		cmocka_unit_test(rnr_then_receive),
		cmocka_unit_test(rnr_retries_exhausted),
		cmocka_unit_test(ord_throttles_reads),
		cmocka_unit_test(ird_enforced),
		cmocka_unit_test(mw_bind_write_rebind),
		cmocka_unit_test(mw_range_and_rights),
		cmocka_unit_test(mw_unbind_len0),
		cmocka_unit_test(mw_send_with_invalidate),
		cmocka_unit_test(disconnect_flushes),
		cmocka_unit_test(peer_vanishes),
		cmocka_unit_test(cq_event_fd),
		cmocka_unit_test(cq_overflow_reported),
		cmocka_unit_test(driven_cq),
		cmocka_unit_test(driven_cq_shared),
		cmocka_unit_test(many_connections),
		cmocka_unit_test(threads_share_a_qp),
		cmocka_unit_test(churn),
		cmocka_unit_test(hostile_handshake),
		cmocka_unit_test(hostile_requests),
		cmocka_unit_test(hostile_silent_peer),
		cmocka_unit_test(hostile_unanswered),
		cmocka_unit_test(hostile_out_of_descriptors),
	};

	log_set_level(LOG_LVL_ERR);
	return cmocka_run_group_tests_name("verbs_conformance", tests, suite_setup, suite_teardown);
}
