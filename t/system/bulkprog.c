/* bulkprog.c: the transport test program's XDR and procedures (see bulkprog.h). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bulkprog.h"

bool_t xdr_bulk_blob(XDR *xdrs, struct bulk_blob *b)
{
	return xdr_bytes(xdrs, &b->data, &b->len, BULK_MAXDATA);
}

bool_t xdr_bulk_put_args(XDR *xdrs, struct bulk_put_args *a)
{
	return xdr_u_int(xdrs, &a->seed) &&
	       xdr_ddp_opaque(xdrs, &a->data.data, &a->data.len, BULK_MAXDATA);
}

bool_t xdr_bulk_sum(XDR *xdrs, struct bulk_sum *s)
{
	return xdr_u_int(xdrs, &s->len) && xdr_u_int(xdrs, &s->sum);
}

bool_t xdr_bulk_get_args(XDR *xdrs, struct bulk_get_args *a)
{
	return xdr_u_int(xdrs, &a->seed) && xdr_u_int(xdrs, &a->len);
}

bool_t xdr_bulk_get_res(XDR *xdrs, struct bulk_get_res *r)
{
	return xdr_u_int(xdrs, &r->len) &&
	       xdr_ddp_opaque(xdrs, &r->data.data, &r->data.len, BULK_MAXDATA);
}

bool_t xdr_bulk_padget_args(XDR *xdrs, struct bulk_padget_args *a)
{
	return xdr_bulk_get_args(xdrs, &a->get) && xdr_u_int(xdrs, &a->pad);
}

bool_t xdr_bulk_padget_res(XDR *xdrs, struct bulk_padget_res *r)
{
	return xdr_bulk_blob(xdrs, &r->pad) && xdr_bulk_get_res(xdrs, &r->get);
}

/* xorshift64, a word at a time: the pattern costs little next to the transport. */
static uint64_t next_word(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

void bulk_fill(void *buf, size_t len, uint32_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1, w;
	uint8_t *p = buf;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		w = next_word(&x);
		memcpy(p + i, &w, 8);
	}
	if (i < len) {
		w = next_word(&x);
		memcpy(p + i, &w, len - i);
	}
}

/* A position-dependent sum of 64-bit words (Fletcher-like), folded to 32 bits. */
uint32_t bulk_checksum(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t a = 0, b = 0, w;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		a += w;
		b += a;
	}
	if (i < len) {
		w = 0;
		memcpy(&w, p + i, len - i);
		a += w;
		b += a;
	}
	a ^= b * 0x9e3779b97f4a7c15ull ^ len;
	return (uint32_t)(a ^ (a >> 32));
}

static void proc_null(struct rpc_req *req, void *args, void *res)
{
}

static void proc_echo(struct rpc_req *req, void *args, void *res)
{
	struct bulk_blob *in = args, *out = res;

	out->len = in->len;
	out->data = malloc(in->len ? in->len : 1);
	if (out->data)
		memcpy(out->data, in->data, in->len);
	else
		out->len = 0;
}

static void proc_put(struct rpc_req *req, void *args, void *res)
{
	struct bulk_put_args *a = args;
	struct bulk_sum *s = res;

	if (req->nowait && (a->seed & BULK_SEED_WORKER)) {
		req->would_block = 1;
		return;
	}

	s->len = a->data.len;
	s->sum = bulk_checksum(a->data.data, a->data.len);
}

static void proc_get(struct rpc_req *req, void *args, void *res)
{
	struct bulk_get_args *a = args;
	struct bulk_get_res *r = res;

	r->data.data = req->get_buf(req, a->len);
	r->len = r->data.data ? a->len : 0;
	r->data.len = r->len;
	if (r->data.data)
		bulk_fill(r->data.data, a->len, a->seed);
}

/* GET's data belongs to the transport (get_buf): nothing to free. */
static void free_nothing(struct rpc_req *req, void *res)
{
}

static void proc_padget(struct rpc_req *req, void *args, void *res)
{
	struct bulk_padget_args *a = args;
	struct bulk_padget_res *r = res;

	r->pad.data = calloc(1, a->pad ? a->pad : 1);
	r->pad.len = r->pad.data ? a->pad : 0;
	proc_get(req, &a->get, &r->get);
}

/* PADGET's pad is ours, its data the transport's. */
static void free_pad(struct rpc_req *req, void *res)
{
	free(((struct bulk_padget_res *)res)->pad.data);
}

static void proc_big(struct rpc_req *req, void *args, void *res)
{
	u_int *len = args;
	struct bulk_blob *out = res;

	out->data = malloc(*len ? *len : 1);
	out->len = out->data ? *len : 0;
	if (out->data)
		bulk_fill(out->data, *len, *len);
}

static void proc_sum(struct rpc_req *req, void *args, void *res)
{
	struct bulk_blob *in = args;
	struct bulk_sum *s = res;

	s->len = in->len;
	s->sum = bulk_checksum(in->data, in->len);
}

static void proc_sleep(struct rpc_req *req, void *args, void *res)
{
	u_int *ms = args;

	usleep(*ms > 10000 ? 10000000 : *ms * 1000);
}

#define PROC(n, fn, xa, ta, xr, tr, fr)                                                            \
	[n] = {#n, (xdrproc_t)(xa), (xdrproc_t)(xr), sizeof(ta), sizeof(tr), fn, fr, 0}

const struct rpc_proc_desc bulk_procs[BULK_NPROCS] = {
	PROC(BULK_NULL, proc_null, xdr_void, char, xdr_void, char, NULL),
	PROC(BULK_ECHO, proc_echo, xdr_bulk_blob, struct bulk_blob, xdr_bulk_blob, struct bulk_blob,
	     NULL),
	PROC(BULK_PUT, proc_put, xdr_bulk_put_args, struct bulk_put_args, xdr_bulk_sum,
	     struct bulk_sum, NULL),
	PROC(BULK_GET, proc_get, xdr_bulk_get_args, struct bulk_get_args, xdr_bulk_get_res,
	     struct bulk_get_res, free_nothing),
	PROC(BULK_BIG, proc_big, xdr_u_int, u_int, xdr_bulk_blob, struct bulk_blob, NULL),
	PROC(BULK_SUM, proc_sum, xdr_bulk_blob, struct bulk_blob, xdr_bulk_sum, struct bulk_sum,
	     NULL),
	PROC(BULK_SLEEP, proc_sleep, xdr_u_int, u_int, xdr_void, char, NULL),
	PROC(BULK_PADGET, proc_padget, xdr_bulk_padget_args, struct bulk_padget_args,
	     xdr_bulk_padget_res, struct bulk_padget_res, free_pad),
};

const struct rpc_program bulk_program = {
	.prog = BULKPROG,
	.vers = BULKVERS,
	.procs = bulk_procs,
	.nprocs = BULK_NPROCS,
};
