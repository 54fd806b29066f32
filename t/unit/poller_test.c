/*
 * poller_test: every poller backend built here (the OS's own and the portable
 * poll one, whatever NFSRDMA_POLLER says) keeps poller.h's promises: level-
 * triggered reports with the caller's pointer, changes and removals, hang-ups
 * as POLLER_ERR, a descriptor added from another thread wakes a waiter, no
 * descriptor starves when more are ready than a batch holds; and wake fds
 * (eventfd and pipe) count as they say.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/base/poller.h"

#define NPIPES 100

static const struct poller_ops *backends[] = {&poller_native_ops, &poller_poll_ops};

/* Wait up to ms for one event; returns the count. */
static int wait1(struct poller *p, struct poller_event *ev, int ms)
{
	int n = poller_wait(p, ev, 1, ms);

	assert_true(n >= 0);
	return n;
}

static void test_level_triggered(void **state)
{
	for (size_t b = 0; b < 2; b++) {
		struct poller *p;
		struct poller_event ev;
		int fds[2], tag;
		char c = 'x';

		assert_int_equal(backends[b]->create(&p), 0);
		assert_string_equal(p->ops->name, backends[b]->name);
		assert_int_equal(pipe(fds), 0);
		assert_int_equal(poller_add(p, fds[0], POLLER_IN, &tag), 0);
		assert_int_equal(poller_add(p, fds[0], POLLER_IN, &tag), -EEXIST);
		assert_int_equal(wait1(p, &ev, 0), 0);
		assert_int_equal(write(fds[1], &c, 1), 1);
		for (int i = 0; i < 3; i++) { /* reported until read */
			assert_int_equal(wait1(p, &ev, 1000), 1);
			assert_ptr_equal(ev.ptr, &tag);
			assert_true(ev.events & POLLER_IN);
			assert_false(ev.events & POLLER_OUT);
		}
		assert_int_equal(read(fds[0], &c, 1), 1);
		assert_int_equal(wait1(p, &ev, 0), 0);
		/* the write end: nothing asked, nothing told; then writable */
		assert_int_equal(poller_add(p, fds[1], 0, &c), 0);
		assert_int_equal(wait1(p, &ev, 0), 0);
		assert_int_equal(poller_mod(p, fds[1], POLLER_OUT, &fds), 0);
		assert_int_equal(wait1(p, &ev, 1000), 1);
		assert_ptr_equal(ev.ptr, &fds);
		assert_true(ev.events & POLLER_OUT);
		assert_int_equal(poller_del(p, fds[1]), 0);
		assert_int_equal(poller_del(p, fds[1]), -ENOENT);
		assert_int_equal(wait1(p, &ev, 0), 0);
		/* a hang-up is readable and an error */
		close(fds[1]);
		assert_int_equal(wait1(p, &ev, 1000), 1);
		assert_ptr_equal(ev.ptr, &tag);
		assert_true(ev.events & POLLER_IN);
		assert_true(ev.events & POLLER_ERR);
		assert_int_equal(poller_del(p, fds[0]), 0);
		assert_int_equal(wait1(p, &ev, 0), 0);
		close(fds[0]);
		poller_destroy(p);
	}
}

struct waiter {
	struct poller *p;
	struct poller_event ev;
	int n;
};

static void *wait_main(void *arg)
{
	struct waiter *w = arg;

	w->n = poller_wait(w->p, &w->ev, 1, 5000);
	return NULL;
}

static void test_add_wakes_waiter(void **state)
{
	for (size_t b = 0; b < 2; b++) {
		struct waiter w = {0};
		pthread_t t;
		int fds[2], tag;
		char c = 'x';

		assert_int_equal(backends[b]->create(&w.p), 0);
		assert_int_equal(pipe(fds), 0);
		assert_int_equal(write(fds[1], &c, 1), 1);
		assert_int_equal(pthread_create(&t, NULL, wait_main, &w), 0);
		usleep(100000); /* let it wait on the empty set */
		assert_int_equal(poller_add(w.p, fds[0], POLLER_IN, &tag), 0);
		pthread_join(t, NULL);
		assert_int_equal(w.n, 1);
		assert_ptr_equal(w.ev.ptr, &tag);
		close(fds[0]);
		close(fds[1]);
		poller_destroy(w.p);
	}
}

static void test_no_starvation(void **state)
{
	for (size_t b = 0; b < 2; b++) {
		struct poller *p;
		int fds[NPIPES][2], seen[NPIPES] = {0}, nseen = 0;
		char c = 'x';

		assert_int_equal(backends[b]->create(&p), 0);
		for (int i = 0; i < NPIPES; i++) {
			assert_int_equal(pipe(fds[i]), 0);
			assert_int_equal(write(fds[i][1], &c, 1), 1);
			assert_int_equal(poller_add(p, fds[i][0], POLLER_IN, &seen[i]), 0);
		}
		/* nothing is read: all stay ready; batches of 8 must reach them all */
		for (int round = 0; round < 2 * NPIPES / 8 && nseen < NPIPES; round++) {
			struct poller_event evs[8];
			int n = poller_wait(p, evs, 8, 1000);

			assert_true(n > 0 && n <= 8);
			for (int k = 0; k < n; k++) {
				int *s = evs[k].ptr;

				if (!*s)
					nseen++;
				*s = 1;
			}
		}
		assert_int_equal(nseen, NPIPES);
		for (int i = 0; i < NPIPES; i++) {
			close(fds[i][0]);
			close(fds[i][1]);
		}
		poller_destroy(p);
	}
}

static void test_wakefds(void **state)
{
	struct wakefd w;

	for (int kind = 0; kind < 2; kind++) {
		int (*open_fn)(struct wakefd *, bool) =
			kind ? wakefd_pipe_open : wakefd_native_open;

		assert_int_equal(open_fn(&w, true), 0);
		assert_int_equal(kind ? w.rfd != w.wfd : w.rfd == w.wfd, 1);
		assert_int_equal(wakefd_take(&w), 0);
		for (int i = 0; i < 3; i++)
			assert_int_equal(wakefd_post(&w), 0);
		for (int i = 0; i < 3; i++)
			assert_int_equal(wakefd_take(&w), 1);
		assert_int_equal(wakefd_take(&w), 0);
		wakefd_close(&w);

		assert_int_equal(open_fn(&w, false), 0);
		for (int i = 0; i < 3; i++)
			assert_int_equal(wakefd_post(&w), 0);
		assert_int_equal(wakefd_take(&w), 1);
		assert_int_equal(wakefd_take(&w), 0);
		wakefd_close(&w);
	}
}

/* NFSRDMA_POLLER selects what poller_create makes (the daemon tests' re-run). */
static void test_selection(void **state)
{
	const char *want = getenv("NFSRDMA_POLLER");
	struct poller *p;

	assert_int_equal(poller_create(&p), 0);
	assert_string_equal(p->ops->name, want && *want ? want : poller_native_ops.name);
	poller_destroy(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_level_triggered), cmocka_unit_test(test_add_wakes_waiter),
		cmocka_unit_test(test_no_starvation),	cmocka_unit_test(test_wakefds),
		cmocka_unit_test(test_selection),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
