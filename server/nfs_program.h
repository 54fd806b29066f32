/* nfs_program.h: NFSv3 and MOUNT v3 as RPC programs of an rpc_server. */
#ifndef NFSRDMA_NFS_PROGRAM_H
#define NFSRDMA_NFS_PROGRAM_H

#include "common/nfs/nfs_prog.h"
#include "common/rpc/rpc.h"
#include "common/rpcrdma/rpcrdma.h"
#include "server/backend.h"

/* Serve be's exports through srv: NFS program 100003 v3 and MOUNT 100005 v3. */
int nfs_programs_register(struct rpc_server *srv, struct nfs_backend *be);
/* The same two programs, not yet added: for a caller that wraps procedures
 * (tests). Their procedure tables are shared by the whole process. */
void nfs_programs_describe(struct nfs_backend *be, struct rpc_program *nfs,
			   struct rpc_program *mnt);
/* Optimistic RDMA (issue 23): a block cache of `bytes` in blocks of `block`,
 * exposed read-only to the clients of rr, given to be (nfs_backend_set_ordma),
 * and its side program (common/nfs/ordma_prot.x) served through srv. 0, or
 * -errno after logging what failed. */
struct rr_server;
int nfs_ordma_start(struct rpc_server *srv, struct rr_server *rr, struct nfs_backend *be,
		    uint64_t bytes, uint32_t block);

#endif
