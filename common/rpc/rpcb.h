/*
 * rpcb.h: the part of the rpcbind protocol (RFC 1833) that the lock managers
 * speak on both sides: asking a host for a program's port, registering ours,
 * and the universal addresses the IPv6 versions carry. An IPv4 peer is asked
 * with the portmapper's version 2 (what every rpcbind and the kernel's lockd
 * answer); an IPv6 peer with rpcbind version 4 and netid tcp6 or udp6, since
 * version 2 names a protocol, not a family, and Linux's rpcbind answers it
 * from the IPv4 registrations (netid tcp, udp) only.
 */
#ifndef NFSRDMA_RPCB_H
#define NFSRDMA_RPCB_H

#include <stdint.h>
#include <sys/socket.h>
#include <rpc/rpc.h>
#include <rpc/pmap_prot.h>
#include <rpc/rpcb_prot.h>

#define RPCB_UADDR_MAX 64 /* "ffff:...:ffff.255.255" and more */

/* One call to rpcbind (program 100000) about a program's port: version,
 * procedure, arguments and results, ready for clnt_call or an encoder. */
struct rpcb_call {
	uint32_t vers, proc;
	xdrproc_t xdr_args, xdr_res;
	void *args, *res;
	/* where args and res point */
	struct pmap pm;
	rpcb rb;
	char netid[8], uaddr[RPCB_UADDR_MAX];
	u_int port;
	bool_t ok; /* SET's and UNSET's answer */
	char *got; /* GETADDR's answer, decoded by xdr_wrapstring */
};

/* The netid of family and protocol (IPPROTO_TCP, IPPROTO_UDP): "tcp", "udp6"... */
const char *rpcb_netid(int family, int proto);
/* The universal address of port on family's any address ("0.0.0.0.8.1",
 * "::.8.1") into buf (RPCB_UADDR_MAX bytes). */
void rpcb_uaddr(int family, unsigned port, char *buf);
/* The port a universal address names: 1 to 65535, or 0 when it is malformed
 * or empty (rpcbind's "not registered"). */
unsigned rpcb_uaddr_port(const char *uaddr);
/* A call asking for the port of prog/vers over proto at a peer of family:
 * PMAP GETPORT for AF_INET, RPCB GETADDR (version 4) for AF_INET6. */
void rpcb_getport_call(struct rpcb_call *c, int family, uint32_t prog, uint32_t vers, int proto);
/* A call registering (set != 0) or unregistering prog/vers at port over
 * proto and family with the local rpcbind: RPCB SET/UNSET (version 3) of
 * that netid alone (PMAP's UNSET would take out udp and tcp both, another
 * program's half too). Its answer is a bool_t. */
void rpcb_set_call(struct rpcb_call *c, int set, int family, uint32_t prog, uint32_t vers,
		   int proto, unsigned port);
/* The port a decoded GETPORT or GETADDR answer of c names (0: none), and
 * what decoding it allocated is freed. */
unsigned rpcb_getport_result(struct rpcb_call *c);
/* Ask the rpcbind of host (a numeric address of family) over TCP, within
 * timeout_ms, for the port of prog/vers over proto; 0 when it does not
 * answer or names none. */
unsigned rpcb_getport(const char *host, int family, uint32_t prog, uint32_t vers, int proto,
		      int timeout_ms);

#endif
