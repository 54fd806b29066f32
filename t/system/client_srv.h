/*
 * client_srv.h: an in-process NFSv3 server for the client's tests: the POSIX
 * backend over one export, served over RPC/RDMA (soft provider) and TCP on
 * 127.0.0.1, until the real nfsrdma-server is used instead.
 */
#ifndef NFSRDMA_T_CLIENT_SRV_H
#define NFSRDMA_T_CLIENT_SRV_H

#include <limits.h>

#include "common/rpc/integrity.h"
#include "common/rpc/rpc_tcp.h"
#include "common/rpcrdma/rpcrdma.h"
#include "server/backend.h"

struct csrv_params {
	const char *dir;       /* the export */
	unsigned modes;	       /* RR_MODE_* accepted */
	enum rr_reg reg;       /* server registration */
	const char *rdma_port; /* NULL: a free one; "" : no RDMA listener */
	const char *tcp_port;  /* NULL: a free one; "" : no TCP listener */
	const char *keyfile;   /* accept the integrity flavour with this key */
	int deny;	       /* refuse every client (MOUNT answers MNT3ERR_ACCES) */
	int ro;
	int slow_proc; /* > 0: this NFS procedure waits slow_ms before it runs */
	unsigned slow_ms;
	int slow_after; /* the wait is after it ran: its reply arrives late, not its effect */
	/* > 0: this NFS procedure's results go through mangle after it ran, as a
	 * broken or hostile server would answer (one per process) */
	int mangle_proc;
	void (*mangle)(void *res);
	unsigned op_deadline_ms; /* > 0: the RPC/RDMA server's op_deadline_ms */
	uint64_t ordma_cache;	 /* > 0: the export has ordma, with a cache this big */
};

struct csrv {
	struct nfs_backend *be;
	struct rpc_server *rpc;
	struct rr_server *rr;
	struct tcp_listener *tcp;
	struct integrity_key key;
	char rdma_port[16], tcp_port[16];
	struct rpc_proc_desc nfs_procs[32]; /* the NFS program's, when one is slowed */
};

void csrv_params_init(struct csrv_params *p, const char *dir);
/* Start; 0 or -errno (after a message on stderr). */
int csrv_start(struct csrv *s, const struct csrv_params *p);
void csrv_stop(struct csrv *s);

#endif
