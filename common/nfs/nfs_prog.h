/* nfs_prog.h: the RPC program and version numbers of NFSv3 and MOUNT v3,
 * which client and server share. */
#ifndef NFSRDMA_NFS_PROG_H
#define NFSRDMA_NFS_PROG_H

#define NFS_PROGRAM   100003
#define NFS_V3	      3
#define MOUNT_PROGRAM 100005
#define MOUNT_V3      3

#endif
