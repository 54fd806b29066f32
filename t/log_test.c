/* log_test: level names parse both ways; unknown names are refused. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "common/base/log.h"

static void level_names_round_trip(void **state)
{
	enum log_level lvl;

	for (int i = LOG_LVL_ERR; i <= LOG_LVL_DEBUG; i++) {
		assert_int_equal(log_level_parse(log_level_name((enum log_level)i), &lvl), 0);
		assert_int_equal(lvl, i);
	}
}

static void unknown_level_refused(void **state)
{
	enum log_level lvl = LOG_LVL_INFO;

	assert_int_equal(log_level_parse("verbose", &lvl), -1);
	assert_int_equal(lvl, LOG_LVL_INFO);
	assert_string_equal(log_level_name((enum log_level)42), "?");
}

static void threshold_filters(void **state)
{
	log_set_level(LOG_LVL_WARN);
	assert_true(log_enabled(LOG_LVL_ERR));
	assert_false(log_enabled(LOG_LVL_INFO));
	log_set_level(LOG_LVL_DEBUG);
	assert_true(log_enabled(LOG_LVL_DEBUG));
}

/* Run the group (TAP output when CMOCKA_MESSAGE_OUTPUT=TAP). */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(level_names_round_trip),
		cmocka_unit_test(unknown_level_refused),
		cmocka_unit_test(threshold_filters),
	};
	return cmocka_run_group_tests_name("log", tests, NULL, NULL);
}
