/*
 * nlm_proc.c: NLM v4 and NSM v1 as RPC programs: the procedure tables, the
 * synchronous procedures' answers, and the asynchronous ones (_MSG), whose
 * answers go back as calls (_RES) to the client's lock manager.
 */
#include <stdlib.h>
#include <string.h>

#include "common/base/log.h"
#include "common/rpc/rpc.h"
#include "server/nlm_int.h"

static bool_t xdr_none(XDR *xdrs, void *unused)
{
	(void)xdrs;
	(void)unused;
	return TRUE;
}

/* A copy of the call's cookie for the answer (empty if out of memory). */
static void copy_cookie(const nlm4_netobj *in, nlm4_netobj *out)
{
	out->nlm4_netobj_len = 0;
	out->nlm4_netobj_val = NULL;
	if (in->nlm4_netobj_len && (out->nlm4_netobj_val = malloc(in->nlm4_netobj_len)) != NULL) {
		memcpy(out->nlm4_netobj_val, in->nlm4_netobj_val, in->nlm4_netobj_len);
		out->nlm4_netobj_len = in->nlm4_netobj_len;
	}
}

static void proc_null(struct rpc_req *req, void *args, void *res)
{
	(void)req;
	(void)args;
	(void)res;
}

/* ---- the synchronous procedures */

static void test_into(struct rpc_req *req, const nlm4_testargs *a, nlm4_testres *r)
{
	copy_cookie(&a->cookie, &r->cookie);
	r->stat.stat = nlm_do_test(req->prog_ctx, req, a, &r->stat.nlm4_testrply_u.holder);
}

static void proc_test(struct rpc_req *req, void *args, void *res)
{
	test_into(req, args, res);
}

static void lock_into(struct rpc_req *req, const nlm4_lockargs *a, nlm4_res *r, int via_msg,
		      int monitor)
{
	copy_cookie(&a->cookie, &r->cookie);
	r->stat = nlm_do_lock(req->prog_ctx, req, a, via_msg, monitor);
}

static void proc_lock(struct rpc_req *req, void *args, void *res)
{
	lock_into(req, args, res, 0, 1);
}

static void proc_nm_lock(struct rpc_req *req, void *args, void *res)
{
	lock_into(req, args, res, 0, 0);
}

static void proc_cancel(struct rpc_req *req, void *args, void *res)
{
	const nlm4_cancargs *a = args;
	nlm4_res *r = res;

	copy_cookie(&a->cookie, &r->cookie);
	r->stat = nlm_do_cancel(req->prog_ctx, req, a);
}

static void proc_unlock(struct rpc_req *req, void *args, void *res)
{
	const nlm4_unlockargs *a = args;
	nlm4_res *r = res;

	copy_cookie(&a->cookie, &r->cookie);
	r->stat = nlm_do_unlock(req->prog_ctx, req, a);
}

/* GRANTED to the server: it waits for no lock of its own. */
static void proc_granted(struct rpc_req *req, void *args, void *res)
{
	const nlm4_testargs *a = args;
	nlm4_res *r = res;

	(void)req;
	copy_cookie(&a->cookie, &r->cookie);
	r->stat = NLM4_DENIED;
}

static void share_into(struct rpc_req *req, void *args, void *res, int unshare)
{
	const nlm4_shareargs *a = args;
	nlm4_shareres *r = res;

	copy_cookie(&a->cookie, &r->cookie);
	r->stat = nlm_do_share(req->prog_ctx, req, a, unshare);
	r->sequence = 0;
}

static void proc_share(struct rpc_req *req, void *args, void *res)
{
	share_into(req, args, res, 0);
}

static void proc_unshare(struct rpc_req *req, void *args, void *res)
{
	share_into(req, args, res, 1);
}

static void proc_free_all(struct rpc_req *req, void *args, void *res)
{
	const nlm4_notify *a = args;

	(void)res;
	nlm_do_free_all(req->prog_ctx, req->peer, a->name);
}

/* ---- the asynchronous procedures: the answer is a call back */

/* Send the answer r (xdr) as procedure proc to the caller's lock manager. */
static void answer_back(struct rpc_req *req, uint32_t proc, xdrproc_t xdr, void *r)
{
	if (nlm_cb_call(req->prog_ctx, req->peer, req->peer_len, NLM_PROGRAM, NLM_V4, proc, xdr, r,
			NULL, 0, NULL, NULL) != 0)
		log_info("NLM: the answer to a _MSG call could not be queued");
	xdr_free(xdr, r);
}

static void proc_test_msg(struct rpc_req *req, void *args, void *res)
{
	nlm4_testres r = {0};

	(void)res;
	test_into(req, args, &r);
	answer_back(req, NLM4_TEST_RES, (xdrproc_t)xdr_nlm4_testres, &r);
}

static void proc_lock_msg(struct rpc_req *req, void *args, void *res)
{
	nlm4_res r = {0};

	(void)res;
	lock_into(req, args, &r, 1, 1);
	answer_back(req, NLM4_LOCK_RES, (xdrproc_t)xdr_nlm4_res, &r);
}

static void proc_cancel_msg(struct rpc_req *req, void *args, void *res)
{
	nlm4_res r = {0};

	(void)res;
	proc_cancel(req, args, &r);
	answer_back(req, NLM4_CANCEL_RES, (xdrproc_t)xdr_nlm4_res, &r);
}

static void proc_unlock_msg(struct rpc_req *req, void *args, void *res)
{
	nlm4_res r = {0};

	(void)res;
	proc_unlock(req, args, &r);
	answer_back(req, NLM4_UNLOCK_RES, (xdrproc_t)xdr_nlm4_res, &r);
}

static void proc_granted_msg(struct rpc_req *req, void *args, void *res)
{
	nlm4_res r = {0};

	(void)res;
	proc_granted(req, args, &r);
	answer_back(req, NLM4_GRANTED_RES, (xdrproc_t)xdr_nlm4_res, &r);
}

/* TEST_RES .. UNLOCK_RES: answers for a client; the server sends no _MSG. */
static void proc_res_ignored(struct rpc_req *req, void *args, void *res)
{
	(void)req;
	(void)args;
	(void)res;
}

/* GRANTED_RES: the client's answer to our GRANTED_MSG. */
static void proc_granted_res(struct rpc_req *req, void *args, void *res)
{
	const nlm4_res *a = args;

	(void)res;
	nlm_granted_res(req->prog_ctx, req, &a->cookie, a->stat);
}

#define P(name, fn, xa, ta, xr, tr)                                                                \
	{                                                                                          \
		name, (xdrproc_t)(xa), (xdrproc_t)(xr), sizeof(ta), sizeof(tr), fn, NULL, 0        \
	}
#define UNUSED                                                                                     \
	{                                                                                          \
		NULL, (xdrproc_t)xdr_none, (xdrproc_t)xdr_none, 1, 1, NULL, NULL, 0                \
	}

/* See nlm_int.h. Indexed by procedure number. */
const struct rpc_proc_desc nlm4_rpc_procs[NLM4_NPROCS] = {
	P("NULL", proc_null, xdr_none, char, xdr_none, char),
	P("TEST", proc_test, xdr_nlm4_testargs, nlm4_testargs, xdr_nlm4_testres, nlm4_testres),
	P("LOCK", proc_lock, xdr_nlm4_lockargs, nlm4_lockargs, xdr_nlm4_res, nlm4_res),
	P("CANCEL", proc_cancel, xdr_nlm4_cancargs, nlm4_cancargs, xdr_nlm4_res, nlm4_res),
	P("UNLOCK", proc_unlock, xdr_nlm4_unlockargs, nlm4_unlockargs, xdr_nlm4_res, nlm4_res),
	P("GRANTED", proc_granted, xdr_nlm4_testargs, nlm4_testargs, xdr_nlm4_res, nlm4_res),
	P("TEST_MSG", proc_test_msg, xdr_nlm4_testargs, nlm4_testargs, xdr_none, char),
	P("LOCK_MSG", proc_lock_msg, xdr_nlm4_lockargs, nlm4_lockargs, xdr_none, char),
	P("CANCEL_MSG", proc_cancel_msg, xdr_nlm4_cancargs, nlm4_cancargs, xdr_none, char),
	P("UNLOCK_MSG", proc_unlock_msg, xdr_nlm4_unlockargs, nlm4_unlockargs, xdr_none, char),
	P("GRANTED_MSG", proc_granted_msg, xdr_nlm4_testargs, nlm4_testargs, xdr_none, char),
	P("TEST_RES", proc_res_ignored, xdr_nlm4_testres, nlm4_testres, xdr_none, char),
	P("LOCK_RES", proc_res_ignored, xdr_nlm4_res, nlm4_res, xdr_none, char),
	P("CANCEL_RES", proc_res_ignored, xdr_nlm4_res, nlm4_res, xdr_none, char),
	P("UNLOCK_RES", proc_res_ignored, xdr_nlm4_res, nlm4_res, xdr_none, char),
	P("GRANTED_RES", proc_granted_res, xdr_nlm4_res, nlm4_res, xdr_none, char),
	UNUSED,
	UNUSED,
	UNUSED,
	UNUSED,
	P("SHARE", proc_share, xdr_nlm4_shareargs, nlm4_shareargs, xdr_nlm4_shareres,
	  nlm4_shareres),
	P("UNSHARE", proc_unshare, xdr_nlm4_shareargs, nlm4_shareargs, xdr_nlm4_shareres,
	  nlm4_shareres),
	P("NM_LOCK", proc_nm_lock, xdr_nlm4_lockargs, nlm4_lockargs, xdr_nlm4_res, nlm4_res),
	P("FREE_ALL", proc_free_all, xdr_nlm4_notify, nlm4_notify, xdr_none, char),
};

/* ---- NSM */

static void sm_stat(struct rpc_req *req, void *args, void *res)
{
	struct nlm *n = req->prog_ctx;
	nsm_stat_res *r = res;

	(void)args;
	r->res_stat = NSM_STAT_SUCC;
	r->state = n->nsm_state;
}

/* MON from a peer: our lock manager monitors in process; no one else may. */
static void sm_mon(struct rpc_req *req, void *args, void *res)
{
	struct nlm *n = req->prog_ctx;
	nsm_stat_res *r = res;

	(void)args;
	r->res_stat = NSM_STAT_FAIL;
	r->state = n->nsm_state;
}

static void sm_unmon(struct rpc_req *req, void *args, void *res)
{
	struct nlm *n = req->prog_ctx;
	nsm_stat *r = res;

	(void)args;
	r->state = n->nsm_state;
}

/* NOTIFY: a client rebooted. */
static void sm_notify(struct rpc_req *req, void *args, void *res)
{
	const nsm_stat_chge *a = args;

	(void)res;
	if (a->mon_name && a->mon_name[0])
		nsm_rebooted(req->prog_ctx, a->mon_name, req->peer, a->state);
}

/* See nlm_int.h. */
const struct rpc_proc_desc nsm_rpc_procs[NSM_NPROCS] = {
	P("SM_NULL", proc_null, xdr_none, char, xdr_none, char),
	P("SM_STAT", sm_stat, xdr_nsm_name, nsm_name, xdr_nsm_stat_res, nsm_stat_res),
	P("SM_MON", sm_mon, xdr_nsm_mon, nsm_mon, xdr_nsm_stat_res, nsm_stat_res),
	P("SM_UNMON", sm_unmon, xdr_nsm_mon_id, nsm_mon_id, xdr_nsm_stat, nsm_stat),
	P("SM_UNMON_ALL", sm_unmon, xdr_nsm_my_id, nsm_my_id, xdr_nsm_stat, nsm_stat),
	UNUSED, /* SM_SIMU_CRASH: not from the network */
	P("SM_NOTIFY", sm_notify, xdr_nsm_stat_chge, nsm_stat_chge, xdr_none, char),
};

/* See nlm.h. */
int nlm_register(struct rpc_server *srv, struct nlm *n)
{
	struct rpc_program nlm = {.prog = NLM_PROGRAM,
				  .vers = NLM_V4,
				  .procs = nlm4_rpc_procs,
				  .nprocs = NLM4_NPROCS,
				  .ctx = n};
	struct rpc_program nsm = {.prog = NSM_PROGRAM,
				  .vers = NSM_V1,
				  .procs = nsm_rpc_procs,
				  .nprocs = NSM_NPROCS,
				  .ctx = n};
	int rc = rpc_server_add_program(srv, &nlm);

	return rc ? rc : rpc_server_add_program(srv, &nsm);
}
