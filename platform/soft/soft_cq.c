/*
 * soft_cq.c: completion queues. A ring of vb_wc under cq->lock, and an
 * wake fd (common/base/poller.h) that becomes readable when the CQ is armed and a completion
 * arrives (ibverbs' req_notify semantics: one event per arm).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/base/log.h"
#include "soft.h"

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
	wakefd_close(&cq->wake);
	pthread_mutex_destroy(&cq->lock);
	free(cq->ring);
	free(cq);
	return 0;
}

/* Count a QP attaching (+1) or detaching (-1), so destroy_cq can refuse. */
void soft_cq_use(struct soft_cq *cq, int delta)
{
	pthread_mutex_lock(&cq->lock);
	cq->users += (unsigned)delta;
	pthread_mutex_unlock(&cq->lock);
}

/* The fd that becomes readable when armed and a completion arrives. */
int soft_cq_fd(struct vb_cq *c)
{
	return ((struct soft_cq *)c)->wake.rfd;
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
	pthread_mutex_unlock(&cq->lock);
	return 0;
}

/* Consume the event(s) that made the fd readable. */
int soft_cq_ack(struct vb_cq *c)
{
	wakefd_take(&((struct soft_cq *)c)->wake);
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
	bool signal = false;

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
	if (cq->armed) {
		cq->armed = false;
		signal = true;
	}
	pthread_mutex_unlock(&cq->lock);
	if (signal && wakefd_post(&cq->wake) != 0)
		log_err("CQ event: cannot post");
}
