/*
 * rpcrdma_hdr_test.h: what the parts of t/unit/rpcrdma_hdr_test share: the
 * vectors, the scratch headers, the checks (rpcrdma_hdr_test.c), the largest
 * header and random headers, and the cases, one file per topic
 * (rpcrdma_hdr_test_*.c).
 */
#ifndef NFSRDMA_T_RPCRDMA_HDR_TEST_H
#define NFSRDMA_T_RPCRDMA_HDR_TEST_H

#include <stddef.h>
#include <stdint.h>

#include "common/rpcrdma/rpcrdma_hdr.h"

/* A header written by hand as bytes, and the struct it decodes to. */
struct vector {
	const char *name;
	const uint8_t *bytes;
	size_t len;
	void (*want)(struct rpcrdma_hdr *h);
};

/* rpcrdma_hdr_test_vectors.c: the vectors, and the RFC 8797 private data. */
extern const struct vector vectors[];
extern const size_t nvectors;
extern const uint8_t v_private[RPCRDMA_CM_PRIVATE_LEN];
/* The decoded forms of the vectors, built field by field. */
void want_msg_plain(struct rpcrdma_hdr *h);
void want_msg_reads(struct rpcrdma_hdr *h);
void want_msg_writes(struct rpcrdma_hdr *h);
void want_nomsg(struct rpcrdma_hdr *h);
void want_msgp(struct rpcrdma_hdr *h);
void want_done(struct rpcrdma_hdr *h);
void want_err_vers(struct rpcrdma_hdr *h);
void want_err_chunk(struct rpcrdma_hdr *h);

/* rpcrdma_hdr_test.c: scratch headers (each is about 11 KB, too big to want
 * several on a stack) and the checks. */
extern struct rpcrdma_hdr hdr_a, hdr_b;
/* Every field of two headers, one assertion each. */
void assert_hdr_fields(const struct rpcrdma_hdr *got, const struct rpcrdma_hdr *want);
/* Decode len bytes; the result and, through *used, what was consumed. A
 * failure must leave the cursor untouched. */
int decode_bytes(const uint8_t *buf, size_t len, struct rpcrdma_hdr *h, size_t *used);

/* rpcrdma_hdr_test_rules.c: a header with every list and chunk at its cap. */
void fill_max_header(struct rpcrdma_hdr *h);
/* rpcrdma_hdr_test_random.c: the generator's state, and a random valid header. */
extern uint64_t rng_state;
void rnd_hdr(struct rpcrdma_hdr *h);

/* The cases, in rpcrdma_hdr_test_vectors.c ... */
void vectors_decode(void **state);
void vectors_encode(void **state);
void convenience_encoders(void **state);
void trailing_rpc_message(void **state);
void truncation_every_byte(void **state);
void encode_short_buffer(void **state);
void bad_words(void **state);
void private_vector(void **state);
void private_foreign_and_padded(void **state);
void private_encode_invalid(void **state);
/* ... rpcrdma_hdr_test_rules.c ... */
void cap_read_list(void **state);
void cap_write_list(void **state);
void cap_chunk_segments(void **state);
void max_header(void **state);
void length_overflow(void **state);
void segment_wraps(void **state);
void read_positions(void **state);
void encode_invalid(void **state);
void write_chunk_len(void **state);
void read_chunk_groups(void **state);
void equal_sees_changes(void **state);
void proc_names(void **state);
void one_handle(void **state);
/* ... and rpcrdma_hdr_test_random.c. */
void random_round_trips(void **state);
void mutation(void **state);

#endif
