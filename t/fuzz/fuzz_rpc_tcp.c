/*
 * fuzz_rpc_tcp: libFuzzer target for RPC over TCP as a hostile client speaks
 * it: record marking (RFC 5531: fragment headers, last-fragment bits, records
 * cut anywhere, records over the limit) and the calls inside, through the
 * server's own TCP transport (common/rpc/rpc_tcp_conn.c) on loopback, with the
 * NFSv3 and MOUNT programs of fuzz_common.h (procedures that do nothing) and the
 * reply cache. Each input is one connection: its bytes are written as
 * they are, replies are read and dropped, then the write side is shut. The
 * server must close the connection (at the latest at that EOF) without a
 * crash or a sanitizer report. An input that starts with "CLNT" is the other
 * direction: the rest is what a server sends a client, read record by record
 * with the client's reader (rpc_rec_read, as rpc_tcp_clnt.c does) until the
 * stream ends. Built by `make fuzz`, run by `make fuzz-run`; seeds in
 * t/fuzz/corpus/rpc_tcp.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "common/base/log.h"
#include "common/nfs/nfs3_xdr.h"
#include "common/nfs/nfs_prog.h"
#include "common/rpc/rpc.h"
#include "common/rpc/rpc_tcp.h"
#include "t/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define WAIT_MS	   5000
#define MAX_RECORD (256u << 10) /* small, so that inputs reach the limit */

static struct sockaddr_in addr;

/* A server with both programs on a loopback TCP port, made once. */
static void setup(void)
{
	struct rpc_server_params sp = {.threads = 2, .drc_entries = 64, .inline_calls = 1};
	struct rpc_tcp_params tp = {.max_record = MAX_RECORD,
				    .max_reply = 1u << 20,
				    .max_inflight = 8,
				    .send_deadline_ms = 2000,
				    .max_conns = 64,
				    .loops = 1,
				    .max_held = 4u << 20};
	struct tcp_listener *l;
	struct rpc_server *srv;

	log_set_level(LOG_LVL_ERR);
	if (rpc_server_create(&sp, &srv) != 0 || fuzz_add_nfs_programs(srv) != 0 ||
	    rpc_tcp_listen(srv, "127.0.0.1", "0", &tp, &l) != 0)
		fuzz_die("fuzz_rpc_tcp", "cannot start the server");
	addr.sin_family = AF_INET;
	addr.sin_port = htons((uint16_t)rpc_tcp_port(l));
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
}

/* Read and drop what fd has now; 1 once it is at its end (or failed). */
static int drain(int fd)
{
	uint8_t sink[16384];
	ssize_t r;

	while ((r = read(fd, sink, sizeof(sink))) > 0)
		;
	return r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

/* "CLNT" inputs: the client's record reader over the bytes of a stream. */
static void client_side(const uint8_t *data, size_t size)
{
	uint8_t *rec;
	size_t len;
	uint32_t xid;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0 ||
	    fcntl(sv[0], F_SETFL, O_NONBLOCK) != 0)
		fuzz_die("fuzz_rpc_tcp", "socketpair");
	while (size) { /* what the socket holds (more than -max_len) */
		ssize_t w = send(sv[0], data, size, MSG_NOSIGNAL);

		if (w <= 0)
			break;
		data += w;
		size -= (size_t)w;
	}
	shutdown(sv[0], SHUT_WR);
	while (rpc_rec_read(sv[1], MAX_RECORD, &rec, &len) == 0) {
		(void)rpc_peek_xid(rec, len, &xid);
		free(rec);
	}
	close(sv[0]);
	close(sv[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	long long end;
	int fd, at_end = 0;

	if (size >= 4 && memcmp(data, "CLNT", 4) == 0) {
		client_side(data + 4, size - 4);
		return 0;
	}
	if (!addr.sin_port)
		setup();
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0 ||
	    fcntl(fd, F_SETFL, O_NONBLOCK) != 0)
		fuzz_die("fuzz_rpc_tcp", "cannot connect to the server");
	/* write it all while reading the replies, so neither side waits for the other */
	end = fuzz_now_ms() + WAIT_MS;
	while (size && !at_end && fuzz_now_ms() < end) {
		struct pollfd p = {.fd = fd, .events = POLLIN | POLLOUT};
		ssize_t w;

		if (poll(&p, 1, 50) <= 0)
			continue;
		if (p.revents & (POLLIN | POLLHUP | POLLERR))
			at_end = drain(fd);
		if (at_end || !(p.revents & POLLOUT))
			continue;
		w = send(fd, data, size, MSG_NOSIGNAL);
		if (w < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (w <= 0)
			break; /* the server closed it: allowed */
		data += w;
		size -= (size_t)w;
	}
	shutdown(fd, SHUT_WR);
	/* the server closes the connection at our EOF at the latest */
	end = fuzz_now_ms() + WAIT_MS;
	while (!at_end) {
		struct pollfd p = {.fd = fd, .events = POLLIN};

		if (fuzz_now_ms() > end)
			fuzz_die("fuzz_rpc_tcp",
				 "the connection was not closed after the client's EOF");
		if (poll(&p, 1, 50) > 0)
			at_end = drain(fd);
	}
	close(fd);
	return 0;
}
