/*
 * verbs_conformance_cma.c: the soft provider's cross-memory copies
 * (platform/soft/soft_cma.c). On the local carrier, unless VB_SOFT_CMA=0
 * (these cases open a device of their own with it as they need it;
 * t/system/verbs_soft_nocma.sh runs the whole suite with it off), both ends
 * of a pair find that they may reach each other's memory (a probe and its
 * answer); then Writes of 16 KiB or more in up to 4 segments carry segment
 * lists instead of data, and Reads of 16 KiB or more are answered with a
 * grant that the initiator copies by itself, with the same results and the
 * same key checks at the responder as through the socket; and a copy does
 * not count when the memory was let go of meanwhile (a Write its initiator
 * flushed, a Read whose key went or whose responder flushed). This file
 * looks into the provider's connections (white box): whether each end copies
 * is not visible through the verbs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "platform/soft/soft.h"
#include "verbs_conformance.h"

/* Whether the peer of c copies c's RDMA data (it answered c's probe). */
static bool peer_copies(struct vb_conn *c)
{
	struct soft_conn *sc = soft_conn(c);
	bool v;

	pthread_mutex_lock(&sc->lock);
	v = sc->cma_peer_copies;
	pthread_mutex_unlock(&sc->lock);
	return v;
}

/* Whether the suite's pairs are soft on the local carrier (Linux, to
 * 127.0.0.1 or ::1, VB_SOFT_LOCAL_UNIX not 0), where copies can be on. */
static bool cma_possible(void)
{
	const char *u = getenv("VB_SOFT_LOCAL_UNIX");

#ifndef __linux__
	return false;
#endif
	return is_soft && (strcmp(addr, "127.0.0.1") == 0 || strcmp(addr, "::1") == 0) &&
	       (u == NULL || strcmp(u, "0") != 0);
}

/* See verbs_conformance.h. */
bool cma_pulls(struct pair *pr)
{
	struct soft_conn *sc;
	bool v;

	if (!is_soft)
		return false;
	sc = soft_conn(pr->a);
	pthread_mutex_lock(&sc->lock);
	v = sc->cma_we_copy;
	pthread_mutex_unlock(&sc->lock);
	return v;
}

/* See verbs_conformance.h. */
void cma_wait(struct pair *pr)
{
	long long until = now_ms() + TMO_MS;

	if (!cma_possible() || strstr(pr->p->peer, ":local-") == NULL ||
	    !soft_conn(pr->a)->dev->cma || !soft_conn(pr->p)->dev->cma)
		return;
	while (!(peer_copies(pr->a) && peer_copies(pr->p)) && now_ms() < until) {
		struct vb_cq *cq[] = {pr->ascq, pr->arcq, pr->pscq, pr->prcq};
		struct vb_wc wc;

		/* CQs their consumer drives move their connections only when polled;
		 * nothing is posted yet, so nothing completes */
		for (int i = 0; i < 4; i++)
			assert_int_equal(vb_poll_cq(cq[i], 1, &wc), 0);
		usleep(1000);
	}
	assert_true(peer_copies(pr->a));
	assert_true(peer_copies(pr->p));
}

/* The suite's device and listener, and another's (a soft device opened with
 * VB_SOFT_CMA=cma) in their place until swap_back; the case is skipped where
 * the suite's pairs are not on the local carrier. */
struct swap {
	struct vb_device *dev;
	struct vb_listener *lst;
	char port[sizeof(port)];
};

static void swap_in(struct swap *sw, const char *cma)
{
	const char *was = getenv("VB_SOFT_CMA");
	char keep[16], p2[16];
	struct vb_device *d2;
	struct vb_listener *l2;

	if (!cma_possible())
		skip_because("cross-memory copies are the soft provider's, on the local carrier "
			     "(Linux)");
	snprintf(keep, sizeof(keep), "%s", was ? was : "");
	assert_int_equal(setenv("VB_SOFT_CMA", cma, 1), 0);
	assert_int_equal(vb_open("soft", &d2), 0);
	assert_int_equal(was ? setenv("VB_SOFT_CMA", keep, 1) : unsetenv("VB_SOFT_CMA"), 0);
	free_port(p2);
	assert_int_equal(vb_listen(d2, addr, p2, 8, &l2), 0);
	*sw = (struct swap){.dev = dev, .lst = lst};
	memcpy(sw->port, port, sizeof(port));
	dev = d2, lst = l2;
	snprintf(port, sizeof(port), "%s", p2);
}

static void swap_back(struct swap *sw)
{
	assert_int_equal(vb_listener_destroy(lst), 0);
	vb_close(dev);
	dev = sw->dev, lst = sw->lst;
	memcpy(port, sw->port, sizeof(port));
}

/* A Write or Read of the segments s[0..n) of b to or from raddr/rkey. */
static void rdma(struct pair *pr, uint64_t id, enum vb_wr_opcode op, struct vb_sge *s, int n,
		 uint64_t ra, uint32_t rkey, enum vb_wc_status st)
{
	post_sges(pr->a, id, op, s, n, ra, rkey, VB_SEND_SIGNALED);
	expect_wc(pr->ascq, id, st);
}

/* Writes and Reads in several segments land where they should, nothing
 * around them moves; more segments than a list holds go through the socket;
 * the responder still refuses what its keys do not allow. */
void cross_memory_copies(void **state)
{
	const unsigned rw = VB_ACCESS_LOCAL_WRITE | VB_ACCESS_REMOTE_WRITE | VB_ACCESS_REMOTE_READ;
	struct pair_opts o = {.cap = default_cap()};
	struct pair pr = {0};
	struct buf a, p;
	struct vb_sge s[5];
	struct swap sw;

	(void)state;
	swap_in(&sw, "1");
	o.cap.max_send_sge = 5;
	pair_open_opts(&pr, &o); /* waits for both ends to copy */
	buf_new(&a, pr.apd, 1 << 20, VB_ACCESS_LOCAL_WRITE, 21);
	buf_new(&p, pr.ppd, 1 << 20, rw, 22);
	memset(p.p, 0, p.len);
	/* a Write of three segments, 70000 bytes */
	s[0] = sge_of(&a, 100000, 20000);
	s[1] = sge_of(&a, 3, 45000);
	s[2] = sge_of(&a, 500000, 5000);
	rdma(&pr, 1, VB_WR_RDMA_WRITE, s, 3, raddr(&p, 4097), p.mr->rkey, VB_WC_SUCCESS);
	assert_memory_equal(p.p + 4097, a.p + 100000, 20000);
	assert_memory_equal(p.p + 4097 + 20000, a.p + 3, 45000);
	assert_memory_equal(p.p + 4097 + 65000, a.p + 500000, 5000);
	assert_int_equal(p.p[4096], 0);
	assert_int_equal(p.p[4097 + 70000], 0);
	/* a Read of two segments back into another part of a */
	memset(a.p + 600000, 0, 200000);
	s[0] = sge_of(&a, 600000, 30000);
	s[1] = sge_of(&a, 700000, 40000);
	rdma(&pr, 2, VB_WR_RDMA_READ, s, 2, raddr(&p, 4097), p.mr->rkey, VB_WC_SUCCESS);
	assert_memory_equal(a.p + 600000, p.p + 4097, 30000);
	assert_memory_equal(a.p + 700000, p.p + 4097 + 30000, 40000);
	assert_int_equal(a.p[600000 + 30000], 0);
	assert_int_equal(a.p[700000 + 40000], 0);
	/* five segments: through the socket, same result */
	for (int i = 0; i < 5; i++)
		s[i] = sge_of(&a, (size_t)i * 100000, 20000);
	rdma(&pr, 3, VB_WR_RDMA_WRITE, s, 5, raddr(&p, 300000), p.mr->rkey, VB_WC_SUCCESS);
	for (int i = 0; i < 5; i++)
		assert_memory_equal(p.p + 300000 + i * 20000, a.p + i * 100000, 20000);
	/* past the end of the responder's registration: refused, nothing lands */
	memset(p.p + p.len - 100, 0, 100);
	post1(pr.a, 4, VB_WR_RDMA_WRITE, &a, 0, 65536, raddr(&p, p.len - 65535), p.mr->rkey,
	      VB_SEND_SIGNALED);
	expect_wc(pr.ascq, 4, VB_WC_REM_ACCESS_ERR);
	for (size_t i = p.len - 100; i < p.len; i++)
		assert_int_equal(p.p[i], 0);
	buf_free(&a);
	buf_free(&p);
	pair_close(&pr);
	swap_back(&sw);
}

/* On a device opened with VB_SOFT_CMA=0, neither end of a pair copies for
 * the other, and the data goes through the socket. */
void cross_memory_off(void **state)
{
	struct pair pr = {0};
	struct buf a, p;
	struct swap sw;

	(void)state;
	swap_in(&sw, "0");
	pair_open(&pr);
	buf_new(&a, pr.apd, 65536, VB_ACCESS_LOCAL_WRITE, 23);
	buf_new(&p, pr.ppd, 65536, VB_ACCESS_LOCAL_WRITE | VB_ACCESS_REMOTE_WRITE, 24);
	/* a Send each way first: any probe would have been answered by then */
	post_recv1(pr.p, 10, &p, 0, 64);
	post1(pr.a, 11, VB_WR_SEND, &a, 0, 64, 0, 0, VB_SEND_SIGNALED);
	expect_wc(pr.prcq, 10, VB_WC_SUCCESS);
	expect_wc(pr.ascq, 11, VB_WC_SUCCESS);
	post_recv1(pr.a, 12, &a, 0, 64);
	post1(pr.p, 13, VB_WR_SEND, &p, 0, 64, 0, 0, VB_SEND_SIGNALED);
	expect_wc(pr.arcq, 12, VB_WC_SUCCESS);
	expect_wc(pr.pscq, 13, VB_WC_SUCCESS);
	assert_false(peer_copies(pr.a));
	assert_false(peer_copies(pr.p));
	post1(pr.a, 14, VB_WR_RDMA_WRITE, &a, 0, 65536, raddr(&p, 0), p.mr->rkey, VB_SEND_SIGNALED);
	expect_wc(pr.ascq, 14, VB_WC_SUCCESS);
	assert_memory_equal(p.p, a.p, 65536);
	buf_free(&a);
	buf_free(&p);
	pair_close(&pr);
	swap_back(&sw);
}

/* A pair's PDs and one CQ per side (for sends and receives), the
 * responder's driven by the case, and the initiator's too if drive_a: their
 * sockets are read only when the case polls them. */
static void driven_res(struct pair *pr, bool drive_a)
{
	pr->shared = true;
	assert_int_equal(vb_alloc_pd(dev, &pr->apd), 0);
	assert_int_equal(vb_alloc_pd(dev, &pr->ppd), 0);
	assert_int_equal(vb_create_cq(dev, 64, &pr->ascq), 0);
	pr->arcq = pr->ascq;
	assert_int_equal(vb_create_cq(dev, 64, &pr->pscq), 0);
	pr->prcq = pr->pscq;
	if (drive_a)
		assert_int_equal(vb_cq_drive(pr->ascq), 0);
	assert_int_equal(vb_cq_drive(pr->pscq), 0);
}

static void driven_free(struct pair *pr)
{
	assert_int_equal(vb_destroy_cq(pr->ascq), 0);
	assert_int_equal(vb_destroy_cq(pr->pscq), 0);
	assert_int_equal(vb_dealloc_pd(pr->apd), 0);
	assert_int_equal(vb_dealloc_pd(pr->ppd), 0);
}

/* Whether c has sent everything it queued. */
static bool tx_empty(struct vb_conn *c)
{
	struct soft_conn *sc = soft_conn(c);
	bool v;

	pthread_mutex_lock(&sc->lock);
	v = sc->tx_count == 0;
	pthread_mutex_unlock(&sc->lock);
	return v;
}

/* An initiator that flushes a Write whose segment list is already in the
 * responder's socket (the responder's CQs are driven and not polled, so it
 * reads nothing meanwhile) gives the buffer back to its application, which
 * may change it at once: the responder's later copy must not count, and the
 * Send that followed the Write is not delivered. */
void cross_memory_flushed(void **state)
{
	struct pair pr = {0};
	struct buf a, p;
	struct swap sw;
	long long until;

	(void)state;
	swap_in(&sw, "1");
	driven_res(&pr, false);
	pair_open(&pr); /* cma_wait polls the responder's CQ meanwhile */
	buf_new(&a, pr.apd, 65536, VB_ACCESS_LOCAL_WRITE, 25);
	buf_new(&p, pr.ppd, 65536 + 4096, VB_ACCESS_LOCAL_WRITE | VB_ACCESS_REMOTE_WRITE, 26);
	post_recv1(pr.p, 1, &p, 65536, 64);
	post1(pr.a, 2, VB_WR_RDMA_WRITE, &a, 0, 65536, raddr(&p, 0), p.mr->rkey, VB_SEND_SIGNALED);
	post1(pr.a, 3, VB_WR_SEND, &a, 0, 64, 0, 0, VB_SEND_SIGNALED);
	for (until = now_ms() + TMO_MS; !tx_empty(pr.a) && now_ms() < until;)
		usleep(1000);
	assert_true(tx_empty(pr.a));
	assert_int_equal(vb_disconnect(pr.a), 0);
	expect_wc(pr.ascq, 2, VB_WC_WR_FLUSH_ERR);
	expect_wc(pr.ascq, 3, VB_WC_WR_FLUSH_ERR);
	memset(a.p, 0xee, 65536); /* the application has its buffer back */
	expect_wc(pr.prcq, 1, VB_WC_WR_FLUSH_ERR);
	buf_free(&a);
	buf_free(&p);
	pair_close(&pr);
	driven_free(&pr);
	swap_back(&sw);
}

/* Poll the responder's driven CQ until the initiator's has something to
 * read (the responder's answer), with no completion on either. */
static void answer(struct pair *pr)
{
	long long until = now_ms() + TMO_MS;
	struct vb_wc wc;

	while (!wait_fd(vb_cq_fd(pr->ascq), 1) && now_ms() < until)
		assert_int_equal(vb_poll_cq(pr->pscq, 1, &wc), 0);
	assert_true(wait_fd(vb_cq_fd(pr->ascq), 0));
}

/* A Read of 16 KiB or more is copied by its initiator, after the responder
 * checked the key and granted it: when the responder's key dies after the
 * grant (its application deregistered the memory and changed it), or the
 * responder's QP flushes, the initiator's copy does not count and the Read
 * fails; otherwise it lands. Both sides' CQs are driven, so each side reads
 * its socket only when the case polls it. */
void cross_memory_reads(void **state)
{
	const unsigned rr = VB_ACCESS_LOCAL_WRITE | VB_ACCESS_REMOTE_READ;
	struct pair pr = {0};
	struct buf a, p;
	struct swap sw;

	(void)state;
	swap_in(&sw, "1");
	driven_res(&pr, true);
	pair_open(&pr);
	buf_new(&a, pr.apd, 1 << 18, VB_ACCESS_LOCAL_WRITE, 27);
	buf_new(&p, pr.ppd, 1 << 18, rr, 28);
	/* granted and copied: two segments */
	struct vb_sge s[2] = {sge_of(&a, 1000, 30000), sge_of(&a, 100000, 40000)};
	post_sges(pr.a, 1, VB_WR_RDMA_READ, s, 2, raddr(&p, 5), p.mr->rkey, VB_SEND_SIGNALED);
	answer(&pr);
	expect_wc(pr.ascq, 1, VB_WC_SUCCESS);
	assert_memory_equal(a.p + 1000, p.p + 5, 30000);
	assert_memory_equal(a.p + 100000, p.p + 5 + 30000, 40000);
	/* the key dies after the grant and the memory changes: no copy counts */
	post1(pr.a, 2, VB_WR_RDMA_READ, &a, 0, 65536, raddr(&p, 0), p.mr->rkey, VB_SEND_SIGNALED);
	answer(&pr);
	assert_int_equal(vb_dereg_mr(p.mr), 0);
	memset(p.p, 0xee, 65536);
	expect_wc(pr.ascq, 2, VB_WC_REM_ACCESS_ERR);
	assert_int_equal(vb_reg_mr(pr.ppd, p.p, p.len, rr, &p.mr), 0);
	buf_free(&a);
	buf_free(&p);
	pair_close(&pr);
	/* the responder flushes after the grant: no copy counts either */
	pair_open(&pr);
	buf_new(&a, pr.apd, 65536, VB_ACCESS_LOCAL_WRITE, 29);
	buf_new(&p, pr.ppd, 65536, rr, 30);
	post1(pr.a, 3, VB_WR_RDMA_READ, &a, 0, 65536, raddr(&p, 0), p.mr->rkey, VB_SEND_SIGNALED);
	answer(&pr);
	assert_int_equal(vb_disconnect(pr.p), 0);
	memset(p.p, 0xee, 65536);
	expect_wc(pr.ascq, 3, VB_WC_REM_ACCESS_ERR);
	buf_free(&a);
	buf_free(&p);
	pair_close(&pr);
	driven_free(&pr);
	swap_back(&sw);
}
