/* rpcrdma_test_util.c: servers, clients and bulk calls for the RPC/RDMA tests. */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "bulkprog.h"
#include "common/base/net.h"
#include "rpcrdma_test_util.h"

static const char key_bytes[] = "0123456789abcdef0123456789abcdef";

void rrt_params(struct rr_params *p, unsigned modes, enum rr_reg reg)
{
	rr_params_defaults_for(RR_ROLE_SERVER, p); /* the server's limits and deadlines */
	p->provider = "soft";
	p->modes = modes;
	p->reg = reg;
	p->credits = 16;
	p->trusted_peers = 1;
	p->arena_size = 32u << 20;
	p->cache_budget = 16u << 20;
	p->fastreg_pool = 64;
	p->mem_budget = 1u << 30;
	p->call_timeout_ms = 20000;
}

int rrt_server_start(struct rrt_server *t, unsigned modes, enum rr_reg reg, int with_key)
{
	struct rr_params p;

	rrt_params(&p, modes, reg);
	return rrt_server_start_p(t, &p, with_key);
}

/* The bulk program's NULL, GET and PUT may run on the loop that received
 * them, and SLEEP, which holds the loop up (what a test may want). */
static int bulk_may_inline(void *ctx, uint32_t proc)
{
	return proc == BULK_NULL || proc == BULK_GET || proc == BULK_PUT || proc == BULK_SLEEP;
}

static int server_start(struct rrt_server *t, const struct rr_params *pp, int with_key,
			int inline_calls)
{
	static struct rpc_program inline_prog;
	struct rpc_server_params sp = {.threads = 8, .inline_calls = inline_calls};
	const struct rpc_program *prog = &bulk_program;
	struct rr_params p = *pp;
	int rc;

	if (inline_calls) {
		inline_prog = bulk_program;
		inline_prog.may_inline = bulk_may_inline;
		prog = &inline_prog;
	}

	memset(t, 0, sizeof(*t));
	if (with_key) {
		if ((rc = integrity_key_set(&t->key, key_bytes, 32, 0)) != 0)
			return rc;
		sp.key = &t->key;
	}
	if ((rc = rpc_server_create(&sp, &t->rpc)) != 0 ||
	    (rc = rpc_server_add_program(t->rpc, prog)) != 0 ||
	    (rc = rr_server_create(t->rpc, &p, &t->rr)) != 0)
		return rc;
	snprintf(t->port, sizeof(t->port), "%d", net_free_port());
	return rr_server_listen(t->rr, "127.0.0.1", t->port);
}

int rrt_server_start_p(struct rrt_server *t, const struct rr_params *p, int with_key)
{
	return server_start(t, p, with_key, 0);
}

int rrt_server_start_inline(struct rrt_server *t, const struct rr_params *p)
{
	return server_start(t, p, 0, 1);
}

void rrt_server_stop(struct rrt_server *t)
{
	rr_server_destroy(t->rr);
	rpc_server_destroy(t->rpc);
	integrity_key_clear(&t->key);
}

int rrt_client(struct rrt_server *t, unsigned mode, enum rr_reg reg, int with_key,
	       struct rpc_clnt **out)
{
	struct rr_params p;

	rrt_params(&p, mode, reg);
	p.caller_polls = 1; /* the client's default */
	return rrt_client_p(t, &p, with_key, out);
}

int rrt_client_p(struct rrt_server *t, const struct rr_params *p, int with_key,
		 struct rpc_clnt **out)
{
	int rc = rr_clnt_create(p, "127.0.0.1", t->port, out);

	if (rc == 0) {
		(*out)->cred.uid = 1000;
		(*out)->cred.gid = 1000;
		(*out)->key = with_key ? &t->key : NULL;
	}
	return rc;
}

int rrt_put(struct rpc_clnt *c, uint32_t seed, size_t len)
{
	return rrt_put_from(c, seed, len, NULL);
}

int rrt_put_from(struct rpc_clnt *c, uint32_t seed, size_t len, char *buf)
{
	return rrt_put_within(c, seed, len, buf, 0);
}

int rrt_put_within(struct rpc_clnt *c, uint32_t seed, size_t len, char *buf, int timeout_ms)
{
	struct bulk_put_args a = {.seed = seed, .data.len = (u_int)len};
	struct bulk_sum s = {0};
	struct rpc_call call = {.prog = BULKPROG,
				.vers = BULKVERS,
				.proc = BULK_PUT,
				.xdr_args = (xdrproc_t)xdr_bulk_put_args,
				.args = &a,
				.xdr_res = (xdrproc_t)xdr_bulk_sum,
				.res = &s,
				.timeout_ms = timeout_ms};
	int rc;

	a.data.data = buf ? buf : malloc(len ? len : 1);
	bulk_fill(a.data.data, len, seed);
	rc = rpc_clnt_call(c, &call);
	if (rc == 0) {
		if (s.len != len || s.sum != bulk_checksum(a.data.data, len))
			rc = -EILSEQ;
		rpc_clnt_free_res(c, &call);
	}
	if (!buf)
		free(a.data.data);
	return rc;
}

int rrt_get(struct rpc_clnt *c, uint32_t seed, size_t len)
{
	return rrt_get_hint(c, seed, len, 0);
}

int rrt_get_hint(struct rpc_clnt *c, uint32_t seed, size_t len, uint32_t reply_hint)
{
	char *dest = malloc(len ? len : 1), *want = malloc(len ? len : 1);
	int rc;

	bulk_fill(want, len, seed);
	rc = rrt_get_into(c, seed, len, reply_hint, dest, want);
	free(dest);
	free(want);
	return rc;
}

int rrt_get_into(struct rpc_clnt *c, uint32_t seed, size_t len, uint32_t reply_hint, char *dest,
		 const char *want)
{
	struct bulk_get_args a = {.seed = seed, .len = (u_int)len};
	struct bulk_get_res r = {0};
	struct rpc_call call = {.prog = BULKPROG,
				.vers = BULKVERS,
				.proc = BULK_GET,
				.xdr_args = (xdrproc_t)xdr_bulk_get_args,
				.args = &a,
				.xdr_res = (xdrproc_t)xdr_bulk_get_res,
				.res = &r,
				.reply_data = dest,
				.reply_data_len = (uint32_t)len,
				.reply_hint = reply_hint};
	int rc = rpc_clnt_call(c, &call);

	if (rc == 0) {
		/* the right bytes, and where the caller asked for them (no extra copy) */
		if (r.len != len || r.data.len != len || (len && memcmp(r.data.data, want, len)) ||
		    (len && r.data.data != dest))
			rc = -EILSEQ;
		rpc_clnt_free_res(c, &call);
	}
	return rc;
}

int rrt_big(struct rpc_clnt *c, u_int n)
{
	struct bulk_blob big = {0};
	struct rpc_call call = {.prog = BULKPROG,
				.vers = BULKVERS,
				.proc = BULK_BIG,
				.xdr_args = (xdrproc_t)xdr_u_int,
				.args = &n,
				.xdr_res = (xdrproc_t)xdr_bulk_blob,
				.res = &big,
				.reply_hint = n + 64};
	char *want = malloc(n ? n : 1);
	int rc = rpc_clnt_call(c, &call);

	if (rc == 0) {
		bulk_fill(want, n, n);
		if (big.len != n || (n && memcmp(big.data, want, n)))
			rc = -EILSEQ;
		rpc_clnt_free_res(c, &call);
	}
	free(want);
	return rc;
}

int rrt_sum(struct rpc_clnt *c, size_t len)
{
	struct bulk_blob in = {(u_int)len, malloc(len ? len : 1)};
	struct bulk_sum s = {0};
	struct rpc_call call = {.prog = BULKPROG,
				.vers = BULKVERS,
				.proc = BULK_SUM,
				.xdr_args = (xdrproc_t)xdr_bulk_blob,
				.args = &in,
				.xdr_res = (xdrproc_t)xdr_bulk_sum,
				.res = &s};
	int rc;

	bulk_fill(in.data, len, 3);
	rc = rpc_clnt_call(c, &call);
	if (rc == 0) {
		if (s.len != len || s.sum != bulk_checksum(in.data, len))
			rc = -EILSEQ;
		rpc_clnt_free_res(c, &call);
	}
	free(in.data);
	return rc;
}

struct rpc_call rrt_sleep_call(u_int *ms)
{
	return (struct rpc_call){.prog = BULKPROG,
				 .vers = BULKVERS,
				 .proc = BULK_SLEEP,
				 .xdr_args = (xdrproc_t)xdr_u_int,
				 .args = ms,
				 .xdr_res = (xdrproc_t)xdr_void};
}

int rrt_tcp_flood_gets(const char *port, unsigned n, uint32_t len)
{
	struct bulk_get_args a = {.seed = 9, .len = len};
	struct rpc_call get = {.prog = BULKPROG,
			       .vers = BULKVERS,
			       .proc = BULK_GET,
			       .xdr_args = (xdrproc_t)xdr_bulk_get_args,
			       .args = &a};
	int rcvbuf = 4096, fd = net_connect_tcp("127.0.0.1", port, 5000);
	struct rpc_clnt enc; /* only encodes */

	rpc_clnt_init(&enc, NULL);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)) != 0)
		goto fail;
	for (uint32_t xid = 1; xid <= n; xid++) {
		uint8_t buf[256];
		int rec = rpc_encode_call(&enc, xid, &get, buf + 4, sizeof(buf) - 4, NULL);
		uint32_t mark = htonl(0x80000000u | (uint32_t)rec);

		memcpy(buf, &mark, 4);
		if (rec <= 0 || write(fd, buf, (size_t)rec + 4) != rec + 4)
			goto fail;
	}
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

int rrt_read_to_end(int fd, int ms, size_t *got)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	char sink[65536];
	ssize_t n;

	if (got)
		*got = 0;
	while (poll(&p, 1, ms) == 1) {
		if ((n = read(fd, sink, sizeof(sink))) <= 0)
			return 1;
		if (got)
			*got += (size_t)n;
	}
	return 0;
}
