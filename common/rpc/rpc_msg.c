/*
 * rpc_msg.c: RPC call and reply framing with libtirpc's XDR, credentials, and
 * the DDP-aware opaque. Shared by the client and the server dispatcher.
 */
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <openssl/rand.h>

#include "integrity.h"
#include "common/base/log.h"
#include "rpc.h"
#include "rpc_auth.h"

#define RNDUP4(x) (((x) + 3u) & ~3u)

static __thread struct {
	XDR *xdrs;
	struct rpc_ddp *ddp;
} ddp_binding;

void rpc_ddp_bind(XDR *xdrs, struct rpc_ddp *ddp)
{
	ddp_binding.xdrs = xdrs;
	ddp_binding.ddp = ddp;
}

int rpc_ddp_note(struct rpc_ddp *ddp, uint32_t pos, void *data, uint32_t len)
{
	if (ddp->nitems >= RPC_DDP_MAX_ITEMS)
		return -E2BIG;
	ddp->items[ddp->nitems++] = (struct rpc_ddp_item){.pos = pos, .data = data, .len = len};
	return 0;
}

/* Inline decode: point into the memory stream, past the padding. */
static int inline_get(struct rpc_ddp *ddp, XDR *xdrs, uint32_t len, void **data)
{
	int32_t *p;

	if (len > UINT32_MAX - 3)
		return -EBADMSG;
	if (len == 0) {
		*data = NULL;
		return 0;
	}
	p = xdr_inline(xdrs, (int)RNDUP4(len));
	if (p == NULL)
		return -EBADMSG;
	*data = p;
	return 0;
}

static int inline_put(struct rpc_ddp *ddp, XDR *xdrs, void *data, uint32_t len)
{
	return xdr_opaque(xdrs, data, len) ? 0 : -ENOSPC;
}

const struct rpc_ddp_ops rpc_ddp_inline_ops = {
	.get = inline_get,
	.put = inline_put,
};

int rpc_clnt_ddp_get_inline(struct rpc_call *call, XDR *xdrs, uint32_t len, void **data)
{
	int rc = inline_get(NULL, xdrs, len, data);

	if (rc == 0 && len && call->reply_data && len <= call->reply_data_len) {
		memcpy(call->reply_data, *data, len);
		*data = call->reply_data;
	}
	return rc;
}

bool_t xdr_ddp_opaque(XDR *xdrs, char **data, u_int *len, u_int maxlen)
{
	struct rpc_ddp *ddp;
	const struct rpc_ddp_ops *ops;
	void *p = NULL;

	if (xdrs->x_op == XDR_FREE)
		return TRUE; /* the bytes always belong to a buffer, never to the struct */
	ddp = ddp_binding.xdrs == xdrs ? ddp_binding.ddp : NULL;
	ops = ddp ? ddp->ops : &rpc_ddp_inline_ops;
	switch (xdrs->x_op) {
	case XDR_FREE:
		break;
	case XDR_ENCODE:
		if (*len > maxlen || !xdr_u_int(xdrs, len))
			return FALSE;
		return ops->put(ddp, xdrs, *data, *len) == 0;
	case XDR_DECODE:
		if (!xdr_u_int(xdrs, len) || *len > maxlen)
			return FALSE;
		if (ops->get(ddp, xdrs, *len, &p) != 0)
			return FALSE;
		*data = p;
		return TRUE;
	}
	return FALSE;
}

int rpc_peek_xid(const uint8_t *buf, size_t len, uint32_t *xid)
{
	uint32_t v;

	if (len < 4)
		return -EBADMSG;
	memcpy(&v, buf, 4);
	*xid = ntohl(v);
	return 0;
}

void rpc_clnt_init(struct rpc_clnt *c, const struct rpc_clnt_ops *ops)
{
	memset(c, 0, sizeof(*c));
	c->ops = ops;
	c->cred.flavor = AUTH_SYS;
	c->next_xid = rpc_xid_seed();
	/* a context of its own: the server tells replays by (context, number) */
	if (RAND_bytes((unsigned char *)&c->ctx, sizeof(c->ctx)) != 1 || c->ctx == 0)
		c->ctx = ((uint64_t)rpc_xid_seed() << 32) ^ (uint64_t)getpid() ^ (uintptr_t)c;
}

uint32_t rpc_xid_seed(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint32_t)(ts.tv_nsec ^ (ts.tv_sec << 12) ^ ((uint32_t)getpid() << 16));
}

uint32_t rpc_clnt_xid(struct rpc_clnt *c, const struct rpc_call *call)
{
	return call->xid ? call->xid : __atomic_add_fetch(&c->next_xid, 1, __ATOMIC_RELAXED);
}

/* HMAC of prefix, then of the stream [start, end) of buf with ddp's items spliced in. */
static int stream_mic(const struct integrity_key *key, const void *prefix, size_t plen,
		      const uint8_t *buf, size_t start, size_t end, const struct rpc_ddp *ddp,
		      uint8_t mic[INTEGRITY_MIC_LEN])
{
	struct integrity_mic m;
	int rc = integrity_mic_begin(key, &m);

	if (rc)
		return rc;
	rc = integrity_mic_update(&m, prefix, plen);
	if (rc == 0)
		rc = integrity_mic_update_stream(&m, buf, start, end, ddp);
	if (rc) {
		integrity_mic_abort(&m);
		return rc;
	}
	return integrity_mic_final(&m, mic);
}

int rpc_call_mic(const struct integrity_key *key, const uint8_t *buf, size_t cred_end,
		 size_t args_start, size_t end, const struct rpc_ddp *ddp,
		 uint8_t mic[INTEGRITY_MIC_LEN])
{
	return stream_mic(key, buf, cred_end, buf, args_start, end, ddp, mic);
}

int rpc_reply_mic(const struct integrity_key *key, uint32_t xid, const uint8_t *buf,
		  size_t res_start, size_t end, const struct rpc_ddp *ddp,
		  uint8_t mic[INTEGRITY_MIC_LEN])
{
	uint32_t be = htonl(xid);

	return stream_mic(key, &be, 4, buf, res_start, end, ddp, mic);
}

int rpc_encode_call(struct rpc_clnt *c, uint32_t xid, const struct rpc_call *call, uint8_t *buf,
		    size_t cap, struct rpc_ddp *ddp)
{
	uint8_t credbody[RPC_MAX_AUTH_BYTES];
	uint8_t mic[INTEGRITY_MIC_LEN] = {0};
	struct rpc_msg msg;
	size_t verf_end, end, cred_end;
	u_int credlen = sizeof(credbody);
	uint32_t flavor;
	XDR xdrs;
	int rc;

	struct rpc_integrity_seq is = {
		.ctx = c->ctx,
		.seq = c->key ? __atomic_add_fetch(&c->seq, 1, __ATOMIC_RELAXED) : 0,
		.time = (uint32_t)time(NULL)};

	rc = rpc_auth_encode_cred(call->cred ? call->cred : &c->cred, c->key, &is, credbody,
				  &credlen, &flavor);
	if (rc)
		return rc;
	memset(&msg, 0, sizeof(msg));
	msg.rm_xid = xid;
	msg.rm_direction = CALL;
	msg.rm_call.cb_rpcvers = RPC_MSG_VERSION;
	msg.rm_call.cb_prog = call->prog;
	msg.rm_call.cb_vers = call->vers;
	msg.rm_call.cb_proc = call->proc;
	msg.rm_call.cb_cred.oa_flavor = (int)flavor;
	msg.rm_call.cb_cred.oa_base = (caddr_t)credbody;
	msg.rm_call.cb_cred.oa_length = credlen;
	msg.rm_call.cb_verf.oa_flavor = c->key ? AUTH_NFSRDMA_HMAC : AUTH_NONE;
	msg.rm_call.cb_verf.oa_base = (caddr_t)mic;
	msg.rm_call.cb_verf.oa_length = c->key ? INTEGRITY_MIC_LEN : 0;

	xdrmem_create(&xdrs, (char *)buf, (u_int)cap, XDR_ENCODE);
	if (!xdr_callmsg(&xdrs, &msg))
		return -ENOSPC;
	verf_end = xdr_getpos(&xdrs);
	rpc_ddp_bind(&xdrs, ddp);
	rc = call->xdr_args(&xdrs, call->args) ? 0 : -ENOSPC;
	rpc_ddp_bind(NULL, NULL);
	end = xdr_getpos(&xdrs);
	xdr_destroy(&xdrs);
	if (rc)
		return rc;
	if (c->key) {
		cred_end = verf_end - 8 - INTEGRITY_MIC_LEN;
		rc = rpc_call_mic(c->key, buf, cred_end, verf_end, end, ddp, mic);
		if (rc)
			return rc;
		memcpy(buf + cred_end + 8, mic, INTEGRITY_MIC_LEN);
	}
	return (int)end;
}

/* Map a reply that is not SUCCESS to an errno, with a log line saying why. */
static int reply_error(const struct rpc_msg *msg, const struct rpc_call *call)
{
	if (msg->rm_reply.rp_stat == MSG_DENIED) {
		const struct rejected_reply *rj = &msg->rm_reply.rp_rjct;

		if (rj->rj_stat == AUTH_ERROR) {
			log_debug("prog %u proc %u: auth error %d", call->prog, call->proc,
				  (int)rj->rj_why);
			return -EACCES;
		}
		log_debug("prog %u: RPC version mismatch", call->prog);
		return -EPROTO;
	}
	switch (msg->acpted_rply.ar_stat) {
	case SYSTEM_ERR:
		return -EIO; /* POSIX has no "remote I/O error" */
	case GARBAGE_ARGS:
		return -EINVAL;
	default:
		log_debug("prog %u vers %u proc %u: refused (%d)", call->prog, call->vers,
			  call->proc, (int)msg->acpted_rply.ar_stat);
		return -EPROTO;
	}
}

int rpc_decode_reply(struct rpc_clnt *c, uint32_t xid, struct rpc_call *call, const uint8_t *buf,
		     size_t len, struct rpc_ddp *ddp)
{
	uint8_t verf[RPC_MAX_AUTH_BYTES], mic[INTEGRITY_MIC_LEN];
	struct rpc_msg msg;
	size_t res_start;
	XDR xdrs;
	int rc = 0;

	memset(&msg, 0, sizeof(msg));
	msg.acpted_rply.ar_verf.oa_base = (caddr_t)verf;
	msg.acpted_rply.ar_results.where = NULL;
	msg.acpted_rply.ar_results.proc = (xdrproc_t)xdr_void;
	xdrmem_create(&xdrs, (char *)buf, (u_int)len, XDR_DECODE);
	if (!xdr_replymsg(&xdrs, &msg) || msg.rm_xid != xid) {
		rc = -EBADMSG;
		goto out;
	}
	if (msg.rm_reply.rp_stat != MSG_ACCEPTED || msg.acpted_rply.ar_stat != SUCCESS) {
		rc = reply_error(&msg, call);
		goto out;
	}
	res_start = xdr_getpos(&xdrs) - 4; /* the accept_stat word */
	if (c->key && (msg.acpted_rply.ar_verf.oa_flavor != AUTH_NFSRDMA_HMAC ||
		       msg.acpted_rply.ar_verf.oa_length != INTEGRITY_MIC_LEN)) {
		log_warn("xid %#x: reply lacks its integrity MIC", xid);
		rc = -EBADMSG;
		goto out;
	}
	rpc_ddp_bind(&xdrs, ddp);
	rc = call->xdr_res(&xdrs, call->res) ? 0 : -EBADMSG;
	rpc_ddp_bind(NULL, NULL);
	if (rc) {
		xdr_free(call->xdr_res, call->res);
		goto out;
	}
	if (c->key) {
		rc = rpc_reply_mic(c->key, xid, buf, res_start, len, ddp, mic);
		if (rc == 0 && !integrity_mic_equal(mic, verf)) {
			log_warn("xid %#x: reply integrity MIC does not match", xid);
			rc = -EBADMSG;
		}
		if (rc)
			xdr_free(call->xdr_res, call->res);
	}
out:
	xdr_destroy(&xdrs);
	return rc;
}

const char *rpc_reject_str(enum rpc_reject r)
{
	static const char *const names[] = {
		[RPC_OK] = "ok",
		[RPC_PROG_UNAVAIL] = "program unavailable",
		[RPC_PROG_MISMATCH] = "program version mismatch",
		[RPC_PROC_UNAVAIL] = "procedure unavailable",
		[RPC_GARBAGE_ARGS] = "garbage arguments",
		[RPC_SYSTEM_ERR] = "system error",
		[RPC_RPC_MISMATCH] = "RPC version mismatch",
		[RPC_AUTH_ERROR] = "authentication error",
	};
	return (unsigned)r < sizeof(names) / sizeof(names[0]) ? names[r] : "?";
}
