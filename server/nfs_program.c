/*
 * nfs_program.c: the glue between the RPC layer (struct rpc_req, any transport)
 * and the backend's procedure tables (struct nfs_req). One generic function per
 * program picks the procedure by number; the transport's bulk buffer (get_buf)
 * is handed through, so READ data lands where RDMA can send it.
 */
#include <string.h>

#include "common/base/log.h"
#include "server/ordma_cache.h"

#include "server/nfs3.h"
#include "server/nfs_program.h"

/* The caller as the backend sees it. */
static void *glue_get_buf(void *opaque, size_t len)
{
	struct rpc_req *r = opaque;

	return r->get_buf ? r->get_buf(r, len) : NULL;
}

static void to_nfs_req(struct rpc_req *r, struct nfs_req *n)
{
	nfs_req_from_rpc(r->prog_ctx, r, n);
	n->get_buf = r->get_buf ? glue_get_buf : NULL;
	n->buf_opaque = r;
}

/* The backend's procedure for a call of either program. */
static const struct nfs_proc *proc_of(const struct rpc_req *r)
{
	if (r->prog == ORDMA_PROGRAM)
		return &ordma_procs[r->proc];
	return r->prog == MOUNT_PROGRAM ? &mount3_procs[r->proc] : &nfs3_procs[r->proc];
}

static void glue_run(struct rpc_req *r, void *args, void *res)
{
	struct nfs_req n;

	to_nfs_req(r, &n);
	if (!n.nowait) {
		nfs_backend_enter(n.be);
	} else if (!nfs_backend_try_enter(n.be)) {
		r->would_block = 1; /* a reload: not on the loop, wait on a worker */
		return;
	}
	proc_of(r)->fn(&n, args, res);
	r->would_block |= n.would_block;
	nfs_backend_leave(n.be);
}

/* Whether a call of proc may run on the loop that received it (rpc.h). */
static int nfs3_may_inline(void *ctx, uint32_t proc)
{
	return proc < NFS3_NPROCS && (nfs3_procs[proc].flags & NFS_PROC_INLINE) &&
	       nfs_backend_may_inline(ctx);
}

/* Freeing needs to know only whose the READ buffer is. */
static void glue_free(struct rpc_req *r, void *res)
{
	struct nfs_req n = {.get_buf = r->get_buf ? glue_get_buf : NULL, .buf_opaque = r};

	nfs_proc_free_res(proc_of(r), &n, res);
}

static struct rpc_proc_desc nfs3_rpc[NFS3_NPROCS];
static struct rpc_proc_desc mount3_rpc[MOUNT3_NPROCS];
static struct rpc_proc_desc ordma_rpc[ORDMA_NPROCS];

/* Describe a backend table to the RPC layer: each procedure's wire
 * description, run through the glue. */
static void fill(struct rpc_proc_desc *out, const struct nfs_proc *in, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		out[i] = *in[i].wire;
		out[i].fn = in[i].fn ? glue_run : NULL;
		out[i].free_res = glue_free;
	}
}

/* A peer that no export takes calls from gets nothing fetched for it. */
static int peer_known(void *ctx, const struct sockaddr *peer)
{
	return nfs_backend_peer_known(ctx, peer);
}

void nfs_programs_describe(struct nfs_backend *be, struct rpc_program *nfs, struct rpc_program *mnt)
{
	fill(nfs3_rpc, nfs3_procs, NFS3_NPROCS);
	fill(mount3_rpc, mount3_procs, MOUNT3_NPROCS);
	*nfs = (struct rpc_program){.prog = NFS_PROGRAM,
				    .vers = NFS_V3,
				    .procs = nfs3_rpc,
				    .nprocs = NFS3_NPROCS,
				    .ctx = be,
				    .peer_ok = peer_known,
				    .may_inline = nfs3_may_inline};
	*mnt = (struct rpc_program){.prog = MOUNT_PROGRAM,
				    .vers = MOUNT_V3,
				    .procs = mount3_rpc,
				    .nprocs = MOUNT3_NPROCS,
				    .ctx = be};
}

int nfs_programs_register(struct rpc_server *srv, struct nfs_backend *be)
{
	struct rpc_program nfs, mnt;
	int rc;

	nfs_programs_describe(be, &nfs, &mnt);
	rc = rpc_server_add_program(srv, &nfs);
	return rc ? rc : rpc_server_add_program(srv, &mnt);
}

/* Whether a call of the side program may run on the loop (both may). */
static int ordma_may_inline(void *ctx, uint32_t proc)
{
	return proc < ORDMA_NPROCS && nfs_backend_may_inline(ctx);
}

/* Serve the side program (common/nfs/ordma_prot.x). */
static int register_ordma(struct rpc_server *srv, struct nfs_backend *be)
{
	struct rpc_program p;

	fill(ordma_rpc, ordma_procs, ORDMA_NPROCS);
	p = (struct rpc_program){.prog = ORDMA_PROGRAM,
				 .vers = ORDMA_V1,
				 .procs = ordma_rpc,
				 .nprocs = ORDMA_NPROCS,
				 .ctx = be,
				 .peer_ok = peer_known,
				 .may_inline = ordma_may_inline};
	return rpc_server_add_program(srv, &p);
}

int nfs_ordma_start(struct rpc_server *srv, struct rr_server *rr, struct nfs_backend *be,
		    uint64_t bytes, uint32_t block)
{
	struct ordma_cache *oc;
	uint32_t rkey;
	size_t len;
	void *mem;
	int rc;

	if ((rc = ordma_cache_create(bytes, block, &oc)) != 0) {
		log_err("server.ordma.cache: no cache of %llu bytes in blocks of %u: %s",
			(unsigned long long)bytes, block, strerror(-rc));
		return rc;
	}
	mem = ordma_cache_mem(oc, &len);
	if ((rc = rr_server_expose(rr, mem, len, &rkey)) != 0) {
		log_err("server.ordma.cache: the RDMA provider cannot register %zu bytes: %s", len,
			strerror(-rc));
		ordma_cache_destroy(oc);
		return rc;
	}
	if ((rc = nfs_backend_set_ordma(be, oc, rkey)) != 0) {
		ordma_cache_destroy(oc); /* rr keeps its registration until it goes */
		return rc;
	}
	if ((rc = register_ordma(srv, be)) != 0)
		return rc;
	log_notice("Optimistic RDMA: a cache of %zu bytes in blocks of %u, readable by every "
		   "RPC/RDMA client",
		   len, block);
	return 0;
}
