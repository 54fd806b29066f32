/*
 * verbs_conformance_access.c: remote access checked (unknown keys, out of
 * bounds, missing rights, another PD, deregistered memory), a Receive too
 * small, and memory windows (bound, rebound, unbound, invalidated by a Send).
 * An access refused puts the QP in error and flushes both sides.
 * Part of t/system/verbs_conformance (the helpers: verbs_conformance.c).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "common/verbs.h"
#include "verbs_conformance.h"

/* ---- remote access errors: QP to error, everything flushed on both sides ---- */

/* Post a Write with (rkey, addr) plus a Send behind it; expect want, a flush, and
 * the passive side's Receive flushed too. */
static void access_error_case(struct pair *pr, enum vb_wr_opcode op, uint64_t ra, uint32_t rkey,
			      uint32_t len, enum vb_wc_status want)
{
	struct buf loc, rb;

	buf_new(&loc, pr->apd, len, VB_ACCESS_LOCAL_WRITE, 15);
	buf_new(&rb, pr->ppd, 64, VB_ACCESS_LOCAL_WRITE, 16);
	post_recv1(pr->p, 900, &rb, 0, 64);
	post1(pr->a, 1, op, &loc, 0, len, ra, rkey, 0);
	post1(pr->a, 2, VB_WR_SEND, &loc, 0, 16, 0, 0, VB_SEND_SIGNALED);
	expect_wc(pr->ascq, 1, want); /* errors complete even unsignaled */
	expect_wc(pr->ascq, 2, VB_WC_WR_FLUSH_ERR);
	expect_wc(pr->prcq, 900, VB_WC_WR_FLUSH_ERR);
	/* the QP stays in error: new work is flushed */
	post1(pr->a, 3, VB_WR_SEND, &loc, 0, 16, 0, 0, VB_SEND_SIGNALED);
	expect_wc(pr->ascq, 3, VB_WC_WR_FLUSH_ERR);
	buf_free(&loc);
	buf_free(&rb);
}

/* One access that must fail, on a fresh pair, against a fresh 64 KiB passive MR. */
struct acase {
	unsigned access;
	enum vb_wr_opcode op;
	int64_t off;   /* from the MR's start ... */
	bool absolute; /* ... or this address */
	uint64_t addr;
	uint32_t len;
	int key; /* 0: the rkey, 1: the lkey, 2: a made-up key */
};

/* Run one access case that must fail REM_ACCESS_ERR and flush both sides. */
static void run_acase(const struct acase *c)
{
	struct pair pr = {0};
	struct buf dst;
	uint32_t key;
	uint64_t ra;
	bool same_keys;

	pair_open(&pr);
	buf_new(&dst, pr.ppd, 65536, c->access, 18);
	key = c->key == 1 ? dst.mr->lkey : c->key == 2 ? dst.mr->rkey ^ 0x5a5a1234u : dst.mr->rkey;
	ra = c->absolute ? c->addr : (uint64_t)((int64_t)raddr(&dst, 0) + c->off);
	same_keys = c->key == 1 && dst.mr->lkey == dst.mr->rkey;
	if (!same_keys)
		access_error_case(&pr, c->op, ra, key, c->len, VB_WC_REM_ACCESS_ERR);
	buf_free(&dst);
	pair_close(&pr);
	if (same_keys)
		skip_because("the provider gives an MR one key for both uses (rxe does)");
}

#define RW_ALL (VB_ACCESS_LOCAL_WRITE | VB_ACCESS_REMOTE)

/* A key nobody registered is refused. */
void bad_rkey(void **state)
{
	const struct acase cases[] = {
		{.access = RW_ALL, .op = VB_WR_RDMA_WRITE, .len = 4096, .key = 2},
		/* refused while its payload is still on the way */
		{.access = RW_ALL, .op = VB_WR_RDMA_WRITE, .len = 16 << 20, .key = 2},
		{.access = RW_ALL, .op = VB_WR_RDMA_READ, .len = 4096, .key = 2},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_acase(&cases[i]);
}

/* An lkey does not open remote access. */
void lkey_is_not_rkey(void **state)
{
	struct acase c = {.access = RW_ALL, .op = VB_WR_RDMA_READ, .len = 4096, .key = 1};

	run_acase(&c);
}

/* Accesses outside the MR are refused, overflowing ones included. */
void out_of_bounds(void **state)
{
	const struct acase cases[] = {
		/* one byte past the end */
		{.access = RW_ALL, .op = VB_WR_RDMA_WRITE, .off = 65536 - 100, .len = 101},
		/* offset + length wraps around 2^64: must not pass a naive sum check */
		{.access = RW_ALL,
		 .op = VB_WR_RDMA_READ,
		 .absolute = true,
		 .addr = UINT64_MAX - 10,
		 .len = 4096},
		/* one byte before the start */
		{.access = RW_ALL, .op = VB_WR_RDMA_READ, .off = -1, .len = 16},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_acase(&cases[i]);
}

/* Writes need REMOTE_WRITE, Reads need REMOTE_READ. */
void missing_access_right(void **state)
{
	const struct acase cases[] = {
		{.access = VB_ACCESS_REMOTE_READ, .op = VB_WR_RDMA_WRITE, .len = 4096},
		{.access = VB_ACCESS_LOCAL_WRITE | VB_ACCESS_REMOTE_WRITE,
		 .op = VB_WR_RDMA_READ,
		 .len = 4096},
		{.access = VB_ACCESS_LOCAL_WRITE, .op = VB_WR_RDMA_READ, .len = 4096},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_acase(&cases[i]);
}

/* A key of another PD than the QP's is refused. */
void wrong_pd(void **state)
{
	struct pair pr = {0};
	struct vb_pd *other;
	struct buf dst;

	pair_open(&pr);
	assert_int_equal(vb_alloc_pd(dev, &other), 0);
	buf_new(&dst, other, 65536, VB_ACCESS_LOCAL_WRITE | VB_ACCESS_REMOTE, 21);
	access_error_case(&pr, VB_WR_RDMA_WRITE, raddr(&dst, 0), dst.mr->rkey, 4096,
			  VB_WC_REM_ACCESS_ERR);
	buf_free(&dst);
	assert_int_equal(vb_dealloc_pd(other), 0);
	pair_close(&pr);
}

/* After deregistration the peer's old key fails at once. */
void dereg_while_peer_holds_key(void **state)
{
	struct pair pr = {0};
	struct buf src, dst;

	pair_open(&pr);
	buf_new(&src, pr.apd, 65536, 0, 22);
	buf_new(&dst, pr.ppd, 65536, VB_ACCESS_LOCAL_WRITE | VB_ACCESS_REMOTE, 23);
	post1(pr.a, 1, VB_WR_RDMA_WRITE, &src, 0, 65536, raddr(&dst, 0), dst.mr->rkey,
	      VB_SEND_SIGNALED);
	expect_wc(pr.ascq, 1, VB_WC_SUCCESS);
	uint32_t old = dst.mr->rkey;
	assert_int_equal(vb_dereg_mr(dst.mr), 0);
	dst.mr = NULL;
	post1(pr.a, 2, VB_WR_RDMA_WRITE, &src, 0, 4096, raddr(&dst, 0), old, VB_SEND_SIGNALED);
	expect_wc(pr.ascq, 2, VB_WC_REM_ACCESS_ERR);
	buf_free(&src);
	buf_free(&dst);
	pair_close(&pr);
}

/* Deregistration waits for an access under way: a Read being answered out of the
 * MR when it is deregistered never delivers what the owner writes there after.
 * A Read that the soft provider's initiator copies itself (a cross-memory copy,
 * granted before) fails instead, as it may on other devices. */
void dereg_waits_for_inflight(void **state)
{
	enum { BIG = 64 << 20 };
	struct pair pr = {0};
	struct buf src, dst, m, rm;
	struct vb_wc wc;

	pair_open(&pr);
	buf_new(&src, pr.ppd, BIG, VB_ACCESS_REMOTE_READ, 62);
	buf_new(&dst, pr.apd, BIG, VB_ACCESS_LOCAL_WRITE, 63);
	buf_new(&m, pr.apd, 64, 0, 64);
	buf_new(&rm, pr.ppd, 64, VB_ACCESS_LOCAL_WRITE, 65);
	uint8_t *expect = malloc(BIG);
	assert_non_null(expect);
	memcpy(expect, src.p, BIG);
	post_recv1(pr.p, 1, &rm, 0, 64);
	post1(pr.a, 2, VB_WR_RDMA_READ, &dst, 0, BIG, raddr(&src, 0), src.mr->rkey,
	      VB_SEND_SIGNALED);
	post1(pr.a, 3, VB_WR_SEND, &m, 0, 64, 0, 0, VB_SEND_SIGNALED);
	expect_wc(pr.prcq, 1, VB_WC_SUCCESS); /* the Read request was taken before this */
	assert_int_equal(vb_dereg_mr(src.mr), 0);
	src.mr = NULL;
	memset(src.p, 0xee, BIG); /* the owner reuses the memory */
	assert_true(get_wc(pr.ascq, &wc, TMO_MS));
	assert_int_equal(wc.wr_id, 2);
	if (wc.status == VB_WC_SUCCESS)
		assert_memory_equal(dst.p, expect, BIG);
	else
		assert_true(is_soft == false ||
			    (cma_pulls(&pr) && wc.status == VB_WC_REM_ACCESS_ERR));
	free(expect);
	buf_free(&src);
	buf_free(&dst);
	buf_free(&m);
	buf_free(&rm);
	pair_close(&pr);
}

/* A Send larger than the Receive: LOC_LEN_ERR there, REM_INV_REQ_ERR here. */
void recv_too_small(void **state)
{
	struct pair pr = {0};
	struct buf src, dst;

	pair_open(&pr);
	buf_new(&src, pr.apd, 8192, 0, 24);
	buf_new(&dst, pr.ppd, 8192, VB_ACCESS_LOCAL_WRITE, 25);
	post_recv1(pr.p, 1, &dst, 0, 1000);
	post_recv1(pr.p, 2, &dst, 4096, 4096);
	post1(pr.a, 3, VB_WR_SEND, &src, 0, 1001, 0, 0, VB_SEND_SIGNALED);
	expect_wc(pr.prcq, 1, VB_WC_LOC_LEN_ERR);
	expect_wc(pr.prcq, 2, VB_WC_WR_FLUSH_ERR);
	expect_wc(pr.ascq, 3, VB_WC_REM_INV_REQ_ERR);
	buf_free(&src);
	buf_free(&dst);
	pair_close(&pr);
}

/* ---- memory windows ---- */

static void mw_skip_unless(void)
{
	if (!attr.has_mw)
		skip_because("the provider has no memory windows");
}

/* A bound window works with its key; rebinding retires the old key. */
void mw_bind_write_rebind(void **state)
{
	struct pair pr = {0};
	struct buf src, arena;
	struct vb_mw *mw;
	uint32_t k1;

	mw_skip_unless();
	pair_open(&pr);
	buf_new(&src, pr.apd, 65536, 0, 33);
	buf_new(&arena, pr.ppd, 1 << 20,
		VB_ACCESS_LOCAL_WRITE | VB_ACCESS_REMOTE | VB_ACCESS_MW_BIND, 34);
	assert_int_equal(vb_alloc_mw(pr.ppd, &mw), 0);
	assert_int_equal(vb_bind_mw(pr.p, mw, arena.mr, arena.p + 65536, 65536,
				    VB_ACCESS_REMOTE_WRITE, 41, 1),
			 0);
	expect_wc(pr.pscq, 41, VB_WC_SUCCESS);
	k1 = mw->rkey;
	assert_true(k1 != 0 && k1 != arena.mr->rkey && k1 != arena.mr->lkey);
	post1(pr.a, 1, VB_WR_RDMA_WRITE, &src, 0, 65536, raddr(&arena, 65536), k1,
	      VB_SEND_SIGNALED);
	expect_wc(pr.ascq, 1, VB_WC_SUCCESS);
	assert_memory_equal(arena.p + 65536, src.p, 65536);
	/* a new binding has a new key; the old one no longer works */
	assert_int_equal(
		vb_bind_mw(pr.p, mw, arena.mr, arena.p, 4096, VB_ACCESS_REMOTE_WRITE, 42, 1), 0);
	expect_wc(pr.pscq, 42, VB_WC_SUCCESS);
	assert_true(mw->rkey != k1);
	post1(pr.a, 2, VB_WR_RDMA_WRITE, &src, 0, 4096, raddr(&arena, 65536), k1, VB_SEND_SIGNALED);
	expect_wc(pr.ascq, 2, VB_WC_REM_ACCESS_ERR);
	assert_int_equal(vb_dealloc_mw(mw), 0);
	buf_free(&src);
	buf_free(&arena);
	pair_close(&pr);
}

/* Binding with length 0 unbinds: the window's key stops working. */
void mw_unbind_len0(void **state)
{
	struct pair pr = {0};
	struct buf src, arena;
	struct vb_mw *mw;
	uint32_t key;

	mw_skip_unless();
	pair_open(&pr);
	buf_new(&src, pr.apd, 4096, 0, 66);
	buf_new(&arena, pr.ppd, 65536, RW_ALL | VB_ACCESS_MW_BIND, 67);
	assert_int_equal(vb_alloc_mw(pr.ppd, &mw), 0);
	assert_int_equal(
		vb_bind_mw(pr.p, mw, arena.mr, arena.p, 65536, VB_ACCESS_REMOTE_WRITE, 1, 1), 0);
	expect_wc(pr.pscq, 1, VB_WC_SUCCESS);
	key = mw->rkey;
	post1(pr.a, 2, VB_WR_RDMA_WRITE, &src, 0, 4096, raddr(&arena, 0), key, VB_SEND_SIGNALED);
	expect_wc(pr.ascq, 2, VB_WC_SUCCESS);
	assert_int_equal(vb_bind_mw(pr.p, mw, arena.mr, arena.p, 0, 0, 3, 1), 0);
	expect_wc(pr.pscq, 3, VB_WC_SUCCESS);
	post1(pr.a, 4, VB_WR_RDMA_WRITE, &src, 0, 4096, raddr(&arena, 0), key, VB_SEND_SIGNALED);
	expect_wc(pr.ascq, 4, VB_WC_REM_ACCESS_ERR);
	assert_int_equal(vb_dealloc_mw(mw), 0);
	buf_free(&src);
	buf_free(&arena);
	pair_close(&pr);
}

/* A window over [off, off+len) of a fresh arena, with rights; then a bad access. */
static void mw_case(size_t off, size_t len, unsigned rights, enum vb_wr_opcode op, size_t at,
		    uint32_t alen)
{
	struct pair pr = {0};
	struct buf arena;
	struct vb_mw *mw;

	pair_open(&pr);
	buf_new(&arena, pr.ppd, 1 << 20, RW_ALL | VB_ACCESS_MW_BIND, 35);
	assert_int_equal(vb_alloc_mw(pr.ppd, &mw), 0);
	assert_int_equal(vb_bind_mw(pr.p, mw, arena.mr, arena.p + off, len, rights, 43, 1), 0);
	expect_wc(pr.pscq, 43, VB_WC_SUCCESS);
	access_error_case(&pr, op, raddr(&arena, at), mw->rkey, alen, VB_WC_REM_ACCESS_ERR);
	assert_int_equal(vb_dealloc_mw(mw), 0);
	buf_free(&arena);
	pair_close(&pr);
}

/* Windows are checked for range and rights like MRs. */
void mw_range_and_rights(void **state)
{
	mw_skip_unless();
	/* inside the MR but running past the window */
	mw_case(8192, 8192, VB_ACCESS_REMOTE_READ, VB_WR_RDMA_READ, 8192 + 4096, 8192);
	/* before the window */
	mw_case(8192, 8192, VB_ACCESS_REMOTE_READ, VB_WR_RDMA_READ, 4096, 4096);
	/* a read-only window refuses a Write */
	mw_case(0, 8192, VB_ACCESS_REMOTE_READ, VB_WR_RDMA_WRITE, 0, 4096);
}

/* SEND_WITH_INV invalidates a window at the receiver and says so. */
void mw_send_with_invalidate(void **state)
{
	struct pair pr = {0};
	struct buf src, arena, rb;
	struct vb_mw *mw;
	struct vb_wc wc;
	uint32_t key;

	mw_skip_unless();
	pair_open(&pr);
	buf_new(&src, pr.apd, 8192, 0, 36);
	buf_new(&rb, pr.ppd, 64, VB_ACCESS_LOCAL_WRITE, 37);
	buf_new(&arena, pr.ppd, 65536, VB_ACCESS_LOCAL_WRITE | VB_ACCESS_REMOTE | VB_ACCESS_MW_BIND,
		38);
	assert_int_equal(vb_alloc_mw(pr.ppd, &mw), 0);
	assert_int_equal(
		vb_bind_mw(pr.p, mw, arena.mr, arena.p, 65536, VB_ACCESS_REMOTE_WRITE, 45, 0), 0);
	key = mw->rkey;
	post_recv1(pr.p, 46, &rb, 0, 64);
	/* the binding (unsignaled) is ordered before this Send's invalidation */
	struct vb_sge s = sge_of(&src, 0, 32);
	struct vb_send_wr wr = {.wr_id = 3,
				.sg_list = &s,
				.num_sge = 1,
				.opcode = VB_WR_SEND_WITH_INV,
				.send_flags = VB_SEND_SIGNALED,
				.invalidate_rkey = key};
	post1(pr.a, 2, VB_WR_RDMA_WRITE, &src, 0, 8192, raddr(&arena, 0), key, VB_SEND_SIGNALED);
	expect_wc(pr.ascq, 2, VB_WC_SUCCESS);
	assert_int_equal(vb_post_send(pr.a, &wr, NULL), 0);
	assert_true(get_wc(pr.prcq, &wc, TMO_MS));
	assert_int_equal(wc.wr_id, 46);
	assert_int_equal(wc.status, VB_WC_SUCCESS);
	assert_true(wc.wc_flags & VB_WC_WITH_INV);
	assert_int_equal(wc.invalidated_rkey, key);
	expect_wc(pr.ascq, 3, VB_WC_SUCCESS);
	post1(pr.a, 4, VB_WR_RDMA_WRITE, &src, 0, 4096, raddr(&arena, 0), key, VB_SEND_SIGNALED);
	expect_wc(pr.ascq, 4, VB_WC_REM_ACCESS_ERR);
	assert_int_equal(vb_dealloc_mw(mw), 0);
	buf_free(&src);
	buf_free(&rb);
	buf_free(&arena);
	pair_close(&pr);
}
