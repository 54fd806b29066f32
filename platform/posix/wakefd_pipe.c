/*
 * wakefd_pipe.c: wake fds as non-blocking pipes: a post is one byte; a
 * semaphore take reads one, a plain take reads them all. A semaphore holds at
 * most a pipe's buffer of posts (64 KiB on Linux, more than the events any
 * user of one keeps queued); a post past that fails with -EAGAIN.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "common/base/log.h"
#include "common/base/poller.h"

/* O_NONBLOCK and FD_CLOEXEC on fd. */
static int set_flags(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
		return -errno;
	return 0;
}

/* See poller.h. */
int wakefd_pipe_open(struct wakefd *w, bool semaphore)
{
	int p[2], rc;

	w->rfd = w->wfd = -1;
	w->semaphore = semaphore;
	if (pipe(p) < 0)
		return -errno;
	if ((rc = set_flags(p[0])) != 0 || (rc = set_flags(p[1])) != 0) {
		close(p[0]);
		close(p[1]);
		return rc;
	}
	w->rfd = p[0];
	w->wfd = p[1];
	return 0;
}

/* See poller.h. A full pipe is readable already, which is all a plain
 * wake fd needs. */
int wakefd_pipe_post(struct wakefd *w)
{
	char one = 1;

	while (write(w->wfd, &one, 1) < 0) {
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN && !w->semaphore)
			return 0;
		log_err("wake fd: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

/* See poller.h. */
int wakefd_pipe_take(struct wakefd *w)
{
	char buf[256];
	ssize_t n;
	int any = 0;

	do {
		n = read(w->rfd, buf, w->semaphore ? 1 : sizeof(buf));
		if (n > 0)
			any = 1;
	} while ((n > 0 && !w->semaphore) || (n < 0 && errno == EINTR));
	return any;
}
