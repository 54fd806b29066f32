/*
 * nlm_clnt_held_test.c: the client's table of what lock owners hold
 * (client/nlm_clnt_held.c): locks and unlocks split and replace ranges the
 * way POSIX does, and nlmc_held_covers says whether an owner holds all of a
 * range in one mode (which decides the answer to a GRANTED the server sends
 * again).
 */
#include <fcntl.h>
#include <stdint.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "client/nlm_clnt_held.h"

static const struct nfs3c_fh fh1 = {.len = 4, .data = {1, 2, 3, 4}};
static const struct nfs3c_fh fh2 = {.len = 4, .data = {1, 2, 3, 5}};

/* Pieces that meet cover what they span in their mode; a gap, the other
 * mode, another owner or another file does not. */
static void covers_pieces(void **state)
{
	struct nlmc_heldset s = {.max_owners = 8};

	(void)state;
	assert_int_equal(nlmc_held_apply(&s, &fh1, 7, 1, F_WRLCK, 0, 10), 0);
	assert_int_equal(nlmc_held_apply(&s, &fh1, 7, 1, F_RDLCK, 10, 10), 0);
	assert_int_equal(nlmc_held_apply(&s, &fh1, 7, 1, F_RDLCK, 20, 10), 0);
	assert_true(nlmc_held_covers(&s, &fh1, 7, 0, 10, 1));
	assert_false(nlmc_held_covers(&s, &fh1, 7, 0, 10, 0));
	assert_true(nlmc_held_covers(&s, &fh1, 7, 10, 20, 0));
	assert_true(nlmc_held_covers(&s, &fh1, 7, 15, 10, 0));
	assert_false(nlmc_held_covers(&s, &fh1, 7, 10, 20, 1));
	assert_false(nlmc_held_covers(&s, &fh1, 7, 0, 20, 1)); /* half of it shared */
	assert_false(nlmc_held_covers(&s, &fh1, 7, 0, 20, 0));
	assert_false(nlmc_held_covers(&s, &fh1, 7, 10, 21, 0));
	assert_false(nlmc_held_covers(&s, &fh1, 7, 10, 0, 0)); /* to the end */
	assert_false(nlmc_held_covers(&s, &fh1, 8, 0, 10, 1));
	assert_false(nlmc_held_covers(&s, &fh2, 7, 0, 10, 1));
	/* a hole unlocked in the middle */
	assert_int_equal(nlmc_held_apply(&s, &fh1, 7, 0, F_UNLCK, 4, 2), 0);
	assert_true(nlmc_held_covers(&s, &fh1, 7, 0, 4, 1));
	assert_true(nlmc_held_covers(&s, &fh1, 7, 6, 4, 1));
	assert_false(nlmc_held_covers(&s, &fh1, 7, 0, 10, 1));
	assert_false(nlmc_held_covers(&s, &fh1, 7, 5, 1, 1));
	/* an upgrade of part of the shared pieces */
	assert_int_equal(nlmc_held_apply(&s, &fh1, 7, 1, F_WRLCK, 12, 4), 0);
	assert_true(nlmc_held_covers(&s, &fh1, 7, 12, 4, 1));
	assert_false(nlmc_held_covers(&s, &fh1, 7, 10, 20, 0));
	assert_true(nlmc_held_covers(&s, &fh1, 7, 16, 14, 0));
	nlmc_held_clear(&s);
	assert_false(nlmc_held_covers(&s, &fh1, 7, 0, 1, 1));
}

/* A lock to the end of the file covers any range past its start, up to the
 * largest offset; an unlock of everything leaves nothing held. */
static void covers_to_the_end(void **state)
{
	struct nlmc_heldset s = {.max_owners = 8};

	(void)state;
	assert_int_equal(nlmc_held_apply(&s, &fh1, 7, 3, F_WRLCK, 100, 0), 0);
	assert_true(nlmc_held_covers(&s, &fh1, 7, 100, 0, 1));
	assert_true(nlmc_held_covers(&s, &fh1, 7, UINT64_MAX - 5, 5, 1));
	assert_true(nlmc_held_covers(&s, &fh1, 7, 1000, UINT64_MAX, 1)); /* wraps: to the end */
	assert_false(nlmc_held_covers(&s, &fh1, 7, 99, 2, 1));
	assert_false(nlmc_held_covers(&s, &fh1, 7, 100, 0, 0));
	assert_int_equal(nlmc_held_svid(&s, &fh1, 7), 3);
	assert_int_equal(nlmc_held_apply(&s, &fh1, 7, 0, F_UNLCK, 0, 0), 0);
	assert_false(nlmc_held_covers(&s, &fh1, 7, 100, 1, 1));
	assert_int_equal(s.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(covers_pieces),
		cmocka_unit_test(covers_to_the_end),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
