/*
 * workq.h: a queue of work run by a pool of threads, in the order submitted.
 * Used for the RPC workers, the RPC/RDMA server's buffer releases, and the
 * registration strategy's background registrations.
 */
#ifndef NFSRDMA_WORKQ_H
#define NFSRDMA_WORKQ_H

/* Embed one in whatever needs running; run() gets it back. */
struct work {
	void (*run)(struct work *w);
	struct work *next;
};

struct workq;

/* nthreads threads (at least 1) named name (for ps/gdb). */
int workq_create(unsigned nthreads, const char *name, struct workq **out);
/* Queue w (any thread; never blocks). */
void workq_submit(struct workq *q, struct work *w);
/* Run what is queued, stop the threads, free. */
void workq_destroy(struct workq *q);

#endif
