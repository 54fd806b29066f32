/*
 * rpc_tcp_limits_test: what a TCP listener does against clients that would
 * hold its resources: connection limits (per address, and in all, shedding
 * the longest idle), the idle timeout (not while a call is in flight), a call
 * that stalls half-way, and accept failing for want of descriptors (backs
 * off, sheds an idle connection, and serves again). Each case checks the
 * listener's counters and that a well-behaved connection is still served.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "bulkprog.h"
#include "common/base/net.h"
#include "common/rpc/rpc_tcp.h"
#include "rpcrdma_test_util.h"
#include "test_fds.h"

#define MAX_RECORD (BULK_MAXDATA + 65536)

struct fixture {
	struct rpc_server *srv;
	struct tcp_listener *l;
	char port[16];
};

static struct fixture *start_budget(const struct rpc_tcp_params *limits, size_t budget)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct rpc_server_params sp = {.threads = 4, .mem_budget = budget};
	struct rpc_tcp_params tp = *limits;

	assert_non_null(f);
	tp.max_record = MAX_RECORD;
	tp.max_reply = tp.max_reply ? tp.max_reply : 65536;
	tp.max_inflight = tp.max_inflight ? tp.max_inflight : 8;
	assert_int_equal(rpc_server_create(&sp, &f->srv), 0);
	assert_int_equal(rpc_server_add_program(f->srv, &bulk_program), 0);
	assert_int_equal(rpc_tcp_listen(f->srv, "127.0.0.1", "0", &tp, &f->l), 0);
	snprintf(f->port, sizeof(f->port), "%d", rpc_tcp_port(f->l));
	return f;
}

static struct fixture *start(const struct rpc_tcp_params *limits)
{
	return start_budget(limits, 0);
}

static void stop(struct fixture *f)
{
	rpc_tcp_stop(f->l);
	rpc_server_destroy(f->srv);
	free(f);
}

static int raw_connect(struct fixture *f)
{
	int fd = net_connect_tcp("127.0.0.1", f->port, 5000);

	assert_true(fd >= 0);
	return fd;
}

/* Whether the server closed fd within ms (end of stream or an error). */
static bool closed_within(int fd, int ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	char b;

	return poll(&p, 1, ms) == 1 && read(fd, &b, 1) <= 0;
}

/* Whether fd stays open, with nothing to read, for ms. */
static bool open_for(int fd, int ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, ms) == 0;
}

/* One call of proc (no arguments but an optional u_int) on a connection of its own. */
static int call_on_new_conn(struct fixture *f, uint32_t proc, u_int *arg)
{
	struct rpc_clnt *c = NULL;
	struct rpc_call call = {.prog = BULKPROG,
				.vers = BULKVERS,
				.proc = proc,
				.xdr_args = arg ? (xdrproc_t)xdr_u_int : (xdrproc_t)xdr_void,
				.args = arg,
				.xdr_res = (xdrproc_t)xdr_void,
				.timeout_ms = 5000};
	int rc = rpc_tcp_clnt_create("127.0.0.1", f->port, 5000, MAX_RECORD, &c);

	if (rc)
		return rc;
	if ((rc = rpc_clnt_call(c, &call)) == 0)
		rpc_clnt_free_res(c, &call);
	rpc_clnt_destroy(c);
	return rc;
}

/* Whether a NULL call sent on fd is answered within ms. */
static bool null_answered(int fd, int ms)
{
	struct rpc_call null = {.prog = BULKPROG,
				.vers = BULKVERS,
				.proc = BULK_NULL,
				.xdr_args = (xdrproc_t)xdr_void};
	struct pollfd p = {.fd = fd, .events = POLLIN};
	struct rpc_clnt enc; /* only encodes */
	uint8_t buf[256], *reply = NULL;
	uint32_t mark, xid = 0;
	size_t len;
	int n;

	rpc_clnt_init(&enc, NULL);
	n = rpc_encode_call(&enc, 7, &null, buf + 4, sizeof(buf) - 4, NULL);
	mark = htonl(0x80000000u | (uint32_t)n);
	memcpy(buf, &mark, 4);
	if (n <= 0 || write(fd, buf, (size_t)n + 4) != n + 4 || poll(&p, 1, ms) != 1 ||
	    rpc_rec_read(fd, 4096, &reply, &len) != 0)
		return false;
	rpc_peek_xid(reply, len, &xid);
	free(reply);
	return xid == 7;
}

static struct rpc_tcp_stats stats(struct fixture *f)
{
	struct rpc_tcp_stats st;

	rpc_tcp_get_stats(f->l, &st);
	return st;
}

/* Wait (at most 3 s) until the listener holds n connections. */
static void wait_conns(struct fixture *f, unsigned n)
{
	for (int i = 0; i < 300 && stats(f).conns != n; i++)
		usleep(10000);
	assert_int_equal(stats(f).conns, n);
}

/* Three connections from one address with a limit of two: the third is
 * closed at once; the first two stay; once one goes, another may come. */
static void per_address_limit(void **state)
{
	struct fixture *f = start(&(struct rpc_tcp_params){.max_conns_per_addr = 2});
	int a = raw_connect(f), b = raw_connect(f), c = raw_connect(f), d;

	assert_true(closed_within(c, 3000));
	assert_true(open_for(a, 200));
	assert_true(open_for(b, 1));
	assert_int_equal(stats(f).refused, 1);
	close(a);
	wait_conns(f, 1);
	d = raw_connect(f);
	assert_true(open_for(d, 300));
	assert_int_equal(stats(f).refused, 1);
	close(b);
	close(c);
	close(d);
	stop(f);
}

/* At the total limit the connection idle the longest makes room; when every
 * connection is busy or new, the newcomer is refused. */
static void longest_idle_shed(void **state)
{
	struct fixture *f = start(&(struct rpc_tcp_params){.max_conns = 2});
	int a = raw_connect(f), b, c, d;

	wait_conns(f, 1);
	usleep(1200 * 1000); /* a: idle past SHED_MIN_IDLE_MS */
	b = raw_connect(f);
	wait_conns(f, 2);
	c = raw_connect(f);
	assert_true(closed_within(a, 3000));
	assert_true(open_for(b, 1));
	assert_true(open_for(c, 1));
	d = raw_connect(f); /* b and c are younger than a second: no room */
	assert_true(closed_within(d, 3000));
	assert_true(open_for(b, 100)); /* and they stay */
	assert_int_equal(stats(f).shed, 1);
	assert_int_equal(stats(f).refused, 1);
	close(a);
	close(b);
	close(c);
	close(d);
	stop(f);
}

/* A connection without calls is closed after idle_ms; one whose call runs
 * longer than that is not, and its reply arrives. */
static void idle_connections_closed(void **state)
{
	struct fixture *f = start(&(struct rpc_tcp_params){.idle_ms = 300});
	u_int ms = 900;
	int a = raw_connect(f);

	assert_int_equal(call_on_new_conn(f, BULK_SLEEP, &ms), 0);
	assert_true(closed_within(a, 3000));
	assert_int_equal(stats(f).idle_closed, 1);
	assert_int_equal(call_on_new_conn(f, BULK_NULL, NULL), 0);
	close(a);
	stop(f);
}

/* A client that sends part of a call and stops is dropped after the
 * deadline; one that sends nothing at all is idle, not stalled. */
static void stalled_call_dropped(void **state)
{
	struct fixture *f = start(&(struct rpc_tcp_params){.send_deadline_ms = 300});
	uint32_t mark = htonl(0x80000000u | 100);
	int a = raw_connect(f), b = raw_connect(f);

	assert_int_equal(write(a, &mark, 4), 4);
	assert_int_equal(write(a, "0123456789", 10), 10);
	assert_true(closed_within(a, 3000));
	assert_true(open_for(b, 600));
	assert_int_equal(stats(f).deadline_drops, 1);
	assert_int_equal(call_on_new_conn(f, BULK_NULL, NULL), 0);
	close(a);
	close(b);
	stop(f);
}

/* Out of descriptors: accept fails, the listener pauses instead of spinning,
 * sheds an idle connection, and the waiting client is then served. */
static void accept_out_of_descriptors(void **state)
{
	struct fixture *f = start(&(struct rpc_tcp_params){.max_conns = 64});
	int idle1 = raw_connect(f), idle2 = raw_connect(f), late;
	static struct test_fds fds;
	struct rpc_tcp_stats st;

	usleep(1200 * 1000);			  /* both idle past SHED_MIN_IDLE_MS */
	assert_int_equal(test_fds_fill(&fds), 0); /* room for the client's socket only */
	late = raw_connect(f);
	usleep(300 * 1000);
	st = stats(f);
	assert_true(st.accept_errors >= 1);
	assert_true(st.accept_errors <= 10); /* backing off, not spinning */
	assert_true(st.shed >= 1);
	/* the shed connection's descriptor is free again: late is taken */
	assert_true(null_answered(late, 3000));
	assert_int_equal(test_fds_release(&fds), 0);
	assert_int_equal(call_on_new_conn(f, BULK_NULL, NULL), 0);
	close(idle1);
	close(idle2);
	close(late);
	stop(f);
}

/* Each call holds room for its largest reply (about 1 MiB here) from its
 * first byte: a budget of 4 MiB holds the server to 3 calls of a flood, never
 * more (the rest wait in the kernel), and gives it back when the flooder is
 * dropped; a well-behaved client is served then. */
static void memory_budget_holds(void **state)
{
	struct fixture *f = start_budget(&(struct rpc_tcp_params){.max_reply = (1u << 20) + 65536,
								  .max_inflight = 32,
								  .send_deadline_ms = 500},
					 4u << 20);
	size_t used, peak, budget;
	int fd = rrt_tcp_flood_gets(f->port, 32, 1u << 20);

	usleep(300 * 1000);
	rpc_server_get_mem(f->srv, &used, &peak, &budget);
	assert_true(used > 0);
	assert_true(peak <= budget);
	usleep(1500 * 1000); /* past the send deadline: dropped, for it never read */
	assert_true(rrt_read_to_end(fd, 5000, NULL));
	assert_int_equal(call_on_new_conn(f, BULK_NULL, NULL), 0);
	for (int i = 0; i < 100 && (rpc_server_get_mem(f->srv, &used, &peak, &budget), used); i++)
		usleep(10000);
	assert_int_equal(used, 0);
	assert_true(peak <= budget);
	close(fd);
	stop(f);
}

/* One connection may hold max_held: a flooder cannot take a larger budget
 * for itself; another client is served meanwhile. */
static void connection_holds_its_share(void **state)
{
	struct fixture *f = start_budget(&(struct rpc_tcp_params){.max_reply = (1u << 20) + 65536,
								  .max_inflight = 32,
								  .max_held = 3u << 20,
								  .send_deadline_ms = 5000},
					 64u << 20);
	size_t used, peak, budget;
	int fd = rrt_tcp_flood_gets(f->port, 32, 1u << 20);

	usleep(500 * 1000);
	assert_int_equal(call_on_new_conn(f, BULK_NULL, NULL), 0); /* while it floods */
	rpc_server_get_mem(f->srv, &used, &peak, &budget);
	assert_true(peak <= (3u << 20) + (2u << 20)); /* its share, and the NULL call's */
	close(fd);
	stop(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(per_address_limit),
		cmocka_unit_test(longest_idle_shed),
		cmocka_unit_test(idle_connections_closed),
		cmocka_unit_test(stalled_call_dropped),
		cmocka_unit_test(accept_out_of_descriptors),
		cmocka_unit_test(memory_budget_holds),
		cmocka_unit_test(connection_holds_its_share),
	};
	return cmocka_run_group_tests_name("rpc_tcp_limits", tests, NULL, NULL);
}
