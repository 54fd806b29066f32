/* rpcbind.h: tell the local rpcbind where NFS and MOUNT are (so stock clients find MOUNT). */
#ifndef NFSRDMA_SERVER_RPCBIND_H
#define NFSRDMA_SERVER_RPCBIND_H

/* Register NFS v3 and MOUNT v3 (and, with_nlm, NLM v4 and NSM v1) on TCP and UDP port, for
 * IPv4 and, with_ipv6, IPv6. Returns 0, or -errno when no rpcbind answers on this host (the
 * caller decides whether that matters). */
int rpcbind_register(unsigned port, int with_nlm, int with_ipv6);
/* Undo rpcbind_register. */
void rpcbind_unregister(void);

#endif
