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
#include <time.h>
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

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* A call that leaves the gate after delay_ms, on a thread of its own. */
static void *leave_later(void *arg)
{
	sleep_ms(*(unsigned *)arg);
	call_gate_out(&gate, 1);
	return NULL;
}

/* Past the share (max 1), a call waits for the one in to leave; an event
 * loop's call is told to go elsewhere; with none leaving, a call waits a
 * second and is refused. */
static void share_waits_for_a_place(void **state)
{
	unsigned delay = 100;
	uint64_t t0;
	pthread_t th;
	int stalled_now;

	(void)state;
	assert_int_equal(call_gate_in(&gate, 1, 0, 0), 0);
	assert_int_equal(call_gate_in(&gate, 1, 0, CALL_GATE_NOWAIT), -EAGAIN);
	assert_int_equal(pthread_create(&th, NULL, leave_later, &delay), 0);
	t0 = clock_now_ns();
	assert_int_equal(call_gate_in(&gate, 1, 0, 0), 0);
	assert_true(clock_now_ns() - t0 >= 90 * MS);
	pthread_join(th, NULL);
	assert_int_equal(call_gate_calls(&gate, &stalled_now), 1);
	assert_false(stalled_now);
	t0 = clock_now_ns();
	assert_int_equal(call_gate_in(&gate, 1, 0, 0), -ETIMEDOUT);
	assert_true(clock_now_ns() - t0 >= 900 * MS);
	call_gate_out(&gate, 1);
	assert_int_equal(call_gate_calls(&gate, &stalled_now), 0);
}

static char *read_all(FILE *f)
{
	long len = ftell(f);
	char *out = calloc(1, (size_t)len + 1);

	assert_non_null(out);
	rewind(f);
	assert_int_equal(fread(out, 1, (size_t)len, f), (size_t)len);
	return out;
}

/* Once no call has finished for the timeout, calls are refused at once (an
 * event loop's too); the log says so once, and when a call finishes, how
 * many clients' calls were refused: not the server's own tries. */
static void stall_refuses_and_counts_clients_calls(void **state)
{
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO), stalled_now;
	uint64_t timeout = 50 * MS, t0;
	char *log;

	(void)state;
	assert_non_null(tmp);
	fflush(stderr);
	dup2(fileno(tmp), STDERR_FILENO);
	assert_int_equal(call_gate_in(&gate, 2, timeout, 0), 0);
	/* not yet stalled: a second call gets the share's other place */
	assert_int_equal(call_gate_in(&gate, 2, timeout, 0), 0);
	call_gate_out(&gate, 0); /* given up for a worker: no progress */
	sleep_ms(80);
	t0 = clock_now_ns();
	assert_int_equal(call_gate_in(&gate, 2, timeout, CALL_GATE_OWN), -ETIMEDOUT);
	assert_int_equal(call_gate_in(&gate, 2, timeout, 0), -ETIMEDOUT);
	assert_int_equal(call_gate_in(&gate, 2, timeout, CALL_GATE_OWN), -ETIMEDOUT);
	assert_int_equal(call_gate_in(&gate, 2, timeout, CALL_GATE_NOWAIT), -ETIMEDOUT);
	assert_true(clock_now_ns() - t0 < 500 * MS);
	assert_int_equal(call_gate_calls(&gate, &stalled_now), 1);
	assert_true(stalled_now);
	call_gate_out(&gate, 1);
	assert_int_equal(call_gate_calls(&gate, &stalled_now), 0);
	assert_false(stalled_now);
	assert_int_equal(call_gate_in(&gate, 2, timeout, 0), 0);
	call_gate_out(&gate, 1);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	log = read_all(tmp);
	for (char *line = strtok(log, "\n"); line; line = strtok(NULL, "\n"))
		printf("# %s\n", line);
	free(log);
	log = read_all(tmp);
	fclose(tmp);
	assert_non_null(strstr(log, "export '/srv': none of its 1 calls has finished in 0 s"));
	assert_null(strstr(strstr(log, "has finished") + 1, "has finished"));
	assert_non_null(strstr(log, "export '/srv': its storage answers again (0 calls still in "
				    "it; 2 were answered NFS3ERR_JUKEBOX)"));
	free(log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(share_waits_for_a_place, setup, teardown),
		cmocka_unit_test_setup_teardown(stall_refuses_and_counts_clients_calls, setup,
						teardown),
	};

	log_open("call_gate_test", 0, LOG_LVL_INFO);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
