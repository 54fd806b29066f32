/*
 * soft_rx.c: the receive side of a connection, run by the engine with
 * conn->lock held. It plays both the responder (Sends, Writes, Read requests
 * from the peer) and the initiator's receive path (ACK, NAK, Read responses).
 *
 * Headers (and small payloads) are read into a staging buffer; once a
 * header names its target, i.e. the next posted Receive, the registration a
 * Write addresses or the landing zone of our Read, the payload is read with
 * readv straight into it, plus a bounded tail of staging for the headers that
 * follow. After a large payload that tail is small, so the next large payload
 * is again read in place rather than copied out of staging.
 *
 * A Send with no Receive posted stalls the stream (RNR): nothing more is read
 * until a Receive is posted or the QP's RNR deadline passes, which fails the
 * sender's WR with RNR_RETRY_EXC_ERR. In error, everything is read and dropped
 * until EOF.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/base/log.h"
#include "soft.h"

#define RX_BUDGET	   (8u << 20) /* bytes per pump call before yielding */
#define RX_BIG_PAYLOAD	   (64u << 10)
#define RX_SMALL_READAHEAD 512u

enum rx_verdict {
	RX_GO,	  /* header consumed, target set up */
	RX_STALL, /* header left in staging: retry later (RNR) */
	RX_FAIL,  /* header consumed, QP in error or connection failed */
};

struct rx_op {
	const char *name;
	uint32_t max_len; /* largest payload */
	unsigned states;  /* CM states (1 << enum soft_cm_state) it may arrive in */
	enum rx_verdict (*start)(struct soft_conn *c, const struct soft_hdr *h);
	void (*done)(struct soft_conn *c, const struct soft_hdr *h);
};

/* Allocate the staging buffer. */
int soft_rx_init(struct soft_rx *rx)
{
	memset(rx, 0, sizeof(*rx));
	rx->buf = malloc(SOFT_RX_BUF);
	rx->readahead = SOFT_RX_BUF;
	return rx->buf ? 0 : -ENOMEM;
}

/* Release the receive side. */
void soft_rx_fini(struct soft_conn *c)
{
	soft_rx_abort(c);
	free(c->rx.buf);
	c->rx.buf = NULL;
}

/* Drop a half-received message's refs and any RNR stall. */
void soft_rx_abort(struct soft_conn *c)
{
	struct soft_rx *rx = &c->rx;

	soft_mr_put(c->dev, rx->mrs, rx->nmr);
	rx->nmr = 0;
	rx->in_msg = false;
	rx->stalled = false;
	soft_conn_arm(c);
}

/* The peer broke the protocol: tell it and fail the QP, or drop a half-made connection. */
static enum rx_verdict proto_err(struct soft_conn *c, const struct soft_hdr *h, const char *why)
{
	log_err("%s: protocol error: op %u seq %u len %u: %s", c->base.peer, h->op, h->seq, h->len,
		why);
	if (c->qp == SOFT_QP_RTS)
		soft_qp_error(c, SOFT_ERR_LOCAL, 0, VB_WC_GENERAL_ERR);
	else
		soft_conn_broken(c, -EPROTO);
	return RX_FAIL;
}

/* Refuse the peer's request h with status (the peer's WR fails with it). */
static enum rx_verdict nak(struct soft_conn *c, const struct soft_hdr *h, enum vb_wc_status st)
{
	log_warn("%s: refusing request seq %u (op %u key 0x%x addr 0x%llx len %u): %s",
		 c->base.peer, h->seq, h->op, h->key, (unsigned long long)h->addr,
		 h->len ? h->len : h->aux, vb_wc_status_str(st));
	soft_qp_error(c, SOFT_ERR_RESPONDER, h->seq, st);
	return RX_FAIL;
}

/* Requests must come in sequence. */
static bool seq_ok(struct soft_conn *c, const struct soft_hdr *h)
{
	if (h->seq == c->rx_expect)
		return true;
	proto_err(c, h, "request out of sequence");
	return false;
}

/* A request is done: acknowledge it with the next ACK. The ACK that ends
 * with Sends their sender says will be answered (SOFT_FLAG_ANSWERED: RPC
 * calls and replies; the Writes before them aside) waits up to ack_delay_ms
 * from the first of them for an answer to carry it: the peer then gets one
 * message, not an ACK and the answer, and wakes once. Anything else after
 * them is acknowledged at once, as a NIC does, unless an answered Send comes
 * right behind it (a reply's data in a Write, then the reply) and takes the
 * hold up again. The hold's end is set once per ACK, so every request is
 * acknowledged within ack_delay_ms. */
static void request_done(struct soft_conn *c, const struct soft_hdr *h, bool answered)
{
	c->rx_expect = h->seq + 1;
	if (c->dev->silent_acks)
		return; /* VB_SOFT_SILENT: a peer that never acknowledges */
	c->ack_seq = h->seq;
	c->ack_pending = true;
	c->ack_hold = answered && c->ack_delay_ms;
	if (c->ack_hold && c->ack_hold_end == 0) {
		c->ack_hold_end = soft_now_ms() + c->ack_delay_ms;
		soft_conn_arm(c); /* once per ACK: the deadline stays while the ACK waits */
	}
}

/* Handshake messages land in the private-data buffer. */
static enum rx_verdict cm_start(struct soft_conn *c, const struct soft_hdr *h)
{
	if (h->len) {
		c->rx.iov[0] = (struct iovec){.iov_base = (void *)c->rx.pdata, .iov_len = h->len};
		c->rx.niov = 1;
	}
	return RX_GO;
}

/* Handshake message complete: hand it to the connection manager. */
static void cm_done(struct soft_conn *c, const struct soft_hdr *h)
{
	if ((h->op == SOFT_OP_HELLO || h->op == SOFT_OP_ACCEPT) && (h->flags & SOFT_FLAG_CMA_ABLE))
		soft_cma_peer_able(c);
	soft_cm_recv(c, h, c->rx.pdata);
}

/* A segment list (soft_cma.c) of h lands in rx->cma: false (protocol error)
 * unless this end copies for its peer and the list's length is one. */
static bool cma_list(struct soft_conn *c, const struct soft_hdr *h)
{
	if (!c->cma_we_copy || h->len % 16 || h->len < 16 || h->len > sizeof(c->rx.cma)) {
		proto_err(c, h, "segment list unasked for or malformed");
		return false;
	}
	c->rx.iov[0] = (struct iovec){.iov_base = (void *)c->rx.cma, .iov_len = h->len};
	c->rx.niov = 1;
	return true;
}

/* The peer's probe: its word lands in rx->cma. */
static enum rx_verdict probe_start(struct soft_conn *c, const struct soft_hdr *h)
{
	if (h->len != SOFT_CMA_PROBE_LEN && h->len != 8) /* 8: a build without generation words */
		return proto_err(c, h, "probe of the wrong length");
	c->rx.iov[0] = (struct iovec){.iov_base = (void *)c->rx.cma, .iov_len = h->len};
	c->rx.niov = 1;
	return RX_GO;
}

static void probe_done(struct soft_conn *c, const struct soft_hdr *h)
{
	soft_cma_probe_recv(c, c->rx.cma, h->len);
}

/* The peer read our probe: it copies our data from now on. */
static enum rx_verdict cma_ok_start(struct soft_conn *c, const struct soft_hdr *h)
{
	if (c->cma_pid <= 0)
		return proto_err(c, h, "CMA_OK without a probe");
	c->cma_peer_copies = true;
	return RX_GO;
}

/* Cut the receive iovecs down to len bytes; false if they hold less. */
static bool trim_iov(struct soft_rx *rx, uint32_t len)
{
	for (int i = 0; i < rx->niov; i++) {
		if (rx->iov[i].iov_len >= len) {
			rx->iov[i].iov_len = len;
			rx->niov = len ? i + 1 : i;
			return true;
		}
		len -= (uint32_t)rx->iov[i].iov_len;
	}
	return len == 0;
}

/* A Send: consume the next Receive (or stall), check its keys and room. */
static enum rx_verdict send_start(struct soft_conn *c, const struct soft_hdr *h)
{
	struct soft_rx *rx = &c->rx;
	struct soft_rwqe *w;

	if (!seq_ok(c, h))
		return RX_FAIL;
	if (c->rq_count == 0) {
		if (!rx->stalled) {
			rx->stalled = true;
			rx->stalled_ms = soft_now_ms();
			soft_conn_arm(c);
		}
		return RX_STALL;
	}
	w = &c->rq[c->rq_head];
	if (soft_keys_local(c->dev, c->base.pd, w->sge, w->num_sge, VB_ACCESS_LOCAL_WRITE, rx->iov,
			    &rx->niov, rx->mrs, &rx->nmr) != VB_WC_SUCCESS) {
		log_err("%s: Receive WR %llu: local key or bounds invalid", c->base.peer,
			(unsigned long long)w->wr_id);
		soft_rq_complete(c, VB_WC_LOC_PROT_ERR, 0, 0, 0);
		return nak(c, h, VB_WC_REM_OP_ERR);
	}
	if (!trim_iov(rx, h->len)) {
		soft_mr_put(c->dev, rx->mrs, rx->nmr);
		rx->nmr = 0;
		soft_rq_complete(c, VB_WC_LOC_LEN_ERR, h->len, 0, 0);
		return nak(c, h, VB_WC_REM_INV_REQ_ERR);
	}
	if (h->op == SOFT_OP_SEND_INV && !soft_mw_invalidate(c->dev, c->base.pd, h->key)) {
		soft_mr_put(c->dev, rx->mrs, rx->nmr);
		rx->nmr = 0;
		return nak(c, h, VB_WC_REM_INV_REQ_ERR);
	}
	return RX_GO;
}

/* A Send landed: complete the Receive, acknowledge. */
static void send_done(struct soft_conn *c, const struct soft_hdr *h)
{
	bool inv = h->op == SOFT_OP_SEND_INV;

	soft_mr_put(c->dev, c->rx.mrs, c->rx.nmr);
	c->rx.nmr = 0;
	soft_rq_complete(c, VB_WC_SUCCESS, h->len, inv ? VB_WC_WITH_INV : 0, inv ? h->key : 0);
	request_done(c, h, (h->flags & SOFT_FLAG_ANSWERED) != 0);
}

/* A Write: check key, PD, right and bounds; land it in place (or take the
 * list of the initiator's segments to copy from, soft_cma.c). */
static enum rx_verdict write_start(struct soft_conn *c, const struct soft_hdr *h)
{
	struct soft_rx *rx = &c->rx;
	bool cma = h->flags & SOFT_FLAG_CMA;
	enum vb_wc_status st;

	if (!seq_ok(c, h) || (cma && !cma_list(c, h)))
		return RX_FAIL;
	if (cma && h->aux > SOFT_CMA_MAX)
		return nak(c, h, VB_WC_REM_INV_REQ_ERR);
	st = soft_keys_remote(c->dev, c->base.pd, h->key, h->addr, cma ? h->aux : h->len,
			      VB_ACCESS_REMOTE_WRITE, &rx->mrs[0], NULL);
	if (st != VB_WC_SUCCESS)
		return nak(c, h, st);
	rx->nmr = rx->mrs[0] ? 1 : 0;
	if (h->len && !cma) {
		rx->iov[0] =
			(struct iovec){.iov_base = (void *)(uintptr_t)h->addr, .iov_len = h->len};
		rx->niov = 1;
	}
	return RX_GO;
}

/* A Write landed (or its segments are copied now): release the MR, acknowledge. */
static void write_done(struct soft_conn *c, const struct soft_hdr *h)
{
	struct iovec seg[SOFT_CMA_MAX_SEG];
	enum vb_wc_status st = VB_WC_SUCCESS;
	int n;

	if (h->flags & SOFT_FLAG_CMA) {
		if ((n = soft_cma_decode(c->rx.cma, h->len, h->aux, seg)) < 0)
			st = VB_WC_REM_INV_REQ_ERR;
		else if (!soft_cma_read(c, (void *)(uintptr_t)h->addr, h->aux, seg, n))
			st = VB_WC_REM_ACCESS_ERR;
	}
	soft_mr_put(c->dev, c->rx.mrs, c->rx.nmr);
	c->rx.nmr = 0;
	if (st != VB_WC_SUCCESS)
		nak(c, h, st);
	else
		request_done(c, h, false);
}

/* A Read request: check IRD, key and bounds, then owe the peer a response. */
static enum rx_verdict read_start(struct soft_conn *c, const struct soft_hdr *h)
{
	/* the initiator asks to copy the data itself, and may (soft_cma.c) */
	bool pull = (h->flags & SOFT_FLAG_CMA) && c->cma_peer_copies && SOFT_CMA_SIZE_OK(h->aux);
	uint64_t word[2] = {0, 0};
	struct soft_resp *r;
	struct soft_mr *mr;
	enum vb_wc_status st;

	if (!seq_ok(c, h))
		return RX_FAIL;
	if (c->reads_in >= c->base.ird || c->resp_count >= SOFT_MAX_RD_ATOM)
		return nak(c, h, VB_WC_REM_INV_REQ_ERR);
	if (h->aux > SOFT_MAX_MSG)
		return nak(c, h, VB_WC_REM_INV_REQ_ERR);
	st = soft_keys_remote(c->dev, c->base.pd, h->key, h->addr, h->aux, VB_ACCESS_REMOTE_READ,
			      &mr, pull ? word : NULL);
	if (st != VB_WC_SUCCESS)
		return nak(c, h, st);
	if (c->dev->silent_reads) {
		/* VB_SOFT_SILENT: the request is taken and never answered */
		soft_mr_put(c->dev, &mr, 1);
		c->rx_expect = h->seq + 1;
		return RX_GO;
	}
	r = &c->resp[(c->resp_head + c->resp_count++) % SOFT_MAX_RD_ATOM];
	*r = (struct soft_resp){.seq = h->seq,
				.len = h->aux,
				.addr = h->addr,
				.mr = mr,
				.cma = word[0] != 0,
				.word = {word[0], word[1]}};
	c->reads_in++;
	request_done(c, h, false);
	return RX_GO;
}

/* Our Read w failed here with st (its landing zone, or its copy): the QP to error. */
static void read_failed(struct soft_conn *c, struct soft_swqe *w, enum vb_wc_status st)
{
	if (st == VB_WC_LOC_PROT_ERR)
		log_err("%s: Read WR %llu: local key or bounds invalid", c->base.peer,
			(unsigned long long)w->wr_id);
	w->state = SOFT_WQE_FAILED;
	w->status = st;
	soft_qp_error(c, SOFT_ERR_LOCAL, 0, st);
}

/* The data of our oldest Read on the wire: it must be that Read's, whole; or
 * the grant to copy it ourselves, if we asked for that (soft_cma.c). */
static enum rx_verdict resp_start(struct soft_conn *c, const struct soft_hdr *h)
{
	struct soft_rx *rx = &c->rx;
	uint32_t cap = c->cap.max_send_wr;
	struct soft_swqe *w = NULL;
	bool cma = h->flags & SOFT_FLAG_CMA;

	for (uint32_t k = 0, i = c->sq_head; k < c->sq_count; k++, i = (i + 1) % cap) {
		if (c->sq[i].opcode == VB_WR_RDMA_READ && c->sq[i].state == SOFT_WQE_SENT) {
			w = &c->sq[i];
			rx->wqe = i;
			break;
		}
	}
	if (w == NULL || w->seq != h->seq || w->len != (cma ? h->aux : h->len))
		return proto_err(c, h, "Read response matches no outstanding Read");
	if (cma && (!c->cma_we_copy || h->len != SOFT_CMA_GRANT_LEN || !SOFT_CMA_SIZE_OK(w->len)))
		return proto_err(c, h, "a Read's grant we cannot take");
	soft_sq_progress(c); /* the answer has begun: a long one is not a silent peer */
	if (cma) {
		rx->iov[0] = (struct iovec){.iov_base = (void *)rx->cma, .iov_len = h->len};
		rx->niov = 1;
		return RX_GO;
	}
	if (soft_keys_local(c->dev, c->base.pd, w->sge, w->num_sge, VB_ACCESS_LOCAL_WRITE, rx->iov,
			    &rx->niov, rx->mrs, &rx->nmr) != VB_WC_SUCCESS) {
		read_failed(c, w, VB_WC_LOC_PROT_ERR);
		return RX_FAIL;
	}
	return RX_GO;
}

/* Copy the data of our Read w that the peer granted us (soft_cma.c); false,
 * and the QP in error, if that fails or does not count. */
static bool resp_pull(struct soft_conn *c, struct soft_swqe *w)
{
	struct iovec iov[SOFT_MAX_SGE];
	struct soft_mr *mrs[SOFT_MAX_SGE];
	int niov, nmr;
	enum vb_wc_status st = soft_keys_local(c->dev, c->base.pd, w->sge, w->num_sge,
					       VB_ACCESS_LOCAL_WRITE, iov, &niov, mrs, &nmr);

	if (st == VB_WC_SUCCESS && !soft_cma_pull(c, iov, niov, w->remote_addr, w->len, c->rx.cma))
		st = VB_WC_REM_ACCESS_ERR;
	soft_mr_put(c->dev, mrs, nmr);
	if (st != VB_WC_SUCCESS)
		read_failed(c, w, st);
	return st == VB_WC_SUCCESS;
}

/* Our Read's data landed (or we copy it now): complete it (in post order). */
static void resp_done(struct soft_conn *c, const struct soft_hdr *h)
{
	if ((h->flags & SOFT_FLAG_CMA) && !resp_pull(c, &c->sq[c->rx.wqe]))
		return;
	soft_mr_put(c->dev, c->rx.mrs, c->rx.nmr);
	c->rx.nmr = 0;
	c->sq[c->rx.wqe].state = SOFT_WQE_DONE;
	c->reads_out--;
	soft_sq_retire(c);
}

/* Requests up to seq are done at the peer. */
static enum rx_verdict ack_start(struct soft_conn *c, const struct soft_hdr *h)
{
	if (!soft_seq_le(h->seq, c->next_seq - 1) || !soft_seq_le(c->acked_seq, h->seq))
		return proto_err(c, h, "ACK out of range");
	c->acked_seq = h->seq;
	soft_sq_retire(c);
	return RX_GO;
}

/* The peer refused a request of ours. */
static enum rx_verdict nak_start(struct soft_conn *c, const struct soft_hdr *h)
{
	if (h->status == VB_WC_SUCCESS || h->status > VB_WC_GENERAL_ERR)
		return proto_err(c, h, "NAK with a bad status");
	soft_sq_nak(c, h->seq, (enum vb_wc_status)h->status);
	return RX_FAIL;
}

/* The peer's QP went to error: flush ours. */
static enum rx_verdict err_start(struct soft_conn *c, const struct soft_hdr *h)
{
	log_info("%s: peer QP went to error; flushing", c->base.peer);
	soft_qp_error(c, SOFT_ERR_PEER, 0, VB_WC_WR_FLUSH_ERR);
	return RX_FAIL;
}

#define ST(s)	  (1u << SOFT_CM_##s)
#define ST_DATA	  (ST(ACCEPTED) | ST(CONNECTED))
#define PDATA_MAX VB_MAX_PRIVATE_DATA

static const struct rx_op rx_ops[SOFT_OP_MAX] = {
	[SOFT_OP_HELLO] = {"HELLO", PDATA_MAX, ST(WAIT_HELLO), cm_start, cm_done},
	[SOFT_OP_ACCEPT] = {"ACCEPT", PDATA_MAX, ST(HELLO_SENT), cm_start, cm_done},
	[SOFT_OP_REJECT] = {"REJECT", PDATA_MAX, ST(HELLO_SENT), cm_start, cm_done},
	[SOFT_OP_RTU] = {"RTU", 0, ST(ACCEPTED), cm_start, cm_done},
	[SOFT_OP_SEND] = {"SEND", SOFT_MAX_MSG, ST_DATA, send_start, send_done},
	[SOFT_OP_SEND_INV] = {"SEND_INV", SOFT_MAX_MSG, ST_DATA, send_start, send_done},
	[SOFT_OP_WRITE] = {"WRITE", SOFT_MAX_MSG, ST_DATA, write_start, write_done},
	[SOFT_OP_READ_REQ] = {"READ_REQ", 0, ST_DATA, read_start, NULL},
	[SOFT_OP_READ_RESP] = {"READ_RESP", SOFT_MAX_MSG, ST_DATA, resp_start, resp_done},
	[SOFT_OP_ACK] = {"ACK", 0, ST_DATA, ack_start, NULL},
	[SOFT_OP_NAK] = {"NAK", 0, ST_DATA, nak_start, NULL},
	[SOFT_OP_ERR] = {"ERR", 0, ST_DATA, err_start, NULL},
	[SOFT_OP_CMA_PROBE] = {"CMA_PROBE", SOFT_CMA_PROBE_LEN, ST_DATA, probe_start, probe_done},
	[SOFT_OP_CMA_OK] = {"CMA_OK", 0, ST_DATA, cma_ok_start, NULL},
};

/* Decode the staged header and set up its target. */
static enum rx_verdict rx_header(struct soft_conn *c)
{
	struct soft_rx *rx = &c->rx;
	const struct rx_op *op;
	struct soft_hdr h;
	enum rx_verdict v;

	soft_hdr_decode(rx->buf + rx->rd, &h);
	op = h.op < SOFT_OP_MAX ? &rx_ops[h.op] : NULL;
	rx->niov = rx->iov_idx = rx->nmr = 0;
	if (op == NULL || op->start == NULL)
		v = proto_err(c, &h, "unknown operation");
	else if (h.len > op->max_len)
		v = proto_err(c, &h, "payload too long");
	else if (!(op->states & (1u << c->cm)))
		v = proto_err(c, &h, "unexpected in this connection state");
	else
		v = op->start(c, &h);
	if (v == RX_STALL)
		return v;
	rx->rd += SOFT_HDR_LEN;
	if (v == RX_GO) {
		rx->hdr = h;
		rx->left = h.len;
		rx->in_msg = true;
		rx->readahead = h.len >= RX_BIG_PAYLOAD ? RX_SMALL_READAHEAD : SOFT_RX_BUF;
	}
	return v;
}

/* Copy the part of the current payload already staged to its target. */
static void take_staged(struct soft_rx *rx)
{
	while (rx->left && rx->rd < rx->wr) {
		struct iovec *v = &rx->iov[rx->iov_idx];
		size_t n = rx->wr - rx->rd;

		if (n > v->iov_len)
			n = v->iov_len;
		memcpy(v->iov_base, rx->buf + rx->rd, n);
		v->iov_base = (char *)v->iov_base + n;
		v->iov_len -= n;
		if (v->iov_len == 0)
			rx->iov_idx++;
		rx->rd += (uint32_t)n;
		rx->left -= (uint32_t)n;
	}
}

/* Account n bytes read into the target iovecs (the rest went to staging). */
static void took_direct(struct soft_rx *rx, size_t n)
{
	while (n && rx->left) {
		struct iovec *v = &rx->iov[rx->iov_idx];
		size_t k = n < v->iov_len ? n : v->iov_len;

		v->iov_base = (char *)v->iov_base + k;
		v->iov_len -= k;
		if (v->iov_len == 0)
			rx->iov_idx++;
		rx->left -= (uint32_t)k;
		n -= k;
	}
	rx->wr += (uint32_t)n;
}

/* One read from the socket: 1 if bytes came, 0 if none now, -1 if it
 * closed/failed. A read that came short emptied the socket: the pump then
 * stops without another read that would only say so (the poller is
 * level-triggered, so what comes later is reported). */
static int rx_read(struct soft_conn *c, struct iovec *iov, int n, size_t *got)
{
	size_t want = 0;
	ssize_t r;

	for (int i = 0; i < n; i++)
		want += iov[i].iov_len;
	do
		r = readv(c->fd, iov, n);
	while (r < 0 && errno == EINTR);
	if (r > 0) {
		*got += (size_t)r;
		c->rx.drained = (size_t)r < want;
		return 1;
	}
	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	soft_conn_broken(c, r == 0 ? 0 : -errno);
	return -1;
}

/* Read payload straight into its target, plus a staging tail for what follows. */
static int rx_payload(struct soft_conn *c, size_t *got)
{
	struct soft_rx *rx = &c->rx;
	struct iovec iov[SOFT_MAX_SGE + 1];
	size_t before = *got;
	int n = 0, r;

	for (int i = rx->iov_idx; i < rx->niov; i++)
		iov[n++] = rx->iov[i];
	rx->rd = rx->wr = 0;
	iov[n++] = (struct iovec){.iov_base = (void *)rx->buf, .iov_len = rx->readahead};
	r = rx_read(c, iov, n, got);
	if (r > 0)
		took_direct(rx, *got - before);
	return r;
}

/* Read into staging (headers, small payloads). */
static int rx_staging(struct soft_conn *c, size_t *got)
{
	struct soft_rx *rx = &c->rx;
	size_t before = *got, want;
	struct iovec iov;
	int r;

	if (rx->rd == rx->wr) {
		rx->rd = rx->wr = 0;
	} else if (SOFT_RX_BUF - rx->wr < SOFT_HDR_LEN) {
		memmove(rx->buf, rx->buf + rx->rd, rx->wr - rx->rd);
		rx->wr -= rx->rd;
		rx->rd = 0;
	}
	want = SOFT_RX_BUF - rx->wr;
	if (want > rx->readahead)
		want = rx->readahead;
	iov = (struct iovec){.iov_base = (void *)(rx->buf + rx->wr), .iov_len = want};
	r = rx_read(c, &iov, 1, got);
	if (r > 0)
		rx->wr += (uint32_t)(*got - before);
	return r;
}

/* In error (or after reject): read and drop everything, to notice EOF. */
static bool rx_discard(struct soft_conn *c)
{
	size_t got = 0;
	struct iovec iov = {.iov_base = (void *)c->rx.buf, .iov_len = SOFT_RX_BUF};

	c->rx.rd = c->rx.wr = 0;
	while (rx_read(c, &iov, 1, &got) > 0)
		if (got >= RX_BUDGET)
			return true;
	return false;
}

/* Receive and process what the socket has (conn->lock held). */
bool soft_rx_pump(struct soft_conn *c)
{
	struct soft_rx *rx = &c->rx;
	size_t got = 0;

	rx->drained = false;
	for (;;) {
		if (c->fd < 0 || c->cm == SOFT_CM_CLOSED || c->cm == SOFT_CM_CONNECTING)
			return false;
		if (c->qp == SOFT_QP_ERROR || c->cm == SOFT_CM_REJECTED)
			return rx_discard(c);
		if (rx->in_msg) {
			take_staged(rx);
			if (rx->left && (rx->drained || rx_payload(c, &got) <= 0))
				return false;
			if (rx->left == 0) {
				const struct rx_op *op = &rx_ops[rx->hdr.op];

				rx->in_msg = false;
				if (op->done)
					op->done(c, &rx->hdr);
			}
		} else if (rx->wr - rx->rd >= SOFT_HDR_LEN) {
			if (rx->stalled || rx_header(c) == RX_STALL)
				return false;
		} else if (rx->drained || rx_staging(c, &got) <= 0) {
			return false;
		}
		if (got >= RX_BUDGET)
			return true;
	}
}
