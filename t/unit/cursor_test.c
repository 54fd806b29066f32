/* cursor_test: every getter and putter, in range and just out of it; a failed
 * call must leave the cursor exactly where it was and write nothing. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "common/base/cursor.h"

/* Words read big-endian; each getter succeeds while bytes remain, then fails
 * with -EBADMSG without moving. */
static void get_words(void **state)
{
	static const uint8_t buf[] = {0x01, 0x02, 0x03, 0x04, 0x80, 0x00, 0x00, 0x01,
				      0xff, 0xee, 0xdd, 0xcc, 0x00, 0x00, 0x00};
	struct cur c;
	uint32_t v = 0;
	uint64_t h = 0;

	cur_init(&c, buf, sizeof(buf));
	assert_int_equal(cur_left(&c), 15);
	assert_int_equal(cur_peek_u32(&c, &v), 0);
	assert_int_equal(v, 0x01020304);
	assert_int_equal(c.pos, 0);
	assert_int_equal(cur_get_u32(&c, &v), 0);
	assert_int_equal(v, 0x01020304);
	assert_int_equal(cur_get_u64(&c, &h), 0);
	assert_true(h == 0x80000001ffeeddccULL);
	assert_int_equal(c.pos, 12);
	/* 3 bytes left: every getter is short and leaves pos alone */
	v = 7;
	h = 7;
	assert_int_equal(cur_get_u32(&c, &v), -EBADMSG);
	assert_int_equal(cur_peek_u32(&c, &v), -EBADMSG);
	assert_int_equal(cur_get_u64(&c, &h), -EBADMSG);
	assert_int_equal(v, 7);
	assert_true(h == 7);
	assert_int_equal(c.pos, 12);
	assert_int_equal(cur_left(&c), 3);
}

/* A hyper needs all 8 bytes even when 4..7 are there. */
static void get_u64_short(void **state)
{
	static const uint8_t buf[7] = {0};
	struct cur c;
	uint64_t h;

	cur_init(&c, buf, sizeof(buf));
	assert_int_equal(cur_get_u64(&c, &h), -EBADMSG);
	assert_int_equal(c.pos, 0);
}

/* Raw bytes point into the buffer; skip moves; both refuse to overrun. */
static void get_bytes_and_skip(void **state)
{
	static const uint8_t buf[] = {1, 2, 3, 4, 5, 6};
	const uint8_t *p = NULL;
	struct cur c;

	cur_init(&c, buf, sizeof(buf));
	assert_int_equal(cur_get_bytes(&c, 0, &p), 0);
	assert_ptr_equal(p, buf);
	assert_int_equal(cur_get_bytes(&c, 2, &p), 0);
	assert_ptr_equal(p, buf);
	assert_int_equal(cur_skip(&c, 1), 0);
	assert_int_equal(cur_get_bytes(&c, 4, &p), -EBADMSG);
	assert_int_equal(cur_skip(&c, 4), -EBADMSG);
	assert_int_equal(cur_skip(&c, SIZE_MAX), -EBADMSG);
	assert_int_equal(cur_get_bytes(&c, SIZE_MAX, &p), -EBADMSG);
	assert_int_equal(c.pos, 3);
	assert_int_equal(cur_get_bytes(&c, 3, &p), 0);
	assert_ptr_equal(p, buf + 3);
	assert_int_equal(cur_left(&c), 0);
}

/* Opaque: length, data, padding skipped; over maxlen is -E2BIG, short is
 * -EBADMSG, and neither moves the cursor. */
static void get_opaque(void **state)
{
	static const uint8_t buf[] = {0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o', 0,	0,
				      0, 0, 0, 0, 0,   0,   0,	 0,   2,   'x', 'y'};
	const uint8_t *p;
	uint32_t len;
	struct cur c;

	cur_init(&c, buf, sizeof(buf));
	assert_int_equal(cur_get_opaque(&c, 4, &p, &len), -E2BIG);
	assert_int_equal(c.pos, 0);
	assert_int_equal(cur_get_opaque(&c, 5, &p, &len), 0);
	assert_int_equal(len, 5);
	assert_memory_equal(p, "hello", 5);
	assert_int_equal(c.pos, 12);
	/* an empty opaque is one word */
	assert_int_equal(cur_get_opaque(&c, 0, &p, &len), 0);
	assert_int_equal(len, 0);
	assert_int_equal(c.pos, 16);
	/* 2 bytes of data present but their padding is not */
	assert_int_equal(cur_get_opaque(&c, 100, &p, &len), -EBADMSG);
	assert_int_equal(c.pos, 16);
	/* not even a whole length word */
	cur_init(&c, buf, 3);
	assert_int_equal(cur_get_opaque(&c, 100, &p, &len), -EBADMSG);
	assert_int_equal(c.pos, 0);
}

/* A length near 2^32 must not wrap the padded size. */
static void get_opaque_huge_length(void **state)
{
	static const uint8_t buf[] = {0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4};
	static const uint8_t buf2[] = {0xff, 0xff, 0xff, 0xfd, 1, 2, 3, 4};
	const uint8_t *p;
	uint32_t len;
	struct cur c;

	cur_init(&c, buf, sizeof(buf));
	assert_int_equal(cur_get_opaque(&c, UINT32_MAX, &p, &len), -EBADMSG);
	assert_int_equal(c.pos, 0);
	cur_init(&c, buf2, sizeof(buf2));
	assert_int_equal(cur_get_opaque(&c, UINT32_MAX, &p, &len), -EBADMSG);
	assert_int_equal(c.pos, 0);
	assert_int_equal(cur_get_opaque(&c, 0, &p, &len), -E2BIG);
	assert_int_equal(c.pos, 0);
}

/* An empty or NULL buffer has nothing to give. */
static void empty_buffer(void **state)
{
	struct cur c;
	uint32_t v;
	const uint8_t *p;

	cur_init(&c, NULL, 100);
	assert_int_equal(cur_left(&c), 0);
	assert_int_equal(cur_get_u32(&c, &v), -EBADMSG);
	assert_int_equal(cur_get_bytes(&c, 0, &p), 0);
	assert_int_equal(cur_skip(&c, 1), -EBADMSG);
}

/* Putters write big-endian and stop at the capacity, writing nothing. */
static void put_words(void **state)
{
	static const uint8_t want[] = {0xde, 0xad, 0xbe, 0xef, 0x01, 0x23,
				       0x45, 0x67, 0x89, 0xab, 0xcd, 0xef};
	uint8_t buf[15];
	struct wcur w;

	memset(buf, 0xaa, sizeof(buf));
	wcur_init(&w, buf, sizeof(buf));
	assert_int_equal(wcur_put_u32(&w, 0xdeadbeef), 0);
	assert_int_equal(wcur_put_u64(&w, 0x0123456789abcdefULL), 0);
	assert_memory_equal(buf, want, sizeof(want));
	assert_int_equal(w.pos, 12);
	assert_int_equal(wcur_left(&w), 3);
	assert_int_equal(wcur_put_u32(&w, 1), -ENOSPC);
	assert_int_equal(wcur_put_u64(&w, 1), -ENOSPC);
	assert_int_equal(wcur_put_bytes(&w, "abcd", 4), -ENOSPC);
	assert_int_equal(w.pos, 12);
	for (int i = 12; i < 15; i++)
		assert_int_equal(buf[i], 0xaa);
	assert_int_equal(wcur_put_bytes(&w, "abc", 3), 0);
	assert_memory_equal(buf + 12, "abc", 3);
	assert_int_equal(wcur_put_bytes(&w, NULL, 0), 0);
}

/* Opaque out: zero padding, all or nothing. */
static void put_opaque(void **state)
{
	static const uint8_t want[] = {0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o', 0, 0, 0, 0, 0, 0, 0};
	uint8_t buf[16];
	struct wcur w;

	for (size_t cap = 0; cap < 12; cap++) {
		memset(buf, 0xaa, sizeof(buf));
		wcur_init(&w, buf, cap);
		assert_int_equal(wcur_put_opaque(&w, "hello", 5), -ENOSPC);
		assert_int_equal(w.pos, 0);
		for (size_t i = 0; i < sizeof(buf); i++)
			assert_int_equal(buf[i], 0xaa);
	}
	memset(buf, 0xaa, sizeof(buf));
	wcur_init(&w, buf, sizeof(buf));
	assert_int_equal(wcur_put_opaque(&w, "hello", 5), 0);
	assert_int_equal(wcur_put_opaque(&w, NULL, 0), 0);
	assert_int_equal(w.pos, 16);
	assert_memory_equal(buf, want, sizeof(want));
	assert_int_equal(wcur_put_opaque(&w, "", 0), -ENOSPC);
}

/* What the writer writes, the reader reads back. */
static void round_trip(void **state)
{
	uint8_t buf[64];
	const uint8_t *p;
	uint32_t v, len;
	uint64_t h;
	struct wcur w;
	struct cur c;

	wcur_init(&w, buf, sizeof(buf));
	for (uint32_t n = 0; n < 4; n++)
		assert_int_equal(wcur_put_opaque(&w, "abcd", n), 0);
	assert_int_equal(wcur_put_u64(&w, UINT64_MAX - 1), 0);
	assert_int_equal(wcur_put_u32(&w, 42), 0);
	cur_init(&c, buf, w.pos);
	for (uint32_t n = 0; n < 4; n++) {
		assert_int_equal(cur_get_opaque(&c, 4, &p, &len), 0);
		assert_int_equal(len, n);
		assert_memory_equal(p, "abcd", n);
		assert_int_equal(c.pos % 4, 0);
	}
	assert_int_equal(cur_get_u64(&c, &h), 0);
	assert_true(h == UINT64_MAX - 1);
	assert_int_equal(cur_get_u32(&c, &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(cur_left(&c), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(get_words),
		cmocka_unit_test(get_u64_short),
		cmocka_unit_test(get_bytes_and_skip),
		cmocka_unit_test(get_opaque),
		cmocka_unit_test(get_opaque_huge_length),
		cmocka_unit_test(empty_buffer),
		cmocka_unit_test(put_words),
		cmocka_unit_test(put_opaque),
		cmocka_unit_test(round_trip),
	};
	return cmocka_run_group_tests_name("cursor", tests, NULL, NULL);
}
