/*
 * nfs3_ddp.h: the XDR helpers rpcgen's output calls: the type of NFSv3 READ
 * and WRITE data (DDP-eligible, RFC 8267), and strings.
 * Its XDR routine goes through xdr_ddp_opaque (common/rpc/rpc.h): decoding points
 * data_val into the message or a chunk buffer and allocates nothing; freeing
 * frees nothing, so whoever set data_val owns it.
 */
#ifndef NFSRDMA_NFS3_DDP_H
#define NFSRDMA_NFS3_DDP_H

#include <rpc/rpc.h>

typedef struct {
	u_int data_len;
	char *data_val;
} nfs3_ddpdata;

bool_t xdr_nfs3_ddpdata(XDR *xdrs, nfs3_ddpdata *d);

/* Every string of NFSv3 and MOUNT v3 (names, paths) goes through this instead
 * of xdr_string (mk/nfs.mk rewrites rpcgen's output so): the same, except that
 * decoding refuses a string with a NUL byte inside, which as a C string would
 * be another, shorter name (the Linux server refuses it too). */
bool_t xdr_nfs_string(XDR *xdrs, char **sp, u_int maxsize);

#endif
