/*
 * nfs3_clnt_stats.c: a mount's statistics as `nfsrdma-client stats` prints
 * them, after mountstats(8): where it is mounted from and how (transport,
 * RPC/RDMA mode, credits, inline sizes, registration strategy), the client's
 * counters and the transport's (with heads=, the head in use), then one line
 * per NFS procedure used: calls, sends, errors, and the average round trip
 * and execution time.
 */
#include <inttypes.h>

#include "client/nfs3_clnt_int.h"

/* The counters' average in milliseconds (0 when there was nothing). */
static double avg_ms(uint64_t sum_us, uint64_t n)
{
	return n ? (double)sum_us / (double)n / 1000.0 : 0.0;
}

/* How the mount talks to its server (the RPC/RDMA counters of all its
 * transports together; credits and inline sizes are each one's). */
static void print_xprt(struct nfs3c *c, const struct nfs3c_stats *st, FILE *out)
{
	const struct rr_params *rr = &c->p.rr;
	struct rr_stats x;

	if (c->p.nconnect > 1)
		fprintf(out, "nconnect: %u (connected %" PRIu64 ")\n", c->p.nconnect,
			st->transports);
	if (c->p.proto == NFS3C_PROTO_TCP) {
		fprintf(out, "transport: tcp port %s\n", c->port);
		return;
	}
	nfs3c_get_xprt_stats(c, &x);
	fprintf(out,
		"transport: rdma port %s provider %s mode %s credits %u (granted %" PRIu64
		") inline %" PRIu32 "/%" PRIu32 " (sends up to %" PRIu64 ") registration %s\n",
		c->port, rr->provider ? rr->provider : "auto",
		rr->modes & RR_MODE_READ_READ ? "read-read" : "read-write", rr->credits,
		x.credits_granted, rr->inline_send, rr->inline_recv, x.inline_send_now,
		rr_reg_name(rr->reg));
	fprintf(out,
		"rdma: calls %" PRIu64 " replies %" PRIu64 " inline_out %" PRIu64
		" inline_in %" PRIu64 " rdma_read %" PRIu64 " rdma_write %" PRIu64
		" exposed %" PRIu64 " in_place %" PRIu64 " caller_polls %" PRIu64
		" caller_spun %" PRIu64 "\n",
		x.calls, x.replies, x.bytes_inline_out, x.bytes_inline_in, x.bytes_rdma_read,
		x.bytes_rdma_write, x.bytes_exposed, x.bytes_in_place, x.caller_polls,
		x.caller_spun);
	fprintf(out,
		"registration: regs %" PRIu64 " deregs %" PRIu64 " reg_us %" PRIu64
		" cache_hits %" PRIu64 " cache_misses %" PRIu64 " registered_now %" PRIu64
		" binds %" PRIu64 " remote_invs %" PRIu64 "\n",
		x.regs, x.deregs, x.reg_ns / 1000u, x.cache_hits, x.cache_misses, x.registered_now,
		x.binds, x.remote_invs);
}

/* See nfs3_clnt.h. */
void nfs3c_print_stats(struct nfs3c *c, FILE *out)
{
	struct nfs3c_stats st;

	nfs3c_get_stats(c, &st);
	fprintf(out, "server: %s:%s\n", c->heads[0].host, c->export);
	if (c->nheads > 1) {
		pthread_mutex_lock(&c->lock);
		fprintf(out, "heads: %zu in use %s:%s (head %zu) switches %" PRIu64 "\n", c->nheads,
			c->host, c->port, c->cur, st.head_switches);
		pthread_mutex_unlock(&c->lock);
	}
	print_xprt(c, &st, out);
	fprintf(out, "rsize %" PRIu32 " wsize %" PRIu32 " timeo %d ms %s\n", c->rsize, c->wsize,
		c->p.timeout_ms, c->p.retry_ms ? "soft" : "hard");
	fprintf(out,
		"calls %" PRIu64 " retransmissions %" PRIu64 " reconnects %" PRIu64
		" jukebox %" PRIu64 "\n",
		st.calls, st.retries, st.reconnects, st.jukebox);
	fprintf(out,
		"bytes read %" PRIu64 " written %" PRIu64 " resent %" PRIu64 " commits %" PRIu64
		" verifier_changes %" PRIu64 " dirty %" PRIu64 " (peak %" PRIu64
		") write_buffers %" PRIu64 " (spare bytes %" PRIu64 ")\n",
		st.bytes_read, st.bytes_written, st.writes_resent, st.commits, st.verf_changes,
		st.dirty_now, st.dirty_peak, st.wbufs_made, st.wbufs_spare);
	fprintf(out, "attributes: hits %" PRIu64 " misses %" PRIu64 " older_replies %" PRIu64 "\n",
		st.attr_hits, st.attr_misses, st.attr_stale);
	if (c->ordma) {
		fprintf(out, "ordma: hits %" PRIu64 " fallbacks %" PRIu64 " maps %" PRIu64,
			st.ordma_hits, st.ordma_fallbacks, st.ordma_maps);
		for (unsigned i = 1; i < NFS3C_ORDMA_CAUSES; i++)
			fprintf(out, " %s %" PRIu64, nfs3c_ordma_cause(i), st.ordma_miss[i]);
		fprintf(out, "\n");
	}
	fprintf(out, "%-12s %10s %10s %8s %12s %12s\n", "procedure", "calls", "sends", "errors",
		"avg_rtt_ms", "avg_exec_ms");
	for (unsigned i = 0; i < NFS3_NPROCS; i++) {
		const struct nfs3c_op_stats *o = &st.op[i];

		if (o->ops)
			fprintf(out,
				"%-12s %10" PRIu64 " %10" PRIu64 " %8" PRIu64 " %12.3f %12.3f\n",
				nfs3_xdr_procs[i].name, o->ops, o->trans, o->errors,
				avg_ms(o->rtt_us, o->ops), avg_ms(o->exec_us, o->ops));
	}
}
