/*
 * config_exports.c: the exports list of the configuration file: each export's
 * settings against its own table, the ones it must have, and paths made
 * canonical once every file is read.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"

/* Fill one export with config_export_table's defaults. -1 when out of memory. */
static int export_defaults(struct cfg_export *exp)
{
	for (size_t i = 0; i < NEXP; i++) {
		if (config_apply_default(&config_export_table[i], exp) < 0)
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
			config_setting_error(c, el, path, "missing: every export needs one");
		}
	}
}

/* server.exports: a list of groups, each walked against config_export_table. */
void config_load_exports(struct load_ctx *c, const config_setting_t *s, const char *shown)
{
	struct nfsrdma_config *cfg = c->cfg;
	int n = config_is_sequence(s) ? config_setting_length(s) : -1;
	char path[300];

	if (n < 0) {
		config_setting_error(
			c, s, shown,
			"expected a list of groups ( { path = ...; clients = [...]; }, ... ), "
			"got %s",
			config_type_name(s));
		return;
	}
	cfg->server.exports = calloc(n ? (size_t)n : 1, sizeof(*cfg->server.exports));
	c->xseen = calloc(n ? (size_t)n * NEXP : 1, sizeof(*c->xseen));
	if (cfg->server.exports == NULL || c->xseen == NULL) {
		config_setting_error(c, s, shown, "out of memory");
		return;
	}
	for (int i = 0; i < n; i++) {
		const config_setting_t *el = config_setting_get_elem(s, (unsigned)i);
		struct cfg_export *exp = &cfg->server.exports[i];

		cfg->server.n_exports = (size_t)i + 1;
		exp->line = config_setting_source_line(el);
		snprintf(path, sizeof(path), "%s.[%d]", shown, i);
		if (export_defaults(exp) < 0) {
			config_setting_error(c, el, path, "out of memory");
		} else if (!config_setting_is_group(el)) {
			config_setting_error(
				c, el, path,
				"expected a group { path = ...; clients = [...]; }, got %s",
				config_type_name(el));
		} else {
			const config_setting_t **seen = c->xseen + (size_t)i * NEXP;
			struct walk_target t = {.tab = config_export_table,
						.n = NEXP,
						.base = exp,
						.seen = seen,
						.keyoff = strlen(path) + 1};

			config_walk_group(c, el, path, &t);
			check_required(c, el, path, seen);
		}
	}
}

/* See config_int.h. */
void config_normalize_path(char *p)
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

/* After the walk: normalise export paths and parse client lists for matching;
 * every client gets the export's options. */
void config_finish_exports(struct load_ctx *c)
{
	for (size_t i = 0; i < c->cfg->server.n_exports; i++) {
		struct cfg_export *exp = &c->cfg->server.exports[i];

		if (exp->path != NULL)
			config_normalize_path(exp->path);
		if (exp->clients.n == 0)
			continue;
		exp->allow = calloc(exp->clients.n, sizeof(*exp->allow));
		if (exp->allow == NULL) {
			config_file_error(c, exp->line, "server.exports", "out of memory");
			continue;
		}
		for (size_t j = 0; j < exp->clients.n; j++) {
			struct cfg_client_addr *a = &exp->allow[exp->n_allow];

			if (config_client_parse(exp->clients.v[j], a) < 0)
				continue;
			a->client = j;
			a->opts = (struct cfg_client_opts){.access = exp->access,
							   .root_squash = exp->root_squash,
							   .no_auth_nlm = !exp->auth_nlm,
							   .anon_uid = exp->anon_uid,
							   .anon_gid = exp->anon_gid};
			exp->n_allow++;
		}
	}
}
