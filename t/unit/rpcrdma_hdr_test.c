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

/* One XDR word, big-endian, as four bytes; a hyper as eight. */
#define W(x)                                                                                       \
	(uint8_t)((uint32_t)(x) >> 24), (uint8_t)((uint32_t)(x) >> 16),                            \
		(uint8_t)((uint32_t)(x) >> 8), (uint8_t)(uint32_t)(x)
#define H(x) W((uint64_t)(x) >> 32), W((uint64_t)(x)&0xffffffffu)

/* ---------------------------------------------------------------- vectors */

/* RDMA_MSG, everything inline: no chunks at all. */
static const uint8_t v_msg_plain[] = {
	W(0x01020304), /* rdma_xid */
	W(1),	       /* rdma_vers = 1 */
	W(32),	       /* rdma_credit */
	W(0),	       /* rdma_proc = RDMA_MSG */
	W(0),	       /* rdma_reads: no entry (discriminator 0) */
	W(0),	       /* rdma_writes: no entry */
	W(0),	       /* rdma_reply: absent */
};

/* RDMA_MSG with a Read list of two Read chunks: position 148 in two segments,
 * position 256 in one (e.g. an NFS WRITE's data, then a second payload). */
static const uint8_t v_msg_reads[] = {
	W(0xa1b2c3d4),		  /* rdma_xid */
	W(1),			  /* rdma_vers */
	W(128),			  /* rdma_credit */
	W(0),			  /* rdma_proc = RDMA_MSG */
	W(1),			  /* rdma_reads: an entry follows */
	W(148),			  /*   position */
	W(0x11111111),		  /*   target.handle */
	W(4096),		  /*   target.length */
	H(0x00007f0000001000ULL), /*   target.offset */
	W(1),			  /* next entry follows */
	W(148),			  /*   position (same chunk) */
	W(0x22222222),		  /*   target.handle */
	W(8192),		  /*   target.length */
	H(0x00007f0000100000ULL), /*   target.offset */
	W(1),			  /* next entry follows */
	W(256),			  /*   position (a second chunk) */
	W(0x33333333),		  /*   target.handle */
	W(512),			  /*   target.length */
	H(0xffffffff00000000ULL), /*   target.offset */
	W(0),			  /* end of rdma_reads */
	W(0),			  /* rdma_writes: no entry */
	W(0),			  /* rdma_reply: absent */
};

/* RDMA_MSG with a Write list of two Write chunks and a Reply chunk. */
static const uint8_t v_msg_writes[] = {
	W(0x00000007), /* rdma_xid */
	W(1),	       /* rdma_vers */
	W(16),	       /* rdma_credit */
	W(0),	       /* rdma_proc = RDMA_MSG */
	W(0),	       /* rdma_reads: no entry */
	W(1),	       /* rdma_writes: a chunk follows */
	W(1),	       /*   target<>: 1 segment */
	W(0xaaaa0001), /*     handle */
	W(65536),      /*     length */
	H(0x1000),     /*     offset */
	W(1),	       /* next chunk follows */
	W(2),	       /*   target<>: 2 segments */
	W(0xaaaa0002), /*     handle */
	W(32768),      /*     length */
	H(0x20000),    /*     offset */
	W(0xaaaa0003), /*     handle */
	W(4096),       /*     length */
	H(0x30000),    /*     offset */
	W(0),	       /* end of rdma_writes */
	W(1),	       /* rdma_reply: present */
	W(1),	       /*   target<>: 1 segment */
	W(0xbbbb0001), /*     handle */
	W(1024),       /*     length */
	H(0x40000),    /*     offset */
};

/* RDMA_NOMSG: the whole call in a Position-Zero Read chunk of two segments,
 * the reply to come in a Reply chunk of two segments. */
static const uint8_t v_nomsg[] = {
	W(0xfeedface), /* rdma_xid */
	W(1),	       /* rdma_vers */
	W(1),	       /* rdma_credit */
	W(1),	       /* rdma_proc = RDMA_NOMSG */
	W(1),	       /* rdma_reads: an entry follows */
	W(0),	       /*   position 0 */
	W(0x00000100), /*   target.handle */
	W(1000),       /*   target.length */
	H(0x10),       /*   target.offset */
	W(1),	       /* next entry follows */
	W(0),	       /*   position 0 (same chunk) */
	W(0x00000101), /*   target.handle */
	W(24),	       /*   target.length */
	H(0x2000),     /*   target.offset */
	W(0),	       /* end of rdma_reads */
	W(0),	       /* rdma_writes: no entry */
	W(1),	       /* rdma_reply: present */
	W(2),	       /*   target<>: 2 segments */
	W(0x00000200), /*     handle */
	W(4096),       /*     length */
	H(0x3000),     /*     offset */
	W(0x00000201), /*     handle */
	W(4096),       /*     length */
	H(0x4000),     /*     offset */
};

/* RDMA_MSGP (RFC 5666): alignment, threshold, then one Write chunk. */
static const uint8_t v_msgp[] = {
	W(0x0000beef),		  /* rdma_xid */
	W(1),			  /* rdma_vers */
	W(64),			  /* rdma_credit */
	W(2),			  /* rdma_proc = RDMA_MSGP */
	W(64),			  /* rdma_align */
	W(4096),		  /* rdma_thresh */
	W(0),			  /* rdma_reads: no entry */
	W(1),			  /* rdma_writes: a chunk follows */
	W(1),			  /*   target<>: 1 segment */
	W(0xcccc0001),		  /*     handle */
	W(0xffffffff),		  /*     length: the largest a chunk may total */
	H(0xffffffff00000000ULL), /*     offset: ends exactly at 2^64 - 1 */
	W(0),			  /* end of rdma_writes */
	W(0),			  /* rdma_reply: absent */
};

/* RDMA_DONE (RFC 5666): no body. */
static const uint8_t v_done[] = {
	W(0x12345678), /* rdma_xid */
	W(1),	       /* rdma_vers */
	W(8),	       /* rdma_credit */
	W(3),	       /* rdma_proc = RDMA_DONE */
};

/* RDMA_ERROR, ERR_VERS: this side speaks versions 1 to 1. */
static const uint8_t v_err_vers[] = {
	W(0xcafef00d), /* rdma_xid (copied from the refused message) */
	W(1),	       /* rdma_vers */
	W(32),	       /* rdma_credit */
	W(4),	       /* rdma_proc = RDMA_ERROR */
	W(1),	       /* rdma_err = ERR_VERS */
	W(1),	       /* rdma_vers_low */
	W(1),	       /* rdma_vers_high */
};

/* RDMA_ERROR, ERR_CHUNK: no more body. */
static const uint8_t v_err_chunk[] = {
	W(0x0badc0de), /* rdma_xid */
	W(1),	       /* rdma_vers */
	W(0),	       /* rdma_credit */
	W(4),	       /* rdma_proc = RDMA_ERROR */
	W(2),	       /* rdma_err = ERR_CHUNK */
};

/* RFC 8797 private data: remote invalidation, 4 KiB send, 32 KiB receive. */
static const uint8_t v_private[] = {
	0xf6, 0xab, 0x0e, 0x18, /* format identifier */
	0x01,			/* version 1 */
	0x01,			/* reserved bits 0, I (remote invalidation) = 1 */
	0x03,			/* inline send size: 4096 / 1024 - 1 */
	0x1f,			/* inline receive size: 32768 / 1024 - 1 */
};

/* The decoded forms of the vectors, built field by field. */
static void want_msg_plain(struct rpcrdma_hdr *h)
{
	rpcrdma_hdr_init(h, 0x01020304, 32, RPCRDMA_MSG);
}

static void want_msg_reads(struct rpcrdma_hdr *h)
{
	rpcrdma_hdr_init(h, 0xa1b2c3d4, 128, RPCRDMA_MSG);
	h->nreads = 3;
	h->reads[0] = (struct rpcrdma_read_seg){148, {0x11111111, 4096, 0x00007f0000001000ULL}};
	h->reads[1] = (struct rpcrdma_read_seg){148, {0x22222222, 8192, 0x00007f0000100000ULL}};
	h->reads[2] = (struct rpcrdma_read_seg){256, {0x33333333, 512, 0xffffffff00000000ULL}};
}

static void want_msg_writes(struct rpcrdma_hdr *h)
{
	rpcrdma_hdr_init(h, 7, 16, RPCRDMA_MSG);
	h->nwrites = 2;
	h->writes[0].nsegs = 1;
	h->writes[0].segs[0] = (struct rpcrdma_seg){0xaaaa0001, 65536, 0x1000};
	h->writes[1].nsegs = 2;
	h->writes[1].segs[0] = (struct rpcrdma_seg){0xaaaa0002, 32768, 0x20000};
	h->writes[1].segs[1] = (struct rpcrdma_seg){0xaaaa0003, 4096, 0x30000};
	h->has_reply = true;
	h->reply.nsegs = 1;
	h->reply.segs[0] = (struct rpcrdma_seg){0xbbbb0001, 1024, 0x40000};
}

static void want_nomsg(struct rpcrdma_hdr *h)
{
	rpcrdma_hdr_init(h, 0xfeedface, 1, RPCRDMA_NOMSG);
	h->nreads = 2;
	h->reads[0] = (struct rpcrdma_read_seg){0, {0x100, 1000, 0x10}};
	h->reads[1] = (struct rpcrdma_read_seg){0, {0x101, 24, 0x2000}};
	h->has_reply = true;
	h->reply.nsegs = 2;
	h->reply.segs[0] = (struct rpcrdma_seg){0x200, 4096, 0x3000};
	h->reply.segs[1] = (struct rpcrdma_seg){0x201, 4096, 0x4000};
}

static void want_msgp(struct rpcrdma_hdr *h)
{
	rpcrdma_hdr_init(h, 0xbeef, 64, RPCRDMA_MSGP);
	h->align = 64;
	h->thresh = 4096;
	h->nwrites = 1;
	h->writes[0].nsegs = 1;
	h->writes[0].segs[0] = (struct rpcrdma_seg){0xcccc0001, 0xffffffff, 0xffffffff00000000ULL};
}

static void want_done(struct rpcrdma_hdr *h)
{
	rpcrdma_hdr_init(h, 0x12345678, 8, RPCRDMA_DONE);
}

static void want_err_vers(struct rpcrdma_hdr *h)
{
	rpcrdma_hdr_init(h, 0xcafef00d, 32, RPCRDMA_ERROR);
	h->err = RPCRDMA_ERR_VERS;
	h->vers_low = 1;
	h->vers_high = 1;
}

static void want_err_chunk(struct rpcrdma_hdr *h)
{
	rpcrdma_hdr_init(h, 0x0badc0de, 0, RPCRDMA_ERROR);
	h->err = RPCRDMA_ERR_CHUNK;
}

static const struct vector {
	const char *name;
	const uint8_t *bytes;
	size_t len;
	void (*want)(struct rpcrdma_hdr *h);
} vectors[] = {
#define VEC(name, f)                                                                               \
	{                                                                                          \
#name, name, sizeof(name), f                                                       \
	}
	VEC(v_msg_plain, want_msg_plain),
	VEC(v_msg_reads, want_msg_reads),
	VEC(v_msg_writes, want_msg_writes),
	VEC(v_nomsg, want_nomsg),
	VEC(v_msgp, want_msgp),
	VEC(v_done, want_done),
	VEC(v_err_vers, want_err_vers),
	VEC(v_err_chunk, want_err_chunk),
#undef VEC
};
#define NVECTORS (sizeof(vectors) / sizeof(vectors[0]))

/* Scratch headers: each is about 11 KB, too big to want several on a stack. */
static struct rpcrdma_hdr hdr_a, hdr_b;

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
static void assert_hdr_fields(const struct rpcrdma_hdr *got, const struct rpcrdma_hdr *want)
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
static int decode_bytes(const uint8_t *buf, size_t len, struct rpcrdma_hdr *h, size_t *used)
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

/* Write n words into buf; return the byte length. */
static size_t words(uint8_t *buf, size_t cap, const uint32_t *w, size_t n)
{
	struct wcur wc;

	wcur_init(&wc, buf, cap);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(wcur_put_u32(&wc, w[i]), 0);
	return wc.pos;
}

/* splitmix64: a small, good, seedable generator. */
static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform-ish in [0, n). */
static uint32_t rnd_below(uint32_t n)
{
	return n ? (uint32_t)(rnd() % n) : 0;
}

/* The seed for this run: NFSRDMA_TEST_SEED or a fixed default, reported. */
static uint64_t test_seed(void)
{
	const char *s = getenv("NFSRDMA_TEST_SEED");

	return s && *s ? strtoull(s, NULL, 0) : 0x6e667372646d6131ULL;
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

/* ------------------------------------------------------- vector tests */

/* Each vector decodes to exactly its hand-built struct and consumes all of it. */
static void vectors_decode(void **state)
{
	for (size_t i = 0; i < NVECTORS; i++) {
		size_t used;

		print_message("# decode %s\n", vectors[i].name);
		assert_int_equal(decode_bytes(vectors[i].bytes, vectors[i].len, &hdr_a, &used), 0);
		assert_int_equal(used, vectors[i].len);
		vectors[i].want(&hdr_b);
		assert_hdr_fields(&hdr_a, &hdr_b);
	}
}

/* Each hand-built struct encodes to exactly its vector, with the right length. */
static void vectors_encode(void **state)
{
	uint8_t out[256];

	for (size_t i = 0; i < NVECTORS; i++) {
		struct wcur w;

		vectors[i].want(&hdr_a);
		assert_int_equal(rpcrdma_hdr_encoded_len(&hdr_a), vectors[i].len);
		wcur_init(&w, out, sizeof(out));
		assert_int_equal(rpcrdma_hdr_encode(&w, &hdr_a), 0);
		assert_int_equal(w.pos, vectors[i].len);
		assert_memory_equal(out, vectors[i].bytes, vectors[i].len);
	}
}

/* The convenience encoders produce the DONE and both ERROR vectors. */
static void convenience_encoders(void **state)
{
	uint8_t out[64];
	struct wcur w;

	wcur_init(&w, out, sizeof(out));
	assert_int_equal(rpcrdma_encode_done(&w, 0x12345678, 8), 0);
	assert_int_equal(w.pos, sizeof(v_done));
	assert_memory_equal(out, v_done, sizeof(v_done));
	wcur_init(&w, out, sizeof(out));
	assert_int_equal(rpcrdma_encode_err_vers(&w, 0xcafef00d, 32, 1, 1), 0);
	assert_int_equal(w.pos, sizeof(v_err_vers));
	assert_memory_equal(out, v_err_vers, sizeof(v_err_vers));
	wcur_init(&w, out, sizeof(out));
	assert_int_equal(rpcrdma_encode_err_chunk(&w, 0x0badc0de, 0), 0);
	assert_int_equal(w.pos, sizeof(v_err_chunk));
	assert_memory_equal(out, v_err_chunk, sizeof(v_err_chunk));
	/* too small: nothing written */
	memset(out, 0xaa, sizeof(out));
	wcur_init(&w, out, sizeof(v_err_vers) - 1);
	assert_int_equal(rpcrdma_encode_err_vers(&w, 1, 1, 1, 1), -ENOSPC);
	assert_int_equal(w.pos, 0);
	assert_int_equal(out[0], 0xaa);
}

/* The RPC message after an RDMA_MSG header is left for the caller. */
static void trailing_rpc_message(void **state)
{
	uint8_t buf[sizeof(v_msg_reads) + 8];
	size_t used;

	memcpy(buf, v_msg_reads, sizeof(v_msg_reads));
	memcpy(buf + sizeof(v_msg_reads), "RPCcall!", 8);
	assert_int_equal(decode_bytes(buf, sizeof(buf), &hdr_a, &used), 0);
	assert_int_equal(used, sizeof(v_msg_reads));
}

/* Every proper prefix of every vector is short: -EBADMSG, cursor unchanged,
 * also when the cursor does not start at 0. */
static void truncation_every_byte(void **state)
{
	uint8_t buf[8 + 256];

	for (size_t i = 0; i < NVECTORS; i++) {
		for (size_t n = 0; n < vectors[i].len; n++) {
			struct cur c;

			assert_int_equal(decode_bytes(vectors[i].bytes, n, &hdr_a, NULL), -EBADMSG);
			memset(buf, 0, 8);
			memcpy(buf + 8, vectors[i].bytes, n);
			cur_init(&c, buf, 8 + n);
			assert_int_equal(cur_skip(&c, 8), 0);
			assert_int_equal(rpcrdma_hdr_decode(&c, &hdr_a), -EBADMSG);
			assert_int_equal(c.pos, 8);
		}
	}
}

/* Encoding into every buffer shorter than the header: -ENOSPC, nothing written. */
static void encode_short_buffer(void **state)
{
	uint8_t out[256];

	for (size_t i = 0; i < NVECTORS; i++) {
		vectors[i].want(&hdr_a);
		for (size_t cap = 0; cap < vectors[i].len; cap++) {
			struct wcur w;

			memset(out, 0xaa, sizeof(out));
			wcur_init(&w, out, cap);
			assert_int_equal(rpcrdma_hdr_encode(&w, &hdr_a), -ENOSPC);
			assert_int_equal(w.pos, 0);
			for (size_t b = 0; b < sizeof(out); b++)
				assert_int_equal(out[b], 0xaa);
		}
	}
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
static void cap_read_list(void **state)
{
	size_t len = build_reads(RPCRDMA_MAX_READ_SEGS);

	assert_int_equal(decode_bytes(big, len, &hdr_a, NULL), 0);
	assert_int_equal(hdr_a.nreads, RPCRDMA_MAX_READ_SEGS);
	len = build_reads(RPCRDMA_MAX_READ_SEGS + 1);
	assert_int_equal(decode_bytes(big, len, &hdr_a, NULL), -E2BIG);
}

/* Write list: 8 chunks decode, the 9th is refused. */
static void cap_write_list(void **state)
{
	size_t len = build_writes(RPCRDMA_MAX_WRITE_CHUNKS);

	assert_int_equal(decode_bytes(big, len, &hdr_a, NULL), 0);
	assert_int_equal(hdr_a.nwrites, RPCRDMA_MAX_WRITE_CHUNKS);
	len = build_writes(RPCRDMA_MAX_WRITE_CHUNKS + 1);
	assert_int_equal(decode_bytes(big, len, &hdr_a, NULL), -E2BIG);
}

/* A segment count over the cap is refused before any segment is read: with
 * no segments behind it the answer is still -E2BIG, not -EBADMSG. */
static void cap_chunk_segments(void **state)
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
static void fill_max_header(struct rpcrdma_hdr *h)
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
static void max_header(void **state)
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
static void length_overflow(void **state)
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
static void segment_wraps(void **state)
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
static void read_positions(void **state)
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

/* Version, proc, error code and discriminator words outside their ranges. */
static void bad_words(void **state)
{
	static const uint32_t bad_vers[] = {0, 2, 0xffffffff};
	static const uint32_t bad_procs[] = {5, 6, 0x80000000, 0xffffffff};
	uint8_t buf[sizeof(v_msg_writes)];
	uint32_t xid = 0;

	for (size_t i = 0; i < 3; i++) {
		struct cur c;

		memcpy(buf, v_err_chunk, sizeof(v_err_chunk));
		buf[4] = (uint8_t)(bad_vers[i] >> 24);
		buf[7] = (uint8_t)bad_vers[i];
		assert_int_equal(decode_bytes(buf, sizeof(v_err_chunk), &hdr_a, NULL),
				 -EPROTONOSUPPORT);
		cur_init(&c, buf, sizeof(v_err_chunk));
		assert_int_equal(rpcrdma_hdr_peek_xid(&c, &xid), 0);
		assert_int_equal(xid, 0x0badc0de);
	}
	for (size_t i = 0; i < 4; i++) {
		memcpy(buf, v_done, sizeof(v_done));
		buf[12] = (uint8_t)(bad_procs[i] >> 24);
		buf[15] = (uint8_t)bad_procs[i];
		assert_int_equal(decode_bytes(buf, sizeof(v_done), &hdr_a, NULL), -EINVAL);
	}
	memcpy(buf, v_err_chunk, sizeof(v_err_chunk));
	for (uint32_t err = 0; err < 8; err += 3) { /* 0, 3, 6: no such rdma_err */
		buf[19] = (uint8_t)err;
		assert_int_equal(decode_bytes(buf, sizeof(v_err_chunk), &hdr_a, NULL), -EBADMSG);
	}
	memcpy(buf, v_msg_writes, sizeof(v_msg_writes));
	buf[23] = 2; /* Write list discriminator 2 */
	assert_int_equal(decode_bytes(buf, sizeof(v_msg_writes), &hdr_a, NULL), -EBADMSG);
	/* a header too short for its version word: no xid either below 4 bytes */
	assert_int_equal(decode_bytes(v_done, 3, &hdr_a, NULL), -EBADMSG);
	{
		struct cur c;

		cur_init(&c, v_done, 3);
		assert_int_equal(rpcrdma_hdr_peek_xid(&c, &xid), -EBADMSG);
	}
}

/* The encoder refuses what the decoder would refuse. */
static void encode_invalid(void **state)
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

/* ---------------------------------------------------------------- helpers */

/* Write chunk totals, and the cap on them. */
static void write_chunk_len(void **state)
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
static void read_chunk_groups(void **state)
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
static void equal_sees_changes(void **state)
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

/* Names for logs. */
static void proc_names(void **state)
{
	assert_string_equal(rpcrdma_proc_name(RPCRDMA_MSG), "RDMA_MSG");
	assert_string_equal(rpcrdma_proc_name(RPCRDMA_ERROR), "RDMA_ERROR");
	assert_string_equal(rpcrdma_proc_name(5), "?");
}

/* ----------------------------------------------------------- private data */

/* The vector decodes field by field and encodes back to the same 8 bytes. */
static void private_vector(void **state)
{
	struct rpcrdma_cm_private pd, mine;
	uint8_t out[16];
	struct wcur w;
	struct cur c;

	cur_init(&c, v_private, sizeof(v_private));
	assert_int_equal(rpcrdma_cm_private_decode(&c, &pd), 0);
	assert_int_equal(c.pos, 8);
	assert_int_equal(pd.magic, RPCRDMA_CM_PRIVATE_MAGIC);
	assert_int_equal(pd.version, 1);
	assert_int_equal(pd.flags, RPCRDMA_CM_F_REMOTE_INV);
	assert_int_equal(pd.send_size, 4096);
	assert_int_equal(pd.recv_size, 32768);
	rpcrdma_cm_private_init(&mine, RPCRDMA_CM_F_REMOTE_INV, 4096, 32768);
	wcur_init(&w, out, sizeof(out));
	assert_int_equal(rpcrdma_cm_private_encode(&w, &mine), 0);
	assert_int_equal(w.pos, RPCRDMA_CM_PRIVATE_LEN);
	assert_memory_equal(out, v_private, sizeof(v_private));
	for (size_t cap = 0; cap < RPCRDMA_CM_PRIVATE_LEN; cap++) {
		memset(out, 0xaa, sizeof(out));
		wcur_init(&w, out, cap);
		assert_int_equal(rpcrdma_cm_private_encode(&w, &mine), -ENOSPC);
		assert_int_equal(w.pos, 0);
		assert_int_equal(out[0], 0xaa);
	}
}

/* Decode buf and expect "not ours": defaults, nothing consumed. */
static void expect_foreign(const uint8_t *buf, size_t len)
{
	struct rpcrdma_cm_private pd;
	struct cur c;

	memset(&pd, 0x55, sizeof(pd));
	cur_init(&c, buf, len);
	assert_int_equal(rpcrdma_cm_private_decode(&c, &pd), -ENOMSG);
	assert_int_equal(c.pos, 0);
	assert_int_equal(pd.flags, 0);
	assert_int_equal(pd.send_size, RPCRDMA_CM_DEFAULT_INLINE);
	assert_int_equal(pd.recv_size, RPCRDMA_CM_DEFAULT_INLINE);
}

/* Short, foreign and other-version private data mean the defaults; reserved
 * flag bits are ignored; zero padding after the 8 bytes (IB CM) is normal. */
static void private_foreign_and_padded(void **state)
{
	uint8_t buf[56];
	struct rpcrdma_cm_private pd;
	struct cur c;

	for (size_t n = 0; n < sizeof(v_private); n++)
		expect_foreign(v_private, n);
	expect_foreign(NULL, 0);
	memcpy(buf, v_private, sizeof(v_private));
	buf[3] = 0x19; /* another format identifier */
	expect_foreign(buf, 8);
	memcpy(buf, v_private, sizeof(v_private));
	buf[4] = 2; /* version 2 */
	expect_foreign(buf, 8);
	memset(buf, 0, sizeof(buf));
	memcpy(buf, v_private, sizeof(v_private));
	buf[5] = 0xff; /* reserved bits set */
	buf[6] = 0x00; /* 1024 */
	buf[7] = 0xff; /* 262144 */
	cur_init(&c, buf, sizeof(buf));
	assert_int_equal(rpcrdma_cm_private_decode(&c, &pd), 0);
	assert_int_equal(c.pos, 8);
	assert_int_equal(pd.flags, RPCRDMA_CM_F_REMOTE_INV);
	assert_int_equal(pd.send_size, 1024);
	assert_int_equal(pd.recv_size, RPCRDMA_CM_MAX_INLINE);
}

/* Sizes the byte cannot carry exactly, unknown flags: -EINVAL, nothing written. */
static void private_encode_invalid(void **state)
{
	static const uint32_t bad[] = {0, 1000, 1023, 4097, 263168, UINT32_MAX};
	struct rpcrdma_cm_private pd;
	uint8_t out[8];
	struct wcur w;

	wcur_init(&w, out, sizeof(out));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rpcrdma_cm_private_init(&pd, 0, bad[i], 4096);
		assert_int_equal(rpcrdma_cm_private_encode(&w, &pd), -EINVAL);
		rpcrdma_cm_private_init(&pd, 0, 4096, bad[i]);
		assert_int_equal(rpcrdma_cm_private_encode(&w, &pd), -EINVAL);
	}
	rpcrdma_cm_private_init(&pd, 0x02, 4096, 4096);
	assert_int_equal(rpcrdma_cm_private_encode(&w, &pd), -EINVAL);
	rpcrdma_cm_private_init(&pd, 0, 4096, 4096);
	pd.version = 2;
	assert_int_equal(rpcrdma_cm_private_encode(&w, &pd), -EINVAL);
	rpcrdma_cm_private_init(&pd, 0, 4096, 4096);
	pd.magic = 0;
	assert_int_equal(rpcrdma_cm_private_encode(&w, &pd), -EINVAL);
	assert_int_equal(w.pos, 0);
	/* every representable size round-trips */
	for (uint32_t kb = 1; kb <= 256; kb++) {
		struct cur c;

		rpcrdma_cm_private_init(&pd, 0, kb * 1024, (257 - kb) * 1024);
		wcur_init(&w, out, sizeof(out));
		assert_int_equal(rpcrdma_cm_private_encode(&w, &pd), 0);
		cur_init(&c, out, sizeof(out));
		assert_int_equal(rpcrdma_cm_private_decode(&c, &pd), 0);
		assert_int_equal(pd.send_size, kb * 1024);
		assert_int_equal(pd.recv_size, (257 - kb) * 1024);
	}
}

/* ------------------------------------------------------- random headers */

/* A segment length that keeps the chunk's *total within UINT32_MAX. */
static uint32_t rnd_len(uint64_t *total)
{
	uint32_t len;

	switch (rnd_below(4)) {
	case 0:
		len = 0;
		break;
	case 1:
		len = (uint32_t)rnd();
		break;
	default:
		len = rnd_below(1u << 20);
		break;
	}
	if (*total + len > UINT32_MAX)
		len = (uint32_t)(UINT32_MAX - *total);
	*total += len;
	return len;
}

/* A random valid segment: its end fits in 64 bits. */
static void rnd_seg(struct rpcrdma_seg *s, uint64_t *total)
{
	s->handle = (uint32_t)rnd();
	s->length = rnd_len(total);
	s->offset = rnd_below(2) ? rnd() : rnd_below(1u << 30);
	if (s->offset > UINT64_MAX - s->length)
		s->offset = UINT64_MAX - s->length;
}

/* A count up to cap: mostly small, sometimes none, sometimes the cap itself. */
static uint32_t rnd_count(uint32_t cap)
{
	switch (rnd_below(8)) {
	case 0:
		return 0;
	case 1:
		return cap;
	case 2:
		return rnd_below(cap + 1);
	default:
		return rnd_below(5);
	}
}

/* A random Read list: non-decreasing positions, multiples of 4. */
static void rnd_reads(struct rpcrdma_hdr *h)
{
	uint32_t pos = 4 * rnd_below(64);
	uint64_t total = 0;

	h->nreads = rnd_count(RPCRDMA_MAX_READ_SEGS);
	for (uint32_t i = 0; i < h->nreads; i++) {
		if (i > 0 && rnd_below(3) == 0) {
			pos += 4 * (1 + rnd_below(1024));
			total = 0;
		}
		h->reads[i].position = pos;
		rnd_seg(&h->reads[i].seg, &total);
	}
}

/* A random Write chunk. */
static void rnd_chunk(struct rpcrdma_write_chunk *wc)
{
	uint64_t total = 0;

	wc->nsegs = rnd_count(RPCRDMA_MAX_CHUNK_SEGS);
	for (uint32_t i = 0; i < wc->nsegs; i++)
		rnd_seg(&wc->segs[i], &total);
}

/* A random valid header of any proc. */
static void rnd_hdr(struct rpcrdma_hdr *h)
{
	rpcrdma_hdr_init(h, (uint32_t)rnd(), (uint32_t)rnd(), rnd_below(RPCRDMA_NPROCS));
	switch (h->proc) {
	case RPCRDMA_MSGP:
		h->align = (uint32_t)rnd();
		h->thresh = (uint32_t)rnd();
		/* fall through */
	case RPCRDMA_MSG:
	case RPCRDMA_NOMSG:
		rnd_reads(h);
		h->nwrites = rnd_count(RPCRDMA_MAX_WRITE_CHUNKS);
		for (uint32_t i = 0; i < h->nwrites; i++)
			rnd_chunk(&h->writes[i]);
		h->has_reply = rnd_below(2);
		if (h->has_reply)
			rnd_chunk(&h->reply);
		break;
	case RPCRDMA_ERROR:
		h->err = 1 + rnd_below(2);
		if (h->err == RPCRDMA_ERR_VERS) {
			h->vers_low = (uint32_t)rnd();
			h->vers_high = (uint32_t)rnd();
		}
		break;
	}
}

/* Random valid headers: encode, decode to the same fields, re-encode to the
 * same bytes. */
static void random_round_trips(void **state)
{
	static uint8_t out[RPCRDMA_HDR_MAX_LEN], out2[RPCRDMA_HDR_MAX_LEN];

	rng_state = test_seed();
	for (int i = 0; i < 20000; i++) {
		struct wcur w, w2;
		size_t used;

		rnd_hdr(&hdr_a);
		wcur_init(&w, out, sizeof(out));
		assert_int_equal(rpcrdma_hdr_encode(&w, &hdr_a), 0);
		assert_int_equal(w.pos, rpcrdma_hdr_encoded_len(&hdr_a));
		assert_int_equal(decode_bytes(out, w.pos, &hdr_b, &used), 0);
		assert_int_equal(used, w.pos);
		assert_hdr_fields(&hdr_b, &hdr_a);
		wcur_init(&w2, out2, sizeof(out2));
		assert_int_equal(rpcrdma_hdr_encode(&w2, &hdr_b), 0);
		assert_int_equal(w2.pos, w.pos);
		assert_memory_equal(out, out2, w.pos);
	}
}

/* --------------------------------------------------------------- mutation */

#define MUT_CAP (RPCRDMA_HDR_MAX_LEN + 1024)

/* Words that make a count or discriminator interesting. */
static const uint32_t edge_words[] = {
	0xffffffff, 0xfffffffe, 0x80000000, 0x7fffffff, 0x10000000, 0x10000, 65, 64,
	9,	    8,		5,	    4,		3,	    2,	     1,	 0,
};

/* Insert n bytes at a random place (random bytes, or a copy of a word-aligned
 * run, which repeats list entries). */
static size_t mutate_insert(uint8_t *buf, size_t len)
{
	size_t n = rnd_below(2) ? 1 + rnd_below(24) : 4 * (1 + rnd_below(8));
	size_t at = rnd_below((uint32_t)len + 1);

	if (len + n > MUT_CAP)
		return len;
	memmove(buf + at + n, buf + at, len - at);
	if (len >= n && rnd_below(2)) {
		size_t from = 4 * rnd_below((uint32_t)((len - n) / 4 + 1));

		memmove(buf + at, buf + (from >= at ? from + n : from), n);
	} else {
		for (size_t i = 0; i < n; i++)
			buf[at + i] = (uint8_t)rnd();
	}
	return len + n;
}

/* Apply one random mutation to buf; return the new length. */
static size_t mutate(uint8_t *buf, size_t len)
{
	size_t at, n;

	switch (rnd_below(7)) {
	case 0: /* flip one bit */
		if (len)
			buf[rnd_below((uint32_t)len)] ^= (uint8_t)(1u << rnd_below(8));
		return len;
	case 1: /* set one byte */
		if (len)
			buf[rnd_below((uint32_t)len)] = (uint8_t)rnd();
		return len;
	case 2: /* truncate */
		return rnd_below((uint32_t)len + 1);
	case 3:
	case 4: { /* set an aligned (count, discriminator, length) word to an edge value */
		uint32_t v = edge_words[rnd_below(sizeof(edge_words) / sizeof(edge_words[0]))];

		if (len < 4)
			return len;
		at = 4 * rnd_below((uint32_t)(len / 4));
		buf[at] = (uint8_t)(v >> 24);
		buf[at + 1] = (uint8_t)(v >> 16);
		buf[at + 2] = (uint8_t)(v >> 8);
		buf[at + 3] = (uint8_t)v;
		return len;
	}
	case 5:
		return mutate_insert(buf, len);
	default: /* delete a few bytes */
		if (len == 0)
			return len;
		at = rnd_below((uint32_t)len);
		n = 1 + rnd_below(rnd_below(2) ? 4 : 32);
		if (n > len - at)
			n = len - at;
		memmove(buf + at, buf + at + n, len - at - n);
		return len - n;
	}
}

/* Tally of outcomes, indexed by what decode said. */
struct mut_stats {
	unsigned long ok, ebadmsg, e2big, eproto, einval;
};

/* The properties every input must have: a refusal moves nothing and is one of
 * the four documented errors; an acceptance re-encodes to exactly the bytes
 * consumed, which decode to the same header, whose helpers agree. */
static void check_input(const uint8_t *buf, size_t len, struct mut_stats *st)
{
	static uint8_t out[MUT_CAP];
	struct rpcrdma_read_chunk rc[RPCRDMA_MAX_READ_SEGS];
	size_t used, used2;
	struct wcur w;
	uint64_t tot;
	uint32_t n;
	int r = decode_bytes(buf, len, &hdr_a, &used);

	switch (r) {
	case 0:
		st->ok++;
		break;
	case -EBADMSG:
		st->ebadmsg++;
		return;
	case -E2BIG:
		st->e2big++;
		return;
	case -EPROTONOSUPPORT:
		st->eproto++;
		return;
	case -EINVAL:
		st->einval++;
		return;
	default:
		fail_msg("undocumented result %d", r);
	}
	assert_int_equal(rpcrdma_hdr_encoded_len(&hdr_a), used);
	wcur_init(&w, out, sizeof(out));
	assert_int_equal(rpcrdma_hdr_encode(&w, &hdr_a), 0);
	assert_int_equal(w.pos, used);
	assert_memory_equal(out, buf, used);
	assert_int_equal(decode_bytes(out, w.pos, &hdr_b, &used2), 0);
	assert_int_equal(used2, used);
	assert_true(rpcrdma_hdr_equal(&hdr_a, &hdr_b));
	assert_int_equal(rpcrdma_read_chunks(&hdr_a, rc, &n), 0);
	for (uint32_t i = 0; i < hdr_a.nwrites; i++)
		assert_int_equal(rpcrdma_write_chunk_len(&hdr_a.writes[i], &tot), 0);
}

/* A starting point: one of the vectors, or a fresh random valid header. */
static size_t mutation_base(uint8_t *buf)
{
	struct wcur w;

	if (rnd_below(2)) {
		const struct vector *v = &vectors[rnd_below(NVECTORS)];

		memcpy(buf, v->bytes, v->len);
		return v->len;
	}
	rnd_hdr(&hdr_b);
	wcur_init(&w, buf, MUT_CAP);
	assert_int_equal(rpcrdma_hdr_encode(&w, &hdr_b), 0);
	return w.pos;
}

/* Seeded random mutation of valid headers, NFSRDMA_MUTATIONS cases. */
static void mutation(void **state)
{
	static uint8_t buf[MUT_CAP];
	const char *env = getenv("NFSRDMA_MUTATIONS");
	unsigned long cases = env && *env ? strtoul(env, NULL, 0) : 1000000;
	struct mut_stats st = {0};
	uint64_t seed = test_seed();

	rng_state = seed ^ 0x5555555555555555ULL;
	print_message("# mutation: %lu cases, seed 0x%llx (NFSRDMA_TEST_SEED to replay)\n", cases,
		      (unsigned long long)seed);
	for (unsigned long i = 0; i < cases; i++) {
		size_t len = mutation_base(buf);
		uint32_t rounds = 1 + rnd_below(4);

		for (uint32_t m = 0; m < rounds; m++)
			len = mutate(buf, len);
		check_input(buf, len, &st);
	}
	print_message("# mutation: %lu accepted, %lu EBADMSG, %lu E2BIG, %lu EPROTONOSUPPORT, "
		      "%lu EINVAL\n",
		      st.ok, st.ebadmsg, st.e2big, st.eproto, st.einval);
	assert_true(st.ok + st.ebadmsg + st.e2big + st.eproto + st.einval == cases);
	/* the mix must exercise both sides of every outcome */
	assert_true(st.ok > 0 && st.ebadmsg > 0 && st.e2big > 0 && st.eproto > 0 && st.einval > 0);
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

	for (size_t i = 0; i < NVECTORS; i++)
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
