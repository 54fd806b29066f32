/*
 * call_gate.c: how many workers the calls of one kind hold in storage, and
 * what they get when that storage stops answering (call_gate.h). The NFS
 * calls of each export have a gate (be_dispatch), and so do the lock
 * manager's calls on each export (nfs_backend_lock_enter): storage that
 * stops answering (a CephFS cluster that hangs, a file system on a dead
 * disk) then holds only what it already has:
 *
 *  - the calls through one gate hold at most max workers at once (the
 *    backend gives an export server.threads less one, and the lock manager
 *    one per export): the others stay free for the other exports, MOUNT and the lock
 *    manager. A call past it waits on its worker for one to leave, at most
 *    SHARE_WAIT_NS, and not once none has left for SHARE_WAIT_NS (so storage
 *    that hangs holds waiters for that long at most), and is then refused;
 *    on an event loop it goes to a worker instead.
 *  - when no call through the gate has finished for the storage timeout
 *    (server.storage_timeout_s) while some are in, it is stalled: its
 *    further calls, and those waiting for a place, are refused at once (an
 *    NFS call gets NFS3ERR_JUKEBOX and a lock call NLM4_DENIED_GRACE_PERIOD:
 *    the client tries again a little later, as it does when knfsd defers a
 *    call), and a reload of the exports stops waiting for an export's calls
 *    (backend.c). The first call to finish ends the stall (only a call that
 *    ran: not one an event loop gave to a worker).
 */
#include <errno.h>
#include <time.h>

#include "common/base/clock.h"
#include "common/base/log.h"
#include "server/call_gate.h"

/* " 'name'" for the log, or nothing: three %s. */
#define QUOTED(name) (name) ? " '" : "", (name) ? (name) : "", (name) ? "'" : ""

/* The longest a call past the gate's share waits for another to finish,
 * holding its worker, before it is refused; and how long the gate may go
 * without a call finishing before such a call is refused at once. */
#define SHARE_WAIT_NS 1000000000u

/* See call_gate.h. */
void call_gate_init(struct call_gate *g, const char *what, const char *name, const char *answer)
{
	pthread_condattr_t ca;

	*g = (struct call_gate){.what = what, .name = name, .answer = answer};
	pthread_mutex_init(&g->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&g->cond, &ca);
	pthread_condattr_destroy(&ca);
}

/* See call_gate.h. */
void call_gate_destroy(struct call_gate *g)
{
	pthread_mutex_destroy(&g->lock);
	pthread_cond_destroy(&g->cond);
}

/* With g->lock held: whether the storage has stalled; counts the refusal
 * (but the server's own: flags), and says whether the log should say so now
 * (*tell). */
static int stalled(struct call_gate *g, uint64_t now, uint64_t timeout, unsigned flags, int *tell)
{
	if (g->calls == 0 || timeout == 0 || !clock_passed(now, g->progress_ns, timeout))
		return 0;
	if (!(flags & CALL_GATE_OWN))
		g->refused++;
	*tell = !g->stalled;
	g->stalled = 1;
	return 1;
}

/* See call_gate.h. */
int call_gate_in(struct call_gate *g, unsigned max, uint64_t timeout, unsigned flags)
{
	uint64_t now = clock_now_ns(), latest = now + SHARE_WAIT_NS;
	unsigned calls;
	int rc = 0, tell = 0;

	pthread_mutex_lock(&g->lock);
	for (;;) {
		/* past the share: while the calls in finish, at most a second */
		uint64_t give_up = g->progress_ns + SHARE_WAIT_NS < latest
					   ? g->progress_ns + SHARE_WAIT_NS
					   : latest;
		uint64_t until = timeout && g->progress_ns + timeout < give_up
					 ? g->progress_ns + timeout
					 : give_up;
		struct timespec ts = {(time_t)(until / 1000000000u), (long)(until % 1000000000u)};

		if (stalled(g, now, timeout, flags, &tell))
			rc = -ETIMEDOUT;
		else if (g->calls < max)
			break;
		else if (now >= give_up)
			rc = -ETIMEDOUT;
		else if (flags & CALL_GATE_NOWAIT)
			rc = -EAGAIN;
		if (rc)
			break;
		pthread_cond_timedwait(&g->cond, &g->lock, &ts);
		now = clock_now_ns();
	}
	if (rc == 0 && g->calls++ == 0)
		g->progress_ns = now;
	calls = g->calls;
	pthread_mutex_unlock(&g->lock);
	if (tell)
		log_warn("%s%s%s%s: none of its %u calls has finished in %llu s: its storage does "
			 "not answer; its calls are answered %s until one does",
			 g->what, QUOTED(g->name), calls,
			 (unsigned long long)(timeout / 1000000000u), g->answer);
	return rc;
}

/* See call_gate.h. */
void call_gate_out(struct call_gate *g, int progress)
{
	unsigned calls;
	uint64_t refused = 0;
	int was_stalled = 0;

	pthread_mutex_lock(&g->lock);
	g->calls--;
	if (progress) {
		g->progress_ns = clock_now_ns();
		was_stalled = g->stalled;
		refused = g->refused;
		g->stalled = 0;
		g->refused = 0;
	}
	calls = g->calls;
	pthread_cond_signal(&g->cond);
	pthread_mutex_unlock(&g->lock);
	if (was_stalled)
		log_notice("%s%s%s%s: its storage answers again (%u calls still in it; %llu were "
			   "answered %s)",
			   g->what, QUOTED(g->name), calls, (unsigned long long)refused, g->answer);
}

/* See call_gate.h. */
unsigned call_gate_calls(struct call_gate *g, int *stalled_now)
{
	unsigned n;

	pthread_mutex_lock(&g->lock);
	n = g->calls;
	*stalled_now = g->stalled;
	pthread_mutex_unlock(&g->lock);
	return n;
}
