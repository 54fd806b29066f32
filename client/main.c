/*
 * main.c: nfsrdma-client, the NFSv3 over RPC/RDMA client agent: picks the verb
 * (mount, umount, bench), or acts as mount.nfsrdma when called by that name.
 */
#include <stdio.h>
#include <string.h>

#include "client/client.h"
#include "common/base/cli.h"
#include "common/base/osdep.h"

/* The verbs, for usage messages. */
static void usage(FILE *f)
{
	fprintf(f, "usage: nfsrdma-client mount [-o OPTIONS] SERVER:/EXPORT DIR\n"
		   "       nfsrdma-client umount DIR\n"
		   "       nfsrdma-client bench SERVER:/EXPORT [OPTIONS]\n"
		   "       nfsrdma-client stats DIR\n"
		   "       nfsrdma-client VERB --help\n"
		   "       nfsrdma-client --help | --version\n"
		   "See nfsrdma-client(8).\n");
}

/* Dispatch on the verb, or act as mount.nfsrdma when called so. */
int main(int argc, char **argv)
{
	const char *me = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];

	osdep_malloc_keep(1u << 20); /* rsize and wsize are at most 1 MiB */
	if (strcmp(me, "mount.nfsrdma") == 0)
		return client_mount_main(argc, argv, 1);
	if (argc < 2)
		return cli_usage_error("nfsrdma-client",
				       "no verb given (mount, umount, bench or stats)");
	if (strcmp(argv[1], "mount") == 0)
		return client_mount_main(argc - 1, argv + 1, 0);
	if (strcmp(argv[1], "umount") == 0 || strcmp(argv[1], "unmount") == 0)
		return client_umount_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "bench") == 0)
		return client_bench_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "stats") == 0)
		return client_stats_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0) {
		cli_version("nfsrdma-client");
		return 0;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(stdout);
		return 0;
	}
	if (argv[1][0] == '-')
		return cli_usage_error("nfsrdma-client", "unknown option '%s'", argv[1]);
	return cli_usage_error("nfsrdma-client", "unknown verb '%s'", argv[1]);
}
