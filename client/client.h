/* client.h: the verbs of nfsrdma-client, each a main of its own. */
#ifndef NFSRDMA_CLIENT_H
#define NFSRDMA_CLIENT_H

/* mount [-o OPTIONS] SERVER:/EXPORT DIR; helper: called as mount.nfsrdma. */
int client_mount_main(int argc, char **argv, int helper);
/* umount DIR */
int client_umount_main(int argc, char **argv);
/* bench SERVER:/EXPORT [options] */
int client_bench_main(int argc, char **argv);

#endif
