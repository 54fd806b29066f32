/*
 * rpc_replay_test: the integrity flavour's replay table: numbers in and out
 * of order, duplicates, numbers older than the window, a clock too far off,
 * and a full table that takes a new context only in place of one whose calls
 * are too old to replay.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>

#include "common/rpc/rpc_replay.h"

#define NOW 1800000000u
#define W   300

static void window(void **state)
{
	struct rpc_replay *r;
	struct rpc_replay_stats st;

	assert_int_equal(rpc_replay_create(64, W, &r), 0);
	for (uint32_t s = 1; s <= 10; s++)
		assert_int_equal(rpc_replay_check(r, 7, s, NOW, NOW), 0);
	assert_int_equal(rpc_replay_check(r, 7, 5, NOW, NOW), -EALREADY); /* seen */
	assert_int_equal(rpc_replay_check(r, 7, 20, NOW, NOW), 0);	  /* a gap */
	assert_int_equal(rpc_replay_check(r, 7, 15, NOW, NOW), 0);	  /* late, unseen */
	assert_int_equal(rpc_replay_check(r, 7, 15, NOW, NOW), -EALREADY);
	assert_int_equal(rpc_replay_check(r, 7, 20, NOW, NOW), -EALREADY);
	assert_int_equal(rpc_replay_check(r, 7, 500, NOW, NOW), 0);
	assert_int_equal(rpc_replay_check(r, 7, 500 - RPC_REPLAY_WINDOW, NOW, NOW), -EALREADY);
	assert_int_equal(rpc_replay_check(r, 7, 500 - RPC_REPLAY_WINDOW + 1, NOW, NOW), 0);
	assert_int_equal(rpc_replay_check(r, 7, 0, NOW, NOW), -EALREADY); /* never valid */
	/* another context has numbers of its own */
	assert_int_equal(rpc_replay_check(r, 8, 5, NOW, NOW), 0);
	/* the sender's clock */
	assert_int_equal(rpc_replay_check(r, 7, 501, NOW - W - 1, NOW), -ETIME);
	assert_int_equal(rpc_replay_check(r, 7, 501, NOW + W + 1, NOW), -ETIME);
	assert_int_equal(rpc_replay_check(r, 7, 501, NOW - W, NOW), 0);
	rpc_replay_get_stats(r, &st);
	assert_int_equal(st.replays, 5);
	assert_int_equal(st.off_clock, 2);
	assert_int_equal(st.contexts, 2);
	rpc_replay_destroy(r);
}

/* Every bit of a 128-number window, across word boundaries, after shifts of
 * every size. */
static void shifts(void **state)
{
	struct rpc_replay *r;

	assert_int_equal(rpc_replay_create(16, W, &r), 0);
	for (uint32_t step = 1; step < 2 * RPC_REPLAY_WINDOW; step += 7) {
		uint64_t ctx = 100 + step;
		uint32_t top = 1000;

		assert_int_equal(rpc_replay_check(r, ctx, top, NOW, NOW), 0);
		assert_int_equal(rpc_replay_check(r, ctx, top + step, NOW, NOW), 0);
		/* top is still remembered if it is inside the window */
		assert_int_equal(rpc_replay_check(r, ctx, top, NOW, NOW), -EALREADY);
		for (uint32_t back = 1; back < RPC_REPLAY_WINDOW; back++) {
			uint32_t s = top + step - back;
			int want = s == top || back >= RPC_REPLAY_WINDOW ? -EALREADY : 0;

			assert_int_equal(rpc_replay_check(r, ctx, s, NOW, NOW), want);
		}
		rpc_replay_destroy(r);
		assert_int_equal(rpc_replay_create(16, W, &r), 0);
	}
	rpc_replay_destroy(r);
}

/* A full table refuses a new context while the others are recent, and takes
 * the place of one unused for twice the window. */
static void full_table(void **state)
{
	struct rpc_replay *r;
	struct rpc_replay_stats st;
	uint64_t ctx;
	int refused = 0;

	assert_int_equal(rpc_replay_create(8, W, &r), 0);
	for (ctx = 1; ctx <= 64 && !refused; ctx++)
		refused = rpc_replay_check(r, ctx, 1, NOW, NOW) == -ENOSPC;
	assert_true(refused);
	rpc_replay_get_stats(r, &st);
	assert_true(st.contexts <= 8);
	assert_int_equal(st.full, 1);
	/* later: the old contexts' calls are too old to replay; room again */
	assert_int_equal(rpc_replay_check(r, ctx - 1, 1, NOW + 2 * W + 1, NOW + 2 * W + 1), 0);
	/* and a recorded call of an evicted context is refused by its time */
	assert_int_equal(rpc_replay_check(r, 1, 1, NOW, NOW + 2 * W + 1), -ETIME);
	rpc_replay_destroy(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(window),
		cmocka_unit_test(shifts),
		cmocka_unit_test(full_table),
	};
	return cmocka_run_group_tests_name("rpc_replay", tests, NULL, NULL);
}
