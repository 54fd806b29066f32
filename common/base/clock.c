/* clock.c: whether the machine has a processor to spare for a spin. */
#include <unistd.h>

#include "common/base/clock.h"
#include "common/base/osdep.h"

/* See clock.h. */
int clock_spin_spare(void)
{
	static long cpus;
	long n = __atomic_load_n(&cpus, __ATOMIC_RELAXED);
	int running = osdep_runnable();

	if (n == 0) /* sysconf reads a file for this, each time */
		__atomic_store_n(&cpus, n = sysconf(_SC_NPROCESSORS_ONLN), __ATOMIC_RELAXED);
	return running > 0 && running <= n;
}
