/*
 * rpc_replay.h: replay protection for the integrity flavour, after RPCSEC_GSS
 * (RFC 2203, 5.3.3.1). Each sender context (a random id its client chose)
 * numbers its calls; a window of the last RPC_REPLAY_WINDOW numbers says which
 * were seen: a number seen before, or older than the window, is a replay. The
 * credential also carries the sender's clock, so a context may be forgotten
 * once its calls are older than the time window: the table is bounded, and a
 * forgotten context's calls cannot come back.
 */
#ifndef NFSRDMA_RPC_REPLAY_H
#define NFSRDMA_RPC_REPLAY_H

#include <stdint.h>

#define RPC_REPLAY_WINDOW 128 /* sequence numbers remembered per context */

struct rpc_replay;

/* What the table has turned away. */
struct rpc_replay_stats {
	uint64_t replays;   /* a sequence number seen before, or older than the window */
	uint64_t off_clock; /* the sender's clock further off than window_s */
	uint64_t full;	    /* a new context, and no room for it */
	uint64_t contexts;  /* held now */
};

/* A table of at most contexts contexts; calls whose time is more than
 * window_s seconds off our clock are refused. */
int rpc_replay_create(unsigned contexts, unsigned window_s, struct rpc_replay **out);
void rpc_replay_destroy(struct rpc_replay *r);
/* A call (already authenticated) of context ctx, numbered seq, sent at time
 * (the sender's clock, seconds, low 32 bits), checked at now (seconds). 0 to
 * run it; -EALREADY for a replay (drop it: RPCSEC_GSS sends no reply); -ETIME
 * when its time is off; -ENOSPC when the table has no room for a new context. */
int rpc_replay_check(struct rpc_replay *r, uint64_t ctx, uint32_t seq, uint32_t time, uint64_t now);
void rpc_replay_get_stats(struct rpc_replay *r, struct rpc_replay_stats *st);

#endif
