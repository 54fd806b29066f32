/*
 * soft_engine.c: the progress engine, one thread per device, playing the NIC.
 *
 * It waits in the platform's poller (common/base/poller.h: epoll, event ports
 * or poll; level-triggered) on every socket of the device and on a wake fd.
 * A connection's socket is watched for what it can use now (conn_interest):
 * readable unless its receive side is stalled (RNR), writable only while a
 * send is held up. Each round, in this order, it:
 * handles the socket events, runs the conns other threads kicked (a Receive
 * posted while a Send was stalled, tx left over by post_send), fires expired
 * deadlines, and finally runs commands (fn, arg) that other threads must not
 * race with, such as freeing a connection: those run only here, between
 * rounds, when the engine holds no pointer to anything. It sleeps at most
 * ENGINE_TICK_MS, so that only a deadline nearer than its next round wakes
 * it. See soft.h for locks.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/base/log.h"
#include "common/base/poller.h"
#include "soft.h"

#define ENGINE_BATCH 64
/* The longest the engine sleeps: a deadline at least this far away is armed
 * without waking it (it looks again within a tick), so a connection's send
 * queue that fills and empties at every call costs the engine no wake-up. */
#define ENGINE_TICK_MS 1000
/* Near deadlines: for ENGINE_NEAR_FOR_MS after one was armed, the engine
 * sleeps at most ENGINE_NEAR_MS, so that the next one (an ACK held for its
 * answer, armed at each call and cancelled by the answer) is armed without
 * waking it. It then fires up to ENGINE_NEAR_MS late. Calls closer together
 * than the window wake the engine once a tick instead of twice a call; a
 * lone call costs it a wake-up or two more. */
#define ENGINE_NEAR_MS	   1
#define ENGINE_NEAR_FOR_MS 3

struct soft_cmd {
	struct soft_list node;
	void (*fn)(void *);
	void *arg;
	bool done;
};

struct soft_engine {
	struct soft_device *dev;
	pthread_t thread;
	struct poller *poller;
	struct wakefd wake;
	struct soft_pollobj wake_po;
	pthread_mutex_t lock; /* ready, timers, cmds, woken, stop, wake_at, near_until */
	pthread_cond_t cmd_done;
	struct soft_list ready, timers, cmds;
	bool woken, stop;
	uint64_t wake_at;    /* the engine's poller_wait returns by then (ms) */
	uint64_t near_until; /* it sleeps in ENGINE_NEAR_MS ticks until then (ms) */
};

/* Monotonic milliseconds, for deadlines. */
uint64_t soft_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Make the engine's poller_wait return (eng->lock held); one post per round at most. */
static void wake(struct soft_engine *e)
{
	if (e->woken || pthread_equal(pthread_self(), e->thread))
		return;
	e->woken = true;
	wakefd_post(&e->wake);
}

/* Add a socket to the poller. */
int soft_engine_watch(struct soft_engine *e, int fd, struct soft_pollobj *po, unsigned events)
{
	int rc = poller_add(e->poller, fd, events, po);

	if (rc != 0) {
		log_err("poller add fd %d: %s", fd, strerror(-rc));
		return rc;
	}
	po->watched = true;
	po->events = events;
	return 0;
}

/* Change what a socket is watched for in p (0: out of it; its owner's lock held). */
void soft_poller_want(struct poller *p, int fd, struct soft_pollobj *po, unsigned events)
{
	int rc;

	if (fd < 0 || (po->watched ? events == po->events : events == 0))
		return;
	if (events == 0) {
		poller_del(p, fd);
		po->watched = false;
		return;
	}
	rc = po->watched ? poller_mod(p, fd, events, po) : poller_add(p, fd, events, po);
	if (rc != 0) {
		log_err("poller fd %d: %s", fd, strerror(-rc));
		return;
	}
	po->watched = true;
	po->events = events;
}

/* The same in the engine's poller. */
void soft_engine_want(struct soft_engine *e, int fd, struct soft_pollobj *po, unsigned events)
{
	soft_poller_want(e->poller, fd, po, events);
}

/* Remove a socket from the poller. */
void soft_engine_unwatch(struct soft_engine *e, int fd)
{
	int rc = fd >= 0 ? poller_del(e->poller, fd) : 0;

	if (rc != 0 && rc != -ENOENT && rc != -EBADF)
		log_err("poller del fd %d: %s", fd, strerror(-rc));
}

/* Take c off the ready and timer lists before it is freed. */
void soft_engine_forget(struct soft_engine *e, struct soft_conn *c)
{
	pthread_mutex_lock(&e->lock);
	soft_list_del(&c->ready_node);
	soft_list_del(&c->timer_node);
	c->ready_flags = 0;
	pthread_mutex_unlock(&e->lock);
}

/* Have the engine run rx and/or tx for c in its next round. */
void soft_engine_kick(struct soft_engine *e, struct soft_conn *c, unsigned what)
{
	pthread_mutex_lock(&e->lock);
	c->ready_flags |= what;
	if (soft_list_empty(&c->ready_node))
		soft_list_add_tail(&e->ready, &c->ready_node);
	wake(e);
	pthread_mutex_unlock(&e->lock);
}

/* Arm (ms > 0) or cancel c's deadline. */
void soft_engine_timer(struct soft_engine *e, struct soft_conn *c, unsigned ms)
{
	pthread_mutex_lock(&e->lock);
	soft_list_del(&c->timer_node);
	if (ms) {
		uint64_t now = soft_now_ms();

		c->deadline_ms = now + ms;
		soft_list_add_tail(&e->timers, &c->timer_node);
		if (ms < ENGINE_TICK_MS)
			e->near_until = now + ENGINE_NEAR_FOR_MS;
		if (c->deadline_ms < e->wake_at)
			wake(e);
	}
	pthread_mutex_unlock(&e->lock);
}

/* Run fn(arg) in the engine thread between rounds, and wait for it. */
void soft_engine_call(struct soft_engine *e, void (*fn)(void *), void *arg)
{
	struct soft_cmd cmd = {.fn = fn, .arg = arg};

	if (pthread_equal(pthread_self(), e->thread)) {
		fn(arg);
		return;
	}
	pthread_mutex_lock(&e->lock);
	soft_list_add_tail(&e->cmds, &cmd.node);
	wake(e);
	while (!cmd.done)
		pthread_cond_wait(&e->cmd_done, &e->lock);
	pthread_mutex_unlock(&e->lock);
}

/* Watch c's socket for what it can use now (c->lock held): readable unless
 * receiving is stalled for want of a Receive (RNR: what is kicked when one is
 * posted) or the conn is closed; writable while a send waits for room, or the
 * connect is under way. Level-triggered, so asking for more would spin. Once
 * connected, a conn of a driven CQ is watched for reading by that CQ's
 * poller instead of the engine's (soft_cq). */
static void conn_interest(struct soft_engine *e, struct soft_conn *c)
{
	struct soft_cq *cq = soft_cq_driving(c);
	unsigned want = 0, cq_want = 0;

	if (c->fd < 0 || c->cm == SOFT_CM_CLOSED)
		want = 0;
	else if (c->cm == SOFT_CM_CONNECTING)
		want = POLLER_IN | POLLER_OUT;
	else
		want = (c->rx.stalled ? 0 : POLLER_IN) |
		       (c->tx_count > 0 && !c->shut_done ? POLLER_OUT : 0);
	if (cq && c->cm == SOFT_CM_CONNECTED) {
		cq_want = want & POLLER_IN;
		want &= ~POLLER_IN;
	}
	soft_engine_want(e, c->fd, &c->po, want);
	if (cq)
		soft_poller_want(cq->drive, c->fd, &c->cpo, cq_want);
}

/* soft_conn_work; driven: only if c's CQ's poller watches it for reading
 * (soft_conn_drive_rx), checked under the same hold of c->lock. */
static void conn_work(struct soft_conn *c, bool rx, bool tx, bool driven)
{
	struct soft_engine *e = c->dev->eng;
	bool more_rx = false, more_tx = false;

	pthread_mutex_lock(&c->lock);
	if (driven && !(c->cpo.watched && (c->cpo.events & POLLER_IN))) {
		pthread_mutex_unlock(&c->lock);
		return;
	}
	if (c->cm == SOFT_CM_CONNECTING) {
		if (rx || tx)
			soft_cm_connected(c);
	} else if (rx) {
		more_rx = soft_rx_pump(c);
	}
	if (c->fd >= 0 && c->cm != SOFT_CM_CONNECTING)
		more_tx = soft_tx_pump(c);
	conn_interest(e, c);
	pthread_mutex_unlock(&c->lock);
	if (c->listener && c->cm == SOFT_CM_CLOSED) {
		soft_cm_reap(c);
		return;
	}
	if (more_rx || more_tx)
		soft_engine_kick(e, c,
				 (more_rx ? SOFT_READY_RX : 0) | (more_tx ? SOFT_READY_TX : 0));
}

/* See soft.h. */
void soft_conn_work(struct soft_conn *c, bool rx, bool tx)
{
	conn_work(c, rx, tx, false);
}

/* See soft.h. */
void soft_conn_drive_rx(struct soft_conn *c)
{
	conn_work(c, true, false, true);
}

/* One poller event. */
static void dispatch(struct soft_engine *e, const struct poller_event *ev)
{
	struct soft_pollobj *po = ev->ptr;

	switch (po->type) {
	case SOFT_POLL_WAKE:
		wakefd_take(&e->wake);
		pthread_mutex_lock(&e->lock);
		e->woken = false;
		pthread_mutex_unlock(&e->lock);
		break;
	case SOFT_POLL_LISTENER: {
		struct soft_listener *l = soft_container_of(po, struct soft_listener, po);

		soft_listener_io(l, NULL);
		break;
	}
	case SOFT_POLL_LOCAL_LISTENER: {
		struct soft_local_lsn *ll = soft_container_of(po, struct soft_local_lsn, po);

		soft_listener_io(ll->l, ll);
		break;
	}
	case SOFT_POLL_CONN:
		soft_conn_work(soft_container_of(po, struct soft_conn, po),
			       ev->events & (POLLER_IN | POLLER_ERR),
			       ev->events & (POLLER_OUT | POLLER_ERR));
		break;
	}
}

/* Run the conns kicked so far (not those kicked while running: next round). */
static void run_ready(struct soft_engine *e)
{
	struct soft_list batch, *n;

	soft_list_init(&batch);
	pthread_mutex_lock(&e->lock);
	if (!soft_list_empty(&e->ready)) {
		batch = e->ready;
		batch.next->prev = &batch;
		batch.prev->next = &batch;
		soft_list_init(&e->ready);
	}
	while ((n = soft_list_pop(&batch)) != NULL) {
		struct soft_conn *c = soft_container_of(n, struct soft_conn, ready_node);
		unsigned what = c->ready_flags;

		c->ready_flags = 0;
		pthread_mutex_unlock(&e->lock);
		soft_conn_work(c, what & SOFT_READY_RX, what & SOFT_READY_TX);
		pthread_mutex_lock(&e->lock);
	}
	pthread_mutex_unlock(&e->lock);
}

/* Fire expired deadlines; returns ms until the next one or the tick (0: work pending). */
static int run_timers(struct soft_engine *e)
{
	uint64_t now = soft_now_ms(), next = UINT64_MAX;
	struct soft_list fired, *n;
	int ms;

	soft_list_init(&fired);
	pthread_mutex_lock(&e->lock);
	for (n = e->timers.next; n != &e->timers;) {
		struct soft_conn *c = soft_container_of(n, struct soft_conn, timer_node);

		n = n->next;
		if (c->deadline_ms <= now) {
			soft_list_del(&c->timer_node);
			soft_list_add_tail(&fired, &c->timer_node);
		}
	}
	while ((n = soft_list_pop(&fired)) != NULL) {
		struct soft_conn *c = soft_container_of(n, struct soft_conn, timer_node);

		pthread_mutex_unlock(&e->lock);
		pthread_mutex_lock(&c->lock);
		soft_conn_timeout(c);
		conn_interest(e, c);
		pthread_mutex_unlock(&c->lock);
		if (c->listener && c->cm == SOFT_CM_CLOSED)
			soft_cm_reap(c); /* never said HELLO */
		pthread_mutex_lock(&e->lock);
	}
	/* the nearest deadline, those the fired conns armed again included */
	for (n = e->timers.next; n != &e->timers; n = n->next) {
		struct soft_conn *c = soft_container_of(n, struct soft_conn, timer_node);

		if (c->deadline_ms < next)
			next = c->deadline_ms;
	}
	ms = next <= now ? 0 : next - now < ENGINE_TICK_MS ? (int)(next - now) : ENGINE_TICK_MS;
	if (now < e->near_until && ms > ENGINE_NEAR_MS)
		ms = ENGINE_NEAR_MS;
	if (!soft_list_empty(&e->ready))
		ms = 0;
	e->wake_at = now + (uint64_t)ms;
	pthread_mutex_unlock(&e->lock);
	return ms;
}

/* Run queued commands; true when the engine must stop. */
static bool run_cmds(struct soft_engine *e)
{
	struct soft_list *n;
	bool stop;

	pthread_mutex_lock(&e->lock);
	while ((n = soft_list_pop(&e->cmds)) != NULL) {
		struct soft_cmd *cmd = soft_container_of(n, struct soft_cmd, node);

		pthread_mutex_unlock(&e->lock);
		cmd->fn(cmd->arg);
		pthread_mutex_lock(&e->lock);
		cmd->done = true;
		pthread_cond_broadcast(&e->cmd_done);
	}
	stop = e->stop;
	pthread_mutex_unlock(&e->lock);
	return stop;
}

/* The engine thread: events, kicked conns, timers, commands, forever. */
static void *engine_main(void *arg)
{
	struct soft_engine *e = arg;
	struct poller_event evs[ENGINE_BATCH];
	int timeout = -1;

	for (;;) {
		int n = poller_wait(e->poller, evs, ENGINE_BATCH, timeout);

		if (n < 0) {
			if (n != -EINTR)
				log_err("poller_wait: %s", strerror(-n));
			n = 0;
		}
		for (int i = 0; i < n; i++)
			dispatch(e, &evs[i]);
		run_ready(e);
		timeout = run_timers(e);
		if (run_cmds(e))
			break;
	}
	return NULL;
}

/* Create the poller, the wake fd and the engine thread. */
int soft_engine_start(struct soft_device *dev)
{
	struct soft_engine *e = calloc(1, sizeof(*e));
	int rc;

	if (e == NULL)
		return -ENOMEM;
	e->dev = dev;
	e->wake_at = UINT64_MAX; /* its first wait has no end: any deadline wakes it */
	e->wake_po.type = SOFT_POLL_WAKE;
	soft_list_init(&e->ready);
	soft_list_init(&e->timers);
	soft_list_init(&e->cmds);
	pthread_mutex_init(&e->lock, NULL);
	pthread_cond_init(&e->cmd_done, NULL);
	e->wake.rfd = e->wake.wfd = -1;
	if ((rc = poller_create(&e->poller)) != 0 || (rc = wakefd_open(&e->wake, false)) != 0) {
		log_err("engine set-up: %s", strerror(-rc));
		goto fail;
	}
	if ((rc = soft_engine_watch(e, e->wake.rfd, &e->wake_po, POLLER_IN)) != 0)
		goto fail;
	if ((rc = -pthread_create(&e->thread, NULL, engine_main, e)) != 0) {
		log_err("engine thread: %s", strerror(-rc));
		goto fail;
	}
	pthread_setname_np(e->thread, "soft-engine"); /* its CPU apart from the caller's */
	dev->eng = e;
	return 0;
fail:
	poller_destroy(e->poller);
	wakefd_close(&e->wake);
	pthread_cond_destroy(&e->cmd_done);
	pthread_mutex_destroy(&e->lock);
	free(e);
	return rc;
}

/* Stop and join the engine thread and free it. */
void soft_engine_stop(struct soft_device *dev)
{
	struct soft_engine *e = dev->eng;

	pthread_mutex_lock(&e->lock);
	e->stop = true;
	wake(e);
	pthread_mutex_unlock(&e->lock);
	pthread_join(e->thread, NULL);
	poller_destroy(e->poller);
	wakefd_close(&e->wake);
	pthread_cond_destroy(&e->cmd_done);
	pthread_mutex_destroy(&e->lock);
	free(e);
	dev->eng = NULL;
}
