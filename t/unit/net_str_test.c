/*
 * net_str_test.c: the address strings that logs and NSM records are made of
 * (common/base/net.c): net_host_str gives an address without its port, an
 * IPv4-mapped one as IPv4 and a link-local one with its scope; net_addr_str
 * adds the port, with an IPv6 address in brackets so that the port cannot
 * be read as part of it, and names what is neither IPv4 nor IPv6;
 * net_addr_port gives the port alone (-1 for another family).
 */
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "common/base/net.h"

/* An IPv4 or IPv6 socket address of text (a literal) and port. */
static const struct sockaddr *addr_of(struct sockaddr_storage *ss, const char *text, unsigned port)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, text, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
	} else {
		assert_int_equal(inet_pton(AF_INET6, text, &s6->sin6_addr), 1);
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
	}
	return (const struct sockaddr *)ss;
}

static void host_and_port(void **state)
{
	struct sockaddr_storage ss;
	char buf[NET_ADDR_STRLEN];

	(void)state;
	assert_string_equal(net_addr_str(addr_of(&ss, "192.0.2.7", 2049), buf, sizeof(buf)),
			    "192.0.2.7:2049");
	assert_string_equal(net_host_str(addr_of(&ss, "192.0.2.7", 2049), buf, sizeof(buf)),
			    "192.0.2.7");
	assert_string_equal(net_addr_str(addr_of(&ss, "2001:db8::1", 20049), buf, sizeof(buf)),
			    "[2001:db8::1]:20049");
	assert_string_equal(net_host_str(addr_of(&ss, "2001:db8::1", 20049), buf, sizeof(buf)),
			    "2001:db8::1");
	assert_string_equal(net_addr_str(addr_of(&ss, "::1", 0), buf, sizeof(buf)), "[::1]:0");
	/* an IPv4 peer of a dual-stack socket is said as IPv4 */
	assert_string_equal(net_addr_str(addr_of(&ss, "::ffff:127.0.0.1", 65535), buf, sizeof(buf)),
			    "127.0.0.1:65535");
	assert_string_equal(net_host_str(addr_of(&ss, "::ffff:127.0.0.1", 1), buf, sizeof(buf)),
			    "127.0.0.1");
	/* the port alone */
	assert_int_equal(net_addr_port(addr_of(&ss, "192.0.2.7", 2049)), 2049);
	assert_int_equal(net_addr_port(addr_of(&ss, "2001:db8::1", 65535)), 65535);
	assert_int_equal(net_addr_port(addr_of(&ss, "::1", 0)), 0);
}

/* A link-local address keeps its scope (the loopback interface's name). */
static void link_local_scope(void **state)
{
	struct sockaddr_storage ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	char buf[NET_ADDR_STRLEN], want[NET_ADDR_STRLEN], ifname[IF_NAMESIZE];
	unsigned lo = if_nametoindex("lo");

	(void)state;
	if (lo == 0 || if_indextoname(lo, ifname) == NULL)
		skip();
	addr_of(&ss, "fe80::1", 20049);
	s6->sin6_scope_id = lo;
	snprintf(want, sizeof(want), "[fe80::1%%%s]:20049", ifname);
	assert_string_equal(net_addr_str((const struct sockaddr *)&ss, buf, sizeof(buf)), want);
}

/* What is neither IPv4 nor IPv6; a buffer too small is cut, terminated. */
static void other_families(void **state)
{
	struct sockaddr_un un = {.sun_family = AF_UNIX};
	struct sockaddr_storage ss;
	char buf[NET_ADDR_STRLEN], small[8];

	(void)state;
	assert_string_equal(net_addr_str((const struct sockaddr *)&un, buf, sizeof(buf)), "local");
	assert_int_equal(net_addr_port((const struct sockaddr *)&un), -1);
	assert_string_equal(net_addr_str(NULL, buf, sizeof(buf)), "?");
	memset(&ss, 0, sizeof(ss));
	ss.ss_family = AF_UNSPEC;
	assert_string_equal(net_addr_str((const struct sockaddr *)&ss, buf, sizeof(buf)), "?");
	assert_string_equal(net_host_str((const struct sockaddr *)&ss, buf, sizeof(buf)), "?");
	assert_string_equal(net_addr_str(addr_of(&ss, "2001:db8::1", 20049), small, sizeof(small)),
			    "[2001:d");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(host_and_port),
		cmocka_unit_test(link_local_scope),
		cmocka_unit_test(other_families),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
