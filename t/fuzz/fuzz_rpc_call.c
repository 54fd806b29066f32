/*
 * fuzz_rpc_call: libFuzzer target for what a client sends the server: the RPC
 * call header, its credential and verifier (AUTH_NONE, AUTH_SYS, the
 * integrity flavour), the program, version and procedure, and the arguments
 * of every NFSv3 and MOUNT v3 procedure, through the dispatcher the
 * transports use (rpc_dispatch) with its duplicate request cache. The
 * procedures themselves do nothing: what is fuzzed is everything before and
 * after them. No crash, no sanitizer report, every reply within its buffer.
 * Built by `make fuzz`, run by `make fuzz-run`; seeds in t/fuzz/corpus/rpc_call.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/log.h"
#include "common/nfs/nfs3_xdr.h"
#include "common/nfs/nfs_prog.h"
#include "common/rpc/integrity.h"
#include "common/rpc/rpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The procedure: answers an I/O error, whose results (a status and empty
 * attributes) are well formed; a procedure's successful results come from
 * the server itself, not from the wire. */
static void nothing(struct rpc_req *req, void *args, void *res)
{
	if ((req->prog == NFS_PROGRAM && req->proc > 0) ||
	    (req->prog == MOUNT_PROGRAM && req->proc == MOUNTPROC3_MNT))
		*(uint32_t *)res = NFS3ERR_IO; /* status first in each; MNT3ERR_IO is the same */
}

/* The wire descriptions, with the procedure above; every reply is kept, so
 * that the reply cache is fuzzed too. */
static void describe(struct rpc_proc_desc *out, const struct rpc_proc_desc *in, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		out[i] = in[i];
		out[i].fn = nothing;
		out[i].flags = RPC_DESC_REPLY_CACHE;
	}
}

/* A server with both programs, made once. */
static struct rpc_server *server(void)
{
	static struct rpc_proc_desc nfs[NFS3_NPROCS], mnt[MOUNT3_NPROCS];
	static struct integrity_key key;
	static struct rpc_server *srv;
	struct rpc_server_params p = {.threads = 1, .key = &key, .drc_entries = 64};

	if (srv)
		return srv;
	if (integrity_key_set(&key, "fuzz_rpc_call: a 32-byte test key", 32, 1) != 0)
		abort();
	describe(nfs, nfs3_xdr_procs, NFS3_NPROCS);
	describe(mnt, mount3_xdr_procs, MOUNT3_NPROCS);
	if (rpc_server_create(&p, &srv) != 0 ||
	    rpc_server_add_program(srv, &(struct rpc_program){.prog = NFS_PROGRAM,
							      .vers = NFS_V3,
							      .procs = nfs,
							      .nprocs = NFS3_NPROCS}) != 0 ||
	    rpc_server_add_program(srv, &(struct rpc_program){.prog = MOUNT_PROGRAM,
							      .vers = MOUNT_V3,
							      .procs = mnt,
							      .nprocs = MOUNT3_NPROCS}) != 0)
		abort();
	return srv;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t reply[65536];
	struct rpc_server *srv;
	struct rpc_xreq x;
	int rc;

	log_set_level(LOG_LVL_ERR);
	srv = server();
	memset(&x, 0, sizeof(x));
	x.call = data;
	x.call_len = size;
	x.reply = reply;
	x.reply_cap = sizeof(reply);
	rc = rpc_dispatch(srv, &x);
	if (rc == 0 && x.reply_len > x.reply_cap)
		abort();
	if (rc != -EBADMSG)
		rpc_dispatch_done(srv, &x);
	return 0;
}
