/* rpcb.c: see rpcb.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#include "common/rpc/rpc_tcp.h"
#include "common/rpc/rpcb.h"

/* See rpcb.h. */
const char *rpcb_netid(int family, int proto)
{
	if (family == AF_INET6)
		return proto == IPPROTO_TCP ? "tcp6" : "udp6";
	return proto == IPPROTO_TCP ? "tcp" : "udp";
}

/* See rpcb.h. */
void rpcb_uaddr(int family, unsigned port, char *buf)
{
	snprintf(buf, RPCB_UADDR_MAX, "%s.%u.%u", family == AF_INET6 ? "::" : "0.0.0.0",
		 (port >> 8) & 0xff, port & 0xff);
}

/* A number of 1 to 3 digits up to end (NULL: the string's end), at most 255; -1 if none. */
static int octet(const char *s, const char *end)
{
	int v = 0, n = 0;

	for (; end ? s < end : *s != '\0'; s++, n++) {
		if (*s < '0' || *s > '9' || n == 3)
			return -1;
		v = v * 10 + (*s - '0');
	}
	return n == 0 || v > 255 ? -1 : v;
}

/* See rpcb.h. The port is the last two dot-separated numbers. */
unsigned rpcb_uaddr_port(const char *uaddr)
{
	const char *lo, *hi;
	int p1, p2;

	if (uaddr == NULL || (lo = strrchr(uaddr, '.')) == NULL)
		return 0;
	for (hi = lo; hi > uaddr && hi[-1] != '.'; hi--)
		;
	if (hi == uaddr || (p1 = octet(hi, lo)) < 0 || (p2 = octet(lo + 1, NULL)) < 0)
		return 0;
	return (unsigned)(p1 << 8 | p2);
}

/* c's arguments as rpcbind versions 3 and 4 take them: prog/vers over
 * family's netid for proto, its universal address in c->uaddr (empty). */
static void rpcb_args(struct rpcb_call *c, int family, uint32_t prog, uint32_t vers, int proto)
{
	snprintf(c->netid, sizeof(c->netid), "%s", rpcb_netid(family, proto));
	c->rb = (rpcb){.r_prog = prog,
		       .r_vers = vers,
		       .r_netid = c->netid,
		       .r_addr = c->uaddr,
		       .r_owner = c->uaddr};
	c->xdr_args = (xdrproc_t)xdr_rpcb;
	c->args = &c->rb;
}

/* See rpcb.h. */
void rpcb_getport_call(struct rpcb_call *c, int family, uint32_t prog, uint32_t vers, int proto)
{
	memset(c, 0, sizeof(*c));
	if (family != AF_INET6) {
		c->vers = PMAPVERS;
		c->proc = PMAPPROC_GETPORT;
		c->pm = (struct pmap){.pm_prog = prog, .pm_vers = vers, .pm_prot = (u_long)proto};
		c->xdr_args = (xdrproc_t)xdr_pmap;
		c->args = &c->pm;
		c->xdr_res = (xdrproc_t)xdr_u_int;
		c->res = &c->port;
		return;
	}
	c->vers = RPCBVERS4;
	c->proc = RPCBPROC_GETADDR;
	rpcb_args(c, family, prog, vers, proto);
	c->xdr_res = (xdrproc_t)xdr_wrapstring;
	c->res = &c->got;
}

/* See rpcb.h. */
void rpcb_set_call(struct rpcb_call *c, int set, int family, uint32_t prog, uint32_t vers,
		   int proto, unsigned port)
{
	memset(c, 0, sizeof(*c));
	c->vers = RPCBVERS;
	c->proc = set ? RPCBPROC_SET : RPCBPROC_UNSET;
	rpcb_args(c, family, prog, vers, proto);
	c->xdr_res = (xdrproc_t)xdr_bool;
	c->res = &c->ok;
	if (set)
		rpcb_uaddr(family, port, c->uaddr);
	/* owner: rpcbind puts its own name of the caller there */
}

/* See rpcb.h. */
unsigned rpcb_getport_result(struct rpcb_call *c)
{
	unsigned port;

	if (c->res != &c->got)
		return c->port <= 65535 ? c->port : 0;
	port = rpcb_uaddr_port(c->got);
	xdr_free((xdrproc_t)xdr_wrapstring, (char *)&c->got);
	return port;
}

/* See rpcb.h. */
unsigned rpcb_getport(const char *host, int family, uint32_t prog, uint32_t vers, int proto,
		      int timeout_ms)
{
	struct rpcb_call q;
	struct rpc_call call = {.prog = PMAPPROG, .timeout_ms = timeout_ms};
	struct rpc_clnt *rpc;
	unsigned port = 0;
	char pmport[8];

	snprintf(pmport, sizeof(pmport), "%u", (unsigned)PMAPPORT);
	if (rpc_tcp_clnt_create(host, pmport, timeout_ms, 65536, &rpc) != 0)
		return 0;
	rpcb_getport_call(&q, family, prog, vers, proto);
	call.vers = q.vers;
	call.proc = q.proc;
	call.xdr_args = q.xdr_args;
	call.args = q.args;
	call.xdr_res = q.xdr_res;
	call.res = q.res;
	if (rpc_clnt_call(rpc, &call) == 0) {
		port = rpcb_getport_result(&q); /* frees GETADDR's string */
		rpc_clnt_free_res(rpc, &call);
	}
	rpc_clnt_destroy(rpc);
	return port;
}
