/* evloop.c: epoll loop with an eventfd for queued calls and timerfd timers. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>

#include "evloop.h"
#include "log.h"

struct handler {
	int fd;
	int is_timer;
	int deleted; /* by evloop_del: not to be called again, even for fetched events */
	evloop_fd_fn fn;
	evloop_io_fn io_fn; /* an I/O handler (evloop_add_io) instead of fn */
	void *arg;
	struct handler *next;
};

/* An I/O handler's handle is its handler. */
struct evloop_io {
	struct handler h;
};

struct call {
	evloop_call_fn fn;
	void *arg;
	struct call *next;
};

struct evloop {
	int epfd;
	int wakefd;
	pthread_t thread;
	int started;
	int stopping;
	pthread_mutex_t lock; /* protects calls and handlers */
	struct call *calls, *calls_tail;
	struct handler *handlers;
};

int evloop_create(struct evloop **out)
{
	struct evloop *l = calloc(1, sizeof(*l));
	struct epoll_event ev = {.events = EPOLLIN};

	if (!l)
		return -ENOMEM;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	l->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (l->epfd < 0 || l->wakefd < 0) {
		int rc = -errno;

		if (l->epfd >= 0)
			close(l->epfd);
		if (l->wakefd >= 0)
			close(l->wakefd);
		free(l);
		return rc;
	}
	ev.data.ptr = NULL; /* NULL marks the wake fd */
	epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->wakefd, &ev);
	pthread_mutex_init(&l->lock, NULL);
	*out = l;
	return 0;
}

/* epoll's events for EVLOOP_IN/OUT. */
static uint32_t epoll_events(unsigned events)
{
	return (events & EVLOOP_IN ? EPOLLIN : 0) | (events & EVLOOP_OUT ? EPOLLOUT : 0);
}

/* Add h (filled in) to the loop, waiting for events. */
static int add(struct evloop *l, struct handler *h, unsigned events)
{
	struct epoll_event ev = {.events = epoll_events(events), .data.ptr = h};

	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, h->fd, &ev) < 0) {
		int rc = -errno;

		free(h);
		return rc;
	}
	pthread_mutex_lock(&l->lock);
	h->next = l->handlers;
	l->handlers = h;
	pthread_mutex_unlock(&l->lock);
	return 0;
}

static int add_handler(struct evloop *l, int fd, int is_timer, evloop_fd_fn fn, void *arg)
{
	struct handler *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	*h = (struct handler){.fd = fd, .is_timer = is_timer, .fn = fn, .arg = arg};
	return add(l, h, EVLOOP_IN);
}

int evloop_add_io(struct evloop *l, int fd, unsigned events, evloop_io_fn fn, void *arg,
		  struct evloop_io **out)
{
	struct evloop_io *io = calloc(1, sizeof(*io));
	int rc;

	if (!io)
		return -ENOMEM;
	io->h = (struct handler){.fd = fd, .io_fn = fn, .arg = arg};
	if ((rc = add(l, &io->h, events)) == 0)
		*out = io;
	return rc;
}

int evloop_io_set(struct evloop *l, struct evloop_io *io, unsigned events)
{
	struct epoll_event ev = {.events = epoll_events(events), .data.ptr = &io->h};

	return epoll_ctl(l->epfd, EPOLL_CTL_MOD, io->h.fd, &ev) < 0 ? -errno : 0;
}

int evloop_add(struct evloop *l, int fd, evloop_fd_fn fn, void *arg)
{
	return add_handler(l, fd, 0, fn, arg);
}

int evloop_add_timer(struct evloop *l, unsigned period_ms, evloop_fd_fn fn, void *arg)
{
	struct itimerspec its = {0};
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK), rc;

	if (fd < 0)
		return -errno;
	its.it_interval.tv_sec = period_ms / 1000;
	its.it_interval.tv_nsec = (long)(period_ms % 1000) * 1000000;
	its.it_value = its.it_interval;
	timerfd_settime(fd, 0, &its, NULL);
	rc = add_handler(l, fd, 1, fn, arg);
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}

int evloop_del(struct evloop *l, int fd)
{
	struct handler **pp, *h = NULL;

	epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
	pthread_mutex_lock(&l->lock);
	for (pp = &l->handlers; *pp; pp = &(*pp)->next) {
		if ((*pp)->fd == fd) {
			h = *pp;
			*pp = h->next;
			break;
		}
	}
	pthread_mutex_unlock(&l->lock);
	if (!h)
		return -ENOENT;
	__atomic_store_n(&h->deleted, 1, __ATOMIC_RELEASE);
	if (h->is_timer)
		close(h->fd);
	/* epoll may still hand us h in the current batch: free it later, in loop order */
	evloop_call(l, free, h);
	return 0;
}

int evloop_call(struct evloop *l, evloop_call_fn fn, void *arg)
{
	struct call *c = malloc(sizeof(*c));
	uint64_t one = 1;

	if (!c)
		return -ENOMEM;
	*c = (struct call){.fn = fn, .arg = arg};
	pthread_mutex_lock(&l->lock);
	if (l->calls_tail)
		l->calls_tail->next = c;
	else
		l->calls = c;
	l->calls_tail = c;
	pthread_mutex_unlock(&l->lock);
	if (write(l->wakefd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_err("cannot wake the event loop: %s", strerror(errno));
	return 0;
}

int evloop_in_loop(struct evloop *l)
{
	return l->started && pthread_equal(pthread_self(), l->thread);
}

/* Run the queued calls; returns 1 if the loop should stop. */
static int run_calls(struct evloop *l)
{
	struct call *c;
	uint64_t n;

	if (read(l->wakefd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		log_err("event loop wake fd: %s", strerror(errno));
	pthread_mutex_lock(&l->lock);
	c = l->calls;
	l->calls = l->calls_tail = NULL;
	pthread_mutex_unlock(&l->lock);
	while (c) {
		struct call *next = c->next;

		c->fn(c->arg);
		free(c);
		c = next;
	}
	return __atomic_load_n(&l->stopping, __ATOMIC_ACQUIRE);
}

static void *loop_main(void *arg)
{
	struct evloop *l = arg;
	struct epoll_event evs[64];

	for (;;) {
		int n = epoll_wait(l->epfd, evs, 64, -1);
		int stop = 0;

		if (n < 0 && errno != EINTR) {
			log_err("epoll_wait: %s", strerror(errno));
			break;
		}
		for (int i = 0; i < n; i++) {
			struct handler *h = evs[i].data.ptr;

			if (h == NULL) {
				stop = run_calls(l);
				continue;
			}
			/* a call or handler earlier in this batch may have deleted h
			 * and freed what its argument points to */
			if (__atomic_load_n(&h->deleted, __ATOMIC_ACQUIRE))
				continue;
			if (h->io_fn) {
				uint32_t e = evs[i].events;

				h->io_fn(h->arg,
					 (e & (EPOLLIN | EPOLLHUP | EPOLLERR) ? EVLOOP_IN : 0) |
						 (e & EPOLLOUT ? EVLOOP_OUT : 0) |
						 (e & (EPOLLHUP | EPOLLERR) ? EVLOOP_ERR : 0));
				continue;
			}
			if (h->is_timer) {
				uint64_t ticks;

				if (read(h->fd, &ticks, sizeof(ticks)) < 0)
					continue;
			}
			h->fn(h->arg);
		}
		if (stop)
			break;
	}
	return NULL;
}

int evloop_start(struct evloop *l, const char *name)
{
	int rc = pthread_create(&l->thread, NULL, loop_main, l);

	if (rc)
		return -rc;
	l->started = 1;
	if (name)
		pthread_setname_np(l->thread, name);
	return 0;
}

int evloop_serve_fd(int fd, evloop_fd_fn fn, void *arg, const char *name, struct evloop **out)
{
	struct evloop *l;
	int rc = evloop_create(&l);

	if (rc)
		return rc;
	if ((rc = evloop_add(l, fd, fn, arg)) != 0 || (rc = evloop_start(l, name)) != 0) {
		evloop_destroy(l);
		return rc;
	}
	*out = l;
	return 0;
}

static void set_stopping(void *arg)
{
	struct evloop *l = arg;

	__atomic_store_n(&l->stopping, 1, __ATOMIC_RELEASE);
}

void evloop_destroy(struct evloop *l)
{
	if (!l)
		return;
	if (l->started) {
		evloop_call(l, set_stopping, l);
		pthread_join(l->thread, NULL);
	}
	run_calls(l); /* whatever was queued after the last pass (frees) */
	while (l->handlers) {
		struct handler *h = l->handlers;

		l->handlers = h->next;
		if (h->is_timer)
			close(h->fd);
		free(h);
	}
	close(l->wakefd);
	close(l->epfd);
	pthread_mutex_destroy(&l->lock);
	free(l);
}
