/*
 * config_test_errors.c: every kind of error in a setting (type, range,
 * size text, wrapped integers, enums, unknown settings, strings), in the
 * exports, and the cross-checks between settings: each with its exact
 * message on the right line.
 * Part of t/unit/config_test (see config_test.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/base/config.h"
#include "config_test.h"

/* ------------------------------------------------------------------ errors by kind */

/* Wrong types: the message says what was expected and what was given. */
void type_errors(void **state)
{
	EXPECT("rdma = {\n credits = \"8\";\n max_io_size = true;\n};\n"
	       "log = { level = 3; };\n"
	       "server = { trusted_peers = 1; pidfile = 7; listen = \"0.0.0.0\";\n"
	       " modes = \"read-write\"; cache = 5; exports = { path = \"/x\"; }; };\n"
	       "client = { rsize = 1.5; };\n",
	       "2: rdma.credits: expected an integer, got a string",
	       "3: rdma.max_io_size: expected a size (an integer, or a string such as \"64M\"), "
	       "got "
	       "a boolean",
	       "5: log.level: expected one of: error, warning, notice, info, debug; got an integer",
	       "6: server.trusted_peers: expected a boolean (true or false), got an integer",
	       "6: server.pidfile: expected a string, got an integer",
	       "6: server.listen: expected a list of strings, got a string",
	       "7: server.modes: expected a list of: read-write, read-read; got a string",
	       "7: server.cache: expected a group { ... }, got an integer",
	       "7: server.exports: expected a list of groups ( { path = ...; clients = [...]; }, "
	       "... "
	       "), got a group",
	       "8: client.rsize: expected a size (an integer, or a string such as \"64M\"), got a "
	       "floating-point number");
	EXPECT("rdma = 1;\nserver = { listen = (\"::1\", 5); exports = ( 3 ); };\n",
	       "1: rdma: expected a group { ... }, got an integer",
	       "2: server.listen.[1]: expected a string, got an integer",
	       "2: server.exports.[0]: expected a group { path = ...; clients = [...]; }, got an "
	       "integer");
}

/* Out of range: the message says the range, in sizes where the setting is a size. */
void range_errors(void **state)
{
	EXPECT("rdma = {\n"
	       "  credits = 0;\n"
	       "  rd_depth = 129;\n"
	       "  inline_send = 1023;\n"
	       "  inline_recv = \"65M\";\n"
	       "  max_io_size = \"1000\";\n"
	       "  registered_memory_budget = -1;\n"
	       "};\n",
	       "2: rdma.credits: 0 is out of range 1..4096",
	       "3: rdma.rd_depth: 129 is out of range 1..128",
	       "4: rdma.inline_send: 1023 is out of range 1K..64K",
	       "5: rdma.inline_recv: 65M is out of range 1K..64K",
	       "6: rdma.max_io_size: 1000 is out of range 4K..16M",
	       "7: rdma.registered_memory_budget: -1 is out of range 1M..1T");
	EXPECT("client = {\n rsize = \"12K\";\n wsize = 8193;\n port = 65536;\n};\n",
	       "3: client.wsize: 8193 is not a multiple of 4K",
	       "4: client.port: 65536 is out of range 0..65535");
	EXPECT("server = { exports = ( { path = \"/x\"; clients = [\"*\"]; anon_uid = -1; } ); "
	       "};\n",
	       "1: server.exports.[0].anon_uid: -1 is out of range 0..4294967294");
	EXPECT("server = { listen = []; };\n", "1: server.listen: has 0 entries; it needs 1..64");
}

/* Size strings that are not sizes, or too large to represent. */
void size_text_errors(void **state)
{
	EXPECT("rdma = { max_io_size = \"1 M\"; inline_send = \"4KB\"; };\n"
	       "server = { cache = { budget = \"99999999999999999999\"; }; };\n",
	       "1: rdma.max_io_size: \"1 M\" is not a size: write a number with an optional K, M, "
	       "G "
	       "or T suffix",
	       "1: rdma.inline_send: \"4KB\" is not a size: write a number with an optional K, M, "
	       "G "
	       "or T suffix",
	       "2: server.cache.budget: \"99999999999999999999\" is out of range 1M..1T");
}

/* libconfig 1.5 wraps 5000000000 to 705032704 without a word; we refuse it. */
void wrapped_integers_are_refused(void **state)
{
	EXPECT("rdma = {\n registered_memory_budget = 5000000000;\n credits = 4294967424;\n};\n"
	       "# 9999999999 in a comment is fine, and so is \"9999999999\" in a string\n",
	       "2: rdma.registered_memory_budget: 5000000000 does not fit in 32 bits: write "
	       "5000000000L, or a size as a string such as \"4G\"",
	       "3: rdma.credits: 4294967424 does not fit in 32 bits: write 4294967424L, or a size "
	       "as a string such as \"4G\"");
	EXPECT_OK("rdma = { registered_memory_budget = 5000000000L; credits = 0x80; };\n"
		  "server = { pidfile = \"/run/9999999999\"; };\n");
}

/* A name not in the list: the message lists the allowed names. */
void enum_errors(void **state)
{
	EXPECT("log = { level = \"verbose\"; destination = \"file\"; };\n"
	       "server = { registration = \"none\"; modes = [\"read-write\", \"rw\"];\n"
	       "  integrity = { mode = \"hmac-md5\"; }; };\n"
	       "client = { registration = \"dynamic\"; proto = \"udp\"; };\n",
	       "1: log.level: \"verbose\" is not one of: error, warning, notice, info, debug",
	       "1: log.destination: \"file\" is not one of: stderr, syslog",
	       "2: server.registration: \"none\" is not one of: dynamic, fastreg, cache, allphys",
	       "2: server.modes.[1]: \"rw\" is not one of: read-write, read-read",
	       "3: server.integrity.mode: \"hmac-md5\" is not one of: none, hmac-sha256",
	       "4: client.registration: \"dynamic\" is not one of: zerocopy, cache, fastreg, "
	       "allphys",
	       "4: client.proto: \"udp\" is not one of: rdma, tcp");
	EXPECT("server = { modes = []; };\n",
	       "1: server.modes: must name at least 1 of: read-write, read-read");
}

/* Unknown names at every level; an unknown group is reported once. */
void unknown_settings(void **state)
{
	EXPECT("logging = { level = \"info\"; };\n"
	       "rdma = { credit = 5;\n"
	       "  nested = { a = 1; b = 2; }; };\n"
	       "server = { cache = { size = \"1M\"; };\n"
	       "  exports = ( { path = \"/a\"; clients = [\"*\"]; acces = \"rw\"; } ); };\n",
	       "1: logging: unknown setting", "2: rdma.credit: unknown setting",
	       "3: rdma.nested: unknown setting", "4: server.cache.size: unknown setting",
	       "5: server.exports.[0].acces: unknown setting");
}

/* Per-string checks: provider names, absolute paths, listen addresses. */
void string_checks(void **state)
{
	EXPECT("rdma = { provider = \"mlx5 0\"; };\n"
	       "server = { pidfile = \"run/x.pid\"; listen = [\"0.0.0.0\", \"localhost\"]; };\n",
	       "1: rdma.provider: \"mlx5 0\" is not auto, soft or an rdma-core device name "
	       "(letters, "
	       "digits, _ - .; at most 63)",
	       "2: server.pidfile: \"run/x.pid\" is not an absolute path",
	       "2: server.listen.[1]: \"localhost\" is not an IPv4 or IPv6 address");
	EXPECT_OK("rdma = { provider = \"soft\"; };\nserver = { pidfile = \"\"; };\n");
	/* settings the server cannot go without take no "" */
	EXPECT("server = { control_socket = \"\";\n handle_key_file = \"\"; };\n",
	       "1: server.control_socket: an absolute path is needed (this setting cannot be "
	       "empty)",
	       "2: server.handle_key_file: an absolute path is needed (this setting cannot be "
	       "empty)");
}

/* ------------------------------------------------------------------ exports */

void export_errors(void **state)
{
	EXPECT("server = { exports = (\n"
	       "  { path = \"/srv/a\"; clients = [\"*\"]; },\n"
	       "  { path = \"srv/b\"; clients = [\"*\"]; },\n"
	       "  { path = \"/srv/../etc\"; clients = [\"*\"]; },\n"
	       "  { clients = [\"10.0.0.0/8\", \"10.0.0.0/33\", \"host.example\"]; },\n"
	       "  { path = \"/srv//a/\"; },\n"
	       "  { path = \"/srv/c\"; clients = []; }\n"
	       "); };\n",
	       "3: server.exports.[1].path: \"srv/b\" is not an absolute path",
	       "4: server.exports.[2].path: \"/srv/../etc\" has a \".\" or \"..\" component",
	       "5: server.exports.[3].clients.[1]: \"10.0.0.0/33\" is not an address, a prefix "
	       "(10.0.0.0/8, fe80::/10) or *",
	       "5: server.exports.[3].clients.[2]: \"host.example\" is not an address, a prefix "
	       "(10.0.0.0/8, fe80::/10) or *",
	       "5: server.exports.[3].path: missing: every export needs one",
	       "6: server.exports.[4].clients: missing: every export needs one",
	       "6: server.exports.[4].path: duplicate export path /srv/a (also at line 2)",
	       "7: server.exports.[5].clients: has 0 entries; it needs 1..1024");
}

/* ------------------------------------------------------------------ cross-checks */

void watermarks(void **state)
{
	EXPECT("server = { cache = { low_watermark = 90; }; };\n",
	       "1: server.cache.low_watermark: 90 must be below server.cache.high_watermark (90)");
	EXPECT("\nserver = { cache = { high_watermark = 50; }; };\n",
	       "2: server.cache.high_watermark: 50 must be above server.cache.low_watermark (70)");
	EXPECT("client = { cache = {\n high_watermark = 10;\n low_watermark = 20; }; };\n",
	       "3: client.cache.low_watermark: 20 must be below client.cache.high_watermark (10)");
	/* a refused value is not cross-checked again */
	EXPECT("server = { cache = { low_watermark = 101; high_watermark = 50; }; };\n",
	       "1: server.cache.low_watermark: 101 is out of range 1..100");
	EXPECT_OK("server = { cache = { low_watermark = 1; high_watermark = 100; }; };\n");
}

/* allphys is refused unless the peers are declared trusted. */
void allphys_needs_trust(void **state)
{
	EXPECT("server = {\n registration = \"allphys\"; };\n"
	       "client = { registration = \"allphys\"; };\n",
	       "2: server.registration: allphys needs server.trusted_peers = true: every peer "
	       "could "
	       "reach all registered memory",
	       "3: client.registration: allphys needs client.trusted_peers = true: every peer "
	       "could "
	       "reach all registered memory");
	EXPECT_OK("server = { registration = \"allphys\"; trusted_peers = true; };\n"
		  "client = { registration = \"allphys\"; trusted_peers = true; };\n");
}

/* Read-Read with the cache (whose keys outlive a reply) needs trusted peers;
 * fastreg and dynamic rekey per reply. */
void read_read_needs_fresh_keys(void **state)
{
	EXPECT("server = {\n modes = [\"read-read\"];\n registration = \"cache\"; };\n",
	       "3: server.registration: cache keeps a key valid after the reply it exposed, so "
	       "in read-read mode a client could read other clients' later replies: use fastreg "
	       "or dynamic there, or set server.trusted_peers = true");
	EXPECT_OK("server = { modes = [\"read-read\"]; registration = \"fastreg\"; };\n");
	EXPECT_OK("server = { modes = [\"read-read\"]; registration = \"dynamic\"; };\n");
	EXPECT_OK("server = { modes = [\"read-read\"]; registration = \"cache\";\n"
		  " trusted_peers = true; };\n");
	EXPECT_OK("server = { modes = [\"read-write\"]; registration = \"cache\"; };\n");
	/* the default registration (cache) with read-read: named at the modes */
	EXPECT("server = {\n modes = [\"read-read\"]; };\n",
	       "2: server.modes: cache keeps a key valid after the reply it exposed, so in "
	       "read-read mode a client could read other clients' later replies: use fastreg or "
	       "dynamic there, or set server.trusted_peers = true");
}

/* Expect text to fail with one error about a key file in the scratch directory. */
static void expect_key_error(const char *text, const char *prefix, const char *key,
			     const char *problem)
{
	char want[512];

	snprintf(want, sizeof(want), "%s%s%s", prefix, tmp_path(key), problem);
	EXPECT(text, want);
}

/* hmac-sha256 needs a key file that is regular, private and of a key's length. */
void integrity_needs_a_safe_key(void **state)
{
	char text[512];

	EXPECT("server = { integrity = { mode = \"hmac-sha256\"; }; };\n",
	       "1: server.integrity.mode: hmac-sha256 needs server.integrity.key_file");
	write_file("key.ok", "0123456789abcdef0123456789abcdef\n", 0600);
	write_file("key.open", "0123456789abcdef0123456789abcdef\n", 0640);
	write_file("key.empty", "", 0600);
	write_file("key.short", "0123456789abcde\n", 0600);
	write_file("key.16", "0123456789abcdef", 0600);
	/* relative key files are resolved from the config file's directory */
	EXPECT_OK(
		"server = { integrity = { mode = \"hmac-sha256\"; key_file = \"key.ok\"; }; };\n");
	snprintf(text, sizeof(text),
		 "server = { integrity = { mode = \"hmac-sha256\"; key_file = \"%s\"; }; };\n"
		 "client = { integrity = { mode = \"hmac-sha256\";\n  key_file = \"key.open\"; }; "
		 "};\n",
		 tmp_path("key.ok"));
	expect_key_error(text, "3: client.integrity.key_file: ", "key.open",
			 " can be accessed by group or others (mode 0640): chmod 600 it");
	expect_key_error("client = { integrity = { mode = \"hmac-sha256\"; key_file = "
			 "\"key.empty\"; }; };\n",
			 "1: client.integrity.key_file: ", "key.empty", " is empty");
	/* as loaded: 16 to 64 bytes, a trailing newline not counted */
	expect_key_error("client = { integrity = { mode = \"hmac-sha256\"; key_file = "
			 "\"key.short\"; }; };\n",
			 "1: client.integrity.key_file: ", "key.short",
			 ": the key must be 16 to 64 bytes");
	EXPECT_OK("client = { integrity = { mode = \"hmac-sha256\"; key_file = \"key.16\"; }; "
		  "};\n");
	expect_key_error(
		"client = { integrity = { mode = \"hmac-sha256\"; key_file = \"nokey\"; }; };\n",
		"1: client.integrity.key_file: ", "nokey",
		": cannot open: No such file or directory");
	EXPECT("client = { integrity = { mode = \"hmac-sha256\"; key_file = \"/\"; }; };\n",
	       "1: client.integrity.key_file: / is not a regular file");
	/* an unsafe key file that is not used is not checked */
	EXPECT_OK("client = { integrity = { mode = \"none\"; key_file = \"key.open\"; }; };\n");
	EXPECT("server = { exports = ( { path = \"/a\"; clients = [\"*\"];\n"
	       "  integrity_required = true; } ); };\n",
	       "2: server.exports.[0].integrity_required: needs server.integrity.mode = "
	       "\"hmac-sha256\"");
	/* Optimistic RDMA: a cache, peers trusted with all of it, a POSIX export */
	EXPECT("server = { trusted_peers = true; exports = ( { path = \"/a\"; clients = [\"*\"];\n"
	       "  ordma = true; } ); };\n",
	       "2: server.exports.[0].ordma: needs server.ordma.cache (its size)");
	EXPECT("server = { ordma = { cache = \"64M\"; };\n"
	       "  exports = ( { path = \"/a\"; clients = [\"*\"]; ordma = true; } ); };\n",
	       "2: server.exports.[0].ordma: every client connected over RPC/RDMA could read "
	       "its cached blocks whatever the files' permissions: set server.trusted_peers = "
	       "true if that is meant");
	EXPECT("server = { ordma = { cache = \"64M\"; block = \"12K\"; }; };\n",
	       "1: server.ordma.block: 12288 is not a power of two");
	EXPECT_OK("server = { trusted_peers = true; ordma = { cache = \"64M\"; };\n"
		  "  exports = ( { path = \"/a\"; clients = [\"*\"]; ordma = true; } ); };\n");
}

/* A relative key_file is stored resolved against the config file's directory. */
void key_file_path_is_made_absolute(void **state)
{
	struct nfsrdma_config cfg;

	write_file("key.ok", "0123456789abcdef0123456789abcdef\n", 0600);
	load_ok("server = { integrity = { mode = \"hmac-sha256\"; key_file = \"key.ok\"; }; };\n",
		&cfg);
	assert_int_equal(cfg.server.integrity.key_file[0], '/');
	assert_string_equal(strrchr(cfg.server.integrity.key_file, '/'), "/key.ok");
	config_free(&cfg);
}

/* Ports, budgets, attribute-cache bounds, Read-Read exposure. */
void other_cross_checks(void **state)
{
	EXPECT("server = { tcp_port = 20049; };\n",
	       "1: server.tcp_port: 20049 is also server.rdma_port");
	EXPECT("server = { rdma_port = 2049; };\n",
	       "1: server.rdma_port: 2049 is also server.tcp_port");
	EXPECT_OK("server = { rdma_port = 2049; tcp_port = 0; };\n");
	/* the cache budget is only bounded when the cache is used */
	EXPECT_OK("server = { registration = \"dynamic\"; cache = { budget = \"1G\"; }; };\n");
	EXPECT("server = { registration = \"cache\"; cache = { budget = \"1G\"; }; };\n",
	       "1: server.cache.budget: 1G must be at most rdma.registered_memory_budget (256M)");
	EXPECT("rdma = { registered_memory_budget = \"32M\"; };\n"
	       "server = { registration = \"dynamic\"; };\n"
	       "client = { registration = \"cache\"; };\n",
	       "1: rdma.registered_memory_budget: 32M must be at least client.cache.budget (64M)");
	EXPECT("client = { acregmin = 61; acdirmax = 10; };\n",
	       "1: client.acregmin: 61 must be at most client.acregmax (60)",
	       "1: client.acdirmax: 10 must be at least client.acdirmin (30)");
	EXPECT("rdma = { max_io_size = \"16M\"; };\n"
	       "server = { modes = [\"read-read\"]; registration = \"fastreg\";\n"
	       " read_read = { exposed_bytes_max = \"8M\"; }; };\n",
	       "1: rdma.max_io_size: 16M must be at most server.read_read.exposed_bytes_max (8M)");
	EXPECT_OK("rdma = { max_io_size = \"16M\"; };\n"
		  "server = { read_read = { exposed_bytes_max = \"8M\"; }; };\n");
}
