/*
 * config_int.h: what the parts of the configuration module share; other modules
 * use config.h. config.c loads a file and walks it against the table,
 * config_table.c holds the table of settings and its documentation,
 * config_check.c the rules between settings, config_parse.c the handling of
 * libconfig's text (syntax errors, wrapped integers), config_addr.c client
 * address matching.
 */
#ifndef NFSRDMA_CONFIG_INT_H
#define NFSRDMA_CONFIG_INT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include <libconfig.h>

#include "config.h"

#define ARRAY_SIZE(a)  (sizeof(a) / sizeof((a)[0]))
#define EXPORTS_PREFIX "server.exports"

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

/* config_table.c: THE settings (every default lives there) and the names. */
extern const struct cfg_entry config_main_table[];
extern const size_t config_main_count;
extern const struct cfg_entry config_export_table[]; /* relative to server.exports.[N] */
extern const size_t config_export_count;
#define NMAIN config_main_count
#define NEXP  config_export_count
/* An export path: absolute, no "." or ".." component. 0, or -1 with why. */
int config_check_export_path(const char *s, char *why, size_t len);
/* Index of name in a NULL-terminated list of names, or -1. */
int config_name_index(const char *const *names, const char *name);
/* names joined by sep into buf ("error, warning, ..."). */
const char *config_join_names(const char *const *names, const char *sep, char *buf, size_t len);

/* config.c: the state of one config_load() and how errors are recorded. */
/* State of one config_load(). */
struct big_int {
	unsigned line; /* line of the literal in the main file */
	int wrapped;   /* the value libconfig made of it */
	char text[32]; /* the literal as written */
};

struct load_ctx {
	const char *file;		/* the file as the caller named it */
	char *dir;			/* its directory, absolute: includes, key files */
	struct nfsrdma_config *cfg;	/* being filled */
	struct config_errors *errs;	/* where problems go */
	const config_setting_t **seen;	/* [NMAIN]: where each table setting was set */
	bool *bad;			/* [NMAIN]: settings whose value was refused */
	const config_setting_t **xseen; /* the same per export: n_exports * NEXP */
	struct big_int *big;		/* literals libconfig would wrap */
	size_t n_big;
};

/* Append one error to errs (on allocation failure, note that some were lost). */
void config_errorv(struct config_errors *errs, const char *file, unsigned line, const char *setting,
		   const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));
/* An error in the file being loaded (line 0: about the file as a whole). */
void config_file_error(struct load_ctx *c, unsigned line, const char *setting, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* An error in another file (an @include). */
void config_error_in(struct load_ctx *c, const char *file, unsigned line, const char *setting,
		     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* The file a setting came from (src: libconfig's name for it, NULL: the main file). */
const char *config_setting_file(const struct load_ctx *c, const char *src, char *buf, size_t len);
/* Index of the entry called key in tab, or -1. */
int config_find_entry(const struct cfg_entry *tab, size_t n, const char *key);

/* An error about setting s, shown as `shown`. */
void config_setting_error(struct load_ctx *c, const config_setting_t *s, const char *shown,
			  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Walking a group of the file against a table (config.c). */
struct walk_target {
	const struct cfg_entry *tab;
	size_t n;
	void *base;		       /* the struct the entries' offsets point into */
	const config_setting_t **seen; /* [n]: where each entry was set */
	bool *bad;		       /* [n] or NULL: entries whose value was refused */
	size_t keyoff;		       /* a member's table key is its path from here on */
};
void config_walk_group(struct load_ctx *c, const config_setting_t *grp, const char *shown,
		       const struct walk_target *t);
/* Set e's field in base to its default; 0 or -ENOMEM. */
int config_apply_default(const struct cfg_entry *e, void *base);
bool config_is_sequence(const config_setting_t *s);
const char *config_type_name(const config_setting_t *s);

/* config_errors.c: sort errs[first..] with the main file's first, then by line. */
void config_errors_sort(struct config_errors *errs, size_t first, const char *main);

/* config_exports.c: the exports list s (shown as `shown` in errors), and the
 * paths made canonical after every file is read. */
void config_load_exports(struct load_ctx *c, const config_setting_t *s, const char *shown);
void config_finish_exports(struct load_ctx *c);
/* Collapse "//" and drop a trailing "/" so equal directories compare equal. */
void config_normalize_path(char *p);

/* config_exportsfile.c: server.exports_file, read after the exports list. */
void config_load_exports_file(struct load_ctx *c);

/* config_parse.c: libconfig's text. */
/* Note integer literals libconfig 1.5 would silently wrap to 32 bits. */
void config_scan_big_ints(struct load_ctx *c, const char *text);
/* Parse text into lc, recording every syntax error; true if it finally parsed. */
bool config_parse_text(struct load_ctx *c, config_t *lc, char *text);

/* config_check.c: the rules between settings, after the walk. */
void config_cross_check(struct load_ctx *c);

#endif
