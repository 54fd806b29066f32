/* rpc_udp.h: RPC over UDP (one call per datagram), for MOUNT clients that ask over UDP. */
#ifndef NFSRDMA_RPC_UDP_H
#define NFSRDMA_RPC_UDP_H

#include "rpc.h"

struct udp_listener;

/* Serve srv's programs on UDP host:port (host NULL = any); replies up to 64 KiB. */
int rpc_udp_listen(struct rpc_server *srv, const char *host, const char *port,
		   struct udp_listener **out);
/* Stop, wait for the calls in flight, free. */
void rpc_udp_stop(struct udp_listener *l);

#endif
