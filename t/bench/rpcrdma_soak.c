/*
 * rpcrdma_soak: a long, random run of the RPC/RDMA transport over the soft
 * provider. Worker threads, each with its own client of a random mode and
 * strategy, make random calls (bulk both ways, long replies, long calls,
 * sleeps) of random sizes against one server that accepts both modes, and
 * reconnect after a random number of calls. Every reply's content is checked;
 * at the end every counter must be back to baseline. TAP. (Connections that
 * vanish mid-transfer are t/system/rpcrdma_hostile_test's.)
 *   SOAK_SECONDS (default 60), SOAK_THREADS (default 6), SOAK_SEED
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/base/log.h"
#include "t/system/bulkprog.h"
#include "t/system/rpcrdma_test_util.h"

static struct rrt_server srv;
static double until;
static const enum rr_reg cregs[] = {RR_REG_ZEROCOPY, RR_REG_CACHE, RR_REG_FASTREG, RR_REG_ALLPHYS};

struct worker {
	pthread_t t;
	unsigned seed;
	unsigned long calls, wrong, errors, reconnects;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A size from 0 to 1 MiB, small ones most often. */
static size_t random_size(unsigned *seed)
{
	switch (rand_r(seed) % 4) {
	case 0:
		return (size_t)(rand_r(seed) % 256);
	case 1:
		return (size_t)(rand_r(seed) % 8192);
	case 2:
		return (size_t)(rand_r(seed) % (256 << 10));
	default:
		return (size_t)(rand_r(seed) % (1 << 20));
	}
}

static int one_call(struct rpc_clnt *c, unsigned *seed)
{
	size_t n = random_size(seed);

	switch (rand_r(seed) % 5) {
	case 0:
		return rrt_put(c, (uint32_t)rand_r(seed), n);
	case 1:
		return rrt_get(c, (uint32_t)rand_r(seed), n);
	case 2:
		return rrt_big(c, (u_int)(n % 200000));
	case 3:
		return rrt_sum(c, n % 300000);
	default: {
		u_int ms = (u_int)(rand_r(seed) % 20);
		struct rpc_call call = {.prog = BULKPROG,
					.vers = BULKVERS,
					.proc = BULK_SLEEP,
					.xdr_args = (xdrproc_t)xdr_u_int,
					.args = &ms,
					.xdr_res = (xdrproc_t)xdr_void};
		int rc = rpc_clnt_call(c, &call);

		if (rc == 0)
			rpc_clnt_free_res(c, &call);
		return rc;
	}
	}
}

/* A client of a random mode and strategy for a random number of calls. */
static void *worker_main(void *arg)
{
	struct worker *w = arg;

	while (now() < until) {
		unsigned mode = rand_r(&w->seed) % 2 ? RR_MODE_READ_READ : RR_MODE_READ_WRITE;
		struct rpc_clnt *c;
		int ncalls = 1 + rand_r(&w->seed) % 200;

		if (rrt_client(&srv, mode, cregs[rand_r(&w->seed) % 4], 0, &c) != 0) {
			w->errors++;
			usleep(10000);
			continue;
		}
		w->reconnects++;
		for (int i = 0; i < ncalls && now() < until; i++) {
			int rc = one_call(c, &w->seed);

			w->calls++;
			if (rc == -EILSEQ)
				w->wrong++;
			else if (rc)
				w->errors++;
		}
		rpc_clnt_destroy(c);
	}
	return NULL;
}

int main(void)
{
	const char *s = getenv("SOAK_SECONDS");
	double secs = s ? atof(s) : 60;
	unsigned nthreads = getenv("SOAK_THREADS") ? (unsigned)atoi(getenv("SOAK_THREADS")) : 6;
	unsigned seed =
		getenv("SOAK_SEED") ? (unsigned)atoi(getenv("SOAK_SEED")) : (unsigned)time(NULL);
	struct worker w[32];
	unsigned long calls = 0, wrong = 0, errors = 0, reconnects = 0;
	struct rr_stats st;
	int fail = 0;

	if (nthreads < 1 || nthreads > 32)
		nthreads = 6;
	log_set_level(LOG_LVL_ERR);
	printf("1..4\n# seed %u, %u threads, %.0f s\n", seed, nthreads, secs);
	if (rrt_server_start(&srv, RR_MODE_READ_WRITE | RR_MODE_READ_READ, RR_REG_DYNAMIC, 0)) {
		printf("not ok 1 - the server starts\n");
		return 1;
	}
	printf("ok 1 - the server starts\n");
	until = now() + secs;
	for (unsigned i = 0; i < nthreads; i++) {
		w[i] = (struct worker){.seed = seed + i};
		pthread_create(&w[i].t, NULL, worker_main, &w[i]);
	}
	for (unsigned i = 0; i < nthreads; i++) {
		pthread_join(w[i].t, NULL);
		calls += w[i].calls;
		wrong += w[i].wrong;
		errors += w[i].errors;
		reconnects += w[i].reconnects;
	}
	printf("# %lu calls on %lu connections, %lu errors\n", calls, reconnects, errors);
	printf("%s 2 - every reply's content is right (%lu wrong)\n", wrong ? "not ok" : "ok",
	       wrong);
	fail |= wrong != 0;
	printf("%s 3 - no call failed (%lu errors)\n", errors ? "not ok" : "ok", errors);
	fail |= errors != 0;
	for (int i = 0; i < 500; i++) {
		rr_server_get_stats(srv.rr, &st);
		if (st.conns == 0 && st.exposed_now == 0)
			break;
		usleep(10000);
	}
	if (st.conns || st.exposed_now || st.registered_now - st.cached_now) {
		printf("not ok 4 - counters back to baseline (conns %llu, exposed %llu, "
		       "registered %llu)\n",
		       (unsigned long long)st.conns, (unsigned long long)st.exposed_now,
		       (unsigned long long)(st.registered_now - st.cached_now));
		fail = 1;
	} else {
		printf("ok 4 - counters back to baseline\n");
	}
	rrt_server_stop(&srv);
	return fail;
}
