/*
 * rpcrdma_clnt_hostile_test: our RPC/RDMA client against a raw verbs server
 * (rpcrdma_raw.h) that answers what no good server would: a transport header
 * that cannot be decoded, one of another version, one too short to carry an
 * xid, a reply to no call, and a Read chunk too long to pull. A reply the
 * client cannot read fails its call with EIO at once, as Linux's xprtrdma
 * does, rather than leaving it to wait for its deadline; what names no call is
 * dropped; the connection keeps serving the calls after; and RDMA_DONE follows
 * every reply with Read chunks, pulled or not.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/log.h"
#include "common/base/net.h"
#include "common/rpcrdma/rpcrdma.h"
#include "common/rpcrdma/rpcrdma_hdr.h"
#include "rpcrdma_raw.h"

#define CREDITS 16
#define PROG	0x20000077u

/* A NULL call made in its own thread, as the raw server answers it in ours. */
struct caller {
	pthread_t t;
	struct rpc_clnt *c;
	int timeout_ms;
	int rc;
};

static void *call_main(void *arg)
{
	struct caller *k = arg;
	struct rpc_call call = {.prog = PROG,
				.vers = 1,
				.proc = 0,
				.xdr_args = (xdrproc_t)xdr_void,
				.xdr_res = (xdrproc_t)xdr_void,
				.timeout_ms = k->timeout_ms};

	k->rc = rpc_clnt_call(k->c, &call);
	if (k->rc == 0)
		rpc_clnt_free_res(k->c, &call);
	return NULL;
}

static void call_start(struct caller *k, struct rpc_clnt *c, int timeout_ms)
{
	*k = (struct caller){.c = c, .timeout_ms = timeout_ms};
	assert_int_equal(pthread_create(&k->t, NULL, call_main, k), 0);
}

static int call_end(struct caller *k)
{
	pthread_join(k->t, NULL);
	return k->rc;
}

struct connect {
	pthread_t t;
	unsigned modes;
	char port[16];
	struct rpc_clnt *c;
	int rc;
};

static void *connect_main(void *arg)
{
	struct connect *k = arg;
	struct rr_params p;

	rr_params_defaults_for(RR_ROLE_CLIENT, &p);
	p.provider = "soft";
	p.modes = k->modes;
	p.reg = RR_REG_DYNAMIC;
	p.credits = CREDITS;
	p.call_timeout_ms = 60000; /* far beyond the test's own deadline */
	k->rc = rr_clnt_create(&p, "127.0.0.1", k->port, &k->c);
	return NULL;
}

/* A raw server and our client (in mode modes) connected to it. */
static struct rpc_clnt *pair_open(struct raw *r, unsigned modes)
{
	struct connect k = {.modes = modes};

	snprintf(k.port, sizeof(k.port), "%d", net_free_port());
	raw_listen(r, k.port);
	assert_int_equal(pthread_create(&k.t, NULL, connect_main, &k), 0);
	raw_accept(r);
	pthread_join(k.t, NULL);
	assert_int_equal(k.rc, 0);
	return k.c;
}

/* Receive the client's next call; its xid. */
static uint32_t take_call(struct raw *r)
{
	uint8_t buf[RAW_BUF];
	struct rpcrdma_hdr h;
	size_t len = raw_recv(r, buf, RAW_TMO);
	struct cur c;

	assert_true(len > 0);
	cur_init(&c, buf, len);
	assert_int_equal(rpcrdma_hdr_decode(&c, &h), 0);
	assert_int_equal(h.proc, RPCRDMA_MSG);
	return h.xid;
}

/* The good answer to a NULL call: RDMA_MSG, no chunks, an accepted reply. */
static void answer(struct raw *r, uint32_t xid)
{
	uint8_t buf[64];

	raw_send(r, buf,
		 raw_words(buf,
			   (uint32_t[]){xid, 1, CREDITS, RPCRDMA_MSG, 0, 0, 0, /* transport */
					xid, 1, 0, 0, 0,
					0}, /* REPLY, accepted, no verifier, SUCCESS */
			   13));
}

/* A call answered with header h (n words, its xid filled in) fails with want;
 * then a good answer to the next call is still taken. */
static void answered_with(struct raw *r, struct rpc_clnt *c, uint32_t *h, size_t n, int want)
{
	uint8_t buf[64];
	struct caller k;

	call_start(&k, c, 30000);
	h[0] = take_call(r);
	raw_send(r, buf, raw_words(buf, h, n));
	assert_int_equal(call_end(&k), want);
	call_start(&k, c, 30000);
	answer(r, take_call(r));
	assert_int_equal(call_end(&k), 0);
}

/* Headers the client cannot decode, each answering a call: each call fails
 * with EIO, not ETIMEDOUT after its 30 s; more of them than the client has
 * receives, so each gave its receive buffer back. */
static void undecodable_reply_fails_call(void **state)
{
	struct raw r;
	struct rpc_clnt *c = pair_open(&r, RR_MODE_READ_WRITE);

	for (int round = 0; round < 40; round++) {
		uint32_t vers2[] = {0, 2, CREDITS, RPCRDMA_MSG, 0, 0, 0};
		uint32_t cut[] = {0, 1, CREDITS, RPCRDMA_MSG, 1}; /* a Read list that ends */
		uint32_t proc9[] = {0, 1, CREDITS, 9, 0, 0, 0};
		uint32_t huge[] = {0, 1, CREDITS, RPCRDMA_MSG, 0, 1, 0xffffffffu};

		answered_with(&r, c, vers2, 7, -EIO);
		answered_with(&r, c, cut, 5, -EIO);
		answered_with(&r, c, proc9, 7, -EIO);
		answered_with(&r, c, huge, 7, -EIO);
	}
	rpc_clnt_destroy(c);
	raw_close(&r);
}

/* A reply to no call is dropped, and the call's own reply after it is taken. */
static void reply_to_no_call_dropped(void **state)
{
	struct raw r;
	struct rpc_clnt *c = pair_open(&r, RR_MODE_READ_WRITE);
	struct caller k;
	uint32_t xid;

	call_start(&k, c, 30000);
	xid = take_call(&r);
	answer(&r, xid + 1);
	answer(&r, xid);
	assert_int_equal(call_end(&k), 0);
	rpc_clnt_destroy(c);
	raw_close(&r);
}

/* A reply too short to name its call is dropped: the call waits for its
 * deadline (here 300 ms), and the connection is ended with it. */
static void reply_without_xid_dropped(void **state)
{
	struct raw r;
	struct rpc_clnt *c = pair_open(&r, RR_MODE_READ_WRITE);
	struct caller k;

	call_start(&k, c, 300);
	(void)take_call(&r);
	raw_send(&r, "abc", 3);
	assert_int_equal(call_end(&k), -ETIMEDOUT);
	call_start(&k, c, 300);
	assert_int_equal(call_end(&k), -ECONNRESET);
	rpc_clnt_destroy(c);
	raw_close(&r);
}

/* Read-Read mode: a reply with a Read chunk the client will not pull (longer
 * than any reply may be) fails its call, and the client answers RDMA_DONE
 * all the same, so that the server lets go of what it exposed. */
static void unpulled_chunk_done(void **state)
{
	struct raw r;
	struct rpc_clnt *c = pair_open(&r, RR_MODE_READ_READ);
	uint64_t at = (uintptr_t)r.data;
	uint8_t buf[RAW_BUF];
	struct rpcrdma_hdr h;
	struct caller k;
	struct cur cu;
	uint32_t xid;
	size_t len;

	call_start(&k, c, 30000);
	xid = take_call(&r);
	raw_send(&r, buf,
		 raw_words(buf,
			   (uint32_t[]){xid, 1, CREDITS, RPCRDMA_MSG,
					/* a Read chunk of 1 GiB at the reply's end */
					1, 24, r.data_mr->rkey, 1u << 30, (uint32_t)(at >> 32),
					(uint32_t)at, 0, 0, 0, xid, 1, 0, 0, 0, 0},
			   19));
	assert_int_equal(call_end(&k), -EBADMSG);
	len = raw_recv(&r, buf, RAW_TMO);
	assert_true(len > 0);
	cur_init(&cu, buf, len);
	assert_int_equal(rpcrdma_hdr_decode(&cu, &h), 0);
	assert_int_equal(h.proc, RPCRDMA_DONE);
	assert_int_equal(h.xid, xid);
	rpc_clnt_destroy(c);
	raw_close(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(undecodable_reply_fails_call),
		cmocka_unit_test(reply_to_no_call_dropped),
		cmocka_unit_test(reply_without_xid_dropped),
		cmocka_unit_test(unpulled_chunk_done),
	};

	log_set_level(getenv("RRT_DEBUG") ? LOG_LVL_DEBUG : LOG_LVL_ERR);
	return cmocka_run_group_tests_name("rpcrdma_clnt_hostile", tests, NULL, NULL);
}
