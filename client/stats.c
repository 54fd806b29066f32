/*
 * stats.c: `nfsrdma-client stats MOUNTPOINT`, what mountstats(8) shows for a
 * kernel mount: each mount daemon answers "stats" on a control socket of its
 * own, named after its mount point, in /run/nfsrdma-client (mounts by root) or
 * in the user's runtime directory; the answer starts with the mount point, so
 * that a socket left by another mount is never taken for this one.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/client.h"
#include "common/base/cli.h"
#include "common/base/ctl.h"

#define ME "nfsrdma-client stats"

/* FNV-1a: the socket's name from the mount point's absolute path. */
static uint64_t path_hash(const char *s)
{
	uint64_t h = 14695981039346656037ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* The directory of the sockets of mounts made by root (system) or by this user. */
static void sock_dir(int system, char *out, size_t len)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	if (system)
		snprintf(out, len, "/run/nfsrdma-client");
	else if (xdg && *xdg == '/')
		snprintf(out, len, "%s/nfsrdma-client", xdg);
	else
		snprintf(out, len, "/tmp/nfsrdma-client-%u", (unsigned)geteuid());
}

/* See client.h. */
int client_stats_socket(const char *mnt, int system, int make_dir, char *out, size_t len)
{
	char dir[PATH_MAX];

	sock_dir(system, dir, sizeof(dir));
	if (make_dir && mkdir(dir, system ? 0755 : 0700) != 0 && errno != EEXIST)
		return -errno;
	if ((size_t)snprintf(out, len, "%s/%016llx.sock", dir,
			     (unsigned long long)path_hash(mnt)) >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* Ask the socket of mnt (system's or the user's); the answer without its first
 * line, or NULL if no daemon there serves mnt. */
static char *ask(const char *mnt, int system)
{
	char path[PATH_MAX], first[PATH_MAX + 16], *buf = NULL, *nl;
	size_t size = 0;
	FILE *m;

	if (client_stats_socket(mnt, system, 0, path, sizeof(path)) != 0 ||
	    !(m = open_memstream(&buf, &size)))
		return NULL;
	if (ctl_query(path, "stats", m) != 0) {
		fclose(m);
		free(buf);
		return NULL;
	}
	fclose(m);
	snprintf(first, sizeof(first), "mount: %s\n", mnt);
	if (!buf || strncmp(buf, first, strlen(first)) != 0 || !(nl = strchr(buf, '\n'))) {
		free(buf);
		return NULL;
	}
	memmove(buf, nl + 1, strlen(nl + 1) + 1);
	return buf;
}

/* See client.h. */
int client_stats_main(int argc, char **argv)
{
	static const struct option longs[] = {{"help", no_argument, NULL, 'h'},
					      {"version", no_argument, NULL, 'V'},
					      {NULL, 0, NULL, 0}};
	char mnt[PATH_MAX], *text;
	int ch;

	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "hV", longs, NULL)) != -1) {
		if (ch == 'h') {
			printf("usage: " ME " DIR\n"
			       "Prints the mount's transport, settings and counters, and per NFS\n"
			       "procedure its calls, errors and times. See nfsrdma-client(8).\n");
			return 0;
		}
		if (ch == 'V') {
			cli_version("nfsrdma-client");
			return 0;
		}
		return cli_getopt_error(ME, ch, argv);
	}
	if (argc - optind < 1)
		return cli_usage_error(ME, "DIR is needed");
	if (argc - optind > 1)
		return cli_usage_error(ME, "unexpected argument '%s'", argv[optind + 1]);
	if (!realpath(argv[optind], mnt)) {
		fprintf(stderr, ME ": %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}
	if (!(text = ask(mnt, 1)) && !(text = ask(mnt, 0))) {
		fprintf(stderr, ME ": %s: no nfsrdma-client mount answers there\n", mnt);
		return 1;
	}
	printf("mount: %s\n%s", mnt, text);
	free(text);
	return 0;
}
