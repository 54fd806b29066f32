/*
 * nfs3_clnt_mount.c: mounting and unmounting: check the server name, make the
 * first connection (failing at once, with a message that says why), find
 * MOUNT (the NFS connection over RDMA; over TCP the mountport option, else
 * rpcbind, else the NFS port, where nfsrdma-server serves MOUNT too), MNT the
 * export, and size transfers from FSINFO.
 */
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <rpc/rpc.h>

#include "client/nfs3_clnt_int.h"
#include "common/base/log.h"
#include "common/base/net.h"
#include "common/rpc/rpcb.h"
#include "common/rpc/rpc_tcp.h"
#include "common/nfs/nfs_prog.h"

#define MIN_IO		  4096u /* the smallest transfer size we use */
#define RPCBIND_TIMEOUT	  3000
#define UMOUNT_TIMEOUT_MS 3000 /* the most UMNT waits (less if timeo is less) */

static const struct {
	mountstat3 st;
	const char *name, *what;
} mnt_errs[] = {
	{MNT3ERR_PERM, "MNT3ERR_PERM", "not permitted"},
	{MNT3ERR_NOENT, "MNT3ERR_NOENT", "no such export"},
	{MNT3ERR_IO, "MNT3ERR_IO", "I/O error on the server"},
	{MNT3ERR_ACCES, "MNT3ERR_ACCES", "this client is not allowed to mount it"},
	{MNT3ERR_NOTDIR, "MNT3ERR_NOTDIR", "not a directory"},
	{MNT3ERR_INVAL, "MNT3ERR_INVAL", "invalid argument"},
	{MNT3ERR_NAMETOOLONG, "MNT3ERR_NAMETOOLONG", "path too long"},
	{MNT3ERR_NOTSUPP, "MNT3ERR_NOTSUPP", "operation not supported"},
	{MNT3ERR_SERVERFAULT, "MNT3ERR_SERVERFAULT", "server fault"},
};

/* Words for a MOUNT status. */
static void mnt_err_str(mountstat3 st, char *buf, size_t len)
{
	for (size_t i = 0; i < sizeof(mnt_errs) / sizeof(mnt_errs[0]); i++) {
		if (mnt_errs[i].st == st) {
			snprintf(buf, len, "%s (%s)", mnt_errs[i].name, mnt_errs[i].what);
			return;
		}
	}
	snprintf(buf, len, "MOUNT status %d", (int)st);
}

/* The server's name must resolve (the soft provider's "unix:" paths aside). */
static int check_host(const char *host, char *err, size_t errlen)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res;
	int rc;

	if (strncmp(host, "unix:", 5) == 0)
		return 0;
	rc = getaddrinfo(host, NULL, &hints, &res);
	if (rc) {
		snprintf(err, errlen, "cannot resolve server name '%s': %s", host,
			 gai_strerror(rc));
		return -EHOSTUNREACH;
	}
	freeaddrinfo(res);
	return 0;
}

/* Ask rpcbind (over TCP) at each address of host in turn for prog/vers's TCP
 * port: the portmapper's GETPORT over IPv4, RPCB GETADDR over IPv6 (rpcb.h).
 * The port and the address that answered (numeric, so that the MOUNT
 * connection goes where the port is) into port and addr. */
static int rpcbind_port(const char *host, uint32_t prog, uint32_t vers, char *port, size_t len,
			char *addr, size_t addrlen)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res, *ai;
	int rc = -ENOENT;

	if (getaddrinfo(host, NULL, &hints, &res) != 0)
		return -EHOSTUNREACH;
	for (ai = res; ai && rc != 0; ai = ai->ai_next) {
		unsigned got;

		if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
			continue;
		net_host_str(ai->ai_addr, addr, addrlen);
		got = rpcb_getport(addr, ai->ai_family, prog, vers, IPPROTO_TCP, RPCBIND_TIMEOUT);
		snprintf(port, len, "%u", got);
		rc = got ? 0 : -ENOENT;
	}
	freeaddrinfo(res);
	return rc;
}

/* Whether MOUNT goes over the NFS connection itself. */
static int mount_shared(const struct nfs3c *c)
{
	return c->p.proto == NFS3C_PROTO_RDMA && c->p.mountproto == NFS3C_PROTO_RDMA &&
	       (!c->mountport || strcmp(c->mountport, c->port) == 0);
}

/* A separate connection to MOUNT; *where says which, for messages. */
static int mount_connect(struct nfs3c *c, struct rpc_clnt **out, char *where, size_t len)
{
	char port[16], addr[NET_HOST_STRLEN];
	const char *host = c->host;
	struct rr_params rp = c->p.rr;
	int rc;

	if (c->p.proto == NFS3C_PROTO_RDMA && c->p.mountproto == NFS3C_PROTO_RDMA) {
		snprintf(where, len, "%s:%s (rdma)", c->host, c->mountport);
		rp.connect_timeout_ms = c->p.connect_timeout_ms;
		rc = rr_clnt_create(&rp, c->host, c->mountport, out);
	} else {
		if (c->mountport)
			snprintf(port, sizeof(port), "%s", c->mountport);
		else if (rpcbind_port(c->host, MOUNT_PROGRAM, MOUNT_V3, port, sizeof(port), addr,
				      sizeof(addr)) == 0)
			host = addr;
		else
			snprintf(port, sizeof(port), "%s",
				 c->p.proto == NFS3C_PROTO_TCP ? c->port : NFS3C_TCP_PORT);
		snprintf(where, len, "%s:%s (tcp)", c->host, port);
		rc = rpc_tcp_clnt_create(host, port, c->p.connect_timeout_ms, 65536, out);
	}
	if (rc == 0) {
		(*out)->cred = c->p.cred;
		(*out)->key = c->p.key;
	}
	return rc;
}

/* One MOUNT call, over the NFS connection or a connection of its own. */
static int mount_call(struct nfs3c *c, uint32_t proc, xdrproc_t xa, void *args, xdrproc_t xr,
		      void *res, int timeout_ms, char *err, size_t errlen)
{
	struct rpc_call call = {.prog = MOUNT_PROGRAM,
				.vers = MOUNT_V3,
				.proc = proc,
				.xdr_args = xa,
				.args = args,
				.xdr_res = xr,
				.res = res,
				.timeout_ms = timeout_ms};
	struct nfs3c_conn *cn = NULL;
	struct rpc_clnt *rpc;
	char where[300];
	int rc;

	if (mount_shared(c)) {
		snprintf(where, sizeof(where), "%s:%s (rdma)", c->host, c->port);
		if ((rc = nfs3c_conn_get(c, nfs3c_now_ms() + (uint64_t)timeout_ms, &cn)) != 0)
			goto out;
		rpc = cn->rpc[0];
	} else if ((rc = mount_connect(c, &rpc, where, sizeof(where))) != 0) {
		snprintf(err, errlen, "cannot connect to MOUNT at %s: %s", where, strerror(-rc));
		return rc;
	}
	rc = rpc_clnt_call(rpc, &call);
	if (rc == 0)
		rpc_clnt_free_res(rpc, &call);
	if (cn)
		nfs3c_conn_put(c, cn, rc == -ECONNRESET || rc == -ETIMEDOUT);
	else
		rpc_clnt_destroy(rpc);
out:
	if (rc)
		snprintf(err, errlen, "MOUNT at %s failed: %s%s", where, strerror(-rc),
			 rc == -EPROTO	     ? " (no MOUNT v3 service there?)"
			 : rc == -ECONNRESET ? " (the server hung up: is that the right port "
					       "and protocol, and may this client use it?)"
					     : "");
	return rc;
}

/* MNT the export into c->root. Results are copied before they are freed, so
 * the decoding goes through a local wrapper. */
struct mnt_out {
	mountres3 res;
	struct nfs3c_fh fh;
	int fh_ok;
	int flavors_ok;
};

/* Decode mountres3 and copy out the root handle before it is freed. */
static bool_t xdr_mnt_out(XDR *xdrs, struct mnt_out *m)
{
	if (!xdr_mountres3(xdrs, &m->res))
		return FALSE;
	if (xdrs->x_op == XDR_DECODE && m->res.fhs_status == MNT3_OK) {
		mountres3_ok *ok = &m->res.mountres3_u.mountinfo;
		nfs_fh3 x = {.data = {ok->fhandle.fhandle3_len, ok->fhandle.fhandle3_val}};

		m->fh_ok = nfs3c_fh_from_xdr(&x, &m->fh) == 0;
		m->flavors_ok = ok->auth_flavors.auth_flavors_len == 0;
		for (u_int i = 0; i < ok->auth_flavors.auth_flavors_len; i++) {
			int f = ok->auth_flavors.auth_flavors_val[i];

			if (f == AUTH_SYS || f == AUTH_NONE || f == AUTH_NFSRDMA_HMAC)
				m->flavors_ok = 1;
		}
	}
	return TRUE;
}

/* MNT the export; a refusal says which status and why. */
static int do_mnt(struct nfs3c *c, char *err, size_t errlen)
{
	struct mnt_out m = {0};
	char what[128];
	int rc = mount_call(c, MOUNTPROC3_MNT, (xdrproc_t)xdr_dirpath, &c->export,
			    (xdrproc_t)xdr_mnt_out, &m, c->p.timeout_ms, err, errlen);

	if (rc)
		return rc;
	if (m.res.fhs_status != MNT3_OK) {
		mnt_err_str(m.res.fhs_status, what, sizeof(what));
		snprintf(err, errlen, "server %s refused export %s: %s", c->host, c->export, what);
		return m.res.fhs_status == MNT3ERR_NOENT ? -ENOENT : -EACCES;
	}
	if (!m.fh_ok) {
		snprintf(err, errlen, "server %s sent a malformed root handle", c->host);
		return -EBADMSG;
	}
	if (!m.flavors_ok)
		log_warn("export %s lists no flavor we use (AUTH_SYS); trying anyway", c->export);
	c->root = m.fh;
	return 0;
}

/* A transfer size: the asked one (or the server's preference) within limits;
 * never below MIN_IO, whatever the server says (the Linux client's floor too),
 * so that a server cannot make us move a file a byte at a time. */
static uint32_t pick_size(uint32_t asked, uint32_t pref, uint32_t max, uint32_t xprt_max)
{
	uint32_t v;

	if (max == 0)
		max = 32768;
	if (max < MIN_IO)
		max = MIN_IO;
	if (max > NFS3C_MAX_IO)
		max = NFS3C_MAX_IO;
	if (xprt_max && max > xprt_max)
		max = xprt_max;
	v = asked ? asked : (pref ? pref : max);
	if (v > max)
		v = max;
	if (v < MIN_IO)
		v = MIN_IO;
	return v & ~(MIN_IO - 1);
}

/* FSINFO: pick rsize and wsize. */
static int do_fsinfo(struct nfs3c *c, char *err, size_t errlen)
{
	FSINFO3args a;
	FSINFO3res r;
	struct nfs3c_req rq;
	uint32_t xmax = c->p.proto == NFS3C_PROTO_RDMA ? c->p.rr.max_io : 0;
	int rc;

	memset(&r, 0, sizeof(r));
	nfs3c_fh_to_xdr(&c->root, &a.fsroot);
	nfs3c_req_init(&rq, NFSPROC3_FSINFO, (xdrproc_t)xdr_FSINFO3args, &a,
		       (xdrproc_t)xdr_FSINFO3res, &r);
	if ((rc = nfs3c_call(c, NULL, &rq)) != 0) {
		snprintf(err, errlen, "FSINFO on %s:%s failed: %s", c->host, c->export,
			 strerror(-rc));
		return rc;
	}
	if (r.status == NFS3_OK) {
		FSINFO3resok *ok = &r.FSINFO3res_u.resok;

		if (((ok->rtmax && ok->rtmax < MIN_IO) || (ok->wtmax && ok->wtmax < MIN_IO)) &&
		    nfs3c_first_warning(c, NFS3C_WARN_FSINFO))
			log_warn("server %s: FSINFO says rtmax %u, wtmax %u: using %u at least",
				 c->host, ok->rtmax, ok->wtmax, MIN_IO);
		c->rsize = pick_size(c->p.rsize, ok->rtpref, ok->rtmax, xmax);
		c->wsize = pick_size(c->p.wsize, ok->wtpref, ok->wtmax, xmax);
		c->maxfilesize = ok->maxfilesize;
		nfs3c_attr_post(c, rq.gen, &c->root, &ok->obj_attributes);
	} else {
		snprintf(err, errlen, "FSINFO on %s:%s: %s", c->host, c->export,
			 nfs3c_stat_name(r.status));
		rc = nfs3c_errno(r.status);
	}
	nfs3c_call_done(c, &rq);
	return rc;
}

/* The first connection: tried once, so a wrong name or port fails the mount. */
static int first_connect(struct nfs3c *c, char *err, size_t errlen)
{
	struct nfs3c_conn *cn;
	const char *proto = c->p.proto == NFS3C_PROTO_RDMA ? "rdma" : "tcp";
	int rc = -EIO;

	for (size_t i = 0; i < c->nheads; i++) { /* one attempt per head */
		rc = nfs3c_conn_get(c, nfs3c_now_ms() + 1, &cn);
		if (rc == 0) {
			nfs3c_conn_put(c, cn, 0);
			return 0;
		}
	}
	rc = c->last_err ? c->last_err : rc;
	if (rc == -ENODEV && c->p.proto == NFS3C_PROTO_RDMA) {
		snprintf(err, errlen, "no RDMA provider or device '%s' here", c->p.rr.provider);
		return rc;
	}
	snprintf(err, errlen, "cannot connect to %s:%s over %s: %s%s", c->host, c->port, proto,
		 strerror(-rc),
		 rc == -ECONNREFUSED || rc == -EHOSTUNREACH
			 ? " (is the server running, and is that its port?)"
			 : "");
	return rc;
}

/* Free a client whose connection is gone. */
static void client_free(struct nfs3c *c)
{
	nfs3c_files_fini(c);
	nfs3c_wpool_fini(c);
	nfs3c_attr_fini(c);
	nfs3c_ordma_fini(c);
	pthread_cond_destroy(&c->cond);
	pthread_mutex_destroy(&c->lock);
	pthread_mutex_destroy(&c->files_lock);
	for (size_t i = 0; i < c->nheads; i++) {
		free(c->heads[i].host);
		free(c->heads[i].port);
	}
	free(c->export);
	free(c->mountport);
	free(c);
}

/* Add a head (host, port) to c; -E2BIG past NFS3C_HEADS_MAX. */
static int head_add(struct nfs3c *c, const char *host, const char *port)
{
	struct nfs3c_head *h = &c->heads[c->nheads];

	if (c->nheads >= NFS3C_HEADS_MAX)
		return -E2BIG;
	h->host = strdup(host);
	h->port = strdup(port);
	c->nheads++;
	return h->host && h->port ? 0 : -ENOMEM;
}

/* nfs3c_heads_parse's callback: a head of heads=, its port the mount's by default. */
static int add_head(void *arg, const char *host, const char *port)
{
	struct nfs3c *c = arg;

	return head_add(c, host, port ? port : c->heads[0].port);
}

/* Allocate and initialise a client from its parameters. */
static struct nfs3c *client_new(const struct nfs3c_params *p)
{
	struct nfs3c *c = calloc(1, sizeof(*c));
	const char *port =
		p->port ? p->port
			: (p->proto == NFS3C_PROTO_RDMA ? NFS3C_RDMA_PORT : NFS3C_TCP_PORT);
	pthread_condattr_t ca;

	if (!c)
		return NULL;
	c->p = *p;
	if (!c->p.nconnect)
		c->p.nconnect = 1;
	if (c->p.proto == NFS3C_PROTO_TCP)
		c->p.mountproto = NFS3C_PROTO_TCP;
	if (c->p.timeout_ms <= 0)
		c->p.timeout_ms = 30000;
	c->p.connect_timeout_ms = nfs3c_connect_timeout_ms(&c->p);
	if (c->p.dirty_max == 0)
		c->p.dirty_max = 64u << 20;
	c->export = strdup(p->export);
	c->mountport = p->mountport ? strdup(p->mountport) : NULL;
	if (head_add(c, p->host, port) != 0 ||
	    (p->heads && nfs3c_heads_parse(p->heads, add_head, c, NULL, 0) != 0)) {
		client_free(c);
		return NULL;
	}
	c->host = c->heads[0].host;
	c->port = c->heads[0].port;
	c->next_xid = rpc_xid_seed();
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->files_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->cond, &ca);
	pthread_condattr_destroy(&ca);
	nfs3c_attr_init(c);
	nfs3c_wpool_init(c);
	c->rsize = c->wsize = NFS3C_MAX_IO;
	if (!c->export || (p->mountport && !c->mountport) ||
	    (p->ordma && p->proto == NFS3C_PROTO_RDMA && nfs3c_ordma_init(c) != 0)) {
		client_free(c);
		return NULL;
	}
	return c;
}

/* See nfs3_clnt.h. */
int nfs3c_mount(const struct nfs3c_params *p, struct nfs3c **out, char *err, size_t errlen)
{
	struct nfs3c *c;
	int rc;

	snprintf(err, errlen, "out of memory");
	if (!p->host || !*p->host || !p->export || p->export[0] != '/') {
		snprintf(err, errlen, "need server:/export, with an absolute export path");
		return -EINVAL;
	}
	if (p->nconnect > NFS3C_NCONNECT_MAX) {
		snprintf(err, errlen, "nconnect: %u is more than %d", p->nconnect,
			 NFS3C_NCONNECT_MAX);
		return -EINVAL;
	}
	if ((rc = check_host(p->host, err, errlen)) != 0 ||
	    (p->heads && (rc = nfs3c_heads_parse(p->heads, NULL, NULL, err, errlen)) != 0))
		return rc;
	if (!(c = client_new(p)))
		return -ENOMEM;
	if ((rc = first_connect(c, err, errlen)) != 0 || (rc = do_mnt(c, err, errlen)) != 0 ||
	    (rc = do_fsinfo(c, err, errlen)) != 0) {
		c->closing = 1;
		nfs3c_conn_close(c);
		client_free(c);
		return rc;
	}
	nfs3c_wpool_carve(c);
	c->mounted = 1;
	log_info("mounted %s:%s over %s: rsize %u wsize %u", c->host, c->export,
		 c->p.proto == NFS3C_PROTO_RDMA ? "rdma" : "tcp", c->rsize, c->wsize);
	*out = c;
	return 0;
}

/* See nfs3_clnt.h. */
void nfs3c_unmount(struct nfs3c *c)
{
	char err[256];
	int rc;

	if (!c)
		return;
	nfs3c_shutdown(c);
	if ((rc = nfs3c_commit_all(c)) != 0)
		log_err("%s:%s: uncommitted writes lost at unmount: %s", c->host, c->export,
			strerror(-rc));
	c->p.retry_ms = c->p.timeout_ms < UMOUNT_TIMEOUT_MS ? c->p.timeout_ms : UMOUNT_TIMEOUT_MS;
	if (!__atomic_load_n(&c->aborted, __ATOMIC_ACQUIRE) &&
	    mount_call(c, MOUNTPROC3_UMNT, (xdrproc_t)xdr_dirpath, &c->export, (xdrproc_t)xdr_void,
		       NULL, c->p.retry_ms, err, sizeof(err)) != 0)
		log_info("UMNT: %s", err);
	pthread_mutex_lock(&c->lock);
	c->closing = 1;
	pthread_cond_broadcast(&c->cond); /* the stopper, if any, goes */
	while (c->connecting)
		pthread_cond_wait(&c->cond, &c->lock);
	pthread_mutex_unlock(&c->lock);
	if (c->stopper_running)
		pthread_join(c->stopper, NULL);
	nfs3c_conn_close(c);
	client_free(c);
}
