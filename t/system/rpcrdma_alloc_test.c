/*
 * rpcrdma_alloc_test: a call over RPC/RDMA allocates no memory in the
 * project's code, on either side, once its connection has served a few:
 * requests, call slots, decoded arguments and results, reply headers, the
 * descriptors of data sent in place and of arena blocks come from what the
 * connection and the registration keep (with the arena, fastreg, or the
 * registration cache; 'dynamic' registers, and allocates, per I/O), with
 * one caller or several at once.
 * This program is linked with -Wl,--wrap=malloc,calloc,realloc, which counts
 * the calls of every object linked into it (the library and the test
 * program; not libtirpc's or libc's own).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "bulkprog.h"
#include "common/base/log.h"
#include "rpcrdma_test_util.h"

static int counting;
static unsigned long allocs;

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);

/* Count from now; count_stop: how many since. */
static void count_start(void)
{
	__atomic_store_n(&allocs, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&counting, 1, __ATOMIC_RELAXED);
}

static unsigned long count_stop(void)
{
	__atomic_store_n(&counting, 0, __ATOMIC_RELAXED);
	return __atomic_load_n(&allocs, __ATOMIC_RELAXED);
}

static void count(void)
{
	if (__atomic_load_n(&counting, __ATOMIC_RELAXED))
		__atomic_add_fetch(&allocs, 1, __ATOMIC_RELAXED);
}

void *__wrap_malloc(size_t n)
{
	count();
	return __real_malloc(n);
}

void *__wrap_calloc(size_t k, size_t n)
{
	count();
	return __real_calloc(k, n);
}

void *__wrap_realloc(void *p, size_t n)
{
	count();
	return __real_realloc(p, n);
}

#define LEN	4096	  /* like a 4 KiB READ and WRITE */
#define REGION	(1 << 20) /* the client's region: data goes in place */
#define ROUNDS	200
#define WARM_UP 40 /* rounds before counting: more than the credits (16) */
#define CALLERS 4  /* callers at once in the concurrent cases */

/* One round: a NULL call, a PUT and a GET of LEN bytes from and into the
 * client's region (at at and at + LEN). 0, or the first call that failed. */
static int round_trip(struct rpc_clnt *c, char *at, const char *want)
{
	struct rpc_call null = {.prog = BULKPROG,
				.vers = BULKVERS,
				.proc = BULK_NULL,
				.xdr_args = (xdrproc_t)xdr_void,
				.xdr_res = (xdrproc_t)xdr_void};

	if (rpc_clnt_call(c, &null) != 0)
		return 1;
	if (rrt_put_from(c, 7, LEN, at) != 0)
		return 2;
	return rrt_get_into(c, 5, LEN, 0, at + LEN, want) != 0 ? 3 : 0;
}

/* A caller thread: WARM_UP rounds, then ROUNDS once every caller is warm
 * and counting is on (two waits on go); its first failure in failed. */
struct caller {
	struct rpc_clnt *c;
	char *at;
	const char *want;
	pthread_barrier_t *go;
	int failed;
};

static void *caller_run(void *arg)
{
	struct caller *k = arg;

	for (int i = 1; i < WARM_UP && !k->failed; i++)
		k->failed = round_trip(k->c, k->at, k->want);
	pthread_barrier_wait(k->go);
	pthread_barrier_wait(k->go);
	for (int i = 0; i < ROUNDS && !k->failed; i++)
		k->failed = round_trip(k->c, k->at, k->want);
	return NULL;
}

/* A server of modes and reg (its calls on its loop if inline, else on its
 * workers), and a client of mode and reg whose region holds the data. */
struct rig {
	char *region, *want;
	struct rrt_server t;
	struct rpc_clnt *c;
};

static void rig_start(struct rig *r, unsigned modes, enum rr_reg reg, int inline_calls,
		      unsigned mode)
{
	struct rr_params p;

	r->region = malloc(REGION);
	r->want = malloc(LEN);
	assert_non_null(r->region);
	assert_non_null(r->want);
	bulk_fill(r->want, LEN, 5);
	rrt_params(&p, modes, reg);
	assert_int_equal(inline_calls ? rrt_server_start_inline(&r->t, &p)
				      : rrt_server_start_p(&r->t, &p, 0),
			 0);
	rrt_params(&p, mode, reg);
	p.caller_polls = 1;
	p.region = r->region;
	p.region_len = REGION;
	assert_int_equal(rrt_client_p(&r->t, &p, 0, &r->c), 0);
}

static void rig_stop(struct rig *r)
{
	rpc_clnt_destroy(r->c);
	rrt_server_stop(&r->t);
	free(r->region);
	free(r->want);
}

/* ROUNDS rounds from each of n callers at once, each in its own part of
 * the region, on a server of modes and reg (its calls on its loop if
 * inline, else on its workers) and a client of mode and reg: allocations
 * counted in them. With fastreg in read-write every byte goes in place. */
static void calls_on(unsigned modes, enum rr_reg reg, int inline_calls, unsigned mode, int n)
{
	struct caller k[CALLERS];
	pthread_t th[CALLERS];
	pthread_barrier_t go;
	struct rr_stats st0, st;
	unsigned long got;
	struct rig r;

	assert_true(n >= 1 && n <= CALLERS);
	rig_start(&r, modes, reg, inline_calls, mode);
	count_start(); /* the control: the first round allocates */
	assert_int_equal(round_trip(r.c, r.region, r.want), 0);
	assert_true(count_stop() > 0);
	assert_int_equal(pthread_barrier_init(&go, NULL, (unsigned)n + 1), 0);
	for (int i = 0; i < n; i++) {
		k[i] = (struct caller){
			.c = r.c, .at = r.region + 2 * LEN * i, .want = r.want, .go = &go};
		assert_int_equal(pthread_create(&th[i], NULL, caller_run, &k[i]), 0);
	}
	pthread_barrier_wait(&go);
	rr_clnt_get_stats(r.c, &st0);
	count_start();
	pthread_barrier_wait(&go);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	got = count_stop();
	rr_clnt_get_stats(r.c, &st);
	pthread_barrier_destroy(&go);
	print_message("# %s, %s, calls %s, %d caller(s): %lu allocations in %d calls, %llu "
		      "bytes in place\n",
		      mode == RR_MODE_READ_READ ? "read-read" : "read-write", rr_reg_name(reg),
		      inline_calls ? "on the loop" : "on workers", n, got, 3 * ROUNDS * n,
		      (unsigned long long)(st.bytes_in_place - st0.bytes_in_place));
	for (int i = 0; i < n; i++)
		assert_int_equal(k[i].failed, 0);
	assert_int_equal(got, 0);
	if (mode == RR_MODE_READ_WRITE && reg == RR_REG_FASTREG)
		assert_int_equal(st.bytes_in_place - st0.bytes_in_place,
				 (uint64_t)2 * LEN * ROUNDS * (unsigned)n);
	rig_stop(&r);
}

static void read_write_allocates_nothing(void **state)
{
	calls_on(RR_MODE_READ_WRITE, RR_REG_FASTREG, 1, RR_MODE_READ_WRITE, 1);
	calls_on(RR_MODE_READ_WRITE, RR_REG_FASTREG, 0, RR_MODE_READ_WRITE, 1);
	calls_on(RR_MODE_READ_WRITE, RR_REG_CACHE, 1, RR_MODE_READ_WRITE, 1);
}

static void read_read_allocates_nothing(void **state)
{
	calls_on(RR_MODE_READ_READ, RR_REG_FASTREG, 1, RR_MODE_READ_READ, 1);
}

/* Callers at once: the connection keeps as many requests and slots as
 * were in flight together, on the loop and on the workers. */
static void concurrent_calls_allocate_nothing(void **state)
{
	calls_on(RR_MODE_READ_WRITE, RR_REG_FASTREG, 1, RR_MODE_READ_WRITE, CALLERS);
	calls_on(RR_MODE_READ_WRITE, RR_REG_FASTREG, 0, RR_MODE_READ_WRITE, CALLERS);
	calls_on(RR_MODE_READ_READ, RR_REG_FASTREG, 0, RR_MODE_READ_READ, CALLERS);
}

/* A connection without calls for two seconds (RQ_KEPT_IDLE_MS in
 * rpcrdma_svc.h) frees the requests it kept: the next call allocates
 * again, and one soon after it does not. */
static void idle_connection_frees_kept(void **state)
{
	unsigned long after_idle, after_busy;
	struct rig r;

	rig_start(&r, RR_MODE_READ_WRITE, RR_REG_FASTREG, 1, RR_MODE_READ_WRITE);
	for (int i = 0; i < WARM_UP; i++)
		assert_int_equal(round_trip(r.c, r.region, r.want), 0);
	usleep(3000 * 1000); /* two seconds, and the ticks (100 ms) that see it */
	count_start();
	assert_int_equal(round_trip(r.c, r.region, r.want), 0);
	after_idle = count_stop();
	count_start();
	for (int i = 0; i < 10; i++)
		assert_int_equal(round_trip(r.c, r.region, r.want), 0);
	after_busy = count_stop();
	print_message("# after 3 s idle: %lu allocations in the next 3 calls, %lu in the 30 "
		      "after\n",
		      after_idle, after_busy);
	assert_true(after_idle > 0);
	assert_int_equal(after_busy, 0);
	rig_stop(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(read_write_allocates_nothing),
		cmocka_unit_test(read_read_allocates_nothing),
		cmocka_unit_test(concurrent_calls_allocate_nothing),
		cmocka_unit_test(idle_connection_frees_kept),
	};

	log_set_level(getenv("RRT_DEBUG") ? LOG_LVL_DEBUG : LOG_LVL_ERR);
	return cmocka_run_group_tests_name("rpcrdma_alloc", tests, NULL, NULL);
}
