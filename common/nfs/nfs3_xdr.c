/* nfs3_xdr.c: see nfs3_xdr.h. */
#include "common/nfs/nfs3_xdr.h"

/* See nfs3_xdr.h. */
bool_t xdr_WRITE3args_checked(XDR *xdrs, WRITE3args *a)
{
	if (!xdr_WRITE3args(xdrs, a))
		return FALSE;
	return xdrs->x_op != XDR_DECODE || a->stable == UNSTABLE || a->stable == DATA_SYNC ||
	       a->stable == FILE_SYNC;
}

/* See nfs3_xdr.h. */
bool_t nfs_xdr_void(XDR *xdrs, void *unused)
{
	(void)xdrs;
	(void)unused;
	return TRUE;
}

#define XDR_OF(t) ((xdrproc_t)xdr_##t)
#define PROC(n, a, r, fl)                                                                          \
	{                                                                                          \
		.name = n, .xdr_args = XDR_OF(a), .xdr_res = XDR_OF(r), .args_size = sizeof(a),    \
		.res_size = sizeof(r), .flags = fl                                                 \
	}
#define NO_ARGS(n, r, fl)                                                                          \
	{                                                                                          \
		.name = n, .xdr_args = (xdrproc_t)nfs_xdr_void, .xdr_res = XDR_OF(r),              \
		.res_size = sizeof(r), .flags = fl                                                 \
	}
#define NO_RES(n, a, fl)                                                                           \
	{                                                                                          \
		.name = n, .xdr_args = XDR_OF(a), .xdr_res = (xdrproc_t)nfs_xdr_void,              \
		.args_size = sizeof(a), .flags = fl                                                \
	}
#define VOID(n, fl)                                                                                \
	{                                                                                          \
		.name = n, .xdr_args = (xdrproc_t)nfs_xdr_void,                                    \
		.xdr_res = (xdrproc_t)nfs_xdr_void, .flags = fl                                    \
	}
#define KEEP RPC_DESC_REPLY_CACHE

const struct rpc_proc_desc nfs3_xdr_procs[NFS3_NPROCS] = {
	VOID("NULL", 0),
	PROC("GETATTR", GETATTR3args, GETATTR3res, 0),
	PROC("SETATTR", SETATTR3args, SETATTR3res, KEEP),
	PROC("LOOKUP", LOOKUP3args, LOOKUP3res, 0),
	PROC("ACCESS", ACCESS3args, ACCESS3res, 0),
	PROC("READLINK", READLINK3args, READLINK3res, 0),
	PROC("READ", READ3args, READ3res, 0),
	{.name = "WRITE",
	 .xdr_args = (xdrproc_t)xdr_WRITE3args_checked,
	 .xdr_res = XDR_OF(WRITE3res),
	 .args_size = sizeof(WRITE3args),
	 .res_size = sizeof(WRITE3res),
	 .flags = KEEP},
	PROC("CREATE", CREATE3args, CREATE3res, KEEP),
	PROC("MKDIR", MKDIR3args, MKDIR3res, KEEP),
	PROC("SYMLINK", SYMLINK3args, SYMLINK3res, KEEP),
	PROC("MKNOD", MKNOD3args, MKNOD3res, KEEP),
	PROC("REMOVE", REMOVE3args, REMOVE3res, KEEP),
	PROC("RMDIR", RMDIR3args, RMDIR3res, KEEP),
	PROC("RENAME", RENAME3args, RENAME3res, KEEP),
	PROC("LINK", LINK3args, LINK3res, KEEP),
	PROC("READDIR", READDIR3args, READDIR3res, 0),
	PROC("READDIRPLUS", READDIRPLUS3args, READDIRPLUS3res, 0),
	PROC("FSSTAT", FSSTAT3args, FSSTAT3res, 0),
	PROC("FSINFO", FSINFO3args, FSINFO3res, 0),
	PROC("PATHCONF", PATHCONF3args, PATHCONF3res, 0),
	PROC("COMMIT", COMMIT3args, COMMIT3res, 0),
};

const struct rpc_proc_desc mount3_xdr_procs[MOUNT3_NPROCS] = {
	VOID("NULL", 0),
	PROC("MNT", dirpath, mountres3, KEEP),
	NO_ARGS("DUMP", mountlist, 0),
	NO_RES("UMNT", dirpath, KEEP),
	VOID("UMNTALL", KEEP),
	NO_ARGS("EXPORT", mntexports, 0),
};

const struct rpc_proc_desc ordma_xdr_procs[ORDMA_NPROCS] = {
	VOID("NULL", 0),
	PROC("MAP", ORDMAMAP3args, ORDMAMAP3res, 0),
};
