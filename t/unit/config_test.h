/*
 * config_test.h: what the parts of t/unit/config_test share: the scratch
 * directory and the helpers that load text as a configuration file
 * (config_test.c), and the cases, one file per topic (config_test_*.c).
 */
#ifndef NFSRDMA_T_CONFIG_TEST_H
#define NFSRDMA_T_CONFIG_TEST_H

#include <stdio.h>
#include <sys/types.h>

#include "common/base/config.h"

/* The scratch directory (made by the group set-up). */
extern char tmpdir[];

/* Fail with a message; cmocka's TAP output drops fail_msg's text, a TAP comment keeps it. */
#define FAIL(...)                                                                                  \
	do {                                                                                       \
		printf("# ");                                                                      \
		printf(__VA_ARGS__);                                                               \
		printf("\n");                                                                      \
		fflush(stdout);                                                                    \
		fail();                                                                            \
	} while (0)

/* Path of name inside the test's scratch directory. */
const char *tmp_path(const char *name);
/* Write text to the scratch file name with the given mode; returns its path. */
const char *write_file(const char *name, const char *text, mode_t mode);
/* Loading text fails with exactly the expected errors (NULL-terminated), in
 * order, each "LINE: SETTING: PROBLEM"; EXPECT lists them, EXPECT_OK none. */
void expect_errors(const char *text, const char *const *expected);
#define EXPECT(text, ...) expect_errors(text, (const char *const[]){__VA_ARGS__, NULL})
#define EXPECT_OK(text)	  expect_errors(text, (const char *const[]){NULL})
/* Load text that must be valid into *cfg (caller frees). */
void load_ok(const char *text, struct nfsrdma_config *cfg);

/* The cases, in config_test_values.c ... */
void sizes_parse_and_print(void **state);
void defaults_are_the_documented_ones(void **state);
void printed_defaults_load_as_defaults(void **state);
void empty_file_gives_defaults(void **state);
void values_are_stored(void **state);
void exports_are_stored(void **state);
void exports_file_is_stored(void **state);
/* ... config_test_errors.c ... */
void type_errors(void **state);
void range_errors(void **state);
void size_text_errors(void **state);
void wrapped_integers_are_refused(void **state);
void enum_errors(void **state);
void unknown_settings(void **state);
void string_checks(void **state);
void export_errors(void **state);
void watermarks(void **state);
void allphys_needs_trust(void **state);
void read_read_needs_fresh_keys(void **state);
void integrity_needs_a_safe_key(void **state);
void key_file_path_is_made_absolute(void **state);
void other_cross_checks(void **state);
/* ... config_test_files.c ... */
void three_kinds_at_once(void **state);
void several_syntax_errors(void **state);
void libconfig_lookahead_string_leak(void **state);
void data_file_three_errors(void **state);
void include_files(void **state);
void missing_and_unreadable_files(void **state);
void man_page_documents_every_setting(void **state);
void man_page_example_loads(void **state);
void names_round_trip(void **state);
void log_levels_match_log_h(void **state);
/* ... and config_test_clients.c. */
void ipv4_matching(void **state);
void ipv6_matching(void **state);
void mapped_and_wildcard_matching(void **state);
void odd_peers_and_exports(void **state);
void malformed_client_entries(void **state);

#endif
