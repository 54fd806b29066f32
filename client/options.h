/*
 * options.h: nfsrdma-client's settings: the built-in defaults, then the
 * configuration file's client and rdma sections, then the -o options, each
 * overriding the one before. Shared by the mount helper and bench.
 */
#ifndef NFSRDMA_CLIENT_OPTIONS_H
#define NFSRDMA_CLIENT_OPTIONS_H

#include <stddef.h>

#include "client/nfs3_clnt.h"
#include "common/rpc/integrity.h"
#include "common/base/log.h"

#define CLIENT_OPT_ERR_LEN 512

struct client_opts {
	struct nfs3c_params nfs; /* its strings point into the fields below */
	char *host, *export;	 /* from server:/export */
	char *port, *mountport, *provider, *keyfile, *config, *heads;
	int integrity;		   /* 0 none, 1 hmac-sha256 */
	int mountproto;		   /* enum nfs3c_proto; -1: as proto */
	struct integrity_key key;  /* loaded by client_opts_finish when integrity is on */
	int direct_io, foreground; /* mount only */
	int soft;		   /* calls give up after retry_ms (else retry forever) */
	int debug;		   /* log at debug level */
	int nolock;		   /* locks local to the mount, not through NLM */
	unsigned lockport;	   /* the server's NLM over TCP; 0: rpcbind, else 2049 */
	unsigned lockcbport;	   /* our NLM callback UDP port; 0: any */
	char fuse_opts[1024];	   /* mount(8) options passed to FUSE ("ro,nosuid,...") */
	char *raw;		   /* every -o string, to apply again over the config file */
	enum log_level log_level;  /* from the configuration file; debug: LOG_LVL_DEBUG */
};

/* Fill o with the defaults. */
void client_opts_init(struct client_opts *o);
/* Parse "host:/export" (host may be [v6addr]). */
int client_opts_spec(struct client_opts *o, const char *spec, char *err, size_t errlen);
/* Apply one comma-separated -o string (may be given several times). Unknown
 * options and bad values are errors naming the option. */
int client_opts_parse(struct client_opts *o, const char *opts, char *err, size_t errlen);
/* Read the configuration file (config=FILE, else the default one if it
 * exists) under the options already given, load the integrity key, and
 * check the whole. Call once, after every client_opts_parse. */
int client_opts_finish(struct client_opts *o, char *err, size_t errlen);
void client_opts_free(struct client_opts *o);

/* Internal to options*.c: every setting back to its default (host, export,
 * config= and the saved options stay); and the configuration file under the
 * options (options_config.c). */
void client_opts_reset(struct client_opts *o);
int client_opts_load_config(struct client_opts *o, char *err, size_t errlen);

/* The option names, one "name[=VALUE]  what" per line, for usage messages. */
extern const char client_opts_help[];

#endif
