/* nfs3_ddp.c: XDR of NFSv3 READ/WRITE data through the transport's DDP hook. */
#include "common/rpc/rpc.h"
#include "common/nfs/nfs3_prot.h"

bool_t xdr_nfs3_ddpdata(XDR *xdrs, nfs3_ddpdata *d)
{
	return xdr_ddp_opaque(xdrs, &d->data_val, &d->data_len, NFS3_MAXDATA);
}
