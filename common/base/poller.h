/*
 * poller.h: waiting for file descriptors to be ready, the one thing the event
 * loops (evloop.c) and the soft provider's engine block on. One backend per OS
 * (platform/linux: epoll; platform/illumos: event ports) and a portable one
 * (platform/posix: poll) that every platform also builds, so the test suite
 * runs the portable code on Linux. NFSRDMA_POLLER=poll in the environment
 * selects it (NFSRDMA_POLLER=epoll or port the native one; unset: native).
 *
 * Level-triggered: a descriptor is reported by every poller_wait while it is
 * ready for what it is watched for, and POLLER_ERR (hang-up or error) whatever
 * it is watched for; a backend that is one-shot underneath (event ports)
 * re-arms it itself. Add, change and remove from any thread; a descriptor
 * removed while another thread waits may still be in the batch that wait
 * returns, so callers keep what ptr points to until their next wait.
 *
 * A wake fd is a descriptor that becomes readable when posted, for waking a
 * thread blocked in poller_wait from another: an eventfd on Linux, a pipe
 * elsewhere. A semaphore wake fd counts its posts and gives them back one per
 * take; a plain one gives all that were posted in one take.
 */
#ifndef NFSRDMA_POLLER_H
#define NFSRDMA_POLLER_H

#include <errno.h>
#include <stdbool.h>

#define POLLER_IN  1u /* readable, or the peer hung up (a read will say) */
#define POLLER_OUT 2u /* writable */
#define POLLER_ERR 4u /* hung up or failed: reported whatever was asked for */

struct poller_event {
	void *ptr;	 /* as given to poller_add/poller_mod */
	unsigned events; /* POLLER_IN | POLLER_OUT | POLLER_ERR */
};

struct poller;

/* One backend. */
struct poller_ops {
	const char *name;
	int (*create)(struct poller **out);
	void (*destroy)(struct poller *p);
	int (*add)(struct poller *p, int fd, unsigned events, void *ptr);
	int (*mod)(struct poller *p, int fd, unsigned events, void *ptr);
	int (*del)(struct poller *p, int fd);
	/* Up to max events; timeout_ms < 0 waits forever. Returns the count, or a
	 * negative errno (-EINTR included). */
	int (*wait)(struct poller *p, struct poller_event *evs, int max, int timeout_ms);
	/* Optional: a descriptor that is readable while a wait would report an
	 * event, so that the poller can be watched by another; NULL where the
	 * backend has none (poll). */
	int (*fd)(struct poller *p);
};

/* Every backend begins with this. */
struct poller {
	const struct poller_ops *ops;
};

/* The OS's own backend and the portable one (platform/). */
extern const struct poller_ops poller_native_ops;
extern const struct poller_ops poller_poll_ops;

/* The backend NFSRDMA_POLLER names (native when unset); NULL if it names none. */
const struct poller_ops *poller_backend(void);
/* A poller of the selected backend; -EINVAL if NFSRDMA_POLLER names none. */
int poller_create(struct poller **out);

static inline void poller_destroy(struct poller *p)
{
	if (p)
		p->ops->destroy(p);
}
/* Watch fd for events (POLLER_IN/OUT; 0: POLLER_ERR only), reported with ptr. */
static inline int poller_add(struct poller *p, int fd, unsigned events, void *ptr)
{
	return p->ops->add(p, fd, events, ptr);
}
/* Change what a watched fd is watched for, and its ptr. */
static inline int poller_mod(struct poller *p, int fd, unsigned events, void *ptr)
{
	return p->ops->mod(p, fd, events, ptr);
}
/* Stop watching fd (before closing it). */
static inline int poller_del(struct poller *p, int fd)
{
	return p->ops->del(p, fd);
}
static inline int poller_wait(struct poller *p, struct poller_event *evs, int max, int timeout_ms)
{
	return p->ops->wait(p, evs, max, timeout_ms);
}

/* The poller's own descriptor (see poller_ops.fd), or -EOPNOTSUPP. */
static inline int poller_fd(struct poller *p)
{
	return p->ops->fd ? p->ops->fd(p) : -EOPNOTSUPP;
}

/* A wake fd (see above). */
struct wakefd {
	int rfd, wfd; /* the same descriptor for an eventfd */
	bool semaphore;
};

/* Open w, non-blocking and close-on-exec. */
int wakefd_open(struct wakefd *w, bool semaphore);
/* Post once; never blocks. */
int wakefd_post(struct wakefd *w);
/* Take one post (semaphore) or all of them: 1 if there were any, 0 if none. */
int wakefd_take(struct wakefd *w);
void wakefd_close(struct wakefd *w);

/* For platform/ only: wake fds as pipes (platform/posix/wakefd_pipe.c), and
 * the OS's own kind (platform/<os>/): one descriptor, rfd == wfd, or -ENOTSUP
 * from open where the OS has none. */
int wakefd_pipe_open(struct wakefd *w, bool semaphore);
int wakefd_pipe_post(struct wakefd *w);
int wakefd_pipe_take(struct wakefd *w);
int wakefd_native_open(struct wakefd *w, bool semaphore);
int wakefd_native_post(struct wakefd *w);
int wakefd_native_take(struct wakefd *w);

#endif
