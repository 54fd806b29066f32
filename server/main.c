/*
 * main.c: nfsrdma-server's entry point. For now it reads and checks the
 * configuration (-t), prints the defaults (-D); serving is still to come.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/config.h"
#include "log.h"

#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif
#define DEFAULT_CONFIG SYSCONFDIR "/nfsrdma.conf"

/* What the command line asked for. */
struct server_opts {
	const char *config_file; /* -f */
	bool test;		 /* -t: check the configuration and exit */
	bool defaults;		 /* -D: print the defaults and exit */
};

/* Usage on f; the caller decides the exit status. */
static void usage(FILE *f)
{
	fprintf(f,
		"usage: nfsrdma-server [-t] [-f FILE]\n"
		"       nfsrdma-server -D | -h\n"
		"  -f FILE  configuration file (default %s)\n"
		"  -t       check the configuration file, print every problem, and exit\n"
		"  -D       print every setting with its type, range and default, and exit\n"
		"  -h       show this help\n",
		DEFAULT_CONFIG);
}

/* Fill *o from argv. Returns -1 (exit 0) after -h, 1 on a usage error, else 0. */
static int parse_args(int argc, char **argv, struct server_opts *o)
{
	int ch;

	o->config_file = DEFAULT_CONFIG;
	while ((ch = getopt(argc, argv, "f:tDh")) != -1) {
		switch (ch) {
		case 'f':
			o->config_file = optarg;
			break;
		case 't':
			o->test = true;
			break;
		case 'D':
			o->defaults = true;
			break;
		case 'h':
			usage(stdout);
			return -1;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "nfsrdma-server: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 1;
	}
	return 0;
}

/* Load the file into *cfg, printing every problem. Returns 0 if it is valid. */
static int server_load_config(const char *path, struct nfsrdma_config *cfg)
{
	struct config_errors errs;
	int r;

	config_errors_init(&errs);
	r = config_load(path, cfg, &errs);
	config_errors_print(&errs, stderr);
	config_errors_free(&errs);
	return r;
}

/* -t: exit status 0 and "FILE: configuration ok" when valid, else 1. */
static int server_check_config(const char *path)
{
	struct nfsrdma_config cfg;

	if (server_load_config(path, &cfg) < 0)
		return 1;
	fprintf(stderr, "%s: configuration ok\n", path);
	config_free(&cfg);
	return 0;
}

/* Without -t: load the configuration, then say plainly that serving is not built yet. */
static int server_run(const char *path)
{
	struct nfsrdma_config cfg;

	if (server_load_config(path, &cfg) < 0)
		return 1;
	log_open("nfsrdma-server", cfg.log.destination == CFG_LOG_SYSLOG, cfg.log.level);
	log_err("serving NFS is not implemented in this build yet; use -t to check %s", path);
	config_free(&cfg);
	log_close();
	return 1;
}

/* Options, then one of: print defaults, check the file, or run. Exit 2 on bad usage. */
int main(int argc, char **argv)
{
	struct server_opts opts = {0};
	int r = parse_args(argc, argv, &opts);

	if (r != 0)
		return r < 0 ? 0 : 2;
	if (opts.defaults)
		return config_print_defaults(stdout) < 0 ? 1 : 0;
	if (opts.test)
		return server_check_config(opts.config_file);
	return server_run(opts.config_file);
}
