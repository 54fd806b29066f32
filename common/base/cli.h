/*
 * cli.h: what every command does with its command line, the way nfs-utils and
 * rdma-core tools do: --version prints "NAME VERSION", and a usage error is one
 * line on stderr naming what is wrong, with exit status 2.
 */
#ifndef NFSRDMA_CLI_H
#define NFSRDMA_CLI_H

#include <stdarg.h>

#define CLI_EXIT_USAGE 2

/* "prog VERSION" on stdout. */
void cli_version(const char *prog);

/* "prog: MESSAGE (see prog --help)" on stderr. Returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cli_vusage_error(const char *prog, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/* The usage error for what getopt(3) or getopt_long(3) returned ('?', or ':'
 * when the option string starts with ':'), with opterr = 0. Returns
 * CLI_EXIT_USAGE. */
int cli_getopt_error(const char *prog, int ch, char *const *argv);

#endif
