/*
 * rpcrdma_test_inline.c: rpcrdma_test's cases of the inline thresholds: bulk
 * data that fits both sides' inline sizes travels in the Send itself, in
 * either mode and either direction; what does not fit, or does not fit the
 * peer's send size (RFC 8797), still goes through a chunk. And a call whose
 * data came through a Read chunk, run on the loop or given up there.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdint.h>

#include "bulkprog.h"
#include "common/rpcrdma/rpcrdma.h"
#include "rpcrdma_test_util.h"

/* What a call moved through chunks on the server, between two snapshots. */
struct moved {
	uint64_t written, pulled, exposed;
};

static struct moved moved_by(struct rrt_server *t, int (*call)(struct rpc_clnt *, uint32_t, size_t),
			     struct rpc_clnt *c, size_t len)
{
	struct rr_stats a, b;

	rr_server_get_stats(t->rr, &a);
	assert_int_equal(call(c, 7, len), 0);
	rr_server_get_stats(t->rr, &b);
	return (struct moved){b.bytes_rdma_write - a.bytes_rdma_write,
			      b.bytes_rdma_read - a.bytes_rdma_read,
			      b.bytes_exposed - a.bytes_exposed};
}

static void start_pair(struct rrt_server *t, uint32_t srv_send, uint32_t cli_recv, unsigned mode,
		       struct rpc_clnt **c)
{
	struct rr_params p;

	rrt_params(&p, RR_MODE_READ_WRITE | RR_MODE_READ_READ, RR_REG_DYNAMIC);
	p.inline_send = srv_send;
	p.inline_recv = 8192;
	assert_int_equal(rrt_server_start_p(t, &p, 0), 0);
	rrt_params(&p, mode, RR_REG_FASTREG);
	p.caller_polls = 1;
	p.inline_send = 8192;
	p.inline_recv = cli_recv;
	assert_int_equal(rrt_client_p(t, &p, 0, c), 0);
}

/* 8 KiB inline both ways: a 4 KiB GET comes inline (no RDMA Write in
 * Read-Write, nothing exposed in Read-Read), a 4 KiB PUT goes inline (no RDMA
 * Read); 16 KiB still takes a chunk. */
void inline_bulk_when_it_fits(void **state)
{
	for (unsigned m = 0; m < 2; m++) {
		unsigned mode = m ? RR_MODE_READ_READ : RR_MODE_READ_WRITE;
		struct rrt_server t;
		struct rpc_clnt *c;
		struct moved mv;

		start_pair(&t, 8192, 8192, mode, &c);
		mv = moved_by(&t, rrt_get, c, 4096);
		assert_int_equal(mv.written + mv.exposed, 0);
		mv = moved_by(&t, rrt_put, c, 4096);
		assert_int_equal(mv.pulled, 0);
		mv = moved_by(&t, rrt_get, c, 16384);
		assert_int_equal(m ? mv.exposed : mv.written, 16384);
		mv = moved_by(&t, rrt_put, c, 16384);
		assert_int_equal(mv.pulled, 16384);
		rpc_clnt_destroy(c);
		rrt_server_stop(&t);
	}
}

/* At 4 KiB both ways, with a server that also accepts read-read: data that
 * leaves too little room for the reply's headers (the server's header keeps
 * room for read-read lists) goes in a Write chunk, not exposed; less comes
 * inline. */
void inline_margin_for_headers(void **state)
{
	struct rrt_server t;
	struct rpc_clnt *c;
	struct moved mv;

	start_pair(&t, 4096, 4096, RR_MODE_READ_WRITE, &c);
	for (size_t len = 3400; len <= 4096; len += 40) {
		mv = moved_by(&t, rrt_get, c, len);
		assert_int_equal(mv.exposed, 0);
		assert_true(mv.written == 0 || mv.written == len);
	}
	mv = moved_by(&t, rrt_get, c, 3400);
	assert_int_equal(mv.written, 0);
	rpc_clnt_destroy(c);
	rrt_server_stop(&t);
}

/* The client receives 8 KiB but the server sends at most 4 KiB: a 6000-byte
 * GET must still offer a Write chunk, or the server has nowhere to put it. */
void inline_bounded_by_peer_send(void **state)
{
	struct rrt_server t;
	struct rpc_clnt *c;
	struct moved mv;

	start_pair(&t, 4096, 8192, RR_MODE_READ_WRITE, &c);
	mv = moved_by(&t, rrt_get, c, 6000);
	assert_int_equal(mv.written, 6000);
	mv = moved_by(&t, rrt_get, c, 2000); /* fits 4 KiB: inline */
	assert_int_equal(mv.written, 0);
	rpc_clnt_destroy(c);
	rrt_server_stop(&t);
}

/* A PUT whose data comes through a Read chunk runs on the loop once the
 * chunk is pulled; one the loop gives up on runs on a worker, which decodes
 * the call again and finds the chunk's data again. */
void inline_call_with_read_chunk(void **state)
{
	struct rrt_server t;
	struct rpc_clnt *c;
	struct rr_params p;
	struct rr_stats a, b;

	rrt_params(&p, RR_MODE_READ_WRITE, RR_REG_DYNAMIC);
	assert_int_equal(rrt_server_start_inline(&t, &p), 0);
	assert_int_equal(rrt_client(&t, RR_MODE_READ_WRITE, RR_REG_FASTREG, 0, &c), 0);
	for (uint32_t seed = 1; seed <= 4; seed++) {
		uint32_t s = seed % 2 ? seed : seed | BULK_SEED_WORKER;

		rr_server_get_stats(t.rr, &a);
		assert_int_equal(rrt_put(c, s, 8192), 0); /* the right checksum back */
		rr_server_get_stats(t.rr, &b);
		assert_int_equal(b.bytes_rdma_read - a.bytes_rdma_read, 8192);
		assert_int_equal(b.calls_inline - a.calls_inline, s == seed);
		assert_int_equal(b.inline_declined - a.inline_declined, s != seed);
	}
	rpc_clnt_destroy(c);
	rrt_server_stop(&t);
}
