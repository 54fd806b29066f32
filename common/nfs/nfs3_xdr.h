/*
 * nfs3_xdr.h: how every NFSv3 and MOUNT v3 procedure is coded on the wire, by
 * procedure number (RFC 1813): its name, XDR routines and sizes, and whether
 * replaying it would do harm (its replies are then kept for retransmissions,
 * RPC_DESC_REPLY_CACHE). These are struct rpc_proc_desc without a procedure:
 * the server adds its own (server/nfs_program.c), the fuzz targets theirs,
 * and the client names procedures in its statistics by them.
 */
#ifndef NFSRDMA_NFS3_XDR_H
#define NFSRDMA_NFS3_XDR_H

#include <stddef.h>

#include "common/nfs/mount_prot.h"
#include "common/nfs/nfs3_prot.h"
#include "common/nfs/ordma_prot.h"
#include "common/rpc/rpc.h"

#define NFS3_NPROCS   22
#define MOUNT3_NPROCS 6
#define ORDMA_NPROCS  2 /* Optimistic RDMA's side program (ordma_prot.x) */

extern const struct rpc_proc_desc nfs3_xdr_procs[NFS3_NPROCS];
extern const struct rpc_proc_desc mount3_xdr_procs[MOUNT3_NPROCS];
extern const struct rpc_proc_desc ordma_xdr_procs[ORDMA_NPROCS];

/* WRITE3args whose stable_how is one RFC 1813 defines: any other value makes
 * the decoding fail (GARBAGE_ARGS), as the Linux server answers, rather than
 * be taken as FILE_SYNC or anything else. */
bool_t xdr_WRITE3args_checked(XDR *xdrs, WRITE3args *a);

/* The XDR routine of an empty argument or result (tirpc's xdr_void takes no
 * arguments, so it cannot be cast to xdrproc_t cleanly). */
bool_t nfs_xdr_void(XDR *xdrs, void *unused);

#endif
