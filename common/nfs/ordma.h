/*
 * ordma.h: Optimistic RDMA (issue 23), what server and client share. The
 * server keeps a registered, read-only block cache (server/ordma_cache.h);
 * a client that holds a reference to one of its slots reads the slot with one
 * RDMA Read, no call, and uses the block only if the slot says it is the one
 * it wanted, intact and no staler than an RPC READ would be (ordma_slot_check);
 * anything else is a miss and the client sends READ.
 *
 * A slot, every number big-endian:
 *   header (ORDMA_HDR bytes): seq, fh_hash, fileid, offset, change (8 bytes
 *     each), len, crc, magic, block (4 each), 8 bytes reserved;
 *   the block's bytes (block bytes, len of them valid);
 *   trailer (ORDMA_TRAILER bytes): seq again.
 * seq is odd while the server rewrites the slot (a seqlock); crc is the
 * CRC-32 (zlib's) of the len valid bytes, so that a read that saw the slot
 * half-rewritten (an RDMA Read need not read its bytes in order) is caught
 * even where both copies of seq look unchanged.
 */
#ifndef NFSRDMA_ORDMA_H
#define NFSRDMA_ORDMA_H

#include <stddef.h>
#include <stdint.h>

#define ORDMA_HDR     64u
#define ORDMA_TRAILER 64u
#define ORDMA_MAGIC   0x4f52444du /* "ORDM" */

/* Block sizes a cache may use: a power of two in 4 KiB .. 64 KiB. */
#define ORDMA_BLOCK_MIN 4096u
#define ORDMA_BLOCK_MAX 65536u

/* The slot header's fields, in host order. */
struct ordma_hdr {
	uint64_t seq;	  /* even: stable; odd: being rewritten */
	uint64_t fh_hash; /* ordma_fh_hash of the file's NFS handle; 0: empty */
	uint64_t fileid;
	uint64_t offset; /* of the block in the file, a multiple of block */
	uint64_t change; /* the file's change attribute when the block was read */
	uint32_t len;	 /* valid bytes (less than block at the end of the file) */
	uint32_t crc;	 /* CRC-32 of those bytes */
	uint32_t magic;
	uint32_t block;
};

/* Bytes of a slot with blocks of `block` bytes. */
static inline size_t ordma_slot_size(uint32_t block)
{
	return ORDMA_HDR + (size_t)block + ORDMA_TRAILER;
}

/* The change attribute both sides compare: the file's ctime in nanoseconds
 * (NFSv3 has no change attribute; ctime moves with every data and metadata
 * change, as the Linux client's attribute cache assumes). */
static inline uint64_t ordma_change(uint32_t ctime_s, uint32_t ctime_ns)
{
	return (uint64_t)ctime_s * 1000000000u + ctime_ns;
}

/* A 64-bit hash (FNV-1a) of a file's NFS handle: how a slot names its file
 * (never 0). */
uint64_t ordma_fh_hash(const void *fh, size_t len);

/* Encode/decode a header at p (ORDMA_HDR bytes); the seq field alone is
 * written by the seqlock (ordma_put_seq). */
void ordma_hdr_encode(const struct ordma_hdr *h, unsigned char *p);
void ordma_hdr_decode(const unsigned char *p, struct ordma_hdr *h);
void ordma_put_seq(unsigned char *p, uint64_t seq);
uint64_t ordma_get_seq(const unsigned char *p);
uint32_t ordma_crc(const void *data, size_t len);

/* Why a slot image is not usable (ordma_slot_check). */
enum ordma_miss {
	ORDMA_HIT = 0,
	ORDMA_MISS_TORN,   /* seq odd or different in header and trailer, or a bad crc */
	ORDMA_MISS_OTHER,  /* the slot holds another block (or nothing) now */
	ORDMA_MISS_STALE,  /* the block is older than the attributes the client holds */
	ORDMA_MISS_FORMAT, /* not a slot of this geometry */
	ORDMA_MISS_N
};
const char *ordma_miss_name(enum ordma_miss m);

/* Check a slot image (ordma_slot_size(block) bytes, as read): ORDMA_HIT with
 * *data and *len set when it holds the block at `offset` of the file whose
 * handle hashes to fh_hash, read when the file's change attribute was
 * `change`, and intact; else why not. */
enum ordma_miss ordma_slot_check(const void *slot, uint32_t block, uint64_t fh_hash,
				 uint64_t offset, uint64_t change, const void **data,
				 uint32_t *len);

#endif
