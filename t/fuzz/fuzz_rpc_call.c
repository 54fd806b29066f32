/*
 * fuzz_rpc_call: libFuzzer target for what a client sends the server: the RPC
 * call header, its credential and verifier (AUTH_NONE, AUTH_SYS, the
 * integrity flavour), the program, version and procedure, and the arguments
 * of every NFSv3 and MOUNT v3 procedure and of Optimistic RDMA's MAP,
 * through the dispatcher the transports use (rpc_dispatch) with its duplicate
 * request cache. The
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
#include "t/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A server with both programs, made once. */
static struct rpc_server *server(void)
{
	static struct integrity_key key;
	static struct rpc_server *srv;
	struct rpc_server_params p = {.threads = 1, .key = &key, .drc_entries = 64};

	if (srv)
		return srv;
	if (integrity_key_set(&key, "fuzz_rpc_call: a 32-byte test key", 32, 1) != 0)
		abort();
	if (rpc_server_create(&p, &srv) != 0 || fuzz_add_nfs_programs(srv) != 0)
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
