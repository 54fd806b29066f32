/*
 * evloop_test: the event loop's promises: queued calls run in order and all
 * before destroy returns; a handler deleted from the loop thread is not called
 * again, not even for an event fetched in the same batch (the connection
 * teardown frees the handler's argument right after deleting it); timers tick;
 * evloop_serve_fd serves its fd.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include "common/base/clock.h"
#include "common/base/evloop.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_calls_in_order),
		cmocka_unit_test(test_deleted_handler_not_called),
		cmocka_unit_test(test_timer_ticks),
		cmocka_unit_test(test_serve_fd),
	};

	return cmocka_run_group_tests_name("evloop", tests, NULL, NULL);
}
