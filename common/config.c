/*
 * config.c: the configuration file of both daemons, read with libconfig.
 *
 * One table (main_table, plus export_table for each element of server.exports)
 * says for every setting its path, type, range, default, where it goes in
 * struct nfsrdma_config and what it means. Loading walks the parsed file against
 * the table, so an unknown name, a wrong type or a value out of range is found
 * the same way everywhere; then cross-checks between settings run. Every problem
 * is collected, none stops the others from being found, and each one names
 * FILE:LINE: SETTING.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libconfig.h>

#include "common/config.h"
#include "size.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------ names */

/* Allowed names of each enumeration, indexed by value, NULL-terminated. */
static const char *const level_names[] = {"error", "warning", "notice", "info", "debug", NULL};
static const char *const log_dest_names[] = {"stderr", "syslog", NULL};
static const char *const mode_names[] = {"read-write", "read-read", NULL};
static const char *const server_reg_names[] = {"dynamic", "fastreg", "cache", "allphys", NULL};
static const char *const client_reg_names[] = {"zerocopy", "cache", "fastreg", "allphys", NULL};
static const char *const integrity_names[] = {"none", "hmac-sha256", NULL};
static const char *const access_names[] = {"ro", "rw", NULL};
static const char *const proto_names[] = {"rdma", "tcp", NULL};

/* Index of name in a NULL-terminated list, or -1. */
static int name_index(const char *const *names, const char *name)
{
	for (int i = 0; names[i] != NULL; i++) {
		if (strcmp(names[i], name) == 0)
			return i;
	}
	return -1;
}

/* names[v], or "?" if v is not a valid index. */
static const char *name_at(const char *const *names, int v)
{
	for (int i = 0; names[i] != NULL; i++) {
		if (i == v)
			return names[i];
	}
	return "?";
}

/* The public name<->enum pairs, all through name_at/name_index. */
#define NAME_FUNCS(fn, type, names)                                                                \
	const char *config_##fn##_name(type v)                                                     \
	{                                                                                          \
		return name_at(names, (int)v);                                                     \
	}                                                                                          \
	int config_##fn##_parse(const char *name, type *out)                                       \
	{                                                                                          \
		int i = name_index(names, name);                                                   \
		if (i < 0)                                                                         \
			return -1;                                                                 \
		*out = (type)i;                                                                    \
		return 0;                                                                          \
	}
NAME_FUNCS(log_dest, enum cfg_log_dest, log_dest_names)
NAME_FUNCS(mode, enum cfg_mode, mode_names)
NAME_FUNCS(server_reg, enum cfg_server_reg, server_reg_names)
NAME_FUNCS(client_reg, enum cfg_client_reg, client_reg_names)
NAME_FUNCS(integrity, enum cfg_integrity_mode, integrity_names)
NAME_FUNCS(access, enum cfg_access, access_names)
NAME_FUNCS(proto, enum cfg_proto, proto_names)

/* ------------------------------------------------------------------ the table */

enum cfg_type {
	T_INT,	   /* integer in min..max, stored as unsigned */
	T_SIZE,	   /* integer or "64K"-style string in min..max, uint64_t */
	T_BOOL,	   /* true/false, bool */
	T_STRING,  /* string, char * ("" stores NULL), optional check */
	T_ENUM,	   /* one of names, stored as its enum (int-sized) */
	T_ENUMSET, /* list of names (at least min), bitmask unsigned */
	T_STRLIST, /* list of min..max strings, struct cfg_strlist, optional check */
	T_EXPORTS, /* list of groups, each walked against export_table */
};

/* Extra check of a string value: 0 if fine, else -1 with the problem in why. */
typedef int (*check_fn)(const char *s, char *why, size_t len);

struct cfg_entry {
	const char *path; /* dotted, relative to the table's root */
	enum cfg_type type;
	long long min, max;	  /* T_INT, T_SIZE: value; T_STRLIST, T_ENUMSET: entries */
	long long align;	  /* T_SIZE: must be a multiple of this (0: any) */
	const char *const *names; /* T_ENUM, T_ENUMSET */
	long long def;		  /* number, bool, enum value or T_ENUMSET bitmask */
	const char *defstr;	  /* T_STRING, T_STRLIST (comma-separated); NULL: none */
	bool required;		  /* no default: must be set (export entries) */
	size_t off;		  /* where it goes in struct nfsrdma_config / cfg_export */
	check_fn check;		  /* T_STRING, T_STRLIST: per-string check */
	const char *desc;	  /* one line for -D and the man page */
};

static int check_provider(const char *s, char *why, size_t len);
static int check_abs_path(const char *s, char *why, size_t len);
static int check_export_path(const char *s, char *why, size_t len);
static int check_listen_addr(const char *s, char *why, size_t len);
static int check_client_entry(const char *s, char *why, size_t len);

/* offsetof(S, f), refused at compile time unless S.f has type T (or T's size). */
#define OFF_T(S, f, T)                                                                             \
	(offsetof(S, f) +                                                                          \
	 0 * sizeof(char[__builtin_types_compatible_p(__typeof__(((S *)0)->f), T) ? 1 : -1]))
#define OFF_SZ(S, f, n) (offsetof(S, f) + 0 * sizeof(char[sizeof(((S *)0)->f) == (n) ? 1 : -1]))

#define E_INT(p, S, f, lo, hi, d, text)                                                            \
	{                                                                                          \
		.path = p, .type = T_INT, .off = OFF_T(S, f, unsigned), .min = lo, .max = hi,      \
		.def = d, .desc = text                                                             \
	}
#define E_SIZE(p, S, f, lo, hi, al, d, text)                                                       \
	{                                                                                          \
		.path = p, .type = T_SIZE, .off = OFF_T(S, f, uint64_t), .min = lo, .max = hi,     \
		.align = al, .def = d, .desc = text                                                \
	}
#define E_BOOL(p, S, f, d, text)                                                                   \
	{                                                                                          \
		.path = p, .type = T_BOOL, .off = OFF_T(S, f, bool), .def = d, .desc = text        \
	}
#define E_STR(p, S, f, d, req, chk, text)                                                          \
	{                                                                                          \
		.path = p, .type = T_STRING, .off = OFF_T(S, f, char *), .defstr = d,              \
		.required = req, .check = chk, .desc = text                                        \
	}
#define E_ENUM(p, S, f, nm, d, text)                                                               \
	{                                                                                          \
		.path = p, .type = T_ENUM, .off = OFF_SZ(S, f, sizeof(int)), .names = nm,          \
		.def = d, .desc = text                                                             \
	}
#define E_SET(p, S, f, nm, d, text)                                                                \
	{                                                                                          \
		.path = p, .type = T_ENUMSET, .off = OFF_T(S, f, unsigned), .names = nm, .min = 1, \
		.max = 32, .def = d, .desc = text                                                  \
	}
#define E_LIST(p, S, f, lo, hi, d, req, chk, text)                                                 \
	{                                                                                          \
		.path = p, .type = T_STRLIST, .off = OFF_T(S, f, struct cfg_strlist), .min = lo,   \
		.max = hi, .defstr = d, .required = req, .check = chk, .desc = text                \
	}

#define K 1024LL
#define M (1024LL * 1024)
#define G (1024LL * 1024 * 1024)
#define T (1024LL * 1024 * 1024 * 1024)
#define C struct nfsrdma_config
#define X struct cfg_export

/* THE settings: every default lives here. Keep each group's entries together. */
static const struct cfg_entry main_table[] = {
	E_ENUM("log.level", C, log.level, level_names, LOG_LVL_NOTICE,
	       "Lowest severity of the messages that are logged."),
	E_ENUM("log.destination", C, log.destination, log_dest_names, CFG_LOG_STDERR,
	       "Where messages go: standard error, or syslog (facility daemon)."),
	E_STR("rdma.provider", C, rdma.provider, "auto", false, check_provider,
	      "RDMA provider: auto (an rdma-core device if there is one, else soft), soft "
	      "(software RDMA over TCP), or an rdma-core device name such as mlx5_0 or rxe0."),
	E_INT("rdma.credits", C, rdma.credits, 1, 4096, 128,
	      "RPC/RDMA credits: requests a peer may have outstanding per connection."),
	E_SIZE("rdma.inline_send", C, rdma.inline_send, 1 * K, 64 * K, 0, 4 * K,
	       "Largest RPC/RDMA message sent inline in one Send (RFC 8797 inline threshold)."),
	E_SIZE("rdma.inline_recv", C, rdma.inline_recv, 1 * K, 64 * K, 0, 4 * K,
	       "Largest RPC/RDMA message received inline; the size of each receive buffer."),
	E_SIZE("rdma.max_io_size", C, rdma.max_io_size, 4 * K, 16 * M, 4 * K, 1 * M,
	       "Largest READ or WRITE payload moved in one RPC."),
	E_INT("rdma.rd_depth", C, rdma.rd_depth, 1, 128, 8,
	      "RDMA Read depth (IRD/ORD): RDMA Reads in flight per connection."),
	E_SIZE("rdma.registered_memory_budget", C, rdma.registered_memory_budget, 1 * M, 1 * T, 0,
	       256 * M, "Most memory registered at once; credit grants shrink to stay within it."),
	E_LIST("server.listen", C, server.listen, 1, 64, "0.0.0.0", false, check_listen_addr,
	       "Local IPv4 or IPv6 addresses the server listens on (0.0.0.0 and :: mean all)."),
	E_INT("server.rdma_port", C, server.rdma_port, 1, 65535, 20049,
	      "Port for NFS over RPC/RDMA."),
	E_INT("server.tcp_port", C, server.tcp_port, 0, 65535, 2049,
	      "Port for NFS over TCP, the fallback every client understands; 0 turns TCP off."),
	E_SET("server.modes", C, server.modes, mode_names, 1u << CFG_MODE_READ_WRITE,
	      "RPC/RDMA modes accepted from clients: read-write (RFC 8166), read-read (legacy)."),
	E_ENUM("server.registration", C, server.registration, server_reg_names, CFG_SREG_DYNAMIC,
	       "How I/O buffers are registered: per I/O, fast-registration keys, a cache, or one "
	       "registration of everything (allphys, trusted peers only)."),
	E_SIZE("server.cache.budget", C, server.cache.budget, 1 * M, 1 * T, 0, 128 * M,
	       "Registration cache size (registration = cache)."),
	E_INT("server.cache.high_watermark", C, server.cache.high_watermark, 1, 100, 90,
	      "Percent of the cache budget in use at which reclaim starts."),
	E_INT("server.cache.low_watermark", C, server.cache.low_watermark, 1, 100, 70,
	      "Percent of the cache budget reclaim brings use down to; below high_watermark."),
	E_INT("server.fastreg_pool", C, server.fastreg_pool, 1, 65536, 1024,
	      "Fast-registration keys in the pool (registration = fastreg)."),
	E_BOOL("server.trusted_peers", C, server.trusted_peers, false,
	       "Every client is trusted with access to all registered memory; allphys needs it."),
	E_INT("server.read_read.done_deadline_ms", C, server.read_read.done_deadline_ms, 1, 600000,
	      5000,
	      "Milliseconds a Read-Read client has to send RDMA_DONE before access is revoked."),
	E_SIZE("server.read_read.exposed_bytes_max", C, server.read_read.exposed_bytes_max, 64 * K,
	       1 * T, 0, 64 * M, "Most reply bytes exposed to one Read-Read connection at once."),
	E_INT("server.threads", C, server.threads, 1, 256, 4,
	      "Worker threads running NFS requests."),
	E_STR("server.pidfile", C, server.pidfile, NULL, false, check_abs_path,
	      "Absolute path of a file to write the server's process id to; unset: none."),
	E_BOOL("server.rpcbind", C, server.rpcbind, false,
	       "Register NFS and MOUNT with the local rpcbind (off: do not disturb a kernel "
	       "nfsd)."),
	E_ENUM("server.integrity.mode", C, server.integrity.mode, integrity_names,
	       CFG_INTEGRITY_NONE,
	       "Per-message integrity: none, or an HMAC-SHA256 on every message."),
	E_STR("server.integrity.key_file", C, server.integrity.key_file, NULL, false, NULL,
	      "File holding the HMAC key; must be readable by its owner only (mode 0600 or "
	      "stricter)."),
	{.path = "server.exports",
	 .type = T_EXPORTS,
	 .min = 0,
	 .max = 4096,
	 .desc = "The exported directories: a list of groups, one per export (see below)."},
	E_ENUM("client.mode", C, client.mode, mode_names, CFG_MODE_READ_WRITE,
	       "RPC/RDMA mode the client asks for: read-write or read-read."),
	E_ENUM("client.registration", C, client.registration, client_reg_names, CFG_CREG_ZEROCOPY,
	       "How the client registers I/O buffers: the caller's buffer per I/O (zerocopy), "
	       "copies into a cache, fast-registration keys, or allphys (trusted peers only)."),
	E_SIZE("client.cache.budget", C, client.cache.budget, 1 * M, 1 * T, 0, 64 * M,
	       "Client registration cache size (registration = cache)."),
	E_INT("client.cache.high_watermark", C, client.cache.high_watermark, 1, 100, 90,
	      "Percent of the client cache budget in use at which reclaim starts."),
	E_INT("client.cache.low_watermark", C, client.cache.low_watermark, 1, 100, 70,
	      "Percent of the client cache budget reclaim brings use down to."),
	E_INT("client.fastreg_pool", C, client.fastreg_pool, 1, 65536, 256,
	      "Fast-registration keys in the client's pool (registration = fastreg)."),
	E_BOOL("client.trusted_peers", C, client.trusted_peers, false,
	       "The server is trusted with access to all registered memory; allphys needs it."),
	E_ENUM("client.proto", C, client.proto, proto_names, CFG_PROTO_RDMA,
	       "Transport to the server: rdma (RPC/RDMA) or tcp."),
	E_INT("client.port", C, client.port, 0, 65535, 0,
	      "Server port; 0 means 20049 for rdma and 2049 for tcp."),
	E_SIZE("client.rsize", C, client.rsize, 4 * K, 16 * M, 4 * K, 1 * M,
	       "Largest READ the client asks for."),
	E_SIZE("client.wsize", C, client.wsize, 4 * K, 16 * M, 4 * K, 1 * M,
	       "Largest WRITE the client sends."),
	E_INT("client.acregmin", C, client.acregmin, 0, 3600, 3,
	      "Seconds file attributes are cached, at least."),
	E_INT("client.acregmax", C, client.acregmax, 0, 3600, 60,
	      "Seconds file attributes are cached, at most."),
	E_INT("client.acdirmin", C, client.acdirmin, 0, 3600, 30,
	      "Seconds directory attributes are cached, at least."),
	E_INT("client.acdirmax", C, client.acdirmax, 0, 3600, 60,
	      "Seconds directory attributes are cached, at most."),
	E_ENUM("client.integrity.mode", C, client.integrity.mode, integrity_names,
	       CFG_INTEGRITY_NONE, "Per-message integrity: none or hmac-sha256 (as the server)."),
	E_STR("client.integrity.key_file", C, client.integrity.key_file, NULL, false, NULL,
	      "File holding the HMAC key; readable by its owner only."),
};

/* The settings of one export, relative to server.exports.[N]. */
static const struct cfg_entry export_table[] = {
	E_STR("path", X, path, NULL, true, check_export_path,
	      "Absolute path of the exported directory."),
	E_LIST("clients", X, clients, 1, 1024, NULL, true, check_client_entry,
	       "Who may mount it: addresses (192.0.2.7, ::1), prefixes (10.0.0.0/8, fe80::/10) "
	       "or * for anyone."),
	E_ENUM("access", X, access, access_names, CFG_ACCESS_RO,
	       "ro (read-only) or rw (read-write)."),
	E_BOOL("root_squash", X, root_squash, true,
	       "Treat requests from uid 0 as anon_uid/anon_gid."),
	E_INT("anon_uid", X, anon_uid, 0, 4294967294LL, 65534,
	      "User id for squashed and anonymous requests."),
	E_INT("anon_gid", X, anon_gid, 0, 4294967294LL, 65534,
	      "Group id for squashed and anonymous requests."),
	E_BOOL("integrity_required", X, integrity_required, false,
	       "Refuse requests without a valid HMAC (needs server.integrity.mode = hmac-sha256)."),
};

#undef C
#undef X
#undef K
#undef M
#undef G
#undef T
#define NMAIN	       ARRAY_SIZE(main_table)
#define NEXP	       ARRAY_SIZE(export_table)
#define EXPORTS_PREFIX "server.exports"

/* ------------------------------------------------------------------ errors */

/* State of one config_load(). */
struct big_int {
	unsigned line; /* line of the literal in the main file */
	int wrapped;   /* the value libconfig made of it */
	char text[32]; /* the literal as written */
};

struct load_ctx {
	const char *file;		     /* the file as the caller named it */
	char *dir;			     /* its directory, absolute: includes, key files */
	struct nfsrdma_config *cfg;	     /* being filled */
	struct config_errors *errs;	     /* where problems go */
	const config_setting_t *seen[NMAIN]; /* where each main_table setting was set */
	bool bad[NMAIN];		     /* main_table settings whose value was refused */
	const config_setting_t **xseen;	     /* the same per export: n_exports * NEXP */
	struct big_int *big;		     /* literals libconfig would wrap */
	size_t n_big;
};

void config_errors_init(struct config_errors *errs)
{
	memset(errs, 0, sizeof(*errs));
}

void config_errors_free(struct config_errors *errs)
{
	for (size_t i = 0; i < errs->n; i++) {
		free(errs->v[i].file);
		free(errs->v[i].setting);
		free(errs->v[i].problem);
	}
	free(errs->v);
	config_errors_init(errs);
}

/* Append one error; if memory runs out, remember that some were lost. */
static void errors_addv(struct config_errors *errs, const char *file, unsigned line,
			const char *setting, const char *fmt, va_list ap)
{
	struct config_error *e;
	char problem[1024];

	vsnprintf(problem, sizeof(problem), fmt, ap);
	if (errs->n == errs->cap) {
		size_t cap = errs->cap ? errs->cap * 2 : 8;
		struct config_error *v = realloc(errs->v, cap * sizeof(*v));

		if (v == NULL) {
			errs->out_of_memory = true;
			return;
		}
		errs->v = v;
		errs->cap = cap;
	}
	e = &errs->v[errs->n];
	e->line = line;
	e->file = strdup(file);
	e->setting = setting ? strdup(setting) : NULL;
	e->problem = strdup(problem);
	if (e->file == NULL || (setting && e->setting == NULL) || e->problem == NULL) {
		free(e->file);
		free(e->setting);
		free(e->problem);
		errs->out_of_memory = true;
		return;
	}
	errs->n++;
}

/* An error in the main file (line 0: about the file as a whole). */
__attribute__((format(printf, 4, 5))) static void
file_error(struct load_ctx *c, unsigned line, const char *setting, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	errors_addv(c->errs, c->file, line, setting, fmt, ap);
	va_end(ap);
}

/* An error in another file (an @include). */
__attribute__((format(printf, 5, 6))) static void error_in(struct load_ctx *c, const char *file,
							   unsigned line, const char *setting,
							   const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	errors_addv(c->errs, file, line, setting, fmt, ap);
	va_end(ap);
}

/* The file a setting came from, as a user would name it. */
static const char *setting_file(const struct load_ctx *c, const char *src, char *buf, size_t len)
{
	if (src == NULL)
		return c->file;
	if (src[0] == '/' || c->dir == NULL)
		return src;
	snprintf(buf, len, "%s/%s", c->dir, src);
	return buf;
}

/* An error about setting s, whose dotted path is shown. */
__attribute__((format(printf, 4, 5))) static void setting_error(struct load_ctx *c,
								const config_setting_t *s,
								const char *shown, const char *fmt,
								...)
{
	char buf[PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	errors_addv(c->errs, setting_file(c, config_setting_source_file(s), buf, sizeof(buf)),
		    config_setting_source_line(s), shown, fmt, ap);
	va_end(ap);
}

void config_errors_print(const struct config_errors *errs, FILE *f)
{
	for (size_t i = 0; i < errs->n; i++) {
		const struct config_error *e = &errs->v[i];

		if (e->line == 0 && e->setting == NULL)
			fprintf(f, "%s: %s\n", e->file, e->problem);
		else if (e->line == 0)
			fprintf(f, "%s: %s: %s\n", e->file, e->setting, e->problem);
		else
			fprintf(f, "%s:%u: %s: %s\n", e->file, e->line,
				e->setting ? e->setting : "?", e->problem);
	}
	if (errs->out_of_memory)
		fprintf(f, "out of memory: some configuration errors were not recorded\n");
}

/* Order for errors: the main file first, then by file name, then by line. */
static int error_cmp(const struct config_error *a, const struct config_error *b, const char *main)
{
	int am = strcmp(a->file, main) != 0, bm = strcmp(b->file, main) != 0;
	int r = am != bm ? am - bm : strcmp(a->file, b->file);

	if (r != 0)
		return r;
	return a->line < b->line ? -1 : a->line > b->line;
}

/* Stable sort of v[first..n-1]: problems are found in passes, read in line order. */
static void errors_sort(struct config_errors *errs, size_t first, const char *main)
{
	for (size_t i = first + 1; i < errs->n; i++) {
		struct config_error e = errs->v[i];
		size_t j = i;

		for (; j > first && error_cmp(&errs->v[j - 1], &e, main) > 0; j--)
			errs->v[j] = errs->v[j - 1];
		errs->v[j] = e;
	}
}

/* ------------------------------------------------------------------ values */

/* "a string", "an integer", ...: what the file gave, for type errors. */
static const char *type_name(const config_setting_t *s)
{
	switch (config_setting_type(s)) {
	case CONFIG_TYPE_INT:
	case CONFIG_TYPE_INT64:
		return "an integer";
	case CONFIG_TYPE_FLOAT:
		return "a floating-point number";
	case CONFIG_TYPE_STRING:
		return "a string";
	case CONFIG_TYPE_BOOL:
		return "a boolean";
	case CONFIG_TYPE_GROUP:
		return "a group";
	case CONFIG_TYPE_ARRAY:
		return "an array";
	case CONFIG_TYPE_LIST:
		return "a list";
	default:
		return "nothing";
	}
}

/* names joined by sep into buf ("error, warning, ..."). */
static const char *join_names(const char *const *names, const char *sep, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; names[i] != NULL && used < len; i++) {
		int n = snprintf(buf + used, len - used, "%s%s", i ? sep : "", names[i]);

		used += n > 0 ? (size_t)n : 0;
	}
	return buf;
}

/* Whether s is an array [...] or a list (...), both of which hold our lists. */
static bool is_sequence(const config_setting_t *s)
{
	return config_setting_is_array(s) || config_setting_is_list(s);
}

enum int_result {
	INT_OK,
	INT_NOT_INT,
	INT_TOO_BIG,
};

/* Read an integer; a literal libconfig wrapped to 32 bits is INT_TOO_BIG (*lit). */
static enum int_result get_integer(const struct load_ctx *c, const config_setting_t *s,
				   long long *v, const char **lit)
{
	if (config_setting_type(s) == CONFIG_TYPE_INT64) {
		*v = config_setting_get_int64(s);
		return INT_OK;
	}
	if (config_setting_type(s) != CONFIG_TYPE_INT)
		return INT_NOT_INT;
	*v = config_setting_get_int(s);
	if (config_setting_source_file(s) != NULL)
		return INT_OK;
	for (size_t i = 0; i < c->n_big; i++) {
		if (c->big[i].line == config_setting_source_line(s) && c->big[i].wrapped == *v) {
			*lit = c->big[i].text;
			return INT_TOO_BIG;
		}
	}
	return INT_OK;
}

#define TOO_BIG_FMT "%s does not fit in 32 bits: write %sL, or a size as a string such as \"4G\""

/* T_INT: an integer within min..max. */
static void set_int(struct load_ctx *c, const struct cfg_entry *e, const config_setting_t *s,
		    const char *shown, void *field)
{
	const char *lit = "";
	long long v = 0;

	switch (get_integer(c, s, &v, &lit)) {
	case INT_NOT_INT:
		setting_error(c, s, shown, "expected an integer, got %s", type_name(s));
		return;
	case INT_TOO_BIG:
		setting_error(c, s, shown, TOO_BIG_FMT, lit, lit);
		return;
	case INT_OK:
		break;
	}
	if (v < e->min || v > e->max) {
		setting_error(c, s, shown, "%lld is out of range %lld..%lld", v, e->min, e->max);
		return;
	}
	*(unsigned *)field = (unsigned)v;
}

/* A size value as given: a string through size_parse, or an integer. 0 or -1. */
static int size_value(struct load_ctx *c, const struct cfg_entry *e, const config_setting_t *s,
		      const char *shown, uint64_t *v)
{
	char lo[SIZE_TEXT_MAX], hi[SIZE_TEXT_MAX];
	const char *lit = "";
	long long iv = 0;

	if (config_setting_type(s) == CONFIG_TYPE_STRING) {
		const char *str = config_setting_get_string(s);
		int r = size_parse(str, v);

		if (r == -1)
			setting_error(c, s, shown,
				      "\"%s\" is not a size: write a number with an optional K, M, "
				      "G or T suffix",
				      str);
		else if (r < 0)
			setting_error(c, s, shown, "\"%s\" is out of range %s..%s", str,
				      size_format((uint64_t)e->min, lo),
				      size_format((uint64_t)e->max, hi));
		return r < 0 ? -1 : 0;
	}
	switch (get_integer(c, s, &iv, &lit)) {
	case INT_NOT_INT:
		setting_error(c, s, shown,
			      "expected a size (an integer, or a string such as \"64M\"), got %s",
			      type_name(s));
		return -1;
	case INT_TOO_BIG:
		setting_error(c, s, shown, TOO_BIG_FMT, lit, lit);
		return -1;
	case INT_OK:
		break;
	}
	if (iv < 0) {
		setting_error(c, s, shown, "%lld is out of range %s..%s", iv,
			      size_format((uint64_t)e->min, lo), size_format((uint64_t)e->max, hi));
		return -1;
	}
	*v = (uint64_t)iv;
	return 0;
}

/* T_SIZE: a size within min..max and, if align is set, a multiple of it. */
static void set_size(struct load_ctx *c, const struct cfg_entry *e, const config_setting_t *s,
		     const char *shown, void *field)
{
	char a[SIZE_TEXT_MAX], lo[SIZE_TEXT_MAX], hi[SIZE_TEXT_MAX];
	uint64_t v;

	if (size_value(c, e, s, shown, &v) < 0)
		return;
	if (v < (uint64_t)e->min || v > (uint64_t)e->max) {
		setting_error(c, s, shown, "%s is out of range %s..%s", size_format(v, a),
			      size_format((uint64_t)e->min, lo), size_format((uint64_t)e->max, hi));
		return;
	}
	if (e->align && v % (uint64_t)e->align != 0) {
		setting_error(c, s, shown, "%s is not a multiple of %s", size_format(v, a),
			      size_format((uint64_t)e->align, lo));
		return;
	}
	*(uint64_t *)field = v;
}

/* T_BOOL: true or false, nothing else. */
static void set_bool(struct load_ctx *c, const config_setting_t *s, const char *shown, void *field)
{
	if (config_setting_type(s) != CONFIG_TYPE_BOOL) {
		setting_error(c, s, shown, "expected a boolean (true or false), got %s",
			      type_name(s));
		return;
	}
	*(bool *)field = config_setting_get_bool(s) != 0;
}

/* Replace the string at field with a copy of v ("" and NULL store NULL). -1: no memory. */
static int replace_string(char **field, const char *v)
{
	char *copy = NULL;

	if (v != NULL && v[0] != '\0' && (copy = strdup(v)) == NULL)
		return -1;
	free(*field);
	*field = copy;
	return 0;
}

/* T_STRING: a string that passes the entry's check. */
static void set_string(struct load_ctx *c, const struct cfg_entry *e, const config_setting_t *s,
		       const char *shown, void *field)
{
	const char *str;
	char why[512];

	if (config_setting_type(s) != CONFIG_TYPE_STRING) {
		setting_error(c, s, shown, "expected a string, got %s", type_name(s));
		return;
	}
	str = config_setting_get_string(s);
	if (e->check && e->check(str, why, sizeof(why)) < 0) {
		setting_error(c, s, shown, "%s", why);
		return;
	}
	if (replace_string(field, str) < 0)
		setting_error(c, s, shown, "out of memory");
}

/* T_ENUM: one of the entry's names, stored as its index. */
static void set_enum(struct load_ctx *c, const struct cfg_entry *e, const config_setting_t *s,
		     const char *shown, void *field)
{
	char allowed[256];
	int v;

	join_names(e->names, ", ", allowed, sizeof(allowed));
	if (config_setting_type(s) != CONFIG_TYPE_STRING) {
		setting_error(c, s, shown, "expected one of: %s; got %s", allowed, type_name(s));
		return;
	}
	v = name_index(e->names, config_setting_get_string(s));
	if (v < 0) {
		setting_error(c, s, shown, "\"%s\" is not one of: %s", config_setting_get_string(s),
			      allowed);
		return;
	}
	memcpy(field, &v, sizeof(v));
}

/* T_ENUMSET: a list of the entry's names (at least min), stored as a bitmask. */
static void set_enumset(struct load_ctx *c, const struct cfg_entry *e, const config_setting_t *s,
			const char *shown, void *field)
{
	char allowed[256], el_path[300];
	unsigned mask = 0;
	bool ok = true;

	join_names(e->names, ", ", allowed, sizeof(allowed));
	if (!is_sequence(s)) {
		setting_error(c, s, shown, "expected a list of: %s; got %s", allowed, type_name(s));
		return;
	}
	for (int i = 0; i < config_setting_length(s); i++) {
		const config_setting_t *el = config_setting_get_elem(s, (unsigned)i);
		int v = -1;

		snprintf(el_path, sizeof(el_path), "%s.[%d]", shown, i);
		if (config_setting_type(el) == CONFIG_TYPE_STRING)
			v = name_index(e->names, config_setting_get_string(el));
		if (v < 0 && config_setting_type(el) == CONFIG_TYPE_STRING)
			setting_error(c, el, el_path, "\"%s\" is not one of: %s",
				      config_setting_get_string(el), allowed);
		else if (v < 0)
			setting_error(c, el, el_path, "expected one of: %s; got %s", allowed,
				      type_name(el));
		ok = ok && v >= 0;
		mask |= v >= 0 ? 1u << v : 0;
	}
	if (ok && config_setting_length(s) < e->min)
		setting_error(c, s, shown, "must name at least %lld of: %s", e->min, allowed);
	else if (ok)
		*(unsigned *)field = mask;
}

/* Free a string list and empty it. */
static void strlist_free(struct cfg_strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* Replace *l with copies of v[0..n-1]. -1 when out of memory (*l unchanged). */
static int strlist_set(struct cfg_strlist *l, const char *const *v, size_t n)
{
	char **copy = calloc(n ? n : 1, sizeof(*copy));

	if (copy == NULL)
		return -1;
	for (size_t i = 0; i < n; i++) {
		copy[i] = strdup(v[i]);
		if (copy[i] == NULL) {
			struct cfg_strlist tmp = {i, copy};

			strlist_free(&tmp);
			return -1;
		}
	}
	strlist_free(l);
	l->v = copy;
	l->n = n;
	return 0;
}

/* Set *l from a comma-separated default ("a,b"; NULL: empty). -1: no memory. */
static int strlist_from_csv(struct cfg_strlist *l, const char *csv)
{
	const char *parts[16];
	char buf[256];
	size_t n = 0;

	if (csv != NULL) {
		snprintf(buf, sizeof(buf), "%s", csv);
		for (char *save = NULL, *p = strtok_r(buf, ",", &save); p && n < ARRAY_SIZE(parts);
		     p = strtok_r(NULL, ",", &save))
			parts[n++] = p;
	}
	return strlist_set(l, parts, n);
}

/* Check every element of a string list; true when all are strings that pass. */
static bool strlist_check(struct load_ctx *c, const struct cfg_entry *e, const config_setting_t *s,
			  const char *shown)
{
	char el_path[300], why[512];
	bool ok = true;

	for (int i = 0; i < config_setting_length(s); i++) {
		const config_setting_t *el = config_setting_get_elem(s, (unsigned)i);

		snprintf(el_path, sizeof(el_path), "%s.[%d]", shown, i);
		if (config_setting_type(el) != CONFIG_TYPE_STRING) {
			setting_error(c, el, el_path, "expected a string, got %s", type_name(el));
			ok = false;
		} else if (e->check && e->check(config_setting_get_string(el), why, sizeof(why))) {
			setting_error(c, el, el_path, "%s", why);
			ok = false;
		}
	}
	return ok;
}

/* T_STRLIST: a list of min..max strings, each passing the entry's check. */
static void set_strlist(struct load_ctx *c, const struct cfg_entry *e, const config_setting_t *s,
			const char *shown, void *field)
{
	const char *v[1024];
	int n;

	if (!is_sequence(s)) {
		setting_error(c, s, shown, "expected a list of strings, got %s", type_name(s));
		return;
	}
	n = config_setting_length(s);
	if (n < e->min || n > e->max || n > (int)ARRAY_SIZE(v)) {
		setting_error(c, s, shown, "has %d entries; it needs %lld..%lld", n, e->min,
			      e->max);
		return;
	}
	if (!strlist_check(c, e, s, shown))
		return;
	for (int i = 0; i < n; i++)
		v[i] = config_setting_get_string_elem(s, i);
	if (strlist_set(field, v, (size_t)n) < 0)
		setting_error(c, s, shown, "out of memory");
}

/* Store e's default at base + e->off. -1 when out of memory. */
static int apply_default(const struct cfg_entry *e, void *base)
{
	void *field = (char *)base + e->off;
	int v = (int)e->def;

	switch (e->type) {
	case T_INT:
	case T_ENUMSET:
		*(unsigned *)field = (unsigned)e->def;
		break;
	case T_SIZE:
		*(uint64_t *)field = (uint64_t)e->def;
		break;
	case T_BOOL:
		*(bool *)field = e->def != 0;
		break;
	case T_ENUM:
		memcpy(field, &v, sizeof(v));
		break;
	case T_STRING:
		return replace_string(field, e->defstr);
	case T_STRLIST:
		return strlist_from_csv(field, e->defstr);
	case T_EXPORTS:
		break;
	}
	return 0;
}

/* Free the strings and lists a table's fields own in base. */
static void free_fields(const struct cfg_entry *tab, size_t n, void *base)
{
	for (size_t i = 0; i < n; i++) {
		void *field = (char *)base + tab[i].off;

		if (tab[i].type == T_STRING) {
			free(*(char **)field);
			*(char **)field = NULL;
		} else if (tab[i].type == T_STRLIST) {
			strlist_free(field);
		}
	}
}

/* ------------------------------------------------------------------ walking the file */

static void load_exports(struct load_ctx *c, const config_setting_t *s, const char *shown);

/* Store the value of setting s (dotted path shown) as entry e says. */
static void apply(struct load_ctx *c, const struct cfg_entry *e, const config_setting_t *s,
		  const char *shown, void *base)
{
	void *field = (char *)base + e->off;

	switch (e->type) {
	case T_INT:
		set_int(c, e, s, shown, field);
		break;
	case T_SIZE:
		set_size(c, e, s, shown, field);
		break;
	case T_BOOL:
		set_bool(c, s, shown, field);
		break;
	case T_STRING:
		set_string(c, e, s, shown, field);
		break;
	case T_ENUM:
		set_enum(c, e, s, shown, field);
		break;
	case T_ENUMSET:
		set_enumset(c, e, s, shown, field);
		break;
	case T_STRLIST:
		set_strlist(c, e, s, shown, field);
		break;
	case T_EXPORTS:
		load_exports(c, s, shown);
		break;
	}
}

/* Index of the entry called key in tab, or -1. */
static int find_entry(const struct cfg_entry *tab, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(tab[i].path, key) == 0)
			return (int)i;
	}
	return -1;
}

/* Whether key names a group of tab ("rdma" holds "rdma.credits"). */
static bool is_group_path(const struct cfg_entry *tab, size_t n, const char *key)
{
	size_t len = strlen(key);

	for (size_t i = 0; i < n; i++) {
		if (strncmp(tab[i].path, key, len) == 0 && tab[i].path[len] == '.')
			return true;
	}
	return false;
}

/* What a group is checked against: a table, and where its results go. */
struct walk_target {
	const struct cfg_entry *tab;
	size_t n;
	void *base;		       /* the struct the entries' offsets point into */
	const config_setting_t **seen; /* [n]: where each entry was set */
	bool *bad;		       /* [n] or NULL: entries whose value was refused */
	size_t keyoff;		       /* a member's table key is its path from here on */
};

/* Check every member of group grp, whose dotted path is shown ("" for the root). */
static void walk_group(struct load_ctx *c, const config_setting_t *grp, const char *shown,
		       const struct walk_target *t)
{
	for (int i = 0; i < config_setting_length(grp); i++) {
		const config_setting_t *s = config_setting_get_elem(grp, (unsigned)i);
		size_t before = c->errs->n;
		char path[256];
		int idx;

		snprintf(path, sizeof(path), "%s%s%s", shown, shown[0] ? "." : "",
			 config_setting_name(s));
		idx = find_entry(t->tab, t->n, path + t->keyoff);
		if (idx >= 0) {
			t->seen[idx] = s;
			apply(c, &t->tab[idx], s, path, t->base);
			if (t->bad != NULL && c->errs->n != before)
				t->bad[idx] = true;
		} else if (!is_group_path(t->tab, t->n, path + t->keyoff)) {
			setting_error(c, s, path, "unknown setting");
		} else if (!config_setting_is_group(s)) {
			setting_error(c, s, path, "expected a group { ... }, got %s", type_name(s));
		} else {
			walk_group(c, s, path, t);
		}
	}
}

/* ------------------------------------------------------------------ exports */

/* Fill one export with export_table's defaults. -1 when out of memory. */
static int export_defaults(struct cfg_export *exp)
{
	for (size_t i = 0; i < NEXP; i++) {
		if (apply_default(&export_table[i], exp) < 0)
			return -1;
	}
	return 0;
}

/* Report export_table settings marked required that element el (path shown) lacks. */
static void check_required(struct load_ctx *c, const config_setting_t *el, const char *shown,
			   const config_setting_t **seen)
{
	char path[300];

	for (size_t i = 0; i < NEXP; i++) {
		if (export_table[i].required && seen[i] == NULL) {
			snprintf(path, sizeof(path), "%s.%s", shown, export_table[i].path);
			setting_error(c, el, path, "missing: every export needs one");
		}
	}
}

/* server.exports: a list of groups, each walked against export_table. */
static void load_exports(struct load_ctx *c, const config_setting_t *s, const char *shown)
{
	struct nfsrdma_config *cfg = c->cfg;
	int n = is_sequence(s) ? config_setting_length(s) : -1;
	char path[300];

	if (n < 0) {
		setting_error(
			c, s, shown,
			"expected a list of groups ( { path = ...; clients = [...]; }, ... ), "
			"got %s",
			type_name(s));
		return;
	}
	cfg->server.exports = calloc(n ? (size_t)n : 1, sizeof(*cfg->server.exports));
	c->xseen = calloc(n ? (size_t)n * NEXP : 1, sizeof(*c->xseen));
	if (cfg->server.exports == NULL || c->xseen == NULL) {
		setting_error(c, s, shown, "out of memory");
		return;
	}
	for (int i = 0; i < n; i++) {
		const config_setting_t *el = config_setting_get_elem(s, (unsigned)i);
		struct cfg_export *exp = &cfg->server.exports[i];

		cfg->server.n_exports = (size_t)i + 1;
		exp->line = config_setting_source_line(el);
		snprintf(path, sizeof(path), "%s.[%d]", shown, i);
		if (export_defaults(exp) < 0) {
			setting_error(c, el, path, "out of memory");
		} else if (!config_setting_is_group(el)) {
			setting_error(c, el, path,
				      "expected a group { path = ...; clients = [...]; }, got %s",
				      type_name(el));
		} else {
			struct walk_target t = {export_table, NEXP,
						exp,	      c->xseen + (size_t)i * NEXP,
						NULL,	      strlen(path) + 1};

			walk_group(c, el, path, &t);
			check_required(c, el, path, c->xseen + (size_t)i * NEXP);
		}
	}
}

/* Collapse "//" and drop a trailing "/" so equal directories compare equal. */
static void normalize_path(char *p)
{
	char *out = p;

	for (const char *in = p; *in != '\0'; in++) {
		if (*in == '/' && out > p && out[-1] == '/')
			continue;
		*out++ = *in;
	}
	if (out > p + 1 && out[-1] == '/')
		out--;
	*out = '\0';
}

/* After the walk: normalise export paths and parse client lists for matching. */
static void finish_exports(struct load_ctx *c)
{
	for (size_t i = 0; i < c->cfg->server.n_exports; i++) {
		struct cfg_export *exp = &c->cfg->server.exports[i];

		if (exp->path != NULL)
			normalize_path(exp->path);
		if (exp->clients.n == 0)
			continue;
		exp->allow = calloc(exp->clients.n, sizeof(*exp->allow));
		if (exp->allow == NULL) {
			file_error(c, exp->line, "server.exports", "out of memory");
			continue;
		}
		for (size_t j = 0; j < exp->clients.n; j++) {
			if (config_client_parse(exp->clients.v[j], &exp->allow[j]) == 0)
				exp->n_allow++;
		}
	}
}

/* ------------------------------------------------------------------ string checks */

/* rdma.provider: auto, soft, or something that can be an rdma-core device name. */
static int check_provider(const char *s, char *why, size_t len)
{
	size_t n = strlen(s);

	if (strcmp(s, "auto") == 0 || strcmp(s, "soft") == 0)
		return 0;
	if (n > 0 && n < 64 &&
	    strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		      "0123456789_-.") == n)
		return 0;
	snprintf(why, len,
		 "\"%s\" is not auto, soft or an rdma-core device name (letters, digits, _ - .; "
		 "at most 63)",
		 s);
	return -1;
}

/* An optional absolute path: "" (none) or starting with "/". */
static int check_abs_path(const char *s, char *why, size_t len)
{
	if (s[0] != '\0' && s[0] != '/') {
		snprintf(why, len, "\"%s\" is not an absolute path", s);
		return -1;
	}
	if (strlen(s) >= PATH_MAX) {
		snprintf(why, len, "path is longer than %d bytes", PATH_MAX - 1);
		return -1;
	}
	return 0;
}

/* An export path: absolute, and no "." or ".." component to hide what is exported. */
static int check_export_path(const char *s, char *why, size_t len)
{
	if (s[0] != '/') {
		snprintf(why, len, "\"%s\" is not an absolute path", s);
		return -1;
	}
	for (const char *p = s; *p != '\0'; p++) {
		if (p[0] == '/' && p[1] == '.' &&
		    (p[2] == '/' || p[2] == '\0' ||
		     (p[2] == '.' && (p[3] == '/' || p[3] == '\0')))) {
			snprintf(why, len, "\"%s\" has a \".\" or \"..\" component", s);
			return -1;
		}
	}
	return check_abs_path(s, why, len);
}

/* server.listen entries: a literal IPv4 or IPv6 address. */
static int check_listen_addr(const char *s, char *why, size_t len)
{
	unsigned char buf[16];

	if (inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1)
		return 0;
	snprintf(why, len, "\"%s\" is not an IPv4 or IPv6 address", s);
	return -1;
}

/* server.exports.[N].clients entries: what config_client_parse accepts. */
static int check_client_entry(const char *s, char *why, size_t len)
{
	struct cfg_client_addr a;

	if (config_client_parse(s, &a) == 0)
		return 0;
	snprintf(why, len, "\"%s\" is not an address, a prefix (10.0.0.0/8, fe80::/10) or *", s);
	return -1;
}

/* ------------------------------------------------------------------ cross-checks */

/* Index of a main_table path a cross-check names. */
static size_t main_index(const char *path)
{
	int i = find_entry(main_table, NMAIN, path);

	if (i < 0)
		abort(); /* a cross-check names a setting the table lacks: a bug here */
	return (size_t)i;
}

/* Where the main_table setting path was set in the file, or NULL (a default). */
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
		errors_addv(c->errs,
			    setting_file(c, config_setting_source_file(s), buf, sizeof(buf)),
			    config_setting_source_line(s), path, fmt, ap);
	else
		errors_addv(c->errs, c->file, 0, path, fmt, ap);
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

/* A key file must be a non-empty regular file that only its owner can access. */
static int check_key_file(const char *path, char *why, size_t len)
{
	struct stat st;
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
		report_at(c, mode_path, "%s needs %s", integrity_names[in->mode], key_path);
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

/* An error about setting key of export i, at the line it was set on. */
__attribute__((format(printf, 4, 5))) static void
export_error(struct load_ctx *c, size_t i, const char *key, const char *fmt, ...)
{
	const config_setting_t *s =
		c->xseen[i * NEXP + (size_t)find_entry(export_table, NEXP, key)];
	char path[128], buf[PATH_MAX];
	va_list ap;

	snprintf(path, sizeof(path), "%s.[%zu].%s", EXPORTS_PREFIX, i, key);
	va_start(ap, fmt);
	if (s != NULL)
		errors_addv(c->errs,
			    setting_file(c, config_setting_source_file(s), buf, sizeof(buf)),
			    config_setting_source_line(s), path, fmt, ap);
	else
		errors_addv(c->errs, c->file, c->cfg->server.exports[i].line, path, fmt, ap);
	va_end(ap);
}

/* Exports: no directory twice; integrity_required only when integrity is on. */
static void check_exports(struct load_ctx *c)
{
	const struct nfsrdma_config *cfg = c->cfg;
	size_t path_idx = (size_t)find_entry(export_table, NEXP, "path");

	for (size_t i = 0; i < cfg->server.n_exports; i++) {
		const struct cfg_export *exp = &cfg->server.exports[i];

		if (exp->integrity_required && cfg->server.integrity.mode == CFG_INTEGRITY_NONE)
			export_error(c, i, "integrity_required",
				     "needs server.integrity.mode = \"hmac-sha256\"");
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
	if (cfg->server.tcp_port != 0 && cfg->server.tcp_port == cfg->server.rdma_port) {
		if (seen_at(c, "server.tcp_port") != NULL)
			report_at(c, "server.tcp_port", "%u is also server.rdma_port",
				  cfg->server.tcp_port);
		else
			report_at(c, "server.rdma_port", "%u is also server.tcp_port",
				  cfg->server.rdma_port);
	}
	check_integrity(c, "server", &c->cfg->server.integrity);
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

/* ------------------------------------------------------------------ reading the file */

#define CONFIG_MAX_BYTES (1024 * 1024)
#define SYNTAX_RETRIES	 16

/* The whole file as a NUL-terminated string, or NULL with the problem recorded. */
static char *read_text(struct load_ctx *c)
{
	FILE *f = fopen(c->file, "r");
	char *buf;
	size_t n = 0;
	bool ok = false;

	if (f == NULL) {
		file_error(c, 0, NULL, "cannot open: %s", strerror(errno));
		return NULL;
	}
	buf = malloc(CONFIG_MAX_BYTES + 1);
	if (buf != NULL)
		n = fread(buf, 1, CONFIG_MAX_BYTES + 1, f);
	if (buf == NULL)
		file_error(c, 0, NULL, "out of memory");
	else if (ferror(f))
		file_error(c, 0, NULL, "cannot read: %s", strerror(errno));
	else if (n > CONFIG_MAX_BYTES)
		file_error(c, 0, NULL, "larger than %d bytes", CONFIG_MAX_BYTES);
	else if (memchr(buf, '\0', n) != NULL)
		file_error(c, 0, NULL, "contains a NUL byte: not a text file");
	else
		ok = true;
	fclose(f);
	if (!ok) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

/* Record literal (at line) if libconfig would silently wrap it to 32 bits. */
static void note_literal(struct load_ctx *c, const char *lit, size_t len, unsigned line)
{
	struct big_int b = {.line = line};
	struct big_int *v;
	bool hex;
	long long x;
	char *end;

	if (len >= sizeof(b.text))
		len = sizeof(b.text) - 1;
	memcpy(b.text, lit, len);
	b.text[len] = '\0';
	hex = strchr(b.text, 'x') != NULL || strchr(b.text, 'X') != NULL;
	if ((!hex && strpbrk(b.text, ".eE") != NULL) || b.text[len - 1] == 'L' ||
	    b.text[len - 1] == 'l')
		return; /* a float, or an explicit 64-bit integer */
	errno = 0;
	x = strtoll(b.text, &end, hex ? 16 : 10);
	if (*end != '\0' || (errno == 0 && x >= INT_MIN && x <= INT_MAX))
		return;
	b.wrapped = (int)(uint32_t)(unsigned long long)x;
	v = realloc(c->big, (c->n_big + 1) * sizeof(*v));
	if (v == NULL)
		return;
	c->big = v;
	c->big[c->n_big++] = b;
}

/* Skip a string literal starting at p ("); count the newlines it holds. */
static const char *skip_string(const char *p, unsigned *line)
{
	for (p++; *p != '\0' && *p != '"'; p++) {
		if (*p == '\\' && p[1] != '\0')
			p++;
		if (*p == '\n')
			(*line)++;
	}
	return *p ? p + 1 : p;
}

/* Skip a comment at p (#, // or a C comment); count its newlines. */
static const char *skip_comment(const char *p, unsigned *line)
{
	if (p[0] == '/' && p[1] == '*') {
		for (p += 2; *p != '\0' && !(p[0] == '*' && p[1] == '/'); p++)
			*line += *p == '\n';
		return *p ? p + 2 : p;
	}
	while (*p != '\0' && *p != '\n')
		p++;
	return p;
}

/* Whether c can continue a libconfig name (after its first letter or '*'). */
static bool name_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '-' || ch == '_' || ch == '*';
}

/*
 * libconfig 1.5 reads an integer literal beyond 32 bits without an L suffix as
 * the wrapped value (5000000000 becomes 705032704), silently. Find such literals
 * in the text so the setting holding one can be refused instead.
 */
static void scan_big_ints(struct load_ctx *c, const char *p)
{
	unsigned line = 1;

	while (*p != '\0') {
		const char *start = p;
		bool digit = *p >= '0' && *p <= '9';
		bool sign = (*p == '-' || *p == '+') && p[1] >= '0' && p[1] <= '9';

		if (*p == '\n') {
			line++;
			p++;
		} else if (*p == '"') {
			p = skip_string(p, &line);
		} else if (*p == '#' || (p[0] == '/' && (p[1] == '/' || p[1] == '*'))) {
			p = skip_comment(p, &line);
		} else if (name_char(*p) && !digit) {
			while (name_char(*p))
				p++;
		} else if (digit || sign) {
			for (p++; name_char(*p) || *p == '.' ||
				  ((*p == '-' || *p == '+') && (p[-1] == 'e' || p[-1] == 'E'));
			     p++)
				;
			note_literal(c, start, (size_t)(p - start), line);
		} else {
			p++;
		}
	}
}

/* Start of line n (1-based) of text, or NULL if it has fewer lines. */
static char *line_start(char *text, unsigned n)
{
	for (unsigned l = 1; l < n; l++) {
		text = strchr(text, '\n');
		if (text == NULL)
			return NULL;
		text++;
	}
	return *text ? text : NULL;
}

/* Whether the line at p has nothing for libconfig: blank or a comment. */
static bool line_is_empty(const char *p)
{
	p += strspn(p, " \t\r");
	return *p == '\n' || *p == '\0' || *p == '#' || (p[0] == '/' && p[1] == '/');
}

/* Whether lines n.. of text are all empty: libconfig hit the end of the file. */
static bool at_end(char *text, unsigned n)
{
	for (char *p = line_start(text, n); p != NULL; p = line_start(p, 2)) {
		if (!line_is_empty(p))
			return false;
	}
	return true;
}

/* Comment out line n, or the nearest line above it with content. false: none left. */
static bool comment_out(char *text, unsigned n)
{
	for (unsigned l = n; l >= 1; l--) {
		char *p = line_start(text, l);

		if (p != NULL && !line_is_empty(p)) {
			*p = '#';
			return true;
		}
	}
	return false;
}

/* Record libconfig's parse error; false if it cannot be worked around. */
static bool report_syntax(struct load_ctx *c, const config_t *lc, char *text, unsigned *last)
{
	const char *efile = config_error_file(lc);
	unsigned line = (unsigned)config_error_line(lc);
	char buf[PATH_MAX];

	if (efile != NULL) { /* in an @include file: it is not ours to edit */
		error_in(c, setting_file(c, efile, buf, sizeof(buf)), line, "syntax", "%s",
			 config_error_text(lc));
		return false;
	}
	if (line != *last)
		file_error(c, line, "syntax", "%s%s", config_error_text(lc),
			   at_end(text, line) ? " at the end of the file (is a group, list or "
						"string left open?)"
					      : "");
	*last = line;
	return comment_out(text, line);
}

/*
 * Parse text into lc. libconfig stops at the first syntax error, so after each
 * one the offending line is commented out in the copy and the parse retried, a
 * bounded number of times, so that the errors after it are found too.
 */
static bool parse_text(struct load_ctx *c, config_t *lc, char *text)
{
	unsigned last = 0;

	for (int attempt = 0; attempt <= SYNTAX_RETRIES; attempt++) {
		config_destroy(lc);
		config_init(lc);
		if (c->dir != NULL)
			config_set_include_dir(lc, c->dir);
		if (config_read_string(lc, text) == CONFIG_TRUE)
			return true;
		if (!report_syntax(c, lc, text, &last))
			return false;
	}
	file_error(c, 0, NULL, "too many syntax errors: gave up after %d", SYNTAX_RETRIES + 1);
	return false;
}

/* ------------------------------------------------------------------ load, defaults, free */

/* Absolute directory of the file at path (for @include and relative key files). */
static char *file_dir(const char *path)
{
	char *copy = strdup(path), *slash, *abs;
	const char *dir = ".";

	if (copy == NULL)
		return NULL;
	slash = strrchr(copy, '/');
	if (slash == copy)
		dir = "/";
	else if (slash != NULL) {
		*slash = '\0';
		dir = copy;
	}
	abs = realpath(dir, NULL);
	if (abs == NULL)
		abs = strdup(dir);
	free(copy);
	return abs;
}

int config_defaults(struct nfsrdma_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	for (size_t i = 0; i < NMAIN; i++) {
		if (apply_default(&main_table[i], cfg) < 0) {
			config_free(cfg);
			return -1;
		}
	}
	return 0;
}

void config_free(struct nfsrdma_config *cfg)
{
	for (size_t i = 0; i < cfg->server.n_exports; i++) {
		free_fields(export_table, NEXP, &cfg->server.exports[i]);
		free(cfg->server.exports[i].allow);
	}
	free(cfg->server.exports);
	free_fields(main_table, NMAIN, cfg);
	free(cfg->source);
	memset(cfg, 0, sizeof(*cfg));
}

/* Parse the text, then check it against the tables and the cross-checks. */
static void load_text(struct load_ctx *c, char *text)
{
	config_t lc;

	scan_big_ints(c, text);
	config_init(&lc);
	if (parse_text(c, &lc, text)) {
		struct walk_target t = {main_table, NMAIN, c->cfg, c->seen, c->bad, 0};

		walk_group(c, config_root_setting(&lc), "", &t);
		finish_exports(c);
		check_server(c);
		check_client(c);
	}
	config_destroy(&lc);
}

int config_load(const char *path, struct nfsrdma_config *out, struct config_errors *errs)
{
	struct load_ctx c = {.file = path, .cfg = out, .errs = errs};
	size_t first = errs->n;
	bool lost = errs->out_of_memory;
	char *text;

	memset(out, 0, sizeof(*out));
	text = read_text(&c);
	if (text != NULL) {
		c.dir = file_dir(path);
		if (config_defaults(out) < 0 || (out->source = strdup(path)) == NULL)
			file_error(&c, 0, NULL, "out of memory");
		else
			load_text(&c, text);
	}
	free(text);
	free(c.dir);
	free(c.xseen);
	free(c.big);
	errors_sort(errs, first, path);
	if (errs->n == first && errs->out_of_memory == lost)
		return 0;
	config_free(out);
	return -1;
}

/* ------------------------------------------------------------------ documentation */

/* Names of the bits set in mask, as text ("a, b") or config syntax ("\"a\", \"b\""). */
static void set_names(const struct cfg_entry *e, unsigned mask, bool quoted, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; e->names[i] != NULL && used < len; i++) {
		if (mask & (1u << i)) {
			int n = snprintf(buf + used, len - used, quoted ? "%s\"%s\"" : "%s%s",
					 used ? ", " : "", e->names[i]);
			used += n > 0 ? (size_t)n : 0;
		}
	}
}

/* A string list default ("a,b") as text ("a, b") or config syntax. */
static void csv_names(const char *csv, bool quoted, char *buf, size_t len)
{
	size_t used = 0;
	char copy[256];

	buf[0] = '\0';
	snprintf(copy, sizeof(copy), "%s", csv ? csv : "");
	for (char *save = NULL, *p = strtok_r(copy, ",", &save); p && used < len;
	     p = strtok_r(NULL, ",", &save)) {
		int n = snprintf(buf + used, len - used, quoted ? "%s\"%s\"" : "%s%s",
				 used ? ", " : "", p);
		used += n > 0 ? (size_t)n : 0;
	}
}

/* The summary of a number-like entry: integer or size, range, default. */
static void describe_number(const struct cfg_entry *e, struct config_doc *d)
{
	char lo[SIZE_TEXT_MAX], hi[SIZE_TEXT_MAX], def[SIZE_TEXT_MAX], al[SIZE_TEXT_MAX + 32];

	if (e->type == T_INT) {
		snprintf(d->summary, sizeof(d->summary), "integer, %lld..%lld, default %lld",
			 e->min, e->max, e->def);
		snprintf(d->def, sizeof(d->def), "%lld", e->def);
		return;
	}
	al[0] = '\0';
	if (e->align)
		snprintf(al, sizeof(al), ", multiple of %s", size_format((uint64_t)e->align, lo));
	size_format((uint64_t)e->def, def);
	snprintf(d->summary, sizeof(d->summary), "size, %s..%s%s, default %s",
		 size_format((uint64_t)e->min, lo), size_format((uint64_t)e->max, hi), al, def);
	snprintf(d->def, sizeof(d->def), "\"%s\"", def);
}

/* Fill d->summary (type, range, default) and d->def (config syntax) for e. */
static void describe(const struct cfg_entry *e, struct config_doc *d)
{
	char names[96], list[96];

	switch (e->type) {
	case T_INT:
	case T_SIZE:
		describe_number(e, d);
		break;
	case T_BOOL:
		snprintf(d->summary, sizeof(d->summary), "boolean, default %s",
			 e->def ? "true" : "false");
		snprintf(d->def, sizeof(d->def), "%s", e->def ? "true" : "false");
		break;
	case T_STRING:
		snprintf(d->summary, sizeof(d->summary), "string, %s%s",
			 e->required ? "required" : "default ",
			 e->required ? "" : (e->defstr ? e->defstr : "none"));
		if (!e->required)
			snprintf(d->def, sizeof(d->def), "\"%s\"", e->defstr ? e->defstr : "");
		break;
	case T_ENUM:
		join_names(e->names, "|", names, sizeof(names));
		snprintf(d->summary, sizeof(d->summary), "one of %s, default %s", names,
			 e->names[e->def]);
		snprintf(d->def, sizeof(d->def), "\"%s\"", e->names[e->def]);
		break;
	case T_ENUMSET:
		join_names(e->names, "|", names, sizeof(names));
		set_names(e, (unsigned)e->def, false, list, sizeof(list));
		snprintf(d->summary, sizeof(d->summary), "list of %s, default [%s]", names, list);
		set_names(e, (unsigned)e->def, true, list, sizeof(list));
		snprintf(d->def, sizeof(d->def), "[%s]", list);
		break;
	case T_STRLIST:
		csv_names(e->defstr, false, list, sizeof(list));
		snprintf(d->summary, sizeof(d->summary), "list of %lld..%lld strings, %s%s%s",
			 e->min, e->max, e->required ? "required" : "default [",
			 e->required ? "" : list, e->required ? "" : "]");
		csv_names(e->defstr, true, list, sizeof(list));
		if (!e->required)
			snprintf(d->def, sizeof(d->def), "[%s]", list);
		break;
	case T_EXPORTS:
		snprintf(d->summary, sizeof(d->summary), "list of groups, default empty");
		snprintf(d->def, sizeof(d->def), "()");
		break;
	}
}

bool config_doc_get(size_t i, struct config_doc *out)
{
	const struct cfg_entry *e;

	memset(out, 0, sizeof(*out));
	if (i < NMAIN) {
		e = &main_table[i];
		snprintf(out->path, sizeof(out->path), "%s", e->path);
	} else if (i - NMAIN < NEXP) {
		e = &export_table[i - NMAIN];
		snprintf(out->path, sizeof(out->path), "%s.[N].%s", EXPORTS_PREFIX, e->path);
	} else {
		return false;
	}
	out->desc = e->desc;
	describe(e, out);
	return true;
}

/* Open and close groups so that the next setting printed is inside path's group. */
static void enter_group(FILE *f, char open[][48], int *depth, const char *path)
{
	char parts[8][48];
	int n = 0, keep = 0;

	for (const char *p = path, *dot; (dot = strchr(p, '.')) != NULL && n < 8; p = dot + 1)
		snprintf(parts[n++], sizeof(parts[0]), "%.*s", (int)(dot - p), p);
	while (keep < n && keep < *depth && strcmp(open[keep], parts[keep]) == 0)
		keep++;
	while (*depth > keep) {
		(*depth)--;
		fprintf(f, "%.*s};\n", *depth, "\t\t\t\t\t\t\t\t");
	}
	while (*depth < n) {
		fprintf(f, "%s%.*s%s = {\n", *depth ? "" : "\n", *depth, "\t\t\t\t\t\t\t\t",
			parts[*depth]);
		snprintf(open[*depth], sizeof(open[0]), "%s", parts[*depth]);
		(*depth)++;
	}
}

/* As comments, the settings each element of server.exports takes. */
static void print_export_docs(FILE *f, int depth)
{
	struct config_doc d;

	fprintf(f, "%.*s# Each export: { path = \"/srv/x\"; clients = [\"10.0.0.0/8\"]; ... }\n",
		depth, "\t\t\t\t\t\t\t\t");
	for (size_t i = NMAIN; config_doc_get(i, &d); i++)
		fprintf(f, "%.*s#   %s: %s.\n%.*s#     %s\n", depth, "\t\t\t\t\t\t\t\t",
			strrchr(d.path, '.') + 1, d.summary, depth, "\t\t\t\t\t\t\t\t", d.desc);
}

/*
 * Print every setting at its default as a configuration file that loads as it
 * is, each setting under comments giving its meaning, type, range and default.
 */
int config_print_defaults(FILE *f)
{
	char open[8][48];
	int depth = 0;
	struct config_doc d;

	fprintf(f, "# nfsrdma configuration: every setting at its built-in default.\n"
		   "# Printed by nfsrdma-server -D; see nfsrdma.conf(5).\n");
	for (size_t i = 0; i < NMAIN && config_doc_get(i, &d); i++) {
		const char *name = strrchr(d.path, '.');

		enter_group(f, open, &depth, d.path);
		fprintf(f, "%.*s# %s\n%.*s# %s\n%.*s%s = %s;\n", depth, "\t\t\t\t\t\t\t\t", d.desc,
			depth, "\t\t\t\t\t\t\t\t", d.summary, depth, "\t\t\t\t\t\t\t\t",
			name ? name + 1 : d.path, d.def);
		if (main_table[i].type == T_EXPORTS)
			print_export_docs(f, depth);
	}
	enter_group(f, open, &depth, "");
	return ferror(f) ? -1 : 0;
}

/* ------------------------------------------------------------------ client addresses */

/* Prefix length after '/': decimal, at most max. -1 if malformed. */
static int parse_prefix(const char *s, unsigned max)
{
	unsigned v = 0;

	if (*s == '\0' || strlen(s) > 3)
		return -1;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (unsigned)(*s - '0');
	}
	return v <= max ? (int)v : -1;
}

/* Clear the bits of addr (len bytes) after the first prefix bits. */
static void mask_host_bits(unsigned char *addr, size_t len, unsigned prefix)
{
	for (size_t i = 0; i < len; i++) {
		unsigned keep = prefix >= 8 * (i + 1) ? 8 : prefix > 8 * i ? prefix - 8 * i : 0;

		addr[i] &= (unsigned char)(0xff00u >> keep);
	}
}

/* Whether the 16 bytes at a are an IPv4-mapped IPv6 address (::ffff:a.b.c.d). */
static bool is_v4_mapped(const unsigned char *a)
{
	static const unsigned char head[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	return memcmp(a, head, sizeof(head)) == 0;
}

/* Turn an IPv4-mapped IPv6 address (16 bytes) into IPv4 in the first 4 bytes. */
static void unmap_v4(unsigned char *a)
{
	memmove(a, a + 12, 4);
	memset(a + 4, 0, 12);
}

int config_client_parse(const char *text, struct cfg_client_addr *out)
{
	struct cfg_client_addr a = {.family = AF_INET};
	char buf[INET6_ADDRSTRLEN + 8];
	char *slash;
	unsigned max = 32;

	if (strcmp(text, "*") == 0) {
		memset(out, 0, sizeof(*out));
		out->family = AF_UNSPEC;
		return 0;
	}
	if (strlen(text) >= sizeof(buf))
		return -1;
	snprintf(buf, sizeof(buf), "%s", text);
	slash = strchr(buf, '/');
	if (slash != NULL)
		*slash++ = '\0';
	if (inet_pton(AF_INET, buf, a.addr) != 1) {
		if (inet_pton(AF_INET6, buf, a.addr) != 1)
			return -1;
		a.family = AF_INET6;
		max = 128;
	}
	a.prefix = max;
	if (slash != NULL) {
		int p = parse_prefix(slash, max);

		if (p < 0)
			return -1;
		a.prefix = (unsigned)p;
	}
	if (a.family == AF_INET6 && is_v4_mapped(a.addr) && a.prefix >= 96) {
		unmap_v4(a.addr);
		a.family = AF_INET;
		a.prefix -= 96;
	}
	mask_host_bits(a.addr, sizeof(a.addr), a.prefix);
	*out = a;
	return 0;
}

/* The peer's family and address bytes; an IPv4-mapped IPv6 peer comes out as IPv4. */
static int peer_addr(const struct sockaddr *sa, unsigned char addr[16])
{
	memset(addr, 0, 16);
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;

		memcpy(addr, &in->sin_addr, 4);
		return AF_INET;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)sa;

		memcpy(addr, &in6->sin6_addr, 16);
		if (!is_v4_mapped(addr))
			return AF_INET6;
		unmap_v4(addr);
		return AF_INET;
	}
	return AF_UNSPEC;
}

int config_client_allowed(const struct cfg_export *exp, const struct sockaddr *sa)
{
	unsigned char addr[16], masked[16];
	int family;

	if (exp == NULL || sa == NULL)
		return 0;
	family = peer_addr(sa, addr);
	for (size_t i = 0; i < exp->n_allow; i++) {
		const struct cfg_client_addr *a = &exp->allow[i];

		if (a->family == AF_UNSPEC)
			return 1;
		if (a->family != family)
			continue;
		memcpy(masked, addr, sizeof(masked));
		mask_host_bits(masked, sizeof(masked), a->prefix);
		if (memcmp(masked, a->addr, sizeof(masked)) == 0)
			return 1;
	}
	return 0;
}

int config_acl_allows(const void *acl, const struct sockaddr *sa)
{
	return config_client_allowed(acl, sa);
}
