/*
 * config_test_values.c: sizes, the defaults (valid, documented, and
 * what an empty file or the printed defaults load as), and the values,
 * exports and exports file a valid configuration stores.
 * Part of t/unit/config_test (see config_test.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/config.h"
#include "common/base/size.h"
#include "config_test.h"

/* ------------------------------------------------------------------ sizes */

void sizes_parse_and_print(void **state)
{
	char buf[SIZE_TEXT_MAX];
	uint64_t v = 7;

	assert_int_equal(size_parse("4096", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(size_parse("64K", &v), 0);
	assert_int_equal(v, 65536);
	assert_int_equal(size_parse("1m", &v), 0);
	assert_int_equal(v, 1 << 20);
	assert_int_equal(size_parse("16G", &v), 0);
	assert_int_equal(v, 16ULL << 30);
	assert_int_equal(size_parse("2T", &v), 0);
	assert_int_equal(v, 2ULL << 40);
	v = 7;
	assert_int_equal(size_parse("", &v), -1);
	assert_int_equal(size_parse("K", &v), -1);
	assert_int_equal(size_parse("1KB", &v), -1);
	assert_int_equal(size_parse("1.5M", &v), -1);
	assert_int_equal(size_parse("-1", &v), -1);
	assert_int_equal(size_parse(" 1", &v), -1);
	assert_int_equal(size_parse("1X", &v), -1);
	assert_int_equal(size_parse("18446744073709551616", &v), -2);
	assert_int_equal(size_parse("16777216T", &v), -2);
	assert_int_equal(v, 7);
	assert_string_equal(size_format(1 << 20, buf), "1M");
	assert_string_equal(size_format(1536, buf), "1536");
	assert_string_equal(size_format(0, buf), "0");
	assert_string_equal(size_format(3ULL << 40, buf), "3T");
	assert_string_equal(size_format(5ULL << 50, buf), "5120T");
}

/* ------------------------------------------------------------------ defaults */

/* Compare two configs field by field (strings by content). */
static void assert_same_config(const struct nfsrdma_config *a, const struct nfsrdma_config *b)
{
	struct nfsrdma_config x, y;

	assert_string_equal(a->rdma.provider, b->rdma.provider);
	assert_int_equal(a->server.listen.n, b->server.listen.n);
	for (size_t i = 0; i < a->server.listen.n; i++)
		assert_string_equal(a->server.listen.v[i], b->server.listen.v[i]);
	assert_ptr_equal(a->server.pidfile, NULL);
	assert_ptr_equal(b->server.pidfile, NULL);
	assert_string_equal(a->server.control_socket, b->server.control_socket);
	assert_string_equal(a->server.handle_key_file, b->server.handle_key_file);
	assert_int_equal(a->server.n_exports, b->server.n_exports);
	memcpy(&x, a, sizeof(x));
	memcpy(&y, b, sizeof(y));
	x.source = y.source = NULL;
	x.rdma.provider = y.rdma.provider = NULL;
	x.server.listen.v = y.server.listen.v = NULL;
	x.server.control_socket = y.server.control_socket = NULL;
	x.server.handle_key_file = y.server.handle_key_file = NULL;
	x.server.exports = y.server.exports = NULL;
	assert_memory_equal(&x, &y, sizeof(x));
}

/* config_defaults gives the values the brief and the man page promise. */
void defaults_are_the_documented_ones(void **state)
{
	struct nfsrdma_config cfg;

	assert_int_equal(config_defaults(&cfg), 0);
	assert_int_equal(cfg.log.level, LOG_LVL_NOTICE);
	assert_int_equal(cfg.log.destination, CFG_LOG_STDERR);
	assert_string_equal(cfg.rdma.provider, "auto");
	assert_int_equal(cfg.rdma.credits, 128);
	assert_int_equal(cfg.rdma.inline_send, 4096);
	assert_int_equal(cfg.rdma.inline_recv, 4096);
	assert_int_equal(cfg.rdma.max_io_size, 1 << 20);
	assert_int_equal(cfg.rdma.rd_depth, 8);
	assert_int_equal(cfg.rdma.registered_memory_budget, 256 << 20);
	assert_int_equal(cfg.server.listen.n, 1);
	assert_string_equal(cfg.server.listen.v[0], "0.0.0.0");
	assert_int_equal(cfg.server.rdma_port, 20049);
	assert_int_equal(cfg.server.tcp_port, 2049);
	assert_int_equal(cfg.server.modes, CFG_MODE_BIT(CFG_MODE_READ_WRITE));
	assert_int_equal(cfg.server.registration, CFG_SREG_CACHE);
	assert_false(cfg.server.trusted_peers);
	assert_int_equal(cfg.server.read_read.done_deadline_ms, 5000);
	assert_int_equal(cfg.server.read_read.exposed_bytes_max, 64 << 20);
	assert_int_equal(cfg.server.read_read.windows_max, 0);
	assert_int_equal(cfg.server.threads, 4);
	assert_null(cfg.server.pidfile);
	assert_int_equal(cfg.server.integrity.mode, CFG_INTEGRITY_NONE);
	assert_null(cfg.server.integrity.key_file);
	assert_int_equal(cfg.server.n_exports, 0);
	assert_int_equal(cfg.client.mode, CFG_MODE_READ_WRITE);
	assert_int_equal(cfg.client.registration, CFG_CREG_FASTREG);
	assert_int_equal(cfg.client.proto, CFG_PROTO_RDMA);
	assert_true(cfg.client.cache.low_watermark < cfg.client.cache.high_watermark);
	config_free(&cfg);
	assert_null(cfg.rdma.provider);
	config_free(&cfg); /* twice is harmless */
}

/* The -D output is a config file: it loads without error and equals the defaults. */
void printed_defaults_load_as_defaults(void **state)
{
	struct nfsrdma_config def, loaded;
	struct config_errors errs;
	const char *path = tmp_path("defaults.conf");
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(config_print_defaults(f), 0);
	assert_int_equal(fclose(f), 0);
	config_errors_init(&errs);
	if (config_load(path, &loaded, &errs) != 0) {
		config_errors_print(&errs, stderr);
		FAIL("the printed defaults do not load");
	}
	config_errors_free(&errs);
	assert_string_equal(loaded.source, path);
	assert_int_equal(config_defaults(&def), 0);
	assert_same_config(&def, &loaded);
	config_free(&def);
	config_free(&loaded);
}

/* A file with only a comment loads as the defaults. */
void empty_file_gives_defaults(void **state)
{
	struct nfsrdma_config def, cfg;

	load_ok("# nothing here\n", &cfg);
	assert_int_equal(config_defaults(&def), 0);
	assert_same_config(&def, &cfg);
	config_free(&def);
	config_free(&cfg);
}

/* Values of every type land in their fields. */
void values_are_stored(void **state)
{
	struct nfsrdma_config cfg;

	load_ok("log = { level = \"debug\"; destination = \"syslog\"; };\n"
		"rdma = { provider = \"rxe0\"; credits = 32; max_io_size = \"256K\";\n"
		"  inline_send = 2048; registered_memory_budget = 4294967296L; };\n"
		"server = { listen = [\"::\", \"127.0.0.1\"]; modes = [\"read-read\", "
		"\"read-write\"];\n"
		"  registration = \"allphys\"; trusted_peers = true; tcp_port = 0;\n"
		"  pidfile = \"/run/x.pid\"; threads = 16; read_read = { windows_max = 64; }; };\n"
		"client = { proto = \"tcp\"; rsize = \"64K\"; mode = \"read-read\"; };\n",
		&cfg);
	assert_int_equal(cfg.log.level, LOG_LVL_DEBUG);
	assert_int_equal(cfg.log.destination, CFG_LOG_SYSLOG);
	assert_string_equal(cfg.rdma.provider, "rxe0");
	assert_int_equal(cfg.rdma.credits, 32);
	assert_int_equal(cfg.rdma.max_io_size, 256 * 1024);
	assert_int_equal(cfg.rdma.inline_send, 2048);
	assert_int_equal(cfg.rdma.registered_memory_budget, 4ULL << 30);
	assert_int_equal(cfg.server.listen.n, 2);
	assert_string_equal(cfg.server.listen.v[0], "::");
	assert_int_equal(cfg.server.modes,
			 CFG_MODE_BIT(CFG_MODE_READ_READ) | CFG_MODE_BIT(CFG_MODE_READ_WRITE));
	assert_int_equal(cfg.server.registration, CFG_SREG_ALLPHYS);
	assert_int_equal(cfg.server.tcp_port, 0);
	assert_string_equal(cfg.server.pidfile, "/run/x.pid");
	assert_int_equal(cfg.server.threads, 16);
	assert_int_equal(cfg.server.read_read.windows_max, 64);
	assert_int_equal(cfg.client.proto, CFG_PROTO_TCP);
	assert_int_equal(cfg.client.rsize, 65536);
	assert_int_equal(cfg.client.mode, CFG_MODE_READ_READ);
	config_free(&cfg);
}

/* Export groups: values, defaults, normalised paths, lines. */
void exports_are_stored(void **state)
{
	struct nfsrdma_config cfg;

	load_ok("server = { exports = (\n"
		"  { path = \"/srv//a/\"; clients = [\"10.0.0.0/8\", \"::1\"]; access = \"rw\";\n"
		"    root_squash = false; anon_uid = 1000; anon_gid = 100; },\n"
		"  { path = \"/\"; clients = (\"*\"); }\n"
		"); };\n",
		&cfg);
	assert_int_equal(cfg.server.n_exports, 2);
	assert_string_equal(cfg.server.exports[0].path, "/srv/a");
	assert_int_equal(cfg.server.exports[0].line, 2);
	assert_int_equal(cfg.server.exports[0].access, CFG_ACCESS_RW);
	assert_false(cfg.server.exports[0].root_squash);
	assert_int_equal(cfg.server.exports[0].anon_uid, 1000);
	assert_int_equal(cfg.server.exports[0].anon_gid, 100);
	assert_int_equal(cfg.server.exports[0].n_allow, 2);
	assert_string_equal(cfg.server.exports[0].clients.v[1], "::1");
	assert_string_equal(cfg.server.exports[1].path, "/");
	assert_int_equal(cfg.server.exports[1].access, CFG_ACCESS_RO);
	assert_true(cfg.server.exports[1].root_squash);
	assert_int_equal(cfg.server.exports[1].anon_uid, 65534);
	assert_int_equal(cfg.server.exports[1].line, 4);
	config_free(&cfg);
}

/* The rule the first client of export e matching the textual peer gets, or NULL. */
static const struct cfg_client_opts *opts_for(const struct cfg_export *e, const char *peer)
{
	static struct sockaddr_storage ss;
	struct sockaddr_in *in = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	const struct cfg_client_addr *a;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, peer, &in->sin_addr) == 1)
		in->sin_family = AF_INET;
	else if (inet_pton(AF_INET6, peer, &in6->sin6_addr) == 1)
		in6->sin6_family = AF_INET6;
	else
		FAIL("bad peer %s in the test", peer);
	a = config_client_match(e, (const struct sockaddr *)&ss);
	return a ? &a->opts : NULL;
}

/* server.exports_file: every option lands in its client's rule; defaults are
 * nfs-utils'; -opts defaults, continuations, quotes, merged lines, host names. */
void exports_file_is_stored(void **state)
{
	const struct cfg_client_opts *o;
	struct nfsrdma_config cfg;
	const struct cfg_export *a, *b, *c;

	write_file(
		"t.exports",
		"# comment\n"
		"/srv/a 192.0.2.7(rw,no_root_squash,insecure,async,insecure_locks) \\\n"
		"   10.0.0.0/255.0.0.0(all_squash,anonuid=1000,anongid=1001,sync,secure,"
		"root_squash,no_all_squash,ro,no_subtree_check,no_wdelay,hide,sec=sys,no_auth_nlm,"
		"secure_locks) # c\n"
		"\"/srv/b\" -rw,insecure fe80::/10 *(ro,fsid=77)\n"
		"/srv/b// 192.0.2.9(all_squash)\n"
		"/srv/c localhost(rw)\n",
		0644);
	load_ok("server = { exports_file = \"t.exports\";\n"
		"  exports = ( { path = \"/srv/x\"; clients = [\"192.0.2.1\"]; access = \"rw\";"
		" root_squash = false; fsid = 5; auth_nlm = false; } );\n};\n",
		&cfg);
	assert_int_equal(cfg.server.n_exports, 4);
	assert_null(cfg.server.exports[0].file);
	assert_int_equal(cfg.server.exports[0].fsid, 5);
	o = opts_for(&cfg.server.exports[0], "192.0.2.1");
	assert_non_null(o);
	assert_true(o->access == CFG_ACCESS_RW && !o->root_squash && !o->secure && !o->async);
	assert_true(o->no_auth_nlm);
	assert_string_equal(cfg.server.exports_file, tmp_path("t.exports"));

	a = &cfg.server.exports[1];
	assert_string_equal(a->path, "/srv/a");
	assert_string_equal(a->file, tmp_path("t.exports"));
	assert_int_equal(a->line, 2);
	assert_int_equal(a->fsid, 0);
	o = opts_for(a, "192.0.2.7");
	assert_non_null(o);
	assert_int_equal(o->access, CFG_ACCESS_RW);
	assert_false(o->root_squash);
	assert_false(o->all_squash);
	assert_false(o->secure);
	assert_true(o->async);
	assert_true(o->no_auth_nlm);
	assert_int_equal(o->anon_uid, 65534);
	o = opts_for(a, "10.9.8.7");
	assert_non_null(o);
	assert_int_equal(o->access, CFG_ACCESS_RO);
	assert_true(o->root_squash && !o->all_squash && o->secure && !o->async);
	assert_false(o->no_auth_nlm); /* the last of no_auth_nlm,secure_locks */
	assert_int_equal(o->anon_uid, 1000);
	assert_int_equal(o->anon_gid, 1001);
	assert_null(opts_for(a, "192.0.2.8"));

	b = &cfg.server.exports[2];
	assert_string_equal(b->path, "/srv/b");
	assert_int_equal(b->line, 4);
	assert_int_equal(b->fsid, 77);
	assert_int_equal(b->clients.n, 3); /* two lines, one export */
	o = opts_for(b, "fe80::1");
	assert_non_null(o);
	assert_true(o->access == CFG_ACCESS_RW && !o->secure && o->root_squash); /* -opts */
	assert_false(o->no_auth_nlm);
	o = opts_for(b, "192.0.2.9");
	assert_non_null(o);
	assert_true(o->access == CFG_ACCESS_RO && !o->all_squash); /* "*" comes first */
	o = opts_for(b, "203.0.113.5");
	assert_true(o != NULL && o->access == CFG_ACCESS_RO && !o->secure);

	c = &cfg.server.exports[3];
	assert_true(c->n_allow >= 1); /* localhost: each of its addresses */
	for (size_t i = 0; i < c->n_allow; i++)
		assert_int_equal(c->allow[i].client, 0);
	o = opts_for(c, "127.0.0.1");
	assert_true(o != NULL && o->access == CFG_ACCESS_RW && o->secure);
	config_free(&cfg);
}
