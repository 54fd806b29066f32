/*
 * rpc_replay.c: the replay table (rpc_replay.h). A set-associative array: a
 * context lives in one of PROBE slots after its hash; a new one takes a free
 * slot there, or the slot of a context unused for twice the time window (its
 * calls are refused by their time by now, clock skew included), or is refused.
 * Memory is fixed at creation: no peer can grow it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rpc_replay.h"

#define PROBE 8
#define WORDS (RPC_REPLAY_WINDOW / 64)

struct slot {
	uint64_t ctx;	      /* 0: free */
	uint32_t highest;     /* the highest sequence number seen */
	uint64_t last_s;      /* our clock when it was last used */
	uint64_t seen[WORDS]; /* bit i: highest - i was seen */
};

struct rpc_replay {
	pthread_mutex_t lock;
	struct slot *slots;
	unsigned nslots;
	unsigned window_s;
	struct rpc_replay_stats st;
};

int rpc_replay_create(unsigned contexts, unsigned window_s, struct rpc_replay **out)
{
	struct rpc_replay *r = calloc(1, sizeof(*r));

	if (!r || !(r->slots = calloc(contexts ? contexts : 1, sizeof(*r->slots)))) {
		free(r);
		return -ENOMEM;
	}
	r->nslots = contexts ? contexts : 1;
	r->window_s = window_s;
	pthread_mutex_init(&r->lock, NULL);
	*out = r;
	return 0;
}

void rpc_replay_destroy(struct rpc_replay *r)
{
	if (!r)
		return;
	pthread_mutex_destroy(&r->lock);
	free(r->slots);
	free(r);
}

/* ctx's slot, or a slot it may take (cleared), or NULL. Under the lock. */
static struct slot *find(struct rpc_replay *r, uint64_t ctx, uint64_t now)
{
	uint64_t h = ctx * 0x9e3779b97f4a7c15ull;
	struct slot *take = NULL;

	for (unsigned i = 0; i < PROBE && i < r->nslots; i++) {
		struct slot *s = &r->slots[(h + i) % r->nslots];

		if (s->ctx == ctx)
			return s;
		if (!take && (s->ctx == 0 || now - s->last_s > 2ull * r->window_s))
			take = s;
	}
	if (take) {
		r->st.contexts += take->ctx == 0;
		memset(take, 0, sizeof(*take));
		take->ctx = ctx;
	}
	return take;
}

/* Shift the window up by n numbers. */
static void shift(struct slot *s, uint32_t n)
{
	if (n >= RPC_REPLAY_WINDOW) {
		memset(s->seen, 0, sizeof(s->seen));
		return;
	}
	for (; n >= 64; n -= 64) {
		memmove(&s->seen[1], &s->seen[0], (WORDS - 1) * sizeof(uint64_t));
		s->seen[0] = 0;
	}
	for (int w = WORDS - 1; n && w >= 0; w--)
		s->seen[w] = (s->seen[w] << n) | (w ? s->seen[w - 1] >> (64 - n) : 0);
}

/* Whether seq is new to s; marks it seen. */
static int mark(struct slot *s, uint32_t seq)
{
	uint32_t back;

	if (seq == 0)
		return 0; /* senders number from 1 */
	if (s->highest == 0 || seq > s->highest) {
		shift(s, s->highest ? seq - s->highest : RPC_REPLAY_WINDOW);
		s->highest = seq;
		s->seen[0] |= 1;
		return 1;
	}
	back = s->highest - seq;
	if (back >= RPC_REPLAY_WINDOW || (s->seen[back / 64] >> (back % 64) & 1))
		return 0;
	s->seen[back / 64] |= 1ull << (back % 64);
	return 1;
}

int rpc_replay_check(struct rpc_replay *r, uint64_t ctx, uint32_t seq, uint32_t time, uint64_t now)
{
	int32_t skew = (int32_t)((uint32_t)now - time);
	struct slot *s;
	int rc = 0;

	pthread_mutex_lock(&r->lock);
	if (skew > (int64_t)r->window_s || -(int64_t)skew > (int64_t)r->window_s) {
		r->st.off_clock++;
		rc = -ETIME;
	} else if (!(s = find(r, ctx, now))) {
		r->st.full++;
		rc = -ENOSPC;
	} else if (!mark(s, seq)) {
		r->st.replays++;
		rc = -EALREADY;
	} else {
		s->last_s = now;
	}
	pthread_mutex_unlock(&r->lock);
	return rc;
}

void rpc_replay_get_stats(struct rpc_replay *r, struct rpc_replay_stats *st)
{
	pthread_mutex_lock(&r->lock);
	*st = r->st;
	pthread_mutex_unlock(&r->lock);
}
