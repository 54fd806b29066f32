/*
 * config_doc.c: the documentation printed from the settings table
 * (config_table.c): each setting's type, range and default (-D, and the man
 * page's summaries, which config_test checks against nfsrdma.conf(5)).
 */
#include <stdio.h>
#include <string.h>

#include "config_int.h"
#include "size.h"

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
		config_join_names(e->names, "|", names, sizeof(names));
		snprintf(d->summary, sizeof(d->summary), "one of %s, default %s", names,
			 e->names[e->def]);
		snprintf(d->def, sizeof(d->def), "\"%s\"", e->names[e->def]);
		break;
	case T_ENUMSET:
		config_join_names(e->names, "|", names, sizeof(names));
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

/* Main settings first, then the per-export ones as server.exports.[N].name. */
bool config_doc_get(size_t i, struct config_doc *out)
{
	const struct cfg_entry *e;

	memset(out, 0, sizeof(*out));
	if (i < NMAIN) {
		e = &config_main_table[i];
		snprintf(out->path, sizeof(out->path), "%s", e->path);
	} else if (i - NMAIN < NEXP) {
		e = &config_export_table[i - NMAIN];
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
			d.path + strlen(EXPORTS_PREFIX ".[N]."), d.summary, depth,
			"\t\t\t\t\t\t\t\t", d.desc);
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
		if (config_main_table[i].type == T_EXPORTS)
			print_export_docs(f, depth);
	}
	enter_group(f, open, &depth, "");
	return ferror(f) ? -1 : 0;
}
