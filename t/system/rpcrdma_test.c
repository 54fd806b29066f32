/*
 * rpcrdma_test: the RPC/RDMA transport over the soft provider with the bulk
 * test program: every mode x server strategy x client strategy x integrity,
 * content checked; counters back to baseline afterwards.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>

#include "bulkprog.h"
#include "common/base/net.h"
#include "common/rpc/integrity.h"
#include "common/base/log.h"
#include "common/rpcrdma/rpcrdma.h"
#include "rpcrdma_test_util.h"

/* One configured pair: a server and a client. */
struct pairing {
	unsigned mode;
	enum rr_reg sreg, creg;
	int integrity;
};

/* Wait up to 5 s for the server's counters to settle to baseline. */
static void expect_baseline(struct rrt_server *t, uint64_t registered0)
{
	struct rr_stats st;

	for (int i = 0; i < 500; i++) {
		rr_server_get_stats(t->rr, &st);
		if (st.conns == 0 && st.exposed_now == 0)
			break;
		usleep(10000);
	}
	assert_int_equal(st.conns, 0);
	assert_int_equal(st.exposed_now, 0);
	/* what the cache keeps idle is the cache's; everything else is back */
	assert_int_equal(st.registered_now - st.cached_now, registered0);
}

static const size_t sizes[] = {0, 1, 3, 1023, 1024, 4096, 65537, 131072, 1 << 20};

/* Everything the program does, through one pairing. */
static void run_pairing(const struct pairing *pr, int all_sizes)
{
	struct rrt_server t;
	struct rpc_clnt *c;
	struct rr_stats st0, st;

	assert_int_equal(rrt_server_start(&t, RR_MODE_READ_WRITE | RR_MODE_READ_READ, pr->sreg,
					  pr->integrity),
			 0);
	rr_server_get_stats(t.rr, &st0);
	assert_int_equal(rrt_client(&t, pr->mode, pr->creg, pr->integrity, &c), 0);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		if (!all_sizes && sizes[i] != 4096 && sizes[i] != 131072 && sizes[i] != (1 << 20))
			continue;
		assert_int_equal(rrt_put(c, (uint32_t)i + 1, sizes[i]), 0);
		assert_int_equal(rrt_get(c, (uint32_t)i + 2, sizes[i]), 0);
	}
	assert_int_equal(rrt_big(c, 200000), 0); /* long reply */
	assert_int_equal(rrt_sum(c, 300000), 0); /* long call */
	rr_server_get_stats(t.rr, &st);
	if (pr->mode == RR_MODE_READ_WRITE) {
		assert_int_equal(st.bytes_exposed, 0);
		assert_true(st.bytes_rdma_write > 0);
	} else {
		assert_true(st.bytes_exposed > 0);
	}
	rpc_clnt_destroy(c);
	expect_baseline(&t, st0.registered_now);
	rrt_server_stop(&t);
}

static void basic_read_write(void **state)
{
	struct pairing pr = {RR_MODE_READ_WRITE, RR_REG_DYNAMIC, RR_REG_ZEROCOPY, 0};

	run_pairing(&pr, 1);
}

static void basic_read_read(void **state)
{
	struct pairing pr = {RR_MODE_READ_READ, RR_REG_DYNAMIC, RR_REG_ZEROCOPY, 0};

	run_pairing(&pr, 1);
}

static void basic_integrity(void **state)
{
	struct pairing pr = {RR_MODE_READ_WRITE, RR_REG_CACHE, RR_REG_CACHE, 1};

	run_pairing(&pr, 1);
}

/* mode x server strategy x client strategy x integrity */
static void matrix(void **state)
{
	static const enum rr_reg sregs[] = {RR_REG_DYNAMIC, RR_REG_FASTREG, RR_REG_CACHE,
					    RR_REG_ALLPHYS};
	static const enum rr_reg cregs[] = {RR_REG_ZEROCOPY, RR_REG_CACHE, RR_REG_FASTREG,
					    RR_REG_ALLPHYS};
	unsigned n = 0;

	for (unsigned m = 0; m < 2; m++)
		for (unsigned s = 0; s < 4; s++)
			for (unsigned c = 0; c < 4; c++)
				for (int integ = 0; integ < 2; integ++) {
					struct pairing pr = {m ? RR_MODE_READ_READ
							       : RR_MODE_READ_WRITE,
							     sregs[s], cregs[c], integ};

					print_message("# %s server=%s client=%s integrity=%d\n",
						      m ? "read-read" : "read-write",
						      rr_reg_name(sregs[s]), rr_reg_name(cregs[c]),
						      integ);
					run_pairing(&pr, 0);
					n++;
				}
	assert_int_equal(n, 64);
}

/* In Read-Write mode the server holds no registration a peer can reach. */
static void nothing_exposed_read_write(void **state)
{
	static const enum rr_reg sregs[] = {RR_REG_DYNAMIC, RR_REG_FASTREG, RR_REG_CACHE,
					    RR_REG_ALLPHYS};

	for (unsigned s = 0; s < 4; s++) {
		struct rrt_server t;
		struct rpc_clnt *c;
		struct rr_stats st;

		assert_int_equal(rrt_server_start(&t, RR_MODE_READ_WRITE, sregs[s], 0), 0);
		assert_int_equal(rrt_client(&t, RR_MODE_READ_WRITE, RR_REG_ZEROCOPY, 0, &c), 0);
		for (int i = 0; i < 4; i++) {
			assert_int_equal(rrt_get(c, 5, 1 << 20), 0);
			assert_int_equal(rrt_put(c, 5, 1 << 20), 0);
			assert_int_equal(rrt_big(c, 100000), 0);
			rr_server_get_stats(t.rr, &st);
			assert_int_equal(st.remote_regs_now, 0);
			assert_int_equal(st.exposed_now, 0);
		}
		rpc_clnt_destroy(c);
		rrt_server_stop(&t);
	}
}

/* Read-Read needs the server to accept it: otherwise big results fail cleanly. */
static void read_read_refused(void **state)
{
	struct rrt_server t;
	struct rpc_clnt *c;
	struct rr_stats st;

	assert_int_equal(rrt_server_start(&t, RR_MODE_READ_WRITE, RR_REG_DYNAMIC, 0), 0);
	assert_int_equal(rrt_client(&t, RR_MODE_READ_READ, RR_REG_ZEROCOPY, 0, &c), 0);
	assert_int_equal(rrt_get(c, 1, 1000), 0);	/* fits inline */
	assert_int_equal(rrt_get(c, 1, 1 << 20), -EIO); /* RDMA_ERROR ERR_CHUNK */
	assert_int_equal(rrt_get(c, 1, 200000), -EIO);
	assert_int_equal(rrt_get(c, 1, 1000), 0); /* and the connection goes on */
	rr_server_get_stats(t.rr, &st);
	assert_int_equal(st.err_chunk_sent, 2);
	assert_int_equal(rrt_put(c, 1, 1 << 20), 0); /* Read chunks work in any mode */
	rpc_clnt_destroy(c);
	rrt_server_stop(&t);
}

/* Data that lies in the client's region (rr_params.region: a mount's write
 * records) is sent from where it is with fastreg and allphys, and arrives
 * right; data elsewhere, every strategy without an arena, and a region past
 * the registered memory budget copy. */
static void region_sent_in_place(void **state)
{
	const enum rr_reg regs[] = {RR_REG_FASTREG, RR_REG_ALLPHYS, RR_REG_CACHE, RR_REG_ZEROCOPY};
	const size_t len = 1 << 20, rlen = 4 << 20;
	char *region = malloc(rlen), *outside = malloc(len);
	struct rrt_server t;

	assert_non_null(region);
	assert_non_null(outside);
	assert_int_equal(rrt_server_start(&t, RR_MODE_READ_WRITE, RR_REG_CACHE, 0), 0);
	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++) {
		int arena = regs[i] == RR_REG_FASTREG || regs[i] == RR_REG_ALLPHYS;
		struct rpc_clnt *c;
		struct rr_params p;
		struct rr_stats st;

		rrt_params(&p, RR_MODE_READ_WRITE, regs[i]);
		p.trusted_peers = regs[i] == RR_REG_ALLPHYS;
		p.region = region;
		p.region_len = rlen;
		assert_int_equal(rrt_client_p(&t, &p, 0, &c), 0);
		/* a Read chunk from inside the region, one ending at its end, one outside */
		assert_int_equal(rrt_put_from(c, 7, len, region + 4096), 0);
		assert_int_equal(rrt_put_from(c, 8, len, region + rlen - len), 0);
		assert_int_equal(rrt_put_from(c, 9, len, outside), 0);
		rr_clnt_get_stats(c, &st);
		print_message("# %s: %llu bytes sent in place, %llu exposed\n",
			      rr_reg_name(regs[i]), (unsigned long long)st.bytes_in_place,
			      (unsigned long long)st.bytes_exposed);
		assert_int_equal(st.bytes_exposed, 3 * len);
		assert_int_equal(st.bytes_in_place, arena ? 2 * len : 0);
		/* what was exposed in place is no longer reachable after the call */
		if (regs[i] == RR_REG_FASTREG)
			assert_int_equal(st.remote_regs_now, 0);
		rpc_clnt_destroy(c);
	}
	/* a region that does not fit in the budget with the arena is copied */
	{
		struct rpc_clnt *c;
		struct rr_params p;
		struct rr_stats st;

		rrt_params(&p, RR_MODE_READ_WRITE, RR_REG_FASTREG);
		p.region = region;
		p.region_len = rlen;
		p.mem_budget = p.arena_size + rlen - 1;
		assert_int_equal(rrt_client_p(&t, &p, 0, &c), 0);
		assert_int_equal(rrt_put_from(c, 10, len, region), 0);
		rr_clnt_get_stats(c, &st);
		assert_int_equal(st.bytes_in_place, 0);
		rpc_clnt_destroy(c);
	}
	rrt_server_stop(&t);
	free(region);
	free(outside);
}

/* On a device without memory windows, fastreg registers per I/O instead
 * (dynamic on the server, zerocopy on the client), with the same results. */
static void fastreg_without_windows(void **state)
{
	struct pairing pr[] = {{RR_MODE_READ_WRITE, RR_REG_FASTREG, RR_REG_FASTREG, 0},
			       {RR_MODE_READ_READ, RR_REG_FASTREG, RR_REG_FASTREG, 1}};
	struct rrt_server t;
	struct rpc_clnt *c;
	struct rr_stats st;

	setenv("VB_SOFT_NO_MW", "1", 1);
	for (size_t i = 0; i < sizeof(pr) / sizeof(pr[0]); i++)
		run_pairing(&pr[i], 0);
	assert_int_equal(rrt_server_start(&t, RR_MODE_READ_READ, RR_REG_FASTREG, 0), 0);
	assert_int_equal(rrt_client(&t, RR_MODE_READ_READ, RR_REG_FASTREG, 0, &c), 0);
	assert_int_equal(rrt_get(c, 3, 100000), 0);
	rr_server_get_stats(t.rr, &st);
	assert_int_equal(st.binds, 0);	     /* no window was bound */
	assert_true(st.regs > 0);	     /* registered per I/O instead */
	assert_int_equal(st.remote_invs, 0); /* keys a Send could not end: not offered */
	rpc_clnt_destroy(c);
	rrt_server_stop(&t);
	unsetenv("VB_SOFT_NO_MW");
}

/* A server listening on two addresses takes calls on both (each listener has
 * its own place on the loop; a second once replaced the first). */
static void listens_on_every_address(void **state)
{
	const char *hosts[] = {"127.0.0.1", "127.0.0.2"};
	struct rrt_server t;
	struct rr_params p;

	assert_int_equal(rrt_server_start(&t, RR_MODE_READ_WRITE, RR_REG_DYNAMIC, 0), 0);
	assert_int_equal(rr_server_listen(t.rr, "127.0.0.2", t.port), 0);
	rrt_params(&p, RR_MODE_READ_WRITE, RR_REG_DYNAMIC);
	for (size_t i = 0; i < 2; i++) {
		struct rpc_clnt *c;

		assert_int_equal(rr_clnt_create(&p, hosts[i], t.port, &c), 0);
		assert_int_equal(rrt_put(c, (uint32_t)i, 8192), 0);
		rpc_clnt_destroy(c);
	}
	rrt_server_stop(&t);
}

struct loader {
	struct rpc_clnt *c;
	volatile int stop;
	int errors;
};

static void *load_main(void *arg)
{
	struct loader *l = arg;

	while (!l->stop)
		l->errors += rrt_get(l->c, 4, 1 << 20) != 0;
	return NULL;
}

/* Over the registered-memory budget, grants shrink; they grow back after. */
static void budget_shrinks_grants(void **state)
{
	struct rrt_server t;
	struct rr_params p;
	struct loader l = {0};
	struct rr_stats st;
	pthread_t th[8];
	uint64_t lowest = UINT64_MAX;

	rrt_params(&p, RR_MODE_READ_WRITE, RR_REG_DYNAMIC);
	p.mem_budget = 2u << 20; /* two 1 MiB replies' worth */
	assert_int_equal(rrt_server_start_p(&t, &p, 0), 0);
	assert_int_equal(rrt_client(&t, RR_MODE_READ_WRITE, RR_REG_ZEROCOPY, 0, &l.c), 0);
	for (int i = 0; i < 8; i++)
		pthread_create(&th[i], NULL, load_main, &l);
	for (int i = 0; i < 150 && lowest >= 16; i++) {
		usleep(10000);
		rr_clnt_get_stats(l.c, &st);
		if (st.credits_granted && st.credits_granted < lowest)
			lowest = st.credits_granted;
	}
	l.stop = 1;
	for (int i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(l.errors, 0);
	print_message("# lowest grant under load: %llu of 16\n", (unsigned long long)lowest);
	assert_true(lowest < 16);
	usleep(1500 * 1000); /* idle: the budget is free again */
	for (int i = 0; i < 20; i++)
		assert_int_equal(rrt_get(l.c, 5, 4096), 0);
	rr_clnt_get_stats(l.c, &st);
	assert_int_equal(st.credits_granted, 16);
	rpc_clnt_destroy(l.c);
	rrt_server_stop(&t);
}

/* Wait (at most 5 s) until the server holds n connections. */
static void wait_server_conns(struct rrt_server *t, uint64_t n)
{
	struct rr_stats st;

	for (int i = 0; i < 500; i++) {
		rr_server_get_stats(t->rr, &st);
		if (st.conns == n)
			return;
		usleep(10000);
	}
	fail_msg("the server holds %llu connections, not %llu", (unsigned long long)st.conns,
		 (unsigned long long)n);
}

/* Connection limits: per address (the third is rejected), in all (the one
 * idle the longest is closed to make room), and the idle timeout. */
static void connection_limits(void **state)
{
	struct rpc_clnt *c[4] = {0};
	struct rrt_server t;
	struct rr_params p;
	struct rr_stats st;

	rrt_params(&p, RR_MODE_READ_WRITE, RR_REG_DYNAMIC);
	p.max_conns_per_addr = 2;
	assert_int_equal(rrt_server_start_p(&t, &p, 0), 0);
	assert_int_equal(rrt_client(&t, RR_MODE_READ_WRITE, RR_REG_ZEROCOPY, 0, &c[0]), 0);
	assert_int_equal(rrt_client(&t, RR_MODE_READ_WRITE, RR_REG_ZEROCOPY, 0, &c[1]), 0);
	assert_int_not_equal(rrt_client(&t, RR_MODE_READ_WRITE, RR_REG_ZEROCOPY, 0, &c[2]), 0);
	assert_int_equal(rrt_get(c[0], 1, 4096), 0);
	assert_int_equal(rrt_get(c[1], 2, 4096), 0);
	rr_server_get_stats(t.rr, &st);
	assert_int_equal(st.conns_refused, 1);
	rpc_clnt_destroy(c[0]);
	rpc_clnt_destroy(c[1]);
	rrt_server_stop(&t);

	p.max_conns_per_addr = 0;
	p.max_conns = 2;
	assert_int_equal(rrt_server_start_p(&t, &p, 0), 0);
	assert_int_equal(rrt_client(&t, RR_MODE_READ_WRITE, RR_REG_ZEROCOPY, 0, &c[0]), 0);
	usleep(1200 * 1000); /* c[0]: idle long enough to be shed */
	assert_int_equal(rrt_client(&t, RR_MODE_READ_WRITE, RR_REG_ZEROCOPY, 0, &c[1]), 0);
	assert_int_equal(rrt_client(&t, RR_MODE_READ_WRITE, RR_REG_ZEROCOPY, 0, &c[2]), 0);
	assert_int_not_equal(rrt_client(&t, RR_MODE_READ_WRITE, RR_REG_ZEROCOPY, 0, &c[3]), 0);
	assert_int_equal(rrt_get(c[1], 3, 4096), 0);
	assert_int_equal(rrt_get(c[2], 4, 4096), 0);
	rr_server_get_stats(t.rr, &st);
	assert_int_equal(st.conns_shed, 1);
	assert_int_equal(st.conns_refused, 1);
	for (int i = 0; i < 3; i++)
		rpc_clnt_destroy(c[i]);
	rrt_server_stop(&t);

	p.max_conns = 0;
	p.idle_ms = 300;
	assert_int_equal(rrt_server_start_p(&t, &p, 0), 0);
	assert_int_equal(rrt_client(&t, RR_MODE_READ_WRITE, RR_REG_ZEROCOPY, 0, &c[0]), 0);
	assert_int_equal(rrt_get(c[0], 5, 4096), 0);
	wait_server_conns(&t, 0);
	rr_server_get_stats(t.rr, &st);
	assert_int_equal(st.idle_closed, 1);
	rpc_clnt_destroy(c[0]);
	rrt_server_stop(&t);
}

static int refuse_all(void *ctx, const struct sockaddr *peer)
{
	return 0;
}

/* A call whose header says it will not run has its chunks left unpulled: a
 * peer the program refuses (AUTH_TOOWEAK) and an unknown version are
 * answered from the header, with no RDMA Read; calls without chunks run. */
static void refused_before_pulling(void **state)
{
	struct rpc_server_params sp = {.threads = 2};
	struct rpc_program prog = bulk_program;
	struct rpc_server *rpc;
	struct rr_server *rr;
	struct rpc_clnt *c;
	struct rr_params p;
	struct rr_stats st;
	char port[16];
	struct bulk_put_args a = {.seed = 3, .data.len = 65536};
	struct bulk_sum sum;
	struct rpc_call call = {.prog = BULKPROG,
				.vers = 99,
				.proc = BULK_PUT,
				.xdr_args = (xdrproc_t)xdr_bulk_put_args,
				.args = &a,
				.xdr_res = (xdrproc_t)xdr_bulk_sum,
				.res = &sum};

	prog.peer_ok = refuse_all;
	rrt_params(&p, RR_MODE_READ_WRITE, RR_REG_DYNAMIC);
	assert_int_equal(rpc_server_create(&sp, &rpc), 0);
	assert_int_equal(rpc_server_add_program(rpc, &prog), 0);
	assert_int_equal(rr_server_create(rpc, &p, &rr), 0);
	snprintf(port, sizeof(port), "%d", net_free_port());
	assert_int_equal(rr_server_listen(rr, "127.0.0.1", port), 0);
	assert_int_equal(rr_clnt_create(&p, "127.0.0.1", port, &c), 0);
	assert_int_equal(rrt_put(c, 1, 65536), -EACCES);
	assert_int_equal(rrt_get(c, 2, 4096), 0);
	a.data.data = calloc(1, 65536);
	assert_int_not_equal(rpc_clnt_call(c, &call), 0);
	free(a.data.data);
	rr_server_get_stats(rr, &st);
	assert_int_equal(st.pulls_refused, 2);
	assert_int_equal(st.bytes_rdma_read, 0);
	rpc_clnt_destroy(c);
	rr_server_destroy(rr);
	rpc_server_destroy(rpc);
}

struct sum_loader {
	struct rpc_clnt *c;
	int errors;
};

/* fn(l) on 8 threads at once; returns when all are done. */
static void on_8_threads(void *(*fn)(void *), struct sum_loader *l)
{
	pthread_t th[8];

	for (int i = 0; i < 8; i++)
		pthread_create(&th[i], NULL, fn, l);
	for (int i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
}

static void *sum_main(void *arg)
{
	struct sum_loader *l = arg;

	for (int i = 0; i < 20; i++)
		if (rrt_sum(l->c, 64 << 10) != 0)
			__atomic_add_fetch(&l->errors, 1, __ATOMIC_RELAXED);
	return NULL;
}

/* Long calls (RDMA_NOMSG: no inline header to check before pulling) are
 * pulled one at a time per connection; the others wait, and all run. */
static void nomsg_pulls_one_at_a_time(void **state)
{
	struct sum_loader l = {0};
	struct rrt_server t;
	struct rr_stats st;

	assert_int_equal(rrt_server_start(&t, RR_MODE_READ_WRITE, RR_REG_DYNAMIC, 0), 0);
	assert_int_equal(rrt_client(&t, RR_MODE_READ_WRITE, RR_REG_ZEROCOPY, 0, &l.c), 0);
	on_8_threads(sum_main, &l);
	assert_int_equal(l.errors, 0);
	rr_server_get_stats(t.rr, &st);
	print_message("# RDMA_NOMSG calls that waited their turn: %llu of 160\n",
		      (unsigned long long)st.nomsg_waits);
	assert_true(st.nomsg_waits > 0);
	rpc_clnt_destroy(l.c);
	rrt_server_stop(&t);
}

static void *get_main(void *arg)
{
	struct sum_loader *l = arg;

	for (int i = 0; i < 40; i++)
		if (rrt_get(l->c, (uint32_t)i, i % 4 ? 4096 : 131072) != 0)
			__atomic_add_fetch(&l->errors, 1, __ATOMIC_RELAXED);
	return NULL;
}

/* Calls from 1 and from 8 threads in each mode, with client.poll_in_caller
 * off, and on with no spin, with rdma.poll_spin_us (a polling caller spins a
 * fixed time before it sleeps) and with client.adaptive_poll_us (it adapts its
 * spin, where a processor is spare, where none is, and where the machine's
 * count says): every reply right;
 * with it on, every lone call took the CQ before its Send and its completions
 * itself (caller_polls: at least the 40 calls of one thread), with it off
 * never; a caller that spins found completions while spinning (caller_spun,
 * at least once, in up to 40 more passes of one thread on a busy machine;
 * the server's loop spins, so its replies come within the ceiling, and the
 * adapted window grows at the first), one that does not, or has no spare
 * processor for its adapted spin, never. */
static int spare_always(void)
{
	return 1;
}

static int spare_never(void)
{
	return 0;
}

static void caller_polls(void **state)
{
	struct rrt_server t;
	struct rr_params sp;

	/* the server's loop spins (rdma.poll_spin_us) throughout */
	rrt_params(&sp, RR_MODE_READ_WRITE | RR_MODE_READ_READ, RR_REG_DYNAMIC);
	sp.spin_us = 200;
	assert_int_equal(rrt_server_start_p(&t, &sp, 0), 0);
	for (int mode = 0; mode < 2; mode++) {
		/* off, on, on with a fixed spin, on with an adaptive one, the
		 * same on a machine with no processor to spare, and as the
		 * machine's count of runnable threads says (clock_spin_spare) */
		for (int v = 0; v < 6; v++) {
			int on = v > 0;
			struct sum_loader l = {0};
			struct rr_params p;
			struct rr_stats st;

			rrt_params(&p, mode ? RR_MODE_READ_READ : RR_MODE_READ_WRITE,
				   RR_REG_FASTREG);
			p.caller_polls = on;
			p.spin_us = v == 2 ? 200 : 0;
			p.spin_max_us = v >= 3 ? 10000 : 0;
			p.spin_spare = v == 3 ? spare_always : v == 4 ? spare_never : NULL;
			assert_int_equal(rrt_client_p(&t, &p, 0, &l.c), 0);
			get_main(&l);
			on_8_threads(get_main, &l);
			rr_clnt_get_stats(l.c, &st);
			/* a spin ends with the reply only if the server ran
			 * meanwhile: on a busy machine, give it more tries */
			for (int more = 0; (v == 2 || v == 3) && st.caller_spun == 0 && more < 40;
			     more++) {
				get_main(&l);
				rr_clnt_get_stats(l.c, &st);
			}
			assert_int_equal(l.errors, 0);
			print_message("# %s, poll_in_caller %d, spin %u us, adaptive up to %u us: "
				      "%llu of the waits polled by the caller, %llu looks ended "
				      "by its spin%s\n",
				      mode ? "read-read" : "read-write", on, p.spin_us,
				      p.spin_max_us, (unsigned long long)st.caller_polls,
				      (unsigned long long)st.caller_spun,
				      v == 4   ? " (no spare processor)"
				      : v == 5 ? " (as the machine's count says)"
					       : "");
			if (on)
				assert_true(st.caller_polls >= 40);
			else
				assert_int_equal(st.caller_polls, 0);
			if (v == 2 || v == 3) /* how many: the machine's load says */
				assert_true(st.caller_spun >= 1);
			else if (v != 5) /* it depends on the machine's load */
				assert_int_equal(st.caller_spun, 0);
			rpc_clnt_destroy(l.c);
		}
	}
	rrt_server_stop(&t);
}

/* With inline calls, a Read-Read reply is exposed and sent from the loop
 * while the connection's exposure bound has room: one caller's GETs never go
 * to a worker. Eight callers' exposures do not all fit: a call that finds no
 * room goes to a worker, which waits for it; every reply is right. With each
 * server strategy that can expose. */
static void read_read_inline_with(enum rr_reg reg)
{
	struct sum_loader l = {0};
	struct rrt_server t;
	struct rr_params p;
	struct rr_stats st0, st;

	rrt_params(&p, RR_MODE_READ_READ, reg);
	p.exposed_max = 131072; /* one 128 KiB reply at a time */
	assert_int_equal(rrt_server_start_inline(&t, &p), 0);
	assert_int_equal(rrt_client(&t, RR_MODE_READ_READ, RR_REG_FASTREG, 0, &l.c), 0);
	rr_server_get_stats(t.rr, &st0);
	for (uint32_t i = 0; i < 20; i++)
		assert_int_equal(rrt_get(l.c, i, i % 2 ? 4096 : 131072), 0);
	rr_server_get_stats(t.rr, &st);
	assert_int_equal(st.calls_inline - st0.calls_inline, 20);
	assert_int_equal(st.inline_declined - st0.inline_declined, 0);
	assert_int_equal(st.bytes_exposed - st0.bytes_exposed, 10 * (4096 + 131072));
	on_8_threads(get_main, &l);
	assert_int_equal(l.errors, 0);
	rr_server_get_stats(t.rr, &st0);
	print_message("# %s, 8 callers: %llu calls on the loop, %llu handed to a worker\n",
		      rr_reg_name(reg), (unsigned long long)(st0.calls_inline - st.calls_inline),
		      (unsigned long long)(st0.inline_declined - st.inline_declined));
	assert_true(st0.inline_declined > st.inline_declined);
	assert_true(st0.calls_inline > st.calls_inline);
	rpc_clnt_destroy(l.c);
	rrt_server_stop(&t);
}

static void read_read_inline(void **state)
{
	const enum rr_reg regs[] = {RR_REG_CACHE, RR_REG_DYNAMIC, RR_REG_FASTREG};

	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		read_read_inline_with(regs[i]);
}

static void *sleep_main(void *arg)
{
	struct sum_loader *l = arg;
	u_int ms = 500;
	struct rpc_call call = rrt_sleep_call(&ms);

	if (rpc_clnt_call(l->c, &call) != 0)
		__atomic_add_fetch(&l->errors, 1, __ATOMIC_RELAXED);
	return NULL;
}

static void *one_get_main(void *arg)
{
	struct sum_loader *l = arg;

	if (rrt_get(l->c, 7, 4096) != 0)
		__atomic_add_fetch(&l->errors, 1, __ATOMIC_RELAXED);
	return NULL;
}

/* The replies to calls the loop takes from one batch of completions go to the
 * device in one post: 8 GETs that arrive while a SLEEP holds the loop up are
 * answered with fewer posts than replies (one each before). */
static void replies_posted_together(void **state)
{
	struct sum_loader l = {0};
	struct rrt_server t;
	struct rr_params p;
	struct rr_stats st0, st;
	pthread_t sleeper;

	rrt_params(&p, RR_MODE_READ_WRITE, RR_REG_DYNAMIC);
	assert_int_equal(rrt_server_start_inline(&t, &p), 0);
	assert_int_equal(rrt_client(&t, RR_MODE_READ_WRITE, RR_REG_FASTREG, 0, &l.c), 0);
	assert_int_equal(rrt_get(l.c, 1, 4096), 0); /* connected */
	rr_server_get_stats(t.rr, &st0);
	pthread_create(&sleeper, NULL, sleep_main, &l);
	for (int ms = 0; ms < 5000; ms++) { /* until the loop has taken the SLEEP */
		rr_server_get_stats(t.rr, &st);
		if (st.bytes_inline_in > st0.bytes_inline_in)
			break;
		usleep(1000);
	}
	on_8_threads(one_get_main, &l);
	pthread_join(sleeper, NULL);
	assert_int_equal(l.errors, 0);
	rr_server_get_stats(t.rr, &st);
	print_message("# %llu replies, %llu posts\n",
		      (unsigned long long)(st.replies - st0.replies),
		      (unsigned long long)(st.posts - st0.posts));
	assert_int_equal(st.replies - st0.replies, 9);
	assert_int_equal(st.calls_inline - st0.calls_inline, 9);
	assert_true(st.posts - st0.posts < st.replies - st0.replies);
	rpc_clnt_destroy(l.c);
	rrt_server_stop(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(basic_read_write),
		cmocka_unit_test(basic_read_read),
		cmocka_unit_test(basic_integrity),
		cmocka_unit_test(nothing_exposed_read_write),
		cmocka_unit_test(read_read_refused),
		cmocka_unit_test(allphys_needs_trust),
		cmocka_unit_test(cache_watermarks),
		cmocka_unit_test(cache_chunks),
		cmocka_unit_test(fastreg_binds_per_exposure),
		cmocka_unit_test(arena_sizes_share),
		cmocka_unit_test(expose_failure_named),
		cmocka_unit_test(window_wait_outside_connection),
		cmocka_unit_test(flushed_unbind_released),
		cmocka_unit_test(remote_invalidation),
		cmocka_unit_test(local_invalidations_give_windows_back),
		cmocka_unit_test(fastreg_without_windows),
		cmocka_unit_test(listens_on_every_address),
		cmocka_unit_test(region_sent_in_place),
		cmocka_unit_test(budget_shrinks_grants),
		cmocka_unit_test(connection_limits),
		cmocka_unit_test(refused_before_pulling),
		cmocka_unit_test(nomsg_pulls_one_at_a_time),
		cmocka_unit_test(caller_polls),
		cmocka_unit_test(read_read_inline),
		cmocka_unit_test(replies_posted_together),
		cmocka_unit_test(inline_bulk_when_it_fits),
		cmocka_unit_test(inline_bounded_by_peer_send),
		cmocka_unit_test(inline_margin_for_headers),
		cmocka_unit_test(inline_call_with_read_chunk),
		cmocka_unit_test(matrix),
	};

	if (getenv("RRT_FILTER")) /* one test, or a few: a cmocka pattern */
		cmocka_set_test_filter(getenv("RRT_FILTER"));
	if (getenv("RRT_DEBUG"))
		log_set_level(LOG_LVL_DEBUG);
	else
		log_set_level(LOG_LVL_WARN);
	return cmocka_run_group_tests_name("rpcrdma", tests, NULL, NULL);
}
