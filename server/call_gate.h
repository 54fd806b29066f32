/*
 * call_gate.h: the calls of one kind that go into storage which may stop
 * answering: the NFS calls of one export, the lock manager's calls. A gate
 * bounds the workers they hold and answers them at once while the storage
 * has stalled (call_gate.c).
 */
#ifndef NFSRDMA_CALL_GATE_H
#define NFSRDMA_CALL_GATE_H

#include <pthread.h>
#include <stdint.h>

struct call_gate {
	const char *what;   /* for the log: "export", "the lock manager" */
	const char *name;   /* and its name ("/srv"), or NULL */
	const char *answer; /* what a refused call gets, for the log */
	pthread_mutex_t lock;
	pthread_cond_t cond;  /* CLOCK_MONOTONIC: a call left */
	unsigned calls;	      /* in the storage now */
	uint64_t progress_ns; /* when the last call left, or the first came in */
	int stalled;	      /* said so in the log */
	uint64_t refused;     /* calls refused while stalled */
};

/* what, name (NULL: none) and answer must outlive the gate. */
void call_gate_init(struct call_gate *g, const char *what, const char *name, const char *answer);
void call_gate_destroy(struct call_gate *g);

/* call_gate_in's flags: an event loop's call, which does not wait for a
 * place; the server's own work (a lock manager's tick), not a client's call:
 * its refusal is not counted as one answered so. */
#define CALL_GATE_NOWAIT 1u
#define CALL_GATE_OWN	 2u

/* A call in: 0 when it may go into the storage (then call_gate_out after);
 * -EAGAIN when CALL_GATE_NOWAIT and it would wait for a place;
 * -ETIMEDOUT when the storage has stalled (no call finished for timeout_ns,
 * 0: never) or the gate stayed full (max calls in) for a second, or none of
 * the calls in it has finished for a second: the call is refused, as answer
 * says. */
int call_gate_in(struct call_gate *g, unsigned max, uint64_t timeout_ns, unsigned flags);
/* progress: the call ran (not one given up on an event loop for a worker). */
void call_gate_out(struct call_gate *g, int progress);
/* The calls in the storage now, and whether it has stalled. */
unsigned call_gate_calls(struct call_gate *g, int *stalled_now);

#endif
