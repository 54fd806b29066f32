/* call_gate_test: a gate's share of the workers (a call past it waits for
 * one to leave, an event loop's call does not, and one waits a second at
 * most), its stall (calls refused at once once none has finished for the
 * storage timeout, until one does), and the log's count of the calls refused
 * meanwhile, which the server's own tries (CALL_GATE_OWN) do not swell. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/base/clock.h"
#include "common/base/log.h"
#include "server/call_gate.h"

#define MS 1000000ull

static struct call_gate gate;

static int setup(void **state)
{
	(void)state;
	call_gate_init(&gate, "export", "/srv", "NFS3ERR_JUKEBOX");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	call_gate_destroy(&gate);
	return 0;
}

/* A call that leaves the gate after *arg microseconds, on a thread of its own. */
static void *leave_later(void *arg)
{
	usleep(*(unsigned *)arg);
	call_gate_out(&gate, 1);
	return NULL;
}

/* Past the share (max 1), a call waits for the one in to leave; an event
 * loop's call is told to go elsewhere; with none leaving, a call waits a
 * second after the last one came in at most, and is refused. */
static void share_waits_for_a_place(void **state)
{
	unsigned delay = 100000;
	uint64_t t0, t1;
	pthread_t th;
	int stalled_now;

	(void)state;
	assert_int_equal(call_gate_in(&gate, 1, 0, 0), 0);
	assert_int_equal(call_gate_in(&gate, 1, 0, CALL_GATE_NOWAIT), -EAGAIN);
	t0 = clock_now_ns();
	assert_int_equal(pthread_create(&th, NULL, leave_later, &delay), 0);
	assert_int_equal(call_gate_in(&gate, 1, 0, 0), 0);
	t1 = clock_now_ns();
	assert_true(t1 - t0 >= 100 * MS);
	pthread_join(th, NULL);
	assert_int_equal(call_gate_calls(&gate, &stalled_now), 1);
	assert_false(stalled_now);
	/* the gate's last progress (the helper's call leaving) came after t0: a
	 * call past the share waits a second after it */
	assert_int_equal(call_gate_in(&gate, 1, 0, 0), -ETIMEDOUT);
	assert_true(clock_now_ns() - t0 >= 1000 * MS);
	call_gate_out(&gate, 1);
	assert_int_equal(call_gate_calls(&gate, &stalled_now), 0);
}

/* What a stall does, with stderr (the log) in a file: the answers of the
 * calls tried (own: the server's own tries), whether the gate said it had
 * stalled, and the log. */
struct stall {
	int in[2], rc[4], stalled_in, stalled_after, again;
	uint64_t refusals_ns;
	char *log;
};

static char *read_all(FILE *f)
{
	long len = ftell(f);
	char *out = calloc(1, (size_t)len + 1);

	if (out) {
		rewind(f);
		if (fread(out, 1, (size_t)len, f) != (size_t)len)
			out[0] = '\0';
	}
	return out;
}

static void run_stall(const unsigned *flags, unsigned n, struct stall *st)
{
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO);
	uint64_t t0;

	assert_non_null(tmp);
	fflush(stderr);
	dup2(fileno(tmp), STDERR_FILENO);
	/* one call in that never finishes, and one that an event loop gave up
	 * for a worker (no progress); no timeout for these two */
	st->in[0] = call_gate_in(&gate, 2, 0, 0);
	st->in[1] = call_gate_in(&gate, 2, 0, 0);
	call_gate_out(&gate, 0);
	usleep(80000);
	t0 = clock_now_ns();
	for (unsigned i = 0; i < n; i++)
		st->rc[i] = call_gate_in(&gate, 2, 50 * MS, flags[i]);
	st->refusals_ns = clock_now_ns() - t0;
	call_gate_calls(&gate, &st->stalled_in);
	call_gate_out(&gate, 1);
	call_gate_calls(&gate, &st->stalled_after);
	st->again = call_gate_in(&gate, 2, 50 * MS, 0);
	if (st->again == 0)
		call_gate_out(&gate, 1);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	st->log = read_all(tmp);
	fclose(tmp);
	assert_non_null(st->log);
	for (char *p = st->log, *nl; *p; p = nl + 1) {
		if ((nl = strchr(p, '\n')) == NULL)
			break;
		printf("# %.*s\n", (int)(nl - p), p);
	}
}

/* Once no call has finished for the timeout, calls are refused at once (an
 * event loop's too); the log says so once, and when a call finishes, how
 * many clients' calls were refused: not the server's own tries. */
static void stall_refuses_and_counts_clients_calls(void **state)
{
	const unsigned flags[] = {CALL_GATE_OWN, 0, CALL_GATE_OWN, CALL_GATE_NOWAIT};
	struct stall st = {.log = NULL};

	(void)state;
	run_stall(flags, 4, &st);
	assert_int_equal(st.in[0], 0);
	assert_int_equal(st.in[1], 0);
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(st.rc[i], -ETIMEDOUT);
	assert_true(st.refusals_ns < 500 * MS);
	assert_true(st.stalled_in);
	assert_false(st.stalled_after);
	assert_int_equal(st.again, 0);
	assert_non_null(strstr(st.log, "export '/srv': none of its 1 calls has finished in 0 s"));
	assert_null(strstr(strstr(st.log, "has finished") + 1, "has finished"));
	assert_non_null(strstr(st.log, "export '/srv': its storage answers again (0 calls still "
				       "in it; 2 were answered NFS3ERR_JUKEBOX)"));
	free(st.log);
}

/* A stall that only the server's own tries met is still said to end. */
static void stall_seen_only_by_own_tries_ends_in_the_log(void **state)
{
	const unsigned flags[] = {CALL_GATE_OWN};
	struct stall st = {.log = NULL};

	(void)state;
	run_stall(flags, 1, &st);
	assert_int_equal(st.in[0], 0);
	assert_int_equal(st.in[1], 0);
	assert_int_equal(st.rc[0], -ETIMEDOUT);
	assert_true(st.stalled_in);
	assert_non_null(strstr(st.log, "none of its 1 calls has finished"));
	assert_non_null(strstr(st.log, "its storage answers again (0 calls still in it; 0 were "
				       "answered NFS3ERR_JUKEBOX)"));
	free(st.log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(share_waits_for_a_place, setup, teardown),
		cmocka_unit_test_setup_teardown(stall_refuses_and_counts_clients_calls, setup,
						teardown),
		cmocka_unit_test_setup_teardown(stall_seen_only_by_own_tries_ends_in_the_log, setup,
						teardown),
	};

	log_open("call_gate_test", 0, LOG_LVL_INFO);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
