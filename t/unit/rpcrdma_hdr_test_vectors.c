/*
 * rpcrdma_hdr_test_vectors.c: byte vectors written by hand from the XDR
 * of RFC 8166 section 4 (RFC 5666 for MSGP/DONE) and what each decodes to;
 * decoding, encoding and truncating them, and bad words in them; and the
 * RFC 8797 private data (section 4): its vector, foreign and padded forms.
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
const uint8_t v_private[] = {
	0xf6, 0xab, 0x0e, 0x18, /* format identifier */
	0x01,			/* version 1 */
	0x01,			/* reserved bits 0, I (remote invalidation) = 1 */
	0x03,			/* inline send size: 4096 / 1024 - 1 */
	0x1f,			/* inline receive size: 32768 / 1024 - 1 */
};

/* The decoded forms of the vectors, built field by field. */
void want_msg_plain(struct rpcrdma_hdr *h)
{
	rpcrdma_hdr_init(h, 0x01020304, 32, RPCRDMA_MSG);
}

void want_msg_reads(struct rpcrdma_hdr *h)
{
	rpcrdma_hdr_init(h, 0xa1b2c3d4, 128, RPCRDMA_MSG);
	h->nreads = 3;
	h->reads[0] = (struct rpcrdma_read_seg){148, {0x11111111, 4096, 0x00007f0000001000ULL}};
	h->reads[1] = (struct rpcrdma_read_seg){148, {0x22222222, 8192, 0x00007f0000100000ULL}};
	h->reads[2] = (struct rpcrdma_read_seg){256, {0x33333333, 512, 0xffffffff00000000ULL}};
}

void want_msg_writes(struct rpcrdma_hdr *h)
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

void want_nomsg(struct rpcrdma_hdr *h)
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

void want_msgp(struct rpcrdma_hdr *h)
{
	rpcrdma_hdr_init(h, 0xbeef, 64, RPCRDMA_MSGP);
	h->align = 64;
	h->thresh = 4096;
	h->nwrites = 1;
	h->writes[0].nsegs = 1;
	h->writes[0].segs[0] = (struct rpcrdma_seg){0xcccc0001, 0xffffffff, 0xffffffff00000000ULL};
}

void want_done(struct rpcrdma_hdr *h)
{
	rpcrdma_hdr_init(h, 0x12345678, 8, RPCRDMA_DONE);
}

void want_err_vers(struct rpcrdma_hdr *h)
{
	rpcrdma_hdr_init(h, 0xcafef00d, 32, RPCRDMA_ERROR);
	h->err = RPCRDMA_ERR_VERS;
	h->vers_low = 1;
	h->vers_high = 1;
}

void want_err_chunk(struct rpcrdma_hdr *h)
{
	rpcrdma_hdr_init(h, 0x0badc0de, 0, RPCRDMA_ERROR);
	h->err = RPCRDMA_ERR_CHUNK;
}

/* Each vector, its name and its decoded form. */
const struct vector vectors[] = {
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
const size_t nvectors = sizeof(vectors) / sizeof(vectors[0]);

/* ------------------------------------------------------- vector tests */

/* Each vector decodes to exactly its hand-built struct and consumes all of it. */
void vectors_decode(void **state)
{
	for (size_t i = 0; i < nvectors; i++) {
		size_t used;

		print_message("# decode %s\n", vectors[i].name);
		assert_int_equal(decode_bytes(vectors[i].bytes, vectors[i].len, &hdr_a, &used), 0);
		assert_int_equal(used, vectors[i].len);
		vectors[i].want(&hdr_b);
		assert_hdr_fields(&hdr_a, &hdr_b);
	}
}

/* Each hand-built struct encodes to exactly its vector, with the right length. */
void vectors_encode(void **state)
{
	uint8_t out[256];

	for (size_t i = 0; i < nvectors; i++) {
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
void convenience_encoders(void **state)
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
void trailing_rpc_message(void **state)
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
void truncation_every_byte(void **state)
{
	uint8_t buf[8 + 256];

	for (size_t i = 0; i < nvectors; i++) {
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
void encode_short_buffer(void **state)
{
	uint8_t out[256];

	for (size_t i = 0; i < nvectors; i++) {
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

/* Version, proc, error code and discriminator words outside their ranges. */
void bad_words(void **state)
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

/* ----------------------------------------------------------- private data */

/* The vector decodes field by field and encodes back to the same 8 bytes. */
void private_vector(void **state)
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
void private_foreign_and_padded(void **state)
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
void private_encode_invalid(void **state)
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
