/*
 * config_test_clients.c: matching a peer's address against an export's
 * client entries: IPv4, IPv6, mapped and wildcard addresses, odd peers and
 * exports, and malformed entries.
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
#include "config_test.h"

/* ------------------------------------------------------------------ client addresses */

/* An export allowing the given entries (all must parse). */
static struct cfg_export *export_for(const char *const *entries)
{
	struct cfg_export *e = calloc(1, sizeof(*e));
	size_t n = 0;

	while (entries[n] != NULL)
		n++;
	e->allow = calloc(n ? n : 1, sizeof(*e->allow));
	for (size_t i = 0; i < n; i++)
		if (config_client_parse(entries[i], &e->allow[i]) != 0)
			FAIL("entry \"%s\" did not parse", entries[i]);
	e->n_allow = n;
	return e;
}

/* Free what export_for made. */
static void free_export(struct cfg_export *e)
{
	free(e->allow);
	free(e);
}

/* Whether the export built from entries admits the textual IPv4/IPv6 peer. */
static int allows(const char *const *entries, const char *peer)
{
	struct cfg_export *e = export_for(entries);
	struct sockaddr_in in = {.sin_family = AF_INET};
	struct sockaddr_in6 in6 = {.sin6_family = AF_INET6};
	const struct sockaddr *sa = NULL;
	int r;

	if (inet_pton(AF_INET, peer, &in.sin_addr) == 1)
		sa = (const struct sockaddr *)&in;
	else if (inet_pton(AF_INET6, peer, &in6.sin6_addr) == 1)
		sa = (const struct sockaddr *)&in6;
	else
		FAIL("bad peer %s in the test", peer);
	r = config_client_allowed(e, sa);
	assert_int_equal(config_acl_allows(e, sa), r);
	free_export(e);
	return r;
}

#define ALLOWS(peer, ...) allows((const char *const[]){__VA_ARGS__, NULL}, peer)

/* IPv4 addresses and prefixes, /0 and /32. */
void ipv4_matching(void **state)
{
	assert_true(ALLOWS("192.0.2.7", "192.0.2.7"));
	assert_false(ALLOWS("192.0.2.8", "192.0.2.7"));
	assert_true(ALLOWS("192.0.2.7", "192.0.2.7/32"));
	assert_false(ALLOWS("192.0.2.6", "192.0.2.7/32"));
	assert_true(ALLOWS("10.200.3.4", "10.0.0.0/8"));
	assert_false(ALLOWS("11.0.0.1", "10.0.0.0/8"));
	assert_true(ALLOWS("10.1.2.3", "10.1.2.99/8")); /* host bits ignored */
	assert_true(ALLOWS("172.31.255.255", "172.16.0.0/12"));
	assert_false(ALLOWS("172.32.0.0", "172.16.0.0/12"));
	assert_true(ALLOWS("203.0.113.9", "0.0.0.0/0"));
	assert_false(ALLOWS("::1", "0.0.0.0/0"));
	assert_true(ALLOWS("192.168.1.1", "10.0.0.0/8", "192.168.0.0/16"));
}

/* IPv6 addresses and prefixes, /0 and /128. */
void ipv6_matching(void **state)
{
	assert_true(ALLOWS("::1", "::1"));
	assert_true(ALLOWS("::1", "::1/128"));
	assert_false(ALLOWS("::2", "::1/128"));
	assert_true(ALLOWS("fe80::1234", "fe80::/10"));
	assert_true(ALLOWS("febf::1", "fe80::/10"));
	assert_false(ALLOWS("fec0::1", "fe80::/10"));
	assert_true(ALLOWS("2001:db8::1", "::/0"));
	assert_false(ALLOWS("192.0.2.1", "::/0"));
	assert_true(ALLOWS("2001:db8:0:1::5", "2001:db8::/63"));
	assert_false(ALLOWS("2001:db8:0:2::5", "2001:db8::/63"));
}

/* IPv4-mapped peers and entries count as IPv4; "*" admits anyone. */
void mapped_and_wildcard_matching(void **state)
{
	/* an IPv4 peer arriving on an IPv6 socket is matched as IPv4 */
	assert_true(ALLOWS("::ffff:10.1.2.3", "10.0.0.0/8"));
	assert_true(ALLOWS("::ffff:192.0.2.7", "192.0.2.7"));
	assert_false(ALLOWS("::ffff:11.1.2.3", "10.0.0.0/8"));
	assert_false(ALLOWS("::ffff:10.1.2.3", "::/0"));
	/* a mapped entry is an IPv4 entry */
	assert_true(ALLOWS("10.1.2.3", "::ffff:10.0.0.0/104"));
	assert_true(ALLOWS("192.0.2.7", "::ffff:192.0.2.7"));
	assert_true(ALLOWS("::ffff:192.0.2.7", "::ffff:192.0.2.7"));
	assert_true(ALLOWS("2001:db8::1", "*"));
	assert_true(ALLOWS("198.51.100.1", "192.0.2.7", "*"));
}

/* Non-IP peers, NULL arguments, an empty client list. */
void odd_peers_and_exports(void **state)
{
	struct cfg_export *e = export_for((const char *const[]){"10.0.0.0/8", NULL});
	struct cfg_export *any = export_for((const char *const[]){"*", NULL});
	struct sockaddr sa = {.sa_family = AF_UNIX};
	struct cfg_export none = {0};
	struct sockaddr_in in = {.sin_family = AF_INET};

	assert_int_equal(config_client_allowed(e, &sa), 0);
	assert_int_equal(config_client_allowed(any, &sa), 1);
	assert_int_equal(config_client_allowed(NULL, &sa), 0);
	assert_int_equal(config_client_allowed(e, NULL), 0);
	assert_int_equal(config_client_allowed(&none, (struct sockaddr *)&in), 0);
	free_export(e);
	free_export(any);
}

/* Entries that must be refused, leaving the output untouched. */
void malformed_client_entries(void **state)
{
	const char *bad[] = {"",
			     "10.0.0.0/33",
			     "::/129",
			     "1.2.3",
			     "10.0.0.1/",
			     "/8",
			     "abc",
			     "10.0.0.0/8/8",
			     "10.0.0.0/-1",
			     "10.0.0.0/+8",
			     "fe80::1%eth0",
			     " 10.0.0.1",
			     "10.0.0.1 ",
			     "10.0.0.0/0008",
			     "**",
			     "1.2.3.4.5",
			     "::g",
			     "10.0.0.256",
			     "host.example"};
	struct cfg_client_addr a = {.family = 99};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (config_client_parse(bad[i], &a) != -1)
			FAIL("\"%s\" was accepted", bad[i]);
	}
	assert_int_equal(a.family, 99);
	assert_int_equal(config_client_parse("10.0.0.0/08", &a), 0);
	assert_int_equal(a.prefix, 8);
	assert_int_equal(config_client_parse("::ffff:10.0.0.0/80", &a), 0);
	assert_int_equal(a.family, AF_INET6); /* wider than the mapped range: stays IPv6 */
}
