/*
 * config_exportsfile.c: server.exports_file, a file in the exports(5) syntax
 * of nfs-utils, read after the configuration's own exports list:
 *
 *	/srv/data  10.0.0.0/8(rw,no_root_squash) host.example(ro) *(ro,insecure)
 *
 * a path, then clients (an address, a prefix, a host name or *), each with
 * options in parentheses; "-opts" before the clients sets the defaults for the
 * clients after it; # starts a comment; a backslash at the end of a line
 * continues the entry. Each client keeps its own options. An option the server
 * cannot honour is an error, never ignored, and every error names FILE:LINE.
 */
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "config_int.h"

#define EXPORTS_FILE_MAX_BYTES (1024 * 1024)
#define EXPORTS_FILE_MAX       4096 /* as server.exports */
#define CLIENTS_MAX	       1024 /* per export, as server.exports.[N].clients */
#define ID_MAX		       4294967294LL

/* Where the parser is in the file. */
struct xf {
	struct load_ctx *c;
	const char *file; /* the exports file, as named */
	const char *p;	  /* the next character */
	unsigned line;	  /* of *p */
	size_t first;	  /* the first export that came from this file */
};

/* A problem at line of the exports file. */
__attribute__((format(printf, 3, 4))) static void xf_error(struct xf *x, unsigned line,
							   const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	config_errorv(x->c->errs, x->file, line, NULL, fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------------ options */

/* nfs-utils' defaults: ro, sync, root_squash, no_all_squash, secure, nobody. */
static const struct cfg_client_opts default_opts = {
	.access = CFG_ACCESS_RO,
	.root_squash = true,
	.secure = true,
	.anon_uid = 65534,
	.anon_gid = 65534,
};

/* An option's value: decimal lo..hi. -1 if malformed or out of range. */
static int opt_number(const char *s, long long lo, long long hi, unsigned *out)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < (unsigned long long)lo || v > (unsigned long long)hi)
		return -1;
	*out = (unsigned)v;
	return 0;
}

/* Flags: each name sets one field of the options to a value. */
struct flag_opt {
	const char *name;
	size_t off; /* of a bool in struct cfg_client_opts; SIZE_MAX: access */
	int value;
};

#define OPT(f) offsetof(struct cfg_client_opts, f)
static const struct flag_opt flag_opts[] = {
	{"rw", SIZE_MAX, CFG_ACCESS_RW},
	{"ro", SIZE_MAX, CFG_ACCESS_RO},
	{"sync", OPT(async), false},
	{"async", OPT(async), true},
	{"root_squash", OPT(root_squash), true},
	{"no_root_squash", OPT(root_squash), false},
	{"all_squash", OPT(all_squash), true},
	{"no_all_squash", OPT(all_squash), false},
	{"secure", OPT(secure), true},
	{"insecure", OPT(secure), false},
	{"no_auth_nlm", OPT(no_auth_nlm), true},
	{"insecure_locks", OPT(no_auth_nlm), true},
	{"auth_nlm", OPT(no_auth_nlm), false},
	{"secure_locks", OPT(no_auth_nlm), false},
};
#undef OPT

/* Options nfs-utils knows that this server cannot honour, and why. */
static const struct {
	const char *name;
	const char *why;
} refused_opts[] = {
	{"subtree_check", "handles are checked against the export's file system, not its subtree; "
			  "write no_subtree_check"},
	{"wdelay", "writes are never delayed to gather them; write no_wdelay"},
	{"nohide", "exports below another are not shown through it"},
	{"crossmnt", "file systems mounted below an export are not exported with it"},
	{"mountpoint", "exports are served whether or not a file system is mounted there"},
	{"mp", "exports are served whether or not a file system is mounted there"},
	{"pnfs", "there is no pNFS"},
	{"security_label", "NFSv4.2 only"},
	{"no_acl", "ACLs are not served"},
	{"refer", "NFSv4 only"},
	{"replicas", "NFSv4 only"},
	{"xprtsec", "there is no RPC-with-TLS"},
};

/* Options accepted as they change nothing here: the server already does that. */
static const char *const honoured_opts[] = {"no_subtree_check", "no_wdelay", "hide", NULL};

/* name=value options: anonuid, anongid, fsid, sec. 1 if handled, 0 if not such. */
static int value_opt(struct xf *x, unsigned line, const char *opt, struct cfg_client_opts *o,
		     unsigned *fsid)
{
	const char *eq = strchr(opt, '=');
	size_t n = eq ? (size_t)(eq - opt) : 0;
	const char *v = eq ? eq + 1 : NULL;

	if (eq == NULL)
		return 0;
	if (n == 7 && strncmp(opt, "anonuid", n) == 0) {
		if (opt_number(v, 0, ID_MAX, &o->anon_uid) < 0)
			xf_error(x, line, "anonuid=%s: expected a user id 0..%lld", v, ID_MAX);
	} else if (n == 7 && strncmp(opt, "anongid", n) == 0) {
		if (opt_number(v, 0, ID_MAX, &o->anon_gid) < 0)
			xf_error(x, line, "anongid=%s: expected a group id 0..%lld", v, ID_MAX);
	} else if (n == 4 && strncmp(opt, "fsid", n) == 0) {
		if (strcmp(v, "0") == 0 || strcmp(v, "root") == 0)
			xf_error(x, line,
				 "fsid=%s marks the NFSv4 pseudo-root, which NFSv3 has not: give "
				 "a number 1..4294967295",
				 v);
		else if (opt_number(v, 1, 4294967295LL, fsid) < 0)
			xf_error(x, line,
				 "fsid=%s: expected a number 1..4294967295 (UUIDs are not "
				 "supported)",
				 v);
	} else if (n == 3 && strncmp(opt, "sec", n) == 0) {
		if (strcmp(v, "sys") != 0)
			xf_error(x, line, "sec=%s: only sys (AUTH_SYS) is supported", v);
	} else {
		return 0;
	}
	return 1;
}

/* One option into *o (and *fsid); an error if unknown or not honoured. */
static void one_opt(struct xf *x, unsigned line, const char *opt, struct cfg_client_opts *o,
		    unsigned *fsid)
{
	for (size_t i = 0; i < ARRAY_SIZE(flag_opts); i++) {
		if (strcmp(opt, flag_opts[i].name) != 0)
			continue;
		if (flag_opts[i].off == SIZE_MAX)
			o->access = (enum cfg_access)flag_opts[i].value;
		else
			*(bool *)((char *)o + flag_opts[i].off) = flag_opts[i].value != 0;
		return;
	}
	if (config_name_index(honoured_opts, opt) >= 0 || value_opt(x, line, opt, o, fsid))
		return;
	for (size_t i = 0; i < ARRAY_SIZE(refused_opts); i++) {
		size_t n = strlen(refused_opts[i].name);

		if (strncmp(opt, refused_opts[i].name, n) == 0 &&
		    (opt[n] == '\0' || opt[n] == '=')) {
			xf_error(x, line, "export option '%s' cannot be honoured: %s", opt,
				 refused_opts[i].why);
			return;
		}
	}
	xf_error(x, line, "unknown export option '%s'", opt);
}

/* A comma-separated option list (len bytes at s) into *o. */
static void parse_opts(struct xf *x, unsigned line, const char *s, size_t len,
		       struct cfg_client_opts *o, unsigned *fsid)
{
	char *copy = strndup(s, len);
	char *save = NULL, *opt;

	if (copy == NULL) {
		xf_error(x, line, "out of memory");
		return;
	}
	if (len == 0 || copy[0] == ',' || copy[len - 1] == ',' || strstr(copy, ",,") != NULL)
		xf_error(x, line, "empty export option in '(%s)'", copy);
	for (opt = strtok_r(copy, ",", &save); opt != NULL; opt = strtok_r(NULL, ",", &save))
		one_opt(x, line, opt, o, fsid);
	free(copy);
}

/* ------------------------------------------------------------------ exports and clients */

/* The export for path made by this file (entries for one path merge), a new
 * one, or NULL (error reported). */
static struct cfg_export *export_for(struct xf *x, unsigned line, const char *path)
{
	struct nfsrdma_config *cfg = x->c->cfg;
	struct cfg_export *v, *e;

	for (size_t i = 0; i < cfg->server.n_exports; i++) {
		e = &cfg->server.exports[i];
		if (e->path == NULL || strcmp(e->path, path) != 0)
			continue;
		if (i >= x->first)
			return e;
		xf_error(x, line, "%s is also exported by %s line %u (server.exports)", path,
			 x->c->file, e->line);
		return NULL;
	}
	if (cfg->server.n_exports >= EXPORTS_FILE_MAX) {
		xf_error(x, line, "more than %d exports", EXPORTS_FILE_MAX);
		return NULL;
	}
	v = realloc(cfg->server.exports, (cfg->server.n_exports + 1) * sizeof(*v));
	if (v == NULL) {
		xf_error(x, line, "out of memory");
		return NULL;
	}
	cfg->server.exports = v;
	e = &v[cfg->server.n_exports];
	memset(e, 0, sizeof(*e));
	e->path = strdup(path);
	e->file = strdup(x->file);
	e->line = line;
	e->access = default_opts.access;
	e->root_squash = default_opts.root_squash;
	e->auth_nlm = !default_opts.no_auth_nlm;
	e->anon_uid = default_opts.anon_uid;
	e->anon_gid = default_opts.anon_gid;
	cfg->server.n_exports++;
	if (e->path == NULL || e->file == NULL) {
		xf_error(x, line, "out of memory");
		return NULL;
	}
	return e;
}

/* Append one parsed address (its client and options set). -1 when out of memory. */
static int add_allow(struct cfg_export *e, const struct cfg_client_addr *a)
{
	struct cfg_client_addr *v = realloc(e->allow, (e->n_allow + 1) * sizeof(*v));

	if (v == NULL)
		return -1;
	e->allow = v;
	v[e->n_allow++] = *a;
	return 0;
}

/* "192.168.0.0/255.255.255.0" into "192.168.0.0/24"; other text is copied. */
static void netmask_to_prefix(const char *name, char *buf, size_t len)
{
	const char *slash = strchr(name, '/');
	struct in_addr m;
	uint32_t mask;
	unsigned bits = 0;

	snprintf(buf, len, "%s", name);
	if (slash == NULL || strchr(slash, '.') == NULL || inet_pton(AF_INET, slash + 1, &m) != 1)
		return;
	mask = ntohl(m.s_addr);
	while (bits < 32 && (mask & (0x80000000u >> bits)))
		bits++;
	if (bits < 32 && (mask << bits) != 0)
		return; /* not contiguous: left as it is, refused by the parse */
	snprintf(buf, len, "%.*s/%u", (int)(slash - name), name, bits);
}

/* A host name's addresses, each an allow entry with the options a. */
static int resolve_host(struct xf *x, unsigned line, struct cfg_export *e, const char *name,
			struct cfg_client_addr *a)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
	struct addrinfo *res = NULL;
	char text[INET6_ADDRSTRLEN];
	int r = getaddrinfo(name, NULL, &hints, &res);

	if (r != 0) {
		xf_error(x, line, "client '%s': cannot resolve the host name: %s", name,
			 gai_strerror(r));
		return -1;
	}
	for (struct addrinfo *ai = res; ai != NULL; ai = ai->ai_next) {
		const void *addr =
			ai->ai_family == AF_INET
				? (const void *)&((struct sockaddr_in *)(void *)ai->ai_addr)
					  ->sin_addr
				: (const void *)&((struct sockaddr_in6 *)(void *)ai->ai_addr)
					  ->sin6_addr;
		struct cfg_client_addr one = *a;

		if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) ||
		    inet_ntop(ai->ai_family, addr, text, sizeof(text)) == NULL ||
		    config_client_parse(text, &one) < 0)
			continue;
		one.client = a->client;
		one.opts = a->opts;
		if (add_allow(e, &one) < 0) {
			freeaddrinfo(res);
			xf_error(x, line, "out of memory");
			return -1;
		}
	}
	freeaddrinfo(res);
	return 0;
}

/* Whether name looks like a host name (letters, digits, '-', '.'). */
static bool is_host_name(const char *name)
{
	size_t n = strlen(name);

	return n > 0 && n < 254 && name[0] != '-' && name[0] != '.' &&
	       strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.") ==
		       n;
}

/* One client (name as written) with its options into export e. */
static void add_client(struct xf *x, unsigned line, struct cfg_export *e, const char *name,
		       const struct cfg_client_opts *o)
{
	struct cfg_client_addr a = {0};
	char buf[INET6_ADDRSTRLEN + 40];
	char **v;

	if (name[0] == '@' || strchr(name, '?') != NULL || (name[0] == '*' && name[1] != '\0') ||
	    strncmp(name, "gss/", 4) == 0) {
		xf_error(x, line,
			 "client '%s': netgroups, wildcard names and gss/ are not supported: "
			 "write an address, a prefix (10.0.0.0/8), a host name or *",
			 name);
		return;
	}
	if (e->clients.n >= CLIENTS_MAX) {
		xf_error(x, line, "%s: more than %d clients", e->path, CLIENTS_MAX);
		return;
	}
	v = realloc(e->clients.v, (e->clients.n + 1) * sizeof(*v));
	if (v == NULL || (v[e->clients.n] = strdup(name)) == NULL) {
		if (v != NULL)
			e->clients.v = v;
		xf_error(x, line, "out of memory");
		return;
	}
	e->clients.v = v;
	a.client = e->clients.n++;
	netmask_to_prefix(name, buf, sizeof(buf));
	if (config_client_parse(buf, &a) == 0) {
		a.client = e->clients.n - 1;
		a.opts = *o;
		if (add_allow(e, &a) < 0)
			xf_error(x, line, "out of memory");
	} else if (strchr(name, '/') == NULL && strchr(name, ':') == NULL && is_host_name(name)) {
		a.opts = *o;
		resolve_host(x, line, e, name, &a);
	} else {
		xf_error(x, line,
			 "client '%s' is not an address, a prefix (10.0.0.0/8, "
			 "192.168.0.0/255.255.255.0, fe80::/10), a host name or *",
			 name);
	}
}

/* ------------------------------------------------------------------ the text */

/* Skip blanks and escaped line ends; stop at a token, a line end, '#' or the end. */
static void skip_blanks(struct xf *x)
{
	for (;;) {
		if (*x->p == ' ' || *x->p == '\t' || (*x->p == '\r' && x->p[1] == '\n')) {
			x->p++;
		} else if (x->p[0] == '\\' && x->p[1] == '\n') {
			x->p += 2;
			x->line++;
		} else if (x->p[0] == '\\' && x->p[1] == '\r' && x->p[2] == '\n') {
			x->p += 3;
			x->line++;
		} else {
			return;
		}
	}
}

/* Whether c ends a token. */
static bool token_end(char c)
{
	return c == '\0' || c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/*
 * The next token, copied: a path in double quotes, or a run of characters up
 * to a blank, with a parenthesised option list kept whole. NULL after an
 * error (reported), with the rest of the line skipped.
 */
static char *next_token(struct xf *x)
{
	const char *start = x->p;
	bool quoted = *x->p == '"';

	if (quoted) {
		start = ++x->p;
		while (*x->p != '"' && *x->p != '\n' && *x->p != '\0')
			x->p++;
		if (*x->p != '"') {
			xf_error(x, x->line, "missing closing '\"'");
			return NULL;
		}
		x->p++;
		return strndup(start, (size_t)(x->p - 1 - start));
	}
	while (!token_end(*x->p)) {
		if (*x->p++ != '(')
			continue;
		while (*x->p != ')' && *x->p != '\n' && *x->p != '\0')
			x->p++;
		if (*x->p != ')') {
			xf_error(x, x->line, "missing ')' after '%.*s'", (int)(x->p - start),
				 start);
			return NULL;
		}
		x->p++;
	}
	return strndup(start, (size_t)(x->p - start));
}

/* Skip to the start of the next line. */
static void skip_line(struct xf *x)
{
	while (*x->p != '\n' && *x->p != '\0')
		x->p++;
}

/* A client token ("name" or "name(opts)") of export e, defaults d. */
static void client_token(struct xf *x, unsigned line, struct cfg_export *e, const char *tok,
			 const struct cfg_client_opts *d, unsigned *fsid)
{
	const char *paren = strchr(tok, '(');
	struct cfg_client_opts o = *d;
	size_t tlen = strlen(tok);
	char *name;

	if (paren == tok) {
		xf_error(x, line,
			 "options '%s' without a client: write *%s for anyone, and no space "
			 "between a client and its '('",
			 tok, tok);
		return;
	}
	if (paren != NULL && tok[tlen - 1] != ')') {
		xf_error(x, line, "'%s': nothing may follow the ')'", tok);
		return;
	}
	if (paren != NULL)
		parse_opts(x, line, paren + 1, tlen - (size_t)(paren - tok) - 2, &o, fsid);
	name = strndup(tok, paren ? (size_t)(paren - tok) : tlen);
	if (name == NULL) {
		xf_error(x, line, "out of memory");
		return;
	}
	if (e != NULL)
		add_client(x, line, e, name, &o);
	free(name);
}

/* The fsid a client gave, checked against the one the export already has. */
static void set_fsid(struct xf *x, unsigned line, struct cfg_export *e, unsigned fsid)
{
	if (e == NULL || fsid == 0)
		return;
	if (e->fsid != 0 && e->fsid != fsid)
		xf_error(x, line, "%s: fsid=%u differs from fsid=%u given before", e->path, fsid,
			 e->fsid);
	else
		e->fsid = fsid;
}

/* One entry: a path and its clients, up to the end of the (continued) line. */
static void parse_entry(struct xf *x)
{
	unsigned line = x->line, clients = 0;
	struct cfg_client_opts defaults = default_opts;
	struct cfg_export *e = NULL;
	char why[PATH_MAX + 64];
	char *path = next_token(x), *tok;
	bool bad = path == NULL;

	if (path != NULL && config_check_export_path(path, why, sizeof(why)) < 0) {
		xf_error(x, line, "%s", why);
		bad = true;
	} else if (path != NULL) {
		config_normalize_path(path);
		e = export_for(x, line, path);
		bad = e == NULL;
	}
	for (;;) {
		unsigned fsid = 0;

		skip_blanks(x);
		if (*x->p == '\0' || *x->p == '\n' || *x->p == '#' || bad)
			break;
		tok = next_token(x);
		if (tok == NULL) {
			bad = true;
			break;
		}
		if (tok[0] == '-') {
			parse_opts(x, x->line, tok + 1, strlen(tok + 1), &defaults, &fsid);
		} else {
			client_token(x, x->line, e, tok, &defaults, &fsid);
			clients++;
		}
		set_fsid(x, x->line, e, fsid);
		free(tok);
	}
	if (!bad && clients == 0)
		xf_error(x, line, "%s: no clients: write *(ro) to export it to anyone", path);
	free(path);
	skip_line(x);
}

/* The export-wide fields of file exports follow their first client, for the log. */
static void set_export_fields(struct xf *x)
{
	for (size_t i = x->first; i < x->c->cfg->server.n_exports; i++) {
		struct cfg_export *e = &x->c->cfg->server.exports[i];

		if (e->n_allow == 0)
			continue;
		e->access = e->allow[0].opts.access;
		e->root_squash = e->allow[0].opts.root_squash;
		e->auth_nlm = !e->allow[0].opts.no_auth_nlm;
		e->anon_uid = e->allow[0].opts.anon_uid;
		e->anon_gid = e->allow[0].opts.anon_gid;
	}
}

/* The file's text, NUL-terminated, or NULL with the problem recorded at the
 * line of server.exports_file. */
static char *read_exports_file(struct load_ctx *c, const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t n = 0;
	const char *why = NULL;

	if (f == NULL) {
		int i = config_find_entry(config_main_table, NMAIN, "server.exports_file");

		config_setting_error(c, c->seen[i], "server.exports_file", "%s: cannot open: %s",
				     path, strerror(errno));
		return NULL;
	}
	buf = malloc(EXPORTS_FILE_MAX_BYTES + 1);
	if (buf == NULL)
		why = "out of memory";
	else if ((n = fread(buf, 1, EXPORTS_FILE_MAX_BYTES + 1, f)), ferror(f))
		why = strerror(errno);
	else if (n > EXPORTS_FILE_MAX_BYTES)
		why = "larger than 1 MiB";
	else if (memchr(buf, '\0', n) != NULL)
		why = "contains a NUL byte: not a text file";
	fclose(f);
	if (why != NULL) {
		config_error_in(c, path, 0, NULL, "%s", why);
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

/* server.exports_file, relative to the configuration's directory. */
static char *exports_file_path(struct load_ctx *c)
{
	const char *name = c->cfg->server.exports_file;
	char *abs;
	size_t len;

	if (name[0] == '/' || c->dir == NULL)
		return strdup(name);
	len = strlen(c->dir) + strlen(name) + 2;
	abs = malloc(len);
	if (abs != NULL)
		snprintf(abs, len, "%s/%s", c->dir, name);
	return abs;
}

/* See config_int.h. */
void config_load_exports_file(struct load_ctx *c)
{
	struct xf x = {.c = c, .line = 1, .first = c->cfg->server.n_exports};
	char *path, *text;

	if (c->cfg->server.exports_file == NULL)
		return;
	path = exports_file_path(c);
	if (path == NULL) {
		config_file_error(c, 0, "server.exports_file", "out of memory");
		return;
	}
	/* what errors and the exports name: the file as found */
	free(c->cfg->server.exports_file);
	c->cfg->server.exports_file = path;
	text = read_exports_file(c, path);
	if (text == NULL)
		return;
	x.file = path;
	x.p = text;
	while (*x.p != '\0') {
		skip_blanks(&x);
		if (*x.p == '#')
			skip_line(&x);
		else if (*x.p != '\n' && *x.p != '\0')
			parse_entry(&x);
		if (*x.p == '\n') {
			x.p++;
			x.line++;
		}
	}
	set_export_fields(&x);
	free(text);
}
