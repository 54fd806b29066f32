/* client_srv.c: see client_srv.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/base/net.h"
#include "server/nfs_program.h"
#include "t/system/client_srv.h"

/* See client_srv.h. */
void csrv_params_init(struct csrv_params *p, const char *dir)
{
	memset(p, 0, sizeof(*p));
	p->dir = dir;
	p->modes = RR_MODE_READ_WRITE | RR_MODE_READ_READ;
	p->reg = RR_REG_DYNAMIC;
}

/* The export's access list for deny: nobody. */
static int deny_all(const void *acl, const struct sockaddr *sa)
{
	return 0;
}

/* The RPC/RDMA parameters of the test server: soft, small arenas. */
static void rdma_params(const struct csrv_params *p, struct rr_params *rp)
{
	rr_params_defaults_for(RR_ROLE_SERVER, rp);
	rp->provider = "soft";
	rp->modes = p->modes;
	rp->reg = p->reg;
	rp->credits = 32;
	rp->trusted_peers = 1;
	rp->arena_size = 64u << 20;
	rp->cache_budget = 64u << 20;
	rp->mem_budget = 1u << 30;
	if (p->op_deadline_ms)
		rp->op_deadline_ms = p->op_deadline_ms;
}

/* The slowed procedure: one per process (the procedure tables are too). */
static void (*slow_fn)(struct rpc_req *req, void *args, void *res);
static unsigned slow_ms;
static int slow_after;

/* It blocks: on an event loop (server.inline_calls) it says so, and the call
 * is run again on a worker, as a backend that may block must. */
static void slowed(struct rpc_req *req, void *args, void *res)
{
	if (req->nowait) {
		req->would_block = 1;
		return;
	}
	if (!slow_after)
		usleep(slow_ms * 1000u);
	slow_fn(req, args, res);
	if (slow_after)
		usleep(slow_ms * 1000u);
}

/* The mangled procedure: one per process as well. */
static void (*mangle_fn)(struct rpc_req *req, void *args, void *res);
static void (*mangle_res)(void *res);

static void mangled(struct rpc_req *req, void *args, void *res)
{
	mangle_fn(req, args, res);
	mangle_res(res);
}

/* NFS and MOUNT, with p->slow_proc made slow and p->mangle_proc mangled if asked. */
static int add_programs(struct csrv *s, const struct csrv_params *p)
{
	struct rpc_program nfs, mnt;
	int rc;

	nfs_programs_describe(s->be, &nfs, &mnt);
	if (nfs.nprocs > sizeof(s->nfs_procs) / sizeof(s->nfs_procs[0]))
		return -E2BIG;
	memcpy(s->nfs_procs, nfs.procs, nfs.nprocs * sizeof(*nfs.procs));
	nfs.procs = s->nfs_procs;
	if (p->slow_proc > 0 && (uint32_t)p->slow_proc < nfs.nprocs) {
		slow_fn = s->nfs_procs[p->slow_proc].fn;
		slow_ms = p->slow_ms;
		slow_after = p->slow_after;
		s->nfs_procs[p->slow_proc].fn = slowed;
	}
	if (p->mangle_proc > 0 && (uint32_t)p->mangle_proc < nfs.nprocs && p->mangle) {
		mangle_fn = s->nfs_procs[p->mangle_proc].fn;
		mangle_res = p->mangle;
		s->nfs_procs[p->mangle_proc].fn = mangled;
	}
	rc = rpc_server_add_program(s->rpc, &nfs);
	return rc ? rc : rpc_server_add_program(s->rpc, &mnt);
}

/* Listen on port (or a free one) into out; "" means not at all. */
static int listen_on(struct csrv *s, const char *port, int rdma, char *out)
{
	struct rpc_tcp_params tp = {
		.max_record = (1u << 20) + 65536, .max_reply = 65536, .max_inflight = 64};

	if (port && !*port)
		return 0;
	snprintf(out, 16, "%d", port ? atoi(port) : net_free_port());
	if (!rdma)
		return rpc_tcp_listen(s->rpc, "127.0.0.1", out, &tp, &s->tcp);
	return rr_server_listen(s->rr, "127.0.0.1", out);
}

/* See client_srv.h. */
int csrv_start(struct csrv *s, const struct csrv_params *p)
{
	struct nfs_export_conf ec = {.path = p->dir,
				     .anon_uid = 65534,
				     .anon_gid = 65534,
				     .ro = p->ro,
				     .ordma = p->ordma_cache > 0};
	/* cheap calls on the loops, as the daemon does by default */
	struct rpc_server_params sp = {.threads = 8, .drc_entries = 1024, .inline_calls = 1};
	struct rr_params rp;
	char err[256];
	int rc;

	memset(s, 0, sizeof(*s));
	if (p->deny)
		ec.client_allowed = deny_all;
	if (p->keyfile) {
		if ((rc = integrity_key_load(p->keyfile, &s->key, err, sizeof(err))) != 0) {
			fprintf(stderr, "client_srv: %s\n", err);
			return rc;
		}
		sp.key = &s->key;
	}
	rdma_params(p, &rp);
	if ((rc = nfs_backend_create(&ec, 1, 1u << 20, &s->be)) != 0 ||
	    (rc = nfs_backend_set_handle_key(s->be, "client_srv: handles outlive it..", 32)) != 0 ||
	    (rc = rpc_server_create(&sp, &s->rpc)) != 0 || (rc = add_programs(s, p)) != 0 ||
	    (rc = rr_server_create(s->rpc, &rp, &s->rr)) != 0 ||
	    (p->ordma_cache &&
	     (rc = nfs_ordma_start(s->rpc, s->rr, s->be, p->ordma_cache, 4096)) != 0) ||
	    (rc = listen_on(s, p->rdma_port, 1, s->rdma_port)) != 0 ||
	    (rc = listen_on(s, p->tcp_port, 0, s->tcp_port)) != 0) {
		fprintf(stderr, "client_srv: cannot start: %s\n", strerror(-rc));
		csrv_stop(s);
		return rc;
	}
	return 0;
}

/* See client_srv.h. */
void csrv_stop(struct csrv *s)
{
	if (s->tcp)
		rpc_tcp_stop(s->tcp);
	if (s->rr)
		rr_server_destroy(s->rr);
	if (s->rpc)
		rpc_server_destroy(s->rpc);
	nfs_backend_destroy(s->be);
	if (s->key.len)
		integrity_key_clear(&s->key);
	memset(s, 0, sizeof(*s));
}
