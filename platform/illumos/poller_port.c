/*
 * poller_port.c (illumos): the native poller backend (common/base/poller.h)
 * over event ports. port_associate is one-shot: a descriptor whose event
 * port_getn returned is no longer associated. The descriptors of a batch are
 * associated again at the start of the next wait (as libuv does), after the
 * caller has handled them, which gives the level-triggered behaviour
 * poller.h promises: still ready, reported again. A change made meanwhile
 * (poller_mod) associates at once and needs no re-arm.
 *
 * Compiled and link-checked only (scripts/check-illumos.sh): nothing here
 * runs illumos.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <port.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/base/poller.h"

#define PORT_BATCH 64

struct port_fd {
	bool used;
	bool fired; /* its event was returned: associate again at the next wait */
	unsigned events;
	void *ptr;
};

struct poller_port {
	struct poller base;
	int port;
	pthread_mutex_t lock; /* fds, nfds, rearm, nrearm */
	struct port_fd *fds;  /* by descriptor */
	size_t nfds;
	int rearm[PORT_BATCH]; /* descriptors of the last batch */
	int nrearm;
};

static int port_create_(struct poller **out)
{
	struct poller_port *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return -ENOMEM;
	p->base.ops = &poller_native_ops;
	if ((p->port = port_create()) < 0) {
		int rc = -errno;

		free(p);
		return rc;
	}
	fcntl(p->port, F_SETFD, FD_CLOEXEC);
	pthread_mutex_init(&p->lock, NULL);
	*out = &p->base;
	return 0;
}

static void port_destroy(struct poller *base)
{
	struct poller_port *p = (struct poller_port *)base;

	close(p->port);
	pthread_mutex_destroy(&p->lock);
	free(p->fds);
	free(p);
}

/* Associate fd for what e says (p->lock held). */
static int associate(struct poller_port *p, int fd, const struct port_fd *e)
{
	int ev = (e->events & POLLER_IN ? POLLIN : 0) | (e->events & POLLER_OUT ? POLLOUT : 0);

	return port_associate(p->port, PORT_SOURCE_FD, (uintptr_t)fd, ev, e->ptr) < 0 ? -errno : 0;
}

/* The slot of fd, growing the table (p->lock held); NULL if out of memory. */
static struct port_fd *slot(struct poller_port *p, int fd)
{
	if ((size_t)fd >= p->nfds) {
		size_t n = p->nfds ? p->nfds : 64;
		struct port_fd *v;

		while (n <= (size_t)fd)
			n *= 2;
		if ((v = realloc(p->fds, n * sizeof(*v))) == NULL)
			return NULL;
		memset(v + p->nfds, 0, (n - p->nfds) * sizeof(*v));
		p->fds = v;
		p->nfds = n;
	}
	return &p->fds[fd];
}

/* Add (add) or change a descriptor and associate it. */
static int set(struct poller *base, int fd, unsigned events, void *ptr, bool add)
{
	struct poller_port *p = (struct poller_port *)base;
	struct port_fd *e;
	int rc;

	if (fd < 0)
		return -EBADF;
	pthread_mutex_lock(&p->lock);
	e = slot(p, fd);
	if (e == NULL)
		rc = -ENOMEM;
	else if (e->used == add)
		rc = add ? -EEXIST : -ENOENT;
	else if ((rc = associate(p, fd, &(struct port_fd){.events = events, .ptr = ptr})) == 0)
		*e = (struct port_fd){.used = true, .events = events, .ptr = ptr};
	pthread_mutex_unlock(&p->lock);
	return rc;
}

static int port_add(struct poller *base, int fd, unsigned events, void *ptr)
{
	return set(base, fd, events, ptr, true);
}

static int port_mod(struct poller *base, int fd, unsigned events, void *ptr)
{
	return set(base, fd, events, ptr, false);
}

static int port_del(struct poller *base, int fd)
{
	struct poller_port *p = (struct poller_port *)base;
	int rc = -ENOENT;

	pthread_mutex_lock(&p->lock);
	if (fd >= 0 && (size_t)fd < p->nfds && p->fds[fd].used) {
		/* ENOENT: fired and not associated again yet */
		port_dissociate(p->port, PORT_SOURCE_FD, (uintptr_t)fd);
		p->fds[fd] = (struct port_fd){0};
		rc = 0;
	}
	pthread_mutex_unlock(&p->lock);
	return rc;
}

/* Associate again what the last batch returned and nobody changed since. */
static void rearm(struct poller_port *p)
{
	pthread_mutex_lock(&p->lock);
	for (int i = 0; i < p->nrearm; i++) {
		struct port_fd *e = &p->fds[p->rearm[i]];

		if (e->used && e->fired) {
			e->fired = false;
			associate(p, p->rearm[i], e);
		}
	}
	p->nrearm = 0;
	pthread_mutex_unlock(&p->lock);
}

static int port_wait(struct poller *base, struct poller_event *out, int max, int timeout_ms)
{
	struct poller_port *p = (struct poller_port *)base;
	port_event_t evs[PORT_BATCH];
	struct timespec ts, *tsp = NULL;
	uint_t nget = 1;
	int n;

	rearm(p);
	if (timeout_ms >= 0) {
		ts.tv_sec = timeout_ms / 1000;
		ts.tv_nsec = (long)(timeout_ms % 1000) * 1000000;
		tsp = &ts;
	}
	if (max > PORT_BATCH)
		max = PORT_BATCH;
	if (port_getn(p->port, evs, (uint_t)max, &nget, tsp) < 0 && errno != ETIME)
		return -errno;
	n = (int)nget;
	pthread_mutex_lock(&p->lock);
	for (int i = 0; i < n; i++) {
		int fd = (int)evs[i].portev_object, e = evs[i].portev_events;
		struct port_fd *s = (size_t)fd < p->nfds ? &p->fds[fd] : NULL;

		if (s && s->used && s->ptr == evs[i].portev_user && !s->fired) {
			s->fired = true;
			p->rearm[p->nrearm++] = fd;
		}
		out[i].ptr = evs[i].portev_user;
		out[i].events = (e & (POLLIN | POLLHUP | POLLERR | POLLNVAL) ? POLLER_IN : 0) |
				(e & POLLOUT ? POLLER_OUT : 0) |
				(e & (POLLHUP | POLLERR | POLLNVAL) ? POLLER_ERR : 0);
	}
	pthread_mutex_unlock(&p->lock);
	return n;
}

const struct poller_ops poller_native_ops = {
	.name = "port",
	.create = port_create_,
	.destroy = port_destroy,
	.add = port_add,
	.mod = port_mod,
	.del = port_del,
	.wait = port_wait,
};
