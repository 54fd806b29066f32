/*
 * rpcrdma_config.c: the transport's parameters from nfsrdma.conf, for a
 * server or a client, and the built-in defaults, which are the configuration
 * file's own (config_table.c): the one place where a default is written.
 */
#include "common/base/config.h"
#include "rpcrdma_int.h"

/* A server's registration strategy. */
static enum rr_reg server_reg(enum cfg_server_reg r)
{
	static const enum rr_reg reg[] = {
		[CFG_SREG_DYNAMIC] = RR_REG_DYNAMIC,
		[CFG_SREG_FASTREG] = RR_REG_FASTREG,
		[CFG_SREG_CACHE] = RR_REG_CACHE,
		[CFG_SREG_ALLPHYS] = RR_REG_ALLPHYS,
	};

	return (unsigned)r < sizeof(reg) / sizeof(reg[0]) ? reg[r] : RR_REG_CACHE;
}

/* A client's registration strategy. */
static enum rr_reg client_reg(enum cfg_client_reg r)
{
	static const enum rr_reg reg[] = {
		[CFG_CREG_ZEROCOPY] = RR_REG_ZEROCOPY,
		[CFG_CREG_CACHE] = RR_REG_CACHE,
		[CFG_CREG_FASTREG] = RR_REG_FASTREG,
		[CFG_CREG_ALLPHYS] = RR_REG_ALLPHYS,
	};

	return (unsigned)r < sizeof(reg) / sizeof(reg[0]) ? reg[r] : RR_REG_ZEROCOPY;
}

/* The server section's settings. */
static void from_server(const struct nfsrdma_config *c, struct rr_params *p)
{
	p->arena_size = c->rdma.registered_memory_budget;
	p->modes =
		((c->server.modes & CFG_MODE_BIT(CFG_MODE_READ_WRITE)) ? RR_MODE_READ_WRITE : 0) |
		((c->server.modes & CFG_MODE_BIT(CFG_MODE_READ_READ)) ? RR_MODE_READ_READ : 0);
	p->reg = server_reg(c->server.registration);
	p->cache_budget = c->server.cache.budget;
	p->cache_high = c->server.cache.high_watermark;
	p->cache_low = c->server.cache.low_watermark;
	p->fastreg_pool = c->server.fastreg_pool;
	p->trusted_peers = c->server.trusted_peers;
	p->spin_max_us = c->server.adaptive_poll_us;
	p->done_deadline_ms = c->server.read_read.done_deadline_ms;
	p->op_deadline_ms = c->server.rdma_deadline_ms;
	p->exposed_max = c->server.read_read.exposed_bytes_max;
	p->windows_max = c->server.read_read.windows_max;
	p->max_conns = c->server.rdma_connections_max;
	p->max_conns_per_addr = c->server.rdma_connections_per_client;
	p->idle_ms = c->server.rdma_idle_ms;
}

/* The client section's settings. */
static void from_client(const struct nfsrdma_config *c, struct rr_params *p)
{
	p->modes = c->client.mode == CFG_MODE_READ_READ ? RR_MODE_READ_READ : RR_MODE_READ_WRITE;
	p->reg = client_reg(c->client.registration);
	p->cache_budget = c->client.cache.budget;
	p->cache_high = c->client.cache.high_watermark;
	p->cache_low = c->client.cache.low_watermark;
	p->fastreg_pool = c->client.fastreg_pool;
	p->trusted_peers = c->client.trusted_peers;
	p->caller_polls = c->client.poll_in_caller;
	p->spin_max_us = c->client.adaptive_poll_us;
}

/* See rpcrdma.h. */
void rr_params_from_config(const struct nfsrdma_config *c, enum rr_role role, struct rr_params *p)
{
	p->provider = c->rdma.provider;
	p->credits = c->rdma.credits;
	p->inline_send = (uint32_t)c->rdma.inline_send;
	p->inline_recv = (uint32_t)c->rdma.inline_recv;
	p->max_io = (uint32_t)c->rdma.max_io_size;
	p->rd_depth = (uint8_t)c->rdma.rd_depth;
	p->spin_us = c->rdma.poll_spin_us;
	p->mem_budget = c->rdma.registered_memory_budget;
	if (role == RR_ROLE_SERVER) {
		from_server(c, p);
		p->drain_ms = 10000; /* (not a setting) */
	} else
		from_client(c, p);
}

/* See rpcrdma.h. */
void rr_params_defaults_for(enum rr_role role, struct rr_params *p)
{
	struct nfsrdma_config c;

	*p = (struct rr_params){
		/* not settings of the file: */
		.connect_timeout_ms = 5000,
		.call_timeout_ms = 60000,
	};
	if (config_defaults(&c) != 0)
		return; /* out of memory: zeros, which every user refuses */
	/* a client's fields that no client setting governs keep the server's */
	rr_params_from_config(&c, RR_ROLE_SERVER, p);
	if (role == RR_ROLE_CLIENT) {
		rr_params_from_config(&c, RR_ROLE_CLIENT, p);
		/* not a setting: a mount's arena (fastreg, allphys), registered and
		 * touched whole at start; it holds rsize-sized I/O */
		p->arena_size = 64u << 20;
	}
	/* c's strings go with it: the default provider, as the file's default says */
	p->provider = "auto";
	config_free(&c);
}

/* See rpcrdma.h. */
void rr_params_defaults(struct rr_params *p)
{
	rr_params_defaults_for(RR_ROLE_CLIENT, p);
}
