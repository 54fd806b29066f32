/*
 * rdmacore_test: the rdma-core provider against a real device (Soft-RoCE in
 * the lab: VB_DEVICE=rxe0 VB_ADDR=192.0.2.1). Both ends of every connection
 * are in this process, on one device. Without a device the whole run is one
 * "1..0 # SKIP"; without VB_ADDR the connection cases skip.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "t/system/rdmacore_util.h"
#include "platform/ibverbs/verbs_rdmacore.h"

/* A completion status by name, for diagnostics (vb_wc_status_str lives in the registry). */
static const char *status_name(enum vb_wc_status s)
{
	static const char *const names[] = {"SUCCESS",		 "LOC_LEN_ERR",	    "LOC_PROT_ERR",
					    "REM_ACCESS_ERR",	 "REM_INV_REQ_ERR", "REM_OP_ERR",
					    "RNR_RETRY_EXC_ERR", "RETRY_EXC_ERR",   "WR_FLUSH_ERR",
					    "MW_BIND_ERR",	 "GENERAL_ERR"};

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

/* Attributes are sane; the same name opens again; an unknown name is -ENODEV. */
static int open_query(struct pair *p)
{
	struct vb_device *d2 = NULL;
	const struct vb_device_attr *a = &p->attr;

	printf("# %s: max_sge %u max_qp_wr %u max_cqe %u max_mr_size %llu ird %u ord %u mw %u\n",
	       p->dev->name, a->max_sge, a->max_qp_wr, a->max_cqe,
	       (unsigned long long)a->max_mr_size, a->max_qp_rd_atom, a->max_qp_init_rd_atom,
	       a->has_mw);
	T_CHECK(a->max_sge >= 1 && a->max_qp_wr >= 1 && a->max_cqe >= 1 && a->max_mr_size > 0);
	T_CHECK(strcmp(p->dev->provider, "rdma-core") == 0);
	T_EQ(vb_rdmacore_ops.open(p->dev->name, &d2), 0);
	T_CHECK(strcmp(d2->name, p->dev->name) == 0);
	vb_rdmacore_ops.close(d2);
	T_EQ(vb_rdmacore_ops.open("nonexistent9", &d2), -ENODEV);
	T_CHECK(d2 == NULL);
	return 0;
}

/* CQ fd is non-blocking; nothing to ack or poll on an idle CQ; bad sizes refused. */
static int cq_basics(struct pair *p)
{
	struct vb_cq *cq = NULL;
	struct vb_wc wc[4];
	int fd = vb_cq_fd(p->cq[0]);

	T_CHECK(fd >= 0);
	T_CHECK(fcntl(fd, F_GETFL) & O_NONBLOCK);
	T_EQ(vb_cq_ack(p->cq[0]), -EAGAIN);
	T_EQ(vb_poll_cq(p->cq[0], 4, wc), 0);
	T_EQ(vb_cq_arm(p->cq[0]), 0);
	T_EQ(vb_poll_cq(p->cq[0], -1, wc), -EINVAL);
	T_EQ(vb_create_cq(p->dev, 0, &cq), -EINVAL);
	if (p->attr.max_cqe < 0x7fffffff)
		T_EQ(vb_create_cq(p->dev, (int)p->attr.max_cqe + 1, &cq), -EINVAL);
	T_CHECK(cq == NULL);
	return 0;
}

/* MR keys and rights: rkey only with remote rights; bad arguments refused. */
static int mr_basics(struct pair *p)
{
	struct vb_mr *mr = NULL;

	T_CHECK(p->mr[0]->rkey != 0 && p->mr[0]->lkey != 0);
	T_EQ(vb_reg_mr(p->pd, p->buf[0], 4096, VB_ACCESS_LOCAL_WRITE, &mr), 0);
	T_EQ(mr->rkey, 0);
	T_EQ(mr->length, 4096);
	T_EQ(vb_dereg_mr(mr), 0);
	T_EQ(vb_reg_mr(p->pd, p->buf[0], 4096, VB_ACCESS_REMOTE_WRITE, &mr), 0);
	T_CHECK(mr->rkey != 0);
	T_EQ(vb_dereg_mr(mr), 0);
	T_EQ(vb_reg_mr(p->pd, p->buf[0], 4096, 1u << 12, &mr), -EINVAL);
	T_EQ(vb_reg_mr(p->pd, p->buf[0], 0, VB_ACCESS_LOCAL_WRITE, &mr), -EINVAL);
	T_EQ(vb_reg_mr(p->pd, NULL, 4096, VB_ACCESS_LOCAL_WRITE, &mr), -EINVAL);
	return 0;
}

/* Private data arrives both ways (IB pads it: compare our bytes); IRD/ORD negotiated. */
static int connect_private_data(struct pair *p)
{
	static const char reqd[] = "nfsrdma-request", repd[] = "nfsrdma-reply-0123";
	struct vb_conn_param req = {reqd, sizeof(reqd), 4, 2}, rep = {repd, sizeof(repd), 3, 1};
	struct vb_cm_event rev, est[2];

	T_EQ(pair_connect(p, &req, &rep, &rev, est), 0);
	T_CHECK(rev.private_data_len >= sizeof(reqd));
	T_CHECK(memcmp(rev.private_data, reqd, sizeof(reqd)) == 0);
	T_EQ(rev.responder_resources, 4);
	T_EQ(rev.initiator_depth, 2);
	T_CHECK(est[0].private_data_len >= sizeof(repd));
	T_CHECK(memcmp(est[0].private_data, repd, sizeof(repd)) == 0);
	printf("# private data lengths seen: request %u, reply %u; active ird %u ord %u, "
	       "passive ird %u ord %u; peer strings %s / %s\n",
	       rev.private_data_len, est[0].private_data_len, p->c[0]->ird, p->c[0]->ord,
	       p->c[1]->ird, p->c[1]->ord, p->c[0]->peer, p->c[1]->peer);
	/* Passive: IRD min(3, peer ORD 2) = 2, ORD min(1, peer IRD 4) = 1; active mirrors it. */
	T_EQ(p->c[1]->ird, 2);
	T_EQ(p->c[1]->ord, 1);
	T_EQ(p->c[0]->ord, 2);
	T_EQ(p->c[0]->ird, 1);
	T_EQ(est[0].responder_resources, 2);
	T_EQ(est[1].responder_resources, 4);
	T_CHECK(strchr(p->c[0]->peer, ':') && strchr(p->c[1]->peer, ':'));
	return 0;
}

/* A reject carries its private data to the active side. */
static int reject_private_data(struct pair *p)
{
	static const char rej[] = "go-away";
	struct vb_cm_event rev, ev;

	T_EQ(pair_request(p, NULL, &rev), 0);
	T_EQ(vb_reject(p->c[1], rej, sizeof(rej)), 0);
	T_EQ(wait_conn_event(p->c[0], &ev, T_WAIT_MS), 0);
	T_EQ(ev.type, VB_CM_REJECTED);
	T_EQ(ev.status, -ECONNREFUSED);
	T_CHECK(ev.private_data_len >= sizeof(rej));
	T_CHECK(memcmp(ev.private_data, rej, sizeof(rej)) == 0);
	return 0;
}

/* Nobody listens on the port: UNREACHABLE, not REJECTED. */
static int connect_no_listener(struct pair *p)
{
	struct vb_cm_event ev;

	T_EQ(vb_resolve(p->dev, t_addr, "9", 10000, &p->c[0]), 0);
	T_EQ(pair_create_qp(p, 0, p->c[0]), 0);
	T_EQ(vb_connect(p->c[0], NULL), 0);
	T_EQ(wait_conn_event(p->c[0], &ev, T_WAIT_MS), 0);
	T_EQ(ev.type, VB_CM_UNREACHABLE);
	T_CHECK(ev.status < 0);
	return 0;
}

/* A listener on every address takes a connection made to the device's address. */
static int listen_any_address(struct pair *p)
{
	struct vb_cm_event ev;
	struct vb_listener *l;

	snprintf(p->port, sizeof(p->port), "%u", (unsigned)getpid() % 20000 + 40000);
	T_EQ(vb_listen(p->dev, NULL, p->port, 4, &l), 0);
	p->l = l;
	T_EQ(vb_resolve(p->dev, t_addr, p->port, 10000, &p->c[0]), 0);
	T_EQ(pair_create_qp(p, 0, p->c[0]), 0);
	T_EQ(vb_connect(p->c[0], NULL), 0);
	T_EQ(wait_listener_event(l, &ev, T_WAIT_MS), 0);
	T_EQ(ev.type, VB_CM_CONNECT_REQUEST);
	p->c[1] = ev.conn;
	T_EQ(pair_create_qp(p, 1, p->c[1]), 0);
	T_EQ(vb_accept(p->c[1], NULL), 0);
	T_EQ(wait_conn_event(p->c[0], &ev, T_WAIT_MS), 0);
	T_EQ(ev.type, VB_CM_ESTABLISHED);
	return 0;
}

/* An address with no route (TEST-NET-2): resolve fails, and within its timeout. */
static int resolve_no_route(struct pair *p)
{
	struct vb_conn *c = NULL;
	time_t t0 = time(NULL);
	int rc = vb_resolve(p->dev, "198.51.100.1", "1", 2000, &c);

	printf("# resolve 198.51.100.1: %s after %ld s\n", strerror(-rc), (long)(time(NULL) - t0));
	if (rc == 0) {
		p->c[0] = c;
		return t_skip("this machine routes to 198.51.100.1 (a default route)");
	}
	T_CHECK(c == NULL);
	T_CHECK(time(NULL) - t0 <= 2 + 1 + 2); /* timeout, our margin, slack */
	return 0;
}

/* Send of two SGEs into one receive: length, data, conns, opcodes; the CQ fd fires. */
static int send_recv(struct pair *p)
{
	struct vb_sge sge[2];
	struct vb_send_wr wr = {.wr_id = 7, .sg_list = sge, .num_sge = 2, .opcode = VB_WR_SEND};
	struct vb_wc wc;

	T_EQ(pair_connect(p, NULL, NULL, NULL, NULL), 0);
	for (int i = 0; i < 300; i++)
		p->buf[0][i] = (char)(i * 7 + 1);
	sge[0] = (struct vb_sge){(uintptr_t)p->buf[0], 100, p->mr[0]->lkey};
	sge[1] = (struct vb_sge){(uintptr_t)(p->buf[0] + 100), 200, p->mr[0]->lkey};
	wr.send_flags = VB_SEND_SIGNALED;
	T_EQ(post_recv_at(p, 1, 11, 1024, 4096), 0);
	T_EQ(vb_cq_arm(p->cq[1]), 0);
	T_EQ(vb_post_send(p->c[0], &wr, NULL), 0);
	T_CHECK(wait_readable(vb_cq_fd(p->cq[1]), T_WAIT_MS));
	T_EQ(vb_cq_ack(p->cq[1]), 0);
	T_EQ(vb_cq_ack(p->cq[1]), -EAGAIN);
	T_EQ(wait_wc(p->cq[1], &wc, T_WAIT_MS), 0);
	T_EQ(wc.status, VB_WC_SUCCESS);
	T_EQ(wc.opcode, VB_WC_RECV);
	T_EQ(wc.wr_id, 11);
	T_EQ(wc.byte_len, 300);
	T_CHECK(wc.conn == p->c[1]);
	T_CHECK(memcmp(p->buf[1] + 1024, p->buf[0], 300) == 0);
	T_EQ(wait_wc(p->cq[0], &wc, T_WAIT_MS), 0);
	T_EQ(wc.status, VB_WC_SUCCESS);
	T_EQ(wc.opcode, VB_WC_SEND);
	T_EQ(wc.wr_id, 7);
	T_CHECK(wc.conn == p->c[0]);
	/* and back, inline */
	T_EQ(post_recv_at(p, 0, 12, 8192, 64), 0);
	memcpy(p->buf[1], "pong", 4);
	wr = (struct vb_send_wr){.wr_id = 8, .sg_list = sge, .num_sge = 1, .opcode = VB_WR_SEND};
	wr.send_flags = VB_SEND_SIGNALED | VB_SEND_INLINE;
	sge[0] = (struct vb_sge){(uintptr_t)p->buf[1], 4, p->mr[1]->lkey};
	T_EQ(vb_post_send(p->c[1], &wr, NULL), 0);
	T_EQ(wait_wc(p->cq[0], &wc, T_WAIT_MS), 0);
	T_EQ(wc.status, VB_WC_SUCCESS);
	T_EQ(wc.byte_len, 4);
	T_CHECK(wc.conn == p->c[0] && memcmp(p->buf[0] + 8192, "pong", 4) == 0);
	return 0;
}

/* Chains longer than one internal batch; a bad WR mid-chain stops there. */
static int long_chains(struct pair *p)
{
	struct vb_recv_wr rwr[20];
	struct vb_send_wr swr[20], *bad = NULL;
	struct vb_sge rs[20], ss[20];
	struct vb_wc wc;

	T_EQ(pair_connect(p, NULL, NULL, NULL, NULL), 0);
	for (int i = 0; i < 20; i++) {
		rs[i] = (struct vb_sge){(uintptr_t)(p->buf[1] + i * 256), 256, p->mr[1]->lkey};
		rwr[i] = (struct vb_recv_wr){100 + i, i < 19 ? &rwr[i + 1] : NULL, &rs[i], 1};
		ss[i] = (struct vb_sge){(uintptr_t)(p->buf[0] + i * 256), (uint32_t)i + 1,
					p->mr[0]->lkey};
		swr[i] = (struct vb_send_wr){.wr_id = 200 + i,
					     .next = i < 19 ? &swr[i + 1] : NULL,
					     .sg_list = &ss[i],
					     .num_sge = 1,
					     .opcode = VB_WR_SEND};
	}
	swr[19].send_flags = VB_SEND_SIGNALED;
	T_EQ(vb_post_recv(p->c[1], rwr, NULL), 0);
	T_EQ(vb_post_send(p->c[0], swr, &bad), 0);
	T_CHECK(bad == NULL);
	for (int i = 0; i < 20; i++) {
		T_EQ(wait_wc(p->cq[1], &wc, T_WAIT_MS), 0);
		T_EQ(wc.status, VB_WC_SUCCESS);
		T_EQ(wc.wr_id, 100 + i);
		T_EQ(wc.byte_len, i + 1);
	}
	T_EQ(wait_wc(p->cq[0], &wc, T_WAIT_MS), 0);
	T_EQ(wc.wr_id, 219);
	/* three sends, the second malformed: the first goes, the error names the second */
	T_EQ(vb_post_recv(p->c[1], rwr + 19, NULL), 0);
	swr[0].next = &swr[1];
	swr[1].next = &swr[2];
	swr[2].next = NULL;
	swr[0].send_flags = VB_SEND_SIGNALED;
	swr[1].opcode = (enum vb_wr_opcode)99;
	T_EQ(vb_post_send(p->c[0], swr, &bad), -EINVAL);
	T_CHECK(bad == &swr[1]);
	T_EQ(wait_wc(p->cq[0], &wc, T_WAIT_MS), 0);
	T_EQ(wc.wr_id, 200);
	T_EQ(wc.status, VB_WC_SUCCESS);
	return 0;
}

/* RDMA Write into the peer, then RDMA Read it back elsewhere. */
static int rdma_write_read(struct pair *p)
{
	uint64_t raddr;
	struct vb_wc wc;

	T_EQ(pair_connect(p, NULL, NULL, NULL, NULL), 0);
	raddr = (uintptr_t)(p->buf[1] + 8192);
	for (int i = 0; i < 4096; i++)
		p->buf[0][i] = (char)(i ^ 0x5a);
	T_EQ(post_one(p, 0, VB_WR_RDMA_WRITE, 1, 0, 4096, raddr, p->mr[1]->rkey), 0);
	T_EQ(wait_wc(p->cq[0], &wc, T_WAIT_MS), 0);
	T_EQ(wc.status, VB_WC_SUCCESS);
	T_EQ(wc.opcode, VB_WC_RDMA_WRITE);
	T_CHECK(memcmp(p->buf[1] + 8192, p->buf[0], 4096) == 0);
	T_EQ(post_one(p, 0, VB_WR_RDMA_READ, 2, 32768, 4096, raddr, p->mr[1]->rkey), 0);
	T_EQ(wait_wc(p->cq[0], &wc, T_WAIT_MS), 0);
	T_EQ(wc.status, VB_WC_SUCCESS);
	T_EQ(wc.opcode, VB_WC_RDMA_READ);
	T_CHECK(wc.conn == p->c[0]);
	T_CHECK(memcmp(p->buf[0] + 32768, p->buf[0], 4096) == 0);
	T_CHECK(vb_poll_cq(p->cq[1], 1, &wc) == 0); /* nothing on the target's CQ */
	return 0;
}

/* A wrong rkey: REM_ACCESS_ERR, then everything else on both QPs flushes. */
static int bad_rkey(struct pair *p)
{
	struct vb_wc wc;

	T_EQ(pair_connect(p, NULL, NULL, NULL, NULL), 0);
	T_EQ(post_recv_at(p, 0, 50, 0, 256), 0);
	T_EQ(post_recv_at(p, 1, 60, 0, 256), 0);
	T_EQ(post_one(p, 0, VB_WR_RDMA_WRITE, 51, 0, 64, (uintptr_t)p->buf[1],
		      p->mr[1]->rkey ^ 0x00ff0000u),
	     0);
	T_EQ(wait_wc(p->cq[0], &wc, T_WAIT_MS), 0);
	printf("# first completion: wr_id %llu %s\n", (unsigned long long)wc.wr_id,
	       status_name(wc.status));
	T_EQ(wc.wr_id, 51);
	T_EQ(wc.status, VB_WC_REM_ACCESS_ERR);
	T_CHECK(wc.conn == p->c[0]);
	T_EQ(wait_wc(p->cq[0], &wc, T_WAIT_MS), 0);
	T_EQ(wc.wr_id, 50);
	T_EQ(wc.status, VB_WC_WR_FLUSH_ERR);
	T_CHECK(wc.conn == p->c[0]);
	T_EQ(post_one(p, 0, VB_WR_SEND, 52, 0, 8, 0, 0), 0);
	T_EQ(wait_wc(p->cq[0], &wc, T_WAIT_MS), 0);
	T_EQ(wc.wr_id, 52);
	T_EQ(wc.status, VB_WC_WR_FLUSH_ERR);
	/* the target's QP went to error too (an IBTA class C responder error) */
	T_EQ(wait_wc(p->cq[1], &wc, T_WAIT_MS), 0);
	T_EQ(wc.wr_id, 60);
	T_EQ(wc.status, VB_WC_WR_FLUSH_ERR);
	T_CHECK(wc.conn == p->c[1]);
	return 0;
}

/* Bind (len 0: unbind) a window on the passive side and wait for its completion. */
static int bind_and_wait(struct pair *p, struct vb_mw *mw, size_t off, size_t len, uint64_t id)
{
	struct vb_wc wc;

	T_EQ(vb_bind_mw(p->c[1], mw, p->mr[1], len ? p->buf[1] + off : NULL, len, VB_ACCESS_REMOTE,
			id, 1),
	     0);
	T_EQ(wait_wc(p->cq[1], &wc, T_WAIT_MS), 0);
	T_EQ(wc.wr_id, id);
	T_EQ(wc.status, VB_WC_SUCCESS);
	T_CHECK(wc.opcode == VB_WC_BIND_MW || (len == 0 && wc.opcode == VB_WC_LOCAL_INV));
	return 0;
}

/* Connect and allocate a window (p->mw) on the passive side, or say why not. */
static int mw_setup(struct pair *p)
{
	int rc;

	if (!p->attr.has_mw)
		return t_skip("%s has no memory windows", p->dev->name);
	T_EQ(pair_connect(p, NULL, NULL, NULL, NULL), 0);
	if ((rc = vb_alloc_mw(p->pd, &p->mw)) != 0) {
		printf("# alloc_mw: %s\n", strerror(-rc));
		return -1;
	}
	return 0;
}

/* Window: bound range reachable by its key; a rebind changes the key; unbind revokes. */
static int mw_bind_invalidate(struct pair *p)
{
	struct vb_mw *mw;
	uint32_t k1, k2;
	struct vb_wc wc;
	int rc;

	if ((rc = mw_setup(p)) != 0)
		return rc;
	mw = p->mw;
	T_EQ(bind_and_wait(p, mw, 4096, 4096, 1), 0);
	k1 = mw->rkey;
	T_CHECK(k1 != 0 && k1 != p->mr[1]->rkey);
	memcpy(p->buf[0], "window!", 8);
	T_EQ(post_one(p, 0, VB_WR_RDMA_WRITE, 2, 0, 8, (uintptr_t)(p->buf[1] + 4096 + 10), k1), 0);
	T_EQ(wait_wc(p->cq[0], &wc, T_WAIT_MS), 0);
	T_EQ(wc.status, VB_WC_SUCCESS);
	T_CHECK(memcmp(p->buf[1] + 4096 + 10, "window!", 8) == 0);
	T_EQ(bind_and_wait(p, mw, 4096, 4096, 3), 0);
	k2 = mw->rkey;
	T_CHECK(k2 != 0 && k2 != k1);
	T_EQ(post_one(p, 0, VB_WR_RDMA_READ, 4, 100, 8, (uintptr_t)(p->buf[1] + 4096 + 10), k2), 0);
	T_EQ(wait_wc(p->cq[0], &wc, T_WAIT_MS), 0);
	T_EQ(wc.status, VB_WC_SUCCESS);
	T_CHECK(memcmp(p->buf[0] + 100, "window!", 8) == 0);
	T_EQ(bind_and_wait(p, mw, 0, 0, 5), 0);
	T_EQ(mw->rkey, 0);
	T_EQ(vb_bind_mw(p->c[1], mw, NULL, NULL, 0, 0, 9, 1), -EINVAL); /* unbound already */
	T_EQ(post_one(p, 0, VB_WR_RDMA_WRITE, 6, 0, 8, (uintptr_t)(p->buf[1] + 4096), k2), 0);
	T_EQ(wait_wc(p->cq[0], &wc, T_WAIT_MS), 0);
	T_EQ(wc.status, VB_WC_REM_ACCESS_ERR);
	T_EQ(vb_dealloc_mw(mw), 0);
	p->mw = NULL;
	return 0;
}

/* A window admits nothing outside its range, even inside the MR. */
static int mw_out_of_range(struct pair *p)
{
	struct vb_mw *mw;
	struct vb_wc wc;
	int rc;

	if ((rc = mw_setup(p)) != 0)
		return rc;
	mw = p->mw;
	if (strncmp(p->dev->name, "rxe", 3) == 0)
		t_todo("rxe checks a window's rkey against its MR's range, not the window's "
		       "(check_rkey in rxe_resp.c, Linux 6.1)");
	T_EQ(bind_and_wait(p, mw, 4096, 4096, 1), 0);
	T_EQ(post_one(p, 0, VB_WR_RDMA_WRITE, 2, 0, 100, (uintptr_t)(p->buf[1] + 8192 - 50),
		      mw->rkey),
	     0);
	T_EQ(wait_wc(p->cq[0], &wc, T_WAIT_MS), 0);
	T_EQ(wc.status, VB_WC_REM_ACCESS_ERR);
	T_EQ(vb_bind_mw(p->c[1], mw, p->mr[1], p->buf[1] + PAIR_BUF - 10, 20, VB_ACCESS_REMOTE, 3,
			1),
	     -EINVAL);
	T_EQ(vb_dealloc_mw(mw), 0);
	p->mw = NULL;
	return 0;
}

/* A read-only window refuses an RDMA Write, though its MR would allow it. */
static int mw_read_only(struct pair *p)
{
	struct vb_wc wc;
	int rc;

	if ((rc = mw_setup(p)) != 0)
		return rc;
	T_EQ(vb_bind_mw(p->c[1], p->mw, p->mr[1], p->buf[1], 4096, VB_ACCESS_REMOTE_READ, 1, 1), 0);
	T_EQ(wait_wc(p->cq[1], &wc, T_WAIT_MS), 0);
	T_EQ(wc.status, VB_WC_SUCCESS);
	T_EQ(post_one(p, 0, VB_WR_RDMA_READ, 2, 0, 64, (uintptr_t)p->buf[1], p->mw->rkey), 0);
	T_EQ(wait_wc(p->cq[0], &wc, T_WAIT_MS), 0);
	T_EQ(wc.status, VB_WC_SUCCESS);
	T_EQ(post_one(p, 0, VB_WR_RDMA_WRITE, 3, 0, 64, (uintptr_t)p->buf[1], p->mw->rkey), 0);
	T_EQ(wait_wc(p->cq[0], &wc, T_WAIT_MS), 0);
	T_EQ(wc.status, VB_WC_REM_ACCESS_ERR);
	return 0;
}

/* A Send longer than the Receive: LOC_LEN_ERR at the receiver, REM_INV_REQ_ERR at the sender. */
static int recv_too_small(struct pair *p)
{
	struct vb_wc wc, swc;

	T_EQ(pair_connect(p, NULL, NULL, NULL, NULL), 0);
	if (strncmp(p->dev->name, "rxe", 3) == 0)
		t_todo("Linux 6.1 rxe fails the Receive with LOC_QP_OP_ERR and the Send with "
		       "REM_OP_ERR (send_data_in in rxe_resp.c wants -ENOSPC from copy_data, gets "
		       "-EINVAL)");
	T_EQ(post_recv_at(p, 1, 1, 0, 100), 0);
	T_EQ(post_one(p, 0, VB_WR_SEND, 2, 0, 101, 0, 0), 0);
	T_EQ(wait_wc(p->cq[1], &wc, T_WAIT_MS), 0);
	T_EQ(wait_wc(p->cq[0], &swc, T_WAIT_MS), 0);
	printf("# receive: %s; send: %s\n", status_name(wc.status), status_name(swc.status));
	T_EQ(wc.status, VB_WC_LOC_LEN_ERR);
	T_EQ(swc.status, VB_WC_REM_INV_REQ_ERR);
	return 0;
}

/* Send with Invalidate: the receiver learns the key, and the key is dead. */
static int send_with_invalidate(struct pair *p)
{
	struct vb_sge sge;
	struct vb_send_wr wr = {.wr_id = 3, .sg_list = &sge, .num_sge = 1};
	struct vb_mw *mw;
	struct vb_wc wc;
	uint32_t key;
	int rc;

	if (getenv("VB_RDMACORE_MW_TYPE") && strcmp(getenv("VB_RDMACORE_MW_TYPE"), "1") == 0)
		return t_skip(
			"type 1 windows cannot be invalidated by the peer (IBTA o10-37.2.26)");
	if ((rc = mw_setup(p)) != 0)
		return rc;
	mw = p->mw;
	T_EQ(bind_and_wait(p, mw, 0, 4096, 1), 0);
	key = mw->rkey;
	T_EQ(post_recv_at(p, 1, 2, 8192, 256), 0);
	sge = (struct vb_sge){(uintptr_t)p->buf[0], 16, p->mr[0]->lkey};
	wr.opcode = VB_WR_SEND_WITH_INV;
	wr.send_flags = VB_SEND_SIGNALED;
	wr.invalidate_rkey = key;
	T_EQ(vb_post_send(p->c[0], &wr, NULL), 0);
	T_EQ(wait_wc(p->cq[1], &wc, T_WAIT_MS), 0);
	T_EQ(wc.status, VB_WC_SUCCESS);
	T_EQ(wc.byte_len, 16);
	T_CHECK(wc.wc_flags & VB_WC_WITH_INV);
	T_EQ(wc.invalidated_rkey, key);
	T_EQ(mw->rkey, 0); /* the provider saw the invalidation */
	T_EQ(vb_bind_mw(p->c[1], mw, NULL, NULL, 0, 0, 9, 1), -EINVAL); /* nothing to unbind */
	T_EQ(wait_wc(p->cq[0], &wc, T_WAIT_MS), 0);
	T_EQ(wc.status, VB_WC_SUCCESS);
	T_EQ(post_one(p, 0, VB_WR_RDMA_WRITE, 4, 0, 8, (uintptr_t)p->buf[1], key), 0);
	T_EQ(wait_wc(p->cq[0], &wc, T_WAIT_MS), 0);
	T_EQ(wc.status, VB_WC_REM_ACCESS_ERR);
	T_EQ(vb_dealloc_mw(mw), 0);
	p->mw = NULL;
	return 0;
}

/* Disconnect: both sides hear of it, posted receives flush with their conn. */
static int disconnect_flushes(struct pair *p)
{
	struct vb_cm_event ev;
	struct vb_wc wc;

	T_EQ(pair_connect(p, NULL, NULL, NULL, NULL), 0);
	for (int side = 0; side < 2; side++)
		for (int i = 0; i < 3; i++)
			T_EQ(post_recv_at(p, side, 10 * side + i, 256 * i, 256), 0);
	T_EQ(vb_disconnect(p->c[0]), 0);
	T_EQ(vb_disconnect(p->c[0]), 0);       /* twice is harmless */
	for (int side = 0; side < 2; side++) { /* the initiator hears at once */
		T_EQ(wait_conn_event(p->c[side], &ev, T_WAIT_MS), 0);
		T_EQ(ev.type, VB_CM_DISCONNECTED);
		for (int i = 0; i < 3; i++) {
			T_EQ(wait_wc(p->cq[side], &wc, T_WAIT_MS), 0);
			T_EQ(wc.status, VB_WC_WR_FLUSH_ERR);
			T_EQ(wc.wr_id, 10 * side + i);
			T_CHECK(wc.conn == p->c[side]);
		}
	}
	T_EQ(post_one(p, 0, VB_WR_SEND, 99, 0, 8, 0, 0), 0);
	T_EQ(wait_wc(p->cq[0], &wc, T_WAIT_MS), 0);
	T_EQ(wc.status, VB_WC_WR_FLUSH_ERR);
	/* the CM's own DISCONNECTED (on the peer's answer) is not reported a second time */
	wait_readable(vb_conn_fd(p->c[0]), 2000);
	for (int side = 0; side < 2; side++)
		T_EQ(vb_conn_get_event(p->c[side], &ev), -EAGAIN);
	T_EQ(vb_disconnect(p->c[1]), 0); /* after the peer's: nothing left to do */
	return 0;
}

/* A Send with no Receive waits (RNR retries) long enough for one, then fails. */
static int rnr_timer(struct pair *p)
{
	struct vb_wc wc;

	T_EQ(pair_connect(p, NULL, NULL, NULL, NULL), 0);
	T_EQ(post_one(p, 0, VB_WR_SEND, 1, 0, 64, 0, 0), 0);
	usleep(300 * 1000);
	T_EQ(vb_poll_cq(p->cq[0], 1, &wc), 0); /* still retrying */
	T_EQ(post_recv_at(p, 1, 2, 0, 64), 0);
	T_EQ(wait_wc(p->cq[1], &wc, T_WAIT_MS), 0);
	T_EQ(wc.status, VB_WC_SUCCESS);
	T_EQ(wait_wc(p->cq[0], &wc, T_WAIT_MS), 0);
	T_EQ(wc.status, VB_WC_SUCCESS);
	T_EQ(post_one(p, 0, VB_WR_SEND, 3, 0, 64, 0, 0), 0);
	T_EQ(wait_wc(p->cq[0], &wc, T_WAIT_MS), 0);
	T_EQ(wc.wr_id, 3);
	T_EQ(wc.status, VB_WC_RNR_RETRY_EXC_ERR);
	return 0;
}

/* Destroying a conn unmaps it: late completions name no conn; the peer hears of it. */
static int destroy_unmaps(struct pair *p)
{
	struct vb_cm_event ev;
	struct vb_wc wc;
	int n = 0;

	T_EQ(pair_connect(p, NULL, NULL, NULL, NULL), 0);
	T_EQ(post_recv_at(p, 1, 1, 0, 256), 0);
	T_EQ(vb_conn_destroy(p->c[1]), 0);
	p->c[1] = NULL;
	while (vb_poll_cq(p->cq[1], 1, &wc) == 1) {
		T_CHECK(wc.conn == NULL);
		n++;
	}
	printf("# %d completion(s) left behind by the destroyed QP\n", n);
	T_EQ(wait_conn_event(p->c[0], &ev, T_WAIT_MS), 0);
	T_EQ(ev.type, VB_CM_DISCONNECTED);
	return 0;
}

/* Misuse is refused with -EINVAL (or the device's errno), never a crash. */
static int bad_arguments(struct pair *p)
{
	static const char big[VB_MAX_PRIVATE_DATA + 1];
	struct vb_conn_param toobig = {big, sizeof(big), 0, 0};
	struct vb_sge sge[3] = {{(uintptr_t)p->buf[0], 8, p->mr[0]->lkey}};
	struct vb_send_wr wr = {.sg_list = sge, .num_sge = 3, .opcode = VB_WR_SEND}, *bad = NULL;
	struct vb_listener *l = NULL;
	struct vb_conn *c = NULL;
	struct vb_cm_event rev;

	T_EQ(vb_listen(p->dev, "unix:/tmp/nfsrdma-test", "1", 1, &l), -EAFNOSUPPORT);
	T_CHECK(vb_resolve(p->dev, "not-an-address.invalid", "1", 1000, &c) < 0);
	T_EQ(pair_request(p, NULL, &rev), 0);
	T_EQ(pair_create_qp(p, 1, p->c[1]), -EEXIST);
	T_EQ(vb_connect(p->c[1], NULL), -EINVAL);
	T_EQ(vb_accept(p->c[0], NULL), -EINVAL);
	T_EQ(vb_accept(p->c[1], &toobig), -EINVAL);
	T_EQ(vb_reject(p->c[1], big, sizeof(big)), -EINVAL);
	T_EQ(vb_post_send(p->c[0], NULL, &bad), -EINVAL);
	T_CHECK(vb_post_send(p->c[0], &wr, &bad) < 0); /* 3 SGEs on a QP made for 2 */
	T_CHECK(bad == &wr);
	T_EQ(vb_accept(p->c[1], NULL), 0);
	return 0;
}

int main(void)
{
	static const struct t_case cases[] = {
		{"open_query", open_query, 0},
		{"cq_basics", cq_basics, 0},
		{"mr_basics", mr_basics, 0},
		{"connect_private_data", connect_private_data, 1},
		{"reject_private_data", reject_private_data, 1},
		{"connect_no_listener", connect_no_listener, 1},
		{"listen_any_address", listen_any_address, 1},
		{"resolve_no_route", resolve_no_route, 1},
		{"send_recv", send_recv, 1},
		{"long_chains", long_chains, 1},
		{"rdma_write_read", rdma_write_read, 1},
		{"bad_rkey", bad_rkey, 1},
		{"mw_bind_invalidate", mw_bind_invalidate, 1},
		{"mw_out_of_range", mw_out_of_range, 1},
		{"mw_read_only", mw_read_only, 1},
		{"send_with_invalidate", send_with_invalidate, 1},
		{"recv_too_small", recv_too_small, 1},
		{"disconnect_flushes", disconnect_flushes, 1},
		{"rnr_timer", rnr_timer, 1},
		{"destroy_unmaps", destroy_unmaps, 1},
		{"bad_arguments", bad_arguments, 1},
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	return t_run(cases, sizeof(cases) / sizeof(cases[0]));
}
