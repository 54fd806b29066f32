/*
 * nfs3.h: the NFSv3 and MOUNT v3 procedure tables. The RPC layer decodes the
 * arguments with p->wire->xdr_args into a zeroed args_size buffer, calls
 * p->fn with a zeroed res_size buffer, encodes the result with
 * p->wire->xdr_res, then calls nfs_proc_free_res and frees the arguments with
 * xdr_free(p->wire->xdr_args, args) (after detaching WRITE data it did not
 * malloc). Nothing here touches sockets or verbs. Every procedure checks the
 * export's rules itself (client list, integrity, read-only, squashing).
 */
#ifndef NFSRDMA_NFS3_H
#define NFSRDMA_NFS3_H

#include <stddef.h>
#include <sys/socket.h>

#include "server/backend.h"
#include "common/nfs/mount_prot.h"
#include "common/nfs/nfs3_prot.h"
#include "common/nfs/nfs3_xdr.h"

/* One call as the procedures see it. */
struct nfs_req {
	struct nfs_backend *be;
	const struct sockaddr *client; /* NULL: refused by exports with an access list */
	socklen_t client_len;
	struct nfs_cred cred;
	int integrity_ok;     /* the call carried a valid integrity MIC */
	int secure_transport; /* counts as a privileged port (RPC/RDMA) for 'secure' */
	/* READ: where to put the data. The transport passes a buffer it can send by
	 * RDMA (it stays the transport's: nfs_proc_free_res leaves it alone);
	 * NULL get_buf means malloc. get_buf returns NULL when it has none. */
	void *(*get_buf)(void *opaque, size_t len);
	void *buf_opaque;
	/* Run on an event loop (NFS_PROC_INLINE): nothing may wait on storage. A
	 * procedure that would have to sets would_block and answers anything: the
	 * call is run again, from the start, on a worker. */
	int nowait, would_block;
};

/* The call req of the RPC layer (common/rpc/rpc.h) as backend be sees it:
 * its caller, credential, integrity and transport (no get_buf). */
struct rpc_req;
void nfs_req_from_rpc(struct nfs_backend *be, const struct rpc_req *req, struct nfs_req *out);

/* How the server runs each procedure, by procedure number; how its arguments
 * and results are coded is in its wire description (common/nfs/nfs3_xdr.h). */
struct nfs_proc {
	const struct rpc_proc_desc *wire;
	void (*fn)(struct nfs_req *req, void *args, void *res);
	unsigned flags; /* NFS_PROC_* */
};

/* Cheap: may run on the loop that received it, with req->nowait. */
#define NFS_PROC_INLINE 0x1

extern const struct nfs_proc nfs3_procs[NFS3_NPROCS];
extern const struct nfs_proc mount3_procs[MOUNT3_NPROCS];
/* Optimistic RDMA's side program (server/ordma_proc.c). */
extern const struct nfs_proc ordma_procs[ORDMA_NPROCS];

/* Free what p->fn put in res, after it was encoded. A READ data buffer that
 * req->get_buf supplied is the caller's and is not freed. */
void nfs_proc_free_res(const struct nfs_proc *p, const struct nfs_req *req, void *res);

/* errno -> nfsstat3, for every errno the backend can meet (unknown -> IO). */
nfsstat3 nfs3_errno_to_stat(int err);
/* The name of an nfsstat3, for logs and tests ("NFS3ERR_STALE"). */
const char *nfs3_stat_name(nfsstat3 st);

#endif
