/*
 * rpc_drc.h: the duplicate request cache. A client that lost a reply (the
 * connection broke) sends the same call again with the same xid; running a
 * non-idempotent procedure twice (REMOVE, RENAME, CREATE...) would turn the
 * first run's success into the second run's NOENT or EXIST. The cache keeps
 * the encoded replies of such procedures, keyed by the caller's address (not
 * its port: a reconnect gets a new one), xid, program, version, procedure, the
 * caller's uid and gid, and a checksum of the arguments' length and first
 * bytes, and answers a retransmission with the
 * reply of the first run. A retransmission that arrives while the first run is
 * still going is dropped (the client sends it again later), as knfsd does.
 * Bounded: least recently used completed entries go first; entries older than
 * RPC_DRC_MAX_AGE_S are never replayed. Buckets are chosen with a random seed
 * per cache, so that a client cannot pile its calls into one hash chain.
 */
#ifndef NFSRDMA_RPC_DRC_H
#define NFSRDMA_RPC_DRC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define RPC_DRC_MAX_REPLY 1024 /* longer replies are not kept */
#define RPC_DRC_CSUM_LEN  256  /* argument bytes checksummed (with the length), as knfsd */
#define RPC_DRC_MAX_AGE_S 120

struct rpc_drc;
struct rpc_drc_entry;

struct rpc_drc_key {
	uint32_t xid, prog, vers, proc;
	uint64_t csum;
	uint32_t uid, gid;
	uint8_t addr[16];
	uint8_t family;
};

struct rpc_drc_stats {
	uint64_t hits;	   /* retransmissions answered from the cache */
	uint64_t drops;	   /* retransmissions dropped: the first run was still going */
	uint64_t misses;   /* calls looked up and run */
	uint64_t entries;  /* kept now */
	uint64_t capacity; /* at most */
};

enum rpc_drc_verdict {
	RPC_DRC_RUN,	/* run the call; *e (if not NULL) waits for its reply */
	RPC_DRC_REPLAY, /* the cached reply was copied out */
	RPC_DRC_DROP,	/* the same call is running now: send nothing */
};

/* A cache of at most max_entries replies. */
int rpc_drc_create(unsigned max_entries, struct rpc_drc **out);
void rpc_drc_destroy(struct rpc_drc *d);

/* The key of a call: its peer address (NULL or not IP: not cacheable, returns
 * -1; AF_UNIX counts as one host), xid, program, version, procedure, the
 * caller's ids and the encoded arguments. */
int rpc_drc_key(struct rpc_drc_key *k, const struct sockaddr *peer, uint32_t xid, uint32_t prog,
		uint32_t vers, uint32_t proc, uint32_t uid, uint32_t gid, const uint8_t *args,
		size_t args_len);

/* Look a call up. RPC_DRC_REPLAY copies the reply into reply (at most cap
 * bytes; a longer one is treated as a miss) and sets *len. RPC_DRC_RUN sets *e
 * to the entry to complete with rpc_drc_done (NULL when the cache is full of
 * calls in progress). */
enum rpc_drc_verdict rpc_drc_lookup(struct rpc_drc *d, const struct rpc_drc_key *k, uint8_t *reply,
				    size_t cap, size_t *len, struct rpc_drc_entry **e);
/* The call of e got this reply (len 0 or NULL reply: forget the entry). */
void rpc_drc_done(struct rpc_drc *d, struct rpc_drc_entry *e, const uint8_t *reply, size_t len);
/* Forget e, whose call gave up on an event loop and is looked up again by the
 * worker that runs it: one miss is counted for the call, not two. */
void rpc_drc_retry(struct rpc_drc *d, struct rpc_drc_entry *e);

void rpc_drc_get_stats(struct rpc_drc *d, struct rpc_drc_stats *st);

#endif
