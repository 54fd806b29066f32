/* workq.c: a FIFO of work and the threads that run it (see workq.h). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "workq.h"

struct workq {
	pthread_mutex_t lock; /* protects the list and stopping */
	pthread_cond_t cond;
	struct work *head, *tail;
	int stopping;
	unsigned nthreads;
	pthread_t threads[];
};

/* A thread: run queued work until told to stop and the queue is empty. */
static void *workq_main(void *arg)
{
	struct workq *q = arg;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		struct work *w = q->head;

		if (!w) {
			if (q->stopping)
				break;
			pthread_cond_wait(&q->cond, &q->lock);
			continue;
		}
		q->head = w->next;
		if (!q->head)
			q->tail = NULL;
		pthread_mutex_unlock(&q->lock);
		w->run(w);
		pthread_mutex_lock(&q->lock);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

int workq_create(unsigned nthreads, const char *name, struct workq **out)
{
	struct workq *q;

	if (nthreads == 0)
		nthreads = 1;
	q = calloc(1, sizeof(*q) + nthreads * sizeof(pthread_t));
	if (!q)
		return -ENOMEM;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->cond, NULL);
	for (; q->nthreads < nthreads; q->nthreads++) {
		int rc = pthread_create(&q->threads[q->nthreads], NULL, workq_main, q);

		if (rc) {
			log_err("cannot start a %s thread: %s", name, strerror(rc));
			workq_destroy(q);
			return -rc;
		}
		pthread_setname_np(q->threads[q->nthreads], name);
	}
	*out = q;
	return 0;
}

void workq_submit(struct workq *q, struct work *w)
{
	w->next = NULL;
	pthread_mutex_lock(&q->lock);
	if (q->tail)
		q->tail->next = w;
	else
		q->head = w;
	q->tail = w;
	pthread_cond_signal(&q->cond);
	pthread_mutex_unlock(&q->lock);
}

void workq_destroy(struct workq *q)
{
	if (!q)
		return;
	pthread_mutex_lock(&q->lock);
	q->stopping = 1;
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
	for (unsigned i = 0; i < q->nthreads; i++)
		pthread_join(q->threads[i], NULL);
	pthread_cond_destroy(&q->cond);
	pthread_mutex_destroy(&q->lock);
	free(q);
}
