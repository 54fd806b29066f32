/* nfs3_ddp.c: the XDR helpers rpcgen's output calls (see nfs3_ddp.h). */
#include <string.h>

#include "common/rpc/rpc.h"
#include "common/nfs/nfs3_prot.h"

bool_t xdr_nfs3_ddpdata(XDR *xdrs, nfs3_ddpdata *d)
{
	return xdr_ddp_opaque(xdrs, &d->data_val, &d->data_len, NFS3_MAXDATA);
}

bool_t xdr_nfs_string(XDR *xdrs, char **sp, u_int maxsize)
{
	u_int pos, len = 0;

	if (xdrs->x_op != XDR_DECODE) /* xdr_free's stream has no ops: no getpos */
		return xdr_string(xdrs, sp, maxsize);
	/* the length as sent, then the string as xdr_string makes it */
	pos = xdr_getpos(xdrs);
	if (!xdr_u_int(xdrs, &len) || !xdr_setpos(xdrs, pos) || !xdr_string(xdrs, sp, maxsize))
		return FALSE;
	return strlen(*sp) == len;
}
