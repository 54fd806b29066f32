/*
 * metrics.c: the server's counters for Prometheus (see metrics.h). Every
 * family is named nfsrdma_*, with its unit in the name (_seconds, _bytes) and
 * _total on counters, and comes with # HELP and # TYPE; `promtool check
 * metrics` finds nothing to say (t/system/metrics.sh).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "common/base/config.h"
#include "common/base/log.h"
#include "common/nfs/nfs_prog.h"
#include "common/nfs/nlm_prog.h"
#include "common/rpc/rpc_drc.h"
#include "common/rpc/rpc_replay.h"
#include "common/rpc/rpc_tcp.h"
#include "common/rpc/rpc_udp.h"
#include "common/rpcrdma/rpcrdma.h"
#include "server/backend.h"
#include "server/daemon.h"
#include "server/metrics.h"
#include "server/nlm.h"

/* ------------------------------------------------------------------ the text */

/* # HELP and # TYPE of one family. */
static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A family with one unlabelled sample. */
static void single(FILE *f, const char *name, const char *type, const char *help, double v)
{
	family(f, name, type, help);
	fprintf(f, "%s %.17g\n", name, v);
}

/* "nfs", "mount", or the program number. */
static const char *program_name(const struct rpc_program *p, char *buf, size_t len)
{
	if (p->prog == NFS_PROGRAM)
		return "nfs";
	if (p->prog == MOUNT_PROGRAM)
		return "mount";
	if (p->prog == NLM_PROGRAM)
		return "nlm";
	if (p->prog == NSM_PROGRAM)
		return "nsm";
	snprintf(buf, len, "%u", p->prog);
	return buf;
}

/* What the per-procedure callbacks print, and into what. */
struct op_print {
	FILE *f;
	int histogram; /* 0: nfsrdma_calls_total, 1: nfsrdma_call_duration_seconds */
};

/* One procedure on one transport, if it was ever called. */
static void print_op(void *arg, const struct rpc_program *prog, const struct rpc_proc_desc *proc,
		     enum rpc_xprt xprt, const struct rpc_op_stats *st)
{
	struct op_print *op = arg;
	char labels[160], pbuf[16];
	uint64_t cum = 0;

	if (st->calls == 0)
		return;
	snprintf(labels, sizeof(labels), "transport=\"%s\",program=\"%s\",procedure=\"%s\"",
		 rpc_xprt_name(xprt), program_name(prog, pbuf, sizeof(pbuf)), proc->name);
	if (!op->histogram) {
		fprintf(op->f, "nfsrdma_calls_total{%s} %llu\n", labels,
			(unsigned long long)st->calls);
		return;
	}
	for (unsigned b = 0; b < RPC_LAT_BUCKETS; b++) {
		cum += st->bucket[b];
		fprintf(op->f, "nfsrdma_call_duration_seconds_bucket{%s,le=\"%g\"} %llu\n", labels,
			(double)rpc_lat_bound_ns[b] / 1e9, (unsigned long long)cum);
	}
	cum += st->bucket[RPC_LAT_BUCKETS];
	fprintf(op->f, "nfsrdma_call_duration_seconds_bucket{%s,le=\"+Inf\"} %llu\n", labels,
		(unsigned long long)cum);
	fprintf(op->f, "nfsrdma_call_duration_seconds_sum{%s} %.9f\n", labels,
		(double)st->sum_ns / 1e9);
	fprintf(op->f, "nfsrdma_call_duration_seconds_count{%s} %llu\n", labels,
		(unsigned long long)cum);
}

/* Calls per procedure and their latency, per transport. */
static void print_calls(struct nfsrdma_server *s, FILE *f)
{
	struct op_print op = {.f = f};

	family(f, "nfsrdma_calls_total", "counter",
	       "Calls run, by transport, program and procedure.");
	rpc_server_each_op(s->rpc, print_op, &op);
	family(f, "nfsrdma_call_duration_seconds", "histogram",
	       "Time a procedure ran, from its decoded arguments to its result, by transport, "
	       "program and procedure.");
	op.histogram = 1;
	rpc_server_each_op(s->rpc, print_op, &op);
}

/* The transports' counters summed over their listeners. */
struct xprt_totals {
	struct rpc_tcp_stats tcp;
	struct rr_stats rdma;
	unsigned udp_peak;
	int have_rdma;
};

static void gather(struct nfsrdma_server *s, struct xprt_totals *t)
{
	struct rpc_tcp_stats one;

	memset(t, 0, sizeof(*t));
	for (unsigned i = 0; i < s->ntcp; i++) {
		rpc_tcp_get_stats(s->tcp[i], &one);
		t->tcp.conns += one.conns;
		t->tcp.refused += one.refused;
		t->tcp.shed += one.shed;
		t->tcp.idle_closed += one.idle_closed;
		t->tcp.deadline_drops += one.deadline_drops;
		t->tcp.accept_errors += one.accept_errors;
	}
	for (unsigned i = 0; i < s->nudp; i++)
		if (rpc_udp_inflight_peak(s->udp[i]) > t->udp_peak)
			t->udp_peak = rpc_udp_inflight_peak(s->udp[i]);
	if (s->rr != NULL) {
		rr_server_get_stats(s->rr, &t->rdma);
		t->have_rdma = 1;
	}
}

/* Connections by transport: open now, refused, shed, closed idle. */
static void print_connections(FILE *f, const struct xprt_totals *t)
{
	family(f, "nfsrdma_connections", "gauge", "Connections open now, by transport.");
	fprintf(f, "nfsrdma_connections{transport=\"tcp\"} %u\n", t->tcp.conns);
	fprintf(f, "nfsrdma_connections{transport=\"rdma\"} %llu\n",
		(unsigned long long)t->rdma.conns);
	family(f, "nfsrdma_connections_refused_total", "counter",
	       "New connections closed at once because a connection limit was reached.");
	fprintf(f, "nfsrdma_connections_refused_total{transport=\"tcp\"} %llu\n",
		(unsigned long long)t->tcp.refused);
	fprintf(f, "nfsrdma_connections_refused_total{transport=\"rdma\"} %llu\n",
		(unsigned long long)t->rdma.conns_refused);
	family(f, "nfsrdma_connections_shed_total", "counter",
	       "Idle connections closed to make room for new ones.");
	fprintf(f, "nfsrdma_connections_shed_total{transport=\"tcp\"} %llu\n",
		(unsigned long long)t->tcp.shed);
	fprintf(f, "nfsrdma_connections_shed_total{transport=\"rdma\"} %llu\n",
		(unsigned long long)t->rdma.conns_shed);
	family(f, "nfsrdma_connections_idle_closed_total", "counter",
	       "Connections closed after their idle time without a call.");
	fprintf(f, "nfsrdma_connections_idle_closed_total{transport=\"tcp\"} %llu\n",
		(unsigned long long)t->tcp.idle_closed);
	fprintf(f, "nfsrdma_connections_idle_closed_total{transport=\"rdma\"} %llu\n",
		(unsigned long long)t->rdma.idle_closed);
}

/* One errors_total sample. */
static void error_line(FILE *f, const char *xprt, const char *kind, uint64_t n)
{
	fprintf(f, "nfsrdma_errors_total{transport=\"%s\",kind=\"%s\"} %llu\n", xprt, kind,
		(unsigned long long)n);
}

/* Errors by transport and kind: calls refused unrun, protocol errors, drops. */
static void print_errors(struct nfsrdma_server *s, FILE *f, const struct xprt_totals *t)
{
	uint64_t rej[RPC_XPRT_N][RPC_AUTH_ERROR + 1];

	family(f, "nfsrdma_errors_total", "counter",
	       "Calls answered without running (by RPC reject reason), RPC/RDMA protocol errors "
	       "and connections dropped for a stalled transfer, by transport and kind.");
	rpc_server_get_rejects(s->rpc, rej);
	for (unsigned x = 0; x < RPC_XPRT_N; x++)
		for (unsigned r = RPC_PROG_UNAVAIL; r <= RPC_AUTH_ERROR; r++)
			error_line(f, rpc_xprt_name((enum rpc_xprt)x),
				   rpc_reject_label((enum rpc_reject)r), rej[x][r]);
	error_line(f, "tcp", "deadline_drop", t->tcp.deadline_drops);
	error_line(f, "tcp", "accept_error", t->tcp.accept_errors);
	error_line(f, "rdma", "err_vers_sent", t->rdma.err_vers_sent);
	error_line(f, "rdma", "err_chunk_sent", t->rdma.err_chunk_sent);
	error_line(f, "rdma", "credit_overrun", t->rdma.credit_overruns);
	error_line(f, "rdma", "post_failure", t->rdma.post_failures);
	error_line(f, "rdma", "op_timeout", t->rdma.op_timeouts);
	error_line(f, "rdma", "done_unknown", t->rdma.done_unknown);
	error_line(f, "rdma", "pull_refused", t->rdma.pulls_refused);
}

/* RPC/RDMA: bytes by path, registration, exposure, credits. */
static void print_rdma(FILE *f, const struct rr_stats *r)
{
	family(f, "nfsrdma_rdma_bytes_total", "counter",
	       "RPC/RDMA payload bytes by direction and path: inline in Send/Receive, chunk by "
	       "RDMA Read (in) or RDMA Write (out), exposed for the client to read (Read-Read).");
	fprintf(f, "nfsrdma_rdma_bytes_total{direction=\"in\",path=\"inline\"} %llu\n",
		(unsigned long long)r->bytes_inline_in);
	fprintf(f, "nfsrdma_rdma_bytes_total{direction=\"out\",path=\"inline\"} %llu\n",
		(unsigned long long)r->bytes_inline_out);
	fprintf(f, "nfsrdma_rdma_bytes_total{direction=\"in\",path=\"chunk\"} %llu\n",
		(unsigned long long)r->bytes_rdma_read);
	fprintf(f, "nfsrdma_rdma_bytes_total{direction=\"out\",path=\"chunk\"} %llu\n",
		(unsigned long long)r->bytes_rdma_write);
	fprintf(f, "nfsrdma_rdma_bytes_total{direction=\"out\",path=\"exposed\"} %llu\n",
		(unsigned long long)r->bytes_exposed);
	single(f, "nfsrdma_rdma_registrations_total", "counter", "Memory registrations made.",
	       (double)r->regs);
	single(f, "nfsrdma_rdma_deregistrations_total", "counter", "Memory registrations undone.",
	       (double)r->deregs);
	single(f, "nfsrdma_rdma_registration_seconds_total", "counter",
	       "Time spent registering memory.", (double)r->reg_ns / 1e9);
	single(f, "nfsrdma_rdma_deregistration_seconds_total", "counter",
	       "Time spent deregistering memory.", (double)r->dereg_ns / 1e9);
	single(f, "nfsrdma_rdma_window_binds_total", "counter", "Memory window bindings.",
	       (double)r->binds);
	single(f, "nfsrdma_rdma_remote_invalidations_total", "counter",
	       "Replies sent with Invalidate, ending the client's key of the call.",
	       (double)r->remote_invs);
	single(f, "nfsrdma_rdma_registration_cache_hits_total", "counter",
	       "Buffers found registered in the registration cache.", (double)r->cache_hits);
	single(f, "nfsrdma_rdma_registration_cache_misses_total", "counter",
	       "Buffers the registration cache had to register.", (double)r->cache_misses);
	single(f, "nfsrdma_rdma_registered_bytes", "gauge", "Bytes registered now.",
	       (double)r->registered_now);
	single(f, "nfsrdma_rdma_registration_cache_idle_bytes", "gauge",
	       "Of the registered bytes, those idle in the registration cache.",
	       (double)r->cached_now);
	single(f, "nfsrdma_rdma_remote_registrations", "gauge",
	       "Registrations a peer can reach now.", (double)r->remote_regs_now);
	single(f, "nfsrdma_rdma_exposed_bytes", "gauge",
	       "Reply bytes exposed to clients now (Read-Read mode).", (double)r->exposed_now);
	single(f, "nfsrdma_rdma_exposures_expired_total", "counter",
	       "Exposed replies revoked because no RDMA_DONE came in time.",
	       (double)r->exposed_expired);
	single(f, "nfsrdma_rdma_credits_granted", "gauge",
	       "Credits granted now, summed over the connections.", (double)r->credits_granted);
	single(f, "nfsrdma_rdma_posts_total", "counter",
	       "Calls of the RDMA device's post_send; the replies to calls taken from one "
	       "batch of completions share one.",
	       (double)r->posts);
	single(f, "nfsrdma_rdma_nomsg_waits_total", "counter",
	       "RDMA_NOMSG calls that waited for another call's pull on their connection.",
	       (double)r->nomsg_waits);
	single(f, "nfsrdma_rdma_window_waits_total", "counter",
	       "Read-Read replies that waited for a memory window (server.fastreg_pool).",
	       (double)r->window_waits);
	single(f, "nfsrdma_rdma_exposure_waits_total", "counter",
	       "Read-Read replies that waited, parked on their connection, for room in its "
	       "bounds (server.read_read) or for memory windows.",
	       (double)r->exposure_waits);
}

/* Memory in use against the configured ceilings; caches; integrity. */
static void print_memory(struct nfsrdma_server *s, FILE *f)
{
	const struct nfsrdma_config *c = &s->cfg;
	size_t used, peak, budget;
	struct rpc_replay_stats rp;
	struct rpc_drc_stats drc;
	struct nfs_handle_stats hs;

	rpc_server_get_mem(s->rpc, &used, &peak, &budget);
	single(f, "nfsrdma_memory_used_bytes", "gauge",
	       "TCP and UDP call and reply memory in use now.", (double)used);
	single(f, "nfsrdma_memory_peak_bytes", "gauge",
	       "The most TCP and UDP call and reply memory used at once.", (double)peak);
	single(f, "nfsrdma_memory_budget_bytes", "gauge",
	       "The ceiling on TCP and UDP call and reply memory (server.memory_budget).",
	       (double)budget);
	single(f, "nfsrdma_rdma_registered_memory_budget_bytes", "gauge",
	       "The ceiling on registered memory (rdma.registered_memory_budget).",
	       (double)c->rdma.registered_memory_budget);
	single(f, "nfsrdma_rdma_exposed_per_connection_max_bytes", "gauge",
	       "The ceiling on reply bytes exposed per connection "
	       "(server.read_read.exposed_bytes_max).",
	       (double)c->server.read_read.exposed_bytes_max);
	rpc_server_get_drc_stats(s->rpc, &drc);
	single(f, "nfsrdma_reply_cache_hits_total", "counter",
	       "Retransmissions answered from the duplicate request cache.", (double)drc.hits);
	single(f, "nfsrdma_reply_cache_drops_total", "counter",
	       "Retransmissions dropped while the first run was going.", (double)drc.drops);
	single(f, "nfsrdma_reply_cache_misses_total", "counter",
	       "Non-idempotent calls looked up in the cache and run.", (double)drc.misses);
	single(f, "nfsrdma_reply_cache_entries", "gauge", "Replies kept now.", (double)drc.entries);
	single(f, "nfsrdma_reply_cache_capacity", "gauge", "Replies the cache may keep.",
	       (double)drc.capacity);
	nfs_backend_handle_stats(s->be, &hs);
	single(f, "nfsrdma_handles_portable_exports", "gauge",
	       "Exports with portable file handles (server.handles).", (double)hs.exports);
	single(f, "nfsrdma_handles_entries", "gauge", "Objects the portable handles' indexes hold.",
	       (double)hs.entries);
	single(f, "nfsrdma_handles_searches_total", "counter",
	       "Searches of an export for an object renamed outside the server or whose index "
	       "entry was lost.",
	       (double)hs.walks);
	single(f, "nfsrdma_handles_searches_found_total", "counter",
	       "Searches of an export that found the object.", (double)hs.found);
	single(f, "nfsrdma_identity_userspace_exports", "gauge",
	       "Exports that check callers' permissions in user space (server.identity).",
	       (double)hs.userspace_identity);
	rpc_server_get_replay_stats(s->rpc, &rp);
	single(f, "nfsrdma_integrity_replays_total", "counter",
	       "Integrity-protected calls refused as replays.", (double)rp.replays);
	single(f, "nfsrdma_integrity_off_clock_total", "counter",
	       "Integrity-protected calls refused for a clock too far off.", (double)rp.off_clock);
}

/* The lock manager: what it holds now, and what it refused. */
static void print_locks(struct nfsrdma_server *s, FILE *f)
{
	struct nlm_stats st;

	if (s->nlm == NULL)
		return;
	nlm_get_stats(s->nlm, &st);
	single(f, "nfsrdma_nlm_clients", "gauge", "Client hosts with lock state now.",
	       (double)st.clients);
	single(f, "nfsrdma_nlm_owners", "gauge",
	       "Lock owners now (each an open file description of a locked file).",
	       (double)st.owners);
	single(f, "nfsrdma_nlm_blocked", "gauge", "Blocked lock requests waiting now.",
	       (double)st.blocked);
	single(f, "nfsrdma_nlm_granted_total", "counter", "Locks granted.", (double)st.granted);
	single(f, "nfsrdma_nlm_denied_total", "counter", "Locks denied for a conflict.",
	       (double)st.denied);
	single(f, "nfsrdma_nlm_blocked_total", "counter", "Lock requests that blocked.",
	       (double)st.blocked_total);
	single(f, "nfsrdma_nlm_nolocks_total", "counter",
	       "Lock requests refused at a ceiling (DENIED_NOLOCKS).", (double)st.nolocks);
	single(f, "nfsrdma_nlm_grace_refused_total", "counter",
	       "Requests refused for the grace period.", (double)st.grace_refused);
	single(f, "nfsrdma_nlm_callbacks_failed_total", "counter",
	       "Granted locks the client did not take (released again).",
	       (double)st.callbacks_failed);
	single(f, "nfsrdma_nlm_reboots_total", "counter",
	       "Clients that announced a reboot and lost their locks.", (double)st.reboots);
}

void metrics_print(struct nfsrdma_server *s, FILE *f)
{
	struct xprt_totals t;
	size_t nexports;

	pthread_mutex_lock(&s->cfg_lock);
	nexports = s->cfg.server.n_exports;
	pthread_mutex_unlock(&s->cfg_lock);
	gather(s, &t);
	single(f, "nfsrdma_exports", "gauge", "Directories exported now.", (double)nexports);
	single(f, "nfsrdma_worker_threads", "gauge", "Worker threads running NFS calls.",
	       (double)s->cfg.server.threads);
	print_calls(s, f);
	print_connections(f, &t);
	print_errors(s, f, &t);
	single(f, "nfsrdma_udp_inflight_peak", "gauge", "The most UDP calls held at once.",
	       (double)t.udp_peak);
	print_rdma(f, &t.rdma);
	print_locks(s, f);
	print_memory(s, f);
}

/* ------------------------------------------------------------------ the endpoint */

#ifdef HAVE_LIBMICROHTTPD
#include <microhttpd.h>

struct metrics {
	struct MHD_Daemon *d;
	struct nfsrdma_server *s;
	int fd;
};

/* A response of text (freed by libmicrohttpd) with status. */
static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status, char *text, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ret;

	if (r == NULL) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/plain; version=0.0.4; charset=utf-8");
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* GET (or HEAD) /metrics; anything else is 404 or 405. */
static enum MHD_Result answer(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_data_size, void **con_cls)
{
	struct metrics *m = cls;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	(void)version;
	(void)upload_data;
	(void)upload_data_size;
	(void)con_cls;
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, strdup("only GET /metrics\n"), 18);
	if (strcmp(url, "/metrics") != 0)
		return reply(conn, MHD_HTTP_NOT_FOUND, strdup("not found: try /metrics\n"), 24);
	if ((f = open_memstream(&text, &len)) == NULL)
		return MHD_NO;
	metrics_print(m->s, f);
	fclose(f);
	return reply(conn, MHD_HTTP_OK, text, len);
}

/* The listening socket on listen, so that a failure says why. -errno. */
static int listen_on(const char *listen_at, int *fd_out)
{
	struct sockaddr_storage ss = {0};
	struct sockaddr_in *in = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	char host[64], why[256];
	unsigned port;
	socklen_t len;
	int fd, one = 1, rc;

	if (config_hostport_parse(listen_at, host, sizeof(host), &port, why, sizeof(why)) < 0) {
		log_err("server.metrics.listen: %s", why);
		return -EINVAL;
	}
	if (inet_pton(AF_INET, host, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		len = sizeof(*in);
	} else {
		inet_pton(AF_INET6, host, &in6->sin6_addr);
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		len = sizeof(*in6);
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 16) < 0) {
		rc = -errno;
		log_err("server.metrics.listen: cannot listen on %s: %s", listen_at, strerror(-rc));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	*fd_out = fd;
	return 0;
}

int metrics_start(struct nfsrdma_server *s, const char *listen_at, struct metrics **out)
{
	struct metrics *m = calloc(1, sizeof(*m));
	int rc;

	if (m == NULL)
		return -ENOMEM;
	m->s = s;
	if ((rc = listen_on(listen_at, &m->fd)) < 0) {
		free(m);
		return rc;
	}
	/* a few scrapers at once, none held for long */
	m->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, answer, m,
				MHD_OPTION_LISTEN_SOCKET, m->fd, MHD_OPTION_CONNECTION_LIMIT,
				(unsigned)16, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10,
				MHD_OPTION_END);
	if (m->d == NULL) {
		log_err("server.metrics.listen: libmicrohttpd cannot serve on %s", listen_at);
		close(m->fd);
		free(m);
		return -EIO;
	}
	log_notice("Prometheus metrics on http://%s/metrics", listen_at);
	*out = m;
	return 0;
}

void metrics_stop(struct metrics *m)
{
	if (m == NULL)
		return;
	MHD_stop_daemon(m->d); /* closes the listening socket too */
	free(m);
}
#else
int metrics_start(struct nfsrdma_server *s, const char *listen_at, struct metrics **out)
{
	(void)s;
	(void)out;
	log_err("server.metrics.listen = \"%s\": this nfsrdma-server was built without "
		"libmicrohttpd (Debian: libmicrohttpd-dev, then configure)",
		listen_at);
	return -ENOTSUP;
}

void metrics_stop(struct metrics *m)
{
	(void)m;
}
#endif
