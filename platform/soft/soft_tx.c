/*
 * soft_tx.c: the transmit side of a connection (conn->lock held throughout).
 *
 * Messages are picked into a small ring (c->tx) in this order: a pending
 * connection-manager message, the coalesced ACK, the Read responses owed (in
 * request order), the final NAK/ERR after an error, then the send queue in
 * post order (window bindings are carried out as they are reached; a fenced
 * WR waits for earlier Reads; a Read waits while ORD Reads are on the wire).
 * Each ring message owns its iovecs and MR references, so a send WR can be
 * flushed while its bytes are still going out. Everything in the ring goes
 * out with one sendmsg (non-blocking, scatter-gather straight from the
 * registrations); a message once started is always finished before another.
 */
#include <string.h>
#include <sys/socket.h>

#include "common/base/log.h"
#include "soft.h"

#define TX_IOV_MAX 256
#define TX_BUDGET  (8u << 20) /* bytes per pump call before yielding */

/* The next free ring slot (caller checks room), its header set from h. */
static struct soft_txmsg *tx_add(struct soft_conn *c, const struct soft_hdr *h, uint8_t kind)
{
	uint32_t i = (c->tx_head + c->tx_count++) % SOFT_TX_RING;
	struct soft_txmsg *m = &c->tx[i];

	soft_hdr_encode(h, m->hdr);
	m->kind = kind;
	m->op = h->op;
	m->total = SOFT_HDR_LEN + h->len;
	m->done = 0;
	m->niov = m->nmr = 0;
	return m;
}

/* Payload from the message's own small buffer. */
static void tx_small(struct soft_txmsg *m, const void *data, uint32_t len)
{
	if (len == 0)
		return;
	memcpy(m->small, data, len);
	m->iov[0] = (struct iovec){.iov_base = (void *)m->small, .iov_len = len};
	m->niov = 1;
}

/* Whether the pending ACK is held back: nothing else is going out now to carry
 * it, and its hold (request_done) has not ended. */
static bool ack_held(const struct soft_conn *c)
{
	return c->ack_hold && c->tx_count == 0 && c->sq_unpicked == 0 && c->resp_count == 0 &&
	       c->final_op == SOFT_OP_NONE && soft_now_ms() < c->ack_hold_end;
}

/* The cross-memory attach messages owed (soft_cma.c), once connected. */
static void fill_cma(struct soft_conn *c)
{
	uint8_t probe[SOFT_CMA_PROBE_LEN];
	struct soft_hdr h;

	if ((!c->cma_probe_owed && !c->cma_ok_owed) ||
	    (c->cm != SOFT_CM_ACCEPTED && c->cm != SOFT_CM_CONNECTED))
		return;
	if (c->cma_probe_owed && c->tx_count < SOFT_TX_RING) {
		h = (struct soft_hdr){.op = SOFT_OP_CMA_PROBE,
				      .len = soft_cma_probe_payload(c, probe)};
		tx_small(tx_add(c, &h, SOFT_TX_CTRL), probe, h.len);
		c->cma_probe_owed = false;
	}
	if (c->cma_ok_owed && c->tx_count < SOFT_TX_RING) {
		h = (struct soft_hdr){.op = SOFT_OP_CMA_OK};
		tx_add(c, &h, SOFT_TX_CTRL);
		c->cma_ok_owed = false;
	}
}

/* The response to Read r, with its data, or the grant to copy it (soft_cma.c). */
static void add_resp(struct soft_conn *c, struct soft_resp *r)
{
	struct soft_hdr h = {.op = SOFT_OP_READ_RESP, .seq = r->seq, .len = r->len};
	uint8_t grant[SOFT_CMA_GRANT_LEN];
	struct soft_txmsg *m;

	if (r->cma) {
		h.flags = SOFT_FLAG_CMA;
		h.aux = r->len;
		h.len = soft_cma_grant(r->word, grant);
	}
	m = tx_add(c, &h, SOFT_TX_RESP);
	if (r->cma) {
		tx_small(m, grant, h.len);
	} else if (r->len) {
		m->iov[0] =
			(struct iovec){.iov_base = (void *)(uintptr_t)r->addr, .iov_len = r->len};
		m->niov = 1;
	}
	m->mrs[0] = r->mr;
	m->nmr = r->mr ? 1 : 0;
}

/* Pick the connection-manager message, ACK, Read responses and final message. */
static void fill_ctrl(struct soft_conn *c)
{
	struct soft_hdr h;

	if (c->cm_op != SOFT_OP_NONE && c->tx_count < SOFT_TX_RING) {
		h = (struct soft_hdr){
			.op = c->cm_op, .len = c->cm_pdata_len, .addr = SOFT_WIRE_MAGIC};
		h.aux = (uint32_t)c->my_ird << 8 | c->my_ord;
		if ((h.op == SOFT_OP_HELLO || h.op == SOFT_OP_ACCEPT) && soft_cma_able(c))
			h.flags = SOFT_FLAG_CMA_ABLE;
		tx_small(tx_add(c, &h, SOFT_TX_CTRL), c->cm_pdata, c->cm_pdata_len);
		c->cm_op = SOFT_OP_NONE;
	}
	fill_cma(c);
	if (c->ack_pending && c->tx_count < SOFT_TX_RING && !ack_held(c)) {
		h = (struct soft_hdr){.op = SOFT_OP_ACK, .seq = c->ack_seq};
		tx_add(c, &h, SOFT_TX_CTRL);
		c->ack_pending = false;
		c->ack_hold = false;
		c->ack_hold_end = 0;
	}
	while (c->resp_count && c->tx_count < SOFT_TX_RING) {
		add_resp(c, &c->resp[c->resp_head]);
		c->resp_head = (c->resp_head + 1) % SOFT_MAX_RD_ATOM;
		c->resp_count--;
	}
	if (c->final_op != SOFT_OP_NONE && c->tx_count < SOFT_TX_RING) {
		h = (struct soft_hdr){.op = c->final_op, .seq = c->final_seq};
		h.status = c->final_status;
		tx_add(c, &h, SOFT_TX_CTRL);
		c->final_op = SOFT_OP_NONE;
		c->tx_closed = true;
	}
}

/* The header of send WR w. */
static struct soft_hdr wqe_hdr(const struct soft_swqe *w)
{
	static const uint8_t ops[] = {
		[VB_WR_SEND] = SOFT_OP_SEND,
		[VB_WR_SEND_WITH_INV] = SOFT_OP_SEND_INV,
		[VB_WR_RDMA_WRITE] = SOFT_OP_WRITE,
		[VB_WR_RDMA_READ] = SOFT_OP_READ_REQ,
	};
	struct soft_hdr h = {.op = ops[w->opcode], .seq = w->seq, .key = w->rkey};

	if (w->answered && (w->opcode == VB_WR_SEND || w->opcode == VB_WR_SEND_WITH_INV))
		h.flags = SOFT_FLAG_ANSWERED;

	if (w->opcode == VB_WR_RDMA_READ) {
		h.aux = w->len;
	} else {
		h.len = w->len;
		if (w->opcode == VB_WR_SEND_WITH_INV)
			h.key = w->inv_rkey;
	}
	if (w->opcode == VB_WR_RDMA_READ || w->opcode == VB_WR_RDMA_WRITE)
		h.addr = w->remote_addr;
	return h;
}

/* Whether the peer copies the data of a Write of len bytes in n segments
 * itself (soft_cma.c). */
static bool by_cma(const struct soft_conn *c, uint32_t len, int n)
{
	return c->cma_peer_copies && SOFT_CMA_SIZE_OK(len) && n <= SOFT_CMA_MAX_SEG;
}

/* Make ring message m (header h) carry the list of its data's segments
 * instead of the data. */
static void tx_cma(struct soft_txmsg *m, struct soft_hdr *h)
{
	h->flags |= SOFT_FLAG_CMA;
	h->aux = h->len;
	h->len = soft_cma_encode(m->iov, m->niov, m->small);
	soft_hdr_encode(h, m->hdr);
	m->total = SOFT_HDR_LEN + h->len;
	m->iov[0] = (struct iovec){.iov_base = (void *)m->small, .iov_len = h->len};
	m->niov = 1;
}

/* Put send WR w in the ring; false (and the QP in error) if its local keys are bad. */
static bool pick_wqe(struct soft_conn *c, struct soft_swqe *w, uint32_t idx)
{
	struct soft_hdr h = wqe_hdr(w);
	struct soft_txmsg *m;
	enum vb_wc_status st = VB_WC_SUCCESS;

	if (w->opcode == VB_WR_RDMA_READ) {
		/* check the landing zone now; it is resolved again when the data comes */
		struct iovec iov[SOFT_MAX_SGE];
		struct soft_mr *mrs[SOFT_MAX_SGE];
		int niov, nmr;

		st = soft_keys_local(c->dev, c->base.pd, w->sge, w->num_sge, VB_ACCESS_LOCAL_WRITE,
				     iov, &niov, mrs, &nmr);
		soft_mr_put(c->dev, mrs, nmr);
	}
	if (st != VB_WC_SUCCESS)
		goto bad;
	if (w->opcode == VB_WR_RDMA_READ && c->cma_we_copy && SOFT_CMA_SIZE_OK(w->len))
		h.flags |= SOFT_FLAG_CMA; /* we would rather copy the data ourselves */
	m = tx_add(c, &h, SOFT_TX_WQE);
	m->wqe = idx;
	if (w->opcode == VB_WR_RDMA_READ) {
		c->reads_out++;
	} else if (w->is_inline) {
		tx_small(m, w->inline_data, w->len);
	} else {
		st = soft_keys_local(c->dev, c->base.pd, w->sge, w->num_sge, 0, m->iov, &m->niov,
				     m->mrs, &m->nmr);
		if (st != VB_WC_SUCCESS) {
			c->tx_count--;
			goto bad;
		}
		if (w->opcode == VB_WR_RDMA_WRITE && by_cma(c, w->len, m->niov))
			tx_cma(m, &h);
	}
	w->state = SOFT_WQE_PICKED;
	return true;
bad:
	log_err("%s: send WR %llu: local key or bounds invalid", c->base.peer,
		(unsigned long long)w->wr_id);
	w->state = SOFT_WQE_FAILED;
	w->status = st;
	soft_qp_error(c, SOFT_ERR_LOCAL, 0, st);
	return false;
}

/* Whether the send queue may be picked from now. */
static bool sq_open(const struct soft_conn *c)
{
	return c->qp == SOFT_QP_RTS && !c->tx_closed && c->sq_unpicked;
}

/* Carry out the memory window binds at the head of the unpicked send queue
 * (a fenced one once our Reads are answered): they put nothing on the wire.
 * False once the QP went to error. */
static bool run_binds(struct soft_conn *c)
{
	uint32_t cap = c->cap.max_send_wr;
	struct soft_swqe *w;

	while (sq_open(c) && (w = &c->sq[c->sq_tx])->opcode == SOFT_WR_BIND &&
	       !(w->fence && c->reads_out)) {
		bool ok = soft_mw_bind_exec(c->dev, c->base.pd, &w->bind);

		w->state = ok ? SOFT_WQE_DONE : SOFT_WQE_FAILED;
		w->status = VB_WC_MW_BIND_ERR;
		c->sq_tx = (c->sq_tx + 1) % cap;
		c->sq_unpicked--;
		if (!ok) {
			log_err("%s: memory window bind WR %llu is invalid", c->base.peer,
				(unsigned long long)w->wr_id);
			soft_qp_error(c, SOFT_ERR_LOCAL, 0, VB_WC_MW_BIND_ERR);
			return false;
		}
		soft_sq_retire(c);
	}
	return true;
}

/* Pick send-queue WRs in post order while the ring has room and RC rules allow. */
static void fill_sq(struct soft_conn *c)
{
	uint32_t cap = c->cap.max_send_wr;

	while (c->tx_count < SOFT_TX_RING && run_binds(c) && sq_open(c)) {
		struct soft_swqe *w = &c->sq[c->sq_tx];

		if (w->fence && c->reads_out)
			break;
		if (w->opcode == VB_WR_RDMA_READ && c->reads_out >= c->base.ord &&
		    !c->no_ord_throttle)
			break;
		if (!pick_wqe(c, w, c->sq_tx))
			return;
		c->sq_tx = (c->sq_tx + 1) % cap;
		c->sq_unpicked--;
	}
}

/* Gather the ring's unsent bytes into iov (up to max entries). */
static int tx_gather(struct soft_conn *c, struct iovec *iov, int max)
{
	int n = 0;

	for (uint32_t k = 0; k < c->tx_count && n < max; k++) {
		struct soft_txmsg *m = &c->tx[(c->tx_head + k) % SOFT_TX_RING];
		size_t skip = m->done;

		if (skip < SOFT_HDR_LEN) {
			iov[n++] = (struct iovec){(void *)(m->hdr + skip), SOFT_HDR_LEN - skip};
			skip = 0;
		} else {
			skip -= SOFT_HDR_LEN;
		}
		for (int i = 0; i < m->niov && n < max; i++) {
			if (skip >= m->iov[i].iov_len) {
				skip -= m->iov[i].iov_len;
				continue;
			}
			iov[n].iov_base = (char *)m->iov[i].iov_base + skip;
			iov[n++].iov_len = m->iov[i].iov_len - skip;
			skip = 0;
		}
	}
	return n;
}

/* A message went out entirely: release what it held, note what it means. */
static void tx_msg_done(struct soft_conn *c, struct soft_txmsg *m)
{
	soft_mr_put(c->dev, m->mrs, m->nmr);
	m->nmr = 0;
	if (m->kind == SOFT_TX_WQE && c->qp == SOFT_QP_RTS)
		c->sq[m->wqe].state = SOFT_WQE_SENT;
	else if (m->kind == SOFT_TX_RESP && c->reads_in)
		c->reads_in--;
	if (m->op == SOFT_OP_REJECT)
		c->shut_pending = true;
}

/* Account n bytes sent. */
static void tx_consume(struct soft_conn *c, size_t n)
{
	while (n && c->tx_count) {
		struct soft_txmsg *m = &c->tx[c->tx_head];
		size_t take = m->total - m->done < n ? m->total - m->done : n;

		m->done += (uint32_t)take;
		n -= take;
		if (m->done < m->total)
			break;
		tx_msg_done(c, m);
		c->tx_head = (c->tx_head + 1) % SOFT_TX_RING;
		c->tx_count--;
	}
}

/* Drop picked messages after an error, keeping a half-sent one if asked. */
void soft_tx_drop(struct soft_conn *c, bool keep_partial)
{
	uint32_t keep = 0;

	if (keep_partial && c->tx_count && c->tx[c->tx_head].done > 0)
		keep = 1;
	for (uint32_t k = keep; k < c->tx_count; k++) {
		struct soft_txmsg *m = &c->tx[(c->tx_head + k) % SOFT_TX_RING];

		soft_mr_put(c->dev, m->mrs, m->nmr);
		m->nmr = 0;
	}
	c->tx_count = keep;
}

/* Nothing left to send and a shutdown was asked for: half-close (the peer sees EOF). */
static void tx_maybe_shut(struct soft_conn *c)
{
	if (c->shut_pending && !c->shut_done) {
		shutdown(c->fd, SHUT_WR);
		c->shut_done = true;
	}
}

/* Send what can go without blocking (conn->lock held); true if more remains. */
bool soft_tx_pump(struct soft_conn *c)
{
	struct iovec iov[TX_IOV_MAX];
	size_t sent = 0;

	if (c->fd < 0 || c->shut_done)
		return false;
	for (;;) {
		struct msghdr msg = {.msg_iov = iov};
		ssize_t n;

		/* binds first: a pending ACK is held while only they wait */
		run_binds(c);
		fill_ctrl(c);
		fill_sq(c);
		if (c->tx_count == 0) {
			tx_maybe_shut(c);
			return false;
		}
		msg.msg_iovlen = (size_t)tx_gather(c, iov, TX_IOV_MAX);
		n = sendmsg(c->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				soft_conn_broken(c, -errno);
			return false;
		}
		tx_consume(c, (size_t)n);
		sent += (size_t)n;
		if (sent >= TX_BUDGET)
			return true;
	}
}
