/*
 * evloop_test: the event loop's promises: queued calls run in order and all
 * before destroy returns; a job (evloop_post) runs once however often it is
 * posted while queued, may post itself again and free itself from its run,
 * and needs no memory where evloop_call fails for want of it; a handler deleted from the loop
 * thread is not called again, not even for an event fetched in the same batch (the connection
 * teardown frees the handler's argument right after deleting it); timers tick;
 * evloop_serve_fd serves its fd; a loop with a spin (evloop_set_spin) takes
 * events that come within it without sleeping, an adaptive one
 * (evloop_set_spin_max) learns to, and does not spin for events further
 * apart than its ceiling; clock_spin_wait keeps its bounds; clock_spin_spare
 * sees a machine whose processors are all taken.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>

#include "common/base/clock.h"
#include "common/base/evloop.h"
#include "common/base/osdep.h"

struct order {
	int seen[100];
	int n;
};

struct step {
	struct order *o;
	int i;
};

static void record(void *arg)
{
	struct step *s = arg;

	s->o->seen[s->o->n++] = s->i;
}

static void test_calls_in_order(void **state)
{
	struct evloop *l;
	struct order o = {.n = 0};
	struct step steps[100];

	(void)state;
	assert_int_equal(evloop_create(&l), 0);
	assert_int_equal(evloop_start(l, "test"), 0);
	for (int i = 0; i < 100; i++) {
		steps[i] = (struct step){&o, i};
		assert_int_equal(evloop_call(l, record, &steps[i]), 0);
	}
	evloop_destroy(l); /* runs what was queued, then joins */
	assert_int_equal(o.n, 100);
	for (int i = 0; i < 100; i++)
		assert_int_equal(o.seen[i], i);
}

/* Memory fails for this thread while set (the test links with
 * -Wl,--wrap=malloc, so the library's malloc comes here too). */
static __thread int no_memory;
void *__real_malloc(size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_malloc(size_t n)
{
	return no_memory ? NULL : __real_malloc(n);
}

/* A call that holds the loop until opened. */
struct gate {
	pthread_mutex_t m;
	pthread_cond_t cv;
	int open;
};

static void hold(void *arg)
{
	struct gate *g = arg;

	pthread_mutex_lock(&g->m);
	while (!g->open)
		pthread_cond_wait(&g->cv, &g->m);
	pthread_mutex_unlock(&g->m);
}

static void gate_open(struct gate *g)
{
	pthread_mutex_lock(&g->m);
	g->open = 1;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->m);
}

struct counted {
	struct evloop *l;
	struct evloop_job job;
	int runs;
	int again; /* posts itself this many more times from its run */
	int posted_again;
};

static void counted_run(void *arg)
{
	struct counted *c = arg;

	c->runs++;
	if (c->again) {
		c->again--;
		c->posted_again += evloop_post(c->l, &c->job);
	}
}

static void free_self(void *arg)
{
	struct counted *c = arg;

	c->runs++; /* then frees its own job: the loop must not touch it after */
	free(c);
}

static void test_post_once(void **state)
{
	struct gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
	struct counted c = {.runs = 0};
	struct counted *mine = calloc(1, sizeof(*mine));
	struct evloop *l;

	(void)state;
	assert_int_equal(evloop_create(&l), 0);
	assert_int_equal(evloop_start(l, "test"), 0);
	c.l = l;
	c.again = 2;
	evloop_job_init(&c.job, counted_run, &c);
	assert_int_equal(evloop_call(l, hold, &g), 0);
	assert_int_equal(evloop_post(l, &c.job), 1);
	assert_int_equal(evloop_post(l, &c.job), 0); /* queued already */
	assert_int_equal(evloop_post(l, &c.job), 0);
	evloop_job_init(&mine->job, free_self, mine);
	assert_int_equal(evloop_post(l, &mine->job), 1);
	no_memory = 1;
	assert_int_equal(evloop_call(l, hold, &g), -ENOMEM);
	assert_int_equal(evloop_post(l, &c.job), 0); /* (queued: no memory asked) */
	no_memory = 0;
	gate_open(&g);
	evloop_destroy(l);
	/* once for the three posts, then twice more: each run posted it again */
	assert_int_equal(c.runs, 3);
	assert_int_equal(c.posted_again, 2);
}

/* Where evloop_call cannot get memory, a job still runs. */
static void test_post_needs_no_memory(void **state)
{
	struct counted c = {.runs = 0};
	struct evloop *l;

	(void)state;
	assert_int_equal(evloop_create(&l), 0);
	assert_int_equal(evloop_start(l, "test"), 0);
	evloop_job_init(&c.job, counted_run, &c);
	no_memory = 1;
	assert_int_equal(evloop_call(l, counted_run, &c), -ENOMEM);
	assert_int_equal(evloop_post(l, &c.job), 1);
	no_memory = 0;
	evloop_destroy(l);
	assert_int_equal(c.runs, 1);
}

/* Two readable fds whose handlers each delete the other and free its state. */
struct peer {
	struct evloop *l;
	int fd;
	int *calls;
	struct peer **other;
};

static void delete_other(void *arg)
{
	struct peer *p = arg;
	uint64_t v;

	__atomic_add_fetch(p->calls, 1, __ATOMIC_RELAXED);
	if (read(p->fd, &v, sizeof(v)) < 0)
		return;
	if (*p->other) {
		evloop_del(p->l, (*p->other)->fd);
		close((*p->other)->fd);
		free(*p->other); /* what a torn-down connection does */
		*p->other = NULL;
	}
}

static void test_deleted_handler_not_called(void **state)
{
	struct evloop *l;
	struct peer *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct peer *pa = a, *pb = b;
	uint64_t one = 1;
	int calls = 0;

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(evloop_create(&l), 0);
	*a = (struct peer){l, eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC), &calls, &pb};
	*b = (struct peer){l, eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC), &calls, &pa};
	assert_true(a->fd >= 0 && b->fd >= 0);
	assert_int_equal(evloop_add(l, a->fd, delete_other, a), 0);
	assert_int_equal(evloop_add(l, b->fd, delete_other, b), 0);
	/* both readable before the loop first waits: one batch holds both */
	assert_int_equal(write(a->fd, &one, sizeof(one)), sizeof(one));
	assert_int_equal(write(b->fd, &one, sizeof(one)), sizeof(one));
	assert_int_equal(evloop_start(l, "test"), 0);
	for (int i = 0; i < 500 && __atomic_load_n(&calls, __ATOMIC_RELAXED) == 0; i++)
		usleep(1000);
	evloop_destroy(l);
	assert_int_equal(calls, 1);
	assert_true((pa == NULL) != (pb == NULL));
	if (pa) {
		close(pa->fd);
		free(pa);
	}
	if (pb) {
		close(pb->fd);
		free(pb);
	}
}

static void tick(void *arg)
{
	__atomic_add_fetch((int *)arg, 1, __ATOMIC_RELAXED);
}

static void test_timer_ticks(void **state)
{
	struct evloop *l;
	int ticks = 0;
	uint64_t until = clock_now_ns() + 5000000000ull;

	(void)state;
	assert_int_equal(evloop_create(&l), 0);
	assert_int_equal(evloop_add_timer(l, 5, tick, &ticks, NULL), 0);
	assert_int_equal(evloop_start(l, "test"), 0);
	while (__atomic_load_n(&ticks, __ATOMIC_RELAXED) < 3 && clock_now_ns() < until)
		usleep(1000);
	assert_true(__atomic_load_n(&ticks, __ATOMIC_RELAXED) >= 3);
	evloop_destroy(l);
}

struct served {
	int fd;
	int got;
};

static void serve(void *arg)
{
	struct served *s = arg;
	uint64_t v;

	if (read(s->fd, &v, sizeof(v)) == sizeof(v))
		__atomic_add_fetch(&s->got, (int)v, __ATOMIC_RELAXED);
}

static void test_serve_fd(void **state)
{
	struct served s = {.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)};
	struct evloop *l;
	uint64_t seven = 7;
	uint64_t until = clock_now_ns() + 5000000000ull;

	(void)state;
	assert_true(s.fd >= 0);
	assert_int_equal(evloop_serve_fd(s.fd, serve, &s, "test", &l), 0);
	assert_int_equal(write(s.fd, &seven, sizeof(seven)), sizeof(seven));
	while (__atomic_load_n(&s.got, __ATOMIC_RELAXED) < 7 && clock_now_ns() < until)
		usleep(1000);
	evloop_destroy(l);
	assert_int_equal(s.got, 7);
	close(s.fd);
}

/* The calling thread's voluntary context switches: the times it slept. */
static long slept(void)
{
	char path[64], line[128];
	long n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/status", (long)syscall(SYS_gettid));
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "voluntary_ctxt_switches: %ld", &n) == 1)
			break;
	fclose(f);
	return n;
}

#define SPUN_MAX 32

struct spun {
	int fd;
	int got;
	long slept[SPUN_MAX];	   /* slept() at each event */
	uint64_t cpu_ns[SPUN_MAX]; /* and the loop thread's CPU time */
};

static void spun_event(void *arg)
{
	struct spun *s = arg;
	struct timespec ts;
	uint64_t v;

	if (read(s->fd, &v, sizeof(v)) != sizeof(v) || s->got >= SPUN_MAX)
		return;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	s->slept[s->got] = slept();
	s->cpu_ns[s->got] = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	__atomic_add_fetch(&s->got, 1, __ATOMIC_RELEASE);
}

/* Send a loop spinning spin_us, or adapting its spin up to max_us, n events,
 * the i-th gap_us[i] after the one before, each taken before the next. */
static void drive(struct spun *s, unsigned spin_us, unsigned max_us, const unsigned *gap_us, int n)
{
	struct evloop *l;
	uint64_t one = 1;

	assert_true(n <= SPUN_MAX);
	s->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	assert_true(s->fd >= 0);
	assert_int_equal(evloop_create(&l), 0);
	evloop_set_spin(l, spin_us);
	evloop_set_spin_max(l, max_us);
	assert_int_equal(evloop_add(l, s->fd, spun_event, s), 0);
	assert_int_equal(evloop_start(l, "test"), 0);
	for (int i = 0; i < n; i++) {
		uint64_t until = clock_now_ns() + 5000000000ull;

		usleep(gap_us[i]);
		assert_int_equal(write(s->fd, &one, sizeof(one)), sizeof(one));
		while (__atomic_load_n(&s->got, __ATOMIC_ACQUIRE) <= i && clock_now_ns() < until)
			usleep(100);
		assert_int_equal(__atomic_load_n(&s->got, __ATOMIC_ACQUIRE), i + 1);
	}
	evloop_destroy(l);
	close(s->fd);
}

/* How often a loop spinning spin_us, or adapting its spin up to max_us, slept
 * between 20 events gap_us apart. */
static long sleeps_between_events(unsigned spin_us, unsigned max_us, unsigned gap_us)
{
	struct spun s = {0};
	unsigned gaps[20];

	for (int i = 0; i < 20; i++)
		gaps[i] = gap_us;
	drive(&s, spin_us, max_us, gaps, 20);
	assert_true(s.slept[0] >= 0);
	return s.slept[19] - s.slept[0];
}

static void test_spin(void **state)
{
	long asleep = sleeps_between_events(0, 0, 2000),
	     spinning = sleeps_between_events(20000, 0, 2000);

	(void)state;
	print_message("# loop slept %ld times without a spin, %ld with one\n", asleep, spinning);
	assert_true(asleep >= 10);
	assert_true(spinning <= 3);
}

/* An adaptive spin grows to cover events that come within its ceiling, does
 * not spin for events further apart (the loop sleeps for each), and shrinks
 * to nothing when events that came close together start coming further
 * apart: after 10 events 2 ms apart under a 20 ms ceiling (a window of 5 ms),
 * 20 events 30 ms apart; a window that stayed would cost 5 ms of CPU each. */
static void test_spin_adaptive(void **state)
{
	long within = sleeps_between_events(0, 20000, 2000);
	long beyond = sleeps_between_events(0, 1000, 4000);
	struct spun s = {0};
	unsigned gaps[30];
	uint64_t late_ns;

	(void)state;
	for (int i = 0; i < 30; i++)
		gaps[i] = i < 10 ? 2000 : 30000;
	drive(&s, 0, 20000, gaps, 30);
	late_ns = s.cpu_ns[29] - s.cpu_ns[19];
	print_message("# adaptive loop slept %ld times for events within its ceiling, %ld beyond; "
		      "%.2f ms of CPU for the last 10 events after slowing down\n",
		      within, beyond, late_ns / 1e6);
	assert_true(within <= 4);
	assert_true(beyond >= 10);
	assert_true(late_ns < 15000000u);
}

struct looks {
	int calls, found_at; /* look gives 1 at call found_at (0: never) */
	int last_ms;
};

static int look(void *arg, int ms)
{
	struct looks *k = arg;

	k->calls++;
	k->last_ms = ms;
	return k->calls == k->found_at;
}

static void test_spin_wait_bounds(void **state)
{
	struct looks k = {0};
	uint64_t t0;

	(void)state;
	/* no spin, or a wait of 0: one look with the caller's ms */
	assert_int_equal(clock_spin_wait(0, 7, look, &k), 0);
	assert_int_equal(k.calls, 1);
	assert_int_equal(k.last_ms, 7);
	k = (struct looks){0};
	assert_int_equal(clock_spin_wait(1000000, 0, look, &k), 0);
	assert_int_equal(k.calls, 1);
	assert_int_equal(k.last_ms, 0);
	/* found while spinning: no sleeping look */
	k = (struct looks){.found_at = 3};
	assert_int_equal(clock_spin_wait(1000000000, -1, look, &k), 1);
	assert_int_equal(k.calls, 3);
	assert_int_equal(k.last_ms, 0);
	/* nothing: spins, then sleeps with no end */
	k = (struct looks){0};
	assert_int_equal(clock_spin_wait(2000000, -1, look, &k), 0);
	assert_true(k.calls > 1);
	assert_int_equal(k.last_ms, -1);
	/* the spin never outlasts the wait: 1 ms spent spinning, no sleep */
	k = (struct looks){0};
	t0 = clock_now_ns();
	assert_int_equal(clock_spin_wait(5000000000ull, 1, look, &k), 0);
	assert_true(clock_now_ns() - t0 < 1000000000ull);
	assert_int_equal(k.last_ms, 0);
	/* 50 ms of 120 spun: 70 left to sleep */
	k = (struct looks){0};
	assert_int_equal(clock_spin_wait(50000000, 120, look, &k), 0);
	assert_int_equal(k.last_ms, 70);
}

static void *busy(void *arg)
{
	const int *stop = arg;

	while (!__atomic_load_n(stop, __ATOMIC_RELAXED))
		;
	return NULL;
}

/* With twice as many busy threads as processors (plus one), the threads
 * ready to run outnumber the processors: no spare one for a spin. This test
 * thread is running when it looks, so there is always one running thread.
 * Before they start, on a machine that is mostly idle, some look finds a
 * spare processor (on a busy one there may be none to find). */
static void test_spin_spare(void **state)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int n = (int)(2 * cpus + 1), stop = 0, spare = 0, most = 0, idle = 0, idle_spare = 0;
	pthread_t *t;

	(void)state;
	if (osdep_runnable() == -ENOTSUP)
		skip(); /* the OS does not say: clock_spin_spare is always 0 */
	assert_true(osdep_runnable() >= 1);
	for (int i = 0; i < 50; i++) {
		idle += osdep_runnable() <= cpus;
		idle_spare += clock_spin_spare();
		usleep(1000);
	}
	print_message("# before: %d of 50 looks with the threads fitting on %ld processors, "
		      "%d spare\n",
		      idle, cpus, idle_spare);
	if (idle >= 40)
		assert_true(idle_spare >= 1);
	t = calloc((size_t)n, sizeof(*t));
	assert_non_null(t);
	for (int i = 0; i < n; i++)
		assert_int_equal(pthread_create(&t[i], NULL, busy, &stop), 0);
	usleep(20000);
	for (int i = 0; i < 20; i++) {
		int r = osdep_runnable();

		spare += clock_spin_spare();
		most = r > most ? r : most;
		usleep(1000);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	free(t);
	print_message("# %d busy threads on %ld processors: spare at %d of 20 looks, "
		      "at most %d threads running\n",
		      n, cpus, spare, most);
	assert_true(most > cpus);
	assert_true(spare <= 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_calls_in_order),
		cmocka_unit_test(test_post_once),
		cmocka_unit_test(test_post_needs_no_memory),
		cmocka_unit_test(test_deleted_handler_not_called),
		cmocka_unit_test(test_timer_ticks),
		cmocka_unit_test(test_serve_fd),
		cmocka_unit_test(test_spin),
		cmocka_unit_test(test_spin_adaptive),
		cmocka_unit_test(test_spin_wait_bounds),
		cmocka_unit_test(test_spin_spare),
	};

	return cmocka_run_group_tests_name("evloop", tests, NULL, NULL);
}
