/*
 * rpc_tcp_conn.c: a TCP server connection, owned by one I/O loop. Records are
 * read without blocking and handed to the workers. Reading stops while
 * max_inflight calls are unanswered, while its calls hold max_held bytes, and
 * while the server's memory budget has no room for another call
 * (a call holds room for its largest reply from its first byte on): the
 * peer's further calls wait in the kernel, not in our memory (but for at most
 * AHEAD bytes read ahead). Small calls are read ahead in one read, several at
 * a time when they are there together; a large record's body is read straight
 * into its buffer. A worker writes
 * its reply only if the socket takes it at once, else queues it; the loop
 * writes the queue when the socket is writable. The loop's tick drops a
 * connection whose reply or call has not moved for send_deadline_ms, closes
 * one idle for idle_ms, and lets the others read again once the budget has
 * room.
 *
 * Ownership: a request owns its call, reply and bulk buffers until its reply
 * is out or dropped; a connection lives while its loop holds it, or a call or
 * a queued kick refers to it (refs).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "common/base/clock.h"
#include "common/base/log.h"
#include "common/base/net.h"
#include "rpc_tcp_int.h"

#define LAST_FRAG   0x80000000u
#define FIRST_REPLY 65536 /* the reply room a call gets before it needs more */
#define READ_BURST  16	  /* records read per wake-up: one client cannot hog its loop */
#define AHEAD	    8192  /* bytes read at once for marks and small records */

static void conn_close(struct tcp_conn *c);
static void conn_flush(struct tcp_conn *c);
static void conn_interest(struct tcp_conn *c);
static void conn_read(struct tcp_conn *c);

static int tcp_ddp_get(struct rpc_ddp *ddp, XDR *xdrs, uint32_t len, void **data)
{
	return rpc_ddp_inline_ops.get(ddp, xdrs, len, data);
}

static const struct rpc_ddp_ops tcp_ddp_ops = {
	.get = tcp_ddp_get,
	.put = rpc_rec_ddp_put,
};

/* Drop a reference; the last closes the socket and frees c. */
static void conn_put(struct tcp_conn *c)
{
	unsigned refs;

	pthread_mutex_lock(&c->lock);
	refs = --c->refs;
	pthread_mutex_unlock(&c->lock);
	if (refs)
		return;
	tcp_conn_gone(c);
	log_debug("%s: connection closed", c->peer_str);
	close(c->fd);
	free(c->rec);
	free(c->ahead);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* See rpc_tcp_int.h. */
uint64_t tcp_conn_idle_since(struct tcp_conn *c)
{
	uint64_t since;

	pthread_mutex_lock(&c->lock);
	since = c->inflight ? 0 : c->last_ns;
	pthread_mutex_unlock(&c->lock);
	return since;
}

/* Bulk result buffer: malloc'd, written with writev, freed with the request. */
static void *tcp_get_buf(struct rpc_req *req, size_t len)
{
	struct tcp_req *r = req->xprt_req;

	if (r->bulk)
		return NULL; /* one bulk item per reply */
	r->bulk = malloc(len ? len : 1);
	return r->bulk;
}

/* The request is over (its reply out or dropped): free it and count it out.
 * Returns whether c may read again (it had stopped at max_inflight or
 * max_held). The caller still holds the request's reference on c. */
static bool req_release(struct tcp_conn *c, struct tcp_req *r)
{
	const struct rpc_tcp_params *p = &c->l->p;
	size_t reserved = r->reserved;
	bool resume;

	rpc_dispatch_done(c->l->srv, &r->x);
	rpc_mem_release(c->l->srv, reserved);
	free(r->call);
	free(r->x.reply);
	free(r->bulk);
	free(r);
	pthread_mutex_lock(&c->lock);
	resume = (p->max_inflight && c->inflight == p->max_inflight) ||
		 (p->max_held && c->held + p->max_reply > p->max_held);
	c->inflight--;
	c->held -= reserved;
	c->last_ns = clock_now_ns();
	pthread_mutex_unlock(&c->lock);
	return resume;
}

/* Loop thread: a kick from a worker (a reply queued, reading may resume, or
 * the connection broke). */
static void kicked(void *arg)
{
	struct tcp_conn *c = arg;
	bool dead;

	if (!c->closed) {
		pthread_mutex_lock(&c->lock);
		dead = c->dead;
		pthread_mutex_unlock(&c->lock);
		c->resume_queued = false;
		if (dead)
			conn_close(c);
		else
			conn_flush(c);
		if (!c->closed && c->ahead_len)
			conn_read(c);
		if (!c->closed)
			conn_interest(c);
	}
	conn_put(c);
}

/* Any thread holding a reference: have c's loop look at it. */
static void conn_kick(struct tcp_conn *c)
{
	pthread_mutex_lock(&c->lock);
	c->refs++; /* the queued kick's (one at a time) */
	pthread_mutex_unlock(&c->lock);
	if (!evloop_post(c->lp->ev, &c->kick_job))
		conn_put(c);
}

/* The results did not fit the first room: encode them again in max_reply bytes
 * (a SYSTEM_ERR reply if they do not fit that either). */
static int grow_reply(struct tcp_conn *c, struct tcp_req *r)
{
	uint8_t *bigger = r->x.reply_cap < c->l->p.max_reply ? malloc(c->l->p.max_reply) : NULL;

	if (bigger) {
		free(r->x.reply);
		r->x.reply = bigger;
		r->x.reply_cap = c->l->p.max_reply;
	}
	return rpc_reencode(c->l->srv, &r->x);
}

/* Worker, with the reply made: write what the socket takes now, queue the
 * rest for the loop. Returns whether the reply is finished with (out, or
 * dropped); *kick when the loop must look at c. */
static bool reply_send(struct tcp_conn *c, struct tcp_req *r, bool *kick)
{
	int n = rpc_rec_iov(r->x.reply, r->x.reply_len, &r->res_ddp, &r->mark, r->iov), moved = 0;
	int rc = n < 0 ? n : 0;

	if (rc)
		log_info("%s: xid %#x: reply not sent: %s", c->peer_str, r->x.xid, strerror(-rc));
	r->iov_at = r->iov;
	r->iov_left = n;
	pthread_mutex_lock(&c->lock);
	if (rc || c->dead) {
		pthread_mutex_unlock(&c->lock);
		return true;
	}
	if (!c->sq) /* nothing ahead of it: try at once */
		rc = net_writev_some(c->fd, &r->iov_at, &r->iov_left, &moved);
	if (rc == 0 && r->iov_left == 0) {
		pthread_mutex_unlock(&c->lock);
		return true;
	}
	if (rc && rc != -EAGAIN) {
		log_info("%s: reply not sent: %s", c->peer_str, strerror(-rc));
		c->dead = true;
		*kick = true;
		pthread_mutex_unlock(&c->lock);
		return true;
	}
	if (!c->sq) {
		c->sq = r;
		c->sq_ns = clock_now_ns();
		*kick = true; /* the loop now waits for room */
	} else {
		c->sq_tail->next = r;
	}
	c->sq_tail = r;
	pthread_mutex_unlock(&c->lock);
	return false;
}

/* Worker or loop: the call has run (rc from rpc_dispatch): send the reply,
 * never waiting on the peer, and let the request go once it is out. */
static void req_answer(struct tcp_conn *c, struct tcp_req *r, int rc)
{
	bool done = true, kick = false, resume = false;

	if (rc == -EMSGSIZE)
		rc = grow_reply(c, r);
	if (rc == 0)
		done = reply_send(c, r, &kick);
	else if (rc == -EBADMSG)
		log_info("%s: dropped a message that is not an RPC call", c->peer_str);
	else if (rc != -EALREADY)
		log_info("%s: xid %#x: no reply: %s", c->peer_str, r->x.xid, strerror(-rc));
	if (done)
		resume = req_release(c, r);
	if (kick || resume)
		conn_kick(c);
	if (done)
		conn_put(c);
}

/* Worker: run the call and answer it. */
static void tcp_req_run(struct work *w)
{
	struct tcp_req *r = (struct tcp_req *)w;

	req_answer(r->conn, r, rpc_dispatch(r->conn->l->srv, &r->x));
}

/* Loop thread: run a cheap call here, to its reply, without the hand-off to
 * a worker (server.inline_calls). False when it is not one or turned out to
 * need a worker: nothing of the attempt is left, it goes to the pool. */
static bool run_inline(struct tcp_conn *c, struct tcp_req *r)
{
	int rc;

	if (!rpc_server_may_inline(c->l->srv, r->x.call, r->x.call_len))
		return false;
	r->x.nowait = 1;
	rc = rpc_dispatch(c->l->srv, &r->x);
	r->x.nowait = 0;
	if (rc == -EAGAIN) {
		rpc_dispatch_done(c->l->srv, &r->x);
		free(r->bulk);
		r->bulk = NULL;
		return false;
	}
	req_answer(c, r, rc);
	return true;
}

/* Loop thread: write queued replies while the socket takes them. */
static void conn_flush(struct tcp_conn *c)
{
	struct tcp_req *out = NULL, *r;
	int rc = 0, moved;

	pthread_mutex_lock(&c->lock);
	while ((r = c->sq) != NULL && !c->dead) {
		rc = net_writev_some(c->fd, &r->iov_at, &r->iov_left, &moved);
		if (moved)
			c->sq_ns = clock_now_ns();
		if (rc == -EAGAIN)
			break;
		c->sq = r->next;
		if (!c->sq)
			c->sq_tail = NULL;
		r->next = out;
		out = r;
		if (rc) {
			c->dead = true;
			break;
		}
	}
	pthread_mutex_unlock(&c->lock);
	while ((r = out) != NULL) {
		out = r->next;
		req_release(c, r); /* the loop's own reference keeps c */
		conn_put(c);
	}
	if (rc && rc != -EAGAIN) {
		log_info("%s: reply not sent: %s", c->peer_str, strerror(-rc));
		conn_close(c);
	}
}

/* Loop thread: what c should wait for: EVLOOP_OUT while replies are queued;
 * EVLOOP_IN when another call may be read: not while max_inflight calls are
 * unanswered or its calls hold max_held bytes, nor, for a new call, while the
 * memory budget has no room for its largest reply (reserved when its first
 * bytes come: an idle connection holds nothing). */
static unsigned wanted(struct tcp_conn *c)
{
	const struct rpc_tcp_params *p = &c->l->p;
	bool in;
	unsigned want;

	pthread_mutex_lock(&c->lock);
	in = (!p->max_inflight || c->inflight < p->max_inflight) &&
	     (!p->max_held || c->held + p->max_reply <= p->max_held);
	want = c->sq ? EVLOOP_OUT : 0;
	pthread_mutex_unlock(&c->lock);
	if (in && (c->reserved || rpc_mem_fits(c->l->srv, p->max_reply)))
		want |= EVLOOP_IN;
	return want;
}

/* Loop thread: wait for input while a call may be read (wanted), and for room
 * to write while replies are queued. */
static void conn_interest(struct tcp_conn *c)
{
	unsigned want = wanted(c);

	if (want != c->want && evloop_io_set(c->lp->ev, c->io, want) == 0)
		c->want = want;
	/* calls read ahead but not taken (a burst's end, or reading was held
	 * back): the socket may say nothing more, so come back for them */
	if ((want & EVLOOP_IN) && c->ahead_len && !c->resume_queued) {
		c->resume_queued = true;
		conn_kick(c);
	}
}

/* Loop thread: a whole call record is in: hand it to the workers. */
static void submit_call(struct tcp_conn *c)
{
	struct tcp_req *r = calloc(1, sizeof(*r));
	/* most replies are small (bulk data is spliced in by writev): grow on demand */
	size_t cap = c->l->p.max_reply < FIRST_REPLY ? c->l->p.max_reply : FIRST_REPLY;

	if (!r || !(r->x.reply = malloc(cap))) {
		log_warn("%s: out of memory for a call, dropped", c->peer_str);
		free(r);
		free(c->rec);
		c->rec = NULL;
		c->rec_len = 0;
		return;
	}
	r->conn = c;
	r->reserved = c->reserved; /* the reply's, and the call's bytes */
	c->reserved = 0;
	r->call = c->rec;
	r->work.run = tcp_req_run;
	r->res_ddp.ops = &tcp_ddp_ops;
	r->x = (struct rpc_xreq){.call = c->rec,
				 .call_len = c->rec_len,
				 .peer = (struct sockaddr *)&c->peer,
				 .peer_len = c->peer_len,
				 .get_buf = tcp_get_buf,
				 .xprt_req = r,
				 .reply = r->x.reply,
				 .reply_cap = cap,
				 .res_ddp = &r->res_ddp};
	c->rec = NULL;
	c->rec_len = 0;
	pthread_mutex_lock(&c->lock);
	c->inflight++;
	c->held += r->reserved;
	c->refs++; /* the request's */
	c->last_ns = clock_now_ns();
	pthread_mutex_unlock(&c->lock);
	if (!run_inline(c, r))
		rpc_server_submit(c->l->srv, &r->work);
}

/* Loop thread: a fragment's mark is in: make room for the fragment. */
static int begin_fragment(struct tcp_conn *c)
{
	uint32_t mark;
	size_t frag;
	uint8_t *nbuf;

	memcpy(&mark, c->mark, 4);
	mark = ntohl(mark);
	frag = mark & ~LAST_FRAG;
	c->last_frag = (mark & LAST_FRAG) != 0;
	if (frag > c->l->p.max_record - c->rec_len)
		return -EMSGSIZE;
	if (!(nbuf = realloc(c->rec, c->rec_len + frag + 1)))
		return -ENOMEM;
	rpc_mem_charge(c->l->srv, frag + 1); /* held by the call from now on */
	c->reserved += frag + 1;
	c->rec = nbuf;
	c->frag_left = frag;
	c->in_frag = true;
	return 0;
}

/* Loop thread: c's next input bytes into p, at most n: what was read ahead,
 * else a read (into p itself when n is large, else ahead). >0 bytes; 0 when
 * nothing has come, or when a read has come short since *drained was set (the
 * socket is empty: the poller says when more comes); <0 when the connection is
 * over (closed here). */
static ssize_t next_bytes(struct tcp_conn *c, uint8_t *p, size_t n, bool *drained)
{
	size_t want = n < AHEAD ? AHEAD : n;
	uint8_t *into = n < AHEAD ? c->ahead : p;
	ssize_t got;

	if (c->ahead_len == 0 && !*drained) {
		if (into == NULL && (into = c->ahead = malloc(AHEAD)) == NULL) {
			log_warn("%s: out of memory for reading, closing", c->peer_str);
			conn_close(c);
			return -1;
		}
		do
			got = read(c->fd, into, want);
		while (got < 0 && errno == EINTR);
		if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
			if (got < 0)
				log_debug("%s: read: %s", c->peer_str, strerror(errno));
			conn_close(c);
			return -1;
		}
		*drained = got < (ssize_t)want;
		if (got < 0)
			return 0;
		if (into == p)
			return got;
		c->ahead_off = 0;
		c->ahead_len = (size_t)got;
	}
	if (c->ahead_len == 0)
		return 0;
	got = (ssize_t)(n < c->ahead_len ? n : c->ahead_len);
	memcpy(p, c->ahead + c->ahead_off, (size_t)got);
	c->ahead_off += (size_t)got;
	c->ahead_len -= (size_t)got;
	return got;
}

/* Loop thread: read what has come, up to READ_BURST calls. */
static void conn_read(struct tcp_conn *c)
{
	bool drained = false;

	for (int calls = 0; calls < READ_BURST && (wanted(c) & EVLOOP_IN);) {
		ssize_t got =
			c->in_frag
				? next_bytes(c, c->rec + c->rec_len, c->frag_left, &drained)
				: next_bytes(c, c->mark + c->mark_got, 4 - c->mark_got, &drained);
		int rc;

		if (got <= 0)
			break;
		c->read_ns = clock_now_ns();
		if (!c->reserved) { /* a call begins: hold room for its reply */
			rpc_mem_charge(c->l->srv, c->l->p.max_reply);
			c->reserved = c->l->p.max_reply;
		}
		if (!c->in_frag) {
			if ((c->mark_got += (unsigned)got) < 4)
				continue;
			if ((rc = begin_fragment(c)) != 0) {
				log_warn("%s: record larger than %zu bytes, closing", c->peer_str,
					 c->l->p.max_record);
				conn_close(c);
				return;
			}
		} else {
			c->rec_len += (size_t)got;
			c->frag_left -= (size_t)got;
		}
		if (c->frag_left)
			continue;
		c->in_frag = false;
		c->mark_got = 0;
		if (c->last_frag) {
			submit_call(c);
			calls++;
		}
	}
	if (!c->closed && c->ahead_len == 0) { /* an idle connection holds no buffer */
		free(c->ahead);
		c->ahead = NULL;
	}
}

/* Loop thread: the socket is ready for what c waits for, or broke. */
static void conn_io(void *arg, unsigned events)
{
	struct tcp_conn *c = arg;

	if (events & EVLOOP_OUT)
		conn_flush(c);
	if (!c->closed && (events & EVLOOP_IN))
		conn_read(c);
	/* hung up while not reading: nothing will come to say so again */
	if (!c->closed && (events & EVLOOP_ERR) && !(c->want & EVLOOP_IN))
		conn_close(c);
	if (!c->closed)
		conn_interest(c);
}

/* Loop thread, queued by conn_close: the loop's reference. */
static void put_later(void *arg)
{
	conn_put(arg);
}

/* Loop thread: take c out of the loop; queued replies are dropped, calls
 * still running find it dead. The loop's reference goes once the current
 * handler has returned (c stays valid for it). */
static void conn_close(struct tcp_conn *c)
{
	struct tcp_req *q, *r;

	if (c->closed)
		return;
	c->closed = true;
	if (c->io)
		evloop_del(c->lp->ev, c->fd);
	if (c->lprev)
		c->lprev->lnext = c->lnext;
	else if (c->lp->conns == c)
		c->lp->conns = c->lnext;
	if (c->lnext)
		c->lnext->lprev = c->lprev;
	shutdown(c->fd, SHUT_RDWR);
	pthread_mutex_lock(&c->lock);
	c->dead = true;
	q = c->sq;
	c->sq = c->sq_tail = NULL;
	pthread_mutex_unlock(&c->lock);
	while ((r = q) != NULL) {
		q = r->next;
		req_release(c, r);
		conn_put(c);
	}
	free(c->rec);
	c->rec = NULL;
	free(c->ahead);
	c->ahead = NULL;
	c->ahead_len = 0;
	rpc_mem_release(c->l->srv, c->reserved);
	c->reserved = 0;
	/* the loop's reference goes after the handler that closed c returns */
	evloop_post(c->lp->ev, &c->put_job);
}

/* Loop thread: the new connection joins the loop. */
static void conn_attach(void *arg)
{
	struct tcp_conn *c = arg;
	struct tcp_loop *lp = c->lp;

	if (evloop_add_io(lp->ev, c->fd, EVLOOP_IN, conn_io, c, &c->io) != 0) {
		log_err("%s: cannot watch the connection", c->peer_str);
		conn_close(c);
		return;
	}
	c->want = EVLOOP_IN;
	c->lnext = lp->conns;
	if (lp->conns)
		lp->conns->lprev = c;
	lp->conns = c;
}

/* See rpc_tcp_int.h. */
void tcp_loop_tick(void *arg)
{
	struct tcp_loop *lp = arg;
	const struct rpc_tcp_params *p = &lp->l->p;
	uint64_t now = clock_now_ns(), dl = (uint64_t)p->send_deadline_ms * 1000000,
		 idle = (uint64_t)p->idle_ms * 1000000;
	struct tcp_conn *c, *next;

	for (c = lp->conns; c; c = next) {
		bool partial = c->in_frag || c->mark_got || c->rec, stalled_reply;
		unsigned inflight;
		uint64_t last;

		next = c->lnext;
		pthread_mutex_lock(&c->lock);
		stalled_reply = c->sq && dl && clock_passed(now, c->sq_ns, dl);
		inflight = c->inflight;
		last = c->last_ns;
		pthread_mutex_unlock(&c->lock);
		if (stalled_reply) {
			log_warn("%s: took none of a reply for %u ms, closing", c->peer_str,
				 p->send_deadline_ms);
		} else if (partial && dl && clock_passed(now, c->read_ns, dl)) {
			log_warn("%s: sent part of a call, then nothing for %u ms, closing",
				 c->peer_str, p->send_deadline_ms);
		} else if (!partial && !inflight && idle && clock_passed(now, last, idle)) {
			log_info("%s: idle for %u ms, closing", c->peer_str, p->idle_ms);
			__atomic_add_fetch(&lp->l->st.idle_closed, 1, __ATOMIC_RELAXED);
			conn_close(c);
			continue;
		} else {
			if (!(c->want & EVLOOP_IN))
				conn_interest(c); /* reading may resume: memory was given back */
			continue;
		}
		__atomic_add_fetch(&lp->l->st.deadline_drops, 1, __ATOMIC_RELAXED);
		conn_close(c);
	}
}

/* See rpc_tcp_int.h. */
void tcp_conn_start(struct tcp_listener *l, int fd, const struct sockaddr_storage *ss,
		    socklen_t len)
{
	struct tcp_conn *c = calloc(1, sizeof(*c));

	if (!c || fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) {
		log_err("cannot take a connection: %s", c ? strerror(errno) : "out of memory");
		free(c);
		close(fd);
		return;
	}
	c->l = l;
	c->lp = &l->loops[l->next_loop++ % l->nloops];
	c->fd = fd;
	c->peer = *ss;
	c->peer_len = len;
	c->refs = 1; /* the loop's */
	c->last_ns = clock_now_ns();
	net_addr_str((const struct sockaddr *)ss, c->peer_str, sizeof(c->peer_str));
	pthread_mutex_init(&c->lock, NULL);
	evloop_job_init(&c->kick_job, kicked, c);
	evloop_job_init(&c->put_job, put_later, c);
	evloop_job_init(&c->attach_job, conn_attach, c);
	pthread_mutex_lock(&l->lock);
	c->next = l->conns;
	l->conns = c;
	l->nconns++;
	pthread_mutex_unlock(&l->lock);
	/* before the loop has it: from then on it may close and free it */
	log_debug("%s: connected", c->peer_str);
	evloop_post(c->lp->ev, &c->attach_job);
}
