/*
 * soft_qp.c: queue pairs: creation, posting, completion in post order, and
 * the move to error that flushes every outstanding WR. conn->lock is held in
 * everything here except where a function takes it itself (the vb_ops).
 */
#include <stdlib.h>
#include <string.h>

#include "common/base/log.h"
#include "soft.h"

/* Check requested queue capacities against the device's limits. */
static int check_cap(const struct vb_qp_cap *cap)
{
	if (cap->max_send_wr < 1 || cap->max_send_wr > SOFT_MAX_QP_WR || cap->max_recv_wr < 1 ||
	    cap->max_recv_wr > SOFT_MAX_QP_WR) {
		log_err("queue depth send %u recv %u: each must be in [1, %u]", cap->max_send_wr,
			cap->max_recv_wr, SOFT_MAX_QP_WR);
		return -EINVAL;
	}
	if (cap->max_send_sge > SOFT_MAX_SGE || cap->max_recv_sge > SOFT_MAX_SGE) {
		log_err("SGEs send %u recv %u: at most %u", cap->max_send_sge, cap->max_recv_sge,
			SOFT_MAX_SGE);
		return -EINVAL;
	}
	if (cap->max_inline_data > SOFT_MAX_INLINE) {
		log_err("inline data %u: at most %u", cap->max_inline_data, SOFT_MAX_INLINE);
		return -EINVAL;
	}
	return 0;
}

/* Allocate both queues with their SGE and inline storage. */
static int alloc_queues(struct soft_conn *c)
{
	struct vb_qp_cap *cap = &c->cap;
	size_t ssz = cap->max_send_sge * sizeof(struct vb_sge) + cap->max_inline_data;

	c->sq = calloc(cap->max_send_wr, sizeof(*c->sq) + ssz);
	c->rq = calloc(cap->max_recv_wr,
		       sizeof(*c->rq) + cap->max_recv_sge * sizeof(struct vb_sge));
	if (c->sq == NULL || c->rq == NULL) {
		free(c->sq);
		free(c->rq);
		c->sq = NULL;
		c->rq = NULL;
		return -ENOMEM;
	}
	char *p = (char *)(c->sq + cap->max_send_wr);
	for (uint32_t i = 0; i < cap->max_send_wr; i++, p += ssz) {
		c->sq[i].sge = (struct vb_sge *)p;
		c->sq[i].inline_data = (uint8_t *)p + cap->max_send_sge * sizeof(struct vb_sge);
	}
	p = (char *)(c->rq + cap->max_recv_wr);
	for (uint32_t i = 0; i < cap->max_recv_wr;
	     i++, p += cap->max_recv_sge * sizeof(struct vb_sge))
		c->rq[i].sge = (struct vb_sge *)p;
	return 0;
}

/* Give the conn its send and receive queues. */
int soft_create_qp(struct vb_conn *conn, struct vb_pd *pd, struct vb_cq *send_cq,
		   struct vb_cq *recv_cq, const struct vb_qp_cap *cap)
{
	struct soft_conn *c = soft_conn(conn);
	int rc;

	if (pd == NULL || send_cq == NULL || recv_cq == NULL || cap == NULL ||
	    pd->dev != conn->dev || send_cq->dev != conn->dev || recv_cq->dev != conn->dev) {
		log_err("create_qp needs a PD and CQs of the conn's device");
		return -EINVAL;
	}
	if ((rc = check_cap(cap)) != 0)
		return rc;
	pthread_mutex_lock(&c->lock);
	if (c->qp != SOFT_QP_NONE) {
		pthread_mutex_unlock(&c->lock);
		log_err("conn already has a QP");
		return -EEXIST;
	}
	c->cap = *cap;
	if (c->cap.max_send_sge == 0)
		c->cap.max_send_sge = 1;
	if (c->cap.max_recv_sge == 0)
		c->cap.max_recv_sge = 1;
	if ((rc = alloc_queues(c)) != 0) {
		pthread_mutex_unlock(&c->lock);
		return rc;
	}
	c->rnr_timeout_ms = soft_env_uint("VB_SOFT_RNR_TIMEOUT_MS", 3000, 1, 3600000);
	c->ack_timeout_ms = soft_env_uint("VB_SOFT_ACK_TIMEOUT_MS", 8000, 1, 3600000);
	c->ack_delay_ms = soft_env_uint("VB_SOFT_ACK_DELAY_MS", 1, 0, 1000);
	c->no_ord_throttle = soft_env_uint("VB_SOFT_NO_ORD_THROTTLE", 0, 0, 1);
	conn->pd = pd;
	conn->send_cq = send_cq;
	conn->recv_cq = recv_cq;
	soft_cq_use((struct soft_cq *)send_cq, c, 1);
	soft_cq_use((struct soft_cq *)recv_cq, c, 1);
	pthread_mutex_lock(&c->dev->keys.lock);
	((struct soft_pd *)pd)->users++;
	pthread_mutex_unlock(&c->dev->keys.lock);
	c->qp = SOFT_QP_INIT;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

/* Free the queues and drop the PD and CQ uses. */
void soft_qp_free(struct soft_conn *c)
{
	if (c->qp == SOFT_QP_NONE)
		return;
	soft_cq_use((struct soft_cq *)c->base.send_cq, c, -1);
	soft_cq_use((struct soft_cq *)c->base.recv_cq, c, -1);
	pthread_mutex_lock(&c->dev->keys.lock);
	((struct soft_pd *)c->base.pd)->users--;
	pthread_mutex_unlock(&c->dev->keys.lock);
	free(c->sq);
	free(c->rq);
	c->sq = NULL;
	c->rq = NULL;
	c->qp = SOFT_QP_NONE;
}

/* The completion opcode of a send WR opcode. */
static enum vb_wc_opcode wc_opcode(uint8_t op)
{
	switch (op) {
	case VB_WR_RDMA_WRITE:
		return VB_WC_RDMA_WRITE;
	case VB_WR_RDMA_READ:
		return VB_WC_RDMA_READ;
	case SOFT_WR_BIND:
		return VB_WC_BIND_MW;
	default:
		return VB_WC_SEND;
	}
}

/* Report a send-side WR: always on error, on success only if signaled. */
static void send_cqe(struct soft_conn *c, uint64_t wr_id, uint8_t op, bool signaled,
		     enum vb_wc_status st)
{
	struct vb_wc wc = {.wr_id = wr_id, .conn = &c->base, .status = st, .opcode = wc_opcode(op)};

	if (st != VB_WC_SUCCESS || signaled)
		soft_cq_push((struct soft_cq *)c->base.send_cq, &wc);
}

/* Whether send WR w finished successfully. */
static bool wqe_done(const struct soft_conn *c, const struct soft_swqe *w)
{
	if (w->state == SOFT_WQE_DONE)
		return true;
	return w->state == SOFT_WQE_SENT && w->opcode != VB_WR_RDMA_READ &&
	       soft_seq_le(w->seq, c->acked_seq);
}

/* Complete finished send WRs from the head, keeping post order. */
void soft_sq_retire(struct soft_conn *c)
{
	bool any = false;

	while (c->sq_count && wqe_done(c, &c->sq[c->sq_head])) {
		struct soft_swqe *w = &c->sq[c->sq_head];

		send_cqe(c, w->wr_id, w->opcode, w->signaled, VB_WC_SUCCESS);
		c->sq_head = (c->sq_head + 1) % c->cap.max_send_wr;
		c->sq_count--;
		any = true;
	}
	if (any)
		soft_sq_progress(c);
}

/* See soft.h: the wait restarts now, or ends with the last unfinished WR. */
void soft_sq_progress(struct soft_conn *c)
{
	c->ack_wait_ms = c->sq_count ? soft_now_ms() : 0;
	soft_conn_arm(c);
}

/* See soft.h: the oldest unfinished send WR fails with status. */
void soft_sq_fail_head(struct soft_conn *c, enum vb_wc_status status)
{
	if (c->sq_count) {
		c->sq[c->sq_head].state = SOFT_WQE_FAILED;
		c->sq[c->sq_head].status = status;
	}
}

/* Complete the oldest Receive with status. */
void soft_rq_complete(struct soft_conn *c, enum vb_wc_status status, uint32_t byte_len,
		      unsigned flags, uint32_t inv_rkey)
{
	struct soft_rwqe *w = &c->rq[c->rq_head];
	struct vb_wc wc = {
		.wr_id = w->wr_id,
		.conn = &c->base,
		.status = status,
		.opcode = VB_WC_RECV,
		.byte_len = byte_len,
		.invalidated_rkey = inv_rkey,
		.wc_flags = flags,
	};

	soft_cq_push((struct soft_cq *)c->base.recv_cq, &wc);
	c->rq_head = (c->rq_head + 1) % c->cap.max_recv_wr;
	c->rq_count--;
}

/* The peer refused our request seq: fail it, then move the QP to error. */
void soft_sq_nak(struct soft_conn *c, uint32_t seq, enum vb_wc_status status)
{
	uint32_t cap = c->cap.max_send_wr;
	bool found = false;

	for (uint32_t k = 0, i = c->sq_head; k < c->sq_count; k++, i = (i + 1) % cap) {
		struct soft_swqe *w = &c->sq[i];

		/* PICKED too: a Write is refused at its header, while its payload still goes out */
		if (w->opcode != SOFT_WR_BIND &&
		    (w->state == SOFT_WQE_SENT || w->state == SOFT_WQE_PICKED) && w->seq == seq) {
			w->state = SOFT_WQE_FAILED;
			w->status = status;
			found = true;
			break;
		}
	}
	if (!found)
		log_err("%s: NAK for request seq %u that is not outstanding", c->base.peer, seq);
	else if (soft_seq_le(c->acked_seq, seq - 1))
		c->acked_seq = seq - 1; /* everything before it was processed */
	log_info("%s: request seq %u refused by the peer: %s", c->base.peer, seq,
		 vb_wc_status_str(status));
	soft_qp_error(c, SOFT_ERR_PEER, seq, status);
}

/* Complete every send WR in post order: finished ones succeed, failed ones report, the rest flush.
 */
static void flush_sq(struct soft_conn *c)
{
	while (c->sq_count) {
		struct soft_swqe *w = &c->sq[c->sq_head];
		enum vb_wc_status st = VB_WC_WR_FLUSH_ERR;

		if (wqe_done(c, w))
			st = VB_WC_SUCCESS;
		else if (w->state == SOFT_WQE_FAILED)
			st = (enum vb_wc_status)w->status;
		send_cqe(c, w->wr_id, w->opcode, w->signaled, st);
		c->sq_head = (c->sq_head + 1) % c->cap.max_send_wr;
		c->sq_count--;
	}
	c->sq_tx = c->sq_head;
	c->sq_unpicked = 0;
	c->reads_out = 0;
	c->ack_wait_ms = 0;
}

/* Move the QP to error: tell the peer as origin says, flush both queues. */
void soft_qp_error(struct soft_conn *c, enum soft_err_origin origin, uint32_t seq,
		   enum vb_wc_status status)
{
	if (c->qp == SOFT_QP_ERROR || c->qp == SOFT_QP_NONE)
		return;
	c->qp = SOFT_QP_ERROR;
	soft_cma_raise(c); /* before anything is flushed (soft_cma.c) */
	soft_rx_abort(c);
	soft_tx_drop(c, origin == SOFT_ERR_RESPONDER || origin == SOFT_ERR_LOCAL);
	while (c->resp_count) {
		soft_mr_put(c->dev, &c->resp[c->resp_head].mr, 1);
		c->resp_head = (c->resp_head + 1) % SOFT_MAX_RD_ATOM;
		c->resp_count--;
	}
	c->reads_in = 0;
	c->ack_pending = false;
	c->ack_hold = false;
	c->ack_hold_end = 0;
	if (origin == SOFT_ERR_RESPONDER || origin == SOFT_ERR_LOCAL) {
		c->final_op = origin == SOFT_ERR_RESPONDER ? SOFT_OP_NAK : SOFT_OP_ERR;
		c->final_seq = seq;
		c->final_status = (uint8_t)status;
	} else {
		c->tx_closed = true;
	}
	flush_sq(c);
	while (c->rq_count)
		soft_rq_complete(c, VB_WC_WR_FLUSH_ERR, 0, 0, 0);
}

/* Validate one send WR against the QP's capabilities; 0 or -EINVAL. */
static int check_send_wr(struct soft_conn *c, const struct vb_send_wr *wr, uint64_t *len)
{
	uint64_t total = 0;

	if ((unsigned)wr->opcode > VB_WR_RDMA_READ || wr->num_sge < 0 ||
	    (uint32_t)wr->num_sge > c->cap.max_send_sge || (wr->num_sge && wr->sg_list == NULL)) {
		log_err("send WR %llu: bad opcode %d or SGE count %d (max %u)",
			(unsigned long long)wr->wr_id, wr->opcode, wr->num_sge,
			c->cap.max_send_sge);
		return -EINVAL;
	}
	for (int i = 0; i < wr->num_sge; i++)
		total += wr->sg_list[i].length;
	if (total > SOFT_MAX_MSG) {
		log_err("send WR %llu: %llu bytes is more than a message can carry",
			(unsigned long long)wr->wr_id, (unsigned long long)total);
		return -EINVAL;
	}
	if ((wr->send_flags & VB_SEND_INLINE) && wr->opcode != VB_WR_RDMA_READ &&
	    total > c->cap.max_inline_data) {
		log_err("send WR %llu: %llu inline bytes, the QP allows %u",
			(unsigned long long)wr->wr_id, (unsigned long long)total,
			c->cap.max_inline_data);
		return -EINVAL;
	}
	*len = total;
	return 0;
}

/* Copy one send WR into the next SQ slot. */
static void enqueue_send(struct soft_conn *c, const struct vb_send_wr *wr, uint32_t len)
{
	uint32_t i = (c->sq_head + c->sq_count) % c->cap.max_send_wr;
	struct soft_swqe *w = &c->sq[i];

	w->wr_id = wr->wr_id;
	w->opcode = (uint8_t)wr->opcode;
	w->state = SOFT_WQE_QUEUED;
	w->signaled = wr->send_flags & VB_SEND_SIGNALED;
	w->fence = wr->send_flags & VB_SEND_FENCE;
	w->is_inline = (wr->send_flags & VB_SEND_INLINE) && wr->opcode != VB_WR_RDMA_READ;
	w->answered = (wr->send_flags & VB_SEND_ANSWERED) != 0;
	w->remote_addr = wr->remote_addr;
	w->rkey = wr->rkey;
	w->inv_rkey = wr->invalidate_rkey;
	w->len = len;
	w->seq = c->next_seq++;
	w->num_sge = wr->num_sge;
	memcpy(w->sge, wr->sg_list, (size_t)wr->num_sge * sizeof(*w->sge));
	c->sq_unpicked++;
	if (w->is_inline) {
		uint8_t *p = w->inline_data;

		for (int k = 0; k < wr->num_sge; k++) {
			memcpy(p, (void *)(uintptr_t)wr->sg_list[k].addr, wr->sg_list[k].length);
			p += wr->sg_list[k].length;
		}
	}
	if (c->sq_count++ == 0)
		soft_sq_progress(c);
}

/* Start transmitting from the caller's thread; the engine finishes what does not fit. */
static void start_tx(struct soft_conn *c)
{
	if (c->qp != SOFT_QP_RTS)
		return;
	if (!c->dev->direct_tx || soft_tx_pump(c))
		soft_engine_kick(c->dev->eng, c, SOFT_READY_TX);
}

/* Queue send WRs and start transmitting; a QP in error flushes them. As on
 * rxe, the WRs are queued before the "doorbell" that starts them, and that is
 * what a thread with changed credentials is refused: it gets -EACCES with its
 * WRs queued and *bad untouched (VB_SOFT_FAIL_POST can do the same, or refuse
 * a chain before queueing anything). */
int soft_post_send(struct vb_conn *conn, struct vb_send_wr *wr, struct vb_send_wr **bad)
{
	struct soft_conn *c = soft_conn(conn);
	enum soft_fail_mode fail = soft_fail_post(c->dev, wr);
	int rc = 0, doorbell;

	if (fail == SOFT_FAIL_REFUSE) {
		if (bad)
			*bad = wr;
		return -EIO;
	}
	doorbell = fail == SOFT_FAIL_DOORBELL ? -EIO : soft_cred_check(&c->dev->base);
	pthread_mutex_lock(&c->lock);
	if (c->qp != SOFT_QP_RTS && c->qp != SOFT_QP_ERROR) {
		log_err("post_send on a QP that is not connected");
		rc = -EINVAL;
	}
	for (; wr && rc == 0; wr = wr->next) {
		uint64_t len;

		if ((rc = check_send_wr(c, wr, &len)) != 0)
			break;
		if (c->qp == SOFT_QP_ERROR) {
			send_cqe(c, wr->wr_id, (uint8_t)wr->opcode, true, VB_WC_WR_FLUSH_ERR);
		} else if (c->sq_count == c->cap.max_send_wr) {
			rc = -ENOMEM;
			break; /* *bad is this WR */
		} else {
			enqueue_send(c, wr, (uint32_t)len);
		}
	}
	if (rc && bad)
		*bad = wr;
	if (rc == 0 && doorbell) {
		pthread_mutex_unlock(&c->lock);
		return doorbell;
	}
	start_tx(c);
	pthread_mutex_unlock(&c->lock);
	return rc;
}

/* Queue Receives; wakes a Send stalled for want of one (RNR). */
int soft_post_recv(struct vb_conn *conn, struct vb_recv_wr *wr, struct vb_recv_wr **bad)
{
	struct soft_conn *c = soft_conn(conn);
	int rc = soft_cred_check(&c->dev->base);

	if (rc) {
		if (bad)
			*bad = wr;
		return rc;
	}
	pthread_mutex_lock(&c->lock);
	if (c->qp == SOFT_QP_NONE) {
		log_err("post_recv before create_qp");
		rc = -EINVAL;
	}
	for (; wr && rc == 0; wr = wr->next) {
		struct soft_rwqe *w;

		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > c->cap.max_recv_sge ||
		    (wr->num_sge && wr->sg_list == NULL)) {
			log_err("recv WR %llu: SGE count %d, the QP allows %u",
				(unsigned long long)wr->wr_id, wr->num_sge, c->cap.max_recv_sge);
			rc = -EINVAL;
			break; /* *bad is this WR */
		} else if (c->qp == SOFT_QP_ERROR) {
			struct vb_wc wc = {.wr_id = wr->wr_id,
					   .conn = conn,
					   .status = VB_WC_WR_FLUSH_ERR,
					   .opcode = VB_WC_RECV};

			soft_cq_push((struct soft_cq *)conn->recv_cq, &wc);
		} else if (c->rq_count == c->cap.max_recv_wr) {
			rc = -ENOMEM;
			break;
		} else {
			w = &c->rq[(c->rq_head + c->rq_count++) % c->cap.max_recv_wr];
			w->wr_id = wr->wr_id;
			w->num_sge = wr->num_sge;
			memcpy(w->sge, wr->sg_list, (size_t)wr->num_sge * sizeof(*w->sge));
		}
	}
	if (rc && bad)
		*bad = wr;
	if (c->rx.stalled && c->rq_count) {
		c->rx.stalled = false;
		soft_conn_arm(c);
		soft_engine_kick(c->dev->eng, c, SOFT_READY_RX);
	}
	pthread_mutex_unlock(&c->lock);
	return rc;
}

/* Queue a window binding; it takes effect in send-queue order. */
int soft_bind_mw(struct vb_conn *conn, struct vb_mw *m, struct vb_mr *mr, void *addr, size_t len,
		 unsigned access, uint64_t wr_id, int signaled)
{
	struct soft_conn *c = soft_conn(conn);
	struct soft_mw *mw = (struct soft_mw *)m;
	struct soft_swqe *w;
	uint32_t rkey = 0;
	int rc = 0;

	if (m == NULL || (len && mr == NULL)) {
		log_err("bind_mw needs a window and, unless len is 0, an MR");
		return -EINVAL;
	}
	if ((rc = soft_cred_check(conn->dev)) != 0)
		return rc;
	pthread_mutex_lock(&c->lock);
	if (c->qp == SOFT_QP_ERROR) {
		send_cqe(c, wr_id, SOFT_WR_BIND, true, VB_WC_WR_FLUSH_ERR);
	} else if (c->qp != SOFT_QP_RTS) {
		log_err("bind_mw on a QP that is not connected");
		rc = -EINVAL;
	} else if (c->sq_count == c->cap.max_send_wr) {
		rc = -ENOMEM;
	} else {
		if (len) {
			pthread_mutex_lock(&c->dev->keys.lock);
			rkey = soft_keys_random(&c->dev->keys);
			pthread_mutex_unlock(&c->dev->keys.lock);
		}
		w = &c->sq[(c->sq_head + c->sq_count++) % c->cap.max_send_wr];
		memset(w, 0, offsetof(struct soft_swqe, sge));
		w->wr_id = wr_id;
		w->opcode = SOFT_WR_BIND;
		w->signaled = signaled;
		w->bind = (struct soft_bind){.mw = mw,
					     .mr = (struct soft_mr *)mr,
					     .addr = (uintptr_t)addr,
					     .len = len,
					     .access = access,
					     .rkey = rkey};
		m->rkey = rkey;
		c->sq_unpicked++;
		start_tx(c);
	}
	pthread_mutex_unlock(&c->lock);
	return rc;
}
