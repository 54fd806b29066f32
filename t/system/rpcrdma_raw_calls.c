/* rpcrdma_raw_calls.c: calls of the bulk program from the raw peer
 * (rpcrdma_raw_calls.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>

#include "bulkprog.h"
#include "common/rpcrdma/rpcrdma_hdr.h"
#include "rpcrdma_raw_calls.h"

/* See rpcrdma_raw_calls.h. */
size_t raw_build(struct raw *r, struct rpcrdma_hdr *h, struct rpc_call *call, uint8_t *buf)
{
	struct wcur w;
	int len;

	wcur_init(&w, buf, RAW_BUF);
	assert_int_equal(rpcrdma_hdr_encode(&w, h), 0);
	len = rpc_encode_call(&r->clnt, h->xid, call, buf + w.pos, RAW_BUF - w.pos, NULL);
	assert_true(len > 0);
	return w.pos + (size_t)len;
}

/* See rpcrdma_raw_calls.h. */
struct rpcrdma_hdr *raw_hdr(struct raw *r, uint32_t proc)
{
	struct rpcrdma_hdr *h = calloc(1, sizeof(*h));

	rpcrdma_hdr_init(h, ++r->xid, RAW_CREDITS, proc);
	return h;
}

/* See rpcrdma_raw_calls.h. */
int raw_null(struct raw *r, uint32_t prog)
{
	struct rpcrdma_hdr *h = raw_hdr(r, RPCRDMA_MSG);
	struct rpc_call call = {.prog = prog,
				.vers = BULKVERS,
				.proc = BULK_NULL,
				.xdr_args = (xdrproc_t)xdr_void,
				.xdr_res = (xdrproc_t)xdr_void};
	uint8_t buf[RAW_BUF];
	struct rpcrdma_hdr *rh = calloc(1, sizeof(*rh));
	size_t len = raw_build(r, h, &call, buf);
	struct cur c;
	int rc;

	raw_send(r, buf, len);
	len = raw_recv(r, buf, RAW_TMO);
	assert_true(len > 0);
	cur_init(&c, buf, len);
	assert_int_equal(rpcrdma_hdr_decode(&c, rh), 0);
	assert_int_equal(rh->xid, h->xid);
	assert_int_equal(rh->proc, RPCRDMA_MSG);
	rc = rpc_decode_reply(&r->clnt, h->xid, &call, buf + c.pos, len - c.pos, NULL);
	free(h);
	free(rh);
	return rc;
}

/* See rpcrdma_raw_calls.h. */
size_t raw_build_bulk(struct raw *r, struct rpcrdma_hdr *h, uint32_t proc, xdrproc_t xdr_args,
		      void *args, uint8_t *buf)
{
	struct rpc_call call = {.prog = BULKPROG,
				.vers = BULKVERS,
				.proc = proc,
				.xdr_args = xdr_args,
				.args = args,
				.xdr_res = (xdrproc_t)xdr_void};

	return raw_build(r, h, &call, buf);
}

/* Send a call of BULKPROG's proc whose reply offers no chunk; its xid. */
static uint32_t send_call(struct raw *r, uint32_t proc, xdrproc_t xdr_args, void *args)
{
	struct rpcrdma_hdr *h = raw_hdr(r, RPCRDMA_MSG);
	uint8_t buf[RAW_BUF];
	uint32_t xid = h->xid;

	raw_send(r, buf, raw_build_bulk(r, h, proc, xdr_args, args, buf));
	free(h);
	return xid;
}

/* See rpcrdma_raw_calls.h. */
uint32_t raw_send_get(struct raw *r, u_int n)
{
	struct bulk_get_args a = {.seed = 9, .len = n};

	return send_call(r, BULK_GET, (xdrproc_t)xdr_bulk_get_args, &a);
}

/* See rpcrdma_raw_calls.h. */
uint32_t raw_send_padget(struct raw *r, u_int n, u_int pad)
{
	struct bulk_padget_args a = {.get = {.seed = 9, .len = n}, .pad = pad};

	return send_call(r, BULK_PADGET, (xdrproc_t)xdr_bulk_padget_args, &a);
}

/* See rpcrdma_raw_calls.h. */
uint32_t raw_rr_get_len(struct raw *r, struct rpcrdma_hdr *rh, u_int n)
{
	uint32_t xid = raw_send_get(r, n);
	uint8_t buf[RAW_BUF];
	size_t len;
	struct cur c;

	len = raw_recv(r, buf, RAW_TMO);
	assert_true(len > 0);
	cur_init(&c, buf, len);
	assert_int_equal(rpcrdma_hdr_decode(&c, rh), 0);
	assert_int_equal(rh->proc, RPCRDMA_MSG);
	assert_int_equal(rh->nreads, 1);
	assert_int_equal(rh->reads[0].seg.length, n);
	return xid;
}

/* See rpcrdma_raw_calls.h. */
uint32_t raw_rr_get(struct raw *r, struct rpcrdma_hdr *rh)
{
	return raw_rr_get_len(r, rh, 65536);
}

/* See rpcrdma_raw_calls.h. */
struct rpcrdma_hdr *raw_reply_any(struct raw *r)
{
	struct rpcrdma_hdr *rh = calloc(1, sizeof(*rh));
	uint8_t buf[RAW_BUF];
	size_t len = raw_recv(r, buf, RAW_TMO);
	struct cur c;

	assert_true(len > 0);
	cur_init(&c, buf, len);
	assert_int_equal(rpcrdma_hdr_decode(&c, rh), 0);
	return rh;
}

/* See rpcrdma_raw_calls.h. */
struct rpcrdma_hdr *raw_reply(struct raw *r, uint32_t xid)
{
	struct rpcrdma_hdr *rh = raw_reply_any(r);

	assert_int_equal(rh->xid, xid);
	return rh;
}

/* See rpcrdma_raw_calls.h. */
void raw_expect_error(struct raw *r, uint32_t xid, uint32_t err)
{
	struct rpcrdma_hdr *h = raw_reply(r, xid);

	assert_int_equal(h->proc, RPCRDMA_ERROR);
	assert_int_equal(h->err, err);
	assert_int_equal(h->nreads, 0);
	if (err == RPCRDMA_ERR_VERS) {
		assert_int_equal(h->vers_low, 1);
		assert_int_equal(h->vers_high, 1);
	}
	free(h);
}

/* See rpcrdma_raw_calls.h. */
int raw_read(struct raw *r, const struct rpcrdma_seg *seg)
{
	struct vb_sge sge = {(uintptr_t)r->data, seg->length, r->data_mr->lkey};
	struct vb_send_wr wr = {.wr_id = RAW_WR_READ,
				.sg_list = &sge,
				.num_sge = 1,
				.opcode = VB_WR_RDMA_READ,
				.send_flags = VB_SEND_SIGNALED,
				.remote_addr = seg->offset,
				.rkey = seg->handle},
			  *bad;
	int before = r->reads_done;

	if (vb_post_send(r->vc, &wr, &bad) != 0)
		return 0;
	for (int i = 0; i < 100 && r->reads_done == before && !r->broken; i++)
		raw_pump(r, 50);
	return r->reads_done > before;
}

/* See rpcrdma_raw_calls.h. */
void raw_done(struct raw *r, uint32_t xid)
{
	uint8_t buf[RAW_DONE_LEN];

	raw_send(r, buf, raw_build_done(xid, buf));
}

/* See rpcrdma_raw_calls.h. */
size_t raw_build_done(uint32_t xid, uint8_t *buf)
{
	return raw_words(buf, (uint32_t[]){xid, 1, RAW_CREDITS, RPCRDMA_DONE}, 4);
}
