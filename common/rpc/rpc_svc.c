/*
 * rpc_svc.c: the server side of RPC, shared by every transport: a table of
 * programs, the call dispatcher (header, credential, MIC, arguments, procedure,
 * reply), the duplicate request cache in front of non-idempotent procedures,
 * and the worker threads that run it all.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "integrity.h"
#include "common/base/clock.h"
#include "common/base/log.h"
#include "rpc.h"
#include "rpc_auth.h"
#include "rpc_replay.h"
#include "rpc_drc.h"

#define MAX_PROGRAMS 16

struct rpc_server {
	struct rpc_program progs[MAX_PROGRAMS];
	unsigned nprogs;
	const struct integrity_key *key;
	struct workq *workers;
	struct rpc_drc *drc;
	struct rpc_replay *replay; /* with a key */
	size_t mem_budget;	   /* 0: none */
	int inline_calls;	   /* rpc_server_may_inline may say yes */
	size_t mem_used, mem_peak; /* atomic */
	/* per program: nprocs * RPC_XPRT_N, [proc * RPC_XPRT_N + xprt]; atomic */
	struct rpc_op_stats *ops[MAX_PROGRAMS];
	uint64_t rejects[RPC_XPRT_N][RPC_AUTH_ERROR + 1]; /* atomic */
};

/* 10 us .. 10 s, roughly 1-2.5-5 per decade. */
const uint64_t rpc_lat_bound_ns[RPC_LAT_BUCKETS] = {
	10000,	 25000,	   50000,    100000,   250000,	  500000,    1000000,	 2500000,
	5000000, 10000000, 25000000, 50000000, 100000000, 250000000, 1000000000, 10000000000ULL,
};

int rpc_server_create(const struct rpc_server_params *p, struct rpc_server **out)
{
	struct rpc_server *srv = calloc(1, sizeof(*srv));
	int rc;

	if (!srv)
		return -ENOMEM;
	srv->key = p->key;
	srv->mem_budget = p->mem_budget;
	srv->inline_calls = p->inline_calls;
	rc = p->drc_entries ? rpc_drc_create(p->drc_entries, &srv->drc) : 0;
	if (rc == 0 && p->key)
		rc = rpc_replay_create(p->replay_contexts ? p->replay_contexts : 4096,
				       p->replay_window_s ? p->replay_window_s : 300, &srv->replay);
	if (rc == 0)
		rc = workq_create(p->threads, "rpc-worker", &srv->workers);
	if (rc) {
		rpc_replay_destroy(srv->replay);
		rpc_drc_destroy(srv->drc);
		free(srv);
		return rc;
	}
	*out = srv;
	return 0;
}

int rpc_server_add_program(struct rpc_server *srv, const struct rpc_program *prog)
{
	if (srv->nprogs == MAX_PROGRAMS)
		return -ENOSPC;
	srv->ops[srv->nprogs] =
		calloc((size_t)prog->nprocs * RPC_XPRT_N, sizeof(struct rpc_op_stats));
	if (srv->ops[srv->nprogs] == NULL)
		return -ENOMEM;
	srv->progs[srv->nprogs++] = *prog;
	return 0;
}

/* See rpc.h. The header's words: xid, CALL, RPC version, program, version,
 * procedure, credential flavour. */
int rpc_server_may_inline(struct rpc_server *srv, const uint8_t *call, size_t len)
{
	uint32_t w[7];

	if (!srv->inline_calls || len < sizeof(w))
		return 0;
	for (unsigned i = 0; i < 7; i++)
		if (rpc_peek_xid(call + 4 * i, 4, &w[i]) != 0)
			return 0;
	if (w[1] != CALL || w[2] != RPC_MSG_VERSION || w[6] == AUTH_NFSRDMA_HMAC)
		return 0;
	for (unsigned i = 0; i < srv->nprogs; i++) {
		const struct rpc_program *p = &srv->progs[i];

		if (p->prog == w[3] && p->vers == w[4] && w[5] < p->nprocs && p->may_inline)
			return p->may_inline(p->ctx, w[5]);
	}
	return 0;
}

void rpc_server_submit(struct rpc_server *srv, struct work *w)
{
	workq_submit(srv->workers, w);
}

void rpc_server_destroy(struct rpc_server *srv)
{
	if (!srv)
		return;
	workq_destroy(srv->workers);
	rpc_drc_destroy(srv->drc);
	rpc_replay_destroy(srv->replay);
	for (unsigned i = 0; i < srv->nprogs; i++)
		free(srv->ops[i]);
	free(srv);
}

/* See rpc.h. */
int rpc_mem_fits(struct rpc_server *srv, size_t n)
{
	return !srv->mem_budget ||
	       __atomic_load_n(&srv->mem_used, __ATOMIC_RELAXED) + n <= srv->mem_budget;
}

/* The peak follows what is in use. */
static void mem_peak(struct rpc_server *srv, size_t used)
{
	size_t peak = __atomic_load_n(&srv->mem_peak, __ATOMIC_RELAXED);

	while (used > peak && !__atomic_compare_exchange_n(&srv->mem_peak, &peak, used, 0,
							   __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* See rpc.h. */
int rpc_mem_reserve(struct rpc_server *srv, size_t n)
{
	size_t used = __atomic_load_n(&srv->mem_used, __ATOMIC_RELAXED);

	do {
		if (srv->mem_budget && used + n > srv->mem_budget)
			return 0;
	} while (!__atomic_compare_exchange_n(&srv->mem_used, &used, used + n, 0, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	mem_peak(srv, used + n);
	return 1;
}

/* See rpc.h. */
void rpc_mem_charge(struct rpc_server *srv, size_t n)
{
	mem_peak(srv, __atomic_add_fetch(&srv->mem_used, n, __ATOMIC_RELAXED));
}

/* See rpc.h. */
void rpc_mem_release(struct rpc_server *srv, size_t n)
{
	__atomic_sub_fetch(&srv->mem_used, n, __ATOMIC_RELAXED);
}

/* See rpc.h. */
void rpc_server_get_mem(struct rpc_server *srv, size_t *used, size_t *peak, size_t *budget)
{
	*used = __atomic_load_n(&srv->mem_used, __ATOMIC_RELAXED);
	*peak = __atomic_load_n(&srv->mem_peak, __ATOMIC_RELAXED);
	*budget = srv->mem_budget;
}

void rpc_server_get_replay_stats(struct rpc_server *srv, struct rpc_replay_stats *st)
{
	if (srv->replay)
		rpc_replay_get_stats(srv->replay, st);
	else
		memset(st, 0, sizeof(*st));
}

void rpc_server_get_drc_stats(struct rpc_server *srv, struct rpc_drc_stats *st)
{
	if (srv->drc)
		rpc_drc_get_stats(srv->drc, st);
	else
		memset(st, 0, sizeof(*st));
}

/* ---- the dispatcher ---- */

/* Find the program and procedure, or say why the call cannot run. */
static enum rpc_reject find_proc(struct rpc_server *srv, const struct call_body *cb,
				 const struct rpc_program **progp, uint32_t *low, uint32_t *high)
{
	const struct rpc_program *found = NULL;

	*low = UINT32_MAX;
	*high = 0;
	for (unsigned i = 0; i < srv->nprogs; i++) {
		const struct rpc_program *p = &srv->progs[i];

		if (p->prog != cb->cb_prog)
			continue;
		if (p->vers < *low)
			*low = p->vers;
		if (p->vers > *high)
			*high = p->vers;
		if (p->vers == cb->cb_vers)
			found = p;
	}
	if (*high == 0)
		return RPC_PROG_UNAVAIL;
	if (!found)
		return RPC_PROG_MISMATCH;
	*progp = found;
	if (cb->cb_proc >= found->nprocs || found->procs[cb->cb_proc].fn == NULL)
		return RPC_PROC_UNAVAIL;
	return RPC_OK;
}

/* Encode a reply header and, for a run call, its results; patches the MIC in. */
static int encode_reply(struct rpc_server *srv, struct rpc_xreq *x, int with_mic, int auth_why)
{
	uint8_t mic[INTEGRITY_MIC_LEN] = {0};
	struct rpc_msg msg;
	size_t res_start, end;
	XDR xdrs;
	int ok;

	memset(&msg, 0, sizeof(msg));
	msg.rm_xid = x->xid;
	msg.rm_direction = REPLY;
	if (x->status == RPC_RPC_MISMATCH || x->status == RPC_AUTH_ERROR) {
		msg.rm_reply.rp_stat = MSG_DENIED;
		if (x->status == RPC_AUTH_ERROR) {
			msg.rjcted_rply.rj_stat = AUTH_ERROR;
			msg.rjcted_rply.rj_why = (enum auth_stat)auth_why;
		} else {
			msg.rjcted_rply.rj_stat = RPC_MISMATCH;
			msg.rjcted_rply.rj_vers.low = RPC_MSG_VERSION;
			msg.rjcted_rply.rj_vers.high = RPC_MSG_VERSION;
		}
	} else {
		msg.rm_reply.rp_stat = MSG_ACCEPTED;
		msg.acpted_rply.ar_verf.oa_flavor = with_mic ? AUTH_NFSRDMA_HMAC : AUTH_NONE;
		msg.acpted_rply.ar_verf.oa_base = (caddr_t)mic;
		msg.acpted_rply.ar_verf.oa_length = with_mic ? INTEGRITY_MIC_LEN : 0;
		msg.acpted_rply.ar_results.where = NULL;
		msg.acpted_rply.ar_results.proc = (xdrproc_t)xdr_void;
		switch (x->status) {
		case RPC_OK:
			msg.acpted_rply.ar_stat = SUCCESS;
			msg.acpted_rply.ar_results.where = x->res;
			msg.acpted_rply.ar_results.proc = x->desc->xdr_res;
			break;
		case RPC_PROG_UNAVAIL:
			msg.acpted_rply.ar_stat = PROG_UNAVAIL;
			break;
		case RPC_PROG_MISMATCH:
			msg.acpted_rply.ar_stat = PROG_MISMATCH;
			msg.acpted_rply.ar_vers.low = x->vers_low;
			msg.acpted_rply.ar_vers.high = x->vers_high;
			break;
		case RPC_PROC_UNAVAIL:
			msg.acpted_rply.ar_stat = PROC_UNAVAIL;
			break;
		case RPC_GARBAGE_ARGS:
			msg.acpted_rply.ar_stat = GARBAGE_ARGS;
			break;
		default:
			msg.acpted_rply.ar_stat = SYSTEM_ERR;
			break;
		}
	}
	xdrmem_create(&xdrs, (char *)x->reply, (u_int)x->reply_cap, XDR_ENCODE);
	if (x->res_ddp)
		x->res_ddp->nitems = 0;
	rpc_ddp_bind(&xdrs, x->res_ddp);
	ok = xdr_replymsg(&xdrs, &msg);
	rpc_ddp_bind(NULL, NULL);
	end = xdr_getpos(&xdrs);
	xdr_destroy(&xdrs);
	if (!ok)
		return -ENOSPC;
	x->reply_len = end;
	if (with_mic && msg.rm_reply.rp_stat == MSG_ACCEPTED) {
		/* xid, direction, reply_stat, verifier flavor and length, MIC */
		res_start = 5 * 4 + INTEGRITY_MIC_LEN;
		if (rpc_reply_mic(srv->key, x->xid, x->reply, res_start, end, x->res_ddp, mic))
			return -EIO;
		memcpy(x->reply + 5 * 4, mic, INTEGRITY_MIC_LEN);
	}
	return 0;
}

/* Decode and check the credential and verifier; the MIC is checked later. */
static int check_auth(struct rpc_server *srv, struct rpc_xreq *x, const struct rpc_msg *msg,
		      struct rpc_integrity_seq *is)
{
	const struct opaque_auth *cr = &msg->rm_call.cb_cred, *vf = &msg->rm_call.cb_verf;
	int why = rpc_auth_decode_cred((uint32_t)cr->oa_flavor, (const uint8_t *)cr->oa_base,
				       cr->oa_length, srv->key, &x->req.cred, is);

	if (why)
		return why;
	if (cr->oa_flavor == AUTH_NFSRDMA_HMAC) {
		if (vf->oa_flavor != AUTH_NFSRDMA_HMAC || vf->oa_length != INTEGRITY_MIC_LEN)
			return AUTH_BADVERF;
	} else if (vf->oa_flavor != AUTH_NONE) {
		return AUTH_BADVERF;
	}
	return 0;
}

/* Check the call's MIC over its header and the argument stream as decoded. */
static int check_mic(struct rpc_server *srv, struct rpc_xreq *x, const struct rpc_msg *msg,
		     size_t verf_end)
{
	uint8_t mic[INTEGRITY_MIC_LEN];
	size_t cred_end = verf_end - 8 - INTEGRITY_MIC_LEN;

	if (rpc_call_mic(srv->key, x->call, cred_end, verf_end, x->call_len, x->args_ddp, mic))
		return AUTH_FAILED;
	if (!integrity_mic_equal(mic, (const uint8_t *)msg->rm_call.cb_verf.oa_base)) {
		log_warn("xid %#x: call integrity MIC does not match", x->xid);
		return AUTH_BADVERF;
	}
	return 0;
}

/* A non-idempotent call, checked and decoded, goes through the reply cache:
 * 1 when it is a retransmission answered from there (x->reply filled),
 * -EALREADY when its first run is still going, 0 to run it (x->drc_entry, if
 * set, waits for the reply). The key takes the arguments, not the credential's
 * bytes (the integrity flavour's differ on every send), but the caller's ids. */
static int drc_check(struct rpc_server *srv, struct rpc_xreq *x, size_t args_start)
{
	struct rpc_drc_key k;
	size_t len;

	if (!srv->drc || !(x->desc->flags & RPC_DESC_REPLY_CACHE) ||
	    rpc_drc_key(&k, x->peer, x->xid, x->req.prog, x->req.vers, x->req.proc, x->req.cred.uid,
			x->req.cred.gid, x->call + args_start, x->call_len - args_start))
		return 0;
	switch (rpc_drc_lookup(srv->drc, &k, x->reply, x->reply_cap, &len, &x->drc_entry)) {
	case RPC_DRC_REPLAY:
		log_debug("xid %#x: retransmission answered from the reply cache", x->xid);
		x->reply_len = len;
		if (x->res_ddp)
			x->res_ddp->nitems = 0;
		return 1;
	case RPC_DRC_DROP:
		log_debug("xid %#x: retransmission of a call still running, dropped", x->xid);
		return -EALREADY;
	default:
		return 0;
	}
}

/* The reply (rc from encoding it) is final: keep it for retransmissions if it
 * is a procedure's inline result, else forget the entry. */
static void drc_finish(struct rpc_server *srv, struct rpc_xreq *x, int rc)
{
	int keep = rc == 0 && x->ran && x->status == RPC_OK && (!x->res_ddp || !x->res_ddp->nitems);

	if (!x->drc_entry || rc == -EMSGSIZE)
		return; /* none, or rpc_reencode() comes */
	rpc_drc_done(srv->drc, x->drc_entry, keep ? x->reply : NULL, keep ? x->reply_len : 0);
	x->drc_entry = NULL;
}

/* Run a decoded, authorised call; sets x->status for what the reply says, or
 * *why for an authentication error. Returns 0, or what drc_check says. */
/* An authenticated integrity call: has it been seen before? 0 to run it,
 * -EALREADY to drop it (a replay gets no reply, as in RPCSEC_GSS), or 1 with
 * *why when it is to be refused (a clock too far off, no room for a context). */
static int check_replay(struct rpc_server *srv, struct rpc_xreq *x,
			const struct rpc_integrity_seq *is, int *why)
{
	int rc = rpc_replay_check(srv->replay, is->ctx, is->seq, is->time, (uint64_t)time(NULL));

	if (rc == -EALREADY) {
		log_info("xid %#x: integrity call %u of context %016llx seen before: dropped",
			 x->xid, is->seq, (unsigned long long)is->ctx);
		return rc;
	}
	if (rc == -ETIME)
		log_warn("xid %#x: the sender's clock is %d s off ours: refused", x->xid,
			 (int32_t)((uint32_t)time(NULL) - is->time));
	else if (rc == -ENOSPC)
		log_warn("xid %#x: no room for another integrity context: refused", x->xid);
	*why = rc ? AUTH_REJECTEDCRED : 0;
	return rc ? 1 : 0;
}

/* Count one call of prog's procedure proc that ran for ns on transport xprt. */
static void op_record(struct rpc_server *srv, const struct rpc_program *prog, uint32_t proc,
		      enum rpc_xprt xprt, uint64_t ns)
{
	struct rpc_op_stats *st = &srv->ops[prog - srv->progs][proc * RPC_XPRT_N + xprt];
	unsigned b = 0;

	while (b < RPC_LAT_BUCKETS && ns > rpc_lat_bound_ns[b])
		b++;
	__atomic_fetch_add(&st->calls, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&st->sum_ns, ns, __ATOMIC_RELAXED);
	__atomic_fetch_add(&st->bucket[b], 1, __ATOMIC_RELAXED);
}

/* See rpc.h. */
void rpc_server_each_op(struct rpc_server *srv, rpc_op_fn fn, void *arg)
{
	for (unsigned i = 0; i < srv->nprogs; i++) {
		for (uint32_t p = 0; p < srv->progs[i].nprocs; p++) {
			for (unsigned x = 0; x < RPC_XPRT_N; x++) {
				const struct rpc_op_stats *live = &srv->ops[i][p * RPC_XPRT_N + x];
				struct rpc_op_stats st;

				st.calls = __atomic_load_n(&live->calls, __ATOMIC_RELAXED);
				st.sum_ns = __atomic_load_n(&live->sum_ns, __ATOMIC_RELAXED);
				for (unsigned b = 0; b <= RPC_LAT_BUCKETS; b++)
					st.bucket[b] =
						__atomic_load_n(&live->bucket[b], __ATOMIC_RELAXED);
				fn(arg, &srv->progs[i], &srv->progs[i].procs[p], (enum rpc_xprt)x,
				   &st);
			}
		}
	}
}

/* See rpc.h. */
void rpc_server_get_rejects(struct rpc_server *srv, uint64_t out[RPC_XPRT_N][RPC_AUTH_ERROR + 1])
{
	for (unsigned x = 0; x < RPC_XPRT_N; x++)
		for (unsigned r = 0; r <= RPC_AUTH_ERROR; r++)
			out[x][r] = __atomic_load_n(&srv->rejects[x][r], __ATOMIC_RELAXED);
}

/* See rpc.h. */
const char *rpc_xprt_name(enum rpc_xprt x)
{
	static const char *const names[RPC_XPRT_N] = {"tcp", "udp", "rdma"};

	return (unsigned)x < RPC_XPRT_N ? names[x] : "?";
}

/* See rpc.h. */
const char *rpc_reject_label(enum rpc_reject r)
{
	static const char *const names[] = {
		[RPC_OK] = "ok",
		[RPC_PROG_UNAVAIL] = "prog_unavail",
		[RPC_PROG_MISMATCH] = "prog_mismatch",
		[RPC_PROC_UNAVAIL] = "proc_unavail",
		[RPC_GARBAGE_ARGS] = "garbage_args",
		[RPC_SYSTEM_ERR] = "system_err",
		[RPC_RPC_MISMATCH] = "rpc_mismatch",
		[RPC_AUTH_ERROR] = "auth_error",
	};

	return (unsigned)r <= RPC_AUTH_ERROR ? names[r] : "?";
}

/* Zeroed room for size bytes: in store if they fit, else allocated (freed
 * by rpc_dispatch_done); NULL if that fails. */
static void *xreq_room(union rpc_store *store, size_t size)
{
	if (size > sizeof(store->b))
		return calloc(1, size);
	memset(store->b, 0, size);
	return store->b;
}

static int decode_and_run(struct rpc_server *srv, struct rpc_xreq *x, const struct rpc_msg *msg,
			  const struct rpc_program *prog, XDR *xdrs, size_t verf_end,
			  const struct rpc_integrity_seq *is, int *why)
{
	const struct rpc_proc_desc *d = &prog->procs[msg->rm_call.cb_proc];
	uint64_t t0;
	bool_t ok;
	int rc;

	x->desc = d;
	x->args = xreq_room(&x->args_store, d->args_size);
	x->res = xreq_room(&x->res_store, d->res_size);
	if (!x->args || !x->res) {
		x->status = RPC_SYSTEM_ERR;
		return 0;
	}
	rpc_ddp_bind(xdrs, x->args_ddp);
	ok = d->xdr_args(xdrs, x->args);
	rpc_ddp_bind(NULL, NULL);
	if (!ok) {
		x->status = RPC_GARBAGE_ARGS;
		return 0;
	}
	if (x->req.cred.flavor == AUTH_NFSRDMA_HMAC) {
		if ((*why = check_mic(srv, x, msg, verf_end)) != 0)
			return 0;
		if ((rc = check_replay(srv, x, is, why)) != 0)
			return rc < 0 ? rc : 0;
		x->req.integrity_ok = 1;
	}
	if ((rc = drc_check(srv, x, verf_end)) != 0)
		return rc;
	x->req.prog_ctx = prog->ctx;
	x->req.nowait = x->nowait;
	t0 = clock_now_ns();
	d->fn(&x->req, x->args, x->res);
	x->ran = 1;
	if (x->req.would_block)
		return -EAGAIN; /* not counted: it runs again on a worker */
	op_record(srv, prog, msg->rm_call.cb_proc, x->xprt, clock_now_ns() - t0);
	x->status = RPC_OK;
	return 0;
}

/* Decode and check a call's header (x->call): its RPC version and form, its
 * credential, its program. The status it is to be answered with (*why for
 * AUTH_ERROR), and *prog when RPC_OK. */
static enum rpc_reject call_header(struct rpc_server *srv, struct rpc_xreq *x, struct rpc_msg *msg,
				   XDR *xdrs, struct rpc_integrity_seq *is,
				   const struct rpc_program **prog, int *why)
{
	uint32_t rpcvers;

	/* RPC version first: xdr_callmsg refuses any but 2 as garbage, where the
	 * answer must be RPC_MISMATCH with the versions we have (RFC 5531) */
	if (rpc_peek_xid(x->call + 8, x->call_len - 8, &rpcvers) == 0 && rpcvers != RPC_MSG_VERSION)
		return RPC_RPC_MISMATCH;
	if (!xdr_callmsg(xdrs, msg))
		return RPC_GARBAGE_ARGS;
	if ((*why = check_auth(srv, x, msg, is)) != 0)
		return RPC_AUTH_ERROR;
	return find_proc(srv, &msg->rm_call, prog, &x->vers_low, &x->vers_high);
}

enum rpc_reject rpc_precheck(struct rpc_server *srv, struct rpc_xreq *x)
{
	uint8_t credbuf[RPC_MAX_AUTH_BYTES], verfbuf[RPC_MAX_AUTH_BYTES];
	const struct rpc_program *prog = NULL;
	struct rpc_msg msg = {0};
	struct rpc_integrity_seq is;
	enum rpc_reject st;
	uint32_t dir;
	int why = 0;
	XDR xdrs;

	if (x->call_len < 8 || rpc_peek_xid(x->call + 4, 4, &dir) || dir != CALL)
		return RPC_GARBAGE_ARGS;
	msg.rm_call.cb_cred.oa_base = (caddr_t)credbuf;
	msg.rm_call.cb_verf.oa_base = (caddr_t)verfbuf;
	xdrmem_create(&xdrs, (char *)x->call, (u_int)x->call_len, XDR_DECODE);
	st = call_header(srv, x, &msg, &xdrs, &is, &prog, &why);
	xdr_destroy(&xdrs);
	if (st == RPC_OK && prog->peer_ok && !prog->peer_ok(prog->ctx, x->peer)) {
		x->refuse_why = AUTH_TOOWEAK;
		st = RPC_AUTH_ERROR;
	}
	return st;
}

int rpc_dispatch(struct rpc_server *srv, struct rpc_xreq *x)
{
	uint8_t credbuf[RPC_MAX_AUTH_BYTES], verfbuf[RPC_MAX_AUTH_BYTES];
	const struct rpc_program *prog = NULL;
	struct rpc_integrity_seq is = {0};
	struct rpc_msg msg;
	uint32_t dir;
	int why = 0, rc;
	size_t verf_end;
	XDR xdrs;

	x->desc = NULL;
	x->args = x->res = NULL;
	x->ran = 0;
	x->reply_len = 0;
	x->drc_entry = NULL;
	memset(&x->req, 0, sizeof(x->req));
	if (rpc_peek_xid(x->call, x->call_len, &x->xid) || x->call_len < 8)
		return -EBADMSG;
	if (rpc_peek_xid(x->call + 4, 4, &dir) || dir != CALL)
		return -EBADMSG;

	memset(&msg, 0, sizeof(msg));
	msg.rm_call.cb_cred.oa_base = (caddr_t)credbuf;
	msg.rm_call.cb_verf.oa_base = (caddr_t)verfbuf;
	xdrmem_create(&xdrs, (char *)x->call, (u_int)x->call_len, XDR_DECODE);
	x->status = call_header(srv, x, &msg, &xdrs, &is, &prog, &why);
	if (x->status == RPC_OK && x->refuse_why) {
		/* refused before its arguments were fetched: they are not there */
		why = x->refuse_why;
		x->status = RPC_AUTH_ERROR;
	} else if (x->status == RPC_OK) {
		x->req.xid = x->xid;
		x->req.prog = msg.rm_call.cb_prog;
		x->req.vers = msg.rm_call.cb_vers;
		x->req.proc = msg.rm_call.cb_proc;
		x->req.peer = x->peer;
		x->req.peer_len = x->peer_len;
		x->req.secure_transport = x->secure_transport;
		x->req.get_buf = x->get_buf;
		x->req.xprt_req = x->xprt_req;
		verf_end = xdr_getpos(&xdrs);
		rc = decode_and_run(srv, x, &msg, prog, &xdrs, verf_end, &is, &why);
		if (rc) {
			xdr_destroy(&xdrs);
			if (rc == -EAGAIN && x->drc_entry) { /* it runs again on a worker */
				rpc_drc_retry(srv->drc, x->drc_entry);
				x->drc_entry = NULL;
			}
			return rc < 0 ? rc : 0; /* dropped, replayed, or to a worker */
		}
		if (why)
			x->status = RPC_AUTH_ERROR;
	}
	xdr_destroy(&xdrs);
	if (x->status != RPC_OK) {
		log_debug("xid %#x: %s", x->xid, rpc_reject_str(x->status));
		if ((unsigned)x->status <= RPC_AUTH_ERROR && (unsigned)x->xprt < RPC_XPRT_N)
			__atomic_fetch_add(&srv->rejects[x->xprt][x->status], 1, __ATOMIC_RELAXED);
	}

	rc = encode_reply(srv, x, x->status == RPC_OK && x->req.integrity_ok, why);
	if (rc == -ENOSPC && x->status == RPC_OK)
		rc = -EMSGSIZE; /* the transport may offer more room: rpc_reencode() */
	drc_finish(srv, x, rc);
	return rc;
}

int rpc_reencode(struct rpc_server *srv, struct rpc_xreq *x)
{
	int rc = encode_reply(srv, x, x->status == RPC_OK && x->req.integrity_ok, 0);

	if (rc == -ENOSPC && x->status == RPC_OK) {
		log_warn("xid %#x: %s reply does not fit in %zu bytes", x->xid, x->desc->name,
			 x->reply_cap);
		x->status = RPC_SYSTEM_ERR;
		rc = encode_reply(srv, x, x->req.integrity_ok, 0);
	}
	drc_finish(srv, x, rc);
	return rc;
}

void rpc_dispatch_done(struct rpc_server *srv, struct rpc_xreq *x)
{
	drc_finish(srv, x, -ECANCELED); /* a reply never made: forget the entry */
	if (x->desc && x->args)
		xdr_free(x->desc->xdr_args, x->args);
	if (x->ran) {
		if (x->desc->free_res)
			x->desc->free_res(&x->req, x->res);
		else
			xdr_free(x->desc->xdr_res, x->res);
	}
	if (x->args != x->args_store.b)
		free(x->args);
	if (x->res != x->res_store.b)
		free(x->res);
	x->args = x->res = NULL;
	x->desc = NULL;
	x->ran = 0;
}
