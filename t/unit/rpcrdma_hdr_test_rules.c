/*
 * rpcrdma_hdr_test_rules.c: every cap and overflow rule of the header
 * codec (list and segment counts, the largest header, lengths that overflow,
 * segments that wrap, Read positions, bad words, what the encoder refuses),
 * and the codec's helper functions (chunk lengths, Read chunk groups,
 * rpcrdma_hdr_equal, procedure names).
 * Part of t/unit/rpcrdma_hdr_test (see rpcrdma_hdr_test.c).
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

/* Write n words into buf; return the byte length. */
static size_t words(uint8_t *buf, size_t cap, const uint32_t *w, size_t n)
{
	struct wcur wc;

	wcur_init(&wc, buf, cap);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(wcur_put_u32(&wc, w[i]), 0);
	return wc.pos;
}

/* Put the four fixed words of a version-1 header. */
static void put_fixed(struct wcur *w, uint32_t xid, uint32_t proc)
{
	assert_int_equal(wcur_put_u32(w, xid), 0);
	assert_int_equal(wcur_put_u32(w, RPCRDMA_VERSION), 0);
	assert_int_equal(wcur_put_u32(w, 32), 0);
	assert_int_equal(wcur_put_u32(w, proc), 0);
}

/* Put one segment. */
static void put_seg(struct wcur *w, uint32_t handle, uint32_t length, uint64_t offset)
{
	assert_int_equal(wcur_put_u32(w, handle), 0);
	assert_int_equal(wcur_put_u32(w, length), 0);
	assert_int_equal(wcur_put_u64(w, offset), 0);
}

/* ------------------------------------------------------- caps and rules */

static uint8_t big[RPCRDMA_HDR_MAX_LEN + 4096];

/* An RDMA_MSG whose Read list has n entries, all at position 0. */
static size_t build_reads(uint32_t n)
{
	struct wcur w;

	wcur_init(&w, big, sizeof(big));
	put_fixed(&w, 1, RPCRDMA_MSG);
	for (uint32_t i = 0; i < n; i++) {
		assert_int_equal(wcur_put_u32(&w, 1), 0); /* entry follows */
		assert_int_equal(wcur_put_u32(&w, 0), 0); /* position */
		put_seg(&w, i, 1, i);
	}
	assert_int_equal(wcur_put_u32(&w, 0), 0); /* end of Read list */
	assert_int_equal(wcur_put_u32(&w, 0), 0); /* empty Write list */
	assert_int_equal(wcur_put_u32(&w, 0), 0); /* no Reply chunk */
	return w.pos;
}

/* An RDMA_MSG whose Write list has n one-segment chunks. */
static size_t build_writes(uint32_t n)
{
	struct wcur w;

	wcur_init(&w, big, sizeof(big));
	put_fixed(&w, 2, RPCRDMA_MSG);
	assert_int_equal(wcur_put_u32(&w, 0), 0); /* empty Read list */
	for (uint32_t i = 0; i < n; i++) {
		assert_int_equal(wcur_put_u32(&w, 1), 0); /* chunk follows */
		assert_int_equal(wcur_put_u32(&w, 1), 0); /* 1 segment */
		put_seg(&w, i, 4096, 4096 * (uint64_t)i);
	}
	assert_int_equal(wcur_put_u32(&w, 0), 0); /* end of Write list */
	assert_int_equal(wcur_put_u32(&w, 0), 0); /* no Reply chunk */
	return w.pos;
}

/* An RDMA_MSG with one chunk (in the Write list, or as the Reply chunk) whose
 * count word says count and which is followed by nsegs real segments. */
static size_t build_chunk(bool reply, uint32_t count, uint32_t nsegs)
{
	struct wcur w;

	wcur_init(&w, big, sizeof(big));
	put_fixed(&w, 3, RPCRDMA_MSG);
	assert_int_equal(wcur_put_u32(&w, 0), 0); /* empty Read list */
	if (reply)
		assert_int_equal(wcur_put_u32(&w, 0), 0); /* empty Write list */
	assert_int_equal(wcur_put_u32(&w, 1), 0);	  /* chunk follows / reply present */
	assert_int_equal(wcur_put_u32(&w, count), 0);	  /* segment count */
	for (uint32_t i = 0; i < nsegs; i++)
		put_seg(&w, i, 512, 512 * (uint64_t)i);
	if (!reply) {
		assert_int_equal(wcur_put_u32(&w, 0), 0); /* end of Write list */
		assert_int_equal(wcur_put_u32(&w, 0), 0); /* no Reply chunk */
	}
	return w.pos;
}

/* Read list: 64 entries decode, the 65th is refused. */
void cap_read_list(void **state)
{
	size_t len = build_reads(RPCRDMA_MAX_READ_SEGS);

	assert_int_equal(decode_bytes(big, len, &hdr_a, NULL), 0);
	assert_int_equal(hdr_a.nreads, RPCRDMA_MAX_READ_SEGS);
	len = build_reads(RPCRDMA_MAX_READ_SEGS + 1);
	assert_int_equal(decode_bytes(big, len, &hdr_a, NULL), -E2BIG);
}

/* Write list: 8 chunks decode, the 9th is refused. */
void cap_write_list(void **state)
{
	size_t len = build_writes(RPCRDMA_MAX_WRITE_CHUNKS);

	assert_int_equal(decode_bytes(big, len, &hdr_a, NULL), 0);
	assert_int_equal(hdr_a.nwrites, RPCRDMA_MAX_WRITE_CHUNKS);
	len = build_writes(RPCRDMA_MAX_WRITE_CHUNKS + 1);
	assert_int_equal(decode_bytes(big, len, &hdr_a, NULL), -E2BIG);
}

/* A segment count over the cap is refused before any segment is read: with
 * no segments behind it the answer is still -E2BIG, not -EBADMSG. */
void cap_chunk_segments(void **state)
{
	for (int reply = 0; reply < 2; reply++) {
		size_t len = build_chunk(reply, RPCRDMA_MAX_CHUNK_SEGS, RPCRDMA_MAX_CHUNK_SEGS);

		assert_int_equal(decode_bytes(big, len, &hdr_a, NULL), 0);
		assert_int_equal(reply ? hdr_a.reply.nsegs : hdr_a.writes[0].nsegs,
				 RPCRDMA_MAX_CHUNK_SEGS);
		len = build_chunk(reply, RPCRDMA_MAX_CHUNK_SEGS + 1, 0);
		assert_int_equal(decode_bytes(big, len, &hdr_a, NULL), -E2BIG);
		len = build_chunk(reply, RPCRDMA_MAX_CHUNK_SEGS + 1, RPCRDMA_MAX_CHUNK_SEGS + 1);
		assert_int_equal(decode_bytes(big, len, &hdr_a, NULL), -E2BIG);
		len = build_chunk(reply, UINT32_MAX, 0);
		assert_int_equal(decode_bytes(big, len, &hdr_a, NULL), -E2BIG);
		len = build_chunk(reply, 0x10000000, 1); /* count * 16 wraps in 32 bits */
		assert_int_equal(decode_bytes(big, len, &hdr_a, NULL), -E2BIG);
		/* within the cap, but the segments are not all there */
		len = build_chunk(reply, RPCRDMA_MAX_CHUNK_SEGS, RPCRDMA_MAX_CHUNK_SEGS - 1);
		assert_int_equal(decode_bytes(big, len, &hdr_a, NULL), -EBADMSG);
	}
}

/* The biggest header there is: RDMA_MSGP with every list at its cap. */
void fill_max_header(struct rpcrdma_hdr *h)
{
	rpcrdma_hdr_init(h, 0x4d4158, 255, RPCRDMA_MSGP);
	h->align = 4;
	h->thresh = 1024;
	h->nreads = RPCRDMA_MAX_READ_SEGS;
	for (uint32_t i = 0; i < h->nreads; i++)
		h->reads[i] = (struct rpcrdma_read_seg){4 * (i / 2), {i, 1024, 1024 * (uint64_t)i}};
	h->nwrites = RPCRDMA_MAX_WRITE_CHUNKS;
	for (uint32_t c = 0; c < h->nwrites; c++) {
		h->writes[c].nsegs = RPCRDMA_MAX_CHUNK_SEGS;
		for (uint32_t i = 0; i < RPCRDMA_MAX_CHUNK_SEGS; i++)
			h->writes[c].segs[i] = (struct rpcrdma_seg){c, 0x03ffffff, i};
	}
	h->has_reply = true;
	h->reply.nsegs = RPCRDMA_MAX_CHUNK_SEGS;
	for (uint32_t i = 0; i < RPCRDMA_MAX_CHUNK_SEGS; i++)
		h->reply.segs[i] = (struct rpcrdma_seg){i, 4096, UINT64_MAX - 4096};
}

/* RPCRDMA_HDR_MAX_LEN is the size of the full header, and it round-trips. */
void max_header(void **state)
{
	struct wcur w;
	size_t used;

	fill_max_header(&hdr_a);
	assert_int_equal(rpcrdma_hdr_encoded_len(&hdr_a), RPCRDMA_HDR_MAX_LEN);
	wcur_init(&w, big, sizeof(big));
	assert_int_equal(rpcrdma_hdr_encode(&w, &hdr_a), 0);
	assert_int_equal(w.pos, RPCRDMA_HDR_MAX_LEN);
	assert_int_equal(decode_bytes(big, w.pos, &hdr_b, &used), 0);
	assert_int_equal(used, RPCRDMA_HDR_MAX_LEN);
	assert_hdr_fields(&hdr_b, &hdr_a);
}

/* Chunk totals over UINT32_MAX are refused, exactly UINT32_MAX is fine. */
void length_overflow(void **state)
{
	uint8_t buf[256];
	const uint32_t write2[] = {
		1, 1,	       32, RPCRDMA_MSG, 0, /* fixed; empty Read list */
		1, 2,				   /* a Write chunk of 2 segments */
		1, 0xffffffff, 0,  0,		   /* handle, length 2^32-1, offset */
		2, 1,	       0,  0x1000,	   /* handle, length 1 -> total 2^32 */
		0, 0,				   /* end of Write list, no Reply */
	};
	const uint32_t read2[] = {
		1, 1, 32, RPCRDMA_MSG,	     /* fixed */
		1, 8, 1,  0x80000000,  0, 0, /* position 8, length 2^31 */
		1, 8, 2,  0x80000000,  0, 0, /* position 8 again: chunk total 2^32 */
		0, 0, 0,		     /* end of lists */
	};
	const uint32_t reply2[] = {
		1, 1,	       32, RPCRDMA_MSG, 0, 0, /* fixed; empty Read and Write lists */
		1, 2,				      /* Reply chunk of 2 segments */
		1, 0xffffffff, 0,  0,		2, 0xffffffff, 0, 0,
	};
	uint32_t w[32];
	size_t len;

	len = words(buf, sizeof(buf), write2, sizeof(write2) / 4);
	assert_int_equal(decode_bytes(buf, len, &hdr_a, NULL), -E2BIG);
	len = words(buf, sizeof(buf), read2, sizeof(read2) / 4);
	assert_int_equal(decode_bytes(buf, len, &hdr_a, NULL), -E2BIG);
	len = words(buf, sizeof(buf), reply2, sizeof(reply2) / 4);
	assert_int_equal(decode_bytes(buf, len, &hdr_a, NULL), -E2BIG);
	/* the same lengths at different positions are two chunks: fine */
	memcpy(w, read2, sizeof(read2));
	w[11] = 12;
	len = words(buf, sizeof(buf), w, sizeof(read2) / 4);
	assert_int_equal(decode_bytes(buf, len, &hdr_a, NULL), 0);
	/* a total of exactly 2^32 - 1 is fine */
	memcpy(w, write2, sizeof(write2));
	w[12] = 0;
	len = words(buf, sizeof(buf), w, sizeof(write2) / 4);
	assert_int_equal(decode_bytes(buf, len, &hdr_a, NULL), 0);
}

/* A segment whose offset + length does not fit in 64 bits is malformed. */
void segment_wraps(void **state)
{
	uint8_t buf[128];
	uint32_t seg[] = {
		1, 1,	   32,	       RPCRDMA_MSG, 0, /* fixed; empty Read list */
		1, 1,				       /* a Write chunk of 1 segment */
		1, 0x1000, 0xffffffff, 0xfffff001,     /* length 4096, offset 2^64 - 4095 */
		0, 0,				       /* end of Write list, no Reply */
	};
	size_t len = words(buf, sizeof(buf), seg, sizeof(seg) / 4);

	assert_int_equal(decode_bytes(buf, len, &hdr_a, NULL), -EBADMSG);
	seg[10] = 0xfffff000; /* offset + length = 2^64: still too far */
	len = words(buf, sizeof(buf), seg, sizeof(seg) / 4);
	assert_int_equal(decode_bytes(buf, len, &hdr_a, NULL), -EBADMSG);
	seg[10] = 0xffffefff; /* offset + length = 2^64 - 1: fits */
	len = words(buf, sizeof(buf), seg, sizeof(seg) / 4);
	assert_int_equal(decode_bytes(buf, len, &hdr_a, NULL), 0);
}

/* Read positions: multiples of 4, never decreasing. */
void read_positions(void **state)
{
	uint8_t buf[128];
	uint32_t rl[] = {
		1, 1,  32, RPCRDMA_MSG,	      /* fixed */
		1, 8,  1,  16,		0, 0, /* position 8 */
		1, 12, 2,  16,		0, 0, /* position 12 */
		0, 0,  0,		      /* end of lists */
	};
	size_t len = words(buf, sizeof(buf), rl, sizeof(rl) / 4);

	assert_int_equal(decode_bytes(buf, len, &hdr_a, NULL), 0);
	rl[11] = 4; /* decreasing */
	len = words(buf, sizeof(buf), rl, sizeof(rl) / 4);
	assert_int_equal(decode_bytes(buf, len, &hdr_a, NULL), -EBADMSG);
	rl[11] = 14; /* not a multiple of 4 */
	len = words(buf, sizeof(buf), rl, sizeof(rl) / 4);
	assert_int_equal(decode_bytes(buf, len, &hdr_a, NULL), -EBADMSG);
	rl[11] = 8; /* equal: the same chunk */
	len = words(buf, sizeof(buf), rl, sizeof(rl) / 4);
	assert_int_equal(decode_bytes(buf, len, &hdr_a, NULL), 0);
}

/* The encoder refuses what the decoder would refuse. */
void encode_invalid(void **state)
{
	uint8_t out[64];
	struct wcur w;

	wcur_init(&w, out, sizeof(out));
	want_msg_reads(&hdr_a);
	hdr_a.vers = 2;
	assert_int_equal(rpcrdma_hdr_encode(&w, &hdr_a), -EINVAL);
	assert_int_equal(rpcrdma_hdr_encoded_len(&hdr_a), 0);
	want_msg_reads(&hdr_a);
	hdr_a.proc = RPCRDMA_NPROCS;
	assert_int_equal(rpcrdma_hdr_encode(&w, &hdr_a), -EINVAL);
	want_msg_reads(&hdr_a);
	hdr_a.reads[2].position = 144; /* decreasing */
	assert_int_equal(rpcrdma_hdr_encode(&w, &hdr_a), -EINVAL);
	want_msg_reads(&hdr_a);
	hdr_a.nreads = RPCRDMA_MAX_READ_SEGS + 1;
	assert_int_equal(rpcrdma_hdr_encode(&w, &hdr_a), -EINVAL);
	want_msg_writes(&hdr_a);
	hdr_a.nwrites = RPCRDMA_MAX_WRITE_CHUNKS + 1;
	assert_int_equal(rpcrdma_hdr_encode(&w, &hdr_a), -EINVAL);
	want_msg_writes(&hdr_a);
	hdr_a.reply.nsegs = RPCRDMA_MAX_CHUNK_SEGS + 1;
	assert_int_equal(rpcrdma_hdr_encode(&w, &hdr_a), -EINVAL);
	want_msg_writes(&hdr_a);
	hdr_a.writes[1].segs[0].length = 0xffffffff; /* chunk total over 2^32 - 1 */
	assert_int_equal(rpcrdma_hdr_encode(&w, &hdr_a), -EINVAL);
	want_msg_writes(&hdr_a);
	hdr_a.writes[0].segs[0].offset = UINT64_MAX; /* wraps */
	assert_int_equal(rpcrdma_hdr_encode(&w, &hdr_a), -EINVAL);
	want_err_chunk(&hdr_a);
	hdr_a.err = 3;
	assert_int_equal(rpcrdma_hdr_encode(&w, &hdr_a), -EINVAL);
	assert_int_equal(w.pos, 0);
}

/* ------------------------------------------------ the codec's helper functions */

/* Write chunk totals, and the cap on them. */
void write_chunk_len(void **state)
{
	uint64_t len = 0;

	want_msg_writes(&hdr_a);
	assert_int_equal(rpcrdma_write_chunk_len(&hdr_a.writes[0], &len), 0);
	assert_true(len == 65536);
	assert_int_equal(rpcrdma_write_chunk_len(&hdr_a.writes[1], &len), 0);
	assert_true(len == 32768 + 4096);
	assert_int_equal(rpcrdma_write_chunk_len(&hdr_a.reply, &len), 0);
	assert_true(len == 1024);
	hdr_a.writes[1].segs[0].length = 0xffffffff;
	assert_int_equal(rpcrdma_write_chunk_len(&hdr_a.writes[1], &len), -E2BIG);
	hdr_a.writes[1].nsegs = RPCRDMA_MAX_CHUNK_SEGS + 1;
	assert_int_equal(rpcrdma_write_chunk_len(&hdr_a.writes[1], &len), -E2BIG);
	hdr_a.writes[0].nsegs = 0;
	assert_int_equal(rpcrdma_write_chunk_len(&hdr_a.writes[0], &len), 0);
	assert_true(len == 0);
}

/* Read list entries grouped by position into Read chunks. */
void read_chunk_groups(void **state)
{
	struct rpcrdma_read_chunk rc[RPCRDMA_MAX_READ_SEGS];
	uint32_t n = 99;

	want_msg_reads(&hdr_a);
	assert_int_equal(rpcrdma_read_chunks(&hdr_a, rc, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(rc[0].position, 148);
	assert_int_equal(rc[0].first, 0);
	assert_int_equal(rc[0].nsegs, 2);
	assert_true(rc[0].length == 4096 + 8192);
	assert_int_equal(rc[1].position, 256);
	assert_int_equal(rc[1].first, 2);
	assert_int_equal(rc[1].nsegs, 1);
	assert_true(rc[1].length == 512);
	want_nomsg(&hdr_a);
	assert_int_equal(rpcrdma_read_chunks(&hdr_a, rc, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(rc[0].position, 0);
	assert_int_equal(rc[0].nsegs, 2);
	assert_true(rc[0].length == 1024);
	want_msg_plain(&hdr_a);
	assert_int_equal(rpcrdma_read_chunks(&hdr_a, rc, &n), 0);
	assert_int_equal(n, 0);
	want_msg_reads(&hdr_a);
	hdr_a.reads[1].position = 150;
	assert_int_equal(rpcrdma_read_chunks(&hdr_a, rc, &n), -EBADMSG);
	hdr_a.reads[1].position = 100;
	assert_int_equal(rpcrdma_read_chunks(&hdr_a, rc, &n), -EBADMSG);
	fill_max_header(&hdr_a);
	assert_int_equal(rpcrdma_read_chunks(&hdr_a, rc, &n), 0);
	assert_int_equal(n, RPCRDMA_MAX_READ_SEGS / 2);
	assert_int_equal(rc[31].first, 62);
	assert_int_equal(rc[31].position, 124);
}

/* Build want into hdr_a, copy it to hdr_b, change hdr_b with stmt, and
 * expect rpcrdma_hdr_equal to say so (or not) both ways round. */
#define EXPECT_EQUAL(same, want, stmt)                                                             \
	do {                                                                                       \
		want(&hdr_a);                                                                      \
		hdr_b = hdr_a;                                                                     \
		stmt;                                                                              \
		assert_int_equal(rpcrdma_hdr_equal(&hdr_a, &hdr_b), same);                         \
		assert_int_equal(rpcrdma_hdr_equal(&hdr_b, &hdr_a), same);                         \
	} while (0)

/* rpcrdma_hdr_equal sees a change in any field the wire carries, and ignores
 * the fields of other procs and array slots past the counts. */
void equal_sees_changes(void **state)
{
	EXPECT_EQUAL(true, want_msg_writes, (void)0);
	EXPECT_EQUAL(false, want_msg_plain, hdr_b.xid++);
	EXPECT_EQUAL(false, want_msg_plain, hdr_b.vers++);
	EXPECT_EQUAL(false, want_msg_plain, hdr_b.credit++);
	EXPECT_EQUAL(false, want_msg_plain, hdr_b.proc = RPCRDMA_NOMSG);
	EXPECT_EQUAL(false, want_msgp, hdr_b.align++);
	EXPECT_EQUAL(false, want_msgp, hdr_b.thresh++);
	EXPECT_EQUAL(false, want_msg_reads, hdr_b.nreads--);
	EXPECT_EQUAL(false, want_msg_reads, hdr_b.reads[1].position += 4);
	EXPECT_EQUAL(false, want_msg_reads, hdr_b.reads[2].seg.handle++);
	EXPECT_EQUAL(false, want_msg_reads, hdr_b.reads[2].seg.length++);
	EXPECT_EQUAL(false, want_msg_reads, hdr_b.reads[2].seg.offset++);
	EXPECT_EQUAL(false, want_msg_writes, hdr_b.nwrites--);
	EXPECT_EQUAL(false, want_msg_writes, hdr_b.writes[0].nsegs = 0);
	EXPECT_EQUAL(false, want_msg_writes, hdr_b.writes[1].segs[1].offset++);
	EXPECT_EQUAL(false, want_msg_writes, hdr_b.has_reply = false);
	EXPECT_EQUAL(false, want_msg_writes, hdr_b.reply.segs[0].length++);
	EXPECT_EQUAL(false, want_err_vers, hdr_b.err = RPCRDMA_ERR_CHUNK);
	EXPECT_EQUAL(false, want_err_vers, hdr_b.vers_low++);
	EXPECT_EQUAL(false, want_err_vers, hdr_b.vers_high++);
	/* not on the wire for this proc, or past a count: ignored */
	EXPECT_EQUAL(true, want_err_chunk, hdr_b.vers_low++);
	EXPECT_EQUAL(true, want_done, hdr_b.nreads = 5);
	EXPECT_EQUAL(true, want_msg_plain, hdr_b.align = 9);
	EXPECT_EQUAL(true, want_msg_reads, hdr_b.reads[3].position = 4);
	EXPECT_EQUAL(true, want_msg_writes, hdr_b.writes[0].segs[1].length = 1);
	EXPECT_EQUAL(true, want_msg_plain, hdr_b.reply.segs[0].length = 1);
}

/* The one key a reply may invalidate: every segment of the three lists names
 * it, and there is at least one. */
void one_handle(void **state)
{
	struct rpcrdma_hdr h;
	uint32_t k = 0;

	(void)state;
	memset(&h, 0, sizeof(h));
	assert_false(rpcrdma_hdr_one_handle(&h, &k)); /* no chunks */
	h.nwrites = 1;
	h.writes[0].nsegs = 2;
	h.writes[0].segs[0].handle = h.writes[0].segs[1].handle = 7;
	assert_true(rpcrdma_hdr_one_handle(&h, &k));
	assert_int_equal(k, 7);
	h.nreads = 1;
	h.reads[0].seg.handle = 7;
	assert_true(rpcrdma_hdr_one_handle(&h, &k));
	h.has_reply = true;
	h.reply.nsegs = 1;
	h.reply.segs[0].handle = 8; /* a Reply chunk of another key */
	assert_false(rpcrdma_hdr_one_handle(&h, &k));
	h.reply.segs[0].handle = 7;
	assert_true(rpcrdma_hdr_one_handle(&h, &k));
	h.writes[0].segs[1].handle = 9; /* two keys in one Write chunk */
	assert_false(rpcrdma_hdr_one_handle(&h, &k));
	memset(&h, 0, sizeof(h));
	h.has_reply = true;
	h.reply.nsegs = 1;
	h.reply.segs[0].handle = 3; /* the Reply chunk alone */
	assert_true(rpcrdma_hdr_one_handle(&h, &k));
	assert_int_equal(k, 3);
	h.reply.segs[0].handle = 0; /* names no key */
	assert_false(rpcrdma_hdr_one_handle(&h, &k));
}

/* Names for logs. */
void proc_names(void **state)
{
	assert_string_equal(rpcrdma_proc_name(RPCRDMA_MSG), "RDMA_MSG");
	assert_string_equal(rpcrdma_proc_name(RPCRDMA_ERROR), "RDMA_ERROR");
	assert_string_equal(rpcrdma_proc_name(5), "?");
}
