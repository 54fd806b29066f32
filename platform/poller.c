/*
 * poller.c: which poller backend runs (common/base/poller.h): the OS's own,
 * or the portable poll() one when NFSRDMA_POLLER=poll; and wake fds, the OS's
 * own kind (wakefd_native_open) under the native backend, pipes under poll so
 * that the portable path is the one the tests run then.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/base/log.h"
#include "common/base/poller.h"

/* See poller.h. */
const struct poller_ops *poller_backend(void)
{
	const char *want = getenv("NFSRDMA_POLLER");

	if (want == NULL || *want == '\0' || strcmp(want, "native") == 0 ||
	    strcmp(want, poller_native_ops.name) == 0)
		return &poller_native_ops;
	if (strcmp(want, poller_poll_ops.name) == 0)
		return &poller_poll_ops;
	return NULL;
}

/* See poller.h. */
int poller_create(struct poller **out)
{
	const struct poller_ops *ops = poller_backend();

	if (ops == NULL) {
		log_err("NFSRDMA_POLLER=%s: not a backend here (%s or %s)",
			getenv("NFSRDMA_POLLER"), poller_native_ops.name, poller_poll_ops.name);
		return -EINVAL;
	}
	return ops->create(out);
}

/* See poller.h. */
int wakefd_open(struct wakefd *w, bool semaphore)
{
	int rc;

	w->rfd = w->wfd = -1;
	w->semaphore = semaphore;
	if (poller_backend() != &poller_poll_ops &&
	    (rc = wakefd_native_open(w, semaphore)) != -ENOTSUP)
		return rc;
	return wakefd_pipe_open(w, semaphore);
}

/* See poller.h. */
int wakefd_post(struct wakefd *w)
{
	return w->rfd == w->wfd ? wakefd_native_post(w) : wakefd_pipe_post(w);
}

/* See poller.h. */
int wakefd_take(struct wakefd *w)
{
	return w->rfd == w->wfd ? wakefd_native_take(w) : wakefd_pipe_take(w);
}

/* See poller.h. */
void wakefd_close(struct wakefd *w)
{
	if (w->rfd >= 0)
		close(w->rfd);
	if (w->wfd >= 0 && w->wfd != w->rfd)
		close(w->wfd);
	w->rfd = w->wfd = -1;
}
