/* cursor.c: bounds-checked XDR reading and writing; see cursor.h for the rules. */
#include <errno.h>
#include <string.h>

#include "cursor.h"

/* Start reading len bytes at buf; buf may be NULL when len is 0. */
void cur_init(struct cur *c, const void *buf, size_t len)
{
	c->buf = buf;
	c->len = buf ? len : 0;
	c->pos = 0;
}

/* Bytes not yet consumed. */
size_t cur_left(const struct cur *c)
{
	return c->len - c->pos;
}

/* Decode a big-endian word at p; p has 4 readable bytes. */
static uint32_t load_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* Encode v big-endian at p; p has 4 writable bytes. */
static void store_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* XDR unsigned int. */
int cur_get_u32(struct cur *c, uint32_t *v)
{
	if (cur_left(c) < 4)
		return -EBADMSG;
	*v = load_be32(c->buf + c->pos);
	c->pos += 4;
	return 0;
}

/* Peek at the next XDR unsigned int; the cursor is const, so nothing moves. */
int cur_peek_u32(const struct cur *c, uint32_t *v)
{
	if (cur_left(c) < 4)
		return -EBADMSG;
	*v = load_be32(c->buf + c->pos);
	return 0;
}

/* XDR unsigned hyper: the high word first. */
int cur_get_u64(struct cur *c, uint64_t *v)
{
	if (cur_left(c) < 8)
		return -EBADMSG;
	*v = (uint64_t)load_be32(c->buf + c->pos) << 32 | load_be32(c->buf + c->pos + 4);
	c->pos += 8;
	return 0;
}

/* Point *p at the next n bytes and consume them. */
int cur_get_bytes(struct cur *c, size_t n, const uint8_t **p)
{
	if (cur_left(c) < n)
		return -EBADMSG;
	*p = c->buf + c->pos;
	c->pos += n;
	return 0;
}

/* Step over n bytes. */
int cur_skip(struct cur *c, size_t n)
{
	if (cur_left(c) < n)
		return -EBADMSG;
	c->pos += n;
	return 0;
}

/* XDR opaque<maxlen>: length, data, padding. The padded length is computed in
 * 64 bits so that a length near 2^32 cannot wrap on a 32-bit size_t. */
int cur_get_opaque(struct cur *c, uint32_t maxlen, const uint8_t **p, uint32_t *len)
{
	uint32_t n;
	uint64_t need;

	if (cur_peek_u32(c, &n) != 0)
		return -EBADMSG;
	if (n > maxlen)
		return -E2BIG;
	need = 4 + (uint64_t)n + xdr_pad(n);
	if (need > cur_left(c))
		return -EBADMSG;
	*p = c->buf + c->pos + 4;
	*len = n;
	c->pos += (size_t)need;
	return 0;
}

/* Start writing into buf of cap bytes; buf may be NULL when cap is 0. */
void wcur_init(struct wcur *w, void *buf, size_t cap)
{
	w->buf = buf;
	w->cap = buf ? cap : 0;
	w->pos = 0;
}

/* Bytes still free. */
size_t wcur_left(const struct wcur *w)
{
	return w->cap - w->pos;
}

/* XDR unsigned int. */
int wcur_put_u32(struct wcur *w, uint32_t v)
{
	if (wcur_left(w) < 4)
		return -ENOSPC;
	store_be32(w->buf + w->pos, v);
	w->pos += 4;
	return 0;
}

/* XDR unsigned hyper. */
int wcur_put_u64(struct wcur *w, uint64_t v)
{
	if (wcur_left(w) < 8)
		return -ENOSPC;
	store_be32(w->buf + w->pos, (uint32_t)(v >> 32));
	store_be32(w->buf + w->pos + 4, (uint32_t)v);
	w->pos += 8;
	return 0;
}

/* n raw bytes, no length and no padding. */
int wcur_put_bytes(struct wcur *w, const void *p, size_t n)
{
	if (wcur_left(w) < n)
		return -ENOSPC;
	if (n > 0)
		memcpy(w->buf + w->pos, p, n);
	w->pos += n;
	return 0;
}

/* XDR opaque: length, data, zero padding; all of it or nothing. */
int wcur_put_opaque(struct wcur *w, const void *p, uint32_t len)
{
	size_t pad = xdr_pad(len);

	if ((uint64_t)wcur_left(w) < 4 + (uint64_t)len + pad)
		return -ENOSPC;
	store_be32(w->buf + w->pos, len);
	w->pos += 4;
	if (len > 0)
		memcpy(w->buf + w->pos, p, len);
	memset(w->buf + w->pos + len, 0, pad);
	w->pos += (size_t)len + pad;
	return 0;
}
