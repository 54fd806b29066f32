/*
 * config_addr.c: export client lists: parsing "192.0.2.7", "10.0.0.0/8",
 * "fe80::/10", "*", and matching a peer's address against them, IPv4-mapped
 * IPv6 peers as IPv4.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "config.h"

/* Prefix length after '/': decimal, at most max. -1 if malformed. */
static int parse_prefix(const char *s, unsigned max)
{
	unsigned v = 0;

	if (*s == '\0' || strlen(s) > 3)
		return -1;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (unsigned)(*s - '0');
	}
	return v <= max ? (int)v : -1;
}

/* Clear the bits of addr (len bytes) after the first prefix bits. */
static void mask_host_bits(unsigned char *addr, size_t len, unsigned prefix)
{
	for (size_t i = 0; i < len; i++) {
		unsigned keep = prefix >= 8 * (i + 1) ? 8 : prefix > 8 * i ? prefix - 8 * i : 0;

		addr[i] &= (unsigned char)(0xff00u >> keep);
	}
}

/* Whether the 16 bytes at a are an IPv4-mapped IPv6 address (::ffff:a.b.c.d). */
static bool is_v4_mapped(const unsigned char *a)
{
	static const unsigned char head[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	return memcmp(a, head, sizeof(head)) == 0;
}

/* Turn an IPv4-mapped IPv6 address (16 bytes) into IPv4 in the first 4 bytes. */
static void unmap_v4(unsigned char *a)
{
	memmove(a, a + 12, 4);
	memset(a + 4, 0, 12);
}

/* Address or prefix into family, prefix length and masked bytes; "*" is AF_UNSPEC. */
int config_client_parse(const char *text, struct cfg_client_addr *out)
{
	struct cfg_client_addr a = {.family = AF_INET};
	char buf[INET6_ADDRSTRLEN + 8];
	char *slash;
	unsigned max = 32;

	if (strcmp(text, "*") == 0) {
		memset(out, 0, sizeof(*out));
		out->family = AF_UNSPEC;
		return 0;
	}
	if (strlen(text) >= sizeof(buf))
		return -1;
	snprintf(buf, sizeof(buf), "%s", text);
	slash = strchr(buf, '/');
	if (slash != NULL)
		*slash++ = '\0';
	if (inet_pton(AF_INET, buf, a.addr) != 1) {
		if (inet_pton(AF_INET6, buf, a.addr) != 1)
			return -1;
		a.family = AF_INET6;
		max = 128;
	}
	a.prefix = max;
	if (slash != NULL) {
		int p = parse_prefix(slash, max);

		if (p < 0)
			return -1;
		a.prefix = (unsigned)p;
	}
	if (a.family == AF_INET6 && is_v4_mapped(a.addr) && a.prefix >= 96) {
		unmap_v4(a.addr);
		a.family = AF_INET;
		a.prefix -= 96;
	}
	mask_host_bits(a.addr, sizeof(a.addr), a.prefix);
	*out = a;
	return 0;
}

/* The peer's family and address bytes; an IPv4-mapped IPv6 peer comes out as IPv4. */
static int peer_addr(const struct sockaddr *sa, unsigned char addr[16])
{
	memset(addr, 0, 16);
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;

		memcpy(addr, &in->sin_addr, 4);
		return AF_INET;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)sa;

		memcpy(addr, &in6->sin6_addr, 16);
		if (!is_v4_mapped(addr))
			return AF_INET6;
		unmap_v4(addr);
		return AF_INET;
	}
	return AF_UNSPEC;
}

/* First matching entry wins; "*" admits any peer, even one that is not IP. */
const struct cfg_client_addr *config_client_match(const struct cfg_export *exp,
						  const struct sockaddr *sa)
{
	unsigned char addr[16], masked[16];
	int family;

	if (exp == NULL || sa == NULL)
		return NULL;
	family = peer_addr(sa, addr);
	for (size_t i = 0; i < exp->n_allow; i++) {
		const struct cfg_client_addr *a = &exp->allow[i];

		if (a->family == AF_UNSPEC)
			return a;
		if (a->family != family)
			continue;
		memcpy(masked, addr, sizeof(masked));
		mask_host_bits(masked, sizeof(masked), a->prefix);
		if (memcmp(masked, a->addr, sizeof(masked)) == 0)
			return a;
	}
	return NULL;
}

/* See config.h. */
int config_client_allowed(const struct cfg_export *exp, const struct sockaddr *sa)
{
	return config_client_match(exp, sa) != NULL;
}

/* Adapter for access-list callbacks that carry the export as a void pointer. */
int config_acl_allows(const void *acl, const struct sockaddr *sa)
{
	return config_client_allowed(acl, sa);
}

/* See config.h. */
int config_hostport_parse(const char *text, char *host, size_t hostlen, unsigned *port, char *why,
			  size_t whylen)
{
	const char *colon = strrchr(text, ':'), *h = text;
	size_t hlen = colon ? (size_t)(colon - text) : 0;
	unsigned char buf[16];
	char *end;
	unsigned long p;

	if (colon == NULL || hlen == 0) {
		snprintf(why, whylen,
			 "\"%s\" is not ADDR:PORT (\"127.0.0.1:9101\", \"[::1]:9101\")", text);
		return -1;
	}
	if (text[0] == '[') {
		if (hlen < 2 || text[hlen - 1] != ']') {
			snprintf(why, whylen,
				 "\"%s\": an IPv6 address goes in brackets: [::1]:9101", text);
			return -1;
		}
		h = text + 1;
		hlen -= 2;
	}
	if (hlen >= hostlen) {
		snprintf(why, whylen, "\"%s\": the address is too long", text);
		return -1;
	}
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	if (inet_pton(text[0] == '[' ? AF_INET6 : AF_INET, host, buf) != 1) {
		snprintf(why, whylen,
			 "\"%s\": \"%s\" is not an IPv4 address or a bracketed IPv6 one", text,
			 host);
		return -1;
	}
	p = strtoul(colon + 1, &end, 10);
	if (colon[1] < '0' || colon[1] > '9' || *end != '\0' || p < 1 || p > 65535) {
		snprintf(why, whylen, "\"%s\": the port must be 1..65535", text);
		return -1;
	}
	*port = (unsigned)p;
	return 0;
}
