/*
 * backend.c: backend lifetime, the write verifier, and the per-call steps
 * every procedure goes through: find the export, apply its rules, resolve the
 * handle to an fd (through the fd cache), take on the caller's identity.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>

#include "common/base/clock.h"
#include "common/base/log.h"
#include "common/base/net.h"
#include "common/rpc/rpc.h"
#include "server/backend_int.h"
#include "server/fh_index.h"

/* Idle fds the cache keeps at most; less if RLIMIT_NOFILE is low. */
#define BE_FDCACHE_MAX 1024

/* A verifier unique to this server instance: the start time in nanoseconds,
 * the pid and a per-process counter, so that a restart (or a second backend
 * in one process) always changes it and clients resend unstable writes. */
static void make_write_verf(unsigned char verf[8])
{
	static unsigned counter;
	struct timespec ts;
	uint64_t v;

	clock_gettime(CLOCK_REALTIME, &ts);
	v = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	v ^= (uint64_t)getpid() << 40;
	v += __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 8; i++)
		verf[i] = (unsigned char)(v >> (56 - 8 * i));
}

/* How many idle fds to cache: a quarter of the fd limit, at most BE_FDCACHE_MAX. */
static size_t fdcache_size(void)
{
	struct rlimit rl;
	size_t n = BE_FDCACHE_MAX;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur / 4 < n)
		n = rl.rlim_cur / 4 ? (size_t)(rl.rlim_cur / 4) : 1;
	return n;
}

/* Open every export; refuse two exports with one id. */
static void close_exports(struct export *exports, size_t n)
{
	for (size_t i = 0; i < n; i++)
		export_close(&exports[i]);
	free(exports);
}

static int open_exports(struct nfs_backend *be, const struct integrity_key *fh_key,
			const struct nfs_export_conf *conf, size_t n)
{
	int r;

	be->exports = calloc(n ? n : 1, sizeof(*be->exports));
	if (be->exports == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		r = export_open(&be->exports[i], &conf[i]);
		be->exports[i].fh_key = fh_key;
		be->nexports = i + 1;
		if (r < 0)
			return r;
		for (size_t j = 0; j < i; j++)
			if (be->exports[j].id == be->exports[i].id) {
				log_err("exports '%s' and '%s' have the same id %08x: give one an "
					"fsid",
					be->exports[j].path, be->exports[i].path,
					be->exports[i].id);
				return -EINVAL;
			}
	}
	return 0;
}

/* A key of this process only: handles do not outlive it until
 * nfs_backend_set_handle_key gives a lasting one. */
static int set_random_key(struct integrity_key *k)
{
	unsigned char key[32];
	int r;

	if (getentropy(key, sizeof(key)) != 0)
		return -errno;
	r = integrity_key_set(k, key, sizeof(key), 0);
	explicit_bzero(key, sizeof(key));
	return r;
}

/* See backend.h. */
int nfs_backend_create(const struct nfs_export_conf *exports, size_t n, uint32_t max_io,
		       struct nfs_backend **out)
{
	struct nfs_backend *be;
	int r;

	*out = NULL;
	if (max_io < 4096 || max_io > NFS3_MAXDATA) {
		log_err("max I/O size %u is out of range 4096..%u", max_io, NFS3_MAXDATA);
		return -EINVAL;
	}
	if ((be = calloc(1, sizeof(*be))) == NULL)
		return -ENOMEM;
	pthread_mutex_init(&be->mnt_lock, NULL);
	pthread_mutex_init(&be->gate_lock, NULL);
	pthread_cond_init(&be->gate_cond, NULL);
	be->max_io = max_io;
	be->export_calls_max = UINT_MAX; /* until nfs_backend_set_limits */
	make_write_verf(be->write_verf);
	if ((r = set_random_key(&be->fh_key)) < 0) {
		nfs_backend_destroy(be);
		return r;
	}
	be->cred_ok = geteuid() == 0;
	if (!be->cred_ok)
		log_warn("not running as root: every call runs as this process's own user");
	be->fds = fhcache_create(fdcache_size());
	if (be->fds == NULL) {
		nfs_backend_destroy(be);
		return -ENOMEM;
	}
	if ((r = open_exports(be, &be->fh_key, exports, n)) < 0) {
		nfs_backend_destroy(be);
		return r;
	}
	*out = be;
	return 0;
}

/* See backend.h. */
void nfs_backend_destroy(struct nfs_backend *be)
{
	if (be == NULL)
		return;
	fhcache_destroy(be->fds);
	close_exports(be->exports, be->nexports);
	ordma_cache_destroy(be->ordma);
	for (size_t i = 0; i < be->nmounts; i++) {
		free(be->mounts[i].host);
		free(be->mounts[i].path);
	}
	free(be->mounts);
	pthread_mutex_destroy(&be->mnt_lock);
	pthread_mutex_destroy(&be->gate_lock);
	pthread_cond_destroy(&be->gate_cond);
	integrity_key_clear(&be->fh_key);
	free(be);
}

/* See backend.h. */
int nfs_backend_set_handle_key(struct nfs_backend *be, const void *key, size_t len)
{
	struct integrity_key k = {0};
	int r = integrity_key_set(&k, key, len, 0);

	if (r < 0)
		return r;
	integrity_key_clear(&be->fh_key);
	be->fh_key = k; /* same place: the exports' pointers stay good */
	/* the cached handles had their MAC checked with the old key */
	fhcache_forget_all(be->fds);
	return 0;
}

/* See backend.h. */
void nfs_backend_handle_stats(struct nfs_backend *be, struct nfs_handle_stats *out)
{
	struct fh_index_stats one;

	memset(out, 0, sizeof(*out));
	nfs_backend_enter(be);
	for (size_t i = 0; i < be->nexports; i++) {
		out->userspace_identity += be->exports[i].user_ident != 0;
		if (be->exports[i].fhx == NULL)
			continue;
		fh_index_stats(be->exports[i].fhx, &one);
		out->exports++;
		out->entries += one.entries;
		out->walks += one.walks;
		out->found += one.found;
	}
	nfs_backend_leave(be);
}

/* See backend.h. */
void nfs_backend_ordma_stats(struct nfs_backend *be, struct ordma_cache_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (be->ordma)
		ordma_cache_stats(be->ordma, out);
}

/* See backend.h. */
void nfs_backend_enter(struct nfs_backend *be)
{
	pthread_mutex_lock(&be->gate_lock);
	while (be->gate_reloading)
		pthread_cond_wait(&be->gate_cond, &be->gate_lock);
	be->gate_calls++;
	pthread_mutex_unlock(&be->gate_lock);
}

/* See backend.h. */
int nfs_backend_peer_known(struct nfs_backend *be, const struct sockaddr *sa)
{
	int known = 0;

	/* asked on an event loop: never wait for a reload; during one, say yes
	 * (the procedure checks its export's client list in any case) */
	pthread_mutex_lock(&be->gate_lock);
	if (be->gate_reloading) {
		pthread_mutex_unlock(&be->gate_lock);
		return 1;
	}
	be->gate_calls++;
	pthread_mutex_unlock(&be->gate_lock);
	for (size_t i = 0; i < be->nexports && !known; i++)
		known = export_client_ok(&be->exports[i], sa);
	nfs_backend_leave(be);
	return known;
}

/* See backend.h. */
int nfs_backend_try_enter(struct nfs_backend *be)
{
	int in;

	pthread_mutex_lock(&be->gate_lock);
	in = !be->gate_reloading;
	be->gate_calls += (unsigned)in;
	pthread_mutex_unlock(&be->gate_lock);
	return in;
}

/* See backend.h. */
int nfs_backend_may_inline(struct nfs_backend *be)
{
	return !__atomic_load_n(&be->never_inline, __ATOMIC_RELAXED) &&
	       !__atomic_load_n(&be->gate_reloading, __ATOMIC_RELAXED);
}

/* See backend.h. */
void nfs_backend_never_inline(struct nfs_backend *be)
{
	__atomic_store_n(&be->never_inline, 1, __ATOMIC_RELAXED);
}

/* See backend.h. */
void nfs_backend_leave(struct nfs_backend *be)
{
	pthread_mutex_lock(&be->gate_lock);
	if (--be->gate_calls == 0 && be->gate_reloading)
		pthread_cond_broadcast(&be->gate_cond);
	pthread_mutex_unlock(&be->gate_lock);
}

/* With gate_lock held and new calls held back: wait until the calls inside
 * have left, at most the storage timeout (not at all when an export has
 * stalled already); 0 or -EBUSY. */
static int drain_calls(struct nfs_backend *be)
{
	uint64_t t = __atomic_load_n(&be->storage_timeout_ns, __ATOMIC_RELAXED);

	for (size_t i = 0; i < be->nexports; i++) {
		int stalled;

		if (call_gate_calls(&be->exports[i].gate, &stalled) && stalled)
			return -EBUSY;
	}
	while (t == 0 && be->gate_calls)
		pthread_cond_wait(&be->gate_cond, &be->gate_lock);
	if (t && cond_wait_zero(&be->gate_cond, &be->gate_lock, &be->gate_calls,
				(long)(t / 1000000u)) != 0)
		return -EBUSY;
	return 0;
}

/* Say which exports' storage keeps the calls a reload would wait for. */
static void name_stuck(struct nfs_backend *be)
{
	unsigned long long s =
		__atomic_load_n(&be->storage_timeout_ns, __ATOMIC_RELAXED) / 1000000000u;
	int named = 0;

	for (size_t i = 0; i < be->nexports; i++) {
		int stalled;
		unsigned n = call_gate_calls(&be->exports[i].gate, &stalled);

		if (n == 0)
			continue;
		log_err("reload refused: %u call%s still in export '%s', whose storage does not "
			"answer within %llu s",
			n, n == 1 ? "" : "s", be->exports[i].path, s);
		named = 1;
	}
	if (!named)
		log_err("reload refused: calls still running after %llu s", s);
}

/* See backend.h. */
int nfs_backend_reload(struct nfs_backend *be, const struct nfs_export_conf *conf, size_t n)
{
	struct nfs_backend fresh = {0};
	struct export *old;
	size_t nold;
	int r = open_exports(&fresh, &be->fh_key, conf, n);

	if (r < 0) {
		close_exports(fresh.exports, fresh.nexports);
		return r;
	}
	pthread_mutex_lock(&be->gate_lock);
	while (be->gate_reloading)
		pthread_cond_wait(&be->gate_cond, &be->gate_lock);
	be->gate_reloading = 1;
	if ((r = drain_calls(be)) != 0) {
		name_stuck(be);
		be->gate_reloading = 0;
		pthread_cond_broadcast(&be->gate_cond);
		pthread_mutex_unlock(&be->gate_lock);
		close_exports(fresh.exports, fresh.nexports);
		return r;
	}
	old = be->exports;
	nold = be->nexports;
	be->exports = fresh.exports;
	be->nexports = fresh.nexports;
	/* the new rules may take ordma from an export, or readers from it: the
	 * exposed cache keeps nothing from before (no call runs now) */
	if (be->ordma)
		ordma_cache_clear(be->ordma);
	be->gate_reloading = 0;
	pthread_cond_broadcast(&be->gate_cond);
	pthread_mutex_unlock(&be->gate_lock);
	close_exports(old, nold);
	log_notice("exports reloaded: %zu", n);
	return 0;
}

/* See backend.h. */
uint32_t nfs_backend_export_id(const struct nfs_backend *be, size_t i)
{
	return i < be->nexports ? be->exports[i].id : 0;
}

/* See backend.h. */
void nfs_backend_write_verf(const struct nfs_backend *be, unsigned char verf[8])
{
	memcpy(verf, be->write_verf, 8);
}

/* See backend_int.h. */
struct export *be_export_by_id(struct nfs_backend *be, uint32_t id)
{
	for (size_t i = 0; i < be->nexports; i++)
		if (be->exports[i].id == id)
			return &be->exports[i];
	return NULL;
}

/* Whether the call came from a privileged port (below 1024), or over a
 * transport that counts as one: RPC/RDMA, as on Linux's server. */
static int from_secure_port(const struct nfs_req *req)
{
	int port;

	if (req->secure_transport)
		return 1;
	port = req->client ? net_addr_port(req->client) : -1;
	return port >= 0 && port < 1024;
}

/* See backend_int.h. */
void be_dispatch(struct nfs_req *req, unsigned proc, void *args, void *res)
{
	struct export *e = be_export_of_fh(req->be, args);
	const struct be_ops *ops = e != NULL ? e->ops : &be_posix_ops;
	int rc;

	if (req->nowait && ops->never_inline) {
		req->would_block = 1; /* on an event loop: this backend may block */
		return;
	}
	if (e == NULL) {
		ops->nfs3[proc](req, args, res);
		return;
	}
	if ((rc = be_gate_in(req->be, &e->gate, req->nowait)) == -EAGAIN) {
		req->would_block = 1; /* the export has its share of workers: wait on one */
	} else if (rc != 0) {
		*(nfsstat3 *)res = NFS3ERR_JUKEBOX; /* every result starts with its status */
	} else {
		ops->nfs3[proc](req, args, res);
		call_gate_out(&e->gate, !req->would_block);
	}
}

/* See backend_int.h. */
nfsstat3 be_export_check(const struct nfs_req *req, const struct export *e, unsigned flags)
{
	struct nfs_client_rule rule;

	if (!be_identity_ok())
		return NFS3ERR_SERVERFAULT;
	if (!export_rule(e, req->client, &rule)) {
		log_debug("export '%s': client not in the access list", e->path);
		return NFS3ERR_ACCES;
	}
	if (rule.secure && !from_secure_port(req)) {
		log_debug("export '%s': call from a port above 1023 refused (secure)", e->path);
		return NFS3ERR_PERM;
	}
	if (e->conf.integrity_required && !req->integrity_ok) {
		log_debug("export '%s': call without integrity protection refused", e->path);
		return NFS3ERR_ACCES;
	}
	if ((flags & BE_MODIFY) && rule.ro)
		return NFS3ERR_ROFS;
	return NFS3_OK;
}

/* See backend_int.h. */
void be_req_rule(const struct nfs_req *req, const struct export *e, struct nfs_client_rule *r)
{
	export_rule(e, req->client, r);
}

/* See nfs3.h. */
void nfs_req_from_rpc(struct nfs_backend *be, const struct rpc_req *in, struct nfs_req *out)
{
	const struct rpc_cred *c = &in->cred;

	memset(out, 0, sizeof(*out));
	out->be = be;
	out->client = in->peer;
	out->client_len = in->peer_len;
	out->cred.flavor = c->flavor;
	out->cred.uid = c->uid;
	out->cred.gid = c->gid;
	out->cred.ngids = c->ngids < NFS_CRED_MAX_GIDS ? c->ngids : NFS_CRED_MAX_GIDS;
	memcpy(out->cred.gids, c->gids, out->cred.ngids * sizeof(c->gids[0]));
	out->integrity_ok = in->integrity_ok;
	out->secure_transport = in->secure_transport;
	out->nowait = in->nowait;
}

/* See backend_int.h. */
uid_t be_req_uid(const struct nfs_req *req, const struct export *e)
{
	gid_t gid, gids[NFS_CRED_MAX_GIDS];
	struct nfs_client_rule rule;
	size_t ngids;
	uid_t uid;

	be_req_rule(req, e, &rule);
	export_map_cred(&rule, &req->cred, &uid, &gid, &ngids, gids);
	return uid;
}

/* See backend_int.h. */
int be_gate_in(const struct nfs_backend *be, struct call_gate *g, int nowait)
{
	return call_gate_in(g, __atomic_load_n(&be->export_calls_max, __ATOMIC_RELAXED),
			    __atomic_load_n(&be->storage_timeout_ns, __ATOMIC_RELAXED),
			    nowait ? CALL_GATE_NOWAIT : 0);
}

/* See backend.h. */
void nfs_backend_set_limits(struct nfs_backend *be, unsigned threads, unsigned storage_timeout_s)
{
	__atomic_store_n(&be->export_calls_max, threads > 1 ? threads - 1 : 1, __ATOMIC_RELAXED);
	__atomic_store_n(&be->storage_timeout_ns, (uint64_t)storage_timeout_s * 1000000000u,
			 __ATOMIC_RELAXED);
}
