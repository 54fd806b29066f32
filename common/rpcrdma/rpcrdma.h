/*
 * rpcrdma.h: the RPC-over-RDMA version 1 transport (RFC 8166, RFC 8267's
 * rules through the DDP hook of rpc.h, RFC 8797's connection parameters),
 * server and client, over any provider of verbs.h.
 *
 * Modes. In Read-Write mode the requester offers Write chunks (bulk results),
 * a Reply chunk (long replies) and Read chunks (bulk arguments, long calls); the
 * responder moves all bulk data with RDMA Read and Write and exposes none of its
 * memory. In Read-Read mode the requester offers no Write or Reply chunks; the
 * responder exposes its bulk results and long replies in Read chunks, the
 * requester RDMA-Reads them and answers RDMA_DONE. A server accepts a set of
 * modes; the mode of each reply follows from the chunks its call offered.
 *
 * Registration strategies (rpcrdma_reg.c) decide how buffers become
 * RDMA-addressable: see enum rr_reg and nfsrdma.conf(5).
 */
#ifndef NFSRDMA_RPCRDMA_H
#define NFSRDMA_RPCRDMA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/rpc/rpc.h"

enum rr_mode {
	RR_MODE_READ_WRITE = 1 << 0,
	RR_MODE_READ_READ = 1 << 1,
};

enum rr_reg {
	RR_REG_DYNAMIC,	 /* server: register and deregister every I/O buffer */
	RR_REG_FASTREG,	 /* pre-registered arena, a fresh memory-window key per exposed I/O */
	RR_REG_CACHE,	 /* bounded cache of registered buffers by size class */
	RR_REG_ALLPHYS,	 /* one registration over the arena, one key for everything */
	RR_REG_ZEROCOPY, /* client: register the caller's buffer per I/O */
};

struct rr_params {
	const char *provider; /* "auto", "soft" or a device name */
	unsigned credits;     /* most calls outstanding per connection */
	uint32_t inline_send; /* our Send size (RFC 8797) */
	uint32_t inline_recv; /* our Receive size */
	uint32_t max_io;      /* largest bulk item (READ/WRITE data) */
	uint8_t rd_depth;     /* IRD/ORD */
	unsigned modes;	      /* server: accepted set; client: the one it uses */
	enum rr_reg reg;
	size_t cache_budget;		/* cache: bytes of cached registrations */
	unsigned cache_high, cache_low; /* cache: watermarks, percent of the budget */
	unsigned fastreg_pool;		/* fastreg: memory windows */
	size_t arena_size;		/* fastreg/allphys: the pre-registered arena */
	int trusted_peers;		/* allphys is refused unless set */
	int no_reg_overlap;		/* dynamic: register before filling, not alongside
					   (only to measure what the overlap gains) */
	uint32_t done_deadline_ms;	/* Read-Read: exposed buffers live at most this long */
	uint32_t op_deadline_ms;	/* server: a pull's Reads or a reply's Send, at most */
	uint32_t drain_ms;		/* server: stopping waits this long for the calls in
					   flight before it disconnects (then for the
					   ones still running, since they hold it) */
	size_t exposed_max;		/* Read-Read: exposed bytes per connection */
	unsigned windows_max;		/* Read-Read, fastreg: windows per connection
					   (0: a quarter of fastreg_pool) */
	size_t mem_budget;		/* registered memory: all of a server's connections,
					   a client's arena and region */
	unsigned max_conns;		/* server: connections at once; 0: no limit */
	unsigned max_conns_per_addr;	/* server: from one address; 0: no limit */
	uint32_t idle_ms;		/* server: close a connection idle this long; 0: never */
	int connect_timeout_ms;		/* client */
	int call_timeout_ms;		/* client */
	int caller_polls;		/* client: a waiting caller polls the CQ when nobody does */
	unsigned spin_us;		/* server: its loop, client: a polling caller, spins this
					   long before sleeping for completions */
	unsigned spin_max_us;		/* else they adapt their spin up to this */
	int (*spin_spare)(void);	/* client: whether a processor is spare for the
					   adapted spin now (NULL: clock_spin_spare) */
	/* client, fastreg/allphys: memory of the caller's that outlives the
	 * transport (a mount's write records), registered as the arena is when
	 * the two fit in mem_budget; data in it is exposed where it is, not
	 * copied */
	void *region;
	size_t region_len;
};

/* The transport's parameters from a configuration (rpcrdma_config.c): its
 * rdma section and the role's own (server.* or client.*). p->provider points
 * into c. Fields no setting governs are left as they are. */
struct nfsrdma_config;
enum rr_role { RR_ROLE_SERVER, RR_ROLE_CLIENT };
void rr_params_from_config(const struct nfsrdma_config *c, enum rr_role role, struct rr_params *p);
/* Fill p with the configuration file's defaults for role, nfsrdma.conf(5)'s;
 * rr_params_defaults is the client's (what library users and tests start from). */
void rr_params_defaults_for(enum rr_role role, struct rr_params *p);
void rr_params_defaults(struct rr_params *p);

/* Counters, per connection and summed for an endpoint. */
struct rr_stats {
	uint64_t calls;		  /* calls received (server) or sent (client) */
	uint64_t calls_inline;	  /* server: of which run on the event loop */
	uint64_t inline_declined; /* server: tried there, handed to a worker */
	uint64_t replies;
	uint64_t bytes_inline_in, bytes_inline_out;
	uint64_t bytes_rdma_read;  /* bytes this side pulled with RDMA Read */
	uint64_t bytes_rdma_write; /* bytes this side pushed with RDMA Write */
	uint64_t bytes_exposed;	   /* bytes the peer pulled from us (Read-Read / read chunks) */
	uint64_t bytes_in_place;   /* client: Read chunks exposed, and results the peer
				      placed, where the caller keeps the data
				      (rr_params.region), not copied */
	uint64_t regs, deregs;	   /* registrations made and undone */
	uint64_t reg_ns, dereg_ns; /* time spent in them */
	uint64_t binds;		   /* memory-window bindings */
	uint64_t remote_invs;	   /* server: replies sent with Invalidate (RFC 8797);
				      client: its keys that such replies invalidated */
	uint64_t cache_hits, cache_misses;
	uint64_t credits_granted; /* last grant (connection) or sum (endpoint) */
	uint64_t exposed_now;	  /* bytes exposed to peers right now */
	uint64_t exposed_expired; /* exposures ended by the deadline */
	uint64_t done_unknown;	  /* RDMA_DONE for no exposed reply (unknown, twice) */
	uint64_t err_vers_sent, err_chunk_sent;
	uint64_t credit_overruns;
	uint64_t post_failures;	  /* work request chains the provider refused */
	uint64_t posts;		  /* calls of the provider's post_send (chains held
				     while completions are taken share one) */
	uint64_t op_timeouts;	  /* connections dropped: an RDMA operation past its deadline */
	uint64_t remote_regs_now; /* registrations a peer can reach right now */
	uint64_t registered_now;  /* bytes registered right now */
	uint64_t cached_now;	  /* of which idle in the registration cache */
	uint64_t conns;
	uint64_t conns_refused;	  /* new connections rejected at a limit */
	uint64_t conns_shed;	  /* idle connections closed to make room */
	uint64_t idle_closed;	  /* closed after idle_ms without a call */
	uint64_t pulls_refused;	  /* calls whose chunks were not pulled: refused from the header */
	uint64_t nomsg_waits;	  /* RDMA_NOMSG calls that waited for another's pull */
	uint64_t window_waits;	  /* server: Read-Read replies that waited for a memory
				     window (fastreg_pool), which all connections share */
	uint64_t exposure_waits;  /* server: Read-Read replies that waited parked on their
				     connection (for room in its bounds, or windows) */
	uint64_t caller_polls;	  /* client: waits in which the caller polled the CQ itself */
	uint64_t caller_spun;	  /* client: looks for completions of a polling caller that its
				     spin ended, without a sleep (rr_conn_poll) */
	uint64_t inline_send_now; /* client: the longest message its connection may Send
				     (RFC 8797: the peer's receive size, at most ours) */
};

struct rr_server;

/* A server endpoint on one device, serving rpc's programs. */
int rr_server_create(struct rpc_server *rpc, const struct rr_params *p, struct rr_server **out);
int rr_server_listen(struct rr_server *s, const char *host, const char *port);
void rr_server_get_stats(struct rr_server *s, struct rr_stats *out);
/* Global and per-connection counters, one "name value" per line. */
void rr_server_print_stats(struct rr_server *s, FILE *f);
/* fn(arg, peer, len) for each connection now, under the endpoint's lock (fn
 * must not block); len 0 when the peer's address is unknown. */
void rr_server_each_peer(struct rr_server *s,
			 void (*fn)(void *arg, const struct sockaddr *peer, socklen_t len),
			 void *arg);
/* Register [addr, addr + len) for every client to read with RDMA Reads for
 * the server's life (Optimistic RDMA's block cache); its key in *rkey. The
 * memory must outlive the server. Once per server: 0, -EBUSY, or -errno. */
int rr_server_expose(struct rr_server *s, void *addr, size_t len, uint32_t *rkey);
/* Stop listening, wait up to drain_ms for the calls in flight, disconnect
 * every connection, wait for the calls still running however long they take
 * (they hold the server), free. */
void rr_server_destroy(struct rr_server *s);

/* A client connected to host:port; an rpc_clnt. */
int rr_clnt_create(const struct rr_params *p, const char *host, const char *port,
		   struct rpc_clnt **out);
void rr_clnt_get_stats(struct rpc_clnt *c, struct rr_stats *out);
/* Sum the counters of b into a. */
void rr_stats_add(struct rr_stats *a, const struct rr_stats *b);

const char *rr_reg_name(enum rr_reg r);

#endif
