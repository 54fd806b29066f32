/*
 * nlm_clnt_held.h: what the lock owners of a mount hold, by (file, owner),
 * as ranges split and replaced the way POSIX does: so that a close unlocks
 * only where something is held, and the locks can be reclaimed after the
 * server restarts. Not locked: the caller serialises.
 */
#ifndef NFSRDMA_NLM_CLNT_HELD_H
#define NFSRDMA_NLM_CLNT_HELD_H

#include <stdint.h>

#include "client/nfs3_clnt.h"
#include "common/rpc/rpc.h"

#define NLMC_RANGES_MAX 1024 /* ranges one (file, owner) pair keeps */

struct nlmc_range {
	uint64_t start, end; /* end exclusive; UINT64_MAX: to the end of the file */
	int excl;
};

struct nlmc_held {
	struct nlmc_held *next;
	struct nfs3c_fh fh;
	uint64_t owner;
	uint32_t svid;
	struct rpc_cred cred; /* for whom it locked last (flavor 0: none said) */
	struct nlmc_range *r;
	unsigned nr;
};

struct nlmc_heldset {
	struct nlmc_held *head;
	unsigned n;	     /* pairs */
	unsigned max_owners; /* at most this many pairs */
};

/* Record a granted lock (type F_RDLCK or F_WRLCK) or an unlock (F_UNLCK) of
 * [start, start + len) (len 0: to the end). 0, or -ENOLCK at a ceiling. */
int nlmc_held_apply(struct nlmc_heldset *s, const struct nfs3c_fh *fh, uint64_t owner,
		    uint32_t svid, int type, uint64_t start, uint64_t len);
/* Take the pair (fh, owner) out of s (NULL if it holds nothing); free it with nlmc_held_free. */
struct nlmc_held *nlmc_held_take(struct nlmc_heldset *s, const struct nfs3c_fh *fh, uint64_t owner);
void nlmc_held_free(struct nlmc_held *h);
/* 1 if the pair (fh, owner) holds all of [start, start + len) (len 0: to
 * the end), all of it exclusive (excl) or all of it shared (!excl). */
int nlmc_held_covers(struct nlmc_heldset *s, const struct nfs3c_fh *fh, uint64_t owner,
		     uint64_t start, uint64_t len, int excl);
/* Keep cred as the pair (fh, owner)'s: whom its last lock was asked for,
 * whom its reclaim is made for. Nothing if the pair holds nothing. */
void nlmc_held_set_cred(struct nlmc_heldset *s, const struct nfs3c_fh *fh, uint64_t owner,
			const struct rpc_cred *cred);
/* The credential h keeps, or NULL (none said: this process's). */
const struct rpc_cred *nlmc_held_cred(const struct nlmc_held *h);
/* The svid the pair (fh, owner) locked with, or 0. */
uint32_t nlmc_held_svid(struct nlmc_heldset *s, const struct nfs3c_fh *fh, uint64_t owner);
void nlmc_held_clear(struct nlmc_heldset *s);

#endif
