/*
 * evloop.h: a small epoll event loop run by one thread: fd handlers, and calls
 * that other threads queue to run in the loop's thread (evloop_call).
 */
#ifndef NFSRDMA_EVLOOP_H
#define NFSRDMA_EVLOOP_H

#include <stdint.h>

struct evloop;
typedef void (*evloop_fd_fn)(void *arg);
typedef void (*evloop_call_fn)(void *arg);

int evloop_create(struct evloop **out);
/* Start the loop's thread. */
int evloop_start(struct evloop *l, const char *name);
/* Call fn(arg) in the loop thread whenever fd is readable. Loop thread or before start. */
int evloop_add(struct evloop *l, int fd, evloop_fd_fn fn, void *arg);
/* Stop calling fd's handler. From the loop thread, the handler is not called
 * again once this returns, not even for an event already fetched, so its
 * argument may be freed at once; from another thread, it may still be running. */
int evloop_del(struct evloop *l, int fd);
/* Queue fn(arg) to run in the loop thread (any thread; never blocks). */
int evloop_call(struct evloop *l, evloop_call_fn fn, void *arg);
/* Whether the caller is the loop's thread. */
int evloop_in_loop(struct evloop *l);
/* Stop the thread after the calls queued so far, join it, free the loop. */
void evloop_destroy(struct evloop *l);
/* A loop of its own that calls fn(arg) whenever fd is readable; stop it with
 * evloop_destroy (the handler is not running once that returns). */
int evloop_serve_fd(int fd, evloop_fd_fn fn, void *arg, const char *name, struct evloop **out);
/* A periodic timer: fn(arg) every period_ms in the loop thread. Returns the timer fd. */
int evloop_add_timer(struct evloop *l, unsigned period_ms, evloop_fd_fn fn, void *arg);

#endif
