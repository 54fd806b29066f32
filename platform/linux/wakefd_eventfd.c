/* wakefd_eventfd.c (Linux): wake fds (common/base/poller.h) as eventfds. */
#include <errno.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include "common/base/poller.h"

/* See poller.h. */
int wakefd_native_open(struct wakefd *w, bool semaphore)
{
	int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC | (semaphore ? EFD_SEMAPHORE : 0));

	if (fd < 0)
		return -errno;
	w->rfd = w->wfd = fd;
	w->semaphore = semaphore;
	return 0;
}

/* See poller.h. */
int wakefd_native_post(struct wakefd *w)
{
	uint64_t one = 1;

	return write(w->wfd, &one, sizeof(one)) < 0 ? -errno : 0;
}

/* See poller.h: a semaphore eventfd reads 1, a plain one the count. */
int wakefd_native_take(struct wakefd *w)
{
	uint64_t n;

	return read(w->rfd, &n, sizeof(n)) == (ssize_t)sizeof(n);
}
