/*
 * export_gate.c: an export's share of the workers, and what its calls get
 * when its storage stops answering.
 *
 * A call of NFS on an export is counted in the export while its backend runs
 * it (be_dispatch). Storage that stops answering (a CephFS cluster that
 * hangs, a file system on a dead disk) then holds only what it already has:
 *
 *  - the calls of one export hold at most calls_max workers at once
 *    (server.threads less one): the others stay free for the other exports,
 *    MOUNT and the lock manager. A call past it waits on its worker for one
 *    to leave, at most SHARE_WAIT_NS, and is then answered NFS3ERR_JUKEBOX;
 *    on an event loop it goes to a worker instead.
 *  - when no call of the export has finished for the storage timeout
 *    (server.storage_timeout_s) while some are in it, the export is stalled:
 *    its further calls, and those waiting for their share, are answered
 *    NFS3ERR_JUKEBOX (the client tries again a little later, as it does when
 *    knfsd defers a call), and a reload of the exports stops waiting for its
 *    calls (backend.c). The first of its calls to finish ends the stall
 *    (only a call that ran: not one an event loop gave to a worker).
 */
#include <errno.h>
#include <limits.h>

#include "common/base/clock.h"
#include "common/base/log.h"
#include "server/backend_int.h"

/* See backend_int.h. */
void export_gate_init(struct export *e)
{
	pthread_condattr_t ca;

	pthread_mutex_init(&e->in_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&e->in_cond, &ca);
	pthread_condattr_destroy(&ca);
}

/* See backend_int.h. */
void export_gate_destroy(struct export *e)
{
	pthread_mutex_destroy(&e->in_lock);
	pthread_cond_destroy(&e->in_cond);
}

/* The longest a call past its export's share waits for one of the export's
 * calls to finish, holding its worker, before it is answered JUKEBOX. */
#define SHARE_WAIT_NS 1000000000u

/* With in_lock held: whether the export has stalled; counts the answer, and
 * says whether the log should say so now (*tell). */
static int stalled(struct export *e, uint64_t now, uint64_t timeout, int *tell)
{
	if (e->in_calls == 0 || timeout == 0 || !clock_passed(now, e->in_progress_ns, timeout))
		return 0;
	e->in_jukebox++;
	*tell = !e->in_stalled;
	e->in_stalled = 1;
	return 1;
}

/* See backend_int.h. */
int export_gate_in(const struct nfs_backend *be, struct export *e, int nowait)
{
	uint64_t timeout = __atomic_load_n(&be->storage_timeout_ns, __ATOMIC_RELAXED);
	unsigned max = __atomic_load_n(&be->export_calls_max, __ATOMIC_RELAXED), calls;
	uint64_t now = clock_now_ns(), give_up = now + SHARE_WAIT_NS;
	int rc = 0, tell = 0;

	pthread_mutex_lock(&e->in_lock);
	for (;;) {
		uint64_t until = timeout && e->in_progress_ns + timeout < give_up
					 ? e->in_progress_ns + timeout
					 : give_up;
		struct timespec ts = {(time_t)(until / 1000000000u), (long)(until % 1000000000u)};

		if (stalled(e, now, timeout, &tell))
			rc = -ETIMEDOUT;
		else if (e->in_calls < max)
			break;
		else if (now >= give_up)
			rc = -ETIMEDOUT;
		else if (nowait)
			rc = -EAGAIN;
		if (rc)
			break;
		pthread_cond_timedwait(&e->in_cond, &e->in_lock, &ts);
		now = clock_now_ns();
	}
	if (rc == 0 && e->in_calls++ == 0)
		e->in_progress_ns = now;
	calls = e->in_calls;
	pthread_mutex_unlock(&e->in_lock);
	if (tell)
		log_warn("export '%s': none of its %u calls has finished in %llu s: its storage "
			 "does not answer; its calls are answered NFS3ERR_JUKEBOX until one does",
			 e->path, calls, (unsigned long long)(timeout / 1000000000u));
	return rc;
}

/* See backend_int.h. */
void export_gate_out(struct export *e, int progress)
{
	unsigned calls;
	uint64_t jukebox = 0;

	pthread_mutex_lock(&e->in_lock);
	e->in_calls--;
	if (progress) {
		e->in_progress_ns = clock_now_ns();
		if (e->in_stalled)
			jukebox = e->in_jukebox;
		e->in_stalled = 0;
	}
	calls = e->in_calls;
	pthread_cond_signal(&e->in_cond);
	pthread_mutex_unlock(&e->in_lock);
	if (jukebox)
		log_notice("export '%s': its storage answers again (%u calls still in it; %llu "
			   "were answered NFS3ERR_JUKEBOX)",
			   e->path, calls, (unsigned long long)jukebox);
}

/* See backend_int.h. */
unsigned export_gate_calls(struct export *e, int *stalled_now)
{
	unsigned n;

	pthread_mutex_lock(&e->in_lock);
	n = e->in_calls;
	*stalled_now = e->in_stalled;
	pthread_mutex_unlock(&e->in_lock);
	return n;
}

/* See backend.h. */
void nfs_backend_set_limits(struct nfs_backend *be, unsigned threads, unsigned storage_timeout_s)
{
	__atomic_store_n(&be->export_calls_max, threads > 1 ? threads - 1 : 1, __ATOMIC_RELAXED);
	__atomic_store_n(&be->storage_timeout_ns, (uint64_t)storage_timeout_s * 1000000000u,
			 __ATOMIC_RELAXED);
}
