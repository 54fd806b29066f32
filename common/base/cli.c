/*
 * cli.c: --version and one-line usage errors for every command (cli.h).
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>

#include "cli.h"

/* See cli.h. */
void cli_version(const char *prog)
{
	printf("%s %s\n", prog, PACKAGE_VERSION);
}

/* See cli.h. */
int cli_vusage_error(const char *prog, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", prog);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, " (see %s --help)\n", prog);
	return CLI_EXIT_USAGE;
}

/* See cli.h. */
int cli_usage_error(const char *prog, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = cli_vusage_error(prog, fmt, ap);
	va_end(ap);
	return rc;
}

/* See cli.h. getopt has moved optind past the offending word (or past its
 * missing argument's place), so argv[optind - 1] is the word as typed. */
int cli_getopt_error(const char *prog, int ch, char *const *argv)
{
	const char *word = optind > 0 ? argv[optind - 1] : "";

	if (ch == ':') {
		if (word[0] == '-' && word[1] == '-')
			return cli_usage_error(prog, "option '%s' needs an argument", word);
		return cli_usage_error(prog, "option '-%c' needs an argument", optopt);
	}
	if (optopt && !(word[0] == '-' && word[1] == '-'))
		return cli_usage_error(prog, "unknown option '-%c'", optopt);
	return cli_usage_error(prog, "unknown option '%s'", word);
}
