/*
 * ordma.c: see ordma.h.
 */
#include <zlib.h>

#include "common/nfs/ordma.h"

static void put64(unsigned char *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (unsigned char)v;
}

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 3; i >= 0; i--, v >>= 8)
		p[i] = (unsigned char)v;
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* See ordma.h. */
uint64_t ordma_fh_hash(const void *fh, size_t len)
{
	const unsigned char *p = fh;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h ? h : 1;
}

/* See ordma.h. */
void ordma_hdr_encode(const struct ordma_hdr *h, unsigned char *p)
{
	put64(p + 8, h->fh_hash);
	put64(p + 16, h->fileid);
	put64(p + 24, h->offset);
	put64(p + 32, h->change);
	put32(p + 40, h->len);
	put32(p + 44, h->crc);
	put32(p + 48, h->magic);
	put32(p + 52, h->block);
	put64(p + 56, 0);
}

/* See ordma.h. */
void ordma_hdr_decode(const unsigned char *p, struct ordma_hdr *h)
{
	h->seq = get64(p);
	h->fh_hash = get64(p + 8);
	h->fileid = get64(p + 16);
	h->offset = get64(p + 24);
	h->change = get64(p + 32);
	h->len = get32(p + 40);
	h->crc = get32(p + 44);
	h->magic = get32(p + 48);
	h->block = get32(p + 52);
}

/* See ordma.h. Byte by byte: a reader on another CPU (or a NIC) may see any
 * mix of old and new bytes; the check compares both copies and the crc. */
void ordma_put_seq(unsigned char *p, uint64_t seq)
{
	put64(p, seq);
}

/* See ordma.h. */
uint64_t ordma_get_seq(const unsigned char *p)
{
	return get64(p);
}

/* See ordma.h. */
uint32_t ordma_crc(const void *data, size_t len)
{
	return (uint32_t)crc32(crc32(0L, Z_NULL, 0), data, (uInt)len);
}

/* See ordma.h. */
const char *ordma_miss_name(enum ordma_miss m)
{
	static const char *const names[ORDMA_MISS_N] = {"hit", "torn", "other", "stale", "format"};

	return (unsigned)m < ORDMA_MISS_N ? names[m] : "?";
}

/* See ordma.h. */
enum ordma_miss ordma_slot_check(const void *slot, uint32_t block, uint64_t fh_hash,
				 uint64_t offset, uint64_t change, const void **data, uint32_t *len)
{
	const unsigned char *p = slot;
	struct ordma_hdr h;

	ordma_hdr_decode(p, &h);
	if (h.magic != ORDMA_MAGIC || h.block != block || h.len > block)
		return h.magic == 0 ? ORDMA_MISS_OTHER : ORDMA_MISS_FORMAT;
	if ((h.seq & 1) || h.seq != ordma_get_seq(p + ORDMA_HDR + block))
		return ORDMA_MISS_TORN;
	if (h.fh_hash != fh_hash || h.offset != offset)
		return ORDMA_MISS_OTHER;
	if (h.change != change)
		return ORDMA_MISS_STALE;
	if (ordma_crc(p + ORDMA_HDR, h.len) != h.crc)
		return ORDMA_MISS_TORN;
	*data = p + ORDMA_HDR;
	*len = h.len;
	return ORDMA_HIT;
}
