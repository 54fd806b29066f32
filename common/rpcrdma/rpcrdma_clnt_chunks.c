/*
 * rpcrdma_clnt_chunks.c: the RPC/RDMA client's chunks, in the caller's thread:
 * bulk arguments moved into Read chunks (or the whole call into a
 * Position-Zero chunk), Write and Reply chunks offered for results, exposed
 * replies pulled (Read-Read), and the reply decoded from wherever it landed.
 */
#include <stdlib.h>
#include <string.h>

#include "rpcrdma_clnt.h"

/* Whether the call can keep one more exposed buffer (s->bufs). */
static int room(const struct cslot *s)
{
	return s->nbufs < sizeof(s->bufs) / sizeof(s->bufs[0]);
}

/* Expose the first len bytes of b to the server (unless b is already) and
 * keep it with the call until slot_finish; flags as rr_buf_expose's. A key that is not free is
 * waited for within the call's timeout, outside the connection: its end
 * waits for those inside, and frees the keys of the calls it ends. 0, or
 * -errno (-ECONNRESET: the connection is going) with b given back. There is
 * room (room()). */
static int expose(struct cslot *s, struct rr_buf *b, size_t len, unsigned flags)
{
	struct rr_reg_ctx *reg = s->cl->ep->reg;
	struct rr_conn *c = s->cl->conn;
	uint64_t until = clock_now_ns() + (uint64_t)rrc_timeout_ms(s) * 1000000u, now;
	int rc = 0;

	while (!b->exposed) {
		struct vb_conn *vc = rr_conn_enter(c);

		rc = rr_buf_expose(reg, vc, b, b->addr, len, flags);
		if (vc)
			rr_conn_leave(c);
		if (rc != -EAGAIN || (now = clock_now_ns()) >= until ||
		    rr_buf_expose_wait(reg, (int)((until - now) / 1000000u) + 1) != 0)
			break;
	}
	if (rc) {
		rr_buf_put(reg, b);
		return rc;
	}
	s->bufs[s->nbufs++] = b;
	return 0;
}

/* A buffer the server can reach (*out), holding a copy of data, or data
 * itself (zerocopy, or data in the caller's region where rr_buf_in_region
 * allows). arg: an argument (a Read chunk), which the server may only read,
 * is copied there; else results are to come there. 0 or -errno. */
static int expose_data(struct cslot *s, void *data, size_t len, int arg, struct rr_buf **out)
{
	struct rr_reg_ctx *reg = s->cl->ep->reg;
	unsigned flags = arg ? RR_EXPOSE_READ_ONLY : 0;
	int in_place = 0, rc;
	struct rr_buf *b;

	if (!room(s))
		return -E2BIG;
	if (rr_reg_kind(reg) == RR_REG_ZEROCOPY) {
		if ((rc = rr_buf_wrap(reg, data, len, &b)) != 0)
			return rc;
	} else if (s->nplaced < RR_PLACED_MAX &&
		   rr_buf_in_region(reg, data, len, flags, b = &s->placed[s->nplaced]) == 0) {
		s->nplaced++;
		in_place = 1;
	} else {
		if ((rc = rr_buf_get(reg, len, RR_GET_EXPOSE, &b)) != 0)
			return rc;
		if (arg)
			memcpy(b->addr, data, len);
	}
	if ((rc = expose(s, b, len, flags)) != 0)
		return rc;
	/* results placed in the region count when they come (clnt_get) */
	if (in_place && arg)
		rr_stat_add(&s->cl->conn->st.bytes_in_place, (int64_t)len);
	*out = b;
	return 0;
}

/* A buffer of our own that the server can reach (Reply chunk; a long call,
 * RR_EXPOSE_READ_ONLY). 0 or -errno. */
static int own_exposed(struct cslot *s, size_t len, unsigned flags, struct rr_buf **out)
{
	int rc;

	if (!room(s))
		return -E2BIG;
	if ((rc = rr_buf_get(s->cl->ep->reg, len, RR_GET_EXPOSE, out)) != 0)
		return rc;
	return expose(s, *out, len, flags);
}

/* Arguments: inline when they fit, else a Read chunk at the item's position. */
static int clnt_put(struct rpc_ddp *ddp, XDR *xdrs, void *data, uint32_t len)
{
	struct clnt_ddp *cd = (struct clnt_ddp *)ddp;
	struct cslot *s = cd->s;
	uint32_t pos = xdr_getpos(xdrs);
	struct rr_buf *b;

	if (len == 0 || (!cd->force_chunks && pos + RNDUP4(len) + 128 <= cd->cap))
		return rpc_ddp_inline_ops.put(ddp, xdrs, data, len);
	if (s->h->nreads == RPCRDMA_MAX_READ_SEGS)
		return -ENOSPC; /* another encoding may need fewer */
	if ((cd->err = expose_data(s, data, len, 1, &b)) != 0)
		return cd->err;
	s->h->reads[s->h->nreads++] = (struct rpcrdma_read_seg){
		.position = pos + cd->reduced, .seg = {b->rkey, len, (uintptr_t)b->addr}};
	cd->reduced += RNDUP4(len);
	rr_stat_add(&s->cl->conn->st.bytes_exposed, len);
	return rpc_ddp_note(ddp, pos, b->addr, len);
}

/* Results: from the Write chunk, from a chunk we pulled, or inline. */
static int clnt_get(struct rpc_ddp *ddp, XDR *xdrs, uint32_t len, void **data)
{
	struct clnt_ddp *cd = (struct clnt_ddp *)ddp;
	struct cslot *s = cd->s;
	struct rpc_call *call = s->call;
	uint32_t pos = xdr_getpos(xdrs), full = pos + cd->reduced;
	void *src = NULL;

	if (cd->wused < s->rh->nwrites && s->wbuf) {
		uint64_t got = 0;

		for (uint32_t i = 0; i < s->rh->writes[cd->wused].nsegs; i++)
			got += s->rh->writes[cd->wused].segs[i].length;
		cd->wused++;
		if (got) {
			if (got != len || len > s->wbuf->len)
				return -EBADMSG;
			src = s->wbuf->addr;
		}
	}
	for (uint32_t i = 0; !src && i < s->nrch; i++) {
		if (s->rch[i].position != 0 && s->rch[i].position == full) {
			if (s->rch[i].length < len)
				return -EBADMSG;
			src = s->pulled[i]->addr;
		}
	}
	if (!src)
		return rpc_clnt_ddp_get_inline(call, xdrs, len, data);
	if (call->reply_data && len <= call->reply_data_len) {
		if (src != call->reply_data)
			memcpy(call->reply_data, src, len);
		else if (rr_reg_kind(s->cl->ep->reg) != RR_REG_ZEROCOPY)
			rr_stat_add(&s->cl->conn->st.bytes_in_place, (int64_t)len);
		src = call->reply_data;
	}
	*data = src;
	cd->reduced += RNDUP4(len);
	return rpc_ddp_note(ddp, pos, src, len);
}

const struct rpc_ddp_ops rrc_ddp_ops = {.get = clnt_get, .put = clnt_put};

/* Encode the call; returns its inline length, or -errno. Sets h->proc. */
int rrc_encode_call(struct cslot *s, struct clnt_ddp *cd)
{
	struct rr_clnt *cl = s->cl;
	struct rr_conn *c = cl->conn;
	size_t cap = c->send_max > CALL_HDR_RESERVE ? c->send_max - CALL_HDR_RESERVE : 0;
	uint8_t *buf = s->send->buf + CALL_HDR_RESERVE;
	size_t long_cap = (size_t)cl->ep->p.max_io + 65536;
	struct rr_buf *lb;
	int len;

	/* an item that could not be exposed (cd->err) fails the call with its
	 * reason: no other encoding does better, and the RPC layer would take
	 * its ENOSPC (no room for the message) for the file system's */
	for (int attempt = 0; attempt < 2; attempt++) {
		*cd = (struct clnt_ddp){
			.base.ops = &rrc_ddp_ops, .s = s, .cap = cap, .force_chunks = attempt};
		s->h->nreads = 0;
		len = rpc_encode_call(&cl->base, s->xid, s->call, buf, cap, &cd->base);
		if (len != -ENOSPC || cd->err)
			return cd->err ? cd->err : len;
	}
	/* a long call: the whole message in a Position-Zero Read chunk */
	if ((len = own_exposed(s, long_cap, RR_EXPOSE_READ_ONLY, &lb)) != 0)
		return len;
	*cd = (struct clnt_ddp){
		.base.ops = &rrc_ddp_ops, .s = s, .cap = long_cap, .force_chunks = 1};
	s->h->nreads = 1; /* room for the Position-Zero segment first */
	len = rpc_encode_call(&cl->base, s->xid, s->call, lb->addr, long_cap, &cd->base);
	if (len < 0)
		return cd->err ? cd->err : len;
	s->h->reads[0] = (struct rpcrdma_read_seg){
		.position = 0, .seg = {lb->rkey, (uint32_t)len, (uintptr_t)lb->addr}};
	s->h->proc = RPCRDMA_NOMSG;
	rr_stat_add(&c->st.bytes_exposed, len);
	return 0;
}

/* What a reply may hold beyond its bulk data: the RPC and NFS results
 * (post-op attributes, a verifier) and the server's RPC/RDMA header with the
 * room it keeps for read-read lists (rrs_hdr_reserve), so that a reply we
 * expect inline is not exposed instead. */
#define REPLY_MARGIN 512

/* Read-Write mode: chunks for the results. A reply that fits inline both
 * ways (our receive size and the server's send size, with REPLY_MARGIN for
 * its headers) comes inline, bulk data included, as the Linux client does:
 * one Send instead of an RDMA Write and a Send. */
int rrc_offer_chunks(struct cslot *s)
{
	struct rr_clnt *cl = s->cl;
	struct rpc_call *call = s->call;
	struct rr_conn *c = cl->conn;
	uint32_t room = c->recv_max < c->peer_send ? c->recv_max : c->peer_send;
	struct rr_buf *b;
	int rc;

	if (!(cl->ep->p.modes & RR_MODE_READ_WRITE))
		return 0;
	if (call->reply_data && call->reply_data_len &&
	    (uint64_t)call->reply_data_len + call->reply_hint + REPLY_MARGIN > room) {
		if ((rc = expose_data(s, call->reply_data, call->reply_data_len, 0, &b)) != 0)
			return rc;
		s->wbuf = b;
		s->h->nwrites = 1;
		s->h->writes[0].nsegs = 1;
		s->h->writes[0].segs[0] =
			(struct rpcrdma_seg){b->rkey, call->reply_data_len, (uintptr_t)b->addr};
	}
	if (call->reply_hint + 256 > room) {
		uint32_t len = call->reply_hint + 1024;

		if ((rc = own_exposed(s, len, 0, &b)) != 0)
			return rc;
		s->rbuf = b;
		s->h->has_reply = true;
		s->h->reply.nsegs = 1;
		s->h->reply.segs[0] = (struct rpcrdma_seg){b->rkey, len, (uintptr_t)b->addr};
	}
	return 0;
}

/* Read-Read mode: pull the chunks the server exposed (the caller answers
 * RDMA_DONE). */
int rrc_pull_exposed(struct cslot *s)
{
	struct rr_clnt *cl = s->cl;
	struct rr_conn *c = cl->conn;
	struct rr_batch b;
	int rc;

	if (s->rh->nreads == 0)
		return 0;
	rc = rpcrdma_read_chunks(s->rh, s->rch, &s->nrch);
	if (rc)
		return -EBADMSG;
	b.n = 0;
	for (uint32_t i = 0; i < s->nrch; i++) {
		const struct rpcrdma_read_chunk *ch = &s->rch[i];
		struct rr_buf *buf;

		if (ch->length > (uint64_t)cl->ep->p.max_io + 65536)
			return -EBADMSG;
		if (!room(s) || rr_buf_get(cl->ep->reg, ch->length ? ch->length : 1, 0, &buf) != 0)
			return -ENOMEM;
		s->bufs[s->nbufs++] = buf; /* unexposed: slot_finish only puts it */
		if (rr_buf_wait(cl->ep->reg, buf) != 0)
			return -ENOMEM;
		s->pulled[i] = buf;
		if ((rc = rr_batch_read_chunk(&b, s->rh, ch, buf)) != 0)
			return rc;
		rr_stat_add(&c->st.bytes_rdma_read, (int64_t)ch->length);
	}
	if (b.n == 0)
		return 0;
	s->reads_busy = 1;
	rr_post(c, &b, &s->read_wr); /* completes, if only as a flush */
	if ((rc = rrc_slot_wait(s, &s->reads_busy, "the server never answered RDMA Reads")) != 0)
		return rc;
	return s->read_status == VB_WC_SUCCESS ? 0 : -ECONNRESET;
}

/* Decode the RPC reply wherever it is: inline, in our Reply chunk, or pulled. */
int rrc_decode_reply(struct cslot *s)
{
	struct rr_clnt *cl = s->cl;
	struct clnt_ddp cd = {.base.ops = &rrc_ddp_ops, .s = s};
	const uint8_t *buf = s->recv->buf + s->payload_off;
	size_t len = s->recv->len - s->payload_off;

	if (s->rh->proc == RPCRDMA_NOMSG) {
		if (s->rh->has_reply && s->rbuf) {
			uint64_t n = 0;

			for (uint32_t i = 0; i < s->rh->reply.nsegs; i++)
				n += s->rh->reply.segs[i].length;
			if (n > s->rbuf->len)
				return -EBADMSG;
			buf = s->rbuf->addr;
			len = n;
		} else if (s->nrch && s->rch[0].position == 0) {
			buf = s->pulled[0]->addr;
			len = s->rch[0].length;
		} else {
			return -EBADMSG;
		}
	} else if (s->rh->proc != RPCRDMA_MSG) {
		return -EBADMSG;
	}
	rr_stat_add(&cl->conn->st.replies, 1);
	return rpc_decode_reply(&cl->base, s->xid, s->call, buf, len, &cd.base);
}
