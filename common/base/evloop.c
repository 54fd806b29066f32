/*
 * evloop.c: an event loop over the platform's poller (poller.h: epoll, event
 * ports or poll), a wake fd for queued calls, and periodic timers kept by the
 * loop itself (the wait's timeout is the next one due).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "evloop.h"
#include "log.h"
#include "poller.h"

#define EVLOOP_BATCH 64

struct handler {
	int fd;
	int deleted; /* by evloop_del: not to be called again, even for fetched events */
	evloop_fd_fn fn;
	evloop_io_fn io_fn; /* an I/O handler (evloop_add_io) instead of fn */
	void *arg;
	struct handler *next;
	struct evloop_job free_job; /* frees it in loop order (evloop_del) */
};

/* An I/O handler's handle is its handler. */
struct evloop_io {
	struct handler h;
};

struct evloop_timer {
	uint64_t period_ns, due_ns;
	int deleted; /* by evloop_del_timer */
	evloop_fd_fn fn;
	void *arg;
	struct evloop_timer *next;
	struct evloop_job free_job; /* frees it in loop order (evloop_del_timer) */
};

struct evloop {
	struct poller *poller;
	struct wakefd wake;
	pthread_t thread;
	int started;
	int stopping;
	pthread_mutex_t lock; /* protects calls, handlers and timers */
	struct evloop_job *calls, *calls_tail;
	struct evloop_job stop_job; /* evloop_destroy's */
	struct handler *handlers;
	struct evloop_timer *timers;
	uint64_t spin_ns;     /* evloop_set_spin */
	uint64_t spin_max_ns; /* evloop_set_spin_max */
	uint64_t window_ns;   /* the adaptive spin's window now (loop thread) */
};

int evloop_create(struct evloop **out)
{
	struct evloop *l = calloc(1, sizeof(*l));
	int rc;

	if (!l)
		return -ENOMEM;
	if ((rc = poller_create(&l->poller)) != 0) {
		free(l);
		return rc;
	}
	/* the wake fd's events carry NULL */
	if ((rc = wakefd_open(&l->wake, false)) != 0 ||
	    (rc = poller_add(l->poller, l->wake.rfd, POLLER_IN, NULL)) != 0) {
		wakefd_close(&l->wake);
		poller_destroy(l->poller);
		free(l);
		return rc;
	}
	pthread_mutex_init(&l->lock, NULL);
	*out = l;
	return 0;
}

/* The poller's events for EVLOOP_IN/OUT. */
static unsigned poller_events(unsigned events)
{
	return (events & EVLOOP_IN ? POLLER_IN : 0) | (events & EVLOOP_OUT ? POLLER_OUT : 0);
}

/* Add h (filled in) to the loop, waiting for events. */
static int add(struct evloop *l, struct handler *h, unsigned events)
{
	int rc = poller_add(l->poller, h->fd, poller_events(events), h);

	if (rc != 0) {
		free(h);
		return rc;
	}
	pthread_mutex_lock(&l->lock);
	h->next = l->handlers;
	l->handlers = h;
	pthread_mutex_unlock(&l->lock);
	return 0;
}

static int add_handler(struct evloop *l, int fd, evloop_fd_fn fn, void *arg)
{
	struct handler *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	*h = (struct handler){.fd = fd, .fn = fn, .arg = arg};
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
	return poller_mod(l->poller, io->h.fd, poller_events(events), &io->h);
}

int evloop_add(struct evloop *l, int fd, evloop_fd_fn fn, void *arg)
{
	return add_handler(l, fd, fn, arg);
}

int evloop_add_timer(struct evloop *l, unsigned period_ms, evloop_fd_fn fn, void *arg,
		     struct evloop_timer **out)
{
	struct evloop_timer *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	if (period_ms == 0)
		period_ms = 1;
	t->period_ns = (uint64_t)period_ms * 1000000u;
	t->due_ns = clock_now_ns() + t->period_ns;
	t->fn = fn;
	t->arg = arg;
	pthread_mutex_lock(&l->lock);
	t->next = l->timers;
	l->timers = t;
	pthread_mutex_unlock(&l->lock);
	if (out)
		*out = t;
	if (wakefd_post(&l->wake) != 0) /* a loop already waiting recomputes its timeout */
		log_err("cannot wake the event loop");
	return 0;
}

void evloop_del_timer(struct evloop *l, struct evloop_timer *t)
{
	struct evloop_timer **pp;

	pthread_mutex_lock(&l->lock);
	for (pp = &l->timers; *pp && *pp != t; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = t->next;
	pthread_mutex_unlock(&l->lock);
	__atomic_store_n(&t->deleted, 1, __ATOMIC_RELEASE);
	/* the loop may be about to call it: free it later, in loop order */
	evloop_post_once(l, &t->free_job, free, t);
}

int evloop_del(struct evloop *l, int fd)
{
	struct handler **pp, *h = NULL;

	poller_del(l->poller, fd);
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
	/* the poller may still hand us h in the current batch: free it later, in loop order */
	evloop_post_once(l, &h->free_job, free, h);
	return 0;
}

void evloop_job_init(struct evloop_job *j, evloop_call_fn fn, void *arg)
{
	*j = (struct evloop_job){.fn = fn, .arg = arg};
}

int evloop_post(struct evloop *l, struct evloop_job *j)
{
	/* (paired with run_calls' exchange: what a post that found j queued
	 * did before is seen by j's run) */
	if (__atomic_exchange_n(&j->queued, 1, __ATOMIC_ACQ_REL))
		return 0;
	j->next = NULL;
	pthread_mutex_lock(&l->lock);
	if (l->calls_tail)
		l->calls_tail->next = j;
	else
		l->calls = j;
	l->calls_tail = j;
	pthread_mutex_unlock(&l->lock);
	if (wakefd_post(&l->wake) != 0)
		log_err("cannot wake the event loop");
	return 1;
}

int evloop_call(struct evloop *l, evloop_call_fn fn, void *arg)
{
	struct evloop_job *j = malloc(sizeof(*j));

	if (!j)
		return -ENOMEM;
	evloop_job_init(j, fn, arg);
	j->owned = 1;
	evloop_post(l, j);
	return 0;
}

void evloop_post_once(struct evloop *l, struct evloop_job *j, evloop_call_fn fn, void *arg)
{
	evloop_job_init(j, fn, arg);
	evloop_post(l, j);
}

int evloop_in_loop(struct evloop *l)
{
	return l->started && pthread_equal(pthread_self(), l->thread);
}

/* Run the queued calls; returns 1 if the loop should stop. */
static int run_calls(struct evloop *l)
{
	struct evloop_job *j;

	wakefd_take(&l->wake);
	pthread_mutex_lock(&l->lock);
	j = l->calls;
	l->calls = l->calls_tail = NULL;
	pthread_mutex_unlock(&l->lock);
	while (j) {
		/* once it is not queued, j may be queued again (next reset) or
		 * freed by its own call: nothing of it is read after */
		struct evloop_job *next = j->next;
		evloop_call_fn fn = j->fn;
		void *arg = j->arg;

		if (j->owned)
			free(j);
		else
			__atomic_exchange_n(&j->queued, 0, __ATOMIC_ACQ_REL);
		fn(arg);
		j = next;
	}
	return __atomic_load_n(&l->stopping, __ATOMIC_ACQUIRE);
}

/* Whether calls are queued (the loop's thread has gone: evloop_destroy). */
static int calls_queued(struct evloop *l)
{
	int any;

	pthread_mutex_lock(&l->lock);
	any = l->calls != NULL;
	pthread_mutex_unlock(&l->lock);
	return any;
}

/* Call the timers that are due; returns ms until the next one (-1: none). */
static int run_timers(struct evloop *l)
{
	uint64_t now = clock_now_ns(), next = UINT64_MAX;

	for (;;) {
		struct evloop_timer *t, *due = NULL;

		pthread_mutex_lock(&l->lock);
		for (t = l->timers; t; t = t->next) {
			if (!due && t->due_ns <= now) {
				due = t;
				/* periodic; ticks missed while busy are not made up */
				t->due_ns += t->period_ns;
				if (t->due_ns <= now)
					t->due_ns = now + t->period_ns;
			}
		}
		if (!due) {
			for (t = l->timers; t; t = t->next)
				next = t->due_ns < next ? t->due_ns : next;
			pthread_mutex_unlock(&l->lock);
			break;
		}
		pthread_mutex_unlock(&l->lock);
		if (!__atomic_load_n(&due->deleted, __ATOMIC_ACQUIRE))
			due->fn(due->arg);
	}
	if (next == UINT64_MAX)
		return -1;
	return (int)((next - now + 999999u) / 1000000u);
}

/* One event of a batch. */
static void dispatch(struct handler *h, unsigned events)
{
	/* a call or handler earlier in this batch may have deleted h
	 * and freed what its argument points to */
	if (__atomic_load_n(&h->deleted, __ATOMIC_ACQUIRE))
		return;
	if (h->io_fn)
		h->io_fn(h->arg, (events & POLLER_IN ? EVLOOP_IN : 0) |
					 (events & POLLER_OUT ? EVLOOP_OUT : 0) |
					 (events & POLLER_ERR ? EVLOOP_ERR : 0));
	else
		h->fn(h->arg);
}

/* A wait of loop_main's, for clock_spin_wait. */
struct loop_look {
	struct evloop *l;
	struct poller_event *evs;
};

static int loop_look(void *arg, int ms)
{
	struct loop_look *w = arg;

	return poller_wait(w->l->poller, w->evs, EVLOOP_BATCH, ms);
}

static void *loop_main(void *arg)
{
	struct evloop *l = arg;
	struct poller_event evs[EVLOOP_BATCH];
	int timeout = run_timers(l);

	for (;;) {
		struct loop_look look = {l, evs};
		/* the fixed spin, else the adaptive window (within the ceiling
		 * now in force) */
		uint64_t spin = __atomic_load_n(&l->spin_ns, __ATOMIC_RELAXED);
		uint64_t max = spin ? 0 : __atomic_load_n(&l->spin_max_ns, __ATOMIC_RELAXED);
		uint64_t start = max ? clock_now_ns() : 0;
		int n, stop = 0;

		if (max)
			spin = clock_spin_window(l->window_ns, max);
		n = clock_spin_wait(spin, timeout, loop_look, &look);
		if (max && n != -EINTR) /* a signal says nothing of the traffic */
			clock_spin_adapt(&l->window_ns, max, clock_now_ns() - start, n > 0);
		if (n < 0 && n != -EINTR) {
			log_err("poller_wait: %s", strerror(-n));
			break;
		}
		for (int i = 0; i < n; i++) {
			if (evs[i].ptr == NULL)
				stop = run_calls(l);
			else
				dispatch(evs[i].ptr, evs[i].events);
		}
		if (stop)
			break;
		timeout = run_timers(l);
	}
	return NULL;
}

void evloop_set_spin(struct evloop *l, unsigned us)
{
	__atomic_store_n(&l->spin_ns, (uint64_t)us * 1000u, __ATOMIC_RELAXED);
}

void evloop_set_spin_max(struct evloop *l, unsigned max_us)
{
	__atomic_store_n(&l->spin_max_ns, (uint64_t)max_us * 1000u, __ATOMIC_RELAXED);
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
		evloop_post_once(l, &l->stop_job, set_stopping, l);
		pthread_join(l->thread, NULL);
	}
	while (calls_queued(l)) /* what was queued after the last pass, and by it (frees) */
		run_calls(l);
	while (l->handlers) {
		struct handler *h = l->handlers;

		l->handlers = h->next;
		free(h);
	}
	while (l->timers) {
		struct evloop_timer *t = l->timers;

		l->timers = t->next;
		free(t);
	}
	wakefd_close(&l->wake);
	poller_destroy(l->poller);
	pthread_mutex_destroy(&l->lock);
	free(l);
}
