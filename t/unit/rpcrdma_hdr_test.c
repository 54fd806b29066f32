/*
 * rpcrdma_hdr_test: the RPC/RDMA header codec against byte vectors written by
 * hand from the XDR of RFC 8166 section 4 (and RFC 5666 for MSGP/DONE, RFC
 * 8797 section 4 for the private data); truncation at every byte; every cap
 * and overflow rule; random round trips; seeded random mutation.
 *
 * Environment: NFSRDMA_TEST_SEED (default fixed) seeds the random tests,
 * NFSRDMA_MUTATIONS (default 1000000, about 2 s with ASan) sets how many mutated cases to run.
 * `rpcrdma_hdr_test --write-corpus DIR` writes the vectors (and a few random
 * headers) as the fuzz seed corpus instead of testing.
 *
 * The cases are in rpcrdma_hdr_test_*.c by topic: the vectors and the private
 * data, the caps and rules, random headers and mutation. This file has the
 * checks they share (rpcrdma_hdr_test.h), the corpus writer and the case
 * table.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "common/rpcrdma/rpcrdma_hdr.h"
#include "rpcrdma_hdr_test.h"

/* Scratch headers: each is about 11 KB, too big to want several on a stack. */
struct rpcrdma_hdr hdr_a, hdr_b;

/* --------------------------------------------------------------- helpers */

/* Every segment field of two chunks, one assertion each. */
static void assert_chunk_fields(const struct rpcrdma_write_chunk *got,
				const struct rpcrdma_write_chunk *want)
{
	assert_int_equal(got->nsegs, want->nsegs);
	for (uint32_t i = 0; i < want->nsegs; i++) {
		assert_int_equal(got->segs[i].handle, want->segs[i].handle);
		assert_int_equal(got->segs[i].length, want->segs[i].length);
		assert_true(got->segs[i].offset == want->segs[i].offset);
	}
}

/* Every field of two headers, one assertion each (clearer failures than
 * rpcrdma_hdr_equal, and independent of it). */
void assert_hdr_fields(const struct rpcrdma_hdr *got, const struct rpcrdma_hdr *want)
{
	assert_int_equal(got->xid, want->xid);
	assert_int_equal(got->vers, want->vers);
	assert_int_equal(got->credit, want->credit);
	assert_int_equal(got->proc, want->proc);
	assert_int_equal(got->align, want->align);
	assert_int_equal(got->thresh, want->thresh);
	assert_int_equal(got->nreads, want->nreads);
	for (uint32_t i = 0; i < want->nreads; i++) {
		assert_int_equal(got->reads[i].position, want->reads[i].position);
		assert_int_equal(got->reads[i].seg.handle, want->reads[i].seg.handle);
		assert_int_equal(got->reads[i].seg.length, want->reads[i].seg.length);
		assert_true(got->reads[i].seg.offset == want->reads[i].seg.offset);
	}
	assert_int_equal(got->nwrites, want->nwrites);
	for (uint32_t i = 0; i < want->nwrites; i++)
		assert_chunk_fields(&got->writes[i], &want->writes[i]);
	assert_int_equal(got->has_reply, want->has_reply);
	assert_chunk_fields(&got->reply, &want->reply);
	assert_int_equal(got->err, want->err);
	assert_int_equal(got->vers_low, want->vers_low);
	assert_int_equal(got->vers_high, want->vers_high);
	assert_true(rpcrdma_hdr_equal(got, want));
}

/* Decode len bytes; return the result and, through *used, what was consumed.
 * A failure must leave the cursor untouched. */
int decode_bytes(const uint8_t *buf, size_t len, struct rpcrdma_hdr *h, size_t *used)
{
	struct cur c;
	int r;

	cur_init(&c, buf, len);
	r = rpcrdma_hdr_decode(&c, h);
	assert_ptr_equal(c.buf, buf);
	assert_int_equal(c.len, len);
	if (r != 0)
		assert_int_equal(c.pos, 0);
	if (used)
		*used = c.pos;
	return r;
}

/* ----------------------------------------------------------------- corpus */

/* Write one seed file; report failure. */
static int write_seed(const char *dir, const char *name, const uint8_t *buf, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
		fprintf(stderr, "rpcrdma_hdr_test: cannot write %s\n", path);
		return 1;
	}
	return 0;
}

/* The vectors, the private data, the largest header and a few random headers
 * as the fuzz seed corpus (t/fuzz/corpus/rpcrdma_hdr). */
static int write_corpus(const char *dir)
{
	static uint8_t out[RPCRDMA_HDR_MAX_LEN];
	char name[64];
	struct wcur w;
	int bad = 0;

	for (size_t i = 0; i < nvectors; i++)
		bad |= write_seed(dir, vectors[i].name + 2, vectors[i].bytes, vectors[i].len);
	bad |= write_seed(dir, "private", v_private, sizeof(v_private));
	fill_max_header(&hdr_a);
	wcur_init(&w, out, sizeof(out));
	if (rpcrdma_hdr_encode(&w, &hdr_a) == 0)
		bad |= write_seed(dir, "max", out, w.pos);
	rng_state = 1;
	for (int i = 0; i < 8; i++) {
		rnd_hdr(&hdr_a);
		wcur_init(&w, out, sizeof(out));
		if (rpcrdma_hdr_encode(&w, &hdr_a) != 0)
			return 1;
		snprintf(name, sizeof(name), "random-%d", i);
		bad |= write_seed(dir, name, out, w.pos);
	}
	return bad;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(vectors_decode),
		cmocka_unit_test(vectors_encode),
		cmocka_unit_test(convenience_encoders),
		cmocka_unit_test(trailing_rpc_message),
		cmocka_unit_test(truncation_every_byte),
		cmocka_unit_test(encode_short_buffer),
		cmocka_unit_test(cap_read_list),
		cmocka_unit_test(cap_write_list),
		cmocka_unit_test(cap_chunk_segments),
		cmocka_unit_test(max_header),
		cmocka_unit_test(length_overflow),
		cmocka_unit_test(segment_wraps),
		cmocka_unit_test(read_positions),
		cmocka_unit_test(bad_words),
		cmocka_unit_test(encode_invalid),
		cmocka_unit_test(write_chunk_len),
		cmocka_unit_test(read_chunk_groups),
		cmocka_unit_test(equal_sees_changes),
		cmocka_unit_test(proc_names),
		cmocka_unit_test(one_handle),
		cmocka_unit_test(private_vector),
		cmocka_unit_test(private_foreign_and_padded),
		cmocka_unit_test(private_encode_invalid),
		cmocka_unit_test(random_round_trips),
		cmocka_unit_test(mutation),
	};

	if (argc == 3 && strcmp(argv[1], "--write-corpus") == 0)
		return write_corpus(argv[2]);
	if (argc != 1) {
		fprintf(stderr, "usage: %s [--write-corpus DIR]\n", argv[0]);
		return 2;
	}
	return cmocka_run_group_tests_name("rpcrdma_hdr", tests, NULL, NULL);
}
