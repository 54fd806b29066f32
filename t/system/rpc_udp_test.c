/*
 * rpc_udp_test: RPC over UDP. A call is answered; a flood of slow calls is
 * held to max_inflight at once (the rest wait in the kernel or are dropped
 * there), and a call sent after the flood is still answered.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "bulkprog.h"
#include "common/base/net.h"
#include "common/rpc/rpc_udp.h"

#define MAX_INFLIGHT 4

struct fixture {
	struct rpc_server *srv;
	struct udp_listener *l;
	struct sockaddr_in to;
	int fd;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct rpc_server_params sp = {.threads = 2};
	int port = net_free_port();
	char p[16];

	assert_non_null(f);
	snprintf(p, sizeof(p), "%d", port);
	assert_int_equal(rpc_server_create(&sp, &f->srv), 0);
	assert_int_equal(rpc_server_add_program(f->srv, &bulk_program), 0);
	assert_int_equal(rpc_udp_listen(f->srv, "127.0.0.1", p, MAX_INFLIGHT, &f->l), 0);
	f->to.sin_family = AF_INET;
	f->to.sin_port = htons((uint16_t)port);
	f->to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	f->fd = socket(AF_INET, SOCK_DGRAM, 0);
	assert_true(f->fd >= 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	close(f->fd);
	rpc_udp_stop(f->l);
	rpc_server_destroy(f->srv);
	free(f);
	return 0;
}

/* Send a call of proc by hand (AUTH_NONE), with one u_int argument if arg. */
static void send_call(struct fixture *f, uint32_t xid, uint32_t proc, const uint32_t *arg)
{
	struct rpc_call call = {.prog = BULKPROG,
				.vers = BULKVERS,
				.proc = proc,
				.xdr_args = arg ? (xdrproc_t)xdr_u_int : (xdrproc_t)xdr_void,
				.args = (void *)arg};
	struct rpc_clnt enc; /* only encodes */
	uint8_t m[256];
	int len;

	rpc_clnt_init(&enc, NULL);
	len = rpc_encode_call(&enc, xid, &call, m, sizeof(m), NULL);
	assert_true(len > 0);
	assert_int_equal(sendto(f->fd, m, (size_t)len, 0, (struct sockaddr *)&f->to, sizeof(f->to)),
			 len);
}

/* Wait (at most ms) for the reply to xid, skipping others. */
static bool reply_to(struct fixture *f, uint32_t xid, int ms)
{
	struct pollfd p = {.fd = f->fd, .events = POLLIN};
	uint32_t r[16];

	while (poll(&p, 1, ms) == 1) {
		ssize_t n = recv(f->fd, r, sizeof(r), 0);

		if (n >= 24 && ntohl(r[0]) == xid && ntohl(r[1]) == 1 && ntohl(r[2]) == 0)
			return true;
	}
	return false;
}

static void null_answered(void **state)
{
	struct fixture *f = *state;

	send_call(f, 1, BULK_NULL, NULL);
	assert_true(reply_to(f, 1, 5000));
}

static void flood_bounded(void **state)
{
	struct fixture *f = *state;
	uint32_t ms = 10;

	for (uint32_t xid = 100; xid < 300; xid++)
		send_call(f, xid, BULK_SLEEP, &ms);
	send_call(f, 7, BULK_NULL, NULL);
	assert_true(reply_to(f, 7, 10000));
	assert_true(rpc_udp_inflight_peak(f->l) >= 2);
	assert_true(rpc_udp_inflight_peak(f->l) <= MAX_INFLIGHT);
	send_call(f, 8, BULK_NULL, NULL);
	assert_true(reply_to(f, 8, 5000));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(null_answered, setup, teardown),
		cmocka_unit_test_setup_teardown(flood_bounded, setup, teardown),
	};
	return cmocka_run_group_tests_name("rpc_udp", tests, NULL, NULL);
}
