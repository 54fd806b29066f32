/*
 * poller_poll.c: the portable poller backend (common/base/poller.h) over
 * poll(), on any POSIX system; NFSRDMA_POLLER=poll selects it. The set is a
 * table under a lock; each wait polls a copy of it plus a wake pipe, which a
 * change made while a thread waits posts to, so the wait starts over with the
 * new set. Reporting starts where the last full batch stopped, so no
 * descriptor starves behind others.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/base/poller.h"

struct poll_entry {
	int fd;
	unsigned events;
	void *ptr;
};

struct poller_poll {
	struct poller base;
	pthread_mutex_t lock; /* set, n, cap, waiting */
	struct poll_entry *set;
	size_t n, cap;
	bool waiting;
	struct wakefd wake;
	/* the waiting thread's copy */
	struct pollfd *pfds;
	void **ptrs;
	size_t pcap, next;
};

static int poll_create(struct poller **out)
{
	struct poller_poll *p = calloc(1, sizeof(*p));
	int rc;

	if (p == NULL)
		return -ENOMEM;
	p->base.ops = &poller_poll_ops;
	if ((rc = wakefd_pipe_open(&p->wake, false)) != 0) {
		free(p);
		return rc;
	}
	pthread_mutex_init(&p->lock, NULL);
	*out = &p->base;
	return 0;
}

static void poll_destroy(struct poller *base)
{
	struct poller_poll *p = (struct poller_poll *)base;

	wakefd_close(&p->wake);
	pthread_mutex_destroy(&p->lock);
	free(p->set);
	free(p->pfds);
	free(p->ptrs);
	free(p);
}

/* The entry for fd, or NULL (p->lock held). */
static struct poll_entry *find(struct poller_poll *p, int fd)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->set[i].fd == fd)
			return &p->set[i];
	return NULL;
}

/* A change was made (p->lock held): a waiting thread starts over. */
static void changed(struct poller_poll *p)
{
	if (p->waiting)
		wakefd_pipe_post(&p->wake);
}

static int poll_add(struct poller *base, int fd, unsigned events, void *ptr)
{
	struct poller_poll *p = (struct poller_poll *)base;
	int rc = 0;

	pthread_mutex_lock(&p->lock);
	if (find(p, fd)) {
		rc = -EEXIST;
	} else if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		struct poll_entry *v = realloc(p->set, cap * sizeof(*v));

		if (v == NULL)
			rc = -ENOMEM;
		else
			p->set = v, p->cap = cap;
	}
	if (rc == 0) {
		p->set[p->n++] = (struct poll_entry){.fd = fd, .events = events, .ptr = ptr};
		changed(p);
	}
	pthread_mutex_unlock(&p->lock);
	return rc;
}

static int poll_mod(struct poller *base, int fd, unsigned events, void *ptr)
{
	struct poller_poll *p = (struct poller_poll *)base;
	struct poll_entry *e;

	pthread_mutex_lock(&p->lock);
	if ((e = find(p, fd)) != NULL) {
		e->events = events;
		e->ptr = ptr;
		changed(p);
	}
	pthread_mutex_unlock(&p->lock);
	return e ? 0 : -ENOENT;
}

static int poll_del(struct poller *base, int fd)
{
	struct poller_poll *p = (struct poller_poll *)base;
	struct poll_entry *e;

	pthread_mutex_lock(&p->lock);
	if ((e = find(p, fd)) != NULL) {
		*e = p->set[--p->n];
		changed(p);
	}
	pthread_mutex_unlock(&p->lock);
	return e ? 0 : -ENOENT;
}

/* Copy the set into the waiter's arrays, the wake pipe first (p->lock held). */
static int snapshot(struct poller_poll *p)
{
	size_t need = p->n + 1;

	if (need > p->pcap) {
		struct pollfd *f = realloc(p->pfds, need * sizeof(*f));
		void **v = f ? realloc(p->ptrs, need * sizeof(*v)) : NULL;

		if (f)
			p->pfds = f;
		if (v == NULL)
			return -ENOMEM;
		p->ptrs = v;
		p->pcap = need;
	}
	p->pfds[0] = (struct pollfd){.fd = p->wake.rfd, .events = POLLIN};
	p->ptrs[0] = NULL;
	for (size_t i = 0; i < p->n; i++) {
		const struct poll_entry *e = &p->set[i];

		p->pfds[i + 1] = (struct pollfd){
			.fd = e->fd,
			.events = (short)((e->events & POLLER_IN ? POLLIN : 0) |
					  (e->events & POLLER_OUT ? POLLOUT : 0)),
		};
		p->ptrs[i + 1] = e->ptr;
	}
	return (int)need;
}

/* Monotonic milliseconds. */
static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One poll of the set as it is now: the events, -1 if only a change woke it,
 * or a negative errno other than -1. */
static int poll_once(struct poller_poll *p, struct poller_event *out, int max, int timeout_ms)
{
	int n, got = 0, rc;
	size_t start;

	pthread_mutex_lock(&p->lock);
	n = snapshot(p);
	p->waiting = n > 0;
	pthread_mutex_unlock(&p->lock);
	if (n < 0)
		return n;
	rc = poll(p->pfds, (nfds_t)n, timeout_ms);
	pthread_mutex_lock(&p->lock);
	p->waiting = false;
	pthread_mutex_unlock(&p->lock);
	if (rc < 0)
		return errno == EPERM ? -EINVAL : -errno; /* -1 (EPERM) means woken */
	if (rc == 1 && p->pfds[0].revents) {
		wakefd_pipe_take(&p->wake);
		return -1;
	}
	if (p->pfds[0].revents)
		wakefd_pipe_take(&p->wake);
	start = p->next < (size_t)n - 1 ? p->next : 0;
	for (size_t k = 0; k + 1 < (size_t)n && got < max; k++) {
		size_t i = 1 + (start + k) % ((size_t)n - 1);
		short r = p->pfds[i].revents;

		if (r == 0)
			continue;
		out[got].ptr = p->ptrs[i];
		out[got].events = (r & (POLLIN | POLLHUP | POLLERR | POLLNVAL) ? POLLER_IN : 0) |
				  (r & POLLOUT ? POLLER_OUT : 0) |
				  (r & (POLLHUP | POLLERR | POLLNVAL) ? POLLER_ERR : 0);
		got++;
		p->next = i; /* the one after this starts the next batch */
	}
	return got;
}

/* Poll until something is ready or the time is up; a change made meanwhile
 * starts the poll over with the new set. */
static int poll_wait(struct poller *base, struct poller_event *out, int max, int timeout_ms)
{
	struct poller_poll *p = (struct poller_poll *)base;
	int64_t until = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;

	for (;;) {
		int64_t left = until < 0 ? -1 : until - now_ms();
		int got = poll_once(p, out, max, left < 0 && until >= 0 ? 0 : (int)left);

		if (got != -1 || (until >= 0 && now_ms() >= until))
			return got == -1 ? 0 : got;
	}
}

const struct poller_ops poller_poll_ops = {
	.name = "poll",
	.create = poll_create,
	.destroy = poll_destroy,
	.add = poll_add,
	.mod = poll_mod,
	.del = poll_del,
	.wait = poll_wait,
};
