/*
 * config_test: the configuration file. Every error kind gives its exact message
 * on the right line; cross-checks; defaults are valid and documented in the man
 * page; client address matching; sizes.
 *
 * The cases are in config_test_*.c by topic: stored values, errors and
 * cross-checks, syntax and files, client addresses. This file has the
 * helpers they share (config_test.h), the scratch directory and the case
 * table.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/base/config.h"
#include "config_test.h"

char tmpdir[] = "/tmp/config_test.XXXXXX";

/* Path of name inside the test's scratch directory. */
const char *tmp_path(const char *name)
{
	static char buf[4][256];
	static int next;
	char *p = buf[next++ % 4];

	snprintf(p, sizeof(buf[0]), "%s/%s", tmpdir, name);
	return p;
}

/* Write text to the scratch file name with the given mode; returns its path. */
const char *write_file(const char *name, const char *text, mode_t mode)
{
	const char *path = tmp_path(name);
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, mode), 0);
	return path;
}

/* Load text as a config file; the errors come back as "LINE: SETTING: PROBLEM". */
static int load_text(const char *text, struct nfsrdma_config *cfg, char ***lines, size_t *n)
{
	struct config_errors errs;
	const char *path = write_file("test.conf", text, 0644);
	int r;

	config_errors_init(&errs);
	r = config_load(path, cfg, &errs);
	*lines = calloc(errs.n + 1, sizeof(**lines));
	assert_non_null(*lines);
	for (size_t i = 0; i < errs.n; i++) {
		const struct config_error *e = &errs.v[i];

		assert_string_equal(e->file, e->line ? path : e->file);
		assert_int_not_equal(asprintf(&(*lines)[i], "%u: %s: %s", e->line,
					      e->setting ? e->setting : "-", e->problem),
				     -1);
	}
	*n = errs.n;
	assert_false(errs.out_of_memory);
	config_errors_free(&errs);
	return r;
}

/* Free what load_text returned. */
static void free_lines(char **lines, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
}

/* Loading text fails with exactly the expected errors (NULL-terminated), in order. */
void expect_errors(const char *text, const char *const *expected)
{
	struct nfsrdma_config cfg;
	char **lines;
	size_t n, want = 0;

	while (expected[want] != NULL)
		want++;
	assert_int_equal(load_text(text, &cfg, &lines, &n), want ? -1 : 0);
	for (size_t i = 0; i < n || i < want; i++) {
		if (i >= n || i >= want || strcmp(lines[i], expected[i]) != 0)
			FAIL("error %zu: got \"%s\", want \"%s\"", i, i < n ? lines[i] : "(none)",
			     i < want ? expected[i] : "(none)");
	}
	free_lines(lines, n);
	config_free(&cfg);
}

/* Load text that must be valid into *cfg (caller frees). */
void load_ok(const char *text, struct nfsrdma_config *cfg)
{
	char **lines;
	size_t n;

	if (load_text(text, cfg, &lines, &n) != 0)
		FAIL("unexpected error: %s", n ? lines[0] : "(none recorded)");
	free_lines(lines, n);
}

/* ------------------------------------------------------------------ main */

static int make_tmpdir(void **state)
{
	return mkdtemp(tmpdir) ? 0 : -1;
}

/* Group teardown: remove the scratch files and directory. */
static int remove_tmpdir(void **state)
{
	const char *names[] = {"test.conf", "defaults.conf", "key.ok", "key.open",
			       "key.empty", "key.short",     "key.16", "t.exports"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		unlink(tmp_path(names[i]));
	return rmdir(tmpdir);
}

/* Run every case; TAP output when CMOCKA_MESSAGE_OUTPUT=TAP. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sizes_parse_and_print),
		cmocka_unit_test(defaults_are_the_documented_ones),
		cmocka_unit_test(printed_defaults_load_as_defaults),
		cmocka_unit_test(empty_file_gives_defaults),
		cmocka_unit_test(values_are_stored),
		cmocka_unit_test(exports_are_stored),
		cmocka_unit_test(exports_file_is_stored),
		cmocka_unit_test(type_errors),
		cmocka_unit_test(range_errors),
		cmocka_unit_test(size_text_errors),
		cmocka_unit_test(wrapped_integers_are_refused),
		cmocka_unit_test(enum_errors),
		cmocka_unit_test(unknown_settings),
		cmocka_unit_test(string_checks),
		cmocka_unit_test(export_errors),
		cmocka_unit_test(watermarks),
		cmocka_unit_test(allphys_needs_trust),
		cmocka_unit_test(read_read_needs_fresh_keys),
		cmocka_unit_test(integrity_needs_a_safe_key),
		cmocka_unit_test(key_file_path_is_made_absolute),
		cmocka_unit_test(other_cross_checks),
		cmocka_unit_test(three_kinds_at_once),
		cmocka_unit_test(several_syntax_errors),
		cmocka_unit_test(libconfig_lookahead_string_leak),
		cmocka_unit_test(data_file_three_errors),
		cmocka_unit_test(include_files),
		cmocka_unit_test(missing_and_unreadable_files),
		cmocka_unit_test(man_page_documents_every_setting),
		cmocka_unit_test(man_page_example_loads),
		cmocka_unit_test(names_round_trip),
		cmocka_unit_test(log_levels_match_log_h),
		cmocka_unit_test(ipv4_matching),
		cmocka_unit_test(ipv6_matching),
		cmocka_unit_test(mapped_and_wildcard_matching),
		cmocka_unit_test(odd_peers_and_exports),
		cmocka_unit_test(malformed_client_entries),
	};
	return cmocka_run_group_tests_name("config", tests, make_tmpdir, remove_tmpdir);
}
