/*
 * options_config.c: the configuration file under nfsrdma-client's options.
 * The file (config=FILE, else SYSCONFDIR/nfsrdma.conf when it exists) is read
 * with common/base/config.c, its client and rdma sections become the settings, and
 * the -o options given on the command line are applied again on top, so they
 * override it. An error in the file stops the client and names file, line,
 * setting and problem.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/options.h"
#include "common/base/config.h"

#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif
#define DEFAULT_CONFIG SYSCONFDIR "/nfsrdma.conf"

/* The rdma section and the client section's transport and NFS settings:
 * rr_params_from_config and nfs3c_params_from_config, which also give a mount
 * without a file its defaults. */
static int apply_nfs(struct client_opts *o, const struct nfsrdma_config *cfg)
{
	struct rr_params *rr = &o->nfs.rr;

	free(o->provider);
	if (!(o->provider = strdup(cfg->rdma.provider ? cfg->rdma.provider : "auto")))
		return -ENOMEM;
	rr_params_from_config(cfg, RR_ROLE_CLIENT, rr);
	nfs3c_params_from_config(cfg, &o->nfs);
	rr->provider = o->provider; /* cfg's own string goes with cfg */
	return 0;
}

/* The rest of the client section: integrity, port, log level. */
static int apply_client(struct client_opts *o, const struct nfsrdma_config *cfg)
{
	char port[16];

	o->integrity = cfg->client.integrity.mode == CFG_INTEGRITY_HMAC_SHA256;
	free(o->keyfile);
	o->keyfile = cfg->client.integrity.key_file ? strdup(cfg->client.integrity.key_file) : NULL;
	free(o->port);
	o->port = NULL;
	if (cfg->client.port) {
		snprintf(port, sizeof(port), "%u", cfg->client.port);
		o->port = strdup(port);
	}
	o->log_level = cfg->log.level;
	return (cfg->client.integrity.key_file && !o->keyfile) || (cfg->client.port && !o->port)
		       ? -ENOMEM
		       : 0;
}

/* Every problem config_load found, as one message. */
static void errors_text(const struct config_errors *errs, char *err, size_t errlen)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (f) {
		config_errors_print(errs, f);
		fclose(f);
	}
	snprintf(err, errlen, "configuration file errors:\n%s", buf && len ? buf : "(none said)");
	if (len && err[strlen(err) - 1] == '\n')
		err[strlen(err) - 1] = '\0';
	free(buf);
}

/* The file to read: config=, else the default one if it is there, else none. */
static const char *config_path(const struct client_opts *o)
{
	if (o->config)
		return o->config;
	return access(DEFAULT_CONFIG, F_OK) == 0 ? DEFAULT_CONFIG : NULL;
}

int client_opts_load_config(struct client_opts *o, char *err, size_t errlen)
{
	const char *path = config_path(o);
	struct nfsrdma_config cfg;
	struct config_errors errs;
	char *raw;
	int rc;

	if (!path)
		return 0;
	config_errors_init(&errs);
	if (config_load(path, &cfg, &errs) != 0) {
		errors_text(&errs, err, errlen);
		config_errors_free(&errs);
		return -EINVAL;
	}
	config_errors_free(&errs);
	raw = o->raw; /* the options, applied again over the file */
	o->raw = NULL;
	client_opts_reset(o);
	rc = apply_nfs(o, &cfg);
	if (rc == 0)
		rc = apply_client(o, &cfg);
	config_free(&cfg);
	if (rc == 0 && raw)
		rc = client_opts_parse(o, raw, err, errlen);
	else if (rc)
		snprintf(err, errlen, "out of memory");
	free(raw);
	return rc;
}
