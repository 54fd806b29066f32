/*
 * rpc_drc_test: the duplicate request cache in front of the dispatcher. A
 * counter program stands in for non-idempotent procedures: its reply says how
 * often it ran, so a replayed reply is told apart from a second run.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "common/rpc/integrity.h"
#include "common/rpc/rpc.h"
#include "common/rpc/rpc_drc.h"

#define PROG	    0x20049aaa
#define VERS	    1
#define P_INC	    1 /* cached */
#define P_INC_PLAIN 2 /* not cached: runs every time */
#define P_INC_BLOCK 3 /* cached; waits for the test to let it go */
#define P_INC_BIG   4 /* cached, but its reply is too long to keep */
#define P_INC_LOOP  5 /* cached; on an event loop (nowait) it gives up */
#define REPLY_ROOM  4096
#define BIG_REPLY   (RPC_DRC_MAX_REPLY + 100)

static unsigned runs;
static sem_t entered, release;

static void inc(struct rpc_req *req, void *args, void *res)
{
	*(u_int *)res = __atomic_add_fetch(&runs, *(u_int *)args, __ATOMIC_RELAXED);
}

static void inc_loop(struct rpc_req *req, void *args, void *res)
{
	if (req->nowait)
		req->would_block = 1; /* a worker's */
	else
		inc(req, args, res);
}

static void inc_block(struct rpc_req *req, void *args, void *res)
{
	sem_post(&entered);
	sem_wait(&release);
	inc(req, args, res);
}

struct big {
	u_int n;
	char pad[BIG_REPLY];
};

static bool_t xdr_big(XDR *xdrs, struct big *b)
{
	return xdr_u_int(xdrs, &b->n) && xdr_opaque(xdrs, b->pad, sizeof(b->pad));
}

static void inc_big(struct rpc_req *req, void *args, void *res)
{
	inc(req, args, &((struct big *)res)->n);
}

#define PROC(n, fn, res, rsz, fl)                                                                  \
	[n] = {#n, (xdrproc_t)xdr_u_int, (xdrproc_t)res, sizeof(u_int), rsz, fn, NULL, fl}
static const struct rpc_proc_desc procs[] = {
	PROC(P_INC, inc, xdr_u_int, sizeof(u_int), RPC_DESC_REPLY_CACHE),
	PROC(P_INC_PLAIN, inc, xdr_u_int, sizeof(u_int), 0),
	PROC(P_INC_BLOCK, inc_block, xdr_u_int, sizeof(u_int), RPC_DESC_REPLY_CACHE),
	PROC(P_INC_BIG, inc_big, xdr_big, sizeof(struct big), RPC_DESC_REPLY_CACHE),
	PROC(P_INC_LOOP, inc_loop, xdr_u_int, sizeof(u_int), RPC_DESC_REPLY_CACHE),
};
static const struct rpc_program prog = {
	.prog = PROG, .vers = VERS, .procs = procs, .nprocs = sizeof(procs) / sizeof(procs[0])};

static const char key_bytes[] = "0123456789abcdef0123456789abcdef";

struct fx {
	struct rpc_server *srv;
	struct rpc_clnt clnt; /* only for encoding calls */
	struct integrity_key key;
	struct sockaddr_in peer;
};

static const struct rpc_clnt_ops no_ops;

static struct fx *fx_new(unsigned entries, int integrity)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct rpc_server_params sp = {.threads = 1, .drc_entries = entries};

	assert_non_null(f);
	if (integrity) {
		assert_int_equal(integrity_key_set(&f->key, key_bytes, 32, 0), 0);
		sp.key = &f->key;
	}
	assert_int_equal(rpc_server_create(&sp, &f->srv), 0);
	assert_int_equal(rpc_server_add_program(f->srv, &prog), 0);
	rpc_clnt_init(&f->clnt, &no_ops);
	f->clnt.cred.uid = 1000;
	f->clnt.cred.gid = 1000;
	if (integrity)
		f->clnt.key = &f->key;
	f->peer = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons(700)};
	f->peer.sin_addr.s_addr = htonl(0x0a000001);
	runs = 0;
	return f;
}

static void fx_free(struct fx *f)
{
	rpc_server_destroy(f->srv);
	integrity_key_clear(&f->key);
	free(f);
}

/* Dispatch the call (proc, xid, amount) from f->peer, on an event loop if
 * nowait: the dispatcher's return code; *ran_as gets the counter value the
 * reply carries (or 0). */
static int dispatch_on(struct fx *f, int nowait, uint32_t proc, uint32_t xid, u_int amount,
		       u_int *ran_as, uint8_t *reply, size_t *reply_len)
{
	uint8_t call[512], room[REPLY_ROOM];
	struct big res = {0};
	struct rpc_call c = {.prog = PROG,
			     .vers = VERS,
			     .proc = proc,
			     .xdr_args = (xdrproc_t)xdr_u_int,
			     .args = &amount,
			     .xdr_res = (xdrproc_t)(proc == P_INC_BIG ? (xdrproc_t)xdr_big
								      : (xdrproc_t)xdr_u_int),
			     .res = &res};
	struct rpc_xreq x = {0};
	int len = rpc_encode_call(&f->clnt, xid, &c, call, sizeof(call), NULL);
	int rc;

	assert_true(len > 0);
	x.call = call;
	x.call_len = (size_t)len;
	x.peer = (struct sockaddr *)&f->peer;
	x.peer_len = sizeof(f->peer);
	x.reply = reply ? reply : room;
	x.reply_cap = REPLY_ROOM;
	x.nowait = nowait;
	rc = rpc_dispatch(f->srv, &x);
	if (ran_as)
		*ran_as = 0;
	if (rc == 0) {
		assert_int_equal(rpc_decode_reply(&f->clnt, xid, &c, x.reply, x.reply_len, NULL),
				 0);
		if (ran_as)
			*ran_as = res.n;
		if (reply_len)
			*reply_len = x.reply_len;
	}
	rpc_dispatch_done(f->srv, &x);
	return rc;
}

/* The same on a worker. */
static int dispatch(struct fx *f, uint32_t proc, uint32_t xid, u_int amount, u_int *ran_as,
		    uint8_t *reply, size_t *reply_len)
{
	return dispatch_on(f, 0, proc, xid, amount, ran_as, reply, reply_len);
}

/* A call of RPC version 3 gets MSG_DENIED, RPC_MISMATCH, versions 2 to 2 (RFC
 * 5531), not GARBAGE_ARGS; the procedure does not run. */
static void test_rpc_version_mismatch(void **state)
{
	struct fx *f = fx_new(0, 0);
	u_int amount = 1;
	uint8_t call[512], reply[REPLY_ROOM];
	struct rpc_call c = {.prog = PROG,
			     .vers = VERS,
			     .proc = P_INC,
			     .xdr_args = (xdrproc_t)xdr_u_int,
			     .args = &amount};
	struct rpc_xreq x = {0};
	uint32_t w[6];
	int len = rpc_encode_call(&f->clnt, 77, &c, call, sizeof(call), NULL);

	assert_true(len > 0);
	call[11] = 3; /* rpcvers, the third word */
	x.call = call;
	x.call_len = (size_t)len;
	x.reply = reply;
	x.reply_cap = sizeof(reply);
	assert_int_equal(rpc_dispatch(f->srv, &x), 0);
	assert_true(x.reply_len >= sizeof(w));
	memcpy(w, reply, sizeof(w));
	assert_int_equal(ntohl(w[0]), 77);    /* xid */
	assert_int_equal(ntohl(w[1]), REPLY); /* reply */
	assert_int_equal(ntohl(w[2]), MSG_DENIED);
	assert_int_equal(ntohl(w[3]), RPC_MISMATCH);
	assert_int_equal(ntohl(w[4]), 2); /* low */
	assert_int_equal(ntohl(w[5]), 2); /* high */
	rpc_dispatch_done(f->srv, &x);
	assert_int_equal(runs, 0);
	fx_free(f);
}

static struct rpc_drc_stats stats(struct fx *f)
{
	struct rpc_drc_stats st;

	rpc_server_get_drc_stats(f->srv, &st);
	return st;
}

/* A retransmission gets the first run's reply, byte for byte; it does not run. */
static void test_replay(void **state)
{
	struct fx *f = fx_new(64, 0);
	uint8_t r1[REPLY_ROOM], r2[REPLY_ROOM];
	size_t l1, l2;
	u_int n;

	(void)state;
	assert_int_equal(dispatch(f, P_INC, 100, 1, &n, r1, &l1), 0);
	assert_int_equal(n, 1);
	assert_int_equal(dispatch(f, P_INC, 100, 1, &n, r2, &l2), 0);
	assert_int_equal(n, 1);
	assert_int_equal(runs, 1);
	assert_int_equal(l1, l2);
	assert_memory_equal(r1, r2, l1);
	assert_int_equal(stats(f).hits, 1);
	/* from another port of the same host (a reconnect): still the same call */
	f->peer.sin_port = htons(701);
	assert_int_equal(dispatch(f, P_INC, 100, 1, &n, NULL, NULL), 0);
	assert_int_equal(n, 1);
	assert_int_equal(stats(f).hits, 2);
	fx_free(f);
}

/* A call that gives up on an event loop leaves no entry and no miss behind:
 * the worker that runs it again looks it up once, and a retransmission after
 * that is answered from the cache. */
static void test_loop_gave_up(void **state)
{
	struct fx *f = fx_new(64, 0);
	u_int n;

	(void)state;
	assert_int_equal(dispatch_on(f, 1, P_INC_LOOP, 300, 1, &n, NULL, NULL), -EAGAIN);
	assert_int_equal(stats(f).entries, 0);
	assert_int_equal(stats(f).misses, 0);
	assert_int_equal(dispatch(f, P_INC_LOOP, 300, 1, &n, NULL, NULL), 0);
	assert_int_equal(n, 1);
	assert_int_equal(stats(f).misses, 1);
	assert_int_equal(stats(f).entries, 1);
	assert_int_equal(dispatch_on(f, 1, P_INC_LOOP, 300, 1, &n, NULL, NULL), 0);
	assert_int_equal(n, 1); /* replayed on the loop, not run */
	assert_int_equal(stats(f).hits, 1);
	assert_int_equal(runs, 1);
	fx_free(f);
}

/* What is not the same call runs: another xid, host, user, arguments or
 * procedure, and procedures the program did not mark. */
static void test_not_the_same_call(void **state)
{
	struct fx *f = fx_new(64, 0);
	u_int n;

	(void)state;
	assert_int_equal(dispatch(f, P_INC, 200, 1, &n, NULL, NULL), 0);
	assert_int_equal(dispatch(f, P_INC, 201, 1, &n, NULL, NULL), 0); /* xid */
	assert_int_equal(n, 2);
	f->peer.sin_addr.s_addr = htonl(0x0a000002);
	assert_int_equal(dispatch(f, P_INC, 200, 1, &n, NULL, NULL), 0); /* host */
	assert_int_equal(n, 3);
	f->clnt.cred.uid = 1001;
	assert_int_equal(dispatch(f, P_INC, 200, 1, &n, NULL, NULL), 0); /* user */
	assert_int_equal(n, 4);
	assert_int_equal(dispatch(f, P_INC, 200, 5, &n, NULL, NULL), 0); /* arguments */
	assert_int_equal(n, 9);
	assert_int_equal(dispatch(f, P_INC_PLAIN, 300, 1, &n, NULL, NULL), 0);
	assert_int_equal(dispatch(f, P_INC_PLAIN, 300, 1, &n, NULL, NULL), 0); /* not marked */
	assert_int_equal(n, 11);
	assert_int_equal(stats(f).hits, 0);
	assert_int_equal(stats(f).entries, 5);
	fx_free(f);
}

struct blocked {
	struct fx *f;
	u_int n;
	int rc;
};

static void *run_blocked(void *arg)
{
	struct blocked *b = arg;

	b->rc = dispatch(b->f, P_INC_BLOCK, 400, 1, &b->n, NULL, NULL);
	return NULL;
}

/* A retransmission while the first run is still going is dropped; once the
 * first run answered, the next one gets its reply. */
static void test_in_progress_dropped(void **state)
{
	struct fx *f = fx_new(64, 0);
	struct blocked b = {.f = f};
	pthread_t t;
	u_int n;

	(void)state;
	sem_init(&entered, 0, 0);
	sem_init(&release, 0, 0);
	assert_int_equal(pthread_create(&t, NULL, run_blocked, &b), 0);
	sem_wait(&entered);
	assert_int_equal(dispatch(f, P_INC_BLOCK, 400, 1, &n, NULL, NULL), -EALREADY);
	assert_int_equal(stats(f).drops, 1);
	sem_post(&release);
	pthread_join(t, NULL);
	assert_int_equal(b.rc, 0);
	assert_int_equal(b.n, 1);
	assert_int_equal(dispatch(f, P_INC_BLOCK, 400, 1, &n, NULL, NULL), 0);
	assert_int_equal(n, 1);
	assert_int_equal(runs, 1);
	sem_destroy(&entered);
	sem_destroy(&release);
	fx_free(f);
}

/* Bounded: the oldest replies go first; a reply too long to keep is not kept. */
static void test_bounded(void **state)
{
	struct fx *f = fx_new(4, 0);
	u_int n;

	(void)state;
	for (uint32_t xid = 500; xid < 510; xid++)
		assert_int_equal(dispatch(f, P_INC, xid, 1, &n, NULL, NULL), 0);
	assert_int_equal(stats(f).entries, 4);
	assert_int_equal(dispatch(f, P_INC, 509, 1, &n, NULL, NULL), 0);
	assert_int_equal(n, 10); /* kept */
	assert_int_equal(dispatch(f, P_INC, 500, 1, &n, NULL, NULL), 0);
	assert_int_equal(n, 11); /* gone: ran again */
	assert_int_equal(dispatch(f, P_INC_BIG, 600, 1, &n, NULL, NULL), 0);
	assert_int_equal(dispatch(f, P_INC_BIG, 600, 1, &n, NULL, NULL), 0);
	assert_int_equal(n, 13);
	fx_free(f);
}

/* With the integrity flavour every send has a new sequence number and MIC: a
 * retransmission is still recognised, and the replayed reply verifies. */
static void test_integrity_retransmission(void **state)
{
	struct fx *f = fx_new(64, 1);
	u_int n;

	(void)state;
	assert_int_equal(dispatch(f, P_INC, 700, 1, &n, NULL, NULL), 0);
	assert_int_equal(dispatch(f, P_INC, 700, 1, &n, NULL, NULL), 0);
	assert_int_equal(n, 1);
	assert_int_equal(stats(f).hits, 1);
	fx_free(f);
}

/* No cache configured: every call runs. */
static void test_off(void **state)
{
	struct fx *f = fx_new(0, 0);
	u_int n;

	(void)state;
	assert_int_equal(dispatch(f, P_INC, 800, 1, &n, NULL, NULL), 0);
	assert_int_equal(dispatch(f, P_INC, 800, 1, &n, NULL, NULL), 0);
	assert_int_equal(n, 2);
	assert_int_equal(stats(f).capacity, 0);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replay),
		cmocka_unit_test(test_loop_gave_up),
		cmocka_unit_test(test_not_the_same_call),
		cmocka_unit_test(test_in_progress_dropped),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_integrity_retransmission),
		cmocka_unit_test(test_off),
		cmocka_unit_test(test_rpc_version_mismatch),
	};

	return cmocka_run_group_tests_name("rpc_drc", tests, NULL, NULL);
}
