/*
 * ordma_test: Optimistic RDMA's block cache (server/ordma_cache.h) and the
 * client's check of a slot it read (common/nfs/ordma.h): a filled block is
 * found and checks; another file, offset or change attribute, a forgotten or
 * evicted block, a slot caught mid-rewrite (odd or unequal seq, bad crc) are
 * misses, never data; and a reader copying a slot while a writer refills it
 * never takes a torn block for a whole one.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "server/ordma_cache.h"

#define BLK 4096u

/* A copy of slot ref's bytes, as an RDMA Read would bring them. */
static unsigned char *read_slot(struct ordma_cache *c, const struct ordma_ref *ref)
{
	size_t len, n = ordma_slot_size(ordma_cache_block(c));
	unsigned char *mem = ordma_cache_mem(c, &len), *img = malloc(n);

	assert_non_null(img);
	assert_true(ref->slot_off + n <= len);
	memcpy(img, mem + ref->slot_off, n);
	return img;
}

static void fill_found_checked(void **state)
{
	struct ordma_cache *c;
	struct ordma_ref ref[4];
	unsigned char data[BLK], *img;
	const void *got;
	uint32_t len;

	(void)state;
	memset(data, 'a', sizeof(data));
	assert_int_equal(ordma_cache_create(4 * ordma_slot_size(BLK), BLK, &c), 0);
	ordma_cache_fill(c, ordma_cache_gen(c, 11), 11, 100, BLK, 555, data, BLK);
	ordma_cache_fill(c, ordma_cache_gen(c, 11), 11, 100, 2 * BLK, 555, data, 10); /* the tail */
	assert_int_equal(ordma_cache_lookup(c, 11, 0, 4 * BLK, ref, 4), 2);
	assert_int_equal(ref[0].offset, BLK);
	assert_int_equal(ref[1].offset, 2 * BLK);
	assert_int_equal(ordma_cache_lookup(c, 12, 0, 4 * BLK, ref, 4), 0);
	img = read_slot(c, &ref[1]);
	assert_int_equal(ordma_slot_check(img, BLK, 11, 2 * BLK, 555, &got, &len), ORDMA_HIT);
	assert_int_equal(len, 10);
	assert_memory_equal(got, data, 10);
	/* another file, another offset, newer attributes */
	assert_int_equal(ordma_slot_check(img, BLK, 12, 2 * BLK, 555, &got, &len),
			 ORDMA_MISS_OTHER);
	assert_int_equal(ordma_slot_check(img, BLK, 11, BLK, 555, &got, &len), ORDMA_MISS_OTHER);
	assert_int_equal(ordma_slot_check(img, BLK, 11, 2 * BLK, 556, &got, &len),
			 ORDMA_MISS_STALE);
	assert_int_equal(ordma_slot_check(img, 2 * BLK, 11, 2 * BLK, 555, &got, &len),
			 ORDMA_MISS_FORMAT);
	/* mid-rewrite: odd seq, unequal copies, bytes that do not match the crc */
	img[7] |= 1;
	assert_int_equal(ordma_slot_check(img, BLK, 11, 2 * BLK, 555, &got, &len), ORDMA_MISS_TORN);
	img[7] &= (unsigned char)~1;
	img[ORDMA_HDR + BLK + 7] += 2;
	assert_int_equal(ordma_slot_check(img, BLK, 11, 2 * BLK, 555, &got, &len), ORDMA_MISS_TORN);
	img[ORDMA_HDR + BLK + 7] -= 2;
	img[ORDMA_HDR + 3] = 'b';
	assert_int_equal(ordma_slot_check(img, BLK, 11, 2 * BLK, 555, &got, &len), ORDMA_MISS_TORN);
	free(img);
	ordma_cache_destroy(c);
}

static void forget_and_evict(void **state)
{
	struct ordma_cache_stats st;
	struct ordma_cache *c;
	struct ordma_ref ref[4], old;
	unsigned char data[BLK], *img;
	const void *got;
	uint32_t len;

	(void)state;
	memset(data, 'x', sizeof(data));
	assert_int_equal(ordma_cache_create(3 * ordma_slot_size(BLK) + 100, BLK, &c), 0);
	for (uint64_t i = 0; i < 3; i++)
		ordma_cache_fill(c, ordma_cache_gen(c, 7), 7, 70, i * BLK, 1, data, BLK);
	assert_int_equal(ordma_cache_lookup(c, 7, 0, BLK, &old, 1), 1);
	/* a fourth block pushes out the first filled */
	ordma_cache_fill(c, ordma_cache_gen(c, 8), 8, 80, 0, 1, data, BLK);
	assert_int_equal(ordma_cache_lookup(c, 7, 0, 3 * BLK, ref, 4), 2);
	assert_int_equal(ref[0].offset, BLK);
	img = read_slot(c, &old); /* the old reference: another block now */
	assert_int_equal(ordma_slot_check(img, BLK, 7, 0, 1, &got, &len), ORDMA_MISS_OTHER);
	free(img);
	/* a refill of a cached block stays in its slot */
	ordma_cache_fill(c, ordma_cache_gen(c, 8), 8, 80, 0, 2, data, BLK);
	assert_int_equal(ordma_cache_lookup(c, 8, 0, BLK, ref, 1), 1);
	assert_int_equal(ref[0].slot_off, old.slot_off);
	/* clear: nothing stays */
	{
		struct ordma_cache *d;

		assert_int_equal(ordma_cache_create(3 * ordma_slot_size(BLK), BLK, &d), 0);
		ordma_cache_fill(d, ordma_cache_gen(d, 1), 1, 10, 0, 1, data, BLK);
		ordma_cache_fill(d, ordma_cache_gen(d, 2), 2, 20, 0, 1, data, BLK);
		ordma_cache_clear(d);
		assert_int_equal(ordma_cache_lookup(d, 1, 0, BLK, ref, 1), 0);
		assert_int_equal(ordma_cache_lookup(d, 2, 0, BLK, ref, 1), 0);
		ordma_cache_fill(d, ordma_cache_gen(d, 3), 3, 30, 0, 1, data, BLK);
		assert_int_equal(ordma_cache_lookup(d, 3, 0, BLK, ref, 1), 1);
		ordma_cache_destroy(d);
	}
	/* forget: the file's slots say nothing any more */
	ordma_cache_forget(c, 8);
	assert_int_equal(ordma_cache_lookup(c, 8, 0, BLK, ref, 1), 0);
	img = read_slot(c, &old);
	assert_int_equal(ordma_slot_check(img, BLK, 8, 0, 2, &got, &len), ORDMA_MISS_OTHER);
	free(img);
	ordma_cache_stats(c, &st);
	assert_int_equal(st.slots, 3);
	assert_int_equal(st.used, 2);
	assert_int_equal(st.fills, 5);
	assert_int_equal(st.evictions, 1);
	assert_int_equal(st.forgets, 1);
	/* a fill of bytes read before the file's forget stores nothing; the
	 * forget of a file in another bucket does not stop it */
	{
		uint64_t gen = ordma_cache_gen(c, 8), other = 9;

		ordma_cache_forget(c, 8);
		ordma_cache_fill(c, gen, 8, 80, BLK, 3, data, BLK);
		assert_int_equal(ordma_cache_lookup(c, 8, 0, 2 * BLK, ref, 2), 0);
		for (gen = ordma_cache_gen(c, 8);; other++) {
			assert_true(other < 100);
			ordma_cache_forget(c, other);
			if (ordma_cache_gen(c, 8) == gen)
				break;
			gen = ordma_cache_gen(c, 8);
		}
		ordma_cache_fill(c, gen, 8, 80, BLK, 3, data, BLK);
		assert_int_equal(ordma_cache_lookup(c, 8, BLK, BLK, ref, 1), 1);
	}
	ordma_cache_destroy(c);
}

static void bad_geometry(void **state)
{
	struct ordma_cache *c;

	(void)state;
	assert_int_equal(ordma_cache_create(1 << 20, 3000, &c), -EINVAL);
	assert_int_equal(ordma_cache_create(1 << 20, 128 * 1024, &c), -EINVAL);
	assert_int_equal(ordma_cache_create(100, BLK, &c), -EINVAL);
	assert_null(c);
}

struct race {
	struct ordma_cache *c;
	int stop;
};

/* Refill block 0 over and over, each time all bytes equal to the change
 * attribute's low byte. */
static void *writer(void *arg)
{
	struct race *r = arg;
	unsigned char data[BLK];

	for (uint64_t v = 1; !__atomic_load_n(&r->stop, __ATOMIC_RELAXED); v++) {
		memset(data, (int)(v & 0xff), sizeof(data));
		ordma_cache_fill(r->c, ordma_cache_gen(r->c, 5), 5, 50, 0, v, data, BLK);
	}
	return NULL;
}

/* A reader copying the slot byte by byte (as slowly as a NIC may) while it
 * is rewritten: every hit is a whole block of one fill. */
static void reader_never_torn(void **state)
{
	struct race r = {0};
	struct ordma_ref ref;
	struct ordma_hdr h;
	pthread_t th;
	unsigned char *img = malloc(ordma_slot_size(BLK)), *mem;
	volatile unsigned char *src;
	unsigned hits = 0, misses = 0;
	size_t len;

	(void)state;
	assert_non_null(img);
	assert_int_equal(ordma_cache_create(2 * ordma_slot_size(BLK), BLK, &r.c), 0);
	memset(img, 0, ordma_slot_size(BLK));
	ordma_cache_fill(r.c, ordma_cache_gen(r.c, 5), 5, 50, 0, 0, img, BLK);
	assert_int_equal(ordma_cache_lookup(r.c, 5, 0, BLK, &ref, 1), 1);
	mem = ordma_cache_mem(r.c, &len);
	src = mem + ref.slot_off;
	assert_int_equal(pthread_create(&th, NULL, writer, &r), 0);
	for (int round = 0; round < 3000; round++) {
		const unsigned char *got;
		const void *p;
		uint32_t n;

		for (size_t i = 0; i < ordma_slot_size(BLK); i++)
			img[i] = src[i];
		ordma_hdr_decode(img, &h);
		if (ordma_slot_check(img, BLK, 5, 0, h.change, &p, &n) != ORDMA_HIT) {
			misses++;
			continue;
		}
		got = p;
		hits++;
		assert_int_equal(n, BLK);
		for (uint32_t i = 0; i < n; i++)
			assert_int_equal(got[i], h.change & 0xff);
	}
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	print_message("# %u hits, %u misses while rewritten\n", hits, misses);
	assert_true(hits + misses == 3000);
	free(img);
	ordma_cache_destroy(r.c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fill_found_checked),
		cmocka_unit_test(forget_and_evict),
		cmocka_unit_test(bad_geometry),
		cmocka_unit_test(reader_never_torn),
	};

	return cmocka_run_group_tests_name("ordma", tests, NULL, NULL);
}
