/*
 * fuzz_rpc_reply: libFuzzer target for what a server sends the client: the
 * RPC reply (accepted or not, verifier, MIC) and the results of every NFSv3
 * and MOUNT v3 procedure behind it, READDIR entries and READ data included,
 * Optimistic RDMA's MAP (its references),
 * and of the lock manager's calls the client makes (client/nlm_clnt.c: TEST
 * answers nlm4_testres, LOCK, CANCEL and UNLOCK nlm4_res).
 * The first byte picks the procedure; the rest is the reply. A hostile server
 * must not crash a client that runs as root: no crash, no sanitizer report,
 * and a decoded result frees cleanly. Built by `make fuzz`, run by `make
 * fuzz-run`; seeds in t/fuzz/corpus/rpc_reply.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/log.h"
#include "common/nfs/nfs3_xdr.h"
#include "common/nfs/nlm_prot.h"
#include "common/rpc/rpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct rpc_proc_desc nlm_res[] = {
	{.name = "NLM4_TEST",
	 .xdr_res = (xdrproc_t)xdr_nlm4_testres,
	 .res_size = sizeof(nlm4_testres)},
	{.name = "NLM4_LOCK", .xdr_res = (xdrproc_t)xdr_nlm4_res, .res_size = sizeof(nlm4_res)},
};
#define NLM_RES (sizeof(nlm_res) / sizeof(nlm_res[0]))

/* The results procedure `which` has: NFS, then MOUNT, ORDMA, then NLM. */
static const struct rpc_proc_desc *results_of(unsigned which)
{
	if (which < NFS3_NPROCS)
		return &nfs3_xdr_procs[which];
	which -= NFS3_NPROCS;
	if (which < MOUNT3_NPROCS)
		return &mount3_xdr_procs[which];
	which -= MOUNT3_NPROCS;
	return which < ORDMA_NPROCS ? &ordma_xdr_procs[which] : &nlm_res[which - ORDMA_NPROCS];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rpc_clnt clnt; /* no transport, no integrity key */
	static _Alignas(16) uint8_t res[4096];
	const struct rpc_proc_desc *d;
	struct rpc_call call;
	uint32_t xid = 0;
	unsigned which;

	log_set_level(LOG_LVL_ERR);
	if (size < 1)
		return 0;
	which = data[0] % (NFS3_NPROCS + MOUNT3_NPROCS + ORDMA_NPROCS + NLM_RES);
	d = results_of(which);
	if (d->res_size > sizeof(res))
		abort();
	rpc_peek_xid(data + 1, size - 1, &xid);
	memset(res, 0, sizeof(res));
	memset(&call, 0, sizeof(call));
	call.xdr_res = d->xdr_res;
	call.res = res;
	if (rpc_decode_reply(&clnt, xid, &call, data + 1, size - 1, NULL) == 0)
		xdr_free(d->xdr_res, (char *)res);
	return 0;
}
