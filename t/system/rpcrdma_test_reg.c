/*
 * rpcrdma_test_reg.c: rpcrdma_test's cases of the registration strategies:
 * the cache's watermarks through a server and its chunks through the layer
 * itself, allphys only for trusted peers, fastreg's window per exposure.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/rpcrdma/rpcrdma.h"
#include "common/rpcrdma/rpcrdma_reg.h"
#include "rpcrdma_raw.h"
#include "rpcrdma_test_util.h"

/* The cache reuses registrations (hits), and trims idle ones to its low
 * watermark once over its high one. */
void cache_watermarks(void **state)
{
	struct rrt_server t;
	struct rpc_clnt *c;
	struct rr_params p;
	struct rr_stats st;

	rrt_params(&p, RR_MODE_READ_WRITE, RR_REG_CACHE);
	p.cache_budget = 1u << 20;
	p.cache_high = 80;
	p.cache_low = 50;
	assert_int_equal(rrt_server_start_p(&t, &p, 0), 0);
	assert_int_equal(rrt_client(&t, RR_MODE_READ_WRITE, RR_REG_ZEROCOPY, 0, &c), 0);
	for (int i = 0; i < 8; i++) { /* the same size again and again: hits */
		assert_int_equal(rrt_get(c, 1, 256 << 10), 0);
		usleep(20000); /* the previous reply's buffers are back */
	}
	rr_server_get_stats(t.rr, &st);
	assert_true(st.cache_hits >= 7);
	for (size_t sz = 8192; sz <= (1u << 20); sz *= 2) { /* every class up to max_io */
		assert_int_equal(rrt_get(c, 2, sz), 0);
		assert_int_equal(rrt_put(c, 2, sz), 0);
		rr_server_get_stats(t.rr, &st);
		assert_true(st.cached_now <= (uint64_t)p.cache_budget / 100 * p.cache_high);
	}
	assert_true(st.cache_misses > 0);
	assert_true(st.deregs > 0); /* something was trimmed */
	rpc_clnt_destroy(c);
	rrt_server_stop(&t);
}

#define KIB(n) ((size_t)(n) << 10)
#define MIB(n) ((size_t)(n) << 20)

/* Local buffers of 64 KiB to 1 MiB are pieces of 2 MiB chunks registered
 * once; exposed ones and small ones have registrations of their own; a
 * chunk is trimmed only whole, once every piece of it is idle. */
void cache_chunks(void **state)
{
	struct vb_device *dev;
	struct vb_pd *pd;
	struct rr_reg_ctx *r;
	struct rr_params p;
	struct rr_stats st = {0};
	struct rr_buf *a[4], *b, *x[2], *s;

	rrt_params(&p, RR_MODE_READ_WRITE, RR_REG_CACHE);
	p.cache_budget = MIB(8); /* high 4 MiB, low 2 MiB */
	p.cache_high = 50;
	p.cache_low = 25;
	assert_int_equal(vb_open("soft", &dev), 0);
	assert_int_equal(vb_alloc_pd(dev, &pd), 0);
	assert_int_equal(rr_reg_create(pd, &p, VB_ACCESS_REMOTE_READ, &st, &r), 0);

	/* four pieces of 512 KiB: one chunk, one registration, one key */
	for (int i = 0; i < 4; i++) {
		assert_int_equal(rr_buf_get(r, KIB(512), 0, &a[i]), 0);
		assert_int_equal(rr_buf_wait(r, a[i]), 0);
		assert_int_equal(a[i]->lkey, a[0]->lkey);
		assert_true((uintptr_t)a[i]->addr / MIB(2) == (uintptr_t)a[0]->addr / MIB(2));
	}
	assert_true(a[0]->lkey != 0);
	assert_int_equal(st.regs, 1);
	assert_int_equal(st.registered_now, MIB(2));
	assert_int_equal(st.cached_now, 0);
	/* a fifth: a second chunk, registered in the background; its other
	 * pieces are cached at once */
	assert_int_equal(rr_buf_get(r, KIB(512), RR_GET_ASYNC, &b), 0);
	assert_int_equal(rr_buf_wait(r, b), 0);
	assert_true(b->lkey != 0 && b->lkey != a[0]->lkey);
	assert_int_equal(st.regs, 2);
	assert_int_equal(st.cached_now, KIB(1536));
	/* exposed and small buffers are not pieces */
	assert_int_equal(rr_buf_get(r, MIB(1), RR_GET_EXPOSE, &x[0]), 0);
	assert_int_equal(rr_buf_get(r, MIB(1), RR_GET_EXPOSE, &x[1]), 0);
	assert_int_equal(rr_buf_get(r, KIB(4), 0, &s), 0);
	assert_int_equal(st.regs, 5);
	assert_int_equal(st.registered_now, MIB(6) + KIB(4));

	/* everything back but b: 5.5 MiB idle, of which the second chunk's
	 * 1.5 MiB cannot go (b is in use) and does not count against the
	 * watermarks. At 4 MiB and 4 KiB that can go, over the high one, the
	 * trim takes the exposed buffers and the first chunk, down to the low */
	for (int i = 0; i < 4; i++)
		rr_buf_put(r, a[i]);
	rr_buf_put(r, s);
	rr_buf_put(r, x[0]);
	assert_int_equal(st.deregs, 0);
	rr_buf_put(r, x[1]);
	assert_int_equal(st.deregs, 3);
	assert_int_equal(st.registered_now, MIB(2) + KIB(4));
	assert_int_equal(st.cached_now, KIB(1536) + KIB(4));
	/* a piece of the second chunk comes from the cache: a hit, no registration */
	assert_int_equal(rr_buf_get(r, KIB(300), 0, &a[0]), 0);
	assert_int_equal(a[0]->lkey, b->lkey);
	assert_int_equal(st.regs, 5);
	rr_buf_put(r, a[0]);
	rr_buf_put(r, b);
	assert_int_equal(st.registered_now, st.cached_now);
	rr_reg_destroy(r);
	assert_int_equal(st.registered_now, 0);
	assert_int_equal(st.deregs, st.regs);
	assert_int_equal(vb_dealloc_pd(pd), 0);
	vb_close(dev);
}

/* allphys exposes everything with one key: only for trusted peers. */
void allphys_needs_trust(void **state)
{
	struct rpc_server_params sp = {.threads = 1};
	struct rpc_server *rpc;
	struct rr_server *rr;
	struct rr_params p;

	rrt_params(&p, RR_MODE_READ_READ, RR_REG_ALLPHYS);
	p.trusted_peers = 0;
	assert_int_equal(rpc_server_create(&sp, &rpc), 0);
	assert_int_equal(rr_server_create(rpc, &p, &rr), -EPERM);
	rpc_server_destroy(rpc);
}

/* A client whose keys are windows of one call each (fastreg) offers Remote
 * Invalidation; the server's reply to a call whose chunks name one key then
 * invalidates it, and the client does not invalidate it again. A client that
 * keeps its keys (cache) does not offer it, and no reply invalidates them. */
void remote_invalidation(void **state)
{
	struct rrt_server t;
	struct rpc_clnt *c;
	struct rr_stats s0, s, cs;

	(void)state;
	assert_int_equal(rrt_server_start(&t, RR_MODE_READ_WRITE, RR_REG_FASTREG, 0), 0);
	assert_int_equal(rrt_client(&t, RR_MODE_READ_WRITE, RR_REG_FASTREG, 0, &c), 0);
	rr_server_get_stats(t.rr, &s0);
	for (uint32_t i = 0; i < 5; i++) /* a Write chunk each */
		assert_int_equal(rrt_get(c, i, 100000), 0);
	for (uint32_t i = 0; i < 3; i++) /* a Read chunk each */
		assert_int_equal(rrt_put(c, i, 100000), 0);
	assert_int_equal(rrt_get(c, 9, 100), 0); /* inline both ways: no key */
	rr_server_get_stats(t.rr, &s);
	rr_clnt_get_stats(c, &cs);
	print_message("# fastreg client: server sent %llu invalidations, client bound %llu "
		      "windows, %llu invalidated by the server\n",
		      (unsigned long long)(s.remote_invs - s0.remote_invs),
		      (unsigned long long)cs.binds, (unsigned long long)cs.remote_invs);
	assert_int_equal(s.remote_invs - s0.remote_invs, 8);
	assert_int_equal(cs.remote_invs, 8);
	assert_int_equal(cs.binds, 8);
	assert_int_equal(cs.remote_regs_now, 0);
	/* the windows went back to the pool unbound: the next calls bind them again */
	for (uint32_t i = 0; i < 20; i++)
		assert_int_equal(rrt_get(c, 100 + i, 50000), 0);
	rr_clnt_get_stats(c, &cs);
	assert_int_equal(cs.remote_invs, 28);
	rpc_clnt_destroy(c);

	assert_int_equal(rrt_client(&t, RR_MODE_READ_WRITE, RR_REG_CACHE, 0, &c), 0);
	rr_server_get_stats(t.rr, &s0);
	for (uint32_t i = 0; i < 3; i++)
		assert_int_equal(rrt_get(c, i, 100000), 0);
	rr_server_get_stats(t.rr, &s);
	rr_clnt_get_stats(c, &cs);
	assert_int_equal(s.remote_invs - s0.remote_invs, 0);
	assert_int_equal(cs.remote_invs, 0);
	rpc_clnt_destroy(c);
	rrt_server_stop(&t);
}

/* The client's windows come back when their invalidations complete, which a
 * lone caller leaves to the loop: it stops watching the CQ at the end of its
 * call. With a pool of two and calls that need both (a Write and a Reply
 * chunk: a reply can end one key, RFC 8797, so the client invalidates them
 * itself), each call waits for the last one's; they came back only when
 * someone took the CQ again, so the next call waited out its timeout. */
void local_invalidations_give_windows_back(void **state)
{
	struct rrt_server t;
	struct rpc_clnt *c;
	struct rr_params p;
	struct rr_stats cs;

	(void)state;
	assert_int_equal(rrt_server_start(&t, RR_MODE_READ_WRITE, RR_REG_FASTREG, 0), 0);
	rrt_params(&p, RR_MODE_READ_WRITE, RR_REG_FASTREG);
	p.caller_polls = 1;
	p.fastreg_pool = 2;
	assert_int_equal(rrt_client_p(&t, &p, 0, &c), 0);
	for (uint32_t i = 0; i < 4; i++)
		assert_int_equal(rrt_get_hint(c, i, 65536, 16384), 0);
	rr_clnt_get_stats(c, &cs);
	assert_int_equal(cs.binds, 8);
	assert_int_equal(cs.remote_invs, 0);
	rpc_clnt_destroy(c);
	rrt_server_stop(&t);
}

/* A bulk argument the client cannot expose (larger than its whole arena)
 * fails the call with that reason (EMSGSIZE), not with the ENOSPC of a call
 * too long for its buffers, which the NFS client would report as a full
 * file system; smaller calls still go. */
void expose_failure_named(void **state)
{
	struct rrt_server t;
	struct rpc_clnt *c;
	struct rr_params p;

	assert_int_equal(rrt_server_start(&t, RR_MODE_READ_WRITE, RR_REG_DYNAMIC, 0), 0);
	rrt_params(&p, RR_MODE_READ_WRITE, RR_REG_FASTREG);
	p.max_io = KIB(64);
	p.arena_size = KIB(128);
	assert_int_equal(rrt_client_p(&t, &p, 0, &c), 0);
	assert_int_equal(rrt_put(c, 5, 200000), -EMSGSIZE);
	assert_int_equal(rrt_put(c, 5, 60000), 0);
	rpc_clnt_destroy(c);
	rrt_server_stop(&t);
}

struct putter {
	pthread_t t;
	struct rpc_clnt *c;
	int timeout_ms, rc;
};

static void *put_main(void *arg)
{
	struct putter *k = arg;

	k->rc = rrt_put_within(k->c, 6, 200000, NULL, k->timeout_ms);
	return NULL;
}

/* A call that waits for a memory window (fastreg with a pool of one) does
 * not hold up the end of the connection, which frees the window: its holder
 * is a call whose Send the server never acknowledges, so that the window
 * comes back only once that connection, failed at the holder's timeout, has
 * ended and flushed the Send. The waiting call then fails with ECONNRESET
 * (which the NFS client retries on a new connection) rather than with
 * EAGAIN once its wait ran out. */
void window_wait_outside_connection(void **state)
{
	struct putter a = {.timeout_ms = 1000}, b = {.timeout_ms = 8000};
	struct rrt_server t;
	struct rr_params p;
	struct rr_stats st;

	setenv("VB_SOFT_SILENT", "acks", 1);
	assert_int_equal(rrt_server_start(&t, RR_MODE_READ_WRITE, RR_REG_DYNAMIC, 0), 0);
	unsetenv("VB_SOFT_SILENT");
	rrt_params(&p, RR_MODE_READ_WRITE, RR_REG_FASTREG);
	p.fastreg_pool = 1;
	assert_int_equal(rrt_client_p(&t, &p, 0, &a.c), 0);
	b.c = a.c;
	assert_int_equal(pthread_create(&a.t, NULL, put_main, &a), 0);
	for (int i = 0; i < 200; i++) { /* a has the window */
		rr_clnt_get_stats(a.c, &st);
		if (st.binds > 0)
			break;
		usleep(5000);
	}
	assert_true(st.binds > 0);
	assert_int_equal(pthread_create(&b.t, NULL, put_main, &b), 0);
	pthread_join(a.t, NULL);
	pthread_join(b.t, NULL);
	assert_int_equal(b.rc, -ECONNRESET);
	rpc_clnt_destroy(a.c);
	rrt_server_stop(&t);
}

/* A window unexposed once its connection is gone (no connection to
 * invalidate it through) may still be bound: it is replaced, and tearing the
 * registration down leaves nothing of the protection domain (raw_close
 * checks). The raw peer's Send after the binding shows the binding took
 * effect: the send queue runs in order. (A flushed invalidation:
 * rpcrdma_exposure_test.) */
void flushed_unbind_released(void **state)
{
	const uint8_t junk[4] = {0};
	struct rrt_server t;
	struct rr_reg_ctx *r;
	struct rr_params p;
	struct rr_stats st = {0};
	struct rr_buf *b;
	struct raw w;

	assert_int_equal(rrt_server_start(&t, RR_MODE_READ_WRITE, RR_REG_DYNAMIC, 0), 0);
	raw_open(&w, t.port);
	rrt_params(&p, RR_MODE_READ_WRITE, RR_REG_FASTREG);
	p.fastreg_pool = 2;
	assert_int_equal(rr_reg_create(w.pd, &p, VB_ACCESS_REMOTE, &st, &r), 0);
	assert_int_equal(rr_buf_get(r, 4096, 0, &b), 0);
	assert_int_equal(rr_buf_expose(r, w.vc, b, b->addr, 4096, 0), 0);
	raw_send(&w, junk, sizeof(junk));
	vb_disconnect(w.vc);
	rr_buf_unexpose(r, NULL, b);
	rr_buf_put(r, b);
	rr_reg_destroy(r);
	raw_close(&w);
	rrt_server_stop(&t);
}

/* Take n buffers of len from the arena without waiting (all must come),
 * each filled with its own byte; check none overlapped; give them back. */
static void arena_round(struct rr_reg_ctx *r, size_t len, int n)
{
	struct rr_buf **b = calloc((size_t)n, sizeof(*b));
	struct rr_buf *more;

	for (int i = 0; i < n; i++) {
		assert_int_equal(rr_buf_get(r, len, RR_GET_NOWAIT, &b[i]), 0);
		assert_true(b[i]->len >= len);
		memset(b[i]->addr, i & 0xff, len);
	}
	assert_int_equal(rr_buf_get(r, len, RR_GET_NOWAIT, &more), -ENOMEM); /* all of it */
	for (int i = 0; i < n; i++) {
		const uint8_t *p = b[i]->addr;

		assert_int_equal(p[0], i & 0xff);
		assert_int_equal(p[len - 1], i & 0xff);
		rr_buf_put(r, b[i]);
	}
	free(b);
}

/* The arena serves any size with what other sizes gave back: all of it as
 * 64 KiB buffers, then as one 4 MiB and one 2 MiB (an arena of 6 MiB is cut
 * 4 + 2), then as 4 KiB ones, then as 2 MiB ones; each time every byte. */
void arena_sizes_share(void **state)
{
	struct vb_device *dev;
	struct vb_pd *pd;
	struct rr_reg_ctx *r;
	struct rr_params p;
	struct rr_stats st = {0};
	struct rr_buf *big, *b2;

	rrt_params(&p, RR_MODE_READ_WRITE, RR_REG_ALLPHYS);
	p.arena_size = MIB(6);
	assert_int_equal(vb_open("soft", &dev), 0);
	assert_int_equal(vb_alloc_pd(dev, &pd), 0);
	assert_int_equal(rr_reg_create(pd, &p, VB_ACCESS_REMOTE_READ, &st, &r), 0);
	for (int round = 0; round < 2; round++) {
		arena_round(r, KIB(64), 96);
		assert_int_equal(rr_buf_get(r, MIB(4), RR_GET_NOWAIT, &big), 0);
		assert_int_equal(rr_buf_get(r, MIB(2), RR_GET_NOWAIT, &b2), 0);
		rr_buf_put(r, big);
		rr_buf_put(r, b2);
		arena_round(r, KIB(4), 1536);
		arena_round(r, MIB(2), 3);
		arena_round(r, KIB(12), 384); /* 16 KiB blocks */
	}
	assert_int_equal(rr_buf_get(r, MIB(4), RR_GET_NOWAIT, &big), 0);
	assert_int_equal(rr_buf_get(r, MIB(4), RR_GET_NOWAIT, &b2), -ENOMEM); /* 4 + 2 */
	rr_buf_put(r, big);
	rr_reg_destroy(r);
	vb_dealloc_pd(pd);
	vb_close(dev);
}

/* fastreg binds a window with a fresh key for every exposure. */
void fastreg_binds_per_exposure(void **state)
{
	struct rrt_server t;
	struct rpc_clnt *c;
	struct rr_stats st0, st;

	assert_int_equal(rrt_server_start(&t, RR_MODE_READ_READ, RR_REG_FASTREG, 0), 0);
	assert_int_equal(rrt_client(&t, RR_MODE_READ_READ, RR_REG_ZEROCOPY, 0, &c), 0);
	rr_server_get_stats(t.rr, &st0);
	for (int i = 0; i < 5; i++)
		assert_int_equal(rrt_get(c, 3, 100000), 0);
	for (int i = 0; i < 100; i++) { /* the last RDMA_DONE may still be on its way */
		rr_server_get_stats(t.rr, &st);
		if (st.remote_regs_now == 0)
			break;
		usleep(10000);
	}
	assert_int_equal(st.binds - st0.binds, 5);
	assert_int_equal(st.remote_regs_now, 0); /* every window invalidated at RDMA_DONE */
	rpc_clnt_destroy(c);
	rrt_server_stop(&t);
}
