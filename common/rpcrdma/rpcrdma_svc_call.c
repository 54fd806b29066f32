/*
 * rpcrdma_svc_call.c: the RPC/RDMA server from a received call to its worker
 * and back: the DDP hooks that splice Read chunks into the arguments and send
 * bulk results to Write chunks or exposure, pulling Read chunks (loop), the
 * worker's decode-run-encode, and the hand-back to the loop for the answer.
 */
#include <stdlib.h>
#include <string.h>

#include "common/base/log.h"
#include "rpcrdma_svc.h"

/* ---- the DDP hooks ---- */

/* Arguments: a data item comes from the Read chunk at its position, if any. */
static int svc_args_get(struct rpc_ddp *ddp, XDR *xdrs, uint32_t len, void **data)
{
	struct rr_sreq *rq = ((struct svc_ddp *)ddp)->rq;
	uint32_t pos = xdr_getpos(xdrs);
	uint32_t full = pos + rq->args_reduced;

	for (uint32_t i = 0; i < rq->nrch; i++) {
		const struct rpcrdma_read_chunk *ch = &rq->rch[i];

		if (ch->position == 0 || rq->chunk_used[i] || ch->position != full)
			continue;
		/* the chunk carries the item, with or without its XDR padding */
		if (ch->length < len || ch->length > (uint64_t)len + 3)
			return -EBADMSG;
		rq->chunk_used[i] = 1;
		rq->args_reduced += RNDUP4(len);
		*data = rq->chunk_buf[i]->addr;
		return rpc_ddp_note(ddp, pos, *data, len);
	}
	return rpc_ddp_inline_ops.get(ddp, xdrs, len, data);
}

/* Results: into the next Write chunk; in Read-Read, exposed unless they fit
 * inline with room to spare (a short READ is one Send, not an exposed buffer
 * and a Read back); else inline. */
static int svc_res_put(struct rpc_ddp *ddp, XDR *xdrs, void *data, uint32_t len)
{
	struct rr_sreq *rq = ((struct svc_ddp *)ddp)->rq;
	unsigned idx = ddp->nitems, nw = 0;
	uint32_t pos = xdr_getpos(xdrs), reduced = 0;
	struct rr_item *it;
	uint64_t room;

	if (len == 0)
		return 0;
	if (idx >= RPC_DDP_MAX_ITEMS) /* no room to note one more: it goes inline */
		return rpc_ddp_inline_ops.put(ddp, xdrs, data, len);
	it = &rq->items[idx];
	for (unsigned i = 0; i < idx; i++) {
		nw += rq->items[i].wchunk >= 0;
		reduced += RNDUP4(rq->items[i].len);
	}
	if (nw < rq->hdr.nwrites) {
		if (rpcrdma_write_chunk_len(&rq->hdr.writes[nw], &room) != 0 || room < len) {
			log_info("xid %#x: Write chunk of %llu bytes for %u bytes of data",
				 rq->hdr.xid, (unsigned long long)room, len);
			return -EMSGSIZE;
		}
		*it = (struct rr_item){.data = data, .len = len, .wchunk = (int)nw};
		return rpc_ddp_note(ddp, pos, data, len);
	}
	if (rrs_rr_possible(rq) && len >= RR_RR_MIN &&
	    (rq->long_reply || (uint64_t)pos + RNDUP4(len) + 128 > rq->x.reply_cap)) {
		*it = (struct rr_item){
			.data = data, .len = len, .wchunk = -1, .pos_full = pos + reduced};
		return rpc_ddp_note(ddp, pos, data, len);
	}
	return rpc_ddp_inline_ops.put(ddp, xdrs, data, len);
}

static const struct rpc_ddp_ops svc_args_ops = {.get = svc_args_get, .put = NULL};
static const struct rpc_ddp_ops svc_res_ops = {.get = NULL, .put = svc_res_put};

/* ---- pulling Read chunks (loop) ---- */

static void sreq_to_worker(struct rr_sreq *rq);

/* The RDMA Reads are in (or flushed): on to the worker. */
void rrs_read_done(struct rr_conn *c, struct rr_wr *w, const struct vb_wc *wc)
{
	struct rr_sreq *rq = (struct rr_sreq *)((char *)w - offsetof(struct rr_sreq, read_wr));

	rrs_dev_done(rq);
	rrs_nomsg_done(rq);
	if (wc->status != VB_WC_SUCCESS) {
		log_debug("%s: xid %#x: pulling its chunks failed: %s", c->peer, rq->hdr.xid,
			  vb_wc_status_str(wc->status));
		rrs_release(rq);
		return;
	}
	rr_stat_add(&c->st.bytes_rdma_read, (int64_t)rq->pulled);
	sreq_to_worker(rq);
}

/* Before pulling a call's chunks: whether its RPC header (inline, RDMA_MSG)
 * lets it run here at all; if not, nothing is pulled and the worker answers
 * it from the header alone. A call in RDMA_NOMSG has no inline header: its
 * pull is bounded by size and the op deadline, one at a time per connection
 * (nomsg_turn). */
static int worth_pulling(struct rr_sreq *rq)
{
	struct rr_conn *c = rq->conn;
	struct rpc_xreq *x = &rq->x;
	enum rpc_reject st;

	if (rq->hdr.proc != RPCRDMA_MSG)
		return 1;
	x->call = rq->recv->buf + rq->payload_off;
	x->call_len = rq->recv->len - rq->payload_off;
	x->peer = c->peer_addr_len ? (struct sockaddr *)&c->peer_addr : NULL;
	x->peer_len = c->peer_addr_len;
	x->secure_transport = 1;
	x->xprt = RPC_XPRT_RDMA;
	if ((st = rpc_precheck(rq->srv->rpc, x)) == RPC_OK)
		return 1;
	rr_stat_add(&c->st.pulls_refused, 1);
	log_info("%s: xid %#x: %s: its chunks are not pulled", c->peer, rq->hdr.xid,
		 rpc_reject_str(st));
	return 0;
}

/* Check the Read list and post the RDMA Reads that pull every chunk into local
 * buffers. 1 when they are posted (rrs_read_done continues), 0 when there is
 * nothing to pull (or the call is refused from its header), or -errno:
 * -EBADMSG/-E2BIG/-ENOMEM answer ERR_CHUNK. */
static int pull_chunks(struct rr_sreq *rq)
{
	const struct rr_params *p = &rq->srv->ep->p;
	uint64_t total = 0;
	struct rr_batch b;
	int rc;

	rc = rpcrdma_read_chunks(&rq->hdr, rq->rch, &rq->nrch);
	if (rc)
		return rc;
	/* a call in RDMA_NOMSG is in a Position-Zero chunk; RDMA_MSG has none */
	if ((rq->hdr.proc == RPCRDMA_NOMSG) != (rq->nrch > 0 && rq->rch[0].position == 0))
		return -EBADMSG;
	for (uint32_t i = 0; i < rq->nrch; i++)
		total += rq->rch[i].length;
	if (total > MAX_REPLY(p))
		return -E2BIG;
	if (rq->nrch && !worth_pulling(rq)) {
		rq->nrch = 0; /* the arguments are not there: dispatch refuses it */
		return 0;
	}
	b.n = 0;
	for (uint32_t i = 0; i < rq->nrch; i++) {
		const struct rpcrdma_read_chunk *ch = &rq->rch[i];

		rq->chunk_buf[i] = rrs_buf_get(rq, ch->length ? ch->length : 1, RR_GET_NOWAIT);
		if (!rq->chunk_buf[i])
			return -ENOMEM;
		if ((rc = rr_batch_read_chunk(&b, &rq->hdr, ch, rq->chunk_buf[i])) != 0)
			return rc;
	}
	if (b.n == 0)
		return 0;
	rq->pulled = total;
	rrs_dev_wait(rq);
	rr_post(rq->conn, &b, &rq->read_wr); /* rrs_read_done continues, if only with a flush */
	return 1;
}

/* Worker: decode, run and encode the call; sets rq->long_reply. */
static int dispatch(struct rr_sreq *rq)
{
	struct rr_conn *c = rq->conn;
	const struct rr_params *p = &rq->srv->ep->p;
	struct rpc_xreq *x = &rq->x;
	size_t cap = 0, reserve = rq->reserve;
	int rc;

	if (rq->hdr.proc == RPCRDMA_NOMSG) {
		x->call = rq->chunk_buf[0]->addr;
		x->call_len = rq->rch[0].length;
	} else {
		x->call = rq->recv->buf + rq->payload_off;
		x->call_len = rq->recv->len - rq->payload_off;
	}
	/* a call the loop tried (run_inline) is decoded afresh on the worker */
	memset(rq->chunk_used, 0, sizeof(rq->chunk_used));
	rq->args_reduced = 0;
	rq->args_ddp = (struct svc_ddp){.base.ops = &svc_args_ops, .rq = rq};
	rq->res_ddp = (struct svc_ddp){.base.ops = &svc_res_ops, .rq = rq};
	x->args_ddp = &rq->args_ddp.base;
	x->res_ddp = &rq->res_ddp.base;
	x->peer = c->peer_addr_len ? (struct sockaddr *)&c->peer_addr : NULL;
	x->peer_len = c->peer_addr_len;
	x->secure_transport = 1;
	x->xprt = RPC_XPRT_RDMA;
	x->get_buf = rrs_get_buf;
	x->xprt_req = rq;
	x->reply = rq->send->buf + reserve;
	x->reply_cap = c->send_max > reserve ? c->send_max - reserve : 0;
	rq->long_reply = 0;
	rc = rpc_dispatch(rq->srv->rpc, x);
	rq->dispatched = rc != -EBADMSG;
	if (rc == -EMSGSIZE && x->nowait)
		return -EAGAIN; /* a long reply is not cheap: a worker's */
	if (rc != -EMSGSIZE)
		return rc;
	/* does not fit inline: into the Reply chunk, or exposed (Read-Read) */
	if (rq->hdr.has_reply) {
		uint64_t len;

		if (rpcrdma_write_chunk_len(&rq->hdr.reply, &len) == 0)
			cap = len < MAX_REPLY(p) ? len : MAX_REPLY(p);
	} else if (rrs_rr_possible(rq)) { /* not beside a Write list: no room in the header */
		cap = MAX_REPLY(p);
	} else {
		return -E2BIG; /* nowhere to put it: ERR_CHUNK, as the Linux server answers */
	}
	if (cap && (rq->reply_buf = rrs_buf_get(
			    rq, cap, RR_GET_ASYNC | (rq->hdr.has_reply ? 0 : RR_GET_EXPOSE)))) {
		x->reply = rq->reply_buf->addr;
		x->reply_cap = cap;
		rq->long_reply = 1;
	}
	rc = rpc_reencode(rq->srv->rpc, x);
	/* too long even for the space it was given: ERR_CHUNK (with no buffer
	 * for it, the SYSTEM_ERR it became is sent inline) */
	if (rc == 0 && rq->long_reply && x->status != RPC_OK)
		return -E2BIG;
	return rc;
}

/* See rpcrdma_svc.h. */
void rrs_reply(void *arg)
{
	struct rr_sreq *rq = arg;
	struct rr_conn *c = rq->conn;
	int rc = rq->run_rc;

	if (rc == -EINPROGRESS && !rr_conn_is_dead(c)) { /* no room to expose now */
		rrs_park(rq);
		return;
	}
	if ((rc == 0 || rc == -EINPROGRESS) && rr_conn_is_dead(c))
		rc = -ECONNRESET;
	if (rc == 0)
		rc = rrs_post_reply(rq);
	if (rc == -E2BIG) { /* the reply does not fit where the client said it may go */
		rrs_answer_error(rq, rc);
		return;
	}
	if (rc) {
		/* a reply that cannot go out closes the connection, as Linux's
		 * svcrdma does: the client sends the call again on its next one
		 * at once, where it would wait for its timeout */
		if (rc != -EBADMSG && rc != -EALREADY && rc != -ECONNRESET) {
			char why[96];

			snprintf(why, sizeof(why), "xid %#x: cannot reply: %s", rq->hdr.xid,
				 strerror(-rc));
			log_warn("%s: %s", c->peer, why);
			rr_conn_fail(c, why);
		}
		rrs_release(rq);
	}
}

/* Run the call and ready its reply's buffers (rrs_prepare_reply); on the
 * loop (rq->x.nowait), -EAGAIN where either would wait. */
static int run_call(struct rr_sreq *rq)
{
	int rc = dispatch(rq);

	return rc ? rc : rrs_prepare_reply(rq);
}

/* Worker: everything about the call that may block or take on the caller's
 * identity, and nothing that touches the device. */
void rrs_work(struct work *w)
{
	struct rr_sreq *rq = (struct rr_sreq *)w;

	rr_stat_add(&rq->conn->st.calls, 1);
	rq->run_rc = run_call(rq);
	evloop_post_once(rq->srv->ep->loop, &rq->reply_job, rrs_reply, rq);
}

/* Loop: run a cheap call here, from decoding to its reply, without the
 * hand-offs to a worker and back (server.inline_calls). 0 when it is not one
 * or turned out to need a worker (identity, storage, a long reply, no room
 * to expose a Read-Read reply now): nothing of the attempt is left and it
 * goes to the pool as any other. */
static int run_inline(struct rr_sreq *rq)
{
	struct rr_reg_ctx *reg = rq->srv->ep->reg;
	unsigned nbufs = rq->nbufs;
	int rc;

	if (rq->hdr.proc != RPCRDMA_MSG ||
	    !rpc_server_may_inline(rq->srv->rpc, rq->recv->buf + rq->payload_off,
				   rq->recv->len - rq->payload_off))
		return 0;
	rq->x.nowait = 1;
	rc = run_call(rq); /* Read-Read's exposure too, if its bound has room now */
	rq->x.nowait = 0;
	if (rc == -EAGAIN) {
		rpc_dispatch_done(rq->srv->rpc, &rq->x);
		rq->dispatched = 0;
		while (rq->nbufs > nbufs)
			rr_buf_put(reg, rq->bufs[--rq->nbufs]);
		rr_stat_add(&rq->conn->st.inline_declined, 1);
		return 0;
	}
	rr_stat_add(&rq->conn->st.calls, 1);
	rr_stat_add(&rq->conn->st.calls_inline, 1);
	rq->run_rc = rc;
	rrs_reply(rq);
	return 1;
}

/* Loop: the call has its Send buffer: run it here if cheap, else on a worker. */
static void submit(struct rr_sreq *rq)
{
	if (!run_inline(rq))
		rpc_server_submit(rq->srv->rpc, &rq->work);
}

/* Loop: the call's chunks are in; it runs on a worker once it has a Send buffer. */
static void sreq_to_worker(struct rr_sreq *rq)
{
	rrs_with_send(rq, submit);
}

/* Loop: whether rq (RDMA_NOMSG) may pull now; else it waits its turn. */
static int nomsg_turn(struct rr_sreq *rq)
{
	struct svc_conn *sc = rq->conn->side;

	if (!sc->nomsg_pulling) {
		sc->nomsg_pulling = rq->nomsg_pull = 1;
		return 1;
	}
	rr_stat_add(&rq->conn->st.nomsg_waits, 1);
	rq->nomsg_next = NULL;
	if (sc->nomsg_wait_tail)
		sc->nomsg_wait_tail->nomsg_next = rq;
	else
		sc->nomsg_wait = rq;
	sc->nomsg_wait_tail = rq;
	return 0;
}

/* See rpcrdma_svc.h. */
void rrs_nomsg_done(struct rr_sreq *rq)
{
	struct svc_conn *sc = rq->conn->side;
	struct rr_sreq *next;

	if (!rq->nomsg_pull)
		return;
	rq->nomsg_pull = sc->nomsg_pulling = 0;
	if ((next = sc->nomsg_wait) != NULL) {
		sc->nomsg_wait = next->nomsg_next;
		if (!sc->nomsg_wait)
			sc->nomsg_wait_tail = NULL;
		if (rr_conn_is_dead(next->conn))
			rrs_release(next);
		else
			rrs_start(next);
	}
}

/* Loop: a received call; answer its errors, or start pulling its chunks. */
void rrs_start(struct rr_sreq *rq)
{
	struct rr_conn *c = rq->conn;
	int rc;

	if (rq->decode_rc) {
		rrs_answer_error(rq, rq->decode_rc);
		return;
	}
	if (rq->hdr.proc != RPCRDMA_MSG && rq->hdr.proc != RPCRDMA_NOMSG) {
		/* RDMA_ERROR from a client, RDMA_MSGP: not ours to run */
		rrs_answer_error(rq, -EINVAL);
		return;
	}
	if (rq->overrun) {
		rr_stat_add(&c->st.credit_overruns, 1);
		log_info("%s: xid %#x: credit overrun answered with ERR_CHUNK", c->peer,
			 rq->hdr.xid);
		rrs_answer_error(rq, -EINVAL);
		return;
	}
	if (rq->hdr.proc == RPCRDMA_NOMSG && !nomsg_turn(rq))
		return; /* waits for the one being pulled */
	rq->reserve = rrs_hdr_reserve(rq);
	rc = rq->reserve + 64 > c->send_max ? -E2BIG : pull_chunks(rq);
	if (rc != 1)
		rrs_nomsg_done(rq);
	if (rc == 0)
		sreq_to_worker(rq);
	else if (rc == -EBADMSG || rc == -E2BIG || rc == -ENOMEM)
		rrs_answer_error(rq, rc);
	else if (rc < 0)
		rrs_release(rq);
}
