/*
 * fuzz_common.h: what the fuzz targets share (header-only, each target is one
 * program): the NFSv3 and MOUNT programs with procedures that do nothing,
 * and a clock and an abort that say which target gave up.
 */
#ifndef NFSRDMA_T_FUZZ_COMMON_H
#define NFSRDMA_T_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/base/clock.h"
#include "common/nfs/nfs3_xdr.h"
#include "common/nfs/nfs_prog.h"
#include "common/rpc/rpc.h"

/* The procedure: answers an I/O error, whose results (a status and empty
 * attributes) are well formed; a procedure's successful results come from
 * the server itself, not from the wire. */
static inline void fuzz_nothing(struct rpc_req *req, void *args, void *res)
{
	(void)args;
	if ((req->prog == NFS_PROGRAM && req->proc > 0) ||
	    (req->prog == MOUNT_PROGRAM && req->proc == MOUNTPROC3_MNT))
		*(uint32_t *)res = NFS3ERR_IO; /* status first in each; MNT3ERR_IO is the same */
}

/* Add NFSv3 and MOUNT v3 to srv: the wire descriptions with fuzz_nothing,
 * every reply kept, so that the reply cache is fuzzed too; 0 or -errno. */
static inline int fuzz_add_nfs_programs(struct rpc_server *srv)
{
	static struct rpc_proc_desc nfs[NFS3_NPROCS], mnt[MOUNT3_NPROCS], ordma[ORDMA_NPROCS];
	int rc;

	for (unsigned i = 0; i < NFS3_NPROCS + MOUNT3_NPROCS + ORDMA_NPROCS; i++) {
		struct rpc_proc_desc *d;

		if (i < NFS3_NPROCS)
			*(d = &nfs[i]) = nfs3_xdr_procs[i];
		else if (i < NFS3_NPROCS + MOUNT3_NPROCS)
			*(d = &mnt[i - NFS3_NPROCS]) = mount3_xdr_procs[i - NFS3_NPROCS];
		else
			*(d = &ordma[i - NFS3_NPROCS - MOUNT3_NPROCS]) =
				ordma_xdr_procs[i - NFS3_NPROCS - MOUNT3_NPROCS];
		d->fn = fuzz_nothing;
		d->flags = RPC_DESC_REPLY_CACHE;
	}
	rc = rpc_server_add_program(srv, &(struct rpc_program){.prog = NFS_PROGRAM,
							       .vers = NFS_V3,
							       .procs = nfs,
							       .nprocs = NFS3_NPROCS});
	if (rc == 0)
		rc = rpc_server_add_program(srv, &(struct rpc_program){.prog = MOUNT_PROGRAM,
								       .vers = MOUNT_V3,
								       .procs = mnt,
								       .nprocs = MOUNT3_NPROCS});
	/* Optimistic RDMA's side program (common/nfs/ordma_prot.x) */
	return rc ? rc
		  : rpc_server_add_program(srv, &(struct rpc_program){.prog = ORDMA_PROGRAM,
								      .vers = ORDMA_V1,
								      .procs = ordma,
								      .nprocs = ORDMA_NPROCS});
}

/* Monotonic milliseconds, for the targets' deadlines. */
static inline long long fuzz_now_ms(void)
{
	return (long long)(clock_now_ns() / 1000000);
}

/* A target cannot go on: say why, and stop as a crash would. */
static inline void fuzz_die(const char *target, const char *what)
{
	fprintf(stderr, "%s: %s\n", target, what);
	abort();
}

#endif
