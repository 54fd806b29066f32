/*
 * nlm_clnt_cb.c: what the callback service of the client's lock manager
 * answers (its sockets, thread and life are nlm_clnt_cbsock.c; a server calls
 * back by the transport our calls came by, Linux's lockd over TCP). It
 * receives the server's GRANTED and GRANTED_MSG callbacks and wakes the
 * blocked request each names (a GRANTED_MSG is answered by the reclaimer's
 * thread with GRANTED_RES), forwards a GRANTED whose owner handle names
 * another nfsrdma-client of this host to that client's UDP port (a GRANTED
 * that came over TCP is answered on its connection with that client's
 * answer), hands SM_NOTIFY to the reclaimer, and answers PMAP GETPORT and
 * RPCB GETADDR for itself.
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <rpc/rpc.h>
#include <rpc/pmap_prot.h>

#include "client/nlm_clnt_int.h"
#include "common/base/clock.h"
#include "common/base/log.h"
#include "common/base/net.h"
#include "common/nfs/nlm_prog.h"
#include "common/nfs/nlm_prot.h"
#include "common/nfs/nsm_prot.h"
#include "common/rpc/rpc_tcp.h"
#include "common/rpc/rpcb.h"

#define FWD_MAGIC "NLMG" /* a forwarded GRANTED's header: see FWD_HDR */

/* One record of len bytes on connection fd: a short answer, which the
 * socket takes whole, but from a peer that sends calls without reading the
 * answers; where it does not, the torn record ends the connection. */
static void send_record(int fd, const void *rec, size_t len)
{
	struct iovec iov[RPC_REC_IOV_MAX];
	struct msghdr mh = {.msg_iov = iov};
	uint32_t mark;

	mh.msg_iovlen = (size_t)rpc_rec_iov(rec, len, NULL, &mark, iov);
	if (sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)(4 + len))
		shutdown(fd, SHUT_RDWR);
}

/* Send the accepted answer (results res by xr) of xid to sa (on the TCP
 * connection n->reply_conn, if one); a PROG_MISMATCH names versions low to
 * high. */
static void answer(struct nlmc *n, uint32_t xid, const struct net_dgram_peer *sa, xdrproc_t xr,
		   void *res, enum accept_stat ast, uint32_t low, uint32_t high)
{
	struct rpc_msg m;
	char buf[CB_MSG_MAX];
	XDR x;

	memset(&m, 0, sizeof(m));
	m.rm_xid = xid;
	m.rm_direction = REPLY;
	m.rm_reply.rp_stat = MSG_ACCEPTED;
	m.acpted_rply.ar_verf = _null_auth;
	m.acpted_rply.ar_stat = ast;
	m.acpted_rply.ar_results.where = res;
	m.acpted_rply.ar_results.proc = xr ? xr : (xdrproc_t)xdr_void;
	if (ast == PROG_MISMATCH) { /* in a union with ar_results */
		m.acpted_rply.ar_vers.low = low;
		m.acpted_rply.ar_vers.high = high;
	}
	xdrmem_create(&x, buf, CB_MSG_MAX, XDR_ENCODE);
	if (!xdr_replymsg(&x, &m))
		log_debug("locks: an answer of the callback service does not fit");
	else if (n->reply_conn == NULL)
		(void)net_send_dgram(n->cbfd, buf, xdr_getpos(&x), sa);
	else
		send_record(n->reply_conn->fd, buf, xdr_getpos(&x));
	xdr_destroy(&x);
}

/* answer() for NLM v4 calls. */
static void reply(struct nlmc *n, uint32_t xid, const struct net_dgram_peer *sa, xdrproc_t xr,
		  void *res, enum accept_stat ast)
{
	answer(n, xid, sa, xr, res, ast, NLM_V4, NLM_V4);
}

/* A GRANTED for one of our waits: wake it. NLM4_GRANTED if one waited. An
 * interrupted wait takes none: its caller is being told EINTR (the CANCEL
 * may still be on its way), so the lock must not become ours; told DENIED,
 * the server gives it back. Unless a LOCK of that wait is on its way: the
 * server, having granted, answers it GRANTED too (the owner holds the
 * range), and the caller takes the lock (nlm_clnt.c, lock_loop).
 * NLM4_GRANTED too where no wait matches but the owner holds the whole
 * range in the GRANTED's mode: the server sent the GRANTED again (our answer
 * was lost or late), and a DENIED would have it give back a lock the owner
 * holds. Held in the other mode, it is not ours (say, an upgrade to
 * exclusive whose wait was interrupted): answered GRANTED, the server would
 * hold for the owner a lock of a mode the owner does not. */
static nlm4_stats granted(struct nlmc *n, const nlm4_testargs *a)
{
	const nlm4_lock *l = &a->alock;
	const nfs_fh3 xfh = {
		.data = {.data_len = l->fh.nlm4_netobj_len, .data_val = l->fh.nlm4_netobj_val}};
	nlm4_stats st = NLM4_DENIED;
	struct nfs3c_fh fh;
	uint64_t owner;

	if (l->oh.nlm4_netobj_len != OH_LEN || memcmp(l->oh.nlm4_netobj_val, n->cookie, 8) != 0 ||
	    nfs3c_fh_from_xdr(&xfh, &fh) != 0)
		return NLM4_DENIED;
	memcpy(&owner, l->oh.nlm4_netobj_val + 8, 8);
	pthread_mutex_lock(&n->lock);
	for (struct nlmc_wait *w = n->waiters; w; w = w->next) {
		if ((!w->interrupted || w->calling) && w->owner == owner && w->off == l->l_offset &&
		    w->len == l->l_len && w->excl == !!a->exclusive &&
		    nfs3c_fh_equal(&w->fh, &fh)) {
			w->granted = 1;
			pthread_cond_signal(&w->cond);
			st = NLM4_GRANTED;
			break;
		}
	}
	if (st != NLM4_GRANTED &&
	    nlmc_held_covers(&n->held, &fh, owner, l->l_offset, l->l_len, a->exclusive))
		st = NLM4_GRANTED;
	pthread_mutex_unlock(&n->lock);
	return st;
}

/* A GRANTED or GRANTED_MSG (proc) whose owner handle names another client's
 * callback port: pass the call there with who sent it (that client answers
 * the server). 1 if passed. One that came over TCP: a GRANTED_MSG's answer
 * is a call of that client's own; a GRANTED is passed as if we sent it, and
 * its answer, which comes back to us, goes on its connection (relay_answer;
 * an illumos server calls back with GRANTED). */
static int forward(struct nlmc *n, uint32_t xid, uint32_t proc, const nlm4_testargs *a,
		   const struct net_dgram_peer *from, const char *msg, size_t len)
{
	struct net_dgram_peer to = {.len = 0}, self;
	struct nlmc_cbconn *relay = proc == NLM4_GRANTED_PROC ? n->reply_conn : NULL;
	struct nlmc_fwd *f = NULL;
	struct sockaddr_storage v6, at6;
	const struct sockaddr_in6 *f6 = (const void *)&v6, *t6 = (const void *)&at6;
	char buf[FWD_HDR + CB_MSG_MAX];
	uint32_t scope;
	uint16_t port;

	if (a->alock.oh.nlm4_netobj_len != OH_LEN || len > CB_MSG_MAX)
		return 0;
	memcpy(&port, a->alock.oh.nlm4_netobj_val + 16, 2);
	if (ntohs(port) == n->cbport || port == 0)
		return 0;
	if (relay) { /* from our own port on 127.0.0.1; the oldest wait gives way */
		if (!n->cb_local || a->cookie.nlm4_netobj_len > RES_COOKIE_MAX)
			return 0;
		f = &relay->fwd[0];
		for (unsigned i = 1; i < FWD_PER_CONN && f->port; i++)
			if (!relay->fwd[i].port || relay->fwd[i].until < f->until)
				f = &relay->fwd[i];
		memset(&self, 0, sizeof(self));
		self.len = net_addr_loopback4(n->cbfamily, n->cbport, &self.sa);
		self.to = self.sa;
		from = &self;
	}
	/* to 127.0.0.1 (IPv4-mapped on our socket): every client's socket takes it */
	if ((to.len = net_addr_loopback4(n->cbfamily, ntohs(port), &to.sa)) == 0 ||
	    net_addr_for(AF_INET6, &from->sa, &v6) == 0)
		return 0;
	memset(&at6, 0, sizeof(at6));
	if (from->to.ss_family != 0 && net_addr_for(AF_INET6, &from->to, &at6) == 0)
		memset(&at6, 0, sizeof(at6));
	scope = f6->sin6_scope_id;
	memcpy(buf, FWD_MAGIC, 4);
	memcpy(buf + 4, &f6->sin6_addr, 16);
	memcpy(buf + 20, &f6->sin6_port, 2);
	memset(buf + 22, 0, 2);
	memcpy(buf + 24, &scope, 4);
	memcpy(buf + 28, &t6->sin6_addr, 16);
	memcpy(buf + FWD_HDR, msg, len);
	if (net_send_dgram(n->cbfd, buf, FWD_HDR + len, &to) < 0 && f)
		return 0;
	if (f) {
		f->xid = xid;
		f->port = ntohs(port);
		f->cookie_len = a->cookie.nlm4_netobj_len;
		memcpy(f->cookie, a->cookie.nlm4_netobj_val, f->cookie_len);
		f->until = clock_now_ns() / 1000000 + FWD_WAIT_MS;
	}
	return 1;
}

/* An RPC answer of len bytes in buf from from: where it is the answer to a
 * GRANTED that forward() passed for a connection, from the client it was
 * passed to (from and to 127.0.0.1, from that client's port, the call's xid,
 * an nlm4_res with the call's cookie), it goes on that connection. 1 if buf
 * is an answer (the service takes no other). */
static int relay_answer(struct nlmc *n, const char *buf, size_t len,
			const struct net_dgram_peer *from)
{
	char verf[MAX_AUTH_BYTES];
	struct rpc_msg m;
	nlm4_res r;
	uint32_t w[2];
	XDR x;

	if (len < 8 || memcmp(buf, FWD_MAGIC, 4) == 0)
		return 0;
	memcpy(w, buf, 8);
	if (ntohl(w[1]) != REPLY)
		return 0;
	if (n->reply_conn || !net_dgram_local(from) ||
	    !net_addr_is_loopback((const struct sockaddr *)&from->sa))
		return 1;
	memset(&m, 0, sizeof(m));
	memset(&r, 0, sizeof(r));
	m.acpted_rply.ar_verf.oa_base = verf; /* else xdr_bytes allocates it */
	m.acpted_rply.ar_results.where = (caddr_t)&r;
	m.acpted_rply.ar_results.proc = (xdrproc_t)xdr_nlm4_res;
	xdrmem_create(&x, (char *)buf, (u_int)len, XDR_DECODE);
	if (xdr_replymsg(&x, &m) && m.rm_reply.rp_stat == MSG_ACCEPTED &&
	    m.acpted_rply.ar_stat == SUCCESS) {
		for (unsigned i = 0; i < CB_CONNS * FWD_PER_CONN; i++) {
			struct nlmc_cbconn *c = &n->conns[i / FWD_PER_CONN];
			struct nlmc_fwd *f = &c->fwd[i % FWD_PER_CONN];

			if (c->fd >= 0 && f->port &&
			    f->port == net_addr_port((const struct sockaddr *)&from->sa) &&
			    f->xid == m.rm_xid && f->cookie_len == r.cookie.nlm4_netobj_len &&
			    memcmp(f->cookie, r.cookie.nlm4_netobj_val, f->cookie_len) == 0) {
				f->port = 0;
				send_record(c->fd, buf, len);
				break;
			}
		}
	}
	xdr_free((xdrproc_t)xdr_nlm4_res, (char *)&r);
	xdr_destroy(&x);
	return 1;
}

/* Whether a GRANTED_MSG is to be answered with GRANTED_RES, which goes to
 * the server on our own (perhaps signed) connection: only one from the
 * server's address that names an owner of ours (our random cookie, known
 * only to the server and us). Anyone could otherwise have us tell the server
 * no to a lock it granted under a cookie they guessed (Linux's are a
 * counter). */
static int res_due(struct nlmc *n, const nlm4_testargs *a, const struct net_dgram_peer *from)
{
	const nlm4_netobj *oh = &a->alock.oh;
	int due = 0;

	if (oh->nlm4_netobj_len != OH_LEN || memcmp(oh->nlm4_netobj_val, n->cookie, 8) != 0)
		return 0;
	pthread_mutex_lock(&n->lock);
	for (unsigned i = 0; i < n->nsrv && !due; i++)
		due = net_same_ip((const struct sockaddr *)&from->sa,
				  (const struct sockaddr *)&n->srv[i]);
	pthread_mutex_unlock(&n->lock);
	return due;
}

/* One NLM call to us. */
static void serve_nlm(struct nlmc *n, uint32_t xid, uint32_t proc, XDR *x,
		      const struct net_dgram_peer *from, int forwarded, const char *msg, size_t len)
{
	nlm4_testargs a;
	nlm4_res r;

	if (proc == NLM4_NULL) {
		reply(n, xid, from, NULL, NULL, SUCCESS);
		return;
	}
	if (proc != NLM4_GRANTED_PROC && proc != NLM4_GRANTED_MSG) {
		reply(n, xid, from, NULL, NULL, PROC_UNAVAIL);
		return;
	}
	memset(&a, 0, sizeof(a));
	if (!xdr_nlm4_testargs(x, &a)) {
		reply(n, xid, from, NULL, NULL, GARBAGE_ARGS);
	} else if (forwarded || !forward(n, xid, proc, &a, from, msg, len)) {
		r.cookie = a.cookie;
		r.stat = granted(n, &a);
		if (proc == NLM4_GRANTED_MSG) { /* answered by a call: GRANTED_RES */
			reply(n, xid, from, NULL, NULL, SUCCESS);
			if (res_due(n, &a, from))
				nlmc_res_queue(n, &r);
		} else {
			reply(n, xid, from, (xdrproc_t)xdr_nlm4_res, &r, SUCCESS);
		}
	} else if (n->reply_conn && proc == NLM4_GRANTED_MSG) {
		reply(n, xid, from, NULL, NULL, SUCCESS);
	}
	xdr_free((xdrproc_t)xdr_nlm4_testargs, (char *)&a);
}

/* SM_NOTIFY: a monitored host (the server, as it says) restarted. The
 * reclaimer takes our locks back; other mounts of this host find out by
 * their new connection. */
static void nsm_notify(struct nlmc *n, XDR *x, const struct net_dgram_peer *from)
{
	char ip[NET_HOST_STRLEN];
	nsm_stat_chge sc;

	memset(&sc, 0, sizeof(sc));
	if (!xdr_nsm_stat_chge(x, &sc)) {
		/* mon_name may be decoded before the state is found missing */
		xdr_free((xdrproc_t)xdr_nsm_stat_chge, (char *)&sc);
		return;
	}
	net_host_str((const struct sockaddr *)&from->sa, ip, sizeof(ip));
	log_info("locks: '%s' (%s) restarted (state %d): reclaiming", sc.mon_name, ip, sc.state);
	xdr_free((xdrproc_t)xdr_nsm_stat_chge, (char *)&sc);
	nlmc_reclaim_want(n);
}

/* The family of netid udp, udp6 (tcp, tcp6 while we listen there), or 0. */
static int netid_family(const struct nlmc *n, const char *netid)
{
	if (netid == NULL || (n->cbtcp < 0 && netid[0] == 't'))
		return 0;
	return strcmp(netid, "udp6") == 0 || strcmp(netid, "tcp6") == 0 ? AF_INET6
	       : strcmp(netid, "udp") == 0 || strcmp(netid, "tcp") == 0 ? AF_INET
									: 0;
}

/* PMAP GETPORT (version 2) or RPCB GETADDR (3, 4) from a server told to ask
 * here: NLM v4 and NSM over UDP, and over TCP while we listen there, are our
 * port. Answers 0 or "" otherwise. */
static void serve_rpcb(struct nlmc *n, uint32_t xid, uint32_t vers, uint32_t proc, XDR *x,
		       const struct net_dgram_peer *from)
{
	char uaddr[RPCB_UADDR_MAX] = "", *up = uaddr;
	struct rpcb_call q;
	int ours, family;
	u_int port;

	if (vers < PMAPVERS || vers > RPCBVERS4) {
		answer(n, xid, from, NULL, NULL, PROG_MISMATCH, PMAPVERS, RPCBVERS4);
		return;
	}
	rpcb_getport_call(&q, vers == PMAPVERS ? AF_INET : AF_INET6, 0, 0, IPPROTO_UDP);
	if (proc != q.proc) {
		reply(n, xid, from, NULL, NULL, proc == 0 ? SUCCESS : PROC_UNAVAIL);
		return;
	}
	/* decoded into memory of its own, not q's buffers */
	q.rb.r_netid = q.rb.r_addr = q.rb.r_owner = NULL;
	if (!q.xdr_args(x, q.args)) {
		reply(n, xid, from, NULL, NULL, GARBAGE_ARGS);
		xdr_free(q.xdr_args, q.args);
		return;
	}
	if (vers == PMAPVERS) {
		ours = ((q.pm.pm_prog == NLM_PROGRAM && q.pm.pm_vers == NLM_V4) ||
			(q.pm.pm_prog == NSM_PROGRAM && q.pm.pm_vers == NSM_V1)) &&
		       (q.pm.pm_prot == IPPROTO_UDP ||
			(q.pm.pm_prot == IPPROTO_TCP && n->cbtcp >= 0));
		port = ours ? n->cbport : 0;
		reply(n, xid, from, (xdrproc_t)xdr_u_int, &port, SUCCESS);
		return;
	}
	family = netid_family(n, q.rb.r_netid);
	if (((q.rb.r_prog == NLM_PROGRAM && q.rb.r_vers == NLM_V4) ||
	     (q.rb.r_prog == NSM_PROGRAM && q.rb.r_vers == NSM_V1)) &&
	    (family == AF_INET || (family == AF_INET6 && n->cbfamily == AF_INET6)))
		rpcb_uaddr(family, n->cbport, uaddr);
	reply(n, xid, from, (xdrproc_t)xdr_wrapstring, &up, SUCCESS);
	xdr_free(q.xdr_args, q.args);
}

/* See nlm_clnt_int.h. */
void nlmc_serve_datagram(struct nlmc *n, char *buf, size_t len, const struct net_dgram_peer *sender)
{
	char creds[2 * MAX_AUTH_BYTES];
	struct net_dgram_peer from = *sender;
	struct rpc_msg m;
	int forwarded = 0;
	XDR x;

	if (relay_answer(n, buf, len, sender))
		return;
	/* a forward comes from this host: to a loopback address, which the
	 * kernel never takes from the wire (a source address can be forged) */
	if (len >= FWD_HDR && memcmp(buf, FWD_MAGIC, 4) == 0 && n->reply_conn == NULL &&
	    net_dgram_local(sender)) {
		struct sockaddr_in6 s6 = {.sin6_family = AF_INET6}, d6 = {.sin6_family = AF_INET6};
		struct sockaddr_storage ss;

		memcpy(&s6.sin6_addr, buf + 4, 16);
		memcpy(&s6.sin6_port, buf + 20, 2);
		memcpy(&s6.sin6_scope_id, buf + 24, 4);
		memcpy(&d6.sin6_addr, buf + 28, 16);
		memset(&ss, 0, sizeof(ss));
		memcpy(&ss, &s6, sizeof(s6));
		if ((from.len = net_addr_for(n->cbfamily, &ss, &from.sa)) == 0)
			return;
		/* answered from the address the server called (none: the kernel's choice) */
		memset(&ss, 0, sizeof(ss));
		memcpy(&ss, &d6, sizeof(d6));
		if (IN6_IS_ADDR_UNSPECIFIED(&d6.sin6_addr) ||
		    net_addr_for(n->cbfamily, &ss, &from.to) == 0)
			memset(&from.to, 0, sizeof(from.to));
		buf += FWD_HDR;
		len -= FWD_HDR;
		forwarded = 1;
	}
	memset(&m, 0, sizeof(m));
	m.rm_call.cb_cred.oa_base = creds;
	m.rm_call.cb_verf.oa_base = creds + MAX_AUTH_BYTES;
	xdrmem_create(&x, buf, (u_int)len, XDR_DECODE);
	if (!xdr_callmsg(&x, &m) || m.rm_direction != CALL) {
		xdr_destroy(&x);
		return;
	}
	if (m.rm_call.cb_prog == NLM_PROGRAM && m.rm_call.cb_vers == NLM_V4) {
		serve_nlm(n, m.rm_xid, (uint32_t)m.rm_call.cb_proc, &x, &from, forwarded, buf, len);
	} else if (m.rm_call.cb_prog == NSM_PROGRAM && m.rm_call.cb_proc == NSM_NULL) {
		reply(n, m.rm_xid, &from, NULL, NULL, SUCCESS);
	} else if (m.rm_call.cb_prog == NSM_PROGRAM && m.rm_call.cb_proc == NSM_NOTIFY) {
		nsm_notify(n, &x, &from);
		reply(n, m.rm_xid, &from, NULL, NULL, SUCCESS);
	} else if (m.rm_call.cb_prog == PMAPPROG) {
		serve_rpcb(n, m.rm_xid, (uint32_t)m.rm_call.cb_vers, (uint32_t)m.rm_call.cb_proc,
			   &x, &from);
	} else if (m.rm_call.cb_prog == NLM_PROGRAM) {
		reply(n, m.rm_xid, &from, NULL, NULL, PROG_MISMATCH);
	} else {
		reply(n, m.rm_xid, &from, NULL, NULL, PROG_UNAVAIL);
	}
	xdr_destroy(&x);
}
