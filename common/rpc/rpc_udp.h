/* rpc_udp.h: RPC over UDP (one call per datagram), for MOUNT clients that ask over UDP. */
#ifndef NFSRDMA_RPC_UDP_H
#define NFSRDMA_RPC_UDP_H

#include "rpc.h"

struct udp_listener;

/* Serve srv's programs on UDP host:port (host NULL = any); replies up to 64 KiB.
 * At most max_inflight calls are held at once (each holds 128 KiB): past it
 * the listener stops reading, and datagrams wait in the socket's buffer, where
 * the kernel drops what does not fit (UDP clients retransmit). */
int rpc_udp_listen(struct rpc_server *srv, const char *host, const char *port,
		   unsigned max_inflight, struct udp_listener **out);
/* The most calls held at once so far. */
unsigned rpc_udp_inflight_peak(struct udp_listener *l);
/* Stop, wait for the calls in flight, free. */
void rpc_udp_stop(struct udp_listener *l);

#endif
