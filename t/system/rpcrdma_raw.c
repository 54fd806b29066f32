/* rpcrdma_raw.c: a hand-driven RPC/RDMA peer (rpcrdma_raw.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "common/rpcrdma/rpcrdma_hdr.h"
#include "rpcrdma_raw.h"

static uint8_t *recv_buf(struct raw *r, int i)
{
	return r->area + (size_t)i * RAW_BUF;
}

static uint8_t *send_buf(struct raw *r)
{
	return r->area + (size_t)RAW_NRECV * RAW_BUF;
}

static void repost(struct raw *r, int i)
{
	struct vb_sge sge = {(uintptr_t)recv_buf(r, i), RAW_BUF, r->mr->lkey};
	struct vb_recv_wr wr = {.wr_id = 100 + (uint64_t)i, .sg_list = &sge, .num_sge = 1}, *bad;

	assert_int_equal(vb_post_recv(r->vc, &wr, &bad), 0);
}

void raw_pump(struct raw *r, int ms)
{
	struct pollfd pfd = {.fd = vb_cq_fd(r->cq), .events = POLLIN};
	struct vb_wc wc[16];
	int n;

	vb_cq_arm(r->cq);
	n = vb_poll_cq(r->cq, 16, wc);
	if (n == 0 && poll(&pfd, 1, ms) > 0) {
		vb_cq_ack(r->cq);
		n = vb_poll_cq(r->cq, 16, wc);
	}
	for (int i = 0; i < n; i++) {
		if (wc[i].status != VB_WC_SUCCESS) {
			r->broken = 1;
			continue;
		}
		if (wc[i].wr_id == RAW_WR_SEND)
			r->sends_done++;
		else if (wc[i].wr_id == RAW_WR_READ)
			r->reads_done++;
		else if (wc[i].wr_id >= 100) {
			r->ready[r->rtail % (RAW_NRECV * 2)] = (int)(wc[i].wr_id - 100);
			r->ready_len[r->rtail % (RAW_NRECV * 2)] = wc[i].byte_len;
			r->rtail++;
		}
	}
}

/* The device, its queues and registered buffers, before any connection. */
static void raw_init(struct raw *r)
{
	memset(r, 0, sizeof(*r));
	r->clnt.cred.flavor = AUTH_SYS;
	r->xid = 0x1000;
	assert_int_equal(vb_open("soft", &r->dev), 0);
	assert_int_equal(vb_alloc_pd(r->dev, &r->pd), 0);
	assert_int_equal(vb_create_cq(r->dev, 256, &r->cq), 0);
	r->area = aligned_alloc(4096, (size_t)(RAW_NRECV + 1) * RAW_BUF);
	r->data = aligned_alloc(4096, RAW_DATA);
	assert_int_equal(vb_reg_mr(r->pd, r->area, (size_t)(RAW_NRECV + 1) * RAW_BUF,
				   VB_ACCESS_LOCAL_WRITE, &r->mr),
			 0);
	assert_int_equal(vb_reg_mr(r->pd, r->data, RAW_DATA,
				   VB_ACCESS_LOCAL_WRITE | VB_ACCESS_REMOTE, &r->data_mr),
			 0);
}

/* A QP on r->vc with every receive posted; the private data to offer. */
static void raw_qp(struct raw *r, uint8_t pdata[RPCRDMA_CM_PRIVATE_LEN])
{
	struct vb_qp_cap cap = {
		.max_send_wr = 64, .max_recv_wr = RAW_NRECV, .max_send_sge = 1, .max_recv_sge = 1};
	struct rpcrdma_cm_private pd;
	struct wcur w;

	assert_int_equal(vb_create_qp(r->vc, r->pd, r->cq, r->cq, &cap), 0);
	for (int i = 0; i < RAW_NRECV; i++)
		repost(r, i);
	rpcrdma_cm_private_init(&pd, 0, RAW_BUF, RAW_BUF);
	wcur_init(&w, pdata, RPCRDMA_CM_PRIVATE_LEN);
	assert_int_equal(rpcrdma_cm_private_encode(&w, &pd), 0);
}

void raw_open(struct raw *r, const char *port)
{
	uint8_t pdata[RPCRDMA_CM_PRIVATE_LEN];
	struct vb_conn_param param = {.private_data = pdata, .private_data_len = sizeof(pdata)};
	struct pollfd pfd;
	struct vb_cm_event ev;

	raw_init(r);
	assert_int_equal(vb_resolve(r->dev, "127.0.0.1", port, RAW_TMO, &r->vc), 0);
	raw_qp(r, pdata);
	assert_int_equal(vb_connect(r->vc, &param), 0);
	pfd = (struct pollfd){.fd = vb_conn_fd(r->vc), .events = POLLIN};
	assert_true(poll(&pfd, 1, RAW_TMO) > 0);
	assert_int_equal(vb_conn_get_event(r->vc, &ev), 0);
	assert_int_equal(ev.type, VB_CM_ESTABLISHED);
}

void raw_listen(struct raw *r, const char *port)
{
	raw_init(r);
	assert_int_equal(vb_listen(r->dev, "127.0.0.1", port, 4, &r->l), 0);
}

void raw_accept(struct raw *r)
{
	uint8_t pdata[RPCRDMA_CM_PRIVATE_LEN];
	struct vb_conn_param param = {.private_data = pdata, .private_data_len = sizeof(pdata)};
	struct pollfd pfd = {.fd = vb_listener_fd(r->l), .events = POLLIN};
	struct vb_cm_event ev;

	assert_true(poll(&pfd, 1, RAW_TMO) > 0);
	assert_int_equal(vb_listener_get_event(r->l, &ev), 0);
	assert_int_equal(ev.type, VB_CM_CONNECT_REQUEST);
	r->vc = ev.conn;
	raw_qp(r, pdata);
	assert_int_equal(vb_accept(r->vc, &param), 0);
}

void raw_close(struct raw *r)
{
	if (r->vc) {
		vb_disconnect(r->vc);
		vb_conn_destroy(r->vc);
	}
	if (r->l)
		vb_listener_destroy(r->l);
	vb_dereg_mr(r->mr);
	vb_dereg_mr(r->data_mr);
	vb_destroy_cq(r->cq);
	assert_int_equal(vb_dealloc_pd(r->pd), 0); /* nothing of it left behind */
	vb_close(r->dev);
	free(r->area);
	free(r->data);
}

/* Post a signaled Send of [addr, addr+len) under lkey. */
static void post_send(struct raw *r, void *addr, size_t len, uint32_t lkey)
{
	struct vb_sge sge = {(uintptr_t)addr, (uint32_t)len, lkey};
	struct vb_send_wr wr = {.wr_id = RAW_WR_SEND,
				.sg_list = &sge,
				.num_sge = 1,
				.opcode = VB_WR_SEND,
				.send_flags = VB_SEND_SIGNALED},
			  *bad;

	assert_int_equal(vb_post_send(r->vc, &wr, &bad), 0);
}

void raw_send(struct raw *r, const void *msg, size_t len)
{
	int before = r->sends_done;

	assert_true(len <= RAW_BUF);
	memcpy(send_buf(r), msg, len);
	post_send(r, send_buf(r), len, r->mr->lkey);
	for (int i = 0; i < 100 && r->sends_done == before && !r->broken; i++)
		raw_pump(r, 50);
	assert_true(r->sends_done > before);
}

void raw_post(struct raw *r, size_t off, size_t len)
{
	assert_true(off + len <= RAW_DATA);
	post_send(r, r->data + off, len, r->data_mr->lkey);
}

size_t raw_recv(struct raw *r, uint8_t *out, int ms)
{
	size_t len;
	int idx;

	for (int waited = 0; r->rhead == r->rtail && waited < ms && !r->broken; waited += 50)
		raw_pump(r, 50);
	if (r->rhead == r->rtail)
		return 0;
	idx = r->ready[r->rhead % (RAW_NRECV * 2)];
	len = r->ready_len[r->rhead % (RAW_NRECV * 2)];
	r->rhead++;
	memcpy(out, recv_buf(r, idx), len);
	repost(r, idx);
	return len;
}

size_t raw_words(uint8_t *buf, const uint32_t *w, size_t n)
{
	struct wcur wc;

	wcur_init(&wc, buf, n * 4);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(wcur_put_u32(&wc, w[i]), 0);
	return n * 4;
}
