/* log_test: level names parse both ways; unknown names are refused; a call
 * site that repeats itself is rate-limited, and what it dropped is counted. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Run fn with stderr going to a file; returns what it wrote (caller frees). */
static char *capture_stderr(void (*fn)(void))
{
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO);
	char *out;
	long len;

	assert_non_null(tmp);
	fflush(stderr);
	dup2(fileno(tmp), STDERR_FILENO);
	fn();
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	len = ftell(tmp);
	out = calloc(1, (size_t)len + 1);
	rewind(tmp);
	assert_int_equal(fread(out, 1, (size_t)len, tmp), (size_t)len);
	fclose(tmp);
	return out;
}

static unsigned count(const char *hay, const char *needle)
{
	unsigned n = 0;

	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

/* One call site. */
static void accept_failed(void)
{
	log_warn("cannot accept: %s", "Too many open files");
}

static void flood(void)
{
	for (int i = 0; i < 1000; i++)
		accept_failed();
	log_err("another site: %d", 1);
}

static void after_the_interval(void)
{
	usleep(250 * 1000);
	accept_failed();
}

static void same_line(int i)
{
	log_debug("debug line %d", i);
}

static void debug_flood(void)
{
	for (int i = 0; i < 100; i++)
		same_line(i);
}

/* 1,000 messages from one site: the first burst, nothing else until the
 * interval has passed, then the count of the rest; another site is not
 * held back; debug is never dropped. */
static void repeated_messages_limited(void **state)
{
	char *out;

	log_open("t", 0, LOG_LVL_DEBUG);
	log_set_ratelimit(5, 200);
	out = capture_stderr(flood);
	assert_int_equal(count(out, "cannot accept: Too many open files"), 5);
	assert_int_equal(count(out, "another site: 1"), 1);
	assert_int_equal(count(out, "suppressed"), 0);
	free(out);
	out = capture_stderr(after_the_interval);
	assert_non_null(strstr(out, "warning: accept_failed: 995 similar messages suppressed\n"));
	assert_int_equal(count(out, "cannot accept: Too many open files"), 1);
	free(out);
	out = capture_stderr(debug_flood);
	assert_int_equal(count(out, "debug line"), 100);
	free(out);
	log_set_ratelimit(0, 0);
	out = capture_stderr(flood);
	assert_int_equal(count(out, "cannot accept: Too many open files"), 1000);
	free(out);
	log_set_ratelimit(LOG_RATELIMIT_BURST, LOG_RATELIMIT_INTERVAL_MS);
}

/* Run the group (TAP output when CMOCKA_MESSAGE_OUTPUT=TAP). */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(level_names_round_trip),
		cmocka_unit_test(unknown_level_refused),
		cmocka_unit_test(threshold_filters),
		cmocka_unit_test(repeated_messages_limited),
	};
	return cmocka_run_group_tests_name("log", tests, NULL, NULL);
}
