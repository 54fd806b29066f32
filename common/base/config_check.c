/*
 * config_check.c: the rules that involve more than one setting (watermarks,
 * budgets, allphys and trust, integrity keys, exports), run after the walk.
 * Each error goes to the line of a setting the file actually set.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config_int.h"
#include "size.h"

/* Index of a config_main_table path a cross-check names. */
static size_t main_index(const char *path)
{
	int i = config_find_entry(config_main_table, NMAIN, path);

	if (i < 0)
		abort(); /* a cross-check names a setting the table lacks: a bug here */
	return (size_t)i;
}

/* Where the config_main_table setting path was set in the file, or NULL (a default). */
static const config_setting_t *seen_at(const struct load_ctx *c, const char *path)
{
	return c->seen[main_index(path)];
}

/* Whether the file gave path a value that was refused (already reported). */
static bool refused(const struct load_ctx *c, const char *path)
{
	return c->bad[main_index(path)];
}

/*
 * A cross-check error about path: at its line, or file-wide if it was defaulted;
 * dropped if path's own value was refused, as the check then saw a default.
 */
__attribute__((format(printf, 3, 4))) static void report_at(struct load_ctx *c, const char *path,
							    const char *fmt, ...)
{
	const config_setting_t *s = seen_at(c, path);
	char buf[PATH_MAX];
	va_list ap;

	if (refused(c, path))
		return;
	va_start(ap, fmt);
	if (s != NULL)
		config_errorv(
			c->errs,
			config_setting_file(c, config_setting_source_file(s), buf, sizeof(buf)),
			config_setting_source_line(s), path, fmt, ap);
	else
		config_errorv(c->errs, c->file, 0, path, fmt, ap);
	va_end(ap);
}

/*
 * lo must be below hi (strict) or at most hi. The error goes to whichever of the
 * two the file set, lo first, and names the other with its value.
 */
static void order_check(struct load_ctx *c, const char *lo_path, uint64_t lo, const char *hi_path,
			uint64_t hi, bool strict, bool sizes)
{
	char a[SIZE_TEXT_MAX], b[SIZE_TEXT_MAX];

	if ((strict ? lo < hi : lo <= hi) || refused(c, lo_path) || refused(c, hi_path))
		return;
	if (sizes) {
		size_format(lo, a);
		size_format(hi, b);
	} else {
		snprintf(a, sizeof(a), "%llu", (unsigned long long)lo);
		snprintf(b, sizeof(b), "%llu", (unsigned long long)hi);
	}
	if (seen_at(c, lo_path) != NULL || seen_at(c, hi_path) == NULL)
		report_at(c, lo_path, "%s must be %s %s (%s)", a, strict ? "below" : "at most",
			  hi_path, b);
	else
		report_at(c, hi_path, "%s must be %s %s (%s)", b, strict ? "above" : "at least",
			  lo_path, a);
}

/* A key file must be a regular file that only its owner can access, holding
 * a key of CFG_KEY_MIN..CFG_KEY_MAX bytes. */
static int check_key_file(const char *path, char *why, size_t len)
{
	char buf[CFG_KEY_MAX + 2];
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		snprintf(why, len, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0)
		snprintf(why, len, "%s: cannot stat: %s", path, strerror(errno));
	else if (!S_ISREG(st.st_mode))
		snprintf(why, len, "%s is not a regular file", path);
	else if ((st.st_mode & 077) != 0)
		snprintf(why, len,
			 "%s can be accessed by group or others (mode %04o): chmod 600 it", path,
			 (unsigned)(st.st_mode & 07777));
	else if (st.st_size == 0)
		snprintf(why, len, "%s is empty", path);
	else if ((n = read(fd, buf, sizeof(buf))) < 0)
		snprintf(why, len, "%s: cannot read: %s", path, strerror(errno));
	else if ((n -= n > 0 && buf[n - 1] == '\n') < CFG_KEY_MIN || n > CFG_KEY_MAX)
		snprintf(why, len, "%s: the key must be %d to %d bytes", path, CFG_KEY_MIN,
			 CFG_KEY_MAX);
	else
		why[0] = '\0';
	close(fd);
	return why[0] ? -1 : 0;
}

/* Resolve a relative key_file against the config file's directory. -1: no memory. */
static int resolve_key_file(const struct load_ctx *c, struct cfg_integrity *in)
{
	char *abs;
	size_t len;

	if (in->key_file == NULL || in->key_file[0] == '/' || c->dir == NULL)
		return 0;
	len = strlen(c->dir) + strlen(in->key_file) + 2;
	abs = malloc(len);
	if (abs == NULL)
		return -1;
	snprintf(abs, len, "%s/%s", c->dir, in->key_file);
	free(in->key_file);
	in->key_file = abs;
	return 0;
}

/* section.integrity: hmac-sha256 needs a key file, and a safe one. */
static void check_integrity(struct load_ctx *c, const char *section, struct cfg_integrity *in)
{
	char mode_path[64], key_path[64], why[PATH_MAX + 128];

	snprintf(mode_path, sizeof(mode_path), "%s.integrity.mode", section);
	snprintf(key_path, sizeof(key_path), "%s.integrity.key_file", section);
	if (resolve_key_file(c, in) < 0)
		report_at(c, key_path, "out of memory");
	if (in->mode == CFG_INTEGRITY_NONE || refused(c, key_path))
		return;
	if (in->key_file == NULL)
		report_at(c, mode_path, "%s needs %s", config_integrity_name(in->mode), key_path);
	else if (check_key_file(in->key_file, why, sizeof(why)) < 0)
		report_at(c, key_path, "%s", why);
}

/* allphys hands every peer one key to all registered memory: trusted peers only. */
static void check_allphys(struct load_ctx *c, const char *section, bool allphys, bool trusted)
{
	char reg_path[64], trust_path[64];

	if (!allphys || trusted)
		return;
	snprintf(reg_path, sizeof(reg_path), "%s.registration", section);
	snprintf(trust_path, sizeof(trust_path), "%s.trusted_peers", section);
	report_at(c, reg_path,
		  "allphys needs %s = true: every peer could reach all registered memory",
		  trust_path);
}

/* In Read-Read mode the server exposes its replies; a key must die with the
 * reply it exposed, or a client that kept one reads what the buffer holds
 * next (another client's data). cache keeps its keys: trusted peers only. */
static void check_read_read_keys(struct load_ctx *c, const struct nfsrdma_config *cfg)
{
	if (!(cfg->server.modes & CFG_MODE_BIT(CFG_MODE_READ_READ)) ||
	    cfg->server.registration != CFG_SREG_CACHE || cfg->server.trusted_peers)
		return;
	/* at the line that asked for the cache, or else at the modes (cache is the default) */
	report_at(c, seen_at(c, "server.registration") ? "server.registration" : "server.modes",
		  "cache keeps a key valid after the reply it exposed, so in read-read mode a "
		  "client could read other clients' later replies: use fastreg or dynamic there, "
		  "or set server.trusted_peers = true");
}

/* An error about setting key of export i, at the line it was set on. */
__attribute__((format(printf, 4, 5))) static void
export_error(struct load_ctx *c, size_t i, const char *key, const char *fmt, ...)
{
	const config_setting_t *s =
		c->xseen[i * NEXP + (size_t)config_find_entry(config_export_table, NEXP, key)];
	char path[128], buf[PATH_MAX];
	va_list ap;

	snprintf(path, sizeof(path), "%s.[%zu].%s", EXPORTS_PREFIX, i, key);
	va_start(ap, fmt);
	if (s != NULL)
		config_errorv(
			c->errs,
			config_setting_file(c, config_setting_source_file(s), buf, sizeof(buf)),
			config_setting_source_line(s), path, fmt, ap);
	else
		config_errorv(c->errs, c->file, c->cfg->server.exports[i].line, path, fmt, ap);
	va_end(ap);
}

/* A file the server must read at start-up: a readable regular file. */
static int check_readable_file(const char *path, char *why, size_t len)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	why[0] = '\0';
	if (fd < 0) {
		snprintf(why, len, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0)
		snprintf(why, len, "%s: cannot stat: %s", path, strerror(errno));
	else if (!S_ISREG(st.st_mode))
		snprintf(why, len, "%s is not a regular file", path);
	close(fd);
	return why[0] ? -1 : 0;
}

/* Whether export i's element set key (a ceph.* setting) in the file. */
static bool export_set(const struct load_ctx *c, size_t i, const char *key)
{
	return c->xseen[i * NEXP + (size_t)config_find_entry(config_export_table, NEXP, key)] !=
	       NULL;
}

static const char *const ceph_keys[] = {"ceph.conf_file", "ceph.client_id", "ceph.keyring",
					"ceph.root", "ceph.mount_timeout_s"};

/* backend = cephfs: built in, and its files readable; ceph.* only with it. */
static void check_ceph_export(struct load_ctx *c, size_t i)
{
	const struct cfg_export *exp = &c->cfg->server.exports[i];
	char why[PATH_MAX + 128];

	if (exp->backend != CFG_BACKEND_CEPHFS) {
		for (size_t k = 0; k < sizeof(ceph_keys) / sizeof(ceph_keys[0]); k++)
			if (export_set(c, i, ceph_keys[k]))
				export_error(c, i, ceph_keys[k], "only for backend = \"cephfs\"");
		return;
	}
#ifndef HAVE_CEPHFS
	export_error(c, i, "backend",
		     "this nfsrdma-server was built without CephFS (configure --with-cephfs, "
		     "Debian: libcephfs-dev)");
#endif
	if (exp->ceph.conf_file != NULL && exp->ceph.conf_file[0] != '\0' &&
	    check_readable_file(exp->ceph.conf_file, why, sizeof(why)) < 0)
		export_error(c, i, "ceph.conf_file", "%s", why);
	if (exp->ceph.keyring != NULL &&
	    check_readable_file(exp->ceph.keyring, why, sizeof(why)) < 0)
		export_error(c, i, "ceph.keyring", "%s", why);
}

/* Exports of the configuration: no directory twice; integrity_required only
 * when integrity is on. */
static void check_exports(struct load_ctx *c)
{
	const struct nfsrdma_config *cfg = c->cfg;
	size_t path_idx = (size_t)config_find_entry(config_export_table, NEXP, "path");

	for (size_t i = 0; i < cfg->server.n_exports; i++) {
		const struct cfg_export *exp = &cfg->server.exports[i];

		if (exp->file != NULL)
			break; /* the exports file's come last and were checked as read */
		check_ceph_export(c, i);
		if (exp->integrity_required && cfg->server.integrity.mode == CFG_INTEGRITY_NONE)
			export_error(c, i, "integrity_required",
				     "needs server.integrity.mode = \"hmac-sha256\"");
		if (exp->ordma && exp->backend != CFG_BACKEND_POSIX)
			export_error(c, i, "ordma", "only POSIX exports have it");
		if (exp->ordma && cfg->server.ordma.cache == 0)
			export_error(c, i, "ordma", "needs server.ordma.cache (its size)");
		if (exp->ordma && !cfg->server.trusted_peers)
			export_error(c, i, "ordma",
				     "every client connected over RPC/RDMA could read its cached "
				     "blocks whatever the files' permissions: set "
				     "server.trusted_peers = true if that is meant");
		for (size_t j = 0; exp->path != NULL && j < i; j++) {
			const config_setting_t *first = c->xseen[j * NEXP + path_idx];

			if (cfg->server.exports[j].path != NULL &&
			    strcmp(cfg->server.exports[j].path, exp->path) == 0) {
				export_error(
					c, i, "path", "duplicate export path %s (also at line %u)",
					exp->path, first ? config_setting_source_line(first) : 0);
				break;
			}
		}
	}
}

/* The server section's rules that involve more than one setting. */
static void check_server(struct load_ctx *c)
{
	const struct nfsrdma_config *cfg = c->cfg;

	order_check(c, "server.cache.low_watermark", cfg->server.cache.low_watermark,
		    "server.cache.high_watermark", cfg->server.cache.high_watermark, true, false);
	if (cfg->server.registration == CFG_SREG_CACHE)
		order_check(c, "server.cache.budget", cfg->server.cache.budget,
			    "rdma.registered_memory_budget", cfg->rdma.registered_memory_budget,
			    false, true);
	if (cfg->server.modes & CFG_MODE_BIT(CFG_MODE_READ_READ))
		order_check(c, "rdma.max_io_size", cfg->rdma.max_io_size,
			    "server.read_read.exposed_bytes_max",
			    cfg->server.read_read.exposed_bytes_max, false, true);
	check_allphys(c, "server", cfg->server.registration == CFG_SREG_ALLPHYS,
		      cfg->server.trusted_peers);
	check_read_read_keys(c, cfg);
	if (cfg->server.tcp_port != 0 && cfg->server.tcp_port == cfg->server.rdma_port) {
		if (seen_at(c, "server.tcp_port") != NULL)
			report_at(c, "server.tcp_port", "%u is also server.rdma_port",
				  cfg->server.tcp_port);
		else
			report_at(c, "server.rdma_port", "%u is also server.tcp_port",
				  cfg->server.rdma_port);
	}
	check_integrity(c, "server", &c->cfg->server.integrity);
	if (cfg->server.ordma.block & (cfg->server.ordma.block - 1))
		report_at(c, "server.ordma.block", "%llu is not a power of two",
			  (unsigned long long)cfg->server.ordma.block);
	check_exports(c);
}

/* The client section's rules that involve more than one setting. */
static void check_client(struct load_ctx *c)
{
	const struct nfsrdma_config *cfg = c->cfg;

	order_check(c, "client.cache.low_watermark", cfg->client.cache.low_watermark,
		    "client.cache.high_watermark", cfg->client.cache.high_watermark, true, false);
	if (cfg->client.registration == CFG_CREG_CACHE)
		order_check(c, "client.cache.budget", cfg->client.cache.budget,
			    "rdma.registered_memory_budget", cfg->rdma.registered_memory_budget,
			    false, true);
	order_check(c, "client.acregmin", cfg->client.acregmin, "client.acregmax",
		    cfg->client.acregmax, false, false);
	order_check(c, "client.acdirmin", cfg->client.acdirmin, "client.acdirmax",
		    cfg->client.acdirmax, false, false);
	check_allphys(c, "client", cfg->client.registration == CFG_CREG_ALLPHYS,
		      cfg->client.trusted_peers);
	check_integrity(c, "client", &c->cfg->client.integrity);
}

/* Every rule between settings, once the file has been walked. */
void config_cross_check(struct load_ctx *c)
{
	check_server(c);
	check_client(c);
}
