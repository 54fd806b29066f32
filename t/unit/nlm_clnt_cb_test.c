/*
 * nlm_clnt_cb_test.c: the client's lock callback service (client/nlm_clnt_cb*.c)
 * over loopback UDP and TCP, as a server reaches it: PMAP GETPORT and RPCB
 * GETADDR (versions 3 and 4, netids udp, udp6, tcp, tcp6) name its own port,
 * over IPv4 and over IPv6 where the host has it, a GRANTED for no request of
 * ours is denied with its cookie, so is one of ours with an empty file
 * handle, one for a range an owner holds is granted in the mode it holds it
 * only, and an SM_NOTIFY cut short after the host's name is answered and
 * leaves nothing behind (under the sanitizers, as CI runs the tests,
 * LeakSanitizer fails that case if the name decoded before the cut is not
 * freed); over TCP, calls are answered on their connection, a record mark
 * that no callback has closes it, and a GRANTED for another client of this
 * host is passed to it, its answer (only from it) back on the connection.
 * No server and no rpcbind: the client
 * holds no locks, so it calls no one, and it does not register its port.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <rpc/rpc.h>
#include <rpc/pmap_prot.h>
#include <rpc/rpcb_prot.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "client/nlm_clnt.h"
#include "client/nlm_clnt_int.h"
#include "common/base/log.h"
#include "common/base/net.h"
#include "common/nfs/nlm_prog.h"
#include "common/nfs/nlm_prot.h"
#include "common/nfs/nsm_prot.h"
#include "common/rpc/rpcb.h"
#include "t/unit/udp_rpc_call.h"

struct fx {
	struct nlmc *n;
	int fd; /* the server's socket */
	struct sockaddr_storage to;
	socklen_t tolen;
};

/* f's server socket, of family, and the service's address on loopback. */
static int server_socket(struct fx *f, int family)
{
	struct sockaddr_in6 *t6 = (struct sockaddr_in6 *)&f->to;
	struct sockaddr_in *t4 = (struct sockaddr_in *)&f->to;

	memset(&f->to, 0, sizeof(f->to));
	if (family == AF_INET6) {
		t6->sin6_family = AF_INET6;
		t6->sin6_port = htons((uint16_t)nlmc_cbport(f->n));
		t6->sin6_addr = in6addr_loopback;
		f->tolen = sizeof(*t6);
	} else {
		t4->sin_family = AF_INET;
		t4->sin_port = htons((uint16_t)nlmc_cbport(f->n));
		t4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		f->tolen = sizeof(*t4);
	}
	f->fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	return f->fd < 0 ? -1 : 0;
}

static int setup(void **state)
{
	static struct fx f;
	struct timeval tv = {.tv_sec = 5, .tv_usec = 0};
	struct nlmc_params p;
	char err[256];

	log_set_level(LOG_LVL_ERR);
	nlmc_params_defaults(&p);
	p.host = "127.0.0.1";
	p.port = 9; /* never called: no locks are held */
	p.no_rpcbind = 1;
	if (nlmc_start(&p, &f.n, err, sizeof(err)) != 0) {
		fprintf(stderr, "nlmc_start: %s\n", err);
		return -1;
	}
	if (server_socket(&f, AF_INET) != 0 ||
	    setsockopt(f.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0)
		return -1;
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	nlmc_stop(f->n);
	close(f->fd);
	return 0;
}

/* Call prog/vers/proc at the service (udp_rpc_call.h). */
static enum accept_stat call(struct fx *f, uint32_t prog, uint32_t vers, uint32_t proc,
			     xdrproc_t xa, void *a, unsigned cut, xdrproc_t xr, void *r)
{
	return udp_rpc_call(f->fd, (struct sockaddr *)&f->to, f->tolen, prog, vers, proc, xa, a,
			    cut, xr, r);
}

/* GETPORT for NLM v4 over UDP and over TCP (it listens there too) is the
 * service's port; for NLM v3, none. */
static void getport_names_itself(void **state)
{
	struct fx *f = *state;
	struct pmap pm = {
		.pm_prog = NLM_PROGRAM, .pm_vers = NLM_V4, .pm_prot = IPPROTO_UDP, .pm_port = 0};
	u_int port = 0;

	assert_int_equal(call(f, PMAPPROG, PMAPVERS, PMAPPROC_GETPORT, (xdrproc_t)xdr_pmap, &pm, 0,
			      (xdrproc_t)xdr_u_int, &port),
			 SUCCESS);
	assert_int_equal(port, nlmc_cbport(f->n));
	pm.pm_prot = IPPROTO_TCP;
	assert_int_equal(call(f, PMAPPROG, PMAPVERS, PMAPPROC_GETPORT, (xdrproc_t)xdr_pmap, &pm, 0,
			      (xdrproc_t)xdr_u_int, &port),
			 SUCCESS);
	assert_int_equal(port, nlmc_cbport(f->n));
	pm.pm_vers = 3;
	assert_int_equal(call(f, PMAPPROG, PMAPVERS, PMAPPROC_GETPORT, (xdrproc_t)xdr_pmap, &pm, 0,
			      (xdrproc_t)xdr_u_int, &port),
			 SUCCESS);
	assert_int_equal(port, 0);
}

/* RPCB GETADDR (version v) of NLM v4 over netid: the universal address. */
static char *getaddr(struct fx *f, uint32_t v, const char *netid)
{
	rpcb rb = {.r_prog = NLM_PROGRAM,
		   .r_vers = NLM_V4,
		   .r_netid = (char *)netid,
		   .r_addr = "",
		   .r_owner = ""};
	char *uaddr = NULL;

	assert_int_equal(call(f, RPCBPROG, v, RPCBPROC_GETADDR, (xdrproc_t)xdr_rpcb, &rb, 0,
			      (xdrproc_t)xdr_wrapstring, &uaddr),
			 SUCCESS);
	return uaddr;
}

/* GETADDR (versions 3 and 4) for NLM v4 over udp, udp6, tcp and tcp6 is
 * the service's port, over rdma none (""); asked over IPv6 too, where the
 * host has it. */
static void getaddr_names_itself(void **state)
{
	struct fx *f = *state, f6 = *f;
	char want4[RPCB_UADDR_MAX], want6[RPCB_UADDR_MAX], *u;
	struct timeval tv = {.tv_sec = 5, .tv_usec = 0};

	int family, fd = net_udp_socket(0, 0, &family);

	/* on a host without IPv6 the service takes IPv4 only, and says so */
	assert_true(fd >= 0);
	close(fd);
	rpcb_uaddr(AF_INET, nlmc_cbport(f->n), want4);
	if (family == AF_INET6)
		rpcb_uaddr(AF_INET6, nlmc_cbport(f->n), want6);
	else
		want6[0] = '\0';
	for (uint32_t v = RPCBVERS; v <= RPCBVERS4; v++) {
		u = getaddr(f, v, "udp");
		assert_string_equal(u, want4);
		xdr_free((xdrproc_t)xdr_wrapstring, (char *)&u);
		u = getaddr(f, v, "udp6");
		assert_string_equal(u, want6);
		assert_int_equal(rpcb_uaddr_port(u), family == AF_INET6 ? nlmc_cbport(f->n) : 0);
		xdr_free((xdrproc_t)xdr_wrapstring, (char *)&u);
		u = getaddr(f, v, "tcp");
		assert_string_equal(u, want4);
		xdr_free((xdrproc_t)xdr_wrapstring, (char *)&u);
		u = getaddr(f, v, "tcp6");
		assert_string_equal(u, want6);
		xdr_free((xdrproc_t)xdr_wrapstring, (char *)&u);
		u = getaddr(f, v, "rdma");
		assert_string_equal(u, "");
		xdr_free((xdrproc_t)xdr_wrapstring, (char *)&u);
	}
	if (server_socket(&f6, AF_INET6) != 0 ||
	    setsockopt(f6.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
	    connect(f6.fd, (struct sockaddr *)&f6.to, f6.tolen) != 0) {
		if (f6.fd >= 0)
			close(f6.fd);
		return; /* no IPv6 here: the IPv4 half is what can be shown */
	}
	u = getaddr(&f6, RPCBVERS4, "udp6");
	assert_string_equal(u, want6);
	xdr_free((xdrproc_t)xdr_wrapstring, (char *)&u);
	close(f6.fd);
}

/* Universal addresses: the port is the last two numbers, each 0-255. */
static void uaddr_ports(void **state)
{
	char u[RPCB_UADDR_MAX];

	(void)state;
	assert_int_equal(rpcb_uaddr_port("127.0.0.1.8.1"), 2049);
	assert_int_equal(rpcb_uaddr_port("::1.3.255"), 1023);
	assert_int_equal(rpcb_uaddr_port("fe80::1.0.111"), 111);
	assert_int_equal(rpcb_uaddr_port(""), 0);
	assert_int_equal(rpcb_uaddr_port("1.2"), 0);	   /* no address */
	assert_int_equal(rpcb_uaddr_port("::1.256.1"), 0); /* not a byte */
	assert_int_equal(rpcb_uaddr_port("::1.1.x"), 0);
	assert_int_equal(rpcb_uaddr_port("::1..1"), 0);
	assert_int_equal(rpcb_uaddr_port("::1.1.1000"), 0);
	rpcb_uaddr(AF_INET6, 65535, u);
	assert_string_equal(u, "::.255.255");
	rpcb_uaddr(AF_INET, 20049, u);
	assert_string_equal(u, "0.0.0.0.78.81");
	assert_int_equal(rpcb_uaddr_port(u), 20049);
}

/* A GRANTED of [0, 100), exclusive or shared, with owner handle oh and
 * file handle fh (fhlen bytes): its answer, whose cookie must be the call's. */
static nlm4_stats granted_answer(struct fx *f, char *oh, char *fh, u_int fhlen, int excl)
{
	char cookie[4] = "ck12";
	nlm4_testargs a = {.cookie = {sizeof(cookie), cookie},
			   .exclusive = excl,
			   .alock = {.caller_name = "server",
				     .fh = {fhlen, fh},
				     .oh = {OH_LEN, oh},
				     .svid = 7,
				     .l_offset = 0,
				     .l_len = 100}};
	nlm4_stats st;
	nlm4_res r;

	memset(&r, 0, sizeof(r));
	assert_int_equal(call(f, NLM_PROGRAM, NLM_V4, NLM4_GRANTED_PROC,
			      (xdrproc_t)xdr_nlm4_testargs, &a, 0, (xdrproc_t)xdr_nlm4_res, &r),
			 SUCCESS);
	assert_int_equal(r.cookie.nlm4_netobj_len, sizeof(cookie));
	assert_memory_equal(r.cookie.nlm4_netobj_val, cookie, sizeof(cookie));
	st = r.stat;
	xdr_free((xdrproc_t)xdr_nlm4_res, (char *)&r);
	return st;
}

/* A GRANTED whose owner handle is another client's (and names no port to
 * forward to) is denied, with the call's cookie. */
static void granted_unknown_denied(void **state)
{
	char oh[OH_LEN] = "another!", fh[8] = "FILEHNDL";

	assert_int_equal(granted_answer(*state, oh, fh, sizeof(fh), 1), NLM4_DENIED);
}

/* A GRANTED in our owner handle with an empty file handle (which decodes to
 * no buffer) names no lock of ours: denied. */
static void granted_empty_fh_denied(void **state)
{
	struct fx *f = *state;
	char oh[OH_LEN] = {0};

	memcpy(oh, f->n->cookie, 8); /* owner 0, port 0: this client's */
	assert_int_equal(granted_answer(f, oh, NULL, 0, 1), NLM4_DENIED);
}

/* Record that owner 0 of this client holds [0, 100) of fh as type (F_UNLCK:
 * gives it back). */
static void hold(struct fx *f, const char *fh, int type)
{
	struct nfs3c_fh h = {.len = 8};

	memcpy(h.data, fh, 8);
	pthread_mutex_lock(&f->n->lock);
	assert_int_equal(nlmc_held_apply(&f->n->held, &h, 0, 7, type, 0, 100), 0);
	pthread_mutex_unlock(&f->n->lock);
}

/* A GRANTED for no wait, of a range the owner holds: sent again by the
 * server, GRANTED where the owner holds it in the GRANTED's mode; in the
 * other mode (a lock the owner did not take), denied. */
static void granted_again_in_held_mode(void **state)
{
	struct fx *f = *state;
	char oh[OH_LEN] = {0}, fh[8] = "FILEHNDL";

	memcpy(oh, f->n->cookie, 8); /* owner 0, port 0: this client's */
	assert_int_equal(granted_answer(f, oh, fh, sizeof(fh), 0), NLM4_DENIED);
	hold(f, fh, F_RDLCK);
	assert_int_equal(granted_answer(f, oh, fh, sizeof(fh), 0), NLM4_GRANTED);
	assert_int_equal(granted_answer(f, oh, fh, sizeof(fh), 1), NLM4_DENIED);
	hold(f, fh, F_WRLCK);
	assert_int_equal(granted_answer(f, oh, fh, sizeof(fh), 1), NLM4_GRANTED);
	assert_int_equal(granted_answer(f, oh, fh, sizeof(fh), 0), NLM4_DENIED);
	hold(f, fh, F_UNLCK);
	assert_int_equal(granted_answer(f, oh, fh, sizeof(fh), 1), NLM4_DENIED);
}

/* SM_NOTIFY with the longest name and no state: answered, the name freed;
 * whole, answered too. */
static void sm_notify_cut_short(void **state)
{
	struct fx *f = *state;
	char name[SM_MAXSTRLEN + 1];
	nsm_stat_chge sc = {.mon_name = name, .state = 3};

	memset(name, 'n', SM_MAXSTRLEN);
	name[SM_MAXSTRLEN] = '\0';
	for (int i = 0; i < 3; i++)
		assert_int_equal(call(f, NSM_PROGRAM, NSM_V1, NSM_NOTIFY,
				      (xdrproc_t)xdr_nsm_stat_chge, &sc, 4, (xdrproc_t)xdr_void,
				      NULL),
				 SUCCESS);
	assert_int_equal(call(f, NSM_PROGRAM, NSM_V1, NSM_NOTIFY, (xdrproc_t)xdr_nsm_stat_chge, &sc,
			      0, (xdrproc_t)xdr_void, NULL),
			 SUCCESS);
}

/* A TCP connection to the service (its port over TCP), reads timing out
 * after 5 s; the fd, or -1. */
static int tcp_to(struct fx *f)
{
	struct sockaddr_in to = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)nlmc_cbport(f->n)),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct timeval tv = {.tv_sec = 5, .tv_usec = 0};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd >= 0 && (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
			connect(fd, (struct sockaddr *)&to, sizeof(to)) != 0)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* The next answer on TCP connection fd: its xid, and its NLM status in *st
 * (-1 where it has none, as a NULL's); the cookie of one with a status must
 * be tcp_granted's. */
static uint32_t tcp_answer(int fd, int *st)
{
	char ans[512];
	struct rpc_msg m;
	nlm4_res r;
	ssize_t got = recv(fd, ans, sizeof(ans), 0);
	XDR x;

	assert_true(got > 4);
	memset(&m, 0, sizeof(m));
	memset(&r, 0, sizeof(r));
	m.acpted_rply.ar_results.proc = (xdrproc_t)xdr_void; /* the results after */
	xdrmem_create(&x, ans + 4, (u_int)got - 4, XDR_DECODE);
	assert_true(xdr_replymsg(&x, &m));
	assert_int_equal(m.acpted_rply.ar_stat, SUCCESS);
	*st = -1;
	if (xdr_getpos(&x) < (u_int)got - 4) {
		assert_true(xdr_nlm4_res(&x, &r));
		assert_int_equal(r.cookie.nlm4_netobj_len, 4);
		assert_memory_equal(r.cookie.nlm4_netobj_val, "ck34", 4);
		*st = (int)r.stat;
		xdr_free((xdrproc_t)xdr_nlm4_res, (char *)&r);
	}
	xdr_destroy(&x);
	return m.rm_xid;
}

/* Over TCP a record-marked NULL call is answered on the connection, twice
 * (one call after another); a record longer than a callback can be, or
 * one that is not the last fragment, closes the connection. */
static void tcp_records(void **state)
{
	struct fx *f = *state;
	const uint32_t bad[] = {htonl(0x80000000u | (CB_MSG_MAX + 1)), htonl(100)};
	char buf[512], c;
	size_t len = rpc_call_record(buf, sizeof(buf), 9, NLM_PROGRAM, NLM_V4, NLM4_NULL,
				     (xdrproc_t)xdr_void, NULL);
	int fd, st;

	fd = tcp_to(f);
	assert_true(fd >= 0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(write(fd, buf, 4 + len), (ssize_t)(4 + len));
		assert_int_equal(tcp_answer(fd, &st), 9); /* SUCCESS, no results */
		assert_int_equal(st, -1);
	}
	close(fd);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fd = tcp_to(f);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, &bad[i], 4), 4);
		assert_int_equal(recv(fd, &c, 1, 0), 0); /* closed by the service */
		close(fd);
	}
}

/* Send a GRANTED of [0, 100), exclusive, for owner handle oh and file
 * handle fh (8 bytes) as one record with xid on TCP connection fd. */
static void tcp_granted(int fd, uint32_t xid, char *oh, char *fh)
{
	char cookie[4] = "ck34", buf[512];
	nlm4_testargs a = {.cookie = {sizeof(cookie), cookie},
			   .exclusive = 1,
			   .alock = {.caller_name = "server",
				     .fh = {8, fh},
				     .oh = {OH_LEN, oh},
				     .svid = 7,
				     .l_offset = 0,
				     .l_len = 100}};
	u_int len = rpc_call_record(buf, sizeof(buf), xid, NLM_PROGRAM, NLM_V4, NLM4_GRANTED_PROC,
				    (xdrproc_t)xdr_nlm4_testargs, &a);

	assert_int_equal(write(fd, buf, 4 + len), (ssize_t)(4 + len));
}

/* A GRANTED over TCP (an illumos server's callback) for an owner of another
 * client of this host (its port in the owner handle) is passed to that
 * client, and the client's answer comes back on the connection: GRANTED for
 * a range that client's owner holds, which this one would deny. An answer
 * to a GRANTED so passed is taken only from the port it was passed to; one
 * that does not come is none (the server asks again), and the connection
 * serves the next call meanwhile. */
static void granted_for_another_over_tcp(void **state)
{
	struct fx *f = *state;
	struct fx b = {0};
	struct sockaddr_in x4 = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t xlen = sizeof(x4);
	struct timeval tv = {.tv_sec = 5, .tv_usec = 0};
	char oh[OH_LEN] = {0}, fh[8] = "FILEHNDL", fwd[1024], null_rec[512];
	struct nlmc_params p;
	char err[256];
	uint16_t port;
	ssize_t got;
	int fd, xfd, st;
	u_int nlen;

	nlmc_params_defaults(&p);
	p.host = "127.0.0.1";
	p.port = 9;
	p.no_rpcbind = 1;
	assert_int_equal(nlmc_start(&p, &b.n, err, sizeof(err)), 0);
	hold(&b, fh, F_WRLCK);
	memcpy(oh, b.n->cookie, 8); /* b's owner 0 */
	port = htons((uint16_t)nlmc_cbport(b.n));
	memcpy(oh + 16, &port, 2);
	fd = tcp_to(f);
	assert_true(fd >= 0);
	tcp_granted(fd, 41, oh, fh);
	assert_int_equal(tcp_answer(fd, &st), 41);
	assert_int_equal(st, NLM4_GRANTED);
	hold(&b, fh, F_UNLCK);
	tcp_granted(fd, 42, oh, fh);
	assert_int_equal(tcp_answer(fd, &st), 42);
	assert_int_equal(st, NLM4_DENIED);
	nlmc_stop(b.n);

	/* a client that does not answer of itself: a socket of ours */
	xfd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(xfd >= 0);
	assert_int_equal(bind(xfd, (struct sockaddr *)&x4, sizeof(x4)), 0);
	assert_int_equal(getsockname(xfd, (struct sockaddr *)&x4, &xlen), 0);
	assert_int_equal(setsockopt(xfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	memcpy(oh + 16, &x4.sin_port, 2);
	tcp_granted(fd, 43, oh, fh);
	got = recv(xfd, fwd, sizeof(fwd), 0);
	assert_true(got > 44 + 8);
	assert_memory_equal(fwd, "NLMG", 4);
	/* answers made of the call: the xid and REPLY, then accepted,
	 * AUTH_NONE, SUCCESS and an nlm4_res (cookie of 4 bytes, status) */
	{
		uint32_t ans[] = {htonl(43), htonl(REPLY), 0, 0, 0, 0, htonl(4), 0, 0};

		/* DENIED from another port, and from that client's port with
		 * another cookie: not taken (either would fail tcp_answer) */
		memcpy(&ans[7], "ck34", 4);
		ans[8] = htonl(NLM4_DENIED);
		assert_int_equal(
			sendto(f->fd, ans, sizeof(ans), 0, (struct sockaddr *)&f->to, f->tolen),
			(ssize_t)sizeof(ans));
		memcpy(&ans[7], "ck99", 4);
		assert_int_equal(
			sendto(xfd, ans, sizeof(ans), 0, (struct sockaddr *)&f->to, f->tolen),
			(ssize_t)sizeof(ans));
		nlen = rpc_call_record(null_rec, sizeof(null_rec), 44, NLM_PROGRAM, NLM_V4,
				       NLM4_NULL, (xdrproc_t)xdr_void, NULL);
		assert_int_equal(write(fd, null_rec, 4 + nlen), (ssize_t)(4 + nlen));
		assert_int_equal(tcp_answer(fd, &st), 44); /* the NULL's */
		assert_int_equal(st, -1);
		/* GRANTED with the call's cookie from the port it was passed
		 * to: on the connection */
		memcpy(&ans[7], "ck34", 4);
		ans[8] = htonl(NLM4_GRANTED);
		assert_int_equal(
			sendto(xfd, ans, sizeof(ans), 0, (struct sockaddr *)&f->to, f->tolen),
			(ssize_t)sizeof(ans));
		assert_int_equal(tcp_answer(fd, &st), 43);
		assert_int_equal(st, NLM4_GRANTED);
	}
	/* passed, and no answer: nothing on the connection, which serves on */
	tcp_granted(fd, 45, oh, fh);
	assert_true(recv(xfd, fwd, sizeof(fwd), 0) > 44);
	assert_int_equal(write(fd, null_rec, 4 + nlen), (ssize_t)(4 + nlen));
	assert_int_equal(tcp_answer(fd, &st), 44);
	close(xfd);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(getport_names_itself),
		cmocka_unit_test(getaddr_names_itself),
		cmocka_unit_test(uaddr_ports),
		cmocka_unit_test(granted_unknown_denied),
		cmocka_unit_test(granted_empty_fh_denied),
		cmocka_unit_test(granted_again_in_held_mode),
		cmocka_unit_test(sm_notify_cut_short),
		cmocka_unit_test(tcp_records),
		cmocka_unit_test(granted_for_another_over_tcp),
	};

	return cmocka_run_group_tests_name("nlm_clnt_cb", tests, setup, teardown);
}
