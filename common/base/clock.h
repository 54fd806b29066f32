/* clock.h: time for measurements and for deadlines of condition-variable waits. */
#ifndef NFSRDMA_CLOCK_H
#define NFSRDMA_CLOCK_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>

/* Monotonic nanoseconds, for durations. */
static inline uint64_t clock_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Whether d has passed from since to now. since may be later than now when
 * another thread stamped it after now was read: then nothing has passed (the
 * unsigned difference would be huge). */
static inline int clock_passed(uint64_t now, uint64_t since, uint64_t d)
{
	return since <= now && now - since >= d;
}

/* The time on clk ms milliseconds from now, as pthread_cond_timedwait wants it
 * (CLOCK_REALTIME for a default condition variable). */
static inline struct timespec clock_deadline(clockid_t clk, long ms)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

/* With m held, wait on cv (a default, CLOCK_REALTIME one) until *count is 0 or
 * ms pass: 0, or -ETIMEDOUT. */
static inline int cond_wait_zero(pthread_cond_t *cv, pthread_mutex_t *m, const unsigned *count,
				 long ms)
{
	struct timespec ts = clock_deadline(CLOCK_REALTIME, ms);

	while (*count)
		if (pthread_cond_timedwait(cv, m, &ts) == ETIMEDOUT && *count)
			return -ETIMEDOUT;
	return 0;
}

/* Bounded busy polling: look(arg, 0) until it gives non-zero or spin_ns pass
 * (no more than ms when ms >= 0), then, if nothing came, look(arg, the ms
 * that are left), which may sleep. Returns look's last result. spin_ns 0 or
 * ms 0: look(arg, ms) alone. A look that finds nothing yields the processor
 * to whatever else is ready to run on it (the threads that would produce
 * the next event, on a busy machine). */
static inline int clock_spin_wait(uint64_t spin_ns, int ms, int (*look)(void *arg, int ms),
				  void *arg)
{
	uint64_t start;
	int n;

	if (spin_ns == 0 || ms == 0)
		return look(arg, ms);
	if (ms > 0 && spin_ns > (uint64_t)ms * 1000000u)
		spin_ns = (uint64_t)ms * 1000000u;
	start = clock_now_ns();
	do {
		if ((n = look(arg, 0)) != 0)
			return n;
		sched_yield();
	} while (clock_now_ns() - start < spin_ns);
	if (ms > 0 && (ms -= (int)(spin_ns / 1000000u)) == 0)
		return 0;
	return look(arg, ms);
}

/* Whether a spin would take a processor nothing else wants: the threads of
 * the whole machine that are running or ready to run (the caller among them)
 * fit on its processors. On a busy machine a spin takes the time that would
 * produce what it waits for, and a yield does not hand the processor over at
 * once. 0 where the OS does not say (osdep_runnable). It costs a read of
 * about a microsecond: ask before a spin, not at each look of one. */
int clock_spin_spare(void);

/* A spin adapted to the waits, as the kernel's halt polling adapts its own:
 * the spin is the window (its owner's, 0 at first) within the ceiling max_ns
 * (0: no spin). clock_spin_adapt: a wait that took took_ns and came to what
 * it waited for (came) or not. One that slept (the window ran out) but ended
 * within the ceiling would have been spared the wake-up by a longer window,
 * which doubles (to a quarter of the ceiling at least); one that took longer
 * than the ceiling, or ended with nothing, halves it, so that a waiter whose
 * events come far apart stops spinning. */
static inline uint64_t clock_spin_window(uint64_t window_ns, uint64_t max_ns)
{
	return window_ns < max_ns ? window_ns : max_ns;
}

static inline void clock_spin_adapt(uint64_t *window_ns, uint64_t max_ns, uint64_t took_ns,
				    int came)
{
	uint64_t w = *window_ns;

	if (came && took_ns > w && took_ns <= max_ns)
		w = w * 2 < max_ns / 4 ? max_ns / 4 : w * 2 > max_ns ? max_ns : w * 2;
	else if (!came || took_ns > max_ns)
		w = w / 2 < 1000 ? 0 : w / 2;
	*window_ns = w;
}

#endif
