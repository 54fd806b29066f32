/* poller_epoll.c (Linux): the native poller backend (common/base/poller.h). */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/epoll.h>

#include "common/base/poller.h"

#define EPOLL_BATCH 64

struct poller_epoll {
	struct poller base;
	int epfd;
};

static int epoll_create_(struct poller **out)
{
	struct poller_epoll *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return -ENOMEM;
	p->base.ops = &poller_native_ops;
	if ((p->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0) {
		int rc = -errno;

		free(p);
		return rc;
	}
	*out = &p->base;
	return 0;
}

static void epoll_destroy(struct poller *base)
{
	struct poller_epoll *p = (struct poller_epoll *)base;

	close(p->epfd);
	free(p);
}

/* EPOLL_CTL_ADD or _MOD. */
static int ctl(struct poller *base, int op, int fd, unsigned events, void *ptr)
{
	struct poller_epoll *p = (struct poller_epoll *)base;
	struct epoll_event ev = {
		.events = (events & POLLER_IN ? EPOLLIN : 0) | (events & POLLER_OUT ? EPOLLOUT : 0),
		.data.ptr = ptr,
	};

	return epoll_ctl(p->epfd, op, fd, &ev) < 0 ? -errno : 0;
}

static int epoll_add(struct poller *base, int fd, unsigned events, void *ptr)
{
	return ctl(base, EPOLL_CTL_ADD, fd, events, ptr);
}

static int epoll_mod(struct poller *base, int fd, unsigned events, void *ptr)
{
	return ctl(base, EPOLL_CTL_MOD, fd, events, ptr);
}

static int epoll_del(struct poller *base, int fd)
{
	struct poller_epoll *p = (struct poller_epoll *)base;

	return epoll_ctl(p->epfd, EPOLL_CTL_DEL, fd, NULL) < 0 ? -errno : 0;
}

static int epoll_wait_(struct poller *base, struct poller_event *out, int max, int timeout_ms)
{
	struct poller_epoll *p = (struct poller_epoll *)base;
	struct epoll_event evs[EPOLL_BATCH];
	int n = epoll_wait(p->epfd, evs, max < EPOLL_BATCH ? max : EPOLL_BATCH, timeout_ms);

	if (n < 0)
		return -errno;
	for (int i = 0; i < n; i++) {
		uint32_t e = evs[i].events;

		out[i].ptr = evs[i].data.ptr;
		out[i].events = (e & (EPOLLIN | EPOLLHUP | EPOLLERR) ? POLLER_IN : 0) |
				(e & EPOLLOUT ? POLLER_OUT : 0) |
				(e & (EPOLLHUP | EPOLLERR) ? POLLER_ERR : 0);
	}
	return n;
}

/* An epoll descriptor is itself readable while it has events to give. */
static int epoll_fd(struct poller *base)
{
	return ((struct poller_epoll *)base)->epfd;
}

const struct poller_ops poller_native_ops = {
	.name = "epoll",
	.create = epoll_create_,
	.destroy = epoll_destroy,
	.add = epoll_add,
	.mod = epoll_mod,
	.del = epoll_del,
	.wait = epoll_wait_,
	.fd = epoll_fd,
};
