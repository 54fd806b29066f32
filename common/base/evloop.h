/*
 * evloop.h: a small event loop run by one thread over the platform's poller
 * (poller.h): fd handlers, periodic timers, and calls that other threads queue
 * to run in the loop's thread (evloop_call, or evloop_post for a call kept in
 * the caller's own object, which cannot fail). A plain
 * handler is called when its fd is readable; an I/O handler chooses what it
 * waits for (readable, writable, both or neither) and is told what happened.
 */
#ifndef NFSRDMA_EVLOOP_H
#define NFSRDMA_EVLOOP_H

#include <stdint.h>

struct evloop;
typedef void (*evloop_fd_fn)(void *arg);
typedef void (*evloop_call_fn)(void *arg);

#define EVLOOP_IN  1u /* readable, or the peer hung up (a read will say) */
#define EVLOOP_OUT 2u /* writable */
#define EVLOOP_ERR 4u /* hung up or failed: reported whatever was asked for */
typedef void (*evloop_io_fn)(void *arg, unsigned events);
struct evloop_io;
struct evloop_timer;

/* A call to run in the loop thread, kept in the caller's object so that
 * queueing it needs no memory (evloop_post); its fields are the loop's. */
struct evloop_job {
	evloop_call_fn fn;
	void *arg;
	struct evloop_job *next;
	int queued; /* between evloop_post and the start of its run */
	int owned;  /* made by evloop_call: freed when it runs */
};

int evloop_create(struct evloop **out);
/* Start the loop's thread. */
int evloop_start(struct evloop *l, const char *name);
/* Before sleeping for events, look for them without sleeping for up to us
 * microseconds (0, the default: sleep at once). Busy polling: it spares a
 * busy loop the wake-up per event and costs up to us of CPU per wait. */
void evloop_set_spin(struct evloop *l, unsigned us);
/* Without a fixed spin, adapt the spin to the events, up to max_us (0, the
 * default: no adaptive spin): it grows while the loop is woken within max_us
 * of starting to wait and shrinks to nothing when events come further apart,
 * so an idle loop does not spin, and spins up to max_us per wait where each
 * spin spares a wake-up. */
void evloop_set_spin_max(struct evloop *l, unsigned max_us);
/* Call fn(arg) in the loop thread whenever fd is readable. Loop thread or before start. */
int evloop_add(struct evloop *l, int fd, evloop_fd_fn fn, void *arg);
/* Call fn(arg, what happened) in the loop thread when fd is ready for what
 * events asks (EVLOOP_IN, EVLOOP_OUT); *out is the handle for evloop_io_set.
 * Remove it with evloop_del. Any thread. */
int evloop_add_io(struct evloop *l, int fd, unsigned events, evloop_io_fn fn, void *arg,
		  struct evloop_io **out);
/* Change what an I/O handler waits for; 0 waits only for EVLOOP_ERR. */
int evloop_io_set(struct evloop *l, struct evloop_io *io, unsigned events);
/* Stop calling fd's handler. From the loop thread, the handler is not called
 * again once this returns, not even for an event already fetched, so its
 * argument may be freed at once; from another thread, it may still be running. */
int evloop_del(struct evloop *l, int fd);
/* Queue fn(arg) to run in the loop thread (any thread; never blocks);
 * -ENOMEM if it cannot. */
int evloop_call(struct evloop *l, evloop_call_fn fn, void *arg);
/* Set j up to call fn(arg) (before its first evloop_post). */
void evloop_job_init(struct evloop_job *j, evloop_call_fn fn, void *arg);
/* Queue j to run once in the loop thread, after the calls queued before it,
 * unless it is queued already: 1 if queued now, 0 if it was (it keeps its
 * place, and its run sees what the caller did before). It is no longer
 * queued once its run starts, so it may queue itself again. Any thread; never
 * fails, never blocks. */
int evloop_post(struct evloop *l, struct evloop_job *j);
/* evloop_job_init and evloop_post, for a job queued once in its life. */
void evloop_post_once(struct evloop *l, struct evloop_job *j, evloop_call_fn fn, void *arg);
/* Whether the caller is the loop's thread. */
int evloop_in_loop(struct evloop *l);
/* Stop the thread after the calls queued so far, join it, run what those
 * queued in turn, free the loop. */
void evloop_destroy(struct evloop *l);
/* A loop of its own that calls fn(arg) whenever fd is readable; stop it with
 * evloop_destroy (the handler is not running once that returns). */
int evloop_serve_fd(int fd, evloop_fd_fn fn, void *arg, const char *name, struct evloop **out);
/* A periodic timer: fn(arg) every period_ms in the loop thread; *out (if not
 * NULL) is its handle for evloop_del_timer. Any thread. */
int evloop_add_timer(struct evloop *l, unsigned period_ms, evloop_fd_fn fn, void *arg,
		     struct evloop_timer **out);
/* Stop a timer, as evloop_del stops a handler. */
void evloop_del_timer(struct evloop *l, struct evloop_timer *t);

#endif
