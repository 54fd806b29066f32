/* daemon.c: starting, reloading and stopping the server's parts (see daemon.h). */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <arpa/inet.h>

#include "common/base/log.h"
#include "common/base/net.h"
#include "common/rpc/rpc_tcp.h"
#include "common/rpc/rpc_udp.h"
#include "common/rpcrdma/rpcrdma.h"
#include "server/backend.h"
#include "common/base/ctl.h"
#include "server/daemon.h"
#include "server/metrics.h"
#include "server/nfs_program.h"
#include "server/nlm.h"
#include "server/notify.h"
#include "server/ordma_cache.h"
#include "server/rpcbind.h"

#define MAX_RECORD(c) ((size_t)(c)->rdma.max_io_size + 65536)

/* The transport's parameters from the configuration. */
static void rr_params_from(const struct nfsrdma_config *c, struct rr_params *p)
{
	rr_params_defaults_for(RR_ROLE_SERVER, p);
	rr_params_from_config(c, RR_ROLE_SERVER, p);
}

/* What the first client entry of the export (acl) matching sa is granted. */
static int client_rule(const void *acl, const struct sockaddr *sa, struct nfs_client_rule *out)
{
	const struct cfg_client_addr *a = config_client_match(acl, sa);

	if (a == NULL)
		return 0;
	*out = (struct nfs_client_rule){
		.ro = a->opts.access == CFG_ACCESS_RO,
		.root_squash = a->opts.root_squash,
		.all_squash = a->opts.all_squash,
		.secure = a->opts.secure,
		.async = a->opts.async,
		.no_auth_nlm = a->opts.no_auth_nlm,
		.anon_uid = a->opts.anon_uid,
		.anon_gid = a->opts.anon_gid,
	};
	return 1;
}

/* A state directory: set if the configuration sets it, else leaf beside the
 * handle key file (in buf). */
static const char *state_dir(const struct nfsrdma_config *c, const char *set, const char *leaf,
			     char *buf, size_t len)
{
	const char *key = c->server.handle_key_file, *slash = strrchr(key, '/');

	if (set != NULL && set[0] != '\0')
		return set;
	snprintf(buf, len, "%.*s/%s", slash ? (int)(slash - key) : 1, slash ? key : ".", leaf);
	return buf;
}

/* The backend's view of c's exports, with the running server's (srv's)
 * handle settings; the access lists point into c, the handle index directory
 * into buf. */
static struct nfs_export_conf *export_confs(const struct nfsrdma_config *c,
					    const struct nfsrdma_config *srv, char *buf, size_t len)
{
	static const enum nfs_fh_scheme schemes[] = {
		[CFG_HANDLES_AUTO] = NFS_FH_AUTO,
		[CFG_HANDLES_NATIVE] = NFS_FH_NATIVE,
		[CFG_HANDLES_PORTABLE] = NFS_FH_PORTABLE,
	};
	static const enum nfs_identity identities[] = {
		[CFG_IDENTITY_AUTO] = NFS_ID_AUTO,
		[CFG_IDENTITY_NATIVE] = NFS_ID_NATIVE,
		[CFG_IDENTITY_USERSPACE] = NFS_ID_USERSPACE,
	};
	const char *index_dir = state_dir(srv, srv->server.handle_index_dir, "handles", buf, len);

	struct nfs_export_conf *e = calloc(c->server.n_exports + 1, sizeof(*e));

	for (size_t i = 0; e && i < c->server.n_exports; i++) {
		const struct cfg_export *x = &c->server.exports[i];

		e[i] = (struct nfs_export_conf){
			.path = x->path,
			.fsid = x->fsid,
			.ro = x->access == CFG_ACCESS_RO,
			.root_squash = x->root_squash,
			.anon_uid = x->anon_uid,
			.anon_gid = x->anon_gid,
			.integrity_required = x->integrity_required,
			.acl = x,
			.client_allowed = config_acl_allows,
			.client_rule = client_rule,
			.clients = (const char *const *)x->clients.v,
			.nclients = x->clients.n,
			.backend = x->backend == CFG_BACKEND_CEPHFS ? NFS_BACKEND_CEPHFS
								    : NFS_BACKEND_POSIX,
			.handles = schemes[srv->server.handles],
			.handle_index_dir = index_dir,
			.identity = identities[srv->server.identity],
			.ordma = x->ordma,
			.ceph = {.conf_file = x->ceph.conf_file,
				 .client_id = x->ceph.client_id,
				 .keyring = x->ceph.keyring,
				 .root = x->ceph.root,
				 .mount_timeout_s = x->ceph.mount_timeout_s},
		};
	}
	return e;
}

/* Whether one of the listen addresses is IPv6 ("::" takes IPv4 too). */
static int listens_on_ipv6(const struct cfg_strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		if (strchr(l->v[i], ':') != NULL)
			return 1;
	return 0;
}

/* Whether listen address i is an IPv4 one, or an IPv4-mapped IPv6 one
 * ("::ffff:127.0.0.1"), that "::" in the same list already takes (a
 * dual-stack listener, net_dual_stack): listening on it as well would fail,
 * the port being taken, so ["0.0.0.0", "::"] means what "::" alone does. */
static bool taken_by_any6(const struct cfg_strlist *l, size_t i)
{
	struct in6_addr a6;
	struct in_addr a;

	if (inet_pton(AF_INET, l->v[i], &a) != 1 &&
	    (inet_pton(AF_INET6, l->v[i], &a6) != 1 || !IN6_IS_ADDR_V4MAPPED(&a6)))
		return false;
	for (size_t k = 0; k < l->n; k++)
		if (net_host_is_any6(l->v[k]))
			return true;
	return false;
}

/* Optimistic RDMA, where an export wants it. */
static int start_ordma(struct nfsrdma_server *s)
{
	const struct nfsrdma_config *c = &s->cfg;

	if (!nfs_backend_wants_ordma(s->be))
		return 0;
	return nfs_ordma_start(s->rpc, s->rr, s->be, c->server.ordma.cache,
			       (uint32_t)c->server.ordma.block);
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
				    .spin_us = c->server.tcp_poll_spin_us,
				    .spin_max_us = c->server.adaptive_poll_us,
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
	for (size_t i = 0; i < c->server.listen.n; i++)
		if (taken_by_any6(&c->server.listen, i))
			log_notice("listen address %s: \"::\" takes IPv4 too",
				   c->server.listen.v[i]);
	for (size_t i = 0; c->server.tcp_port && i < c->server.listen.n; i++) {
		const char *host = c->server.listen.v[i];

		if (taken_by_any6(&c->server.listen, i))
			continue;
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
	if ((rc = start_ordma(s)) != 0)
		return rc;
	for (size_t i = 0; i < c->server.listen.n; i++)
		if (!taken_by_any6(&c->server.listen, i) &&
		    (rc = rr_server_listen(s->rr, c->server.listen.v[i], rport)) != 0)
			return rc;
	return 0;
}

static void ctl_answer(const char *cmd, FILE *out, void *arg)
{
	struct nfsrdma_server *s = arg;

	if (strcmp(cmd, "stats") == 0) {
		daemon_print_stats(s, out);
	} else if (strcmp(cmd, "exports") == 0) {
		daemon_print_exports(s, out);
	} else if (strcmp(cmd, "metrics") == 0) {
		metrics_print(s, out);
	} else if (strcmp(cmd, "reload") == 0) {
		if (daemon_reload(s, s->cfg.source, out) == 0)
			fprintf(out, "reloaded %s\n", s->cfg.source);
		else
			fprintf(out, "reload refused: the running configuration stays\n");
	} else {
		fprintf(out, "error: unknown command '%s' (stats, exports, metrics, reload)\n",
			cmd);
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
	if (getentropy(key, sizeof(key)) != 0 ||
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

/* The lock manager, when the configuration serves locks; its state directory
 * defaults to "sm" beside the handle key. */
static int start_nlm(struct nfsrdma_server *s)
{
	const struct nfsrdma_config *c = &s->cfg;
	struct nlm_params p = {.grace_s = c->server.nlm.grace_s,
			       .clients_max = c->server.nlm.clients_max,
			       .owners_per_client = c->server.nlm.owners_per_client,
			       .locks_per_client = c->server.nlm.locks_per_client,
			       .blocked_per_client = c->server.nlm.blocked_per_client,
			       .blocked_timeout_s = c->server.nlm.blocked_timeout_s,
			       .callback_retries = c->server.nlm.callback_retries,
			       .client_rpcbind_port = c->server.nlm.client_rpcbind_port,
			       .state_dir = c->server.nsm.state_dir,
			       .name = c->server.nsm.name};
	char dir[4096];
	int rc;

	if (!c->server.nlm.enable)
		return 0;
	p.state_dir = state_dir(c, p.state_dir, "sm", dir, sizeof(dir));
	if ((rc = nlm_create(&p, s->be, &s->nlm)) != 0)
		return rc;
	return nlm_register(s->rpc, s->nlm);
}

int daemon_start(struct nfsrdma_server *s, struct nfsrdma_config *cfg)
{
	const struct nfsrdma_config *c = &s->cfg;
	struct rpc_server_params sp;
	struct nfs_export_conf *ec;
	char err[256], index_dir[PATH_MAX];
	int rc;

	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->cfg_lock, NULL);
	pthread_mutex_init(&s->reload_lock, NULL);
	s->cfg = *cfg;
	memset(cfg, 0, sizeof(*cfg));
	/* a running server's pidfile or control socket: stop before anything
	 * it would see (its NSM state and SM_NOTIFY to its clients, its rpcbind
	 * entries) */
	if ((rc = write_pidfile(s)) != 0 || (rc = ctl_check_free(c->server.control_socket)) != 0)
		goto fail;
	if (c->server.integrity.mode == CFG_INTEGRITY_HMAC_SHA256) {
		rc = integrity_key_load(c->server.integrity.key_file, &s->key, err, sizeof(err));
		if (rc) {
			log_err("integrity key: %s", err);
			goto fail;
		}
		s->have_key = 1;
	}
	if (!(ec = export_confs(c, c, index_dir, sizeof(index_dir)))) {
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
	nfs_backend_set_limits(s->be, c->server.threads, c->server.storage_timeout_s);
	sp = (struct rpc_server_params){.threads = c->server.threads,
					.key = s->have_key ? &s->key : NULL,
					.drc_entries = c->server.reply_cache,
					.replay_contexts = c->server.integrity.replay_contexts,
					.replay_window_s = c->server.integrity.replay_window_s,
					.mem_budget = c->server.memory_budget,
					.inline_calls = c->server.inline_calls};
	if ((rc = rpc_server_create(&sp, &s->rpc)) != 0 ||
	    (rc = nfs_programs_register(s->rpc, s->be)) != 0 || (rc = start_nlm(s)) != 0 ||
	    (rc = start_listeners(s)) != 0)
		goto fail;
	if (c->server.rpcbind && c->server.tcp_port)
		s->rpcbind_done = rpcbind_register(c->server.tcp_port, s->nlm != NULL,
						   listens_on_ipv6(&c->server.listen)) == 0;
	if ((rc = ctl_start(c->server.control_socket, 0600, ctl_answer, s, &s->ctl)) != 0)
		goto fail;
	if (c->server.metrics.listen != NULL &&
	    (rc = metrics_start(s, c->server.metrics.listen, &s->metrics)) != 0)
		goto fail;
	log_notice("serving %zu export%s with %u worker threads", c->server.n_exports,
		   c->server.n_exports == 1 ? "" : "s", c->server.threads);
	return 0;
fail:
	daemon_stop(s);
	return rc;
}

/* Whether two optional strings are equal (both unset, or the same text). */
static int same_string(const char *a, const char *b)
{
	return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
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
	       a->server.inline_calls != b->server.inline_calls ||
	       a->server.integrity.mode != b->server.integrity.mode ||
	       a->server.handles != b->server.handles || a->server.identity != b->server.identity ||
	       a->server.ordma.cache != b->server.ordma.cache ||
	       a->server.ordma.block != b->server.ordma.block ||
	       !same_string(a->server.handle_index_dir, b->server.handle_index_dir) ||
	       !same_string(a->server.metrics.listen, b->server.metrics.listen);
}

/* Log each line of text as an error, and copy it to report (if any). */
static void report_lines(char *text, FILE *report)
{
	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		log_err("%s", line);
		if (report != NULL)
			fprintf(report, "%s\n", line);
	}
}

/* Read path; 0 with *fresh filled, or -EINVAL with every problem logged and
 * copied to report. */
static int reload_load(const char *path, struct nfsrdma_config *fresh, FILE *report)
{
	struct config_errors errs;
	char *text = NULL;
	size_t len = 0;
	FILE *mem;

	config_errors_init(&errs);
	if (config_load(path, fresh, &errs) == 0) {
		config_errors_free(&errs);
		return 0;
	}
	if ((mem = open_memstream(&text, &len)) != NULL) {
		config_errors_print(&errs, mem);
		fclose(mem);
		report_lines(text, report);
		free(text);
	}
	config_errors_free(&errs);
	return -EINVAL;
}

/* Swap in fresh's exports and log level (the backend already serves them);
 * fresh gets the old ones, to be freed. */
static void reload_swap(struct nfsrdma_server *s, struct nfsrdma_config *fresh)
{
	struct cfg_export *old = s->cfg.server.exports;
	size_t nold = s->cfg.server.n_exports;

	log_set_level(s->log_debug ? LOG_LVL_DEBUG : fresh->log.level);
	pthread_mutex_lock(&s->cfg_lock);
	s->cfg.server.exports = fresh->server.exports;
	s->cfg.server.n_exports = fresh->server.n_exports;
	s->cfg.log.level = fresh->log.level;
	s->cfg.server.storage_timeout_s = fresh->server.storage_timeout_s;
	pthread_mutex_unlock(&s->cfg_lock);
	fresh->server.exports = old;
	fresh->server.n_exports = nold;
}

/* One reload, under reload_lock. */
static int reload_locked(struct nfsrdma_server *s, const char *path, FILE *report)
{
	struct nfsrdma_config fresh;
	struct nfs_export_conf *ec;
	char index_dir[PATH_MAX];
	int rc;

	if ((rc = reload_load(path, &fresh, report)) != 0)
		return rc;
	if (!(ec = export_confs(&fresh, &s->cfg, index_dir, sizeof(index_dir)))) {
		config_free(&fresh);
		return -ENOMEM;
	}
	rc = nfs_backend_reload(s->be, ec, fresh.server.n_exports);
	free(ec);
	if (rc) {
		config_free(&fresh);
		if (rc != -EBUSY)
			log_err("reload refused: the exports could not be opened");
		if (report != NULL)
			fprintf(report, "%s (see the log)\n",
				rc == -EBUSY ? "calls are still in storage that does not answer"
					     : "the exports could not be opened");
		return rc;
	}
	nfs_backend_set_limits(s->be, s->cfg.server.threads, fresh.server.storage_timeout_s);
	if (transport_changed(&s->cfg, &fresh))
		log_notice("transport settings in %s changed: they take effect at restart", path);
	/* the old access lists are no longer used: the backend swapped exports */
	reload_swap(s, &fresh);
	config_free(&fresh);
	log_notice("reloaded %s", path);
	return 0;
}

int daemon_reload(struct nfsrdma_server *s, const char *path, FILE *report)
{
	int rc;

	notify_reloading();
	pthread_mutex_lock(&s->reload_lock);
	rc = reload_locked(s, path, report);
	pthread_mutex_unlock(&s->reload_lock);
	if (rc == -EINVAL)
		log_err("reload refused: the running configuration stays");
	daemon_notify_ready(s);
	return rc;
}

void daemon_notify_ready(struct nfsrdma_server *s)
{
	char status[256];
	size_t n;

	pthread_mutex_lock(&s->cfg_lock);
	n = s->cfg.server.n_exports;
	pthread_mutex_unlock(&s->cfg_lock);
	snprintf(status, sizeof(status), "serving %zu export%s on RPC/RDMA port %u and TCP port %u",
		 n, n == 1 ? "" : "s", s->cfg.server.rdma_port, s->cfg.server.tcp_port);
	notify_ready(status);
}

void daemon_stop(struct nfsrdma_server *s)
{
	metrics_stop(s->metrics);
	s->metrics = NULL;
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
	nlm_destroy(s->nlm); /* no call runs now: its owners close, their locks go */
	s->nlm = NULL;
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
