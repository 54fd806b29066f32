/* rpcbind.h: tell the local rpcbind where NFS and MOUNT are (so stock clients find MOUNT). */
#ifndef NFSRDMA_SERVER_RPCBIND_H
#define NFSRDMA_SERVER_RPCBIND_H

/* Register NFS v3 and MOUNT v3 on TCP and UDP port. Returns 0, or -errno when
 * no rpcbind answers on this host (the caller decides whether that matters). */
int rpcbind_register(unsigned port);
/* Undo rpcbind_register. */
void rpcbind_unregister(void);

#endif
