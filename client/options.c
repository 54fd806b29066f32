/*
 * options.c: the -o options of nfsrdma-client, table-driven: each entry names
 * an option, the function that checks and applies its value, where it goes and
 * its range. mount(8)'s generic options are passed to FUSE or ignored as
 * mount(8) itself would.
 */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client/options.h"

struct opt_def;
typedef int (*opt_set_fn)(struct client_opts *o, const struct opt_def *d, const char *val,
			  char *err, size_t errlen);

struct opt_def {
	const char *name;
	opt_set_fn set;
	size_t off; /* into struct client_opts */
	long long min, max;
	const char *const *names; /* enums: the values, in enum order */
};

#define OFF(f)	       offsetof(struct client_opts, f)
#define AT(o, d, type) ((type *)(void *)((char *)(o) + (d)->off))

static const char *const proto_names[] = {"rdma", "tcp", NULL};
static const char *const mode_names[] = {"read-write", "read-read", NULL};
static const char *const reg_names[] = {"zerocopy", "cache", "fastreg", "allphys", NULL};
static const enum rr_reg reg_values[] = {RR_REG_ZEROCOPY, RR_REG_CACHE, RR_REG_FASTREG,
					 RR_REG_ALLPHYS};
static const char *const integrity_names[] = {"none", "hmac-sha256", NULL};

/* mount(8) options FUSE understands: passed on. */
static const char *const fuse_pass[] = {"ro",
					"rw",
					"nosuid",
					"suid",
					"nodev",
					"dev",
					"noexec",
					"exec",
					"sync",
					"async",
					"dirsync",
					"noatime",
					"atime",
					"relatime",
					"norelatime",
					"strictatime",
					"nodiratime",
					"diratime",
					"default_permissions",
					"allow_other",
					NULL};
/* mount(8) and fstab options that mean nothing here. */
static const char *const ignored[] = {"defaults", "auto",   "noauto", "user",	   "nouser",
				      "users",	  "owner",  "group",  "_netdev",   "nofail",
				      "intr",	  "nointr", "vers=3", "nfsvers=3", NULL};

/* Integer value of val in [min, max] with an optional K/M/G suffix (sizes). */
static int parse_num(const struct opt_def *d, const char *val, int sized, long long *out, char *err,
		     size_t errlen)
{
	char *end;
	long long v;

	if (!val || !*val) {
		snprintf(err, errlen, "option '%s' needs a value", d->name);
		return -EINVAL;
	}
	errno = 0;
	v = strtoll(val, &end, 10);
	if (sized && end != val && *end && !end[1]) {
		int sh = strchr("kK", *end)   ? 10
			 : strchr("mM", *end) ? 20
			 : strchr("gG", *end) ? 30
					      : -1;

		if (sh > 0 && v <= (LLONG_MAX >> sh)) {
			v <<= sh;
			end++;
		}
	}
	if (errno || end == val || *end || v < d->min || v > d->max) {
		snprintf(err, errlen, "option '%s': '%s' is not %s between %lld and %lld", d->name,
			 val, sized ? "a size" : "a number", d->min, d->max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* A flag takes no value; it stores d->min. */
static int set_flag(struct client_opts *o, const struct opt_def *d, const char *val, char *err,
		    size_t errlen)
{
	if (val) {
		snprintf(err, errlen, "option '%s' takes no value", d->name);
		return -EINVAL;
	}
	*AT(o, d, int) = (int)d->min;
	return 0;
}

/* An unsigned within range. */
static int set_unsigned(struct client_opts *o, const struct opt_def *d, const char *val, char *err,
			size_t errlen)
{
	long long v;
	int rc = parse_num(d, val, 0, &v, err, errlen);

	if (rc == 0)
		*AT(o, d, unsigned) = (unsigned)v;
	return rc;
}

/* A transfer size: a multiple of 4096 within range. */
static int set_u32_size(struct client_opts *o, const struct opt_def *d, const char *val, char *err,
			size_t errlen)
{
	long long v;
	int rc = parse_num(d, val, 1, &v, err, errlen);

	if (rc == 0 && v % 4096) {
		snprintf(err, errlen, "option '%s': %lld is not a multiple of 4096", d->name, v);
		rc = -EINVAL;
	}
	if (rc == 0)
		*AT(o, d, uint32_t) = (uint32_t)v;
	return rc;
}

/* A byte count within range. */
static int set_size(struct client_opts *o, const struct opt_def *d, const char *val, char *err,
		    size_t errlen)
{
	long long v;
	int rc = parse_num(d, val, 1, &v, err, errlen);

	if (rc == 0)
		*AT(o, d, size_t) = (size_t)v;
	return rc;
}

/* Seconds into an int of milliseconds. */
static int set_ms(struct client_opts *o, const struct opt_def *d, const char *val, char *err,
		  size_t errlen)
{
	long long v;
	int rc = parse_num(d, val, 0, &v, err, errlen);

	if (rc == 0)
		*AT(o, d, int) = (int)(v * 1000);
	return rc;
}

/* A string, replacing an earlier one. */
static int set_string(struct client_opts *o, const struct opt_def *d, const char *val, char *err,
		      size_t errlen)
{
	char **p = AT(o, d, char *);

	if (!val || !*val) {
		snprintf(err, errlen, "option '%s' needs a value", d->name);
		return -EINVAL;
	}
	free(*p);
	*p = strdup(val);
	return *p ? 0 : -ENOMEM;
}

/* A port number, kept as its string. */
static int set_port(struct client_opts *o, const struct opt_def *d, const char *val, char *err,
		    size_t errlen)
{
	long long v;
	int rc = parse_num(d, val, 0, &v, err, errlen);

	return rc ? rc : set_string(o, d, val, err, errlen);
}

/* heads=: the export's other servers, checked now. */
static int set_heads(struct client_opts *o, const struct opt_def *d, const char *val, char *err,
		     size_t errlen)
{
	int rc = val ? nfs3c_heads_parse(val, NULL, NULL, err, errlen) : 0;

	return rc ? rc : set_string(o, d, val, err, errlen);
}

/* Index of val in d->names, or an error listing them. */
static int enum_index(const struct opt_def *d, const char *val, char *err, size_t errlen)
{
	size_t n = 0;

	for (int i = 0; val && d->names[i]; i++)
		if (strcmp(d->names[i], val) == 0)
			return i;
	n = (size_t)snprintf(err, errlen, "option '%s': '%s' is not one of", d->name,
			     val ? val : "");
	for (int i = 0; d->names[i] && n < errlen; i++)
		n += (size_t)snprintf(err + n, errlen - n, " %s", d->names[i]);
	return -EINVAL;
}

/* One of d->names, stored as its index. */
static int set_enum(struct client_opts *o, const struct opt_def *d, const char *val, char *err,
		    size_t errlen)
{
	int i = enum_index(d, val, err, errlen);

	if (i < 0)
		return i;
	*AT(o, d, int) = i;
	return 0;
}

/* mode=: the RPC/RDMA mode the client uses. */
static int set_mode(struct client_opts *o, const struct opt_def *d, const char *val, char *err,
		    size_t errlen)
{
	int i = enum_index(d, val, err, errlen);

	if (i < 0)
		return i;
	o->nfs.rr.modes = i == 0 ? RR_MODE_READ_WRITE : RR_MODE_READ_READ;
	return 0;
}

/* reg=: the client registration strategy. */
static int set_reg(struct client_opts *o, const struct opt_def *d, const char *val, char *err,
		   size_t errlen)
{
	int i = enum_index(d, val, err, errlen);

	if (i < 0)
		return i;
	o->nfs.rr.reg = reg_values[i];
	return 0;
}

/* credits=: calls outstanding. */
static int set_credits(struct client_opts *o, const struct opt_def *d, const char *val, char *err,
		       size_t errlen)
{
	long long v;
	int rc = parse_num(d, val, 0, &v, err, errlen);

	if (rc == 0)
		o->nfs.rr.credits = (unsigned)v;
	return rc;
}

/* actimeo=: all four attribute cache times. */
static int set_actimeo(struct client_opts *o, const struct opt_def *d, const char *val, char *err,
		       size_t errlen)
{
	long long v;
	int rc = parse_num(d, val, 0, &v, err, errlen);

	if (rc == 0) {
		o->nfs.acregmin = o->nfs.acregmax = (unsigned)v;
		o->nfs.acdirmin = o->nfs.acdirmax = (unsigned)v;
	}
	return rc;
}

static const struct opt_def opts[] = {
	{"proto", set_enum, OFF(nfs.proto), 0, 0, proto_names},
	{"port", set_port, OFF(port), 1, 65535, NULL},
	{"mountport", set_port, OFF(mountport), 1, 65535, NULL},
	{"heads", set_heads, OFF(heads), 0, 0, NULL},
	{"nconnect", set_unsigned, OFF(nfs.nconnect), 1, NFS3C_NCONNECT_MAX, NULL},
	{"mountproto", set_enum, OFF(mountproto), 0, 0, proto_names},
	{"mode", set_mode, 0, 0, 0, mode_names},
	{"reg", set_reg, 0, 0, 0, reg_names},
	{"registration", set_reg, 0, 0, 0, reg_names},
	{"provider", set_string, OFF(provider), 0, 0, NULL},
	{"credits", set_credits, 0, 1, 1024, NULL},
	{"rsize", set_u32_size, OFF(nfs.rsize), 4096, 1 << 20, NULL},
	{"wsize", set_u32_size, OFF(nfs.wsize), 4096, 1 << 20, NULL},
	{"acregmin", set_unsigned, OFF(nfs.acregmin), 0, 3600, NULL},
	{"acregmax", set_unsigned, OFF(nfs.acregmax), 0, 3600, NULL},
	{"acdirmin", set_unsigned, OFF(nfs.acdirmin), 0, 3600, NULL},
	{"acdirmax", set_unsigned, OFF(nfs.acdirmax), 0, 3600, NULL},
	{"actimeo", set_actimeo, 0, 0, 3600, NULL},
	{"ac", set_flag, OFF(nfs.noac), 0, 0, NULL},
	{"noac", set_flag, OFF(nfs.noac), 1, 0, NULL},
	{"integrity", set_enum, OFF(integrity), 0, 0, integrity_names},
	{"keyfile", set_string, OFF(keyfile), 0, 0, NULL},
	{"direct_io", set_flag, OFF(direct_io), 1, 0, NULL},
	{"foreground", set_flag, OFF(foreground), 1, 0, NULL},
	{"config", set_string, OFF(config), 0, 0, NULL},
	{"timeo", set_ms, OFF(nfs.timeout_ms), 1, 3600, NULL},
	{"soft", set_flag, OFF(soft), 1, 0, NULL},
	{"hard", set_flag, OFF(soft), 0, 0, NULL},
	{"trusted_peers", set_flag, OFF(nfs.rr.trusted_peers), 1, 0, NULL},
	{"retry", set_ms, OFF(nfs.retry_ms), 1, 86400, NULL},
	{"dirty_max", set_size, OFF(nfs.dirty_max), 1 << 20, 1ll << 34, NULL},
	{"dir_max", set_unsigned, OFF(nfs.dir_max), 16, 1u << 30, NULL},
	{"debug", set_flag, OFF(debug), 1, 0, NULL},
	{"lock", set_flag, OFF(nolock), 0, 0, NULL},
	{"nolock", set_flag, OFF(nolock), 1, 0, NULL},
	{"lockport", set_unsigned, OFF(lockport), 1, 65535, NULL},
	{"lockcbport", set_unsigned, OFF(lockcbport), 1, 65535, NULL},
	{"ordma", set_flag, OFF(nfs.ordma), 1, 0, NULL},
	{"noordma", set_flag, OFF(nfs.ordma), 0, 0, NULL},
};

const char client_opts_help[] =
	"  proto=rdma|tcp          transport (rdma)\n"
	"  port=N                  server port (20049 rdma, 2049 tcp)\n"
	"  mountproto=rdma|tcp     MOUNT's transport (as proto)\n"
	"  mountport=N             MOUNT's port (rdma: port; tcp: rpcbind, else port)\n"
	"  heads=H[:P]+H[:P]...    the export's other servers: a head that stops answering\n"
	"                          is left for the next\n"
	"  nconnect=N              transports to the server, 1..16; calls take them in turn (1)\n"
	"  mode=read-write|read-read  RPC/RDMA mode (read-write)\n"
	"  reg=zerocopy|cache|fastreg|allphys  client memory registration (fastreg)\n"
	"  provider=auto|soft|DEV  RDMA provider or device (auto)\n"
	"  credits=N               calls in flight (128)\n"
	"  rsize=SIZE wsize=SIZE   transfer sizes, 4K..1M (1M, within the server's maximum)\n"
	"  acregmin= acregmax= acdirmin= acdirmax= actimeo=SECONDS  attribute cache\n"
	"  ac | noac               cache attributes (ac)\n"
	"  integrity=none|hmac-sha256, keyfile=PATH  per-call integrity (none)\n"
	"  timeo=SECONDS           wait for one reply (30)\n"
	"  hard | soft, retry=SECONDS  soft: give up on a call after retry seconds (hard)\n"
	"  trusted_peers           allow reg=allphys\n"
	"  dirty_max=SIZE          unstable write data kept for resending (64M)\n"
	"  dir_max=N               entries one directory may list (4194304)\n"
	"  direct_io               bypass the kernel page cache (mount)\n"
	"  foreground              do not daemonize (mount)\n"
	"  config=FILE             configuration file\n"
	"  debug                   log calls and reconnections\n"
	"  lock | nolock           fcntl/flock locks via the server's NLM, or local (lock)\n"
	"  lockport=N              the server's NLM TCP port (rpcbind's answer, else 2049)\n"
	"  lockcbport=N            our UDP port for the server's GRANTED callbacks (any)\n"
	"  ordma | noordma         small READs as RDMA Reads of the server's block cache\n"
	"                          where it offers one (Optimistic RDMA; noordma)\n";

/* See options.h. */
void client_opts_init(struct client_opts *o)
{
	memset(o, 0, sizeof(*o));
	nfs3c_params_defaults(&o->nfs);
	o->log_level = LOG_LVL_WARN;
	o->mountproto = -1;
}

/* See options.h. */
void client_opts_reset(struct client_opts *o)
{
	char *host = o->host, *export = o->export, *config = o->config, *raw = o->raw;

	o->host = o->export = o->config = o->raw = NULL;
	client_opts_free(o);
	client_opts_init(o);
	o->host = host;
	o->export = export;
	o->config = config;
	o->raw = raw;
}

/* See options.h. */
int client_opts_spec(struct client_opts *o, const char *spec, char *err, size_t errlen)
{
	const char *colon, *host = spec, *hend;

	if (spec[0] == '[') {
		hend = strchr(spec, ']');
		colon = hend ? hend + 1 : NULL;
		host = spec + 1;
		if (!colon || *colon != ':')
			colon = NULL;
	} else {
		colon = strchr(spec, ':');
		hend = colon;
	}
	if (!colon || hend == host || colon[1] != '/') {
		snprintf(err, errlen, "'%s' is not server:/export", spec);
		return -EINVAL;
	}
	free(o->host);
	free(o->export);
	o->host = strndup(host, (size_t)(hend - host));
	o->export = strdup(colon + 1);
	return o->host && o->export ? 0 : -ENOMEM;
}

/* Append name to the FUSE option string. */
static int fuse_opt_add(struct client_opts *o, const char *name, char *err, size_t errlen)
{
	size_t n = strlen(o->fuse_opts);

	if (n + strlen(name) + 2 > sizeof(o->fuse_opts)) {
		snprintf(err, errlen, "too many mount options");
		return -E2BIG;
	}
	snprintf(o->fuse_opts + n, sizeof(o->fuse_opts) - n, "%s%s", n ? "," : "", name);
	return 0;
}

/* Whether s is in a NULL-terminated list. */
static int in_list(const char *const *list, const char *s)
{
	for (int i = 0; list[i]; i++)
		if (strcmp(list[i], s) == 0)
			return 1;
	return 0;
}

/* Apply one option "name" or "name=value". */
static int apply_one(struct client_opts *o, char *item, char *err, size_t errlen)
{
	char *val = strchr(item, '=');

	if (in_list(fuse_pass, item))
		return fuse_opt_add(o, item, err, errlen);
	if (in_list(ignored, item) || strncmp(item, "x-", 2) == 0 ||
	    strncmp(item, "comment=", 8) == 0)
		return 0;
	if (val)
		*val++ = '\0';
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		if (strcmp(opts[i].name, item) == 0)
			return opts[i].set(o, &opts[i], val, err, errlen);
	snprintf(err, errlen, "unknown option '%s' (see nfsrdma-client(8))", item);
	return -EINVAL;
}

/* Remember s among the options given, to apply again over the config file. */
static int save_raw(struct client_opts *o, const char *s)
{
	size_t n = o->raw ? strlen(o->raw) : 0;
	char *r = realloc(o->raw, n + strlen(s) + 2);

	if (!r)
		return -ENOMEM;
	snprintf(r + n, strlen(s) + 2, "%s%s", n ? "," : "", s);
	o->raw = r;
	return 0;
}

/* See options.h. */
int client_opts_parse(struct client_opts *o, const char *s, char *err, size_t errlen)
{
	char *copy = strdup(s), *save = NULL, *item;
	int rc = copy ? 0 : -ENOMEM;

	for (item = copy ? strtok_r(copy, ",", &save) : NULL; item && rc == 0;
	     item = strtok_r(NULL, ",", &save))
		rc = apply_one(o, item, err, errlen);
	free(copy);
	return rc ? rc : save_raw(o, s);
}

/* Point the library's parameters at the strings we own. */
static void wire_strings(struct client_opts *o)
{
	o->nfs.host = o->host;
	o->nfs.export = o->export;
	o->nfs.port = o->port;
	o->nfs.mountport = o->mountport;
	o->nfs.heads = o->heads;
	if (o->provider)
		o->nfs.rr.provider = o->provider;
}

/* See options.h. */
int client_opts_finish(struct client_opts *o, char *err, size_t errlen)
{
	int rc;

	if ((rc = client_opts_load_config(o, err, errlen)) != 0)
		return rc;
	if (o->debug)
		o->log_level = LOG_LVL_DEBUG;
	wire_strings(o);
	o->nfs.mountproto = o->mountproto < 0 ? o->nfs.proto : (enum nfs3c_proto)o->mountproto;
	if (!o->soft)
		o->nfs.retry_ms = 0;
	else if (o->nfs.retry_ms == 0)
		o->nfs.retry_ms = 2 * o->nfs.timeout_ms;
	if (o->nfs.acregmin > o->nfs.acregmax || o->nfs.acdirmin > o->nfs.acdirmax) {
		snprintf(err, errlen, "acregmin/acdirmin must not exceed acregmax/acdirmax");
		return -EINVAL;
	}
	if (o->nfs.ordma && o->nfs.proto != NFS3C_PROTO_RDMA) {
		snprintf(err, errlen,
			 "ordma reads the server's memory by RDMA: it needs proto=rdma");
		return -EINVAL;
	}
	if (o->nfs.rr.reg == RR_REG_ALLPHYS && !o->nfs.rr.trusted_peers) {
		snprintf(err, errlen,
			 "reg=allphys lets the server reach every client buffer "
			 "with one key: it needs trusted_peers");
		return -EPERM;
	}
	if (o->integrity) {
		if (!o->keyfile) {
			snprintf(err, errlen, "integrity=hmac-sha256 needs keyfile=PATH");
			return -EINVAL;
		}
		if ((rc = integrity_key_load(o->keyfile, &o->key, err, errlen)) != 0)
			return rc;
		o->nfs.key = &o->key;
	} else if (o->keyfile) {
		snprintf(err, errlen, "keyfile= given without integrity=hmac-sha256");
		return -EINVAL;
	}
	return 0;
}

/* See options.h. */
void client_opts_free(struct client_opts *o)
{
	if (o->nfs.key)
		integrity_key_clear(&o->key);
	free(o->host);
	free(o->export);
	free(o->port);
	free(o->mountport);
	free(o->heads);
	free(o->provider);
	free(o->keyfile);
	free(o->config);
	free(o->raw);
	memset(o, 0, sizeof(*o));
}
