/*
 * config.c: the configuration file of both daemons, read with libconfig.
 *
 * One table (config_table.c) says for every setting its path, type, range,
 * default, where it goes in struct nfsrdma_config and what it means. Loading
 * walks the parsed file against the table, so an unknown name, a wrong type or
 * a value out of range is found the same way everywhere; then the rules between
 * settings run (config_check.c). Every problem is collected, none stops the
 * others from being found, and each one names FILE:LINE: SETTING.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"
#include "size.h"

#define CONFIG_MAX_BYTES (1024 * 1024)

/* ------------------------------------------------------------------ values */

/* "a string", "an integer", ...: what the file gave, for type errors. */
const char *config_type_name(const config_setting_t *s)
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

/* Whether s is an array [...] or a list (...), both of which hold our lists. */
bool config_is_sequence(const config_setting_t *s)
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
		config_setting_error(c, s, shown, "expected an integer, got %s",
				     config_type_name(s));
		return;
	case INT_TOO_BIG:
		config_setting_error(c, s, shown, TOO_BIG_FMT, lit, lit);
		return;
	case INT_OK:
		break;
	}
	if (v < e->min || v > e->max) {
		config_setting_error(c, s, shown, "%lld is out of range %lld..%lld", v, e->min,
				     e->max);
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
			config_setting_error(
				c, s, shown,
				"\"%s\" is not a size: write a number with an optional K, M, "
				"G or T suffix",
				str);
		else if (r < 0)
			config_setting_error(c, s, shown, "\"%s\" is out of range %s..%s", str,
					     size_format((uint64_t)e->min, lo),
					     size_format((uint64_t)e->max, hi));
		return r < 0 ? -1 : 0;
	}
	switch (get_integer(c, s, &iv, &lit)) {
	case INT_NOT_INT:
		config_setting_error(
			c, s, shown,
			"expected a size (an integer, or a string such as \"64M\"), got %s",
			config_type_name(s));
		return -1;
	case INT_TOO_BIG:
		config_setting_error(c, s, shown, TOO_BIG_FMT, lit, lit);
		return -1;
	case INT_OK:
		break;
	}
	if (iv < 0) {
		config_setting_error(c, s, shown, "%lld is out of range %s..%s", iv,
				     size_format((uint64_t)e->min, lo),
				     size_format((uint64_t)e->max, hi));
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
		config_setting_error(c, s, shown, "%s is out of range %s..%s", size_format(v, a),
				     size_format((uint64_t)e->min, lo),
				     size_format((uint64_t)e->max, hi));
		return;
	}
	if (e->align && v % (uint64_t)e->align != 0) {
		config_setting_error(c, s, shown, "%s is not a multiple of %s", size_format(v, a),
				     size_format((uint64_t)e->align, lo));
		return;
	}
	*(uint64_t *)field = v;
}

/* T_BOOL: true or false, nothing else. */
static void set_bool(struct load_ctx *c, const config_setting_t *s, const char *shown, void *field)
{
	if (config_setting_type(s) != CONFIG_TYPE_BOOL) {
		config_setting_error(c, s, shown, "expected a boolean (true or false), got %s",
				     config_type_name(s));
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
		config_setting_error(c, s, shown, "expected a string, got %s", config_type_name(s));
		return;
	}
	str = config_setting_get_string(s);
	if (e->check && e->check(str, why, sizeof(why)) < 0) {
		config_setting_error(c, s, shown, "%s", why);
		return;
	}
	if (replace_string(field, str) < 0)
		config_setting_error(c, s, shown, "out of memory");
}

/* T_ENUM: one of the entry's names, stored as its index. */
static void set_enum(struct load_ctx *c, const struct cfg_entry *e, const config_setting_t *s,
		     const char *shown, void *field)
{
	char allowed[256];
	int v;

	config_join_names(e->names, ", ", allowed, sizeof(allowed));
	if (config_setting_type(s) != CONFIG_TYPE_STRING) {
		config_setting_error(c, s, shown, "expected one of: %s; got %s", allowed,
				     config_type_name(s));
		return;
	}
	v = config_name_index(e->names, config_setting_get_string(s));
	if (v < 0) {
		config_setting_error(c, s, shown, "\"%s\" is not one of: %s",
				     config_setting_get_string(s), allowed);
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

	config_join_names(e->names, ", ", allowed, sizeof(allowed));
	if (!config_is_sequence(s)) {
		config_setting_error(c, s, shown, "expected a list of: %s; got %s", allowed,
				     config_type_name(s));
		return;
	}
	for (int i = 0; i < config_setting_length(s); i++) {
		const config_setting_t *el = config_setting_get_elem(s, (unsigned)i);
		int v = -1;

		snprintf(el_path, sizeof(el_path), "%s.[%d]", shown, i);
		if (config_setting_type(el) == CONFIG_TYPE_STRING)
			v = config_name_index(e->names, config_setting_get_string(el));
		if (v < 0 && config_setting_type(el) == CONFIG_TYPE_STRING)
			config_setting_error(c, el, el_path, "\"%s\" is not one of: %s",
					     config_setting_get_string(el), allowed);
		else if (v < 0)
			config_setting_error(c, el, el_path, "expected one of: %s; got %s", allowed,
					     config_type_name(el));
		ok = ok && v >= 0;
		mask |= v >= 0 ? 1u << v : 0;
	}
	if (ok && config_setting_length(s) < e->min)
		config_setting_error(c, s, shown, "must name at least %lld of: %s", e->min,
				     allowed);
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
			config_setting_error(c, el, el_path, "expected a string, got %s",
					     config_type_name(el));
			ok = false;
		} else if (e->check && e->check(config_setting_get_string(el), why, sizeof(why))) {
			config_setting_error(c, el, el_path, "%s", why);
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

	if (!config_is_sequence(s)) {
		config_setting_error(c, s, shown, "expected a list of strings, got %s",
				     config_type_name(s));
		return;
	}
	n = config_setting_length(s);
	if (n < e->min || n > e->max || n > (int)ARRAY_SIZE(v)) {
		config_setting_error(c, s, shown, "has %d entries; it needs %lld..%lld", n, e->min,
				     e->max);
		return;
	}
	if (!strlist_check(c, e, s, shown))
		return;
	for (int i = 0; i < n; i++)
		v[i] = config_setting_get_string_elem(s, i);
	if (strlist_set(field, v, (size_t)n) < 0)
		config_setting_error(c, s, shown, "out of memory");
}

/* Store e's default at base + e->off. -1 when out of memory. */
int config_apply_default(const struct cfg_entry *e, void *base)
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
		config_load_exports(c, s, shown);
		break;
	}
}

/* Index of the entry called key in tab, or -1. */
int config_find_entry(const struct cfg_entry *tab, size_t n, const char *key)
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

/* Check every member of group grp, whose dotted path is shown ("" for the root). */
void config_walk_group(struct load_ctx *c, const config_setting_t *grp, const char *shown,
		       const struct walk_target *t)
{
	for (int i = 0; i < config_setting_length(grp); i++) {
		const config_setting_t *s = config_setting_get_elem(grp, (unsigned)i);
		size_t before = c->errs->n;
		char path[256];
		int idx;

		snprintf(path, sizeof(path), "%s%s%s", shown, shown[0] ? "." : "",
			 config_setting_name(s));
		idx = config_find_entry(t->tab, t->n, path + t->keyoff);
		if (idx >= 0) {
			t->seen[idx] = s;
			apply(c, &t->tab[idx], s, path, t->base);
			if (t->bad != NULL && c->errs->n != before)
				t->bad[idx] = true;
		} else if (!is_group_path(t->tab, t->n, path + t->keyoff)) {
			config_setting_error(c, s, path, "unknown setting");
		} else if (!config_setting_is_group(s)) {
			config_setting_error(c, s, path, "expected a group { ... }, got %s",
					     config_type_name(s));
		} else {
			config_walk_group(c, s, path, t);
		}
	}
}

/* ------------------------------------------------------------------ load, defaults, free */

/* The whole file as a NUL-terminated string, or NULL with the problem recorded. */
static char *read_text(struct load_ctx *c)
{
	FILE *f = fopen(c->file, "r");
	char *buf;
	size_t n = 0;
	bool ok = false;

	if (f == NULL) {
		config_file_error(c, 0, NULL, "cannot open: %s", strerror(errno));
		return NULL;
	}
	buf = malloc(CONFIG_MAX_BYTES + 1);
	if (buf != NULL)
		n = fread(buf, 1, CONFIG_MAX_BYTES + 1, f);
	if (buf == NULL)
		config_file_error(c, 0, NULL, "out of memory");
	else if (ferror(f))
		config_file_error(c, 0, NULL, "cannot read: %s", strerror(errno));
	else if (n > CONFIG_MAX_BYTES)
		config_file_error(c, 0, NULL, "larger than %d bytes", CONFIG_MAX_BYTES);
	else if (memchr(buf, '\0', n) != NULL)
		config_file_error(c, 0, NULL, "contains a NUL byte: not a text file");
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

/* Every main_table default into a zeroed config; exports start empty. */
int config_defaults(struct nfsrdma_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	for (size_t i = 0; i < NMAIN; i++) {
		if (config_apply_default(&config_main_table[i], cfg) < 0) {
			config_free(cfg);
			return -1;
		}
	}
	return 0;
}

/* Free exports, strings and lists; leaves *cfg zeroed so a second call is harmless. */
void config_free(struct nfsrdma_config *cfg)
{
	for (size_t i = 0; i < cfg->server.n_exports; i++) {
		free_fields(config_export_table, NEXP, &cfg->server.exports[i]);
		free(cfg->server.exports[i].allow);
		free(cfg->server.exports[i].file);
	}
	free(cfg->server.exports);
	free_fields(config_main_table, NMAIN, cfg);
	free(cfg->source);
	memset(cfg, 0, sizeof(*cfg));
}

/* Parse the text, then check it against the tables and the cross-checks. */
static void load_text(struct load_ctx *c, char *text)
{
	config_t lc;

	config_scan_big_ints(c, text);
	config_init(&lc);
	if (config_parse_text(c, &lc, text)) {
		struct walk_target t = {config_main_table, NMAIN, c->cfg, c->seen, c->bad, 0};

		config_walk_group(c, config_root_setting(&lc), "", &t);
		config_finish_exports(c);
		config_load_exports_file(c);
		config_cross_check(c);
	}
	config_destroy(&lc);
}

/* Defaults, then the file on top; on any error *out is freed and every problem is in errs. */
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
		c.seen = calloc(NMAIN, sizeof(*c.seen));
		c.bad = calloc(NMAIN, sizeof(*c.bad));
		if (c.seen == NULL || c.bad == NULL || config_defaults(out) < 0 ||
		    (out->source = strdup(path)) == NULL)
			config_file_error(&c, 0, NULL, "out of memory");
		else
			load_text(&c, text);
	}
	free(text);
	free(c.dir);
	free(c.seen);
	free(c.bad);
	free(c.xseen);
	free(c.big);
	config_errors_sort(errs, first, path);
	if (errs->n == first && errs->out_of_memory == lost)
		return 0;
	config_free(out);
	return -1;
}
