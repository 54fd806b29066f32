/* rpcrdma_raw_calls.h: calls of the bulk program (bulkprog.h) from the raw
 * peer (rpcrdma_raw.h), as the tests that play a hostile client build them:
 * their transport headers by hand, Read-Read's data read with RDMA Read. */
#ifndef NFSRDMA_T_RPCRDMA_RAW_CALLS_H
#define NFSRDMA_T_RPCRDMA_RAW_CALLS_H

#include "common/rpcrdma/rpcrdma_hdr.h"
#include "rpcrdma_raw.h"

#define RAW_CREDITS 16 /* the credits every header asks for */

/* A transport header for proc with the next xid (free it). */
struct rpcrdma_hdr *raw_hdr(struct raw *r, uint32_t proc);
/* Encode an RPC call behind transport header h into buf (RAW_BUF); its length. */
size_t raw_build(struct raw *r, struct rpcrdma_hdr *h, struct rpc_call *call, uint8_t *buf);
/* raw_build of a call of BULKPROG's proc with args, whose reply is void. */
size_t raw_build_bulk(struct raw *r, struct rpcrdma_hdr *h, uint32_t proc, xdrproc_t xdr_args,
		      void *args, uint8_t *buf);
/* A NULL call of prog that must be answered (the connection still works):
 * its reply's decoding result. */
int raw_null(struct raw *r, uint32_t prog);
/* Send a GET of n bytes that offers no chunk (Read-Read); its xid. */
uint32_t raw_send_get(struct raw *r, u_int n);
/* Send a PADGET of n bytes with pad bytes before them, no chunk offered; its
 * xid. */
uint32_t raw_send_padget(struct raw *r, u_int n, u_int pad);
/* raw_send_get, then its reply into rh, which exposes the n bytes in one
 * Read segment (asserted); the xid. */
uint32_t raw_rr_get_len(struct raw *r, struct rpcrdma_hdr *rh, u_int n);
uint32_t raw_rr_get(struct raw *r, struct rpcrdma_hdr *rh); /* of 64 KiB */
/* The transport header of the next message (within RAW_TMO), the reply to
 * xid (asserted); raw_reply_any's, to any xid. Free it. */
struct rpcrdma_hdr *raw_reply(struct raw *r, uint32_t xid);
struct rpcrdma_hdr *raw_reply_any(struct raw *r);
/* Take the reply to xid: RDMA_ERROR err (ERR_VERS: offering version 1). */
void raw_expect_error(struct raw *r, uint32_t xid, uint32_t err);
/* RDMA Read the exposed segment into the data area; whether it worked. */
int raw_read(struct raw *r, const struct rpcrdma_seg *seg);
/* Send RDMA_DONE for xid. */
void raw_done(struct raw *r, uint32_t xid);
/* Encode RDMA_DONE for xid into buf (RAW_DONE_LEN bytes); its length. */
#define RAW_DONE_LEN 16
size_t raw_build_done(uint32_t xid, uint8_t *buf);

#endif
