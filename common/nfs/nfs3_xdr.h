/*
 * nfs3_xdr.h: the XDR routines of every NFSv3 and MOUNT v3 procedure, by
 * procedure number (RFC 1813), for whatever needs them by number: the fuzz
 * targets of the server's argument decoding and the client's result decoding.
 */
#ifndef NFSRDMA_NFS3_XDR_H
#define NFSRDMA_NFS3_XDR_H

#include <stddef.h>

#include "common/nfs/mount_prot.h"
#include "common/nfs/nfs3_prot.h"

#define NFS3_NPROCS   22
#define MOUNT3_NPROCS 6

struct nfs_xdr_proc {
	const char *name;
	xdrproc_t xdr_args, xdr_res;
	size_t args_size, res_size;
};

extern const struct nfs_xdr_proc nfs3_xdr_procs[NFS3_NPROCS];
/* WRITE3args whose stable_how is one RFC 1813 defines: any other value makes
 * the decoding fail (GARBAGE_ARGS), as the Linux server answers, rather than
 * be taken as FILE_SYNC or anything else. */
bool_t xdr_WRITE3args_checked(XDR *xdrs, WRITE3args *a);
extern const struct nfs_xdr_proc mount3_xdr_procs[MOUNT3_NPROCS];

#endif
