/*
 * config_errors.c: the problems found in a configuration file, collected,
 * sorted (the main file first, then by line) and printed as FILE:LINE:
 * SETTING: PROBLEM.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"

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
void config_setting_error(struct load_ctx *c, const config_setting_t *s, const char *shown,
			  const char *fmt, ...)
{
	char buf[PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	config_errorv(c->errs,
		      config_setting_file(c, config_setting_source_file(s), buf, sizeof(buf)),
		      config_setting_source_line(s), shown, fmt, ap);
	va_end(ap);
}

/* One line per error, in the order recorded (config_load sorts by file and line);
 * an exports file's errors have no setting: FILE:LINE: PROBLEM. */
void config_errors_print(const struct config_errors *errs, FILE *f)
{
	for (size_t i = 0; i < errs->n; i++) {
		const struct config_error *e = &errs->v[i];

		if (e->line == 0 && e->setting == NULL)
			fprintf(f, "%s: %s\n", e->file, e->problem);
		else if (e->line == 0)
			fprintf(f, "%s: %s: %s\n", e->file, e->setting, e->problem);
		else if (e->setting == NULL)
			fprintf(f, "%s:%u: %s\n", e->file, e->line, e->problem);
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
void config_errors_sort(struct config_errors *errs, size_t first, const char *main)
{
	for (size_t i = first + 1; i < errs->n; i++) {
		struct config_error e = errs->v[i];
		size_t j = i;

		for (; j > first && error_cmp(&errs->v[j - 1], &e, main) > 0; j--)
			errs->v[j] = errs->v[j - 1];
		errs->v[j] = e;
	}
}
