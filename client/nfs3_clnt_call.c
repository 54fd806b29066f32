/*
 * nfs3_clnt_call.c: one call over the client's connection (nfs3_clnt.c):
 * sent, and sent again on a new connection after a break or a timeout (with
 * its xid), JUKEBOX waited out, a soft mount's deadline kept, a killed
 * caller's call given up; and each procedure's figures.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "client/nfs3_clnt_int.h"
#include "common/base/log.h"
#include "common/base/osdep_mount.h"
#include "common/nfs/nfs_prog.h"

#define KILL_CHECK_MS 1000 /* how often a call waiting to reconnect looks at its caller */

/* The thread the calls of this thread are for (nfs3c_caller_set), 0: none;
 * caller_dead once a call found it killed: the op's later calls are not sent. */
static __thread int caller_tid, caller_dead;

void nfs3c_req_init(struct nfs3c_req *rq, uint32_t proc, xdrproc_t xa, void *args, xdrproc_t xr,
		    void *res)
{
	memset(rq, 0, sizeof(*rq));
	rq->call.prog = NFS_PROGRAM;
	rq->call.vers = NFS_V3;
	rq->call.proc = proc;
	rq->call.xdr_args = xa;
	rq->call.args = args;
	rq->call.xdr_res = xr;
	rq->call.res = res;
}

/* Sleep ms milliseconds (JUKEBOX: the server asks us to come back later). */
static void sleep_ms(unsigned ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* An xid from the client's own space: a retransmission keeps its xid on a new
 * connection, where that connection's own xids could not collide with it. */
static uint32_t new_xid(struct nfs3c *c)
{
	uint32_t x;

	while ((x = __atomic_add_fetch(&c->next_xid, 1, __ATOMIC_RELAXED)) == 0)
		;
	return x;
}

/* The outcome of one try: 0 done, 1 try again. */
static int try_once(struct nfs3c *c, struct nfs3c_req *rq, int *rc, unsigned *jukebox_ms)
{
	struct nfs3c_conn *cn = rq->conn;
	unsigned turn = cn->nrpc > 1 ? __atomic_fetch_add(&cn->turn, 1, __ATOMIC_RELAXED) : 0;
	uint64_t sent = nfs3c_now_us();

	rq->rpc = cn->rpc[turn % cn->nrpc];
	*rc = rpc_clnt_call(rq->rpc, &rq->call);
	rq->rtt_us = nfs3c_now_us() - sent;
	rq->tries++;
	rq->sent++;
	nfs3c_stat_add(&c->st.calls, 1);
	if (*rc == -ECONNRESET || *rc == -ETIMEDOUT) {
		log_debug("proc %u: %s, retrying", rq->call.proc, strerror(-*rc));
		/* a head that takes calls and does not answer: the next one */
		pthread_mutex_lock(&c->lock);
		if (*rc == -ETIMEDOUT && c->nheads > 1 && c->conn == rq->conn)
			nfs3c_head_next(c, "does not answer");
		pthread_mutex_unlock(&c->lock);
		nfs3c_conn_put(c, rq->conn, 1);
		rq->conn = NULL;
		nfs3c_stat_add(&c->st.retries, 1);
		return 1;
	}
	if (*rc) {
		nfs3c_conn_put(c, rq->conn, 0);
		rq->conn = NULL;
		return 0;
	}
	if (rq->call.prog == NFS_PROGRAM && *(nfsstat3 *)rq->call.res == NFS3ERR_JUKEBOX) {
		nfs3c_call_done(c, rq);
		nfs3c_stat_add(&c->st.jukebox, 1);
		sleep_ms(*jukebox_ms);
		*jukebox_ms = *jukebox_ms * 2 > NFS3C_BACKOFF_MAX_MS ? NFS3C_BACKOFF_MAX_MS
								     : *jukebox_ms * 2;
		rq->call.xid = new_xid(c); /* a new request, not a retransmission */
		rq->tries = 0;		   /* the server did not run it: the retry is a first try */
		return 1;
	}
	return 0;
}

/* An NFS call's figures for its procedure's statistics. */
static void account(struct nfs3c *c, const struct nfs3c_req *rq, int rc, unsigned sent,
		    uint64_t start_us)
{
	struct nfs3c_op_stats *o;

	if (rq->call.prog != NFS_PROGRAM || rq->call.proc >= NFS3_NPROCS)
		return;
	o = &c->st.op[rq->call.proc];
	nfs3c_stat_add(&o->ops, 1);
	nfs3c_stat_add(&o->trans, rq->sent - sent);
	/* every NFSv3 result but NULL's starts with its status */
	if (rc || (rq->call.proc != NFSPROC3_NULL && *(nfsstat3 *)rq->call.res != NFS3_OK))
		nfs3c_stat_add(&o->errors, 1);
	nfs3c_stat_add(&o->rtt_us, (int64_t)rq->rtt_us);
	nfs3c_stat_add(&o->exec_us, (int64_t)(nfs3c_now_us() - start_us));
}

/* Whether rq gives up once its caller is killed: not a WRITE or COMMIT,
 * whose data outlives the writer (it is kept for sending again). */
static int killable(const struct nfs3c_req *rq)
{
	return caller_tid > 0 &&
	       !(rq->call.prog == NFS_PROGRAM &&
		 (rq->call.proc == NFSPROC3_WRITE || rq->call.proc == NFSPROC3_COMMIT));
}

/* See nfs3_clnt.h. */
int nfs3c_caller_set(int tid)
{
	int was = caller_tid;

	caller_tid = tid;
	caller_dead = 0;
	return was;
}

/* Whether killable rq's caller has been killed (it stays so for the op).
 * It reads /proc: asked only after a try failed or while a call waits, never
 * on the way to a send. */
static int caller_killed(const struct nfs3c_req *rq)
{
	if (killable(rq) && !caller_dead && osdep_thread_killed(caller_tid))
		caller_dead = 1;
	return killable(rq) && caller_dead;
}

/* nfs3c_conn_get for rq: a killable call waits for a connection a second at
 * a time and looks at its caller in between (-EINTR once it is killed). */
static int conn_get_for(struct nfs3c *c, struct nfs3c_req *rq, uint64_t deadline)
{
	for (;;) {
		uint64_t step = nfs3c_now_ms() + KILL_CHECK_MS;
		int rc, stopping;

		if (!killable(rq))
			return nfs3c_conn_get(c, deadline, &rq->conn);
		rc = nfs3c_conn_get(c, deadline && deadline < step ? deadline : step, &rq->conn);
		pthread_mutex_lock(&c->lock);
		stopping = c->giving_up || c->aborted || c->closing;
		pthread_mutex_unlock(&c->lock);
		if (rc != -EIO || stopping || (deadline && nfs3c_now_ms() >= deadline))
			return rc;
		if (caller_killed(rq))
			return -EINTR;
	}
}

/* See nfs3_clnt_int.h. */
int nfs3c_call(struct nfs3c *c, const struct rpc_cred *cr, struct nfs3c_req *rq)
{
	uint64_t start_us = nfs3c_now_us();
	uint64_t deadline = c->p.retry_ms ? start_us / 1000u + (uint64_t)c->p.retry_ms : 0;
	unsigned jukebox_ms = 250, sent = rq->sent;
	int rc;

	rq->call.cred = cr;
	rq->call.timeout_ms = c->p.timeout_ms;
	if (!rq->call.xid)
		rq->call.xid = new_xid(c); /* kept by retransmissions after a break */
	if (!rq->gen) /* the first send's: the reply may reflect any time after it */
		rq->gen = __atomic_add_fetch(&c->attr_gen, 1, __ATOMIC_RELAXED);
	if (killable(rq) && caller_dead) {
		rc = -EINTR; /* not sent: an earlier call of the op found it killed */
		goto done;
	}
	for (;;) {
		if ((rc = conn_get_for(c, rq, deadline)) != 0)
			break;
		if (!try_once(c, rq, &rc, &jukebox_ms))
			goto done;
		/* soft: a server that takes connections but never answers in time
		 * is given up on too, not only one that cannot be reached */
		if (deadline && nfs3c_now_ms() >= deadline) {
			rc = -EIO;
			break;
		}
		/* hard or soft, a killed caller waits no longer (Linux's are killable) */
		if (caller_killed(rq)) {
			rc = -EINTR;
			break;
		}
	}
	if (rc == -EIO)
		log_err("server %s: giving up on proc %u after %d ms", c->host, rq->call.proc,
			c->p.retry_ms);
	else if (rc == -EINTR)
		log_info("server %s: proc %u given up: thread %d that it was for was killed",
			 c->host, rq->call.proc, caller_tid);
done:
	account(c, rq, rc, sent, start_us);
	return rc;
}

/* Free a call's results and give its connection back. */
void nfs3c_call_done(struct nfs3c *c, struct nfs3c_req *rq)
{
	if (!rq->conn)
		return;
	rpc_clnt_free_res(rq->rpc, &rq->call);
	nfs3c_conn_put(c, rq->conn, 0);
	rq->conn = NULL;
}
