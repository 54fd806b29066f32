/*
 * rpcrdma_hostile_test: a raw verbs peer sends the server what no good client
 * would: wrong versions, short and malformed headers, huge counts, bad keys,
 * credit overruns, RDMA_DONE never / twice / for nothing, and disconnects in
 * the middle. Each is answered as RFC 8166 says, the server keeps serving,
 * its receive queue never drains, and its counters come back to baseline.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "bulkprog.h"
#include "common/base/clock.h"
#include "common/base/log.h"
#include "common/rpcrdma/rpcrdma_hdr.h"
#include "rpcrdma_raw.h"
#include "rpcrdma_raw_calls.h"
#include "rpcrdma_test_util.h"
#include "common/verbs.h"

#define CREDITS RAW_CREDITS

/* Send each kind of garbage once; each gets its answer (or none) and nothing else. */
static void garbage_round(struct raw *r)
{
	uint8_t buf[RAW_BUF];
	uint32_t x;

	x = ++r->xid; /* rdma_vers 2 */
	raw_send(r, buf, raw_words(buf, (uint32_t[]){x, 2, CREDITS, RPCRDMA_MSG, 0, 0, 0}, 7));
	raw_expect_error(r, x, RPCRDMA_ERR_VERS);
	x = ++r->xid; /* only xid and version */
	raw_send(r, buf, raw_words(buf, (uint32_t[]){x, 1}, 2));
	raw_expect_error(r, x, RPCRDMA_ERR_CHUNK);
	raw_send(r, "abc", 3); /* not even an xid: dropped */
	assert_int_equal(raw_recv(r, buf, 300), 0);
	x = ++r->xid; /* a Write chunk claiming 2^32-1 segments */
	raw_send(r, buf,
		 raw_words(buf, (uint32_t[]){x, 1, CREDITS, RPCRDMA_MSG, 0, 1, 0xffffffff}, 7));
	raw_expect_error(r, x, RPCRDMA_ERR_CHUNK);
	x = ++r->xid; /* rdma_proc 9 */
	raw_send(r, buf, raw_words(buf, (uint32_t[]){x, 1, CREDITS, 9, 0, 0, 0}, 7));
	raw_expect_error(r, x, RPCRDMA_ERR_CHUNK);
	x = ++r->xid; /* a Read segment at position 5 */
	raw_send(r, buf,
		 raw_words(buf, (uint32_t[]){x, 1, CREDITS, RPCRDMA_MSG, 1, 5, 1, 8, 0, 0, 0, 0, 0},
			   13));
	raw_expect_error(r, x, RPCRDMA_ERR_CHUNK);
	x = ++r->xid; /* RDMA_NOMSG without a Position-Zero chunk */
	raw_send(r, buf, raw_words(buf, (uint32_t[]){x, 1, CREDITS, RPCRDMA_NOMSG, 0, 0, 0}, 7));
	raw_expect_error(r, x, RPCRDMA_ERR_CHUNK);
	x = ++r->xid; /* RDMA_DONE for nothing: ignored */
	raw_send(r, buf, raw_words(buf, (uint32_t[]){x, 1, CREDITS, RPCRDMA_DONE}, 4));
	assert_int_equal(raw_recv(r, buf, 200), 0);
	/* an RPC call for a program the server does not have */
	assert_int_equal(raw_null(r, BULKPROG + 7), -EPROTO);
}

static struct rrt_server srv;

static int setup(void **state)
{
	struct rr_params p;

	rrt_params(&p, RR_MODE_READ_WRITE | RR_MODE_READ_READ, RR_REG_DYNAMIC);
	p.credits = CREDITS;
	p.done_deadline_ms = 400;
	p.exposed_max = 1u << 20;
	return rrt_server_start_p(&srv, &p, 0);
}

static int teardown(void **state)
{
	rrt_server_stop(&srv);
	return 0;
}

/* Wait for the server's counters to come back once a connection went away. */
static void expect_settled(unsigned conns)
{
	struct rr_stats st;

	for (int i = 0; i < 500; i++) {
		rr_server_get_stats(srv.rr, &st);
		if (st.conns == conns && st.exposed_now == 0)
			break;
		usleep(10000);
	}
	assert_int_equal(st.conns, conns);
	assert_int_equal(st.exposed_now, 0);
	assert_int_equal(st.registered_now - st.cached_now, 0);
}

/* Three rounds of every malformed message (more messages than the server has
 * receives), then as many calls at once as the credits allow: all answered, so
 * every error path gave its receive buffer back. */
static void malformed_headers_answered(void **state)
{
	struct raw r;
	struct rr_stats st;
	uint8_t buf[RAW_BUF];

	raw_open(&r, srv.port);
	for (int i = 0; i < 3; i++)
		garbage_round(&r);
	for (int i = 0; i < CREDITS; i++) {
		struct rpcrdma_hdr *h = raw_hdr(&r, RPCRDMA_MSG);
		u_int ms = 50;
		struct rpc_call call = rrt_sleep_call(&ms);

		raw_send(&r, buf, raw_build(&r, h, &call, buf));
		free(h);
	}
	for (int i = 0; i < CREDITS; i++)
		assert_true(raw_recv(&r, buf, RAW_TMO) > 0);
	assert_int_equal(raw_null(&r, BULKPROG), 0);
	rr_server_get_stats(srv.rr, &st);
	assert_int_equal(st.err_vers_sent, 3);
	assert_int_equal(st.err_chunk_sent, 15);
	assert_int_equal(st.done_unknown, 3);
	assert_false(r.broken);
	raw_close(&r);
	expect_settled(0);
}

/* More calls than credits at once: the excess is answered ERR_CHUNK, the rest run. */
static void credit_overrun_answered(void **state)
{
	struct raw r;
	struct rr_stats st;
	uint8_t buf[RAW_BUF];
	int errors = 0, replies = 0;

	raw_open(&r, srv.port);
	assert_int_equal(raw_null(&r, BULKPROG), 0); /* the first grant */
	for (int i = 0; i < CREDITS + 2; i++) {
		struct rpcrdma_hdr *h = raw_hdr(&r, RPCRDMA_MSG);
		u_int ms = 300;
		struct rpc_call call = rrt_sleep_call(&ms);

		raw_send(&r, buf, raw_build(&r, h, &call, buf));
		free(h);
	}
	for (int i = 0; i < CREDITS + 2; i++) {
		size_t len = raw_recv(&r, buf, RAW_TMO);
		uint32_t proc;
		struct cur c;

		assert_true(len >= 16);
		cur_init(&c, buf + 12, 4);
		cur_get_u32(&c, &proc);
		errors += proc == RPCRDMA_ERROR;
		replies += proc == RPCRDMA_MSG;
	}
	assert_int_equal(errors, 2);
	assert_int_equal(replies, CREDITS);
	rr_server_get_stats(srv.rr, &st);
	assert_int_equal(st.credit_overruns, 2);
	assert_int_equal(raw_null(&r, BULKPROG), 0); /* still serving */
	raw_close(&r);
	expect_settled(0);
}

/* A PUT with 4096 bytes of data in a Read chunk at descriptor (rkey, offset). */
static size_t put_with_chunk(struct raw *r, uint32_t rkey, uint64_t offset, uint8_t *buf)
{
	struct rpcrdma_hdr *h = raw_hdr(r, RPCRDMA_MSG);
	struct bulk_put_args a = {.seed = 1, .data.len = 0};
	struct rpc_call call = {.prog = BULKPROG,
				.vers = BULKVERS,
				.proc = BULK_PUT,
				.xdr_args = (xdrproc_t)xdr_bulk_put_args,
				.args = &a,
				.xdr_res = (xdrproc_t)xdr_void};
	uint8_t rpcbuf[RAW_BUF];
	uint32_t datalen = htonl(4096);
	struct wcur w;
	int rl;

	/* encode with empty data, then make the length word say 4096: the data
	 * itself is the Read chunk at the position right after it */
	rl = rpc_encode_call(&r->clnt, h->xid, &call, rpcbuf, sizeof(rpcbuf), NULL);
	assert_true(rl > 4);
	memcpy(rpcbuf + rl - 4, &datalen, 4);
	h->nreads = 1;
	h->reads[0] =
		(struct rpcrdma_read_seg){.position = (uint32_t)rl, .seg = {rkey, 4096, offset}};
	wcur_init(&w, buf, RAW_BUF);
	assert_int_equal(rpcrdma_hdr_encode(&w, h), 0);
	memcpy(buf + w.pos, rpcbuf, (size_t)rl);
	free(h);
	return w.pos + (size_t)rl;
}

/* A PUT whose Read chunk names a key we never registered, or bytes past the
 * end of our registration: the server's RDMA Read fails, that connection goes,
 * the server stays and cleans up. A good chunk works. */
static void bad_read_chunk_key(void **state)
{
	uint8_t buf[RAW_BUF];
	struct rpc_clnt *c;

	for (int k = 0; k < 3; k++) {
		struct raw r;
		size_t len;

		raw_open(&r, srv.port);
		if (k == 0)
			len = put_with_chunk(&r, 0xdeadbeef, (uintptr_t)r.data, buf);
		else if (k == 1)
			len = put_with_chunk(&r, r.data_mr->rkey,
					     (uintptr_t)r.data + RAW_DATA - 100, buf);
		else
			len = put_with_chunk(&r, r.data_mr->rkey, (uintptr_t)r.data, buf);
		raw_send(&r, buf, len);
		if (k < 2)
			assert_int_equal(raw_recv(&r, buf, 2000), 0); /* the connection went */
		else
			assert_true(raw_recv(&r, buf, RAW_TMO) > 0); /* answered */
		raw_close(&r);
		expect_settled(0);
	}
	assert_int_equal(rrt_client(&srv, RR_MODE_READ_WRITE, RR_REG_ZEROCOPY, 0, &c), 0);
	assert_int_equal(rrt_put(c, 3, 100000), 0);
	rpc_clnt_destroy(c);
}

/* A GET whose Write chunk names a bad key: the server's RDMA Write fails. */
static void bad_write_chunk_key(void **state)
{
	struct raw r;
	struct rpcrdma_hdr *h;
	struct bulk_get_args a = {.seed = 1, .len = 65536};
	struct rpc_call call = {.prog = BULKPROG,
				.vers = BULKVERS,
				.proc = BULK_GET,
				.xdr_args = (xdrproc_t)xdr_bulk_get_args,
				.args = &a,
				.xdr_res = (xdrproc_t)xdr_void};
	uint8_t buf[RAW_BUF];

	raw_open(&r, srv.port);
	h = raw_hdr(&r, RPCRDMA_MSG);
	h->nwrites = 1;
	h->writes[0].nsegs = 1;
	h->writes[0].segs[0] = (struct rpcrdma_seg){0xdeadbeef, 65536, (uintptr_t)r.data};
	raw_send(&r, buf, raw_build(&r, h, &call, buf));
	free(h);
	assert_int_equal(raw_recv(&r, buf, 2000), 0);
	raw_close(&r);
	expect_settled(0);
}

/* A Write chunk too short for the GET's 64 KiB: the server cannot put the
 * reply where the client said it goes, and answers ERR_CHUNK (as Linux's
 * svcrdma does) rather than nothing, which left the client waiting for ever;
 * the connection goes on. */
static void write_chunk_too_short(void **state)
{
	struct raw r;
	struct rpcrdma_hdr *h;
	struct bulk_get_args a = {.seed = 1, .len = 65536};
	struct rpc_call call = {.prog = BULKPROG,
				.vers = BULKVERS,
				.proc = BULK_GET,
				.xdr_args = (xdrproc_t)xdr_bulk_get_args,
				.args = &a,
				.xdr_res = (xdrproc_t)xdr_void};
	uint8_t buf[RAW_BUF];

	raw_open(&r, srv.port);
	h = raw_hdr(&r, RPCRDMA_MSG);
	h->nwrites = 1;
	h->writes[0].nsegs = 1;
	h->writes[0].segs[0] = (struct rpcrdma_seg){r.data_mr->rkey, 4096, (uintptr_t)r.data};
	raw_send(&r, buf, raw_build(&r, h, &call, buf));
	raw_expect_error(&r, h->xid, RPCRDMA_ERR_CHUNK);
	free(h);
	assert_int_equal(raw_null(&r, BULKPROG), 0);
	raw_close(&r);
	expect_settled(0);
}

/* A long reply to a call that offers a Write chunk but no Reply chunk: the
 * server cannot expose it (Read-Read's list has no room beside the Write
 * list in the header it reserved), so it answers ERR_CHUNK, as to a
 * Read-Write-only call, rather than nothing; the connection goes on. */
static void long_reply_beside_write_list(void **state)
{
	struct rpcrdma_hdr *h;
	u_int n = 20000;
	struct rpc_call call = {.prog = BULKPROG,
				.vers = BULKVERS,
				.proc = BULK_BIG,
				.xdr_args = (xdrproc_t)xdr_u_int,
				.args = &n,
				.xdr_res = (xdrproc_t)xdr_void};
	uint8_t buf[RAW_BUF];
	struct raw r;

	raw_open(&r, srv.port);
	h = raw_hdr(&r, RPCRDMA_MSG);
	h->nwrites = 1;
	h->writes[0].nsegs = 1;
	h->writes[0].segs[0] = (struct rpcrdma_seg){r.data_mr->rkey, 65536, (uintptr_t)r.data};
	raw_send(&r, buf, raw_build(&r, h, &call, buf));
	raw_expect_error(&r, h->xid, RPCRDMA_ERR_CHUNK);
	assert_int_equal(raw_null(&r, BULKPROG), 0);
	free(h);
	raw_close(&r);
	expect_settled(0);
}

static void rdma_done_never_sent(void **state)
{
	struct raw r;
	struct rpcrdma_hdr *rh = calloc(1, sizeof(*rh));
	struct rr_stats st;
	char *want = malloc(65536);

	raw_open(&r, srv.port);
	raw_rr_get(&r, rh);
	assert_true(raw_read(&r, &rh->reads[0].seg));
	bulk_fill(want, 65536, 9);
	assert_memory_equal(r.data, want, 65536);
	rr_server_get_stats(srv.rr, &st);
	assert_int_equal(st.exposed_now, 65536);
	usleep(800 * 1000); /* past the 400 ms deadline */
	rr_server_get_stats(srv.rr, &st);
	assert_int_equal(st.exposed_now, 0);
	assert_int_equal(st.exposed_expired, 1);
	/* the key is dead: reading again breaks our connection, not the server */
	assert_false(raw_read(&r, &rh->reads[0].seg));
	raw_close(&r);
	expect_settled(0);
	free(rh);
	free(want);
}

static void rdma_done_twice(void **state)
{
	struct raw r;
	struct rpcrdma_hdr *rh = calloc(1, sizeof(*rh));
	struct rr_stats st;
	uint32_t xid;

	raw_open(&r, srv.port);
	xid = raw_rr_get(&r, rh);
	assert_true(raw_read(&r, &rh->reads[0].seg));
	for (int i = 0; i < 2; i++)
		raw_done(&r, xid);
	assert_int_equal(raw_null(&r, BULKPROG), 0); /* ordered after both DONEs */
	rr_server_get_stats(srv.rr, &st);
	assert_int_equal(st.exposed_now, 0);
	assert_int_equal(st.done_unknown, 1);
	assert_int_equal(st.exposed_expired, 0);
	raw_close(&r);
	expect_settled(0);
	free(rh);
}

/* Many big calls in flight, then the client vanishes. */
static void disconnect_mid_transfer(void **state)
{
	for (int round = 0; round < 2; round++) {
		struct raw r;
		uint8_t buf[RAW_BUF];

		raw_open(&r, srv.port);
		for (int i = 0; i < CREDITS; i++) {
			struct rpcrdma_hdr *h = raw_hdr(&r, RPCRDMA_MSG);
			struct bulk_get_args a = {.seed = (u_int)i, .len = 1u << 20};
			struct rpc_call call = {.prog = BULKPROG,
						.vers = BULKVERS,
						.proc = BULK_GET,
						.xdr_args = (xdrproc_t)xdr_bulk_get_args,
						.args = &a,
						.xdr_res = (xdrproc_t)xdr_void};

			if (round == 0) { /* Read-Write: the server writes into us */
				h->nwrites = 1;
				h->writes[0].nsegs = 1;
				h->writes[0].segs[0] = (struct rpcrdma_seg){
					r.data_mr->rkey, 1u << 20, (uintptr_t)r.data};
			} /* else Read-Read: the server exposes */
			raw_send(&r, buf, raw_build(&r, h, &call, buf));
			free(h);
		}
		raw_close(&r); /* without waiting for anything */
		expect_settled(0);
	}
}

/* A call still running when the server stops (here past drain_ms): the
 * server disconnects, but frees nothing the call will touch when it ends. */
static void stop_outlived_by_a_call(void **state)
{
	struct rrt_server t;
	struct rr_params p;
	struct raw r;
	uint8_t buf[RAW_BUF];
	u_int ms = 2500;
	struct rpcrdma_hdr *h;
	struct rpc_call call = rrt_sleep_call(&ms);
	uint64_t t0;

	rrt_params(&p, RR_MODE_READ_WRITE, RR_REG_DYNAMIC);
	p.drain_ms = 100;
	assert_int_equal(rrt_server_start_p(&t, &p, 0), 0);
	raw_open(&r, t.port);
	h = raw_hdr(&r, RPCRDMA_MSG);
	raw_send(&r, buf, raw_build(&r, h, &call, buf));
	free(h);
	assert_int_equal(raw_null(&r, BULKPROG), 0); /* the SLEEP is running */
	t0 = clock_now_ns();
	rr_server_destroy(t.rr); /* returns once the SLEEP has ended */
	assert_true(clock_now_ns() - t0 >= 2000000000ull);
	rpc_server_destroy(t.rpc);
	raw_close(&r);
}

/* A client with the wrong integrity key is refused; the right one works. */
static void mutated_mic_refused(void **state)
{
	struct rrt_server t;
	struct rpc_clnt *c;
	struct integrity_key bad;

	assert_int_equal(rrt_server_start(&t, RR_MODE_READ_WRITE, RR_REG_DYNAMIC, 1), 0);
	assert_int_equal(rrt_client(&t, RR_MODE_READ_WRITE, RR_REG_ZEROCOPY, 1, &c), 0);
	assert_int_equal(rrt_put(c, 1, 200000), 0);
	assert_int_equal(integrity_key_set(&bad, "another key of 32 bytes, exactly", 32, 0), 0);
	c->key = &bad;
	assert_int_equal(rrt_put(c, 1, 200000), -EACCES);
	assert_int_equal(rrt_get(c, 1, 200000), -EACCES);
	c->key = &t.key;
	assert_int_equal(rrt_get(c, 1, 200000), 0);
	rpc_clnt_destroy(c);
	integrity_key_clear(&bad);
	rrt_server_stop(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(malformed_headers_answered, setup, teardown),
		cmocka_unit_test_setup_teardown(credit_overrun_answered, setup, teardown),
		cmocka_unit_test_setup_teardown(bad_read_chunk_key, setup, teardown),
		cmocka_unit_test_setup_teardown(bad_write_chunk_key, setup, teardown),
		cmocka_unit_test_setup_teardown(write_chunk_too_short, setup, teardown),
		cmocka_unit_test_setup_teardown(rdma_done_never_sent, setup, teardown),
		cmocka_unit_test_setup_teardown(rdma_done_twice, setup, teardown),
		cmocka_unit_test_setup_teardown(disconnect_mid_transfer, setup, teardown),
		cmocka_unit_test(mutated_mic_refused),
		cmocka_unit_test(stop_outlived_by_a_call),
		cmocka_unit_test_setup_teardown(long_reply_beside_write_list, setup, teardown),
	};

	log_set_level(getenv("RRT_DEBUG") ? LOG_LVL_DEBUG : LOG_LVL_ERR);
	return cmocka_run_group_tests_name("rpcrdma_hostile", tests, NULL, NULL);
}
