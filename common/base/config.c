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

/* ------------------------------------------------------------------ errors */

/* An empty error list, ready for config_load. */
void config_errors_init(struct config_errors *errs)
{
	memset(errs, 0, sizeof(*errs));
}

/* Free every recorded error and empty the list for reuse. */
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
void config_errorv(struct config_errors *errs, const char *file, unsigned line, const char *setting,
		   const char *fmt, va_list ap)
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
void config_file_error(struct load_ctx *c, unsigned line, const char *setting, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	config_errorv(c->errs, c->file, line, setting, fmt, ap);
	va_end(ap);
}

/* An error in another file (an @include). */
void config_error_in(struct load_ctx *c, const char *file, unsigned line, const char *setting,
		     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	config_errorv(c->errs, file, line, setting, fmt, ap);
	va_end(ap);
}

/* The file a setting came from, as a user would name it. */
const char *config_setting_file(const struct load_ctx *c, const char *src, char *buf, size_t len)
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
	config_errorv(c->errs,
		      config_setting_file(c, config_setting_source_file(s), buf, sizeof(buf)),
		      config_setting_source_line(s), shown, fmt, ap);
	va_end(ap);
}

/* One line per error, in the order recorded (config_load sorts by file and line). */
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

	config_join_names(e->names, ", ", allowed, sizeof(allowed));
	if (config_setting_type(s) != CONFIG_TYPE_STRING) {
		setting_error(c, s, shown, "expected one of: %s; got %s", allowed, type_name(s));
		return;
	}
	v = config_name_index(e->names, config_setting_get_string(s));
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

	config_join_names(e->names, ", ", allowed, sizeof(allowed));
	if (!is_sequence(s)) {
		setting_error(c, s, shown, "expected a list of: %s; got %s", allowed, type_name(s));
		return;
	}
	for (int i = 0; i < config_setting_length(s); i++) {
		const config_setting_t *el = config_setting_get_elem(s, (unsigned)i);
		int v = -1;

		snprintf(el_path, sizeof(el_path), "%s.[%d]", shown, i);
		if (config_setting_type(el) == CONFIG_TYPE_STRING)
			v = config_name_index(e->names, config_setting_get_string(el));
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
		idx = config_find_entry(t->tab, t->n, path + t->keyoff);
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

/* Fill one export with config_export_table's defaults. -1 when out of memory. */
static int export_defaults(struct cfg_export *exp)
{
	for (size_t i = 0; i < NEXP; i++) {
		if (apply_default(&config_export_table[i], exp) < 0)
			return -1;
	}
	return 0;
}

/* Report config_export_table settings marked required that element el (path shown) lacks. */
static void check_required(struct load_ctx *c, const config_setting_t *el, const char *shown,
			   const config_setting_t **seen)
{
	char path[300];

	for (size_t i = 0; i < NEXP; i++) {
		if (config_export_table[i].required && seen[i] == NULL) {
			snprintf(path, sizeof(path), "%s.%s", shown, config_export_table[i].path);
			setting_error(c, el, path, "missing: every export needs one");
		}
	}
}

/* server.exports: a list of groups, each walked against config_export_table. */
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
			const config_setting_t **seen = c->xseen + (size_t)i * NEXP;
			struct walk_target t = {.tab = config_export_table,
						.n = NEXP,
						.base = exp,
						.seen = seen,
						.keyoff = strlen(path) + 1};

			walk_group(c, el, path, &t);
			check_required(c, el, path, seen);
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
			config_file_error(c, exp->line, "server.exports", "out of memory");
			continue;
		}
		for (size_t j = 0; j < exp->clients.n; j++) {
			if (config_client_parse(exp->clients.v[j], &exp->allow[j]) == 0)
				exp->n_allow++;
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
		if (apply_default(&config_main_table[i], cfg) < 0) {
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

		walk_group(c, config_root_setting(&lc), "", &t);
		finish_exports(c);
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
	errors_sort(errs, first, path);
	if (errs->n == first && errs->out_of_memory == lost)
		return 0;
	config_free(out);
	return -1;
}
