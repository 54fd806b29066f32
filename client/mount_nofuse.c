/*
 * mount_nofuse.c: the mount verbs of an nfsrdma-client built without libfuse3
 * (configure found none): they say so instead of mounting.
 */
#include <stdio.h>

#include "client/client.h"

/* mount: not available in this build. */
int client_mount_main(int argc, char **argv, int helper)
{
	fprintf(stderr, "nfsrdma-client: built without libfuse3 (Debian: libfuse3-dev): "
			"mounting is not available; bench still is\n");
	return 32;
}

/* umount: not available in this build. */
int client_umount_main(int argc, char **argv)
{
	return client_mount_main(argc, argv, 0);
}
