/*
 * nfs3_ddp.h: the type of NFSv3 READ and WRITE data (DDP-eligible, RFC 8267).
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

#endif
