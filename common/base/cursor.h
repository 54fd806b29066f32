/*
 * cursor.h: the one bounds-checked cursor that all wire decoding and encoding
 * in nfsrdma goes through (RPC/RDMA headers, RPC, NFS arguments).
 *
 * Reading (struct cur): XDR (RFC 4506) big-endian words over a byte buffer the
 * caller owns. Every getter returns 0, or a negative errno and then consumes
 * NOTHING (pos is unchanged), so a caller can chain getters and, on any error,
 * still knows where the bad item started:
 *	if ((r = cur_get_u32(c, &a)) != 0 || (r = cur_get_u32(c, &b)) != 0)
 *		return r;
 * Errors: -EBADMSG when the buffer is too short, -E2BIG when a length exceeds
 * the caller's maximum. Pointers handed out point into the caller's buffer and
 * live as long as it does. A decoder that must be all-or-nothing works on a
 * copy (struct cur t = *c) and stores it back only on success.
 *
 * Writing (struct wcur): the same shapes into a caller's buffer of capacity
 * cap. Every putter returns 0 or -ENOSPC, and on failure writes nothing.
 *
 * No allocation, no locking: a cursor belongs to one thread at a time.
 */
#ifndef NFSRDMA_CURSOR_H
#define NFSRDMA_CURSOR_H

#include <stddef.h>
#include <stdint.h>

struct cur {
	const uint8_t *buf;
	size_t len; /* bytes in buf */
	size_t pos; /* next byte to read, 0 <= pos <= len */
};

void cur_init(struct cur *c, const void *buf, size_t len);
size_t cur_left(const struct cur *c);
int cur_get_u32(struct cur *c, uint32_t *v);
int cur_get_u64(struct cur *c, uint64_t *v);
/* Hand out a pointer to the next n bytes (no copy) and step over them. */
int cur_get_bytes(struct cur *c, size_t n, const uint8_t **p);
/* XDR variable-length opaque: a length word (-E2BIG if over maxlen), the
 * bytes (*p points at them) and padding to a multiple of 4, which is skipped
 * whatever its value. */
int cur_get_opaque(struct cur *c, uint32_t maxlen, const uint8_t **p, uint32_t *len);
int cur_skip(struct cur *c, size_t n);
/* Read the next word without consuming it. */
int cur_peek_u32(const struct cur *c, uint32_t *v);

struct wcur {
	uint8_t *buf;
	size_t cap; /* bytes available in buf */
	size_t pos; /* bytes written so far, 0 <= pos <= cap */
};

void wcur_init(struct wcur *w, void *buf, size_t cap);
size_t wcur_left(const struct wcur *w);
int wcur_put_u32(struct wcur *w, uint32_t v);
int wcur_put_u64(struct wcur *w, uint64_t v);
int wcur_put_bytes(struct wcur *w, const void *p, size_t n);
/* XDR variable-length opaque: length word, bytes, zero padding to 4. */
int wcur_put_opaque(struct wcur *w, const void *p, uint32_t len);

/* Bytes of padding that follow n bytes of opaque data in XDR. */
static inline size_t xdr_pad(size_t n)
{
	return (4 - (n & 3)) & 3;
}

#endif
