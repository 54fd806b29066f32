/*
 * nlm_clnt.h: the client's side of the Network Lock Manager (NLM v4). Lock
 * calls go over TCP to the server's NLM (its NFS TCP port, whatever carries
 * NFS); the server's GRANTED callbacks for blocked requests come to a small
 * UDP service of ours, which also answers PMAP GETPORT for itself (so a
 * server told where to ask finds it without rpcbind) and forwards GRANTED
 * calls meant for another nfsrdma-client of this host to that client.
 */
#ifndef NFSRDMA_NLM_CLNT_H
#define NFSRDMA_NLM_CLNT_H

#include <stdint.h>
#include <sys/types.h>

#include "client/nfs3_clnt.h"

struct nlmc;

struct nlmc_params {
	const char *host;     /* the server */
	unsigned port;	      /* its NLM over TCP; 0: rpcbind's answer, else nfs_port */
	unsigned nfs_port;    /* its NFS over TCP, where nfsrdma-server has NLM; 0: 2049 */
	unsigned cbport;      /* our callback UDP port; 0: any */
	int timeout_ms;	      /* one call */
	unsigned repoll_s;    /* a blocked request is asked again this often */
	unsigned max_waiters; /* blocked requests waiting at once */
	unsigned max_owners;  /* (file, owner) pairs holding locks */
	int no_rpcbind;	      /* 1: cbport is not registered with this host's rpcbind
			       * (the tests and t/fuzz: they must not take the slot) */
	/* non-NULL: sign every call, as the mount's NFS calls (AUTH_NFSRDMA_HMAC) */
	const struct integrity_key *key;
};

void nlmc_params_defaults(struct nlmc_params *p);
/* Start the callback service; 0 or -errno (with err). */
int nlmc_start(const struct nlmc_params *p, struct nlmc **out, char *err, size_t errlen);
void nlmc_stop(struct nlmc *n);

/* One lock request as struct flock has it: start and len (0: to the end of
 * the file), type F_RDLCK, F_WRLCK or F_UNLCK, owner the kernel's lock owner
 * (one per process for fcntl locks, one per open file for flock), cred the
 * file's opener, whose right to the file the server checks (NULL: this
 * process's own); a granted lock's is kept for its reclaim. */
struct nlmc_lock {
	const struct nfs3c_fh *fh;
	uint64_t owner;
	uint32_t svid;
	int type;
	uint64_t start, len;
	const struct rpc_cred *cred;
};

/* A blocking request's wait, which nlmc_interrupt may cut short. */
struct nlmc_wait;

/* F_GETLK: l becomes the conflicting holder (its svid in *pid), or type F_UNLCK. */
int nlmc_test(struct nlmc *n, struct nlmc_lock *l, pid_t *pid);
/* F_SETLK (wait 0) or F_SETLKW (wait 1). While waiting, *wp points to the
 * wait for nlmc_interrupt (set under the caller's care). 0 or -errno: EAGAIN
 * (held by another), EINTR (interrupted), ENOLCK (no lock manager). */
int nlmc_lock(struct nlmc *n, const struct nlmc_lock *l, int wait,
	      void (*waiting)(void *arg, struct nlmc_wait *w), void *arg);
/* Interrupt w (from another thread; w stays valid until nlmc_lock returns). */
void nlmc_interrupt(struct nlmc *n, struct nlmc_wait *w);
/* F_UNLCK of l's range. */
int nlmc_unlock(struct nlmc *n, const struct nlmc_lock *l);
/* Close: every lock owner holds on fh goes (nothing is sent if it has none). */
int nlmc_release_owner(struct nlmc *n, const struct nfs3c_fh *fh, uint64_t owner);

/* The callback UDP port. */
unsigned nlmc_cbport(const struct nlmc *n);

#endif
