/* rpcrdma_test_util.h: helpers shared by the RPC/RDMA tests. */
#ifndef NFSRDMA_T_RPCRDMA_TEST_UTIL_H
#define NFSRDMA_T_RPCRDMA_TEST_UTIL_H

#include "common/rpc/integrity.h"
#include "common/rpcrdma/rpcrdma.h"

struct rrt_server {
	struct integrity_key key;
	struct rpc_server *rpc;
	struct rr_server *rr;
	char port[16];
};

/* A TCP port free on 127.0.0.1 right now. */
/* The test parameters: soft provider, 16 credits, small arenas. */
void rrt_params(struct rr_params *p, unsigned modes, enum rr_reg reg);
/* A server of the bulk program on 127.0.0.1 (integrity key accepted if with_key). */
int rrt_server_start(struct rrt_server *t, unsigned modes, enum rr_reg reg, int with_key);
int rrt_server_start_p(struct rrt_server *t, const struct rr_params *p, int with_key);
/* The same with server.inline_calls: NULL, GET and PUT run on the loop when
 * they can (a PUT with BULK_SEED_WORKER in its seed cannot), and SLEEP always
 * does (holding the loop up). */
int rrt_server_start_inline(struct rrt_server *t, const struct rr_params *p);
void rrt_server_stop(struct rrt_server *t);
/* A client with the test parameters and the client's defaults (rrt_client),
 * or with p. */
int rrt_client(struct rrt_server *t, unsigned mode, enum rr_reg reg, int with_key,
	       struct rpc_clnt **out);
int rrt_client_p(struct rrt_server *t, const struct rr_params *p, int with_key,
		 struct rpc_clnt **out);
/* Bulk calls; 0, -errno from the call, or -EILSEQ when the content is wrong. */
int rrt_put(struct rpc_clnt *c, uint32_t seed, size_t len);
/* rrt_put with the data filled in and sent from buf (len bytes). */
int rrt_put_from(struct rpc_clnt *c, uint32_t seed, size_t len, char *buf);
/* ... and with the call's own timeout (0: the client's). */
int rrt_put_within(struct rpc_clnt *c, uint32_t seed, size_t len, char *buf, int timeout_ms);
int rrt_get(struct rpc_clnt *c, uint32_t seed, size_t len);
/* rrt_get whose call hints a reply of reply_hint bytes besides the data (a
 * hint too long for inline offers a Reply chunk too). */
int rrt_get_hint(struct rpc_clnt *c, uint32_t seed, size_t len, uint32_t reply_hint);
/* rrt_get_hint into dest (len bytes), checked against want. */
int rrt_get_into(struct rpc_clnt *c, uint32_t seed, size_t len, uint32_t reply_hint, char *dest,
		 const char *want);
int rrt_big(struct rpc_clnt *c, u_int n);
int rrt_sum(struct rpc_clnt *c, size_t len);
/* A BULK_SLEEP call of *ms milliseconds (ms lives as long as the call). */
struct rpc_call rrt_sleep_call(u_int *ms);

/* rpcrdma_test's cases of the registration cache (rpcrdma_test_reg.c). */
void cache_watermarks(void **state);
void cache_chunks(void **state);
void allphys_needs_trust(void **state);
void fastreg_binds_per_exposure(void **state);
void arena_sizes_share(void **state);
void expose_failure_named(void **state);
void window_wait_outside_connection(void **state);
void flushed_unbind_released(void **state);
void remote_invalidation(void **state);
void local_invalidations_give_windows_back(void **state);
/* ... and of the inline thresholds (rpcrdma_test_inline.c). */
void inline_bulk_when_it_fits(void **state);
void inline_bounded_by_peer_send(void **state);
void inline_margin_for_headers(void **state);
void inline_call_with_read_chunk(void **state);

/* A client that will never read: a raw TCP connection to 127.0.0.1:port with
 * a 4 KiB receive buffer that has sent n BULK_GETs of len bytes. Its fd, or -1. */
int rrt_tcp_flood_gets(const char *port, unsigned n, uint32_t len);
/* Read fd until the peer ends it, waiting at most ms for each read: whether it
 * ended; *got (optional) the bytes read. */
int rrt_read_to_end(int fd, int ms, size_t *got);

#endif
