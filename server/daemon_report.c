/* daemon_report.c: what the control socket's "stats" and "exports" print
 * about a running server (see daemon.h). */
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "common/base/poller.h"
#include "common/rpc/rpc_drc.h"
#include "common/rpc/rpc_replay.h"
#include "common/rpc/rpc_tcp.h"
#include "common/rpc/rpc_udp.h"
#include "common/rpcrdma/rpcrdma.h"
#include "server/backend.h"
#include "server/daemon.h"
#include "server/nlm.h"
#include "server/ordma_cache.h"

void daemon_print_stats(struct nfsrdma_server *s, FILE *f)
{
	struct rpc_tcp_stats tcp = {0}, one;
	size_t mem_used, mem_peak, mem_budget;
	struct rpc_replay_stats replay;
	struct rpc_drc_stats drc;
	struct nfs_handle_stats hs;
	struct ordma_cache_stats os;
	unsigned udp_peak = 0;

	for (unsigned i = 0; i < s->ntcp; i++) {
		rpc_tcp_get_stats(s->tcp[i], &one);
		tcp.conns += one.conns;
		tcp.refused += one.refused;
		tcp.shed += one.shed;
		tcp.idle_closed += one.idle_closed;
		tcp.deadline_drops += one.deadline_drops;
		tcp.accept_errors += one.accept_errors;
	}
	fprintf(f, "server.exports %zu\nserver.threads %u\nserver.poller %s\n",
		s->cfg.server.n_exports, s->cfg.server.threads,
		poller_backend() ? poller_backend()->name : "none");
	fprintf(f,
		"tcp.conns %u\ntcp.refused %llu\ntcp.shed %llu\ntcp.idle_closed %llu\n"
		"tcp.deadline_drops %llu\ntcp.accept_errors %llu\n",
		tcp.conns, (unsigned long long)tcp.refused, (unsigned long long)tcp.shed,
		(unsigned long long)tcp.idle_closed, (unsigned long long)tcp.deadline_drops,
		(unsigned long long)tcp.accept_errors);
	for (unsigned i = 0; i < s->nudp; i++)
		udp_peak = udp_peak > rpc_udp_inflight_peak(s->udp[i])
				   ? udp_peak
				   : rpc_udp_inflight_peak(s->udp[i]);
	fprintf(f, "udp.inflight_peak %u\n", udp_peak);
	rpc_server_get_mem(s->rpc, &mem_used, &mem_peak, &mem_budget);
	fprintf(f, "memory.used %zu\nmemory.peak %zu\nmemory.budget %zu\n", mem_used, mem_peak,
		mem_budget);
	rpc_server_get_replay_stats(s->rpc, &replay);
	fprintf(f,
		"integrity.replays %llu\nintegrity.off_clock %llu\nintegrity.contexts_full %llu\n"
		"integrity.contexts %llu\n",
		(unsigned long long)replay.replays, (unsigned long long)replay.off_clock,
		(unsigned long long)replay.full, (unsigned long long)replay.contexts);
	nfs_backend_ordma_stats(s->be, &os);
	fprintf(f,
		"ordma.slots %llu\nordma.used %llu\nordma.fills %llu\nordma.evictions %llu\n"
		"ordma.forgets %llu\nordma.refs %llu\n",
		(unsigned long long)os.slots, (unsigned long long)os.used,
		(unsigned long long)os.fills, (unsigned long long)os.evictions,
		(unsigned long long)os.forgets, (unsigned long long)os.refs);
	nfs_backend_handle_stats(s->be, &hs);
	fprintf(f,
		"handles.portable_exports %llu\nhandles.entries %llu\nhandles.searches %llu\n"
		"handles.searches_found %llu\nidentity.userspace_exports %llu\n",
		(unsigned long long)hs.exports, (unsigned long long)hs.entries,
		(unsigned long long)hs.walks, (unsigned long long)hs.found,
		(unsigned long long)hs.userspace_identity);
	rpc_server_get_drc_stats(s->rpc, &drc);
	fprintf(f,
		"reply_cache.hits %llu\nreply_cache.drops %llu\nreply_cache.misses %llu\n"
		"reply_cache.entries %llu\nreply_cache.capacity %llu\n",
		(unsigned long long)drc.hits, (unsigned long long)drc.drops,
		(unsigned long long)drc.misses, (unsigned long long)drc.entries,
		(unsigned long long)drc.capacity);
	if (s->rr)
		rr_server_print_stats(s->rr, f);
	nlm_print_stats(s->nlm, f);
}

/* One client of an export as exportfs -v shows it: CLIENT(OPTIONS). */
static void print_client(FILE *f, const struct cfg_export *x, const struct cfg_client_addr *a)
{
	const struct cfg_client_opts *o = &a->opts;

	fprintf(f, "%s(%s,%s,no_subtree_check,sec=sys,%s,%s,%s,anonuid=%u,anongid=%u",
		x->clients.v[a->client], config_access_name(o->access), o->async ? "async" : "sync",
		o->secure ? "secure" : "insecure",
		o->root_squash ? "root_squash" : "no_root_squash",
		o->all_squash ? "all_squash" : "no_all_squash", o->anon_uid, o->anon_gid);
	if (o->no_auth_nlm)
		fprintf(f, ",insecure_locks"); /* as exportfs -v shows it */
	if (x->fsid != 0)
		fprintf(f, ",fsid=%u", x->fsid);
	if (x->integrity_required)
		fprintf(f, ",integrity_required");
	fprintf(f, ")\n");
}

/* A connected peer as "TRANSPORT ADDRESS:PORT" ([ADDRESS]:PORT for IPv6). */
struct peer_print {
	FILE *f;
	const char *transport;
	unsigned n;
};

static void print_peer(void *arg, const struct sockaddr *sa, socklen_t len)
{
	struct peer_print *pp = arg;
	char host[NI_MAXHOST], port[NI_MAXSERV];

	pp->n++;
	if (len == 0 || getnameinfo(sa, len, host, sizeof(host), port, sizeof(port),
				    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
		fprintf(pp->f, "%s\t(address unknown)\n", pp->transport);
	else if (sa->sa_family == AF_INET6)
		fprintf(pp->f, "%s\t[%s]:%s\n", pp->transport, host, port);
	else
		fprintf(pp->f, "%s\t%s:%s\n", pp->transport, host, port);
}

void daemon_print_exports(struct nfsrdma_server *s, FILE *f)
{
	struct peer_print pp = {.f = f, .transport = "rdma"};

	pthread_mutex_lock(&s->cfg_lock);
	for (size_t i = 0; i < s->cfg.server.n_exports; i++) {
		const struct cfg_export *x = &s->cfg.server.exports[i];

		for (size_t j = 0; j < x->n_allow; j++) {
			/* a host name's addresses: the name once */
			if (j > 0 && x->allow[j - 1].client == x->allow[j].client)
				continue;
			if (strlen(x->path) < 14)
				fprintf(f, "%-14s\t", x->path);
			else
				fprintf(f, "%s\n\t\t", x->path);
			print_client(f, x, &x->allow[j]);
		}
	}
	pthread_mutex_unlock(&s->cfg_lock);
	fprintf(f, "\nClients connected now:\n");
	if (s->rr != NULL)
		rr_server_each_peer(s->rr, print_peer, &pp);
	pp.transport = "tcp";
	for (unsigned i = 0; i < s->ntcp; i++)
		rpc_tcp_each_peer(s->tcp[i], print_peer, &pp);
	if (pp.n == 0)
		fprintf(f, "(none)\n");
}
