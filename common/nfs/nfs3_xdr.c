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

#define P(n, a, r) {n, (xdrproc_t)xdr_##a, (xdrproc_t)xdr_##r, sizeof(a), sizeof(r)}
#define VOID_ARGS(n, r) {n, (xdrproc_t)xdr_void, (xdrproc_t)xdr_##r, 0, sizeof(r)}

const struct nfs_xdr_proc nfs3_xdr_procs[NFS3_NPROCS] = {
	{"NULL", (xdrproc_t)xdr_void, (xdrproc_t)xdr_void, 0, 0},
	P("GETATTR", GETATTR3args, GETATTR3res),
	P("SETATTR", SETATTR3args, SETATTR3res),
	P("LOOKUP", LOOKUP3args, LOOKUP3res),
	P("ACCESS", ACCESS3args, ACCESS3res),
	P("READLINK", READLINK3args, READLINK3res),
	P("READ", READ3args, READ3res),
	{"WRITE", (xdrproc_t)xdr_WRITE3args_checked, (xdrproc_t)xdr_WRITE3res, sizeof(WRITE3args),
	 sizeof(WRITE3res)},
	P("CREATE", CREATE3args, CREATE3res),
	P("MKDIR", MKDIR3args, MKDIR3res),
	P("SYMLINK", SYMLINK3args, SYMLINK3res),
	P("MKNOD", MKNOD3args, MKNOD3res),
	P("REMOVE", REMOVE3args, REMOVE3res),
	P("RMDIR", RMDIR3args, RMDIR3res),
	P("RENAME", RENAME3args, RENAME3res),
	P("LINK", LINK3args, LINK3res),
	P("READDIR", READDIR3args, READDIR3res),
	P("READDIRPLUS", READDIRPLUS3args, READDIRPLUS3res),
	P("FSSTAT", FSSTAT3args, FSSTAT3res),
	P("FSINFO", FSINFO3args, FSINFO3res),
	P("PATHCONF", PATHCONF3args, PATHCONF3res),
	P("COMMIT", COMMIT3args, COMMIT3res),
};

const struct nfs_xdr_proc mount3_xdr_procs[MOUNT3_NPROCS] = {
	{"NULL", (xdrproc_t)xdr_void, (xdrproc_t)xdr_void, 0, 0},
	P("MNT", dirpath, mountres3),
	VOID_ARGS("DUMP", mountlist),
	{"UMNT", (xdrproc_t)xdr_dirpath, (xdrproc_t)xdr_void, sizeof(dirpath), 0},
	{"UMNTALL", (xdrproc_t)xdr_void, (xdrproc_t)xdr_void, 0, 0},
	VOID_ARGS("EXPORT", mntexports),
};
