/* nfs_program.h: NFSv3 and MOUNT v3 as RPC programs of an rpc_server. */
#ifndef NFSRDMA_NFS_PROGRAM_H
#define NFSRDMA_NFS_PROGRAM_H

#include "common/nfs/nfs_prog.h"
#include "common/rpc/rpc.h"
#include "server/backend.h"

/* Serve be's exports through srv: NFS program 100003 v3 and MOUNT 100005 v3. */
int nfs_programs_register(struct rpc_server *srv, struct nfs_backend *be);
/* The same two programs, not yet added: for a caller that wraps procedures
 * (tests). Their procedure tables are shared by the whole process. */
void nfs_programs_describe(struct nfs_backend *be, struct rpc_program *nfs,
			   struct rpc_program *mnt);

#endif
