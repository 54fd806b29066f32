/*
 * soft_cq.c: completion queues. A ring of vb_wc under cq->lock, and a wake
 * fd (common/base/poller.h) that becomes readable when the CQ is armed and a
 * completion arrives (ibverbs' req_notify semantics: one event per arm).
 * A driven CQ (soft.h) also reads its connections' sockets in poll_cq.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/base/log.h"
#include "soft.h"

#define PUMP_BATCH 16 /* sockets read per poller wait of a pump */

/* The CQ this thread is pumping: what it completes there, the poll_cq under
 * way returns, so it needs no event. */
static __thread struct soft_cq *pumping;

/* A CQ of cqe entries with a wake fd for notification. */
int soft_create_cq(struct vb_device *dev, int cqe, struct vb_cq **out)
{
	struct soft_cq *cq;

	if (cqe < 1 || cqe > SOFT_MAX_CQE) {
		log_err("CQ size %d is out of range [1, %d]", cqe, SOFT_MAX_CQE);
		return -EINVAL;
	}
	cq = calloc(1, sizeof(*cq));
	if (cq == NULL)
		return -ENOMEM;
	cq->ring = calloc((size_t)cqe, sizeof(*cq->ring));
	cq->wake.rfd = cq->wake.wfd = -1;
	if (cq->ring == NULL || wakefd_open(&cq->wake, false) != 0) {
		int rc = cq->ring == NULL ? -ENOMEM : -EMFILE;

		free(cq->ring);
		wakefd_close(&cq->wake);
		free(cq);
		return rc;
	}
	pthread_mutex_init(&cq->lock, NULL);
	pthread_mutex_init(&cq->pump, NULL);
	cq->cap = (uint32_t)cqe;
	cq->base.dev = dev;
	*out = &cq->base;
	return 0;
}

/* Free a CQ; -EBUSY while QPs still use it. */
int soft_destroy_cq(struct vb_cq *c)
{
	struct soft_cq *cq = (struct soft_cq *)c;
	unsigned users;

	pthread_mutex_lock(&cq->lock);
	users = cq->users;
	pthread_mutex_unlock(&cq->lock);
	if (users) {
		log_err("CQ still attached to %u QPs", users);
		return -EBUSY;
	}
	poller_destroy(cq->drive);
	wakefd_close(&cq->wake);
	pthread_mutex_destroy(&cq->pump);
	pthread_mutex_destroy(&cq->lock);
	free(cq->ring);
	free(cq);
	return 0;
}

/* See vb_ops.cq_drive: the CQ's fd becomes a poller of its wake fd and,
 * once they connect, of its connections' sockets. */
int soft_cq_drive(struct vb_cq *c)
{
	static struct soft_pollobj wake_po = {.type = SOFT_POLL_WAKE};
	struct soft_cq *cq = (struct soft_cq *)c;
	struct poller *p;
	int rc;

	if (!soft_dev(c->dev)->cq_drive)
		return -EOPNOTSUPP;
	pthread_mutex_lock(&cq->lock);
	rc = cq->users ? -EBUSY : cq->drive ? -EALREADY : 0;
	pthread_mutex_unlock(&cq->lock);
	if (rc)
		return rc;
	if ((rc = poller_create(&p)) != 0)
		return rc;
	if (poller_fd(p) < 0) {
		poller_destroy(p);
		return -EOPNOTSUPP; /* a backend without a descriptor (poll) */
	}
	if ((rc = poller_add(p, cq->wake.rfd, POLLER_IN, &wake_po)) != 0) {
		poller_destroy(p);
		return rc;
	}
	cq->drive = p;
	return 0;
}

/* See soft.h. */
struct soft_cq *soft_cq_driving(struct soft_conn *c)
{
	struct soft_cq *cq = (struct soft_cq *)c->base.recv_cq;

	return cq && cq->drive && c->base.send_cq == c->base.recv_cq ? cq : NULL;
}

/* See soft.h. */
void soft_cq_forget(struct soft_conn *c)
{
	struct soft_cq *cq = soft_cq_driving(c);

	if (cq == NULL)
		return;
	pthread_mutex_lock(&cq->pump);
	pthread_mutex_lock(&c->lock);
	soft_poller_want(cq->drive, c->fd, &c->cpo, 0);
	pthread_mutex_unlock(&c->lock);
	pthread_mutex_lock(&cq->lock);
	if (cq->sole == c)
		cq->sole = NULL;
	pthread_mutex_unlock(&cq->lock);
	pthread_mutex_unlock(&cq->pump);
}

/* A driven CQ's receive side: every connection whose socket is readable
 * (or failed), as the engine would; its sole connection's, without asking. */
static void pump(struct soft_cq *cq)
{
	struct poller_event evs[PUMP_BATCH];
	struct soft_conn *sole;
	int n = 0;

	pthread_mutex_lock(&cq->pump);
	pumping = cq;
	pthread_mutex_lock(&cq->lock);
	sole = cq->sole;
	pthread_mutex_unlock(&cq->lock);
	if (sole)
		soft_conn_drive_rx(sole);
	else
		n = poller_wait(cq->drive, evs, PUMP_BATCH, 0);
	for (int i = 0; i < n; i++) {
		struct soft_pollobj *po = evs[i].ptr;

		if (po->type == SOFT_POLL_CONN) /* the wake fd: cq_ack takes it */
			soft_conn_work(soft_container_of(po, struct soft_conn, cpo),
				       evs[i].events & (POLLER_IN | POLLER_ERR), false);
	}
	pumping = NULL;
	pthread_mutex_unlock(&cq->pump);
}

/* Count c's QP attaching (+1) or detaching (-1), so destroy_cq can refuse;
 * and note whether c alone uses the CQ, for both its queues (see soft.h). */
void soft_cq_use(struct soft_cq *cq, struct soft_conn *c, int delta)
{
	pthread_mutex_lock(&cq->lock);
	cq->users += (unsigned)delta;
	if (delta > 0 && cq->sole != c)
		cq->sole = cq->users == 1 && c->base.send_cq == c->base.recv_cq ? c : NULL;
	else if (delta < 0 && cq->sole == c)
		cq->sole = NULL;
	pthread_mutex_unlock(&cq->lock);
}

/* The fd that becomes readable when armed and a completion arrives (driven:
 * or when a socket of its connections is readable). */
int soft_cq_fd(struct vb_cq *c)
{
	struct soft_cq *cq = (struct soft_cq *)c;

	return cq->drive ? poller_fd(cq->drive) : cq->wake.rfd;
}

/* Ask for one event on the next completion. */
int soft_cq_arm(struct vb_cq *c)
{
	struct soft_cq *cq = (struct soft_cq *)c;
	int rc = soft_cred_check(c->dev);

	if (rc)
		return rc;
	pthread_mutex_lock(&cq->lock);
	cq->armed = true;
	__atomic_store_n(&cq->armed_pump, cq->drive != NULL, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&cq->lock);
	return 0;
}

/* Consume the event(s) that made the fd readable; none to consume (a driven
 * CQ woken by a socket) costs no system call. */
int soft_cq_ack(struct vb_cq *c)
{
	struct soft_cq *cq = (struct soft_cq *)c;

	pthread_mutex_lock(&cq->lock);
	if (cq->posted)
		wakefd_take(&cq->wake);
	cq->posted = false;
	__atomic_store_n(&cq->armed_pump, false, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&cq->lock);
	return 0;
}

/* Take up to n completions; -EOVERFLOW once drained after an overflow. */
int soft_poll_cq(struct vb_cq *c, int n, struct vb_wc *wc)
{
	struct soft_cq *cq = (struct soft_cq *)c;
	int got = 0;

	if (n < 0)
		return -EINVAL;
	if (soft_cred_check(c->dev) != 0)
		return -EACCES;
	if (cq->drive && !__atomic_exchange_n(&cq->armed_pump, false, __ATOMIC_ACQ_REL))
		pump(cq); /* not right after an arm: see soft.h */
	pthread_mutex_lock(&cq->lock);
	while (got < n && cq->count) {
		wc[got++] = cq->ring[cq->head];
		cq->head = cq->head + 1 == cq->cap ? 0 : cq->head + 1;
		cq->count--;
	}
	if (got == 0 && cq->overflow)
		got = -EOVERFLOW;
	pthread_mutex_unlock(&cq->lock);
	return got;
}

/* Queue one completion; overflow is logged once and sticks. */
void soft_cq_push(struct soft_cq *cq, const struct vb_wc *wc)
{
	pthread_mutex_lock(&cq->lock);
	if (cq->count == cq->cap) {
		if (!cq->overflow)
			log_err("CQ overflow: %u entries full, completion of wr_id %llu (%s) lost; "
				"the CQ is unusable from now on",
				cq->cap, (unsigned long long)wc->wr_id,
				vb_wc_status_str(wc->status));
		cq->overflow = true;
	} else {
		uint32_t tail = cq->head + cq->count;

		cq->ring[tail >= cq->cap ? tail - cq->cap : tail] = *wc;
		cq->count++;
	}
	/* posted under the lock, so that cq_ack takes only what is there */
	if (cq->armed && pumping != cq) {
		cq->armed = false;
		cq->posted = true;
		if (wakefd_post(&cq->wake) != 0)
			log_err("CQ event: cannot post");
	}
	pthread_mutex_unlock(&cq->lock);
}
