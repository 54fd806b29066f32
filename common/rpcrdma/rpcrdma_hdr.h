/*
 * rpcrdma_hdr.h: the RPC-over-RDMA version 1 transport header (RFC 8166
 * section 4) and the RDMA-CM private data of RFC 8797, decoded and encoded
 * through the bounds-checked cursor (cursor.h).
 *
 * Wire form (XDR), every item a 32-bit big-endian word unless noted:
 *	rdma_xid, rdma_vers (1), rdma_credit, rdma_proc, then by rdma_proc:
 *	RDMA_MSG, RDMA_NOMSG: Read list, Write list, Reply chunk
 *	RDMA_MSGP (RFC 5666): rdma_align, rdma_thresh, then the same three
 *	RDMA_DONE (RFC 5666): nothing
 *	RDMA_ERROR: rdma_err; ERR_VERS: rdma_vers_low, rdma_vers_high; ERR_CHUNK: nothing
 *	segment = handle, length, offset (a 64-bit hyper)
 *	Read list = { 1, position, segment }* 0   (an XDR linked list)
 *	Write list = { 1, nsegs, segment[nsegs] }* 0
 *	Reply chunk = 0 | 1, nsegs, segment[nsegs]
 * Optional-data discriminators must be exactly 0 or 1, so that every header
 * has one encoding: decode then encode gives back the same bytes.
 *
 * Decoded form: struct rpcrdma_hdr, fixed-size arrays and no allocation, so a
 * failed decode can leak nothing. Caps (hostile peers cannot exceed them; the
 * Linux client sends at most a few segments per chunk):
 *	RPCRDMA_MAX_READ_SEGS    64  Read segments in the whole Read list
 *	RPCRDMA_MAX_WRITE_CHUNKS  8  chunks in the Write list
 *	RPCRDMA_MAX_CHUNK_SEGS   64  segments in one Write chunk or the Reply chunk
 * A counted array's count is checked against its cap before any loop; a linked
 * list is refused at the first entry over its cap. Both give -E2BIG.
 *
 * Rules checked on decode and on encode (a violation on decode is ERR_CHUNK):
 *	- Read positions are multiples of 4 and non-decreasing; segments with the
 *	  same position form one Read chunk (see rpcrdma_read_chunks).
 *	- a chunk's total length (sum of its segments, computed in 64 bits) is at
 *	  most UINT32_MAX, else -E2BIG;
 *	- a segment's offset + length fits in 64 bits (<= 2^64 - 1), else -EBADMSG.
 *	- zero-length segments and zero-segment chunks are accepted, as XDR
 *	  allows; whether they make sense is the transport's call.
 * Not checked here: credits, whether a Position-Zero Read chunk fits the
 * proc, handles and offsets against registrations (the transport does that).
 *
 * Threads: the functions keep no state; a struct belongs to its caller.
 */
#ifndef NFSRDMA_RPCRDMA_HDR_H
#define NFSRDMA_RPCRDMA_HDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/base/cursor.h"

#define RPCRDMA_VERSION 1

#define RPCRDMA_MAX_READ_SEGS	 64
#define RPCRDMA_MAX_WRITE_CHUNKS 8
#define RPCRDMA_MAX_CHUNK_SEGS	 64

/* Sizes on the wire, in bytes. */
#define RPCRDMA_HDR_FIXED_LEN 16 /* xid, vers, credit, proc */
#define RPCRDMA_SEG_LEN	      16 /* handle, length, offset */
/* The longest header this codec decodes or encodes (RDMA_MSGP, every cap full). */
#define RPCRDMA_HDR_MAX_LEN                                                                        \
	(RPCRDMA_HDR_FIXED_LEN + 8 + RPCRDMA_MAX_READ_SEGS * (8 + RPCRDMA_SEG_LEN) + 4 +           \
	 RPCRDMA_MAX_WRITE_CHUNKS * (8 + RPCRDMA_MAX_CHUNK_SEGS * RPCRDMA_SEG_LEN) + 4 + 8 +       \
	 RPCRDMA_MAX_CHUNK_SEGS * RPCRDMA_SEG_LEN)

/* rdma_proc (RFC 8166 section 4.2.1; MSGP and DONE are from RFC 5666). */
enum rpcrdma_proc {
	RPCRDMA_MSG = 0,
	RPCRDMA_NOMSG = 1,
	RPCRDMA_MSGP = 2,
	RPCRDMA_DONE = 3,
	RPCRDMA_ERROR = 4,
};
#define RPCRDMA_NPROCS 5

/* rdma_err of an RDMA_ERROR. */
enum rpcrdma_errcode {
	RPCRDMA_ERR_VERS = 1,
	RPCRDMA_ERR_CHUNK = 2,
};

/* One RDMA segment: a registered region of the peer's memory. */
struct rpcrdma_seg {
	uint32_t handle; /* steering tag (rkey) */
	uint32_t length; /* bytes */
	uint64_t offset; /* address within the registration */
};

/* One entry of the Read list: a segment and its XDR position in the RPC message. */
struct rpcrdma_read_seg {
	uint32_t position;
	struct rpcrdma_seg seg;
};

/* A Write chunk (or the Reply chunk): a counted array of segments. */
struct rpcrdma_write_chunk {
	uint32_t nsegs;
	struct rpcrdma_seg segs[RPCRDMA_MAX_CHUNK_SEGS];
};

/* A decoded header. Only the fields of h->proc are meaningful; the decoder
 * zeroes the others' scalars, never the arrays past their counts. */
struct rpcrdma_hdr {
	uint32_t xid;
	uint32_t vers;
	uint32_t credit;
	uint32_t proc; /* enum rpcrdma_proc */

	/* RDMA_MSGP only */
	uint32_t align;
	uint32_t thresh;

	/* RDMA_MSG, RDMA_NOMSG, RDMA_MSGP */
	uint32_t nreads;
	struct rpcrdma_read_seg reads[RPCRDMA_MAX_READ_SEGS];
	uint32_t nwrites;
	struct rpcrdma_write_chunk writes[RPCRDMA_MAX_WRITE_CHUNKS];
	bool has_reply;
	struct rpcrdma_write_chunk reply;

	/* RDMA_ERROR only */
	uint32_t err;	    /* enum rpcrdma_errcode */
	uint32_t vers_low;  /* ERR_VERS */
	uint32_t vers_high; /* ERR_VERS */
};

/* A Read chunk: the run of Read list entries that share one position. */
struct rpcrdma_read_chunk {
	uint32_t position;
	uint32_t first;	 /* index of its first segment in h->reads */
	uint32_t nsegs;	 /* segments in it, >= 1 */
	uint64_t length; /* their total, <= UINT32_MAX */
};

/*
 * Decode one transport header at c. On success c points just past it (at
 * the RPC message of an RDMA_MSG). On failure c is unchanged, *h is
 * undefined, and the result says how to answer (RFC 8166 section 4.5):
 *	-EPROTONOSUPPORT  rdma_vers is not 1: answer ERR_VERS
 *	-EBADMSG          short or malformed: answer ERR_CHUNK (xid from
 *	                  rpcrdma_hdr_peek_xid) or drop if even that is short
 *	-E2BIG            a list over its cap, or a chunk over UINT32_MAX: ERR_CHUNK
 *	-EINVAL           rdma_proc unknown: ERR_CHUNK
 * Shorter than the 16-byte fixed part is -EBADMSG before the version is seen.
 */
int rpcrdma_hdr_decode(struct cur *c, struct rpcrdma_hdr *h);
/* The xid of the header at c (its first word), to answer with an error. */
int rpcrdma_hdr_peek_xid(const struct cur *c, uint32_t *xid);

/* Start a header: version 1, no chunks, the other scalars zero. */
void rpcrdma_hdr_init(struct rpcrdma_hdr *h, uint32_t xid, uint32_t credit, uint32_t proc);
/* Encode h at w: 0, -ENOSPC (w too small; nothing written) or -EINVAL (h
 * breaks a rule above, its version is not 1, or proc/err is unknown). */
int rpcrdma_hdr_encode(struct wcur *w, const struct rpcrdma_hdr *h);
/* The bytes rpcrdma_hdr_encode writes for h, or 0 if it would say -EINVAL. */
size_t rpcrdma_hdr_encoded_len(const struct rpcrdma_hdr *h);
/* Convenience encoders for the bodiless replies. */
int rpcrdma_encode_err_vers(struct wcur *w, uint32_t xid, uint32_t credit, uint32_t low,
			    uint32_t high);
int rpcrdma_encode_err_chunk(struct wcur *w, uint32_t xid, uint32_t credit);
int rpcrdma_encode_done(struct wcur *w, uint32_t xid, uint32_t credit);

/* Total length of a Write chunk, summed in 64 bits: 0, or -E2BIG if it has
 * more than RPCRDMA_MAX_CHUNK_SEGS segments or the total exceeds UINT32_MAX. */
int rpcrdma_write_chunk_len(const struct rpcrdma_write_chunk *wc, uint64_t *len);
/* Group h's Read list into Read chunks, in order, into out[] (room for
 * RPCRDMA_MAX_READ_SEGS; NULL to only check and count) and *n (may be NULL).
 * 0, -EBADMSG (a position not a multiple of 4 or decreasing, a segment end
 * past 2^64 - 1) or -E2BIG (over a cap, or a chunk total over UINT32_MAX).
 * Always 0 for a header rpcrdma_hdr_decode accepted. */
int rpcrdma_read_chunks(const struct rpcrdma_hdr *h, struct rpcrdma_read_chunk *out, uint32_t *n);
/* Whether a and b carry the same header (the fields that h->proc puts on the wire). */
bool rpcrdma_hdr_equal(const struct rpcrdma_hdr *a, const struct rpcrdma_hdr *b);
/* Whether every segment of h's Read list, Write list and Reply chunk names the
 * same handle, not 0, and there is at least one: then *handle is it, the one key a
 * reply may invalidate remotely (RFC 8797 leaves the choice to the
 * responder; like Linux's server, we take it only when it is unambiguous). */
bool rpcrdma_hdr_one_handle(const struct rpcrdma_hdr *h, uint32_t *handle);
/* "RDMA_MSG" ... "RDMA_ERROR", or "?" for logs. */
const char *rpcrdma_proc_name(uint32_t proc);

/*
 * RFC 8797 RDMA-CM private data, 8 bytes, sent in the connect request and
 * the accept:
 *	format identifier 0xf6ab0e18 (32 bits), version 1 (8 bits),
 *	flags (8 bits; bit 0 = the sender accepts Send With Invalidate,
 *	the other bits reserved: sent as 0, ignored on receipt),
 *	inline send size, inline receive size: each (bytes / 1024) - 1 in 8 bits,
 *	so 1024 .. 262144 bytes in steps of 1024.
 * Peers without it (or with another format or version) use 1024 both ways.
 */
#define RPCRDMA_CM_PRIVATE_MAGIC   0xf6ab0e18u
#define RPCRDMA_CM_PRIVATE_VERSION 1
#define RPCRDMA_CM_PRIVATE_LEN	   8
#define RPCRDMA_CM_F_REMOTE_INV	   0x01
#define RPCRDMA_CM_DEFAULT_INLINE  1024
#define RPCRDMA_CM_MAX_INLINE	   (256 * 1024)

struct rpcrdma_cm_private {
	uint32_t magic;
	uint8_t version;
	uint8_t flags;	    /* RPCRDMA_CM_F_* */
	uint32_t send_size; /* bytes */
	uint32_t recv_size; /* bytes */
};

/* Fill pd as this side's private data. */
void rpcrdma_cm_private_init(struct rpcrdma_cm_private *pd, uint8_t flags, uint32_t send_size,
			     uint32_t recv_size);
/* 0, -ENOSPC, or -EINVAL (wrong magic/version, unknown flag, or a size that is
 * not a multiple of 1024 in 1024 .. 262144: never rounded, since rounding a
 * send size down would make the peer's receive buffers too small). */
int rpcrdma_cm_private_encode(struct wcur *w, const struct rpcrdma_cm_private *pd);
/* Read the peer's private data at c. 0: ours, 8 bytes consumed (IB CM pads
 * private data with zeros, so longer input is normal and left unread).
 * -ENOMSG: absent, shorter than 8 bytes, another format or version; nothing
 * consumed. Either way *pd is then usable: the defaults on -ENOMSG. */
int rpcrdma_cm_private_decode(struct cur *c, struct rpcrdma_cm_private *pd);

#endif
