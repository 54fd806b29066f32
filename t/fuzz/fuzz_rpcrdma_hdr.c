/*
 * fuzz_rpcrdma_hdr: libFuzzer target for the RPC/RDMA header codec and the
 * RFC 8797 private data decoder. Built by `make fuzz` with clang
 * -fsanitize=fuzzer,address,undefined; run by `make fuzz-run`. Seeds:
 * t/fuzz/corpus/rpcrdma_hdr (written by `t/unit/rpcrdma_hdr_test --write-corpus`).
 *
 * Besides "no crash, no sanitizer report" it checks the codec's promises and
 * aborts when one is broken: a refused input leaves the cursor where it was
 * and gives a documented error; an accepted header encodes back to exactly
 * the bytes it was decoded from, and those decode to an equal header.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/log.h"
#include "common/rpcrdma/rpcrdma_hdr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Report a broken promise and stop, so that libFuzzer saves the input. */
static void broken(const char *what)
{
	fprintf(stderr, "fuzz_rpcrdma_hdr: %s\n", what);
	abort();
}

/* An accepted header must survive encode and decode unchanged. */
static void check_accepted(const uint8_t *data, size_t used, const struct rpcrdma_hdr *h)
{
	static uint8_t out[RPCRDMA_HDR_MAX_LEN];
	static struct rpcrdma_hdr again;
	struct rpcrdma_read_chunk rc[RPCRDMA_MAX_READ_SEGS];
	struct wcur w;
	struct cur c;
	uint64_t len;
	uint32_t n;

	if (rpcrdma_hdr_encoded_len(h) != used)
		broken("encoded length differs from the bytes decoded");
	wcur_init(&w, out, sizeof(out));
	if (rpcrdma_hdr_encode(&w, h) != 0 || w.pos != used || memcmp(out, data, used) != 0)
		broken("re-encoding does not give the decoded bytes back");
	cur_init(&c, out, w.pos);
	if (rpcrdma_hdr_decode(&c, &again) != 0 || c.pos != used || !rpcrdma_hdr_equal(h, &again))
		broken("re-encoded header decodes differently");
	if (rpcrdma_read_chunks(h, rc, &n) != 0)
		broken("accepted Read list fails rpcrdma_read_chunks");
	for (uint32_t i = 0; i < h->nwrites; i++)
		if (rpcrdma_write_chunk_len(&h->writes[i], &len) != 0 || len > UINT32_MAX)
			broken("accepted Write chunk fails rpcrdma_write_chunk_len");
}

/* The private data decoder: defaults or a valid, re-encodable result. */
static void check_private(const uint8_t *data, size_t size)
{
	struct rpcrdma_cm_private pd;
	uint8_t out[RPCRDMA_CM_PRIVATE_LEN];
	struct wcur w;
	struct cur c;
	int r;

	cur_init(&c, data, size);
	r = rpcrdma_cm_private_decode(&c, &pd);
	if (r == -ENOMSG) {
		if (c.pos != 0 || pd.send_size != RPCRDMA_CM_DEFAULT_INLINE)
			broken("foreign private data moved the cursor or left no defaults");
		return;
	}
	wcur_init(&w, out, sizeof(out));
	if (r != 0 || c.pos != RPCRDMA_CM_PRIVATE_LEN || rpcrdma_cm_private_encode(&w, &pd) != 0)
		broken("accepted private data does not re-encode");
	if (memcmp(out, data, 5) != 0 || out[5] != (data[5] & RPCRDMA_CM_F_REMOTE_INV) ||
	    out[6] != data[6] || out[7] != data[7])
		broken("private data re-encodes differently");
}

/* One input: the header decoder and the private data decoder. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rpcrdma_hdr h;
	struct cur c;
	uint32_t xid;
	int r;

	log_set_level(LOG_LVL_ERR); /* the decoder's debug lines would drown the run */
	cur_init(&c, data, size);
	r = rpcrdma_hdr_decode(&c, &h);
	if (r == 0)
		check_accepted(data, c.pos, &h);
	else if (c.pos != 0)
		broken("a refused header moved the cursor");
	else if (r != -EBADMSG && r != -E2BIG && r != -EPROTONOSUPPORT && r != -EINVAL)
		broken("undocumented error");
	else if ((rpcrdma_hdr_peek_xid(&c, &xid) == 0) != (size >= 4))
		broken("peek_xid disagrees with the length");
	check_private(data, size);
	return 0;
}
