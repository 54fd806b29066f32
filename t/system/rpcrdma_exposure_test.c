/*
 * rpcrdma_exposure_test: Read-Read's exposures from the server against a raw
 * verbs peer: what a window shows, what the server does when a client holds
 * its bound or the memory windows every client shares, and when a reply
 * cannot go out at all.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bulkprog.h"
#include "common/base/log.h"
#include "rpcrdma_raw_calls.h"
#include "rpcrdma_test_util.h"

#define CREDITS RAW_CREDITS
/* Where the k-th call posted without waiting is built: MSG + k * RAW_BUF in
 * the raw peer's data area; and where such calls' Write chunks point. */
#define MSG   ((size_t)2 << 20)
#define WDATA ((size_t)1 << 20)

/* While set, the soft provider refuses to bind a window (this program is
 * linked with -Wl,--wrap=soft_bind_mw), to unbind one (len 0), to allocate
 * one (-Wl,--wrap=soft_alloc_mw). */
static int bind_fails, unbind_fails, alloc_fails;
static int allocs; /* windows allocated */

int __real_soft_bind_mw(struct vb_conn *conn, struct vb_mw *m, struct vb_mr *mr, void *addr,
			size_t len, unsigned access, uint64_t wr_id, int signaled);
int __wrap_soft_bind_mw(struct vb_conn *conn, struct vb_mw *m, struct vb_mr *mr, void *addr,
			size_t len, unsigned access, uint64_t wr_id, int signaled);
int __wrap_soft_bind_mw(struct vb_conn *conn, struct vb_mw *m, struct vb_mr *mr, void *addr,
			size_t len, unsigned access, uint64_t wr_id, int signaled)
{
	if (__atomic_load_n(len ? &bind_fails : &unbind_fails, __ATOMIC_RELAXED))
		return -EIO;
	return __real_soft_bind_mw(conn, m, mr, addr, len, access, wr_id, signaled);
}

int __real_soft_alloc_mw(struct vb_pd *pd, struct vb_mw **out);
int __wrap_soft_alloc_mw(struct vb_pd *pd, struct vb_mw **out);
int __wrap_soft_alloc_mw(struct vb_pd *pd, struct vb_mw **out)
{
	if (__atomic_load_n(&alloc_fails, __ATOMIC_RELAXED))
		return -ENOMEM;
	__atomic_add_fetch(&allocs, 1, __ATOMIC_RELAXED);
	return __real_soft_alloc_mw(pd, out);
}

/* Parameters of a server of modes with fastreg and pool memory windows,
 * windows of them per connection at most (0: the default), whose Read-Read
 * exposures end only by RDMA_DONE here (30 s deadline). */
static void fastreg_params(struct rr_params *p, unsigned modes, unsigned pool, unsigned windows)
{
	rrt_params(p, modes, RR_REG_FASTREG);
	p->credits = CREDITS;
	p->fastreg_pool = pool;
	p->windows_max = windows;
	p->done_deadline_ms = 30000;
}

/* Start that server. */
static void start_fastreg_modes(struct rrt_server *t, unsigned modes, unsigned pool,
				unsigned windows)
{
	struct rr_params p;

	bind_fails = unbind_fails = alloc_fails = 0; /* (a failed case may leave them) */
	fastreg_params(&p, modes, pool, windows);
	assert_int_equal(rrt_server_start_p(t, &p, 0), 0);
}

/* The same, Read-Read only. */
static void start_fastreg(struct rrt_server *t, unsigned pool)
{
	start_fastreg_modes(t, RR_MODE_READ_READ, pool, 0);
}

/* Post RDMA_DONE for xid, built at r->data + at, without waiting for its
 * Send to complete (the server may close the connection, or the client may
 * receive nothing for now). */
static void post_done(struct raw *r, uint32_t xid, size_t at)
{
	raw_post(r, at, raw_build_done(xid, r->data + at));
}

/* Take the reply to xid, which exposes nreads segments; its header's
 * decoding. */
static struct rpcrdma_hdr *expect_exposed(struct raw *r, uint32_t xid, uint32_t nreads)
{
	struct rpcrdma_hdr *rh = raw_reply(r, xid);

	assert_int_equal(rh->nreads, nreads);
	return rh;
}

/* rh, a reply to a GET of 64 KiB that raw_send_get sent: its data is
 * exposed, and reads back right. Frees rh. */
static void expect_get_data(struct raw *r, struct rpcrdma_hdr *rh)
{
	char *want = malloc(65536);

	assert_int_equal(rh->nreads, 1);
	assert_true(raw_read(r, &rh->reads[0].seg));
	bulk_fill(want, 65536, 9);
	assert_memory_equal(r->data, want, 65536);
	free(want);
	free(rh);
}

/* Take the reply of a GET of 64 KiB that raw_send_get sent as xid. */
static void expect_get_reply(struct raw *r, uint32_t xid)
{
	expect_get_data(r, raw_reply(r, xid));
}

/* Read-Read with fastreg: the window of an exposed reply shows the reply's
 * bytes, not the rest of the registered block they lie in (64 KiB for these
 * 40000), which may hold what an earlier call of any client left there: an
 * RDMA Read past the segment is refused. */
static void exposure_bounded(void **state)
{
	struct rrt_server t;
	struct rr_params p;
	struct rpcrdma_hdr *rh = calloc(1, sizeof(*rh));
	struct rpcrdma_seg seg;
	struct raw r;

	rrt_params(&p, RR_MODE_READ_READ, RR_REG_FASTREG);
	p.credits = CREDITS;
	p.done_deadline_ms = 400;
	assert_int_equal(rrt_server_start_p(&t, &p, 0), 0);
	raw_open(&r, t.port);
	(void)raw_rr_get_len(&r, rh, 40000);
	seg = rh->reads[0].seg;
	assert_true(raw_read(&r, &seg));
	seg.length += 4096;
	assert_false(raw_read(&r, &seg));
	raw_close(&r);
	free(rh);
	rrt_server_stop(&t);
}

/* A Read-Read client that never sends RDMA_DONE holds its bound of exposed
 * bytes (here two 64 KiB replies); its further calls wait for room without a
 * worker each (they would hold all 8 until the done deadline, 30 s here), so
 * another client's calls are answered meanwhile; once the first client sends
 * its RDMA_DONEs, every waiting call of its is answered, each once. */
static void exposure_wait_holds_no_worker(void **state)
{
	enum { N = 12 };
	struct rrt_server t;
	struct rr_params p;
	struct rpc_clnt *other;
	struct raw r;
	uint8_t buf[RAW_BUF];
	uint32_t xids[N];
	unsigned answered = 0, replies = 0;

	rrt_params(&p, RR_MODE_READ_WRITE | RR_MODE_READ_READ, RR_REG_DYNAMIC);
	p.credits = CREDITS;
	p.done_deadline_ms = 30000;
	p.exposed_max = 131072;
	assert_int_equal(rrt_server_start_p(&t, &p, 0), 0);
	raw_open(&r, t.port);
	for (int i = 0; i < N; i++)
		xids[i] = raw_send_get(&r, 65536);
	assert_int_equal(rrt_client(&t, RR_MODE_READ_WRITE, RR_REG_FASTREG, 0, &other), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(rrt_put_within(other, (uint32_t)i, 4096, NULL, 5000), 0);
	rpc_clnt_destroy(other);
	while (answered < N) { /* each reply, then its RDMA_DONE */
		struct rpcrdma_hdr *rh = calloc(1, sizeof(*rh));
		size_t len = raw_recv(&r, buf, RAW_TMO);
		struct cur c;

		assert_true(len > 0);
		assert_true(++replies <= N);
		cur_init(&c, buf, len);
		assert_int_equal(rpcrdma_hdr_decode(&c, rh), 0);
		assert_int_equal(rh->nreads, 1);
		for (int i = 0; i < N; i++) /* each of ours, once */
			if (xids[i] == rh->xid) {
				xids[i] = 0;
				answered++;
			}
		raw_done(&r, rh->xid);
		free(rh);
	}
	raw_close(&r);
	rrt_server_stop(&t);
}

static struct rr_stats stats(struct rrt_server *t)
{
	struct rr_stats st;

	rr_server_get_stats(t->rr, &st);
	return st;
}

static uint64_t window_waits(struct rrt_server *t)
{
	return stats(t).window_waits;
}

static uint64_t exposure_waits(struct rrt_server *t)
{
	return stats(t).exposure_waits;
}

static uint64_t exposed_now(struct rrt_server *t)
{
	return stats(t).exposed_now;
}

static uint64_t exposed_expired(struct rrt_server *t)
{
	return stats(t).exposed_expired;
}

static void expect_window_waits(struct rrt_server *t, uint64_t n)
{
	assert_int_equal(window_waits(t), n);
}

/* Wait (up to RAW_TMO) until count (window_waits, exposure_waits,
 * exposed_now...) is n: the reply sent last is parked, say. */
static void await_count(struct rrt_server *t, uint64_t (*count)(struct rrt_server *), uint64_t n)
{
	for (int ms = 0; count(t) != n && ms < RAW_TMO; ms += 10)
		usleep(10000);
	assert_int_equal(count(t), n);
}

/* The memory windows are the server's, shared by every connection (2 here):
 * a reply that finds none free waits for one, parked on its connection, and
 * is answered once an RDMA_DONE gives one back; it was dropped, and then
 * closed its connection. */
static void window_waited_for(void **state)
{
	struct rrt_server t;
	struct raw r;
	uint8_t buf[RAW_BUF];
	uint32_t x1, x2, x3;

	start_fastreg(&t, 2);
	raw_open(&r, t.port);
	x1 = raw_send_get(&r, 65536);
	expect_get_reply(&r, x1);
	x2 = raw_send_get(&r, 65536);
	expect_get_reply(&r, x2);
	x3 = raw_send_get(&r, 65536); /* no window for it */
	assert_int_equal(raw_recv(&r, buf, 300), 0);
	assert_int_equal(raw_null(&r, BULKPROG), 0); /* (no window needed) */
	raw_done(&r, x1);
	expect_get_reply(&r, x3);
	raw_done(&r, x2);
	raw_done(&r, x3);
	assert_int_equal(raw_null(&r, BULKPROG), 0);
	assert_false(r.broken);
	expect_window_waits(&t, 1);
	raw_close(&r);
	rrt_server_stop(&t);
}

/* A window that another connection gives back answers a reply parked for
 * one: any connection's exposure end wakes the waiters of all (the 30 s
 * deadline is not what frees it). */
static void window_freed_by_another_connection(void **state)
{
	struct rrt_server t;
	struct raw a, b;
	uint8_t buf[RAW_BUF];
	uint32_t x1, x2, x3;

	start_fastreg(&t, 2);
	raw_open(&a, t.port);
	raw_open(&b, t.port);
	x1 = raw_send_get(&a, 65536);
	expect_get_reply(&a, x1);
	x2 = raw_send_get(&a, 65536);
	expect_get_reply(&a, x2);
	x3 = raw_send_get(&b, 65536);
	assert_int_equal(raw_recv(&b, buf, 300), 0);
	raw_done(&a, x2);
	expect_get_reply(&b, x3);
	raw_done(&b, x3);
	raw_done(&a, x1);
	assert_int_equal(raw_null(&a, BULKPROG), 0);
	assert_int_equal(raw_null(&b, BULKPROG), 0);
	expect_window_waits(&t, 1);
	raw_close(&b);
	raw_close(&a);
	rrt_server_stop(&t);
}

/* One client holds no more memory windows than windows_max (explicit, or a
 * quarter of the pool), however many replies it leaves without RDMA_DONE: its
 * next reply waits parked on its connection (exposure_waits) until one comes,
 * and another client's reply finds a window at once. (Such a client could
 * hold the whole pool until its deadline, 30 s here.) */
static void windows_bounded_per_connection(unsigned pool, unsigned windows, unsigned held)
{
	struct rrt_server t;
	struct raw a, b;
	uint8_t buf[RAW_BUF];
	uint32_t xa[RAW_CREDITS], xb, left = 0;
	int answered[RAW_CREDITS] = {0};

	start_fastreg_modes(&t, RR_MODE_READ_READ, pool, windows);
	raw_open(&a, t.port);
	raw_open(&b, t.port);
	for (unsigned i = 0; i <= held; i++)
		xa[i] = raw_send_get(&a, 65536);
	for (unsigned k = 0; k < held; k++) { /* in any order: workers run them */
		struct rpcrdma_hdr *rh = raw_reply_any(&a);
		unsigned i = 0;

		while (i <= held && (xa[i] != rh->xid || answered[i]))
			i++;
		assert_true(i <= held); /* one of ours, answered once */
		answered[i] = 1;
		expect_get_data(&a, rh);
	}
	for (unsigned i = 0; i <= held; i++)
		if (!answered[i])
			left = xa[i];
	await_count(&t, exposure_waits, 1); /* it waits */
	assert_int_equal(raw_recv(&a, buf, 100), 0);
	xb = raw_send_get(&b, 65536);
	expect_get_reply(&b, xb);
	raw_done(&b, xb);
	for (unsigned i = 0; i <= held; i++) {
		if (!answered[i])
			continue;
		raw_done(&a, xa[i]);
		if (left) { /* the first RDMA_DONE makes room for it */
			expect_get_reply(&a, left);
			raw_done(&a, left);
			left = 0;
		}
	}
	assert_int_equal(raw_null(&a, BULKPROG), 0);
	assert_false(a.broken);
	expect_window_waits(&t, 0);
	raw_close(&b);
	raw_close(&a);
	rrt_server_stop(&t);
}

static void windows_max_per_connection(void **state)
{
	windows_bounded_per_connection(24, 8, 8);
}

static void windows_max_defaults_to_a_quarter(void **state)
{
	windows_bounded_per_connection(24, 0, 6);
}

/* Memory windows go to the replies waiting for them in turn, whatever their
 * connection: a reply that needs two (a long reply with DDP data) waits for
 * them while one is held, and a reply that needs only one, which comes after
 * it, waits behind it rather than take the one free (it did, so a stream of
 * small replies could keep the big one waiting for ever). */
static void windows_taken_in_turn(void **state)
{
	struct rrt_server t;
	struct raw a, b, c;
	uint8_t buf[RAW_BUF];
	uint32_t xa, xb, xc;

	start_fastreg(&t, 2);
	raw_open(&a, t.port);
	raw_open(&b, t.port);
	raw_open(&c, t.port);
	xa = raw_send_get(&a, 65536);
	expect_get_reply(&a, xa);
	xb = raw_send_padget(&b, 65536, 4096); /* two windows */
	await_count(&t, window_waits, 1);
	xc = raw_send_get(&c, 65536); /* one, after b's */
	await_count(&t, window_waits, 2);
	assert_int_equal(raw_recv(&b, buf, 100), 0);
	assert_int_equal(raw_recv(&c, buf, 100), 0);
	raw_done(&a, xa);
	free(expect_exposed(&b, xb, 2));
	assert_int_equal(raw_recv(&c, buf, 300), 0);
	raw_done(&b, xb);
	expect_get_reply(&c, xc);
	raw_done(&c, xc);
	raw_close(&c);
	raw_close(&b);
	raw_close(&a);
	rrt_server_stop(&t);
}

/* A window lost (its invalidation cannot be posted, which closes that
 * connection, and no window can be made in its place) makes the pool smaller:
 * a reply that needs more windows than are left is answered ERR_CHUNK,
 * whether it waited for them (b's) or comes after (a's, on a new connection);
 * the one window left still serves. Such a reply waited for ever, and held
 * its connection's later replies. */
static void lost_window_shrinks_pool(void **state)
{
	struct rrt_server t;
	struct raw a, b;
	uint32_t xa, xb;

	start_fastreg(&t, 2);
	raw_open(&a, t.port);
	raw_open(&b, t.port);
	xa = raw_send_get(&a, 65536);
	expect_get_reply(&a, xa);
	xb = raw_send_padget(&b, 65536, 4096);
	await_count(&t, window_waits, 1);
	__atomic_store_n(&unbind_fails, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&alloc_fails, 1, __ATOMIC_RELAXED);
	post_done(&a, xa, MSG); /* its window is lost, and its connection */
	raw_expect_error(&b, xb, RPCRDMA_ERR_CHUNK);
	__atomic_store_n(&unbind_fails, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&alloc_fails, 0, __ATOMIC_RELAXED);
	raw_close(&a);
	raw_open(&a, t.port);
	raw_expect_error(&a, raw_send_padget(&a, 65536, 4096), RPCRDMA_ERR_CHUNK);
	xa = raw_send_get(&a, 65536);
	expect_get_reply(&a, xa);
	raw_done(&a, xa);
	assert_int_equal(raw_null(&b, BULKPROG), 0);
	raw_close(&b);
	raw_close(&a);
	rrt_server_stop(&t);
}

/* Wait (up to RAW_TMO) until the server has built n replies: each was handed
 * to its connection's send queue (posted, or queued for slots). */
static void await_replies(struct rrt_server *t, uint64_t n)
{
	struct rr_stats st;

	for (int ms = 0; ms < RAW_TMO; ms += 5) {
		rr_server_get_stats(t->rr, &st);
		if (st.replies >= n)
			break;
		usleep(5000);
	}
	assert_int_equal(st.replies, n);
}

/* Post a call of BULKPROG's proc behind header h (freed), built at r->data +
 * msg; its xid. */
static uint32_t post_call(struct raw *r, struct rpcrdma_hdr *h, uint32_t proc, xdrproc_t xdr_args,
			  void *args, size_t msg)
{
	uint32_t xid = h->xid;

	raw_post(r, msg, raw_build_bulk(r, h, proc, xdr_args, args, r->data + msg));
	free(h);
	return xid;
}

/* Post a GET of nsegs KiB (no chunk: nsegs 0, Read-Read) whose data goes to a
 * Write chunk of nsegs 1 KiB segments at r->data + at; its xid. */
static uint32_t post_get(struct raw *r, uint32_t nsegs, size_t at, size_t msg)
{
	struct rpcrdma_hdr *h = raw_hdr(r, RPCRDMA_MSG);
	struct bulk_get_args a = {.seed = 9, .len = nsegs ? nsegs * 1024 : 65536};

	h->nwrites = nsegs ? 1 : 0;
	h->writes[0].nsegs = nsegs;
	for (uint32_t i = 0; i < nsegs; i++)
		h->writes[0].segs[i] = (struct rpcrdma_seg){
			r->data_mr->rkey, 1024, (uintptr_t)r->data + at + (size_t)i * 1024};
	return post_call(r, h, BULK_GET, (xdrproc_t)xdr_bulk_get_args, &a, msg);
}

/* Make the client stall the server's send queue: posted one at a time, NULL
 * calls whose replies take every Receive of r, then one whose reply's Send
 * waits for a Receive (RNR, for 60 s: VB_SOFT_RNR_TIMEOUT_MS); the server had
 * built before replies, and k calls were built; its xid. */
static uint32_t stall_send_queue(struct rrt_server *t, struct raw *r, uint64_t before, unsigned *k)
{
	uint32_t xid = 0;

	for (int i = 0; i <= RAW_NRECV; i++) {
		xid = post_call(r, raw_hdr(r, RPCRDMA_MSG), BULK_NULL, (xdrproc_t)xdr_void, NULL,
				MSG + (*k)++ * RAW_BUF);
		await_replies(t, before + (unsigned)i + 1);
	}
	return xid;
}

/* Receive again: take the RAW_NRECV replies that stalled the send queue. */
static void unstall(struct raw *r)
{
	uint8_t buf[RAW_BUF];

	for (int i = 0; i < RAW_NRECV; i++)
		assert_true(raw_recv(r, buf, RAW_TMO) > 0);
}

/* A window is bound by a work request on the reply's connection, outside the
 * transport's count of its send queue: the queue has room for them besides.
 * Here the client posts no Receive for a while (RNR), so the server's send
 * queue fills with its replies (sq_depth 320: one stalled Send, then Write
 * chunk replies of 65 and 59 work requests); a Read-Read reply then still
 * binds its window, and everything is delivered once the client receives
 * again. The bind failed for want of a slot and closed the connection. */
static void window_bind_has_room_in_a_full_send_queue(void **state)
{
	struct rrt_server t;
	struct raw r;
	uint32_t xids[7];
	char *want = malloc(65536);
	struct rpcrdma_hdr *rh;
	unsigned k = 0, n = 0;

	setenv("VB_SOFT_RNR_TIMEOUT_MS", "60000", 1); /* the stall is the test's */
	start_fastreg_modes(&t, RR_MODE_READ_WRITE | RR_MODE_READ_READ, 4, 0);
	raw_open(&r, t.port);
	xids[n++] = stall_send_queue(&t, &r, 0, &k); /* 1 slot; 4 x 65 and 59 fill it */
	for (uint32_t i = 0; i < 5; i++) {
		xids[n++] = post_get(&r, i < 4 ? 64 : 58, WDATA + i * 65536, MSG + k++ * RAW_BUF);
		await_replies(&t, k);
	}
	xids[n++] = post_get(&r, 0, 0, MSG + k++ * RAW_BUF); /* Read-Read: binds a window */
	await_replies(&t, k);
	unstall(&r);
	free(raw_reply(&r, xids[0]));
	for (unsigned i = 1; i < 6; i++) {
		uint32_t len = i < 5 ? 65536 : 58 * 1024;

		rh = raw_reply(&r, xids[i]);
		assert_int_equal(rh->proc, RPCRDMA_MSG);
		assert_int_equal(rh->writes[0].segs[0].length, 1024);
		bulk_fill(want, len, 9);
		assert_memory_equal(r.data + WDATA + (i - 1) * 65536, want, len);
		free(rh);
	}
	expect_get_reply(&r, xids[6]);
	raw_done(&r, xids[6]);
	assert_int_equal(raw_null(&r, BULKPROG), 0);
	raw_close(&r);
	rrt_server_stop(&t);
	free(want);
}

/* A window counts against its connection's bound (windows_max) until its
 * invalidation has completed, not only until it is posted: one may wait
 * behind a Send that the client does not receive (RNR), and the windows the
 * client gave back were not in the pool yet. Here windows_max is 5 of a pool
 * of 24: five Read-Read replies are received, then the send queue stalls;
 * their RDMA_DONEs end them (five invalidations, queued behind the stall);
 * six more Read-Read GETs all wait parked, binding nothing, while another
 * connection is served from the pool at once; everything is delivered once
 * the client receives again. (Five of the six were bound at once: the
 * connection had ten windows out of the pool.) */
static void windows_count_until_invalidated(void **state)
{
	struct rrt_server t;
	struct raw r, other;
	uint32_t xids[11], stalled;
	int answered[11] = {0};
	unsigned k = 0;

	setenv("VB_SOFT_RNR_TIMEOUT_MS", "60000", 1); /* the stall is the test's */
	start_fastreg_modes(&t, RR_MODE_READ_READ, 24, 5);
	raw_open(&r, t.port);
	for (unsigned i = 0; i < 5; i++)
		xids[i] = post_get(&r, 0, 0, MSG + k++ * RAW_BUF);
	for (unsigned i = 0; i < 5; i++)
		free(raw_reply_any(&r));
	stalled = stall_send_queue(&t, &r, 5, &k);
	for (unsigned i = 0; i < 5; i++)
		post_done(&r, xids[i], MSG + k++ * RAW_BUF);
	await_count(&t, exposed_now, 0); /* ended: invalidations posted */
	for (unsigned i = 5; i < 11; i++)
		xids[i] = post_get(&r, 0, 0, MSG + k++ * RAW_BUF);
	await_count(&t, exposure_waits, 6); /* all six parked */
	assert_int_equal(stats(&t).binds, 5);
	raw_open(&other, t.port);
	xids[0] = raw_send_get(&other, 65536);
	expect_get_reply(&other, xids[0]);
	raw_done(&other, xids[0]);
	raw_close(&other);
	unstall(&r);
	free(raw_reply(&r, stalled));
	for (unsigned n = 0; n < 6; n++) {
		struct rpcrdma_hdr *rh = raw_reply_any(&r);
		unsigned i = 5;

		while (i < 11 && (xids[i] != rh->xid || answered[i]))
			i++;
		assert_true(i < 11);
		answered[i] = 1;
		expect_get_data(&r, rh);
		raw_done(&r, xids[i]); /* (the first makes room for the last parked one) */
	}
	assert_int_equal(raw_null(&r, BULKPROG), 0);
	assert_false(r.broken);
	raw_close(&r);
	rrt_server_stop(&t);
}

/* An exposure ends no earlier than its reply's Send has completed, on its
 * deadline as on RDMA_DONE: its windows are neither invalidated behind the
 * stalled Send nor given to another reply meanwhile. Here the send queue stalls (RNR)
 * before five Read-Read replies; a sixth waits parked; their deadline (200
 * ms) passes, and the sixth still waits, bound to nothing, until the client
 * receives again. (They ended at their deadline: five invalidations went
 * behind the stall, and their windows to the parked reply.) */
static void exposure_outlives_its_send(void **state)
{
	struct rrt_server t;
	struct rr_params p;
	struct raw r;
	uint32_t stalled;
	unsigned k = 0;

	setenv("VB_SOFT_RNR_TIMEOUT_MS", "60000", 1); /* the stall is the test's */
	fastreg_params(&p, RR_MODE_READ_READ, 24, 5);
	p.done_deadline_ms = 200;
	assert_int_equal(rrt_server_start_p(&t, &p, 0), 0);
	raw_open(&r, t.port);
	stalled = stall_send_queue(&t, &r, 0, &k);
	for (unsigned i = 0; i < 6; i++)
		(void)post_get(&r, 0, 0, MSG + k++ * RAW_BUF);
	await_count(&t, exposure_waits, 1);  /* five bound, the sixth parked */
	await_count(&t, exposed_expired, 5); /* past their deadline */
	usleep(100000);
	assert_int_equal(stats(&t).binds, 5); /* the sixth still waits */
	unstall(&r);
	free(raw_reply(&r, stalled));
	for (unsigned n = 0; n < 6; n++)
		free(raw_reply_any(&r)); /* the sixth once the others are over */
	assert_int_equal(stats(&t).binds, 6);
	assert_int_equal(raw_null(&r, BULKPROG), 0);
	assert_false(r.broken);
	raw_close(&r);
	rrt_server_stop(&t);
}

/* A reply that cannot go out (here the provider refuses to bind its window)
 * closes the connection, as the Linux server does, so that the client
 * reconnects and sends the call again at once; it was dropped, and the
 * client waited for its call's timeout. The server serves the next one. */
static void unsendable_reply_closes(void **state)
{
	struct rrt_server t;
	struct raw r;
	uint8_t buf[RAW_BUF];

	start_fastreg(&t, 4);
	raw_open(&r, t.port);
	assert_int_equal(raw_null(&r, BULKPROG), 0);
	__atomic_store_n(&bind_fails, 1, __ATOMIC_RELAXED);
	(void)raw_send_get(&r, 65536);
	assert_int_equal(raw_recv(&r, buf, RAW_TMO), 0);
	__atomic_store_n(&bind_fails, 0, __ATOMIC_RELAXED);
	assert_true(r.broken);
	raw_close(&r);
	raw_open(&r, t.port);
	expect_get_reply(&r, raw_send_get(&r, 65536));
	raw_close(&r);
	rrt_server_stop(&t);
}

/* A window's invalidation is a work request of its connection like any
 * other: if the connection dies before it runs, it is flushed, and the device
 * may still hold the window bound. Such a window is replaced, not given to the
 * next bind as it is; it went back to the pool when the invalidation was
 * posted. Here the invalidation waits behind Write chunk data that the
 * client, receiving nothing, leaves in the socket (no cross-memory copy:
 * VB_SOFT_CMA=0). The pool's one window then serves the next client. */
static void flushed_invalidation_replaces_window(void **state)
{
	struct rrt_server t;
	struct raw r;
	struct rr_stats st;
	uint32_t xid;
	unsigned k = 1;
	int before;

	setenv("VB_SOFT_RNR_TIMEOUT_MS", "60000", 1);
	setenv("VB_SOFT_CMA", "0", 1);
	setenv("VB_SOFT_SOCKBUF", "8192", 1);
	start_fastreg_modes(&t, RR_MODE_READ_WRITE | RR_MODE_READ_READ, 1, 0);
	raw_open(&r, t.port);
	xid = raw_send_get(&r, 65536);
	expect_get_reply(&r, xid);
	(void)stall_send_queue(&t, &r, 1, &k);
	for (uint32_t i = 0; i < 6; i++) { /* more than the socket holds */
		(void)post_get(&r, 64, WDATA + i * 65536, MSG + k++ * RAW_BUF);
		await_replies(&t, k);
	}
	before = __atomic_load_n(&allocs, __ATOMIC_RELAXED);
	post_done(&r, xid, MSG + k * RAW_BUF);
	for (int ms = 0; ms < RAW_TMO; ms += 5) { /* the exposure ends */
		rr_server_get_stats(t.rr, &st);
		if (st.exposed_now == 0)
			break;
		usleep(5000);
	}
	assert_int_equal(st.exposed_now, 0);
	raw_close(&r);
	for (int ms = 0; ms < RAW_TMO && __atomic_load_n(&allocs, __ATOMIC_RELAXED) == before;
	     ms += 5)
		usleep(5000);
	assert_int_equal(__atomic_load_n(&allocs, __ATOMIC_RELAXED), before + 1);
	raw_open(&r, t.port);
	xid = raw_send_get(&r, 65536);
	expect_get_reply(&r, xid);
	raw_done(&r, xid);
	raw_close(&r);
	rrt_server_stop(&t);
}

/* A connection's send queue has room for the binds and invalidations of
 * the windows it may hold (windows_max), not of the whole pool: a pool of
 * 8192 (16384 entries, as many as the soft device allows) serves, with the
 * default bound (2048) or 4096; a bound whose entries would not fit beside
 * the transport's own is refused at start, not at the first busy
 * connection. */
static void pool_larger_than_the_send_queue(void **state)
{
	struct rrt_server t;
	struct rr_params p;
	struct raw r;
	uint32_t xid;

	fastreg_params(&p, RR_MODE_READ_READ, 8192, 8192);
	assert_int_not_equal(rrt_server_start_p(&t, &p, 0), 0);
	rrt_server_stop(&t);
	for (unsigned windows = 0; windows <= 4096; windows += 4096) {
		p.windows_max = windows;
		assert_int_equal(rrt_server_start_p(&t, &p, 0), 0);
		raw_open(&r, t.port);
		xid = raw_send_get(&r, 65536);
		expect_get_data(&r, raw_reply(&r, xid));
		raw_done(&r, xid);
		assert_int_equal(raw_null(&r, BULKPROG), 0);
		raw_close(&r);
		rrt_server_stop(&t);
	}
}

/* Teardown of the cases that set the soft provider's variables (run even when
 * one fails, so that the next case starts without them). */
static int soft_env_clear(void **state)
{
	(void)state;
	unsetenv("VB_SOFT_CMA");
	unsetenv("VB_SOFT_SOCKBUF");
	unsetenv("VB_SOFT_RNR_TIMEOUT_MS");
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exposure_bounded),
		cmocka_unit_test(exposure_wait_holds_no_worker),
		cmocka_unit_test(window_waited_for),
		cmocka_unit_test(window_freed_by_another_connection),
		cmocka_unit_test(windows_taken_in_turn),
		cmocka_unit_test(windows_max_per_connection),
		cmocka_unit_test(windows_max_defaults_to_a_quarter),
		cmocka_unit_test(lost_window_shrinks_pool),
		cmocka_unit_test(unsendable_reply_closes),
		cmocka_unit_test_teardown(window_bind_has_room_in_a_full_send_queue,
					  soft_env_clear),
		cmocka_unit_test_teardown(flushed_invalidation_replaces_window, soft_env_clear),
		cmocka_unit_test_teardown(windows_count_until_invalidated, soft_env_clear),
		cmocka_unit_test_teardown(exposure_outlives_its_send, soft_env_clear),
		cmocka_unit_test(pool_larger_than_the_send_queue),
	};

	log_set_level(getenv("RRT_DEBUG") ? LOG_LVL_DEBUG : LOG_LVL_ERR);
	return cmocka_run_group_tests_name("rpcrdma_exposure", tests, NULL, NULL);
}
