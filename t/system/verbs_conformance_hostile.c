/*
 * verbs_conformance_hostile.c: hostile peers: a raw socket speaking the soft
 * provider's wire format (broken handshakes, silence, bad requests, requests
 * never answered) and a listener out of descriptors. Soft only: elsewhere
 * these cases SKIP.
 * Part of t/system/verbs_conformance (the helpers: verbs_conformance.c).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "common/verbs.h"
#include "platform/soft/soft_wire.h" /* the hostile-peer cases speak soft's wire format */
#include "test_fds.h"
#include "verbs_conformance.h"

/* ---- hostile peers (soft only: a raw socket speaking the soft wire format) ---- */

/* A raw stream socket connected to the listener. */
static int raw_connect(void)
{
	struct sockaddr_storage ss = {0};
	socklen_t len;
	int fd;

	if (strncmp(addr, "unix:", 5) == 0) {
		struct sockaddr_un *un = (struct sockaddr_un *)&ss;

		un->sun_family = AF_UNIX;
		assert_true(snprintf(un->sun_path, sizeof(un->sun_path), "%s", addr + 5) <
			    (int)sizeof(un->sun_path));
		len = sizeof(*un);
	} else {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)atoi(port));
		assert_int_equal(inet_pton(AF_INET, addr, &sin->sin_addr), 1);
		len = sizeof(*sin);
	}
	fd = socket(ss.ss_family, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&ss, len), 0);
	return fd;
}

/* Write one header (and payload) exactly as given; false if the peer hung up. */
static bool raw_try(int fd, const struct soft_hdr *h, const void *payload, size_t plen)
{
	uint8_t b[SOFT_HDR_LEN];

	soft_hdr_encode(h, b);
	if (send(fd, b, sizeof(b), MSG_NOSIGNAL) != (ssize_t)sizeof(b))
		return false;
	return plen == 0 || send(fd, payload, plen, MSG_NOSIGNAL) == (ssize_t)plen;
}

/* raw_try to a peer that must still be there. */
static void raw_msg(int fd, const struct soft_hdr *h, const void *payload, size_t plen)
{
	assert_true(raw_try(fd, h, payload, plen));
}

/* Read one header (skipping its payload); false on EOF or timeout. */
static bool raw_read(int fd, struct soft_hdr *h)
{
	uint8_t b[SOFT_HDR_LEN], skip[256];
	size_t got = 0;

	while (got < sizeof(b)) {
		if (!wait_fd(fd, TMO_MS))
			return false;
		ssize_t n = read(fd, b + got, sizeof(b) - got);
		if (n <= 0)
			return false;
		got += (size_t)n;
	}
	soft_hdr_decode(b, h);
	for (uint32_t left = h->len; left;) {
		ssize_t n = read(fd, skip, left < sizeof(skip) ? left : sizeof(skip));
		if (n <= 0)
			return false;
		left -= (uint32_t)n;
	}
	return true;
}

/* A HELLO with len bytes of private data; false if the peer hung up meanwhile. */
static bool raw_hello(int fd, uint32_t len)
{
	static const uint8_t pdata[300];
	struct soft_hdr h = {
		.op = SOFT_OP_HELLO, .len = len, .addr = SOFT_WIRE_MAGIC, .aux = 8 << 8 | 8};

	return raw_try(fd, &h, pdata, len);
}

/* Broken handshakes are dropped; the listener keeps serving real peers. */
void hostile_handshake(void **state)
{
	struct pair pr = {0};
	struct vb_cm_event ev;
	int fd;

	if (!is_soft)
		skip_because("speaks the soft provider's wire format");
	fd = raw_connect(); /* not our protocol at all */
	static const char http[] = "GET / HTTP/1.0\r\n\r\nxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";
	(void)!send(fd, http, sizeof(http) - 1, MSG_NOSIGNAL); /* it may hang up early */
	fd = raw_connect(); /* private data longer than allowed */
	(void)raw_hello(fd, 200);
	close(fd);
	fd = raw_connect(); /* a truncated HELLO, then EOF */
	(void)!send(fd, "\x01\x00\x00", 3, MSG_NOSIGNAL);
	close(fd);
	fd = raw_connect(); /* a HELLO with a bad magic */
	struct soft_hdr h = {.op = SOFT_OP_HELLO, .addr = 42};
	(void)raw_try(fd, &h, NULL, 0);
	close(fd);
	pair_open(&pr); /* a real peer still gets through */
	assert_int_equal(vb_listener_get_event(lst, &ev), -EAGAIN);
	pair_close(&pr);
}

/* A peer that connects and says nothing is dropped after the HELLO deadline. */
void hostile_silent_peer(void **state)
{
	char b;
	int fd;

	if (!is_soft)
		skip_because(
			"the HELLO deadline is the soft provider's (VB_SOFT_HELLO_TIMEOUT_MS)");
	fd = raw_connect();
	assert_true(wait_fd(fd, 8000)); /* EOF, well within the deadline + slack */
	assert_int_equal(read(fd, &b, 1), 0);
	close(fd);
}

/* CPU seconds this process has used. */
static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* Out of descriptors, the listener refuses the waiting peer (closes it at
 * once) instead of spinning on a socket that stays readable; once there are
 * descriptors again, real peers get through. */
void hostile_out_of_descriptors(void **state)
{
	static struct test_fds fds;
	struct pair pr = {0};
	double cpu;
	char b;
	int fd;

	if (!is_soft)
		skip_because("the listener is the soft provider's");
	assert_int_equal(test_fds_fill(&fds), 0); /* room for the peer's socket only */
	fd = raw_connect();
	assert_true(wait_fd(fd, 3000));
	assert_true(read(fd, &b, 1) <= 0); /* refused */
	cpu = cpu_seconds();
	usleep(500 * 1000);
	cpu = cpu_seconds() - cpu;
	assert_int_equal(test_fds_release(&fds), 0);
	assert_true(cpu < 0.25); /* the engine was not spinning */
	close(fd);
	pair_open(&pr);
	pair_close(&pr);
}

/* A raw peer connected to a passive conn that has one Receive posted. */
struct raw_peer {
	struct pair pr;
	struct buf rb;
	int fd;
};

/* Complete the handshake from a raw socket. */
static void raw_established(struct raw_peer *rp)
{
	struct vb_qp_cap cap = default_cap();
	struct vb_cm_event ev;
	struct soft_hdr h;

	memset(rp, 0, sizeof(*rp));
	pair_res(&rp->pr);
	rp->fd = raw_connect();
	assert_true(raw_hello(rp->fd, 4));
	expect_request(&ev);
	rp->pr.p = ev.conn;
	assert_int_equal(vb_create_qp(rp->pr.p, rp->pr.ppd, rp->pr.pscq, rp->pr.prcq, &cap), 0);
	buf_new(&rp->rb, rp->pr.ppd, 4096, VB_ACCESS_LOCAL_WRITE, 50);
	post_recv1(rp->pr.p, 1, &rp->rb, 0, 4096);
	assert_int_equal(vb_accept(rp->pr.p, NULL), 0);
	assert_true(raw_read(rp->fd, &h));
	assert_int_equal(h.op, SOFT_OP_ACCEPT);
	h = (struct soft_hdr){.op = SOFT_OP_RTU};
	raw_msg(rp->fd, &h, NULL, 0);
	expect_event(rp->pr.p, VB_CM_ESTABLISHED, &ev);
}

/* The passive side's Receive was flushed; clean up. */
static void raw_done(struct raw_peer *rp)
{
	expect_wc(rp->pr.prcq, 1, VB_WC_WR_FLUSH_ERR);
	close(rp->fd);
	buf_free(&rp->rb);
	pair_close(&rp->pr);
}

/* Bad requests from a connected peer: refused or treated as protocol errors. */
void hostile_requests(void **state)
{
	static const uint8_t junk[64];
	static const struct soft_hdr bad[] = {
		{.op = SOFT_OP_SEND, .seq = 7, .len = 8}, /* out of sequence */
		{.op = 200},				  /* unknown */
		{.op = SOFT_OP_SEND, .len = 0xffffffffu}, /* longer than a message can be */
		{.op = SOFT_OP_ACK, .seq = 1000},	  /* acknowledges what was never sent */
		{.op = SOFT_OP_READ_RESP, .len = 16},	  /* answers no Read */
		{.op = SOFT_OP_HELLO, .addr = SOFT_WIRE_MAGIC}, /* handshake again */
	};
	struct raw_peer rp;
	struct vb_cm_event ev;
	struct soft_hdr h, r;
	struct buf dst;
	struct vb_wc wc;

	if (!is_soft)
		skip_because("speaks the soft provider's wire format");
	/* a Write with a made-up key: NAK REM_ACCESS_ERR */
	raw_established(&rp);
	h = (struct soft_hdr){.op = SOFT_OP_WRITE, .len = 64, .key = 0x12345678, .addr = 4096};
	raw_msg(rp.fd, &h, junk, sizeof(junk));
	assert_true(raw_read(rp.fd, &r));
	assert_int_equal(r.op, SOFT_OP_NAK);
	assert_int_equal(r.status, VB_WC_REM_ACCESS_ERR);
	raw_done(&rp);
	/* protocol errors: the conn tells the peer ERR and flushes */
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		raw_established(&rp);
		raw_msg(rp.fd, &bad[i], junk, bad[i].len <= sizeof(junk) ? bad[i].len : 0);
		assert_true(raw_read(rp.fd, &r));
		assert_int_equal(r.op, SOFT_OP_ERR);
		raw_done(&rp);
	}
	/* a grant to copy our Read ourselves (soft_cma.c), on a connection where
	 * no probe said we may: a protocol error, and the Read does not succeed */
	raw_established(&rp);
	buf_new(&dst, rp.pr.ppd, 65536, VB_ACCESS_LOCAL_WRITE, 52);
	post1(rp.pr.p, 20, VB_WR_RDMA_READ, &dst, 0, 65536, 4096, 0x1234, VB_SEND_SIGNALED);
	assert_true(raw_read(rp.fd, &r));
	assert_int_equal(r.op, SOFT_OP_READ_REQ);
	h = (struct soft_hdr){.op = SOFT_OP_READ_RESP,
			      .flags = SOFT_FLAG_CMA,
			      .seq = r.seq,
			      .len = 16,
			      .aux = 65536};
	raw_msg(rp.fd, &h, junk, 16);
	assert_true(raw_read(rp.fd, &r));
	assert_int_equal(r.op, SOFT_OP_ERR);
	assert_true(get_wc(rp.pr.pscq, &wc, TMO_MS));
	assert_int_equal(wc.wr_id, 20);
	assert_int_not_equal(wc.status, VB_WC_SUCCESS);
	buf_free(&dst);
	raw_done(&rp);
	/* a Send cut short by EOF: DISCONNECTED, Receive flushed */
	raw_established(&rp);
	h = (struct soft_hdr){.op = SOFT_OP_SEND, .len = 1000};
	raw_msg(rp.fd, &h, junk, 10);
	shutdown(rp.fd, SHUT_WR);
	expect_event(rp.pr.p, VB_CM_DISCONNECTED, &ev);
	raw_done(&rp);
}

/* A peer that takes our requests and never answers them: the oldest fails
 * RETRY_EXC_ERR once the ACK timeout passes (an RC QP's retries spent), the
 * rest flush, the QP is in error and the peer is told so. */
void hostile_unanswered(void **state)
{
	struct raw_peer rp;
	struct buf dst;
	struct soft_hdr h;
	struct timespec t0, t1;
	long ms;

	if (!is_soft)
		skip_because("speaks the soft provider's wire format");
	setenv("VB_SOFT_ACK_TIMEOUT_MS", "1500", 1); /* read when the QP is created */
	raw_established(&rp);
	unsetenv("VB_SOFT_ACK_TIMEOUT_MS");
	buf_new(&dst, rp.pr.ppd, 4096, VB_ACCESS_LOCAL_WRITE, 51);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	post1(rp.pr.p, 10, VB_WR_RDMA_READ, &dst, 0, 4096, 4096, 0x1234, VB_SEND_SIGNALED);
	post1(rp.pr.p, 11, VB_WR_SEND, &dst, 0, 16, 0, 0, VB_SEND_SIGNALED);
	assert_true(raw_read(rp.fd, &h)); /* the Read arrives, and is never answered */
	assert_int_equal(h.op, SOFT_OP_READ_REQ);
	expect_wc_tmo(rp.pr.pscq, 10, VB_WC_RETRY_EXC_ERR, TMO_MS);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	assert_true(ms >= 1400); /* not before the timeout */
	expect_wc(rp.pr.pscq, 11, VB_WC_WR_FLUSH_ERR);
	do /* the Send that went out before, then the error */
		assert_true(raw_read(rp.fd, &h));
	while (h.op == SOFT_OP_SEND);
	assert_int_equal(h.op, SOFT_OP_ERR);
	buf_free(&dst);
	raw_done(&rp);
}
