/* client.h: the verbs of nfsrdma-client, each a main of its own. */
#ifndef NFSRDMA_CLIENT_H
#define NFSRDMA_CLIENT_H

#include <stddef.h>

/* mount [-o OPTIONS] SERVER:/EXPORT DIR; helper: called as mount.nfsrdma. */
int client_mount_main(int argc, char **argv, int helper);
/* umount DIR */
int client_umount_main(int argc, char **argv);
/* bench SERVER:/EXPORT [options] */
int client_bench_main(int argc, char **argv);
/* stats MOUNTPOINT */
int client_stats_main(int argc, char **argv);
/* The control socket of the mount daemon of mnt (absolute): in the system's
 * directory (mounts by root) or the user's; make_dir creates the directory. */
int client_stats_socket(const char *mnt, int system, int make_dir, char *out, size_t len);

#endif
