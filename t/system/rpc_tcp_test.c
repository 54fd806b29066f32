/* rpc_tcp_test: the RPC layer over TCP with the bulk test program. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <poll.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "bulkprog.h"
#include "common/rpc/integrity.h"
#include "common/base/net.h"
#include "common/rpc/rpc_replay.h"
#include "common/rpc/rpc_tcp.h"
#include "rpcrdma_test_util.h"

#define MAX_RECORD	 (BULK_MAXDATA + 65536)
#define SEND_DEADLINE_MS 500

static const char key_bytes[] = "0123456789abcdef0123456789abcdef";
static const char bad_key_bytes[] = "0123456789abcdef0123456789abcdeX";

struct fixture {
	struct integrity_key key;
	struct rpc_server *srv;
	struct tcp_listener *l;
	char port[16];
};

static int setup_with(void **state, int with_key)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct rpc_server_params sp = {.threads = 4};
	struct rpc_tcp_params tp = {.max_record = MAX_RECORD,
				    .max_reply = 65536,
				    .max_inflight = 32,
				    .send_deadline_ms = SEND_DEADLINE_MS};

	assert_non_null(f);
	if (with_key) {
		assert_int_equal(integrity_key_set(&f->key, key_bytes, 32, 0), 0);
		sp.key = &f->key;
	}
	assert_int_equal(rpc_server_create(&sp, &f->srv), 0);
	assert_int_equal(rpc_server_add_program(f->srv, &bulk_program), 0);
	assert_int_equal(rpc_tcp_listen(f->srv, "127.0.0.1", "0", &tp, &f->l), 0);
	snprintf(f->port, sizeof(f->port), "%d", rpc_tcp_port(f->l));
	*state = f;
	return 0;
}

static int setup(void **state)
{
	return setup_with(state, 0);
}

static int setup_key(void **state)
{
	return setup_with(state, 1);
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	rpc_tcp_stop(f->l);
	rpc_server_destroy(f->srv);
	integrity_key_clear(&f->key);
	free(f);
	return 0;
}

static struct rpc_clnt *connect_clnt(struct fixture *f)
{
	struct rpc_clnt *c = NULL;

	assert_int_equal(rpc_tcp_clnt_create("127.0.0.1", f->port, 5000, MAX_RECORD, &c), 0);
	c->cred.uid = 1000;
	c->cred.gid = 1000;
	return c;
}

/* The bulk calls are the transport-neutral helpers of the RPC/RDMA tests. */
#define do_put rrt_put
#define do_get rrt_get

static int call_simple(struct rpc_clnt *c, uint32_t prog, uint32_t vers, uint32_t proc)
{
	struct rpc_call call = {.prog = prog,
				.vers = vers,
				.proc = proc,
				.xdr_args = (xdrproc_t)xdr_void,
				.xdr_res = (xdrproc_t)xdr_void};
	int rc = rpc_clnt_call(c, &call);

	if (rc == 0)
		rpc_clnt_free_res(c, &call);
	return rc;
}

/* An ECHO of in, its reply not decoded (for calls encoded and sent raw). */
static struct rpc_call echo_call(struct bulk_blob *in)
{
	return (struct rpc_call){.prog = BULKPROG,
				 .vers = BULKVERS,
				 .proc = BULK_ECHO,
				 .xdr_args = (xdrproc_t)xdr_bulk_blob,
				 .args = in};
}

static void null_and_echo(void **state)
{
	struct rpc_clnt *c = connect_clnt(*state);
	char msg[] = "hello over TCP";
	struct bulk_blob in = {sizeof(msg), msg}, out = {0};
	struct rpc_call call = {.prog = BULKPROG,
				.vers = BULKVERS,
				.proc = BULK_ECHO,
				.xdr_args = (xdrproc_t)xdr_bulk_blob,
				.args = &in,
				.xdr_res = (xdrproc_t)xdr_bulk_blob,
				.res = &out};

	assert_int_equal(call_simple(c, BULKPROG, BULKVERS, BULK_NULL), 0);
	assert_int_equal(rpc_clnt_call(c, &call), 0);
	assert_int_equal(out.len, sizeof(msg));
	assert_memory_equal(out.data, msg, sizeof(msg));
	rpc_clnt_free_res(c, &call);
	rpc_clnt_destroy(c);
}

static const size_t sizes[] = {0, 1, 3, 1023, 1024, 4096, 65537, 1 << 20};

static void bulk_both_ways(void **state)
{
	struct rpc_clnt *c = connect_clnt(*state);

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		assert_int_equal(do_put(c, (uint32_t)i + 7, sizes[i]), 0);
		assert_int_equal(do_get(c, (uint32_t)i + 9, sizes[i]), 0);
	}
	rpc_clnt_destroy(c);
}

static void long_reply_and_long_call(void **state)
{
	struct rpc_clnt *c = connect_clnt(*state);
	u_int n = 200000;
	struct bulk_blob big = {0}, in = {300000, malloc(300000)};
	struct bulk_sum s = {0};
	struct rpc_call call = {.prog = BULKPROG,
				.vers = BULKVERS,
				.proc = BULK_BIG,
				.xdr_args = (xdrproc_t)xdr_u_int,
				.args = &n,
				.xdr_res = (xdrproc_t)xdr_bulk_blob,
				.res = &big};
	char *want = malloc(n);

	/* the TCP server's reply room is 64 KiB: a 200 KB non-DDP reply is refused */
	assert_int_equal(rpc_clnt_call(c, &call), -EIO);
	n = 60000;
	assert_int_equal(rpc_clnt_call(c, &call), 0);
	bulk_fill(want, n, n);
	assert_int_equal(big.len, n);
	assert_memory_equal(big.data, want, n);
	rpc_clnt_free_res(c, &call);

	bulk_fill(in.data, in.len, 3);
	call = (struct rpc_call){.prog = BULKPROG,
				 .vers = BULKVERS,
				 .proc = BULK_SUM,
				 .xdr_args = (xdrproc_t)xdr_bulk_blob,
				 .args = &in,
				 .xdr_res = (xdrproc_t)xdr_bulk_sum,
				 .res = &s};
	assert_int_equal(rpc_clnt_call(c, &call), -ENOSPC); /* over the client's call room */
	in.len = 60000;
	assert_int_equal(rpc_clnt_call(c, &call), 0);
	assert_int_equal(s.sum, bulk_checksum(in.data, in.len));
	rpc_clnt_free_res(c, &call);
	free(in.data);
	free(want);
	rpc_clnt_destroy(c);
}

/* Replies start in 64 KiB and grow to max_reply when their results need it. */
static void reply_room_grows(void **state)
{
	struct fixture *f = *state;
	struct rpc_tcp_params tp = {
		.max_record = MAX_RECORD, .max_reply = 1 << 20, .max_inflight = 8};
	struct tcp_listener *l;
	struct rpc_clnt *c;
	char port[16];

	assert_int_equal(rpc_tcp_listen(f->srv, "127.0.0.1", "0", &tp, &l), 0);
	snprintf(port, sizeof(port), "%d", rpc_tcp_port(l));
	assert_int_equal(rpc_tcp_clnt_create("127.0.0.1", port, 5000, MAX_RECORD, &c), 0);
	assert_int_equal(rrt_big(c, 200000), 0);     /* grown past the first 64 KiB */
	assert_int_equal(rrt_big(c, 2000000), -EIO); /* past max_reply: SYSTEM_ERR */
	assert_int_equal(rrt_big(c, 1000), 0);	     /* and the connection goes on */
	rpc_clnt_destroy(c);
	rpc_tcp_stop(l);
}

static void refusals(void **state)
{
	struct rpc_clnt *c = connect_clnt(*state);

	assert_int_equal(call_simple(c, BULKPROG + 1, BULKVERS, 0), -EPROTO);
	assert_int_equal(call_simple(c, BULKPROG, BULKVERS + 1, 0), -EPROTO);
	assert_int_equal(call_simple(c, BULKPROG, BULKVERS, BULK_NPROCS), -EPROTO);
	/* PUT whose arguments are only a seed: garbage arguments */
	assert_int_equal(call_simple(c, BULKPROG, BULKVERS, BULK_PUT), -EINVAL);
	/* the connection is still good */
	assert_int_equal(do_put(c, 1, 100), 0);
	rpc_clnt_destroy(c);
}

/* A raw connection sending a record longer than the server takes is closed,
 * and the server goes on serving others. */
static void oversized_record_closes(void **state)
{
	struct fixture *f = *state;
	int fd = net_connect_tcp("127.0.0.1", f->port, 5000);
	uint32_t mark = htonl(0x80000000u | (MAX_RECORD + 1));
	struct rpc_clnt *c;
	char byte;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, &mark, 4), 4);
	assert_int_equal(read(fd, &byte, 1), 0); /* closed by the server */
	close(fd);
	c = connect_clnt(f);
	assert_int_equal(do_get(c, 2, 5000), 0);
	rpc_clnt_destroy(c);
}

static void integrity_good_key(void **state)
{
	struct fixture *f = *state;
	struct rpc_clnt *c = connect_clnt(f);

	c->key = &f->key;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		assert_int_equal(do_put(c, (uint32_t)i, sizes[i]), 0);
		assert_int_equal(do_get(c, (uint32_t)i, sizes[i]), 0);
	}
	c->key = NULL; /* AUTH_SYS is still accepted: exports decide what they require */
	assert_int_equal(do_put(c, 5, 5000), 0);
	rpc_clnt_destroy(c);
}

static void integrity_wrong_key(void **state)
{
	struct rpc_clnt *c = connect_clnt(*state);
	struct integrity_key bad;

	assert_int_equal(integrity_key_set(&bad, bad_key_bytes, 32, 0), 0);
	c->key = &bad;
	assert_int_equal(do_put(c, 1, 4096), -EACCES);
	assert_int_equal(do_get(c, 1, 4096), -EACCES);
	rpc_clnt_destroy(c);
	integrity_key_clear(&bad);
}

/* Encode a call with a good MIC, flip one byte of the bulk data, send it raw:
 * the server answers AUTH_ERROR / AUTH_BADVERF and runs nothing. */
static void integrity_tampered_call(void **state)
{
	struct fixture *f = *state;
	struct rpc_clnt *c = connect_clnt(f);
	struct bulk_put_args a = {.seed = 4, .data = {64, malloc(64)}};
	struct rpc_call call = {.prog = BULKPROG,
				.vers = BULKVERS,
				.proc = BULK_PUT,
				.xdr_args = (xdrproc_t)xdr_bulk_put_args,
				.args = &a};
	uint8_t buf[1024], *reply;
	uint32_t mark, w[5];
	size_t rlen;
	int fd, len;

	c->key = &f->key;
	bulk_fill(a.data.data, 64, 4);
	len = rpc_encode_call(c, 77, &call, buf + 4, sizeof(buf) - 4, NULL);
	assert_true(len > 64);
	buf[4 + len - 10] ^= 0x40;
	mark = htonl(0x80000000u | (uint32_t)len);
	memcpy(buf, &mark, 4);
	fd = net_connect_tcp("127.0.0.1", f->port, 5000);
	assert_int_equal(write(fd, buf, (size_t)len + 4), len + 4);
	assert_int_equal(rpc_rec_read(fd, 4096, &reply, &rlen), 0);
	assert_true(rlen >= sizeof(w));
	memcpy(w, reply, sizeof(w));
	assert_int_equal(ntohl(w[0]), 77); /* xid */
	assert_int_equal(ntohl(w[1]), REPLY);
	assert_int_equal(ntohl(w[2]), MSG_DENIED);
	assert_int_equal(ntohl(w[3]), AUTH_ERROR);
	assert_int_equal(ntohl(w[4]), AUTH_BADVERF);
	free(reply);
	close(fd);
	free(a.data.data);
	rpc_clnt_destroy(c);
}

/* Send a record raw on a new connection; whether a reply came within ms. */
static bool raw_call_answered(struct fixture *f, const uint8_t *rec, size_t len, int ms)
{
	int fd = net_connect_tcp("127.0.0.1", f->port, 5000);
	struct pollfd p = {.fd = fd, .events = POLLIN};
	bool answered;
	char b;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, rec, len), (ssize_t)len);
	answered = poll(&p, 1, ms) == 1 && read(fd, &b, 1) == 1;
	close(fd);
	return answered;
}

/* A recorded signed call, replayed on another connection, is dropped (as
 * RPCSEC_GSS drops replays); the same client's next call still runs. */
static void integrity_replay_dropped(void **state)
{
	struct fixture *f = *state;
	struct rpc_clnt *c = connect_clnt(f);
	char msg[] = "once only";
	struct bulk_blob in = {sizeof(msg), msg};
	struct rpc_call call = echo_call(&in);
	struct rpc_replay_stats st;
	uint8_t buf[1024];
	uint32_t mark;
	int len;

	c->key = &f->key;
	len = rpc_encode_call(c, 91, &call, buf + 4, sizeof(buf) - 4, NULL);
	assert_true(len > 0);
	mark = htonl(0x80000000u | (uint32_t)len);
	memcpy(buf, &mark, 4);
	assert_true(raw_call_answered(f, buf, (size_t)len + 4, 5000));
	assert_false(raw_call_answered(f, buf, (size_t)len + 4, 500)); /* the replay */
	rpc_server_get_replay_stats(f->srv, &st);
	assert_int_equal(st.replays, 1);
	assert_int_equal(do_get(c, 3, 4096), 0); /* a new number runs */
	rpc_clnt_destroy(c);
}

struct worker_arg {
	struct fixture *f;
	int id;
	int failures;
};

static void *concurrent_worker(void *p)
{
	struct worker_arg *w = p;
	struct rpc_clnt *c = NULL;

	if (rpc_tcp_clnt_create("127.0.0.1", w->f->port, 5000, MAX_RECORD, &c)) {
		w->failures++;
		return NULL;
	}
	for (int i = 0; i < 40; i++) {
		size_t len = (size_t)(w->id * 4099 + i * 997) % 200000;

		w->failures += do_put(c, (uint32_t)(w->id * 100 + i), len) != 0;
		w->failures += do_get(c, (uint32_t)(w->id * 100 + i), len) != 0;
	}
	rpc_clnt_destroy(c);
	return NULL;
}

static void concurrent_clients(void **state)
{
	pthread_t t[8];
	struct worker_arg w[8];

	for (int i = 0; i < 8; i++) {
		w[i] = (struct worker_arg){.f = *state, .id = i};
		pthread_create(&t[i], NULL, concurrent_worker, &w[i]);
	}
	for (int i = 0; i < 8; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(w[i].failures, 0);
	}
}

/* A client sends many calls with large replies and never reads. Its replies
 * fill the socket and wait in the server's queue, no worker waits on it;
 * another client is served meanwhile, and the send deadline drops the
 * connection. */
static void non_reading_client_dropped(void **state)
{
	struct fixture *f = *state;
	struct rpc_clnt *c = connect_clnt(f);
	struct rpc_call null = {.prog = BULKPROG,
				.vers = BULKVERS,
				.proc = BULK_NULL,
				.xdr_args = (xdrproc_t)xdr_void,
				.xdr_res = (xdrproc_t)xdr_void,
				.timeout_ms = 5000};
	int fd = rrt_tcp_flood_gets(f->port, 32, 1u << 20);
	size_t got;

	assert_true(fd >= 0);
	/* 32 MiB of replies fill both socket buffers and queue up behind them */
	assert_int_equal(rpc_clnt_call(c, &null), 0);
	rpc_clnt_free_res(c, &null);
	/* its connection was closed: what it reads now ends, well short of 32 MiB */
	assert_true(rrt_read_to_end(fd, 10000, &got));
	assert_true(got < 32u << 20);
	close(fd);
	rpc_clnt_destroy(c);
}

/* Many small calls in one write (more than max_inflight and READ_BURST; one
 * of them in three fragments), then nothing more: the server reads them all
 * at once (under its 8 KiB of read-ahead), takes them in bursts and answers
 * every one, though the socket has nothing left to say when it resumes. */
static void pipelined_calls_answered(void **state)
{
	enum { N = 60 };
	struct fixture *f = *state;
	struct rpc_clnt *c = connect_clnt(f);
	char msg[] = "pipelined";
	struct bulk_blob in = {sizeof(msg), msg};
	struct rpc_call call = echo_call(&in);
	size_t cap = N * 256, at = 0, rlen;
	uint8_t *buf = malloc(cap), *reply, seen[N] = {0};
	uint32_t mark, xid, w[6];
	struct timeval tv = {.tv_sec = 10};
	int fd;

	assert_non_null(buf);
	for (uint32_t i = 0; i < N; i++) {
		uint8_t one[256];
		int len = rpc_encode_call(c, 1000 + i, &call, one, sizeof(one), NULL);
		/* one call in fragments of 8, 8 and the rest bytes, the others whole */
		size_t cut[] = {0, 8, 16, (size_t)len}, frags = i == N / 2 ? 3 : 1;

		assert_true(len > 24 && len < 240);
		if (frags == 1)
			cut[1] = (size_t)len;
		for (size_t k = 0; k < frags; k++) {
			mark = htonl((k + 1 == frags ? 0x80000000u : 0) |
				     (uint32_t)(cut[k + 1] - cut[k]));
			memcpy(buf + at, &mark, 4);
			memcpy(buf + at + 4, one + cut[k], cut[k + 1] - cut[k]);
			at += 4 + cut[k + 1] - cut[k];
		}
	}
	assert_true(at < 8192); /* one read takes them all */
	fd = net_connect_tcp("127.0.0.1", f->port, 5000);
	assert_true(fd >= 0);
	/* a reply that never comes fails the read, not the test's deadline */
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	assert_int_equal(write(fd, buf, at), (ssize_t)at);
	for (int i = 0; i < N; i++) {
		assert_int_equal(rpc_rec_read(fd, 4096, &reply, &rlen), 0);
		assert_true(rlen >= sizeof(w));
		memcpy(w, reply, sizeof(w));
		assert_int_equal(ntohl(w[1]), REPLY);
		assert_int_equal(ntohl(w[2]), MSG_ACCEPTED);
		assert_int_equal(ntohl(w[5]), SUCCESS); /* the fragmented one too */
		xid = ntohl(w[0]) - 1000;
		assert_true(xid < N && !seen[xid]);
		seen[xid] = 1;
		free(reply);
	}
	close(fd);
	free(buf);
	rpc_clnt_destroy(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(null_and_echo, setup, teardown),
		cmocka_unit_test_setup_teardown(bulk_both_ways, setup, teardown),
		cmocka_unit_test_setup_teardown(long_reply_and_long_call, setup, teardown),
		cmocka_unit_test_setup_teardown(refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(reply_room_grows, setup, teardown),
		cmocka_unit_test_setup_teardown(oversized_record_closes, setup, teardown),
		cmocka_unit_test_setup_teardown(integrity_good_key, setup_key, teardown),
		cmocka_unit_test_setup_teardown(integrity_wrong_key, setup_key, teardown),
		cmocka_unit_test_setup_teardown(integrity_tampered_call, setup_key, teardown),
		cmocka_unit_test_setup_teardown(integrity_replay_dropped, setup_key, teardown),
		cmocka_unit_test_setup_teardown(concurrent_clients, setup, teardown),
		cmocka_unit_test_setup_teardown(non_reading_client_dropped, setup, teardown),
		cmocka_unit_test_setup_teardown(pipelined_calls_answered, setup, teardown),
	};
	return cmocka_run_group_tests_name("rpc_tcp", tests, NULL, NULL);
}
