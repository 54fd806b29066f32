/* wakefd_native.c (illumos): wake fds are the portable pipes here. */
#include <errno.h>

#include "common/base/poller.h"

/* See poller.h: none of the OS's own; wakefd_open falls back to a pipe. */
int wakefd_native_open(struct wakefd *w, bool semaphore)
{
	return -ENOTSUP;
}

/* See poller.h: never called (open never succeeds). */
int wakefd_native_post(struct wakefd *w)
{
	return -ENOTSUP;
}

/* See poller.h: never called (open never succeeds). */
int wakefd_native_take(struct wakefd *w)
{
	return 0;
}
