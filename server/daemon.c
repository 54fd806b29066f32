/* daemon.c: starting, reloading and stopping the server's parts (see daemon.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "common/base/log.h"
#include "common/rpc/rpc_drc.h"
#include "common/rpc/rpc_replay.h"
#include "common/rpc/rpc_tcp.h"
#include "common/rpc/rpc_udp.h"
#include "common/rpcrdma/rpcrdma.h"
#include "server/backend.h"
#include "server/ctl.h"
#include "server/daemon.h"
#include "server/nfs_program.h"
#include "server/rpcbind.h"

#define MAX_RECORD(c) ((size_t)(c)->rdma.max_io_size + 65536)

/* The transport's parameters from the configuration. */
static void rr_params_from(const struct nfsrdma_config *c, struct rr_params *p)
{
	static const enum rr_reg reg[] = {
		[CFG_SREG_DYNAMIC] = RR_REG_DYNAMIC,
		[CFG_SREG_FASTREG] = RR_REG_FASTREG,
		[CFG_SREG_CACHE] = RR_REG_CACHE,
		[CFG_SREG_ALLPHYS] = RR_REG_ALLPHYS,
	};

	rr_params_defaults(p);
	p->provider = c->rdma.provider;
	p->credits = c->rdma.credits;
	p->inline_send = (uint32_t)c->rdma.inline_send;
	p->inline_recv = (uint32_t)c->rdma.inline_recv;
	p->max_io = (uint32_t)c->rdma.max_io_size;
	p->rd_depth = (uint8_t)c->rdma.rd_depth;
	p->modes =
		((c->server.modes & CFG_MODE_BIT(CFG_MODE_READ_WRITE)) ? RR_MODE_READ_WRITE : 0) |
		((c->server.modes & CFG_MODE_BIT(CFG_MODE_READ_READ)) ? RR_MODE_READ_READ : 0);
	p->reg = reg[c->server.registration];
	p->cache_budget = c->server.cache.budget;
	p->cache_high = c->server.cache.high_watermark;
	p->cache_low = c->server.cache.low_watermark;
	p->fastreg_pool = c->server.fastreg_pool;
	p->arena_size = c->rdma.registered_memory_budget;
	p->trusted_peers = c->server.trusted_peers;
	p->done_deadline_ms = c->server.read_read.done_deadline_ms;
	p->op_deadline_ms = c->server.rdma_deadline_ms;
	p->exposed_max = c->server.read_read.exposed_bytes_max;
	p->mem_budget = c->rdma.registered_memory_budget;
	p->max_conns = c->server.rdma_connections_max;
	p->max_conns_per_addr = c->server.rdma_connections_per_client;
	p->idle_ms = c->server.rdma_idle_ms;
}

/* The backend's view of the exports; the access lists point into c. */
static struct nfs_export_conf *export_confs(const struct nfsrdma_config *c)
{
	struct nfs_export_conf *e = calloc(c->server.n_exports + 1, sizeof(*e));

	for (size_t i = 0; e && i < c->server.n_exports; i++) {
		const struct cfg_export *x = &c->server.exports[i];

		e[i] = (struct nfs_export_conf){
			.path = x->path,
			.ro = x->access == CFG_ACCESS_RO,
			.root_squash = x->root_squash,
			.anon_uid = x->anon_uid,
			.anon_gid = x->anon_gid,
			.integrity_required = x->integrity_required,
			.acl = x,
			.client_allowed = config_acl_allows,
			.clients = (const char *const *)x->clients.v,
			.nclients = x->clients.n,
			.backend = x->backend == CFG_BACKEND_CEPHFS ? NFS_BACKEND_CEPHFS
								    : NFS_BACKEND_POSIX,
			.ceph = {.conf_file = x->ceph.conf_file,
				 .client_id = x->ceph.client_id,
				 .keyring = x->ceph.keyring,
				 .root = x->ceph.root,
				 .mount_timeout_s = x->ceph.mount_timeout_s},
		};
	}
	return e;
}

/* TCP and UDP (NFS and MOUNT) and RPC/RDMA on every listen address. */
static int start_listeners(struct nfsrdma_server *s)
{
	const struct nfsrdma_config *c = &s->cfg;
	struct rpc_tcp_params tp = {.max_record = MAX_RECORD(c),
				    .max_reply = MAX_RECORD(c),
				    .max_inflight = c->rdma.credits,
				    .send_deadline_ms = c->server.tcp_deadline_ms,
				    .max_conns = c->server.tcp_connections_max,
				    .max_conns_per_addr = c->server.tcp_connections_per_client,
				    .idle_ms = c->server.tcp_idle_ms,
				    .loops = c->server.tcp_loops,
				    .max_held = c->server.tcp_memory_per_connection};
	char tport[16], rport[16];
	struct rr_params rp;
	int rc;

	snprintf(tport, sizeof(tport), "%u", c->server.tcp_port);
	snprintf(rport, sizeof(rport), "%u", c->server.rdma_port);
	if (c->server.listen.n > DAEMON_MAX_LISTEN) {
		log_err("at most %d listen addresses", DAEMON_MAX_LISTEN);
		return -E2BIG;
	}
	for (size_t i = 0; c->server.tcp_port && i < c->server.listen.n; i++) {
		const char *host = c->server.listen.v[i];

		if ((rc = rpc_tcp_listen(s->rpc, host, tport, &tp, &s->tcp[s->ntcp])) != 0)
			return rc;
		s->ntcp++;
		if ((rc = rpc_udp_listen(s->rpc, host, tport, c->server.udp_inflight_max,
					 &s->udp[s->nudp])) != 0)
			return rc;
		s->nudp++;
		log_notice("NFS and MOUNT on TCP and UDP %s:%s", host, tport);
	}
	rr_params_from(c, &rp);
	if ((rc = rr_server_create(s->rpc, &rp, &s->rr)) != 0) {
		log_err("RPC/RDMA cannot start on provider '%s'", c->rdma.provider);
		return rc;
	}
	for (size_t i = 0; i < c->server.listen.n; i++)
		if ((rc = rr_server_listen(s->rr, c->server.listen.v[i], rport)) != 0)
			return rc;
	return 0;
}

static void ctl_answer(const char *cmd, FILE *out, void *arg)
{
	struct nfsrdma_server *s = arg;

	if (strcmp(cmd, "stats") == 0) {
		daemon_print_stats(s, out);
	} else if (strcmp(cmd, "exports") == 0) {
		for (size_t i = 0; i < s->cfg.server.n_exports; i++)
			fprintf(out, "%s %s\n", s->cfg.server.exports[i].path,
				config_access_name(s->cfg.server.exports[i].access));
	} else {
		fprintf(out, "error: unknown command '%s' (stats, exports)\n", cmd);
	}
}

/* The pidfile: refuse to start over a live server, else write ours. */
static int write_pidfile(struct nfsrdma_server *s)
{
	const char *path = s->cfg.server.pidfile;
	FILE *f;
	int pid;

	if (!path)
		return 0;
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%d", &pid) == 1 && pid > 0 && pid != getpid() && kill(pid, 0) == 0) {
			fclose(f);
			log_err("already running as pid %d (%s)", pid, path);
			return -EEXIST;
		}
		fclose(f);
	}
	if (!(f = fopen(path, "w")) || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) != 0) {
		log_err("cannot write %s: %s", path, strerror(errno));
		return -errno;
	}
	s->pidfile_written = 1;
	return 0;
}

/* Make path a new key file: 32 random bytes, mode 0600 (its directory 0700
 * if missing). 0 or -errno with err set. */
static int make_key_file(const char *path, char *err, size_t errlen)
{
	unsigned char key[32];
	char *dir = strdup(path), *slash = dir ? strrchr(dir, '/') : NULL;
	int fd, rc = 0;

	if (slash && slash != dir) {
		*slash = 0;
		if (mkdir(dir, 0700) < 0 && errno != EEXIST)
			log_warn("cannot make %s: %s", dir, strerror(errno));
	}
	free(dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: cannot create: %s", path, strerror(errno));
		return rc;
	}
	if (getrandom(key, sizeof(key), 0) != (ssize_t)sizeof(key) ||
	    write(fd, key, sizeof(key)) != (ssize_t)sizeof(key) || fsync(fd) < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
		unlink(path);
	}
	close(fd);
	explicit_bzero(key, sizeof(key));
	return rc;
}

/* The key that signs file handles, from path; made there at the first start. */
static int handle_key(struct nfs_backend *be, const char *path)
{
	struct integrity_key k;
	char err[256];
	int rc = integrity_key_load(path, &k, err, sizeof(err));

	if (rc == -ENOENT && (rc = make_key_file(path, err, sizeof(err))) == 0) {
		log_notice("made a new file handle key in %s", path);
		rc = integrity_key_load(path, &k, err, sizeof(err));
	}
	if (rc == 0) {
		if ((rc = nfs_backend_set_handle_key(be, k.key, k.len)) != 0)
			snprintf(err, sizeof(err), "%s: HMAC-SHA256 unavailable in OpenSSL", path);
		integrity_key_clear(&k);
	}
	if (rc)
		log_err("file handle key: %s", err);
	return rc;
}

int daemon_start(struct nfsrdma_server *s, struct nfsrdma_config *cfg)
{
	const struct nfsrdma_config *c = &s->cfg;
	struct rpc_server_params sp;
	struct nfs_export_conf *ec;
	char err[256];
	int rc;

	memset(s, 0, sizeof(*s));
	s->cfg = *cfg;
	memset(cfg, 0, sizeof(*cfg));
	if ((rc = write_pidfile(s)) != 0)
		goto fail;
	if (c->server.integrity.mode == CFG_INTEGRITY_HMAC_SHA256) {
		rc = integrity_key_load(c->server.integrity.key_file, &s->key, err, sizeof(err));
		if (rc) {
			log_err("integrity key: %s", err);
			goto fail;
		}
		s->have_key = 1;
	}
	if (!(ec = export_confs(c))) {
		rc = -ENOMEM;
		goto fail;
	}
	rc = nfs_backend_create(ec, c->server.n_exports, (uint32_t)c->rdma.max_io_size, &s->be);
	free(ec);
	if (rc) {
		log_err("cannot open the exports");
		goto fail;
	}
	if ((rc = handle_key(s->be, c->server.handle_key_file)) != 0)
		goto fail;
	sp = (struct rpc_server_params){.threads = c->server.threads,
					.key = s->have_key ? &s->key : NULL,
					.drc_entries = c->server.reply_cache,
					.replay_contexts = c->server.integrity.replay_contexts,
					.replay_window_s = c->server.integrity.replay_window_s,
					.mem_budget = c->server.memory_budget};
	if ((rc = rpc_server_create(&sp, &s->rpc)) != 0 ||
	    (rc = nfs_programs_register(s->rpc, s->be)) != 0 || (rc = start_listeners(s)) != 0)
		goto fail;
	if (c->server.rpcbind && c->server.tcp_port)
		s->rpcbind_done = rpcbind_register(c->server.tcp_port) == 0;
	if ((rc = ctl_start(c->server.control_socket, ctl_answer, s, &s->ctl)) != 0)
		goto fail;
	log_notice("serving %zu export%s with %u worker threads", c->server.n_exports,
		   c->server.n_exports == 1 ? "" : "s", c->server.threads);
	return 0;
fail:
	daemon_stop(s);
	return rc;
}

/* Whether a transport setting differs (those need a restart). */
static int transport_changed(const struct nfsrdma_config *a, const struct nfsrdma_config *b)
{
	int listen_same = a->server.listen.n == b->server.listen.n;

	for (size_t i = 0; listen_same && i < a->server.listen.n; i++)
		listen_same = strcmp(a->server.listen.v[i], b->server.listen.v[i]) == 0;
	return !listen_same || strcmp(a->rdma.provider, b->rdma.provider) != 0 ||
	       a->rdma.credits != b->rdma.credits || a->rdma.inline_send != b->rdma.inline_send ||
	       a->rdma.inline_recv != b->rdma.inline_recv ||
	       a->rdma.max_io_size != b->rdma.max_io_size || a->rdma.rd_depth != b->rdma.rd_depth ||
	       a->rdma.registered_memory_budget != b->rdma.registered_memory_budget ||
	       a->server.rdma_port != b->server.rdma_port ||
	       a->server.tcp_port != b->server.tcp_port || a->server.modes != b->server.modes ||
	       a->server.registration != b->server.registration ||
	       a->server.threads != b->server.threads ||
	       a->server.integrity.mode != b->server.integrity.mode;
}

int daemon_reload(struct nfsrdma_server *s, const char *path)
{
	struct nfsrdma_config fresh;
	struct config_errors errs;
	struct nfs_export_conf *ec;
	char *text = NULL;
	size_t len = 0;
	FILE *mem;
	int rc;

	config_errors_init(&errs);
	if (config_load(path, &fresh, &errs) < 0) {
		if ((mem = open_memstream(&text, &len)) != NULL) {
			config_errors_print(&errs, mem);
			fclose(mem);
			for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
				log_err("%s", line);
			free(text);
		}
		config_errors_free(&errs);
		log_err("reload refused: the running configuration stays");
		return -EINVAL;
	}
	config_errors_free(&errs);
	if (!(ec = export_confs(&fresh))) {
		config_free(&fresh);
		return -ENOMEM;
	}
	rc = nfs_backend_reload(s->be, ec, fresh.server.n_exports);
	free(ec);
	if (rc) {
		config_free(&fresh);
		log_err("reload refused: the exports could not be opened");
		return rc;
	}
	if (transport_changed(&s->cfg, &fresh))
		log_notice("transport settings in %s changed: they take effect at restart", path);
	log_set_level(fresh.log.level);
	/* the old access lists are no longer used: the backend swapped exports */
	{
		struct cfg_export *old = s->cfg.server.exports;
		size_t nold = s->cfg.server.n_exports;

		s->cfg.server.exports = fresh.server.exports;
		s->cfg.server.n_exports = fresh.server.n_exports;
		s->cfg.log.level = fresh.log.level;
		fresh.server.exports = old;
		fresh.server.n_exports = nold;
	}
	config_free(&fresh);
	log_notice("reloaded %s", path);
	return 0;
}

void daemon_stop(struct nfsrdma_server *s)
{
	ctl_stop(s->ctl);
	s->ctl = NULL;
	if (s->rpcbind_done)
		rpcbind_unregister();
	s->rpcbind_done = 0;
	rr_server_destroy(s->rr); /* drains its calls in flight */
	s->rr = NULL;
	for (unsigned i = 0; i < s->ntcp; i++)
		rpc_tcp_stop(s->tcp[i]);
	for (unsigned i = 0; i < s->nudp; i++)
		rpc_udp_stop(s->udp[i]);
	s->ntcp = s->nudp = 0;
	rpc_server_destroy(s->rpc); /* runs what is queued, then stops the workers */
	s->rpc = NULL;
	nfs_backend_destroy(s->be);
	s->be = NULL;
	if (s->have_key)
		integrity_key_clear(&s->key);
	s->have_key = 0;
	if (s->pidfile_written)
		unlink(s->cfg.server.pidfile);
	s->pidfile_written = 0;
	config_free(&s->cfg);
}

void daemon_print_stats(struct nfsrdma_server *s, FILE *f)
{
	struct rpc_tcp_stats tcp = {0}, one;
	size_t mem_used, mem_peak, mem_budget;
	struct rpc_replay_stats replay;
	struct rpc_drc_stats drc;
	unsigned udp_peak = 0;

	for (unsigned i = 0; i < s->ntcp; i++) {
		rpc_tcp_get_stats(s->tcp[i], &one);
		tcp.conns += one.conns;
		tcp.refused += one.refused;
		tcp.shed += one.shed;
		tcp.idle_closed += one.idle_closed;
		tcp.deadline_drops += one.deadline_drops;
		tcp.accept_errors += one.accept_errors;
	}
	fprintf(f, "server.exports %zu\nserver.threads %u\n", s->cfg.server.n_exports,
		s->cfg.server.threads);
	fprintf(f,
		"tcp.conns %u\ntcp.refused %llu\ntcp.shed %llu\ntcp.idle_closed %llu\n"
		"tcp.deadline_drops %llu\ntcp.accept_errors %llu\n",
		tcp.conns, (unsigned long long)tcp.refused, (unsigned long long)tcp.shed,
		(unsigned long long)tcp.idle_closed, (unsigned long long)tcp.deadline_drops,
		(unsigned long long)tcp.accept_errors);
	for (unsigned i = 0; i < s->nudp; i++)
		udp_peak = udp_peak > rpc_udp_inflight_peak(s->udp[i])
				   ? udp_peak
				   : rpc_udp_inflight_peak(s->udp[i]);
	fprintf(f, "udp.inflight_peak %u\n", udp_peak);
	rpc_server_get_mem(s->rpc, &mem_used, &mem_peak, &mem_budget);
	fprintf(f, "memory.used %zu\nmemory.peak %zu\nmemory.budget %zu\n", mem_used, mem_peak,
		mem_budget);
	rpc_server_get_replay_stats(s->rpc, &replay);
	fprintf(f,
		"integrity.replays %llu\nintegrity.off_clock %llu\nintegrity.contexts_full %llu\n"
		"integrity.contexts %llu\n",
		(unsigned long long)replay.replays, (unsigned long long)replay.off_clock,
		(unsigned long long)replay.full, (unsigned long long)replay.contexts);
	rpc_server_get_drc_stats(s->rpc, &drc);
	fprintf(f,
		"reply_cache.hits %llu\nreply_cache.drops %llu\nreply_cache.misses %llu\n"
		"reply_cache.entries %llu\nreply_cache.capacity %llu\n",
		(unsigned long long)drc.hits, (unsigned long long)drc.drops,
		(unsigned long long)drc.misses, (unsigned long long)drc.entries,
		(unsigned long long)drc.capacity);
	if (s->rr)
		rr_server_print_stats(s->rr, f);
}
