/*
 * nfs3_clnt.c: the client's connection: connect (RPC/RDMA or TCP), replace a
 * broken connection with backoff, move between heads, stop; and the utilities
 * every procedure uses. Calls over the connection are in nfs3_clnt_call.c,
 * mounting in nfs3_clnt_mount.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client/nfs3_clnt_int.h"
#include "common/base/config.h"
#include "common/base/log.h"
#include "common/rpc/rpc_tcp.h"

#define BACKOFF_MIN_MS 100
#define STOP_GRACE_MS  5000 /* most a stop waits for the server: less if timeo is less */

/* See nfs3_clnt.h. */
int nfs3c_connect_timeout_ms(const struct nfs3c_params *p)
{
	if (p->connect_timeout_ms > 0)
		return p->connect_timeout_ms;
	return p->timeout_ms > 0 && p->timeout_ms < 5000 ? p->timeout_ms : 5000;
}

/* See nfs3_clnt.h. */
void nfs3c_params_from_config(const struct nfsrdma_config *c, struct nfs3c_params *p)
{
	p->proto = c->client.proto == CFG_PROTO_TCP ? NFS3C_PROTO_TCP : NFS3C_PROTO_RDMA;
	p->rsize = (uint32_t)c->client.rsize;
	p->wsize = (uint32_t)c->client.wsize;
	p->acregmin = c->client.acregmin;
	p->acregmax = c->client.acregmax;
	p->acdirmin = c->client.acdirmin;
	p->acdirmax = c->client.acdirmax;
	p->timeout_ms = (int)c->client.timeo * 1000;
	p->dir_max = c->client.dir_max;
	p->nconnect = c->client.nconnect;
}

/* See nfs3_clnt.h. The settings of the file have their defaults in one
 * place, the configuration table: they come from there (the transport's
 * through rr_params_defaults). */
void nfs3c_params_defaults(struct nfs3c_params *p)
{
	struct nfsrdma_config c;

	memset(p, 0, sizeof(*p));
	rr_params_defaults(&p->rr);
	p->mountproto = NFS3C_PROTO_RDMA;
	p->connect_timeout_ms = 0; /* from timeo: nfs3c_connect_timeout_ms */
	p->dirty_max = 64u << 20;
	p->cred.flavor = AUTH_SYS;
	p->cred.uid = (uint32_t)geteuid();
	p->cred.gid = (uint32_t)getegid();
	if (config_defaults(&c) != 0)
		return; /* out of memory: zero sizes and times, which nfs3c_mount refuses */
	nfs3c_params_from_config(&c, p);
	config_free(&c);
}

/* Add n to a counter shared by threads. */
void nfs3c_stat_add(uint64_t *ctr, int64_t n)
{
	__atomic_add_fetch(ctr, (uint64_t)n, __ATOMIC_RELAXED);
}

/* Monotonic microseconds, for the statistics. */
uint64_t nfs3c_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Monotonic milliseconds, for deadlines and the attribute cache. */
uint64_t nfs3c_now_ms(void)
{
	return nfs3c_now_us() / 1000u;
}

/* ---- handles ---- */

void nfs3c_fh_to_xdr(const struct nfs3c_fh *fh, nfs_fh3 *x)
{
	x->data.data_len = fh->len;
	x->data.data_val = (char *)fh->data; /* the XDR encoder only reads it */
}

/* Copy a decoded handle; -EBADMSG for an empty or oversized one. */
int nfs3c_fh_from_xdr(const nfs_fh3 *x, struct nfs3c_fh *fh)
{
	if (x->data.data_len == 0 || x->data.data_len > NFS3_FHSIZE)
		return -EBADMSG;
	fh->len = x->data.data_len;
	memcpy(fh->data, x->data.data_val, fh->len);
	return 0;
}

/* FNV-1a over the handle's bytes. */
uint32_t nfs3c_fh_hash(const struct nfs3c_fh *fh)
{
	uint32_t h = 2166136261u;

	for (uint32_t i = 0; i < fh->len; i++)
		h = (h ^ fh->data[i]) * 16777619u;
	return h;
}

/* Whether two handles are the same bytes. */
int nfs3c_fh_equal(const struct nfs3c_fh *a, const struct nfs3c_fh *b)
{
	return a->len == b->len && memcmp(a->data, b->data, a->len) == 0;
}

/* ---- heads ---- */

/* One entry of a heads list: "HOST", "HOST:PORT", "[V6]" or "[V6]:PORT". */
static int head_split(char *e, char **host, char **port)
{
	char *end;
	long v;

	*port = NULL;
	if (e[0] == '[') {
		*host = e + 1;
		if ((end = strchr(e, ']')) == NULL || end == e + 1)
			return -EINVAL;
		*end++ = '\0';
		if (*end == ':')
			*port = end + 1;
		else if (*end)
			return -EINVAL;
	} else {
		*host = e;
		if ((end = strchr(e, ':')) != NULL) {
			*end = '\0';
			*port = end + 1;
		}
	}
	if (!**host || strchr(*host, '/'))
		return -EINVAL;
	if (*port) {
		errno = 0;
		v = strtol(*port, &end, 10);
		if (*end || end == *port || v < 1 || v > 65535 || errno)
			return -EINVAL;
	}
	return 0;
}

/* See nfs3_clnt.h. */
int nfs3c_heads_parse(const char *list, int (*fn)(void *arg, const char *host, const char *port),
		      void *arg, char *err, size_t errlen)
{
	char *copy = strdup(list), *save = NULL, *host, *port;
	size_t n = 0;
	int rc = copy ? 0 : -ENOMEM;

	for (char *e = copy ? strtok_r(copy, "+", &save) : NULL; e && rc == 0;
	     e = strtok_r(NULL, "+", &save)) {
		char shown[300];

		snprintf(shown, sizeof(shown), "%s", e);
		if (++n >= NFS3C_HEADS_MAX) {
			if (err)
				snprintf(err, errlen, "heads: more than %d heads",
					 NFS3C_HEADS_MAX - 1);
			rc = -E2BIG;
		} else if (head_split(e, &host, &port) != 0) {
			if (err)
				snprintf(err, errlen,
					 "heads: '%s' is not HOST, HOST:PORT or [ADDRESS]:PORT",
					 shown);
			rc = -EINVAL;
		} else if (fn) {
			rc = fn(arg, host, port);
		}
	}
	if (rc == 0 && n == 0) {
		if (err)
			snprintf(err, errlen, "heads: no head given");
		rc = -EINVAL;
	}
	free(copy);
	return rc;
}

/* See nfs3_clnt_int.h. */
void nfs3c_head_next(struct nfs3c *c, const char *why)
{
	size_t next = (c->cur + 1) % c->nheads;

	log_warn("server %s:%s %s: moving to head %s:%s", c->host, c->port, why,
		 c->heads[next].host, c->heads[next].port);
	c->cur = next;
	__atomic_store_n(&c->host, c->heads[next].host, __ATOMIC_RELEASE);
	__atomic_store_n(&c->port, c->heads[next].port, __ATOMIC_RELEASE);
	nfs3c_stat_add(&c->st.head_switches, 1);
	__atomic_store_n(&c->st.head, (uint64_t)next, __ATOMIC_RELAXED);
}

/* ---- connections ---- */

/* One attempt at one transport to the NFS service. */
static int connect_one(struct nfs3c *c, struct rpc_clnt **out)
{
	size_t max = (size_t)(c->rsize > c->wsize ? c->rsize : c->wsize) + 65536;
	struct rr_params rp = c->p.rr;
	int rc;

	if (max < (1u << 20) + 65536)
		max = (1u << 20) + 65536;
	if (c->p.proto == NFS3C_PROTO_RDMA) {
		rp.connect_timeout_ms = c->p.connect_timeout_ms;
		rp.call_timeout_ms = c->p.timeout_ms;
		rp.region = c->wslab; /* WRITEs go from their records */
		rp.region_len = c->wslab_len;
		rc = rr_clnt_create(&rp, c->host, c->port, out);
	} else {
		rc = rpc_tcp_clnt_create(c->host, c->port, c->p.connect_timeout_ms, max, out);
	}
	if (rc == 0) {
		(*out)->cred = c->p.cred;
		(*out)->key = c->p.key;
	}
	return rc;
}

/* Free a connection nobody uses any more. */
static void conn_free(struct nfs3c_conn *cn)
{
	for (unsigned i = 0; i < cn->nrpc; i++)
		rpc_clnt_destroy(cn->rpc[i]);
	free(cn);
}

/* One attempt at a new connection: every one of its transports, or none. */
static int connect_once(struct nfs3c *c, struct nfs3c_conn **out)
{
	struct nfs3c_conn *cn = calloc(1, sizeof(*cn));
	int rc = cn ? 0 : -ENOMEM;

	while (rc == 0 && cn->nrpc < c->p.nconnect) /* at most NFS3C_NCONNECT_MAX: nfs3c_mount */
		if ((rc = connect_one(c, &cn->rpc[cn->nrpc])) == 0)
			cn->nrpc++;
	if (rc && cn)
		conn_free(cn);
	else
		*out = cn;
	return rc;
}

/* Wait on the client's condition until woken or deadline (0: none). Lock held. */
static void cond_wait_until(struct nfs3c *c, uint64_t until_ms)
{
	struct timespec ts;

	if (until_ms == 0) {
		pthread_cond_wait(&c->cond, &c->lock);
		return;
	}
	ts.tv_sec = (time_t)(until_ms / 1000);
	ts.tv_nsec = (long)(until_ms % 1000) * 1000000;
	pthread_cond_timedwait(&c->cond, &c->lock, &ts);
}

/* Make a new connection (this thread is the one connecting). Lock held on
 * entry and exit, dropped while connecting. */
static void reconnect(struct nfs3c *c)
{
	struct nfs3c_conn *cn = NULL;
	int rc;

	c->connecting = 1;
	pthread_mutex_unlock(&c->lock);
	rc = connect_once(c, &cn);
	pthread_mutex_lock(&c->lock);
	c->connecting = 0;
	if (rc == 0 && c->closing) {
		conn_free(cn);
		rc = -ESHUTDOWN;
	} else if (rc == 0) {
		cn->refs = 1;
		cn->id = ++c->conn_ids;
		c->conn = cn;
		c->backoff_ms = 0;
		c->head_fails = 0;
		nfs3c_stat_add(&c->st.reconnects, 1);
		if (c->down)
			log_warn("server %s OK", c->host);
		c->down = 0;
	} else {
		c->last_err = rc;
		c->backoff_ms = c->backoff_ms ? c->backoff_ms * 2 : BACKOFF_MIN_MS;
		if (c->backoff_ms > NFS3C_BACKOFF_MAX_MS)
			c->backoff_ms = NFS3C_BACKOFF_MAX_MS;
		c->next_try_ms = nfs3c_now_ms() + (uint64_t)c->backoff_ms;
		if (c->nheads > 1) {
			/* the next head at once; the backoff after every head failed */
			nfs3c_head_next(c, "cannot be reached");
			if (++c->head_fails % c->nheads != 0)
				c->next_try_ms = nfs3c_now_ms();
		}
		if (!c->down && c->mounted)
			log_warn("server %s not responding (%s), still trying", c->host,
				 strerror(-rc));
		c->down = c->mounted;
	}
	pthread_cond_broadcast(&c->cond);
}

/* See nfs3_clnt_int.h: the current connection, or a new one after the backoff. */
int nfs3c_conn_get(struct nfs3c *c, uint64_t deadline_ms, struct nfs3c_conn **out)
{
	int rc = 0, tried = 0;

	pthread_mutex_lock(&c->lock);
	for (;;) {
		uint64_t now = nfs3c_now_ms(), until = deadline_ms;

		if (c->closing || c->aborted) {
			rc = c->closing ? -ESHUTDOWN : -EIO;
			break;
		}
		if (c->conn) {
			c->conn->refs++;
			*out = c->conn;
			break;
		}
		if (tried && ((deadline_ms && now >= deadline_ms) || c->giving_up)) {
			rc = -EIO;
			break;
		}
		if (!c->connecting && (now >= c->next_try_ms || c->giving_up)) {
			reconnect(c);
			tried = 1;
			continue;
		}
		if (!c->connecting && (!until || c->next_try_ms < until))
			until = c->next_try_ms; /* the next attempt, after the backoff */
		cond_wait_until(c, until);
		tried = 1; /* an attempt (ours or another thread's) or a backoff went by */
	}
	pthread_mutex_unlock(&c->lock);
	return rc;
}

/* See nfs3_clnt_int.h. */
void nfs3c_conn_close(struct nfs3c *c)
{
	struct nfs3c_conn *cn;
	int last = 0;

	pthread_mutex_lock(&c->lock);
	if ((cn = c->conn) != NULL) {
		c->conn = NULL;
		last = --cn->refs == 0;
	}
	pthread_mutex_unlock(&c->lock);
	if (last)
		conn_free(cn);
}

/* After nfs3c_shutdown: calls in flight get timeo (at most STOP_GRACE_MS) to finish; then the
 * connection is ended under them and no new one is made, so a stop never
 * waits on a server that does not answer, hard mount or not. */
static void *stopper_main(void *arg)
{
	struct nfs3c *c = arg;
	unsigned grace = c->p.timeout_ms && c->p.timeout_ms < STOP_GRACE_MS ? c->p.timeout_ms
									    : STOP_GRACE_MS;
	uint64_t until = nfs3c_now_ms() + grace;
	struct nfs3c_conn *cn = NULL;

	pthread_mutex_lock(&c->lock);
	while (!c->closing && nfs3c_now_ms() < until)
		cond_wait_until(c, until);
	if (!c->closing) {
		c->aborted = 1;
		if ((cn = c->conn) != NULL)
			cn->refs++;
		pthread_cond_broadcast(&c->cond);
	}
	pthread_mutex_unlock(&c->lock);
	if (cn) {
		log_warn("server %s: stopping; what still waits for it after %u ms fails", c->host,
			 grace);
		for (unsigned i = 0; i < cn->nrpc; i++)
			rpc_clnt_abort(cn->rpc[i]);
		nfs3c_conn_put(c, cn, 1);
	}
	return NULL;
}

/* See nfs3_clnt.h. */
void nfs3c_shutdown(struct nfs3c *c)
{
	pthread_mutex_lock(&c->lock);
	if (!c->giving_up) {
		c->giving_up = 1;
		c->stopper_running = pthread_create(&c->stopper, NULL, stopper_main, c) == 0;
	}
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
}

/* See nfs3_clnt_int.h: a broken connection stops being current; the last user frees it. */
void nfs3c_conn_put(struct nfs3c *c, struct nfs3c_conn *cn, int broken)
{
	int last;

	pthread_mutex_lock(&c->lock);
	if (broken && c->conn == cn) {
		c->conn = NULL; /* the next call makes a new one */
		cn->refs--;
	}
	last = --cn->refs == 0;
	pthread_mutex_unlock(&c->lock);
	if (last)
		conn_free(cn);
}

/* ---- accessors ---- */

const struct nfs3c_fh *nfs3c_root(const struct nfs3c *c)
{
	return &c->root;
}

/* The READ size in use. */
uint32_t nfs3c_rsize(const struct nfs3c *c)
{
	return c->rsize;
}

/* The WRITE size in use. */
uint32_t nfs3c_wsize(const struct nfs3c *c)
{
	return c->wsize;
}

/* A snapshot of the counters. */
void nfs3c_get_stats(struct nfs3c *c, struct nfs3c_stats *out)
{
	*out = c->st;
	out->dirty_now = __atomic_load_n(&c->dirty, __ATOMIC_RELAXED);
	pthread_mutex_lock(&c->lock);
	out->transports = c->conn ? c->conn->nrpc : 0;
	pthread_mutex_unlock(&c->lock);
	pthread_mutex_lock(&c->wpool_lock);
	out->wbufs_spare = c->wpool_bytes;
	pthread_mutex_unlock(&c->wpool_lock);
}

/* The RPC/RDMA counters of the current connection, all its transports together. */
void nfs3c_get_xprt_stats(struct nfs3c *c, struct rr_stats *out)
{
	struct nfs3c_conn *cn = NULL;

	memset(out, 0, sizeof(*out));
	if (c->p.proto != NFS3C_PROTO_RDMA)
		return;
	pthread_mutex_lock(&c->lock);
	if ((cn = c->conn) != NULL)
		cn->refs++;
	pthread_mutex_unlock(&c->lock);
	if (!cn)
		return;
	for (unsigned i = 0; i < cn->nrpc; i++) {
		struct rr_stats one;

		rr_clnt_get_stats(cn->rpc[i], &one);
		rr_stats_add(out, &one);
		/* each one's, not a sum: the same on each */
		out->inline_send_now = one.inline_send_now;
		out->credits_granted = one.credits_granted;
	}
	nfs3c_conn_put(c, cn, 0);
}

/* ---- errors ---- */

static const struct {
	nfsstat3 st;
	int err;
	const char *name;
} stat_map[] = {
	{NFS3_OK, 0, "NFS3_OK"},
	{NFS3ERR_PERM, EPERM, "NFS3ERR_PERM"},
	{NFS3ERR_NOENT, ENOENT, "NFS3ERR_NOENT"},
	{NFS3ERR_IO, EIO, "NFS3ERR_IO"},
	{NFS3ERR_NXIO, ENXIO, "NFS3ERR_NXIO"},
	{NFS3ERR_ACCES, EACCES, "NFS3ERR_ACCES"},
	{NFS3ERR_EXIST, EEXIST, "NFS3ERR_EXIST"},
	{NFS3ERR_XDEV, EXDEV, "NFS3ERR_XDEV"},
	{NFS3ERR_NODEV, ENODEV, "NFS3ERR_NODEV"},
	{NFS3ERR_NOTDIR, ENOTDIR, "NFS3ERR_NOTDIR"},
	{NFS3ERR_ISDIR, EISDIR, "NFS3ERR_ISDIR"},
	{NFS3ERR_INVAL, EINVAL, "NFS3ERR_INVAL"},
	{NFS3ERR_FBIG, EFBIG, "NFS3ERR_FBIG"},
	{NFS3ERR_NOSPC, ENOSPC, "NFS3ERR_NOSPC"},
	{NFS3ERR_ROFS, EROFS, "NFS3ERR_ROFS"},
	{NFS3ERR_MLINK, EMLINK, "NFS3ERR_MLINK"},
	{NFS3ERR_NAMETOOLONG, ENAMETOOLONG, "NFS3ERR_NAMETOOLONG"},
	{NFS3ERR_NOTEMPTY, ENOTEMPTY, "NFS3ERR_NOTEMPTY"},
	{NFS3ERR_DQUOT, EDQUOT, "NFS3ERR_DQUOT"},
	{NFS3ERR_STALE, ESTALE, "NFS3ERR_STALE"},
	{NFS3ERR_REMOTE, EREMOTE, "NFS3ERR_REMOTE"},
	{NFS3ERR_BADHANDLE, ESTALE, "NFS3ERR_BADHANDLE"},
	{NFS3ERR_NOT_SYNC, EIO, "NFS3ERR_NOT_SYNC"},
	{NFS3ERR_BAD_COOKIE, EINVAL, "NFS3ERR_BAD_COOKIE"},
	{NFS3ERR_NOTSUPP, ENOTSUP, "NFS3ERR_NOTSUPP"},
	{NFS3ERR_TOOSMALL, EOVERFLOW, "NFS3ERR_TOOSMALL"},
	{NFS3ERR_SERVERFAULT, EIO, "NFS3ERR_SERVERFAULT"},
	{NFS3ERR_BADTYPE, EINVAL, "NFS3ERR_BADTYPE"},
	{NFS3ERR_JUKEBOX, EAGAIN, "NFS3ERR_JUKEBOX"},
};

/* See nfs3_clnt.h. */
int nfs3c_errno(nfsstat3 st)
{
	for (size_t i = 0; i < sizeof(stat_map) / sizeof(stat_map[0]); i++)
		if (stat_map[i].st == st)
			return -stat_map[i].err;
	return -EIO;
}

const char *nfs3c_stat_name(nfsstat3 st)
{
	for (size_t i = 0; i < sizeof(stat_map) / sizeof(stat_map[0]); i++)
		if (stat_map[i].st == st)
			return stat_map[i].name;
	return "unknown nfsstat3";
}
