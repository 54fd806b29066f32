/* soft_wire.c: encode and decode the soft provider's message header (big-endian). */
#include <string.h>

#include "soft_wire.h"

/* Store v big-endian in n bytes at p. */
static void put_be(uint8_t *p, uint64_t v, int n)
{
	for (int i = n - 1; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

/* Load n big-endian bytes from p. */
static uint64_t get_be(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

/* Serialise a header, big-endian. */
void soft_hdr_encode(const struct soft_hdr *h, uint8_t out[SOFT_HDR_LEN])
{
	out[0] = h->op;
	out[1] = h->status;
	put_be(out + 2, h->flags, 2);
	put_be(out + 4, h->len, 4);
	put_be(out + 8, h->seq, 4);
	put_be(out + 12, h->key, 4);
	put_be(out + 16, h->addr, 8);
	put_be(out + 24, h->aux, 4);
	put_be(out + 28, h->resv, 4);
}

/* Parse a header, big-endian. */
void soft_hdr_decode(const uint8_t in[SOFT_HDR_LEN], struct soft_hdr *h)
{
	h->op = in[0];
	h->status = in[1];
	h->flags = (uint16_t)get_be(in + 2, 2);
	h->len = (uint32_t)get_be(in + 4, 4);
	h->seq = (uint32_t)get_be(in + 8, 4);
	h->key = (uint32_t)get_be(in + 12, 4);
	h->addr = get_be(in + 16, 8);
	h->aux = (uint32_t)get_be(in + 24, 4);
	h->resv = (uint32_t)get_be(in + 28, 4);
}
