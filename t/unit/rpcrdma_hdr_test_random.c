/*
 * rpcrdma_hdr_test_random.c: random valid headers encoded and decoded
 * back, and seeded random mutation of valid headers: every outcome is one of
 * the documented ones, and an accepted input re-encodes to itself.
 * NFSRDMA_TEST_SEED and NFSRDMA_MUTATIONS: see rpcrdma_hdr_test.c.
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

/* splitmix64: a small, good, seedable generator. */
uint64_t rng_state;

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
void rnd_hdr(struct rpcrdma_hdr *h)
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
void random_round_trips(void **state)
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
		const struct vector *v = &vectors[rnd_below(nvectors)];

		memcpy(buf, v->bytes, v->len);
		return v->len;
	}
	rnd_hdr(&hdr_b);
	wcur_init(&w, buf, MUT_CAP);
	assert_int_equal(rpcrdma_hdr_encode(&w, &hdr_b), 0);
	return w.pos;
}

/* Seeded random mutation of valid headers, NFSRDMA_MUTATIONS cases. */
void mutation(void **state)
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
