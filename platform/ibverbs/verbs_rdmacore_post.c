/*
 * verbs_rdmacore_post.c: the rdma-core data path. vb work requests become
 * ibv work requests in small batches on the stack (no malloc per post), the
 * scatter/gather lists are passed through as they are (struct vb_sge has
 * struct ibv_sge's layout), and each ibv_wc becomes a vb_wc with the conn
 * found through the device's qp_num map.
 */
#include <assert.h>
#include <stddef.h>
#include <string.h>

#include "common/base/log.h"
#include "verbs_rdmacore.h"

/* WRs translated per ibv_post_* call; a longer chain is posted in pieces. */
#define POST_BATCH 16
/* Completions fetched per ibv_poll_cq call. */
#define POLL_BATCH 32

static_assert(sizeof(struct vb_sge) == sizeof(struct ibv_sge), "vb_sge is ibv_sge");
static_assert(offsetof(struct vb_sge, addr) == offsetof(struct ibv_sge, addr), "sge addr");
static_assert(offsetof(struct vb_sge, length) == offsetof(struct ibv_sge, length), "sge len");
static_assert(offsetof(struct vb_sge, lkey) == offsetof(struct ibv_sge, lkey), "sge lkey");

/* Registration rights -> IBV_ACCESS_*. IB requires local write with remote write. */
int rdmacore_access_to_ibv(unsigned access, int *out)
{
	const unsigned known = VB_ACCESS_LOCAL_WRITE | VB_ACCESS_REMOTE | VB_ACCESS_MW_BIND;
	int f = 0;

	if (access & ~known)
		return -EINVAL;
	if (access & (VB_ACCESS_LOCAL_WRITE | VB_ACCESS_REMOTE_WRITE))
		f |= IBV_ACCESS_LOCAL_WRITE;
	if (access & VB_ACCESS_REMOTE_READ)
		f |= IBV_ACCESS_REMOTE_READ;
	if (access & VB_ACCESS_REMOTE_WRITE)
		f |= IBV_ACCESS_REMOTE_WRITE;
	if (access & VB_ACCESS_MW_BIND)
		f |= IBV_ACCESS_MW_BIND;
	*out = f;
	return 0;
}

/* ibv completion status -> vb status; the many rarer ibv errors become GENERAL_ERR. */
enum vb_wc_status rdmacore_wc_status(enum ibv_wc_status status)
{
	/* Entries hold vb status + 1 so that 0 means "no direct equivalent". */
	static const unsigned char map[] = {
		[IBV_WC_SUCCESS] = VB_WC_SUCCESS + 1,
		[IBV_WC_LOC_LEN_ERR] = VB_WC_LOC_LEN_ERR + 1,
		[IBV_WC_LOC_PROT_ERR] = VB_WC_LOC_PROT_ERR + 1,
		[IBV_WC_LOC_ACCESS_ERR] = VB_WC_LOC_PROT_ERR + 1,
		[IBV_WC_WR_FLUSH_ERR] = VB_WC_WR_FLUSH_ERR + 1,
		[IBV_WC_MW_BIND_ERR] = VB_WC_MW_BIND_ERR + 1,
		[IBV_WC_REM_INV_REQ_ERR] = VB_WC_REM_INV_REQ_ERR + 1,
		[IBV_WC_REM_INV_RD_REQ_ERR] = VB_WC_REM_INV_REQ_ERR + 1,
		[IBV_WC_REM_ACCESS_ERR] = VB_WC_REM_ACCESS_ERR + 1,
		[IBV_WC_REM_OP_ERR] = VB_WC_REM_OP_ERR + 1,
		[IBV_WC_RETRY_EXC_ERR] = VB_WC_RETRY_EXC_ERR + 1,
		[IBV_WC_RNR_RETRY_EXC_ERR] = VB_WC_RNR_RETRY_EXC_ERR + 1,
	};

	if ((unsigned)status < sizeof(map) && map[status])
		return (enum vb_wc_status)(map[status] - 1);
	return VB_WC_GENERAL_ERR;
}

/* ibv completion opcode -> vb opcode (any receive is VB_WC_RECV). */
enum vb_wc_opcode rdmacore_wc_opcode(enum ibv_wc_opcode opcode)
{
	switch (opcode) {
	case IBV_WC_SEND:
		return VB_WC_SEND;
	case IBV_WC_RDMA_WRITE:
		return VB_WC_RDMA_WRITE;
	case IBV_WC_RDMA_READ:
		return VB_WC_RDMA_READ;
	case IBV_WC_BIND_MW:
		return VB_WC_BIND_MW;
	default:
		if (rdmacore_wc_is_local_inv(opcode))
			return VB_WC_LOCAL_INV;
		return (opcode & IBV_WC_RECV) ? VB_WC_RECV : VB_WC_SEND;
	}
}

/* One vb send WR -> ibv send WR. The SGE array is shared, not copied. */
int rdmacore_send_wr_to_ibv(const struct vb_send_wr *wr, struct ibv_send_wr *out)
{
	static const enum ibv_wr_opcode op[] = {
		[VB_WR_SEND] = IBV_WR_SEND,
		[VB_WR_SEND_WITH_INV] = IBV_WR_SEND, /* made so by rdmacore_send_inv */
		[VB_WR_RDMA_WRITE] = IBV_WR_RDMA_WRITE,
		[VB_WR_RDMA_READ] = IBV_WR_RDMA_READ,
	};
	/* VB_SEND_ANSWERED is for the soft provider: a NIC acknowledges at once */
	const unsigned flags = VB_SEND_SIGNALED | VB_SEND_FENCE | VB_SEND_INLINE | VB_SEND_ANSWERED;

	if ((unsigned)wr->opcode >= sizeof(op) / sizeof(op[0]) || (wr->send_flags & ~flags) ||
	    wr->num_sge < 0 || (wr->num_sge > 0 && wr->sg_list == NULL))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->wr_id = wr->wr_id;
	out->sg_list = (struct ibv_sge *)wr->sg_list;
	out->num_sge = wr->num_sge;
	out->opcode = op[wr->opcode];
	out->send_flags = ((wr->send_flags & VB_SEND_SIGNALED) ? IBV_SEND_SIGNALED : 0) |
			  ((wr->send_flags & VB_SEND_FENCE) ? IBV_SEND_FENCE : 0) |
			  ((wr->send_flags & VB_SEND_INLINE) ? IBV_SEND_INLINE : 0);
	if (wr->opcode == VB_WR_RDMA_WRITE || wr->opcode == VB_WR_RDMA_READ) {
		out->wr.rdma.remote_addr = wr->remote_addr;
		out->wr.rdma.rkey = wr->rkey;
	} else if (wr->opcode == VB_WR_SEND_WITH_INV) {
		return rdmacore_send_inv(wr->invalidate_rkey, out);
	}
	return 0;
}

/* One ibv completion -> vb completion; inv_flags: the wc_flags bits that mean "invalidated". */
void rdmacore_wc_from_ibv(const struct ibv_wc *in, struct vb_conn *conn, unsigned inv_flags,
			  struct vb_wc *out)
{
	out->wr_id = in->wr_id;
	out->conn = conn;
	out->status = rdmacore_wc_status(in->status);
	out->opcode = rdmacore_wc_opcode(in->opcode);
	out->byte_len = in->byte_len;
	out->wc_flags = 0;
	out->invalidated_rkey = 0;
	if (in->status == IBV_WC_SUCCESS && (in->opcode & IBV_WC_RECV) &&
	    (in->wc_flags & inv_flags)) {
		out->wc_flags |= VB_WC_WITH_INV;
		out->invalidated_rkey = rdmacore_wc_invalidated_rkey(in);
	}
}

/* Post up to POST_BATCH WRs from *wrp; advances *wrp past those posted. */
static int post_send_batch(struct ibv_qp *qp, struct vb_send_wr **wrp, struct vb_send_wr **bad)
{
	struct ibv_send_wr iw[POST_BATCH], *ibad = NULL;
	struct vb_send_wr *vw[POST_BATCH], *wr = *wrp;
	int n = 0, rc = 0, prc;

	for (; wr && n < POST_BATCH; wr = wr->next, n++) {
		if ((rc = rdmacore_send_wr_to_ibv(wr, &iw[n])) != 0) {
			*bad = wr; /* the ones before it still go out, as ibv does */
			break;
		}
		vw[n] = wr;
		if (n > 0)
			iw[n - 1].next = &iw[n];
	}
	if (n > 0 && (prc = ibv_post_send(qp, iw, &ibad)) != 0) {
		*bad = ibad ? vw[ibad - iw] : vw[0];
		return -prc;
	}
	*wrp = wr;
	return rc;
}

/* Post a chain of send WRs; on error *bad is the first WR not posted. */
int rdmacore_post_send(struct vb_conn *conn, struct vb_send_wr *wr, struct vb_send_wr **bad)
{
	struct vb_send_wr *dummy;
	struct ibv_qp *qp = rdmacore_conn_qp(conn);
	int rc;

	if (bad == NULL)
		bad = &dummy;
	*bad = wr;
	if (qp == NULL || wr == NULL)
		return -EINVAL;
	while (wr)
		if ((rc = post_send_batch(qp, &wr, bad)) != 0)
			return rc;
	*bad = NULL;
	return 0;
}

/* Post up to POST_BATCH receive WRs from *wrp; advances *wrp. */
static int post_recv_batch(struct ibv_qp *qp, struct vb_recv_wr **wrp, struct vb_recv_wr **bad)
{
	struct ibv_recv_wr iw[POST_BATCH], *ibad = NULL;
	struct vb_recv_wr *vw[POST_BATCH], *wr = *wrp;
	int n = 0, rc = 0, prc;

	for (; wr && n < POST_BATCH; wr = wr->next, n++) {
		if (wr->num_sge < 0 || (wr->num_sge > 0 && wr->sg_list == NULL)) {
			*bad = wr;
			rc = -EINVAL;
			break;
		}
		iw[n] = (struct ibv_recv_wr){.wr_id = wr->wr_id,
					     .sg_list = (struct ibv_sge *)wr->sg_list,
					     .num_sge = wr->num_sge};
		vw[n] = wr;
		if (n > 0)
			iw[n - 1].next = &iw[n];
	}
	if (n > 0 && (prc = ibv_post_recv(qp, iw, &ibad)) != 0) {
		*bad = ibad ? vw[ibad - iw] : vw[0];
		return -prc;
	}
	*wrp = wr;
	return rc;
}

/* Post a chain of receive WRs; on error *bad is the first WR not posted. */
int rdmacore_post_recv(struct vb_conn *conn, struct vb_recv_wr *wr, struct vb_recv_wr **bad)
{
	struct vb_recv_wr *dummy;
	struct ibv_qp *qp = rdmacore_conn_qp(conn);
	int rc;

	if (bad == NULL)
		bad = &dummy;
	*bad = wr;
	if (qp == NULL || wr == NULL)
		return -EINVAL;
	while (wr)
		if ((rc = post_recv_batch(qp, &wr, bad)) != 0)
			return rc;
	*bad = NULL;
	return 0;
}

/* Translate n ibv completions, finding each one's conn (cached across a run of one QP). */
static void translate_batch(struct rdmacore_device *d, const struct ibv_wc *iwc, int n,
			    struct vb_wc *wc)
{
	uint32_t last_qp = 0;
	struct vb_conn *last = NULL;

	rdmacore_map_rdlock(&d->qpmap);
	for (int i = 0; i < n; i++) {
		if (i == 0 || iwc[i].qp_num != last_qp) {
			struct rdmacore_map_node *node =
				rdmacore_map_find_locked(&d->qpmap, iwc[i].qp_num);

			last_qp = iwc[i].qp_num;
			last = node ? node->obj : NULL;
		}
		rdmacore_wc_from_ibv(&iwc[i], last, d->wc_inv_flags, &wc[i]);
		if (iwc[i].status != IBV_WC_SUCCESS && iwc[i].status != IBV_WC_WR_FLUSH_ERR)
			log_debug("qp %u wr_id %llu: %s (vendor error 0x%x)", iwc[i].qp_num,
				  (unsigned long long)iwc[i].wr_id,
				  ibv_wc_status_str(iwc[i].status), iwc[i].vendor_err);
	}
	rdmacore_map_unlock(&d->qpmap);
}

/* Up to n completions into wc; returns how many, or -errno. */
int rdmacore_poll_cq(struct vb_cq *cq, int n, struct vb_wc *wc)
{
	struct ibv_wc iwc[POLL_BATCH];
	struct rdmacore_device *d;
	struct ibv_cq *icq;
	int got = 0;

	if (cq == NULL || !rdmacore_is_ours(cq->dev) || n < 0 || (n > 0 && wc == NULL))
		return -EINVAL;
	icq = ((struct rdmacore_cq *)cq)->cq;
	d = rdmacore_device_of(cq->dev);
	while (got < n) {
		int want = n - got < POLL_BATCH ? n - got : POLL_BATCH;
		int k = ibv_poll_cq(icq, want, iwc);

		if (k < 0)
			return got ? got : -EIO;
		translate_batch(d, iwc, k, wc + got);
		for (int i = got; i < got + k; i++)
			if (wc[i].wc_flags & VB_WC_WITH_INV)
				rdmacore_mw_invalidated(d, wc[i].invalidated_rkey);
		got += k;
		if (k < want)
			break;
	}
	return got;
}
