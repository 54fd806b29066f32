/*
 * udp_rpc_call.h: one RPC call over UDP and its accepted answer, as the
 * unit tests of the client's callback service make them (a server's
 * GRANTED, an rpcbind query). Include after cmocka.h: a call with no
 * answer, or an answer that does not decode, fails the test.
 */
#ifndef NFSRDMA_T_UDP_RPC_CALL_H
#define NFSRDMA_T_UDP_RPC_CALL_H

#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <rpc/rpc.h>

/* A call of prog/vers/proc (xid, AUTH_NONE) with the arguments a (coded by
 * xa) into buf (cap bytes) after 4 bytes, which get its record mark (one
 * fragment, as over TCP); the call's length, without the mark. */
static inline u_int rpc_call_record(char *buf, size_t cap, uint32_t xid, uint32_t prog,
				    uint32_t vers, uint32_t proc, xdrproc_t xa, void *a)
{
	struct rpc_msg m = {.rm_xid = xid, .rm_direction = CALL};
	uint32_t mark;
	u_int len;
	XDR x;

	m.rm_call.cb_rpcvers = RPC_MSG_VERSION;
	m.rm_call.cb_prog = prog;
	m.rm_call.cb_vers = vers;
	m.rm_call.cb_proc = proc;
	m.rm_call.cb_cred = m.rm_call.cb_verf = _null_auth;
	xdrmem_create(&x, buf + 4, (u_int)cap - 4, XDR_ENCODE);
	assert_true(xdr_callmsg(&x, &m) && xa(&x, a));
	len = xdr_getpos(&x);
	xdr_destroy(&x);
	mark = htonl(0x80000000u | len);
	memcpy(buf, &mark, 4);
	return len;
}

/* Call prog/vers/proc at to from socket fd (its receive timeout set) with
 * the arguments a (coded by xa) less their last cut bytes; the answer's
 * accept status, and on success its results in r (by xr). */
static inline enum accept_stat udp_rpc_call(int fd, const struct sockaddr *to, socklen_t tolen,
					    uint32_t prog, uint32_t vers, uint32_t proc,
					    xdrproc_t xa, void *a, unsigned cut, xdrproc_t xr,
					    void *r)
{
	static uint32_t xid;
	struct rpc_msg m;
	char buf[4096];
	ssize_t got;
	u_int len = rpc_call_record(buf, sizeof(buf), ++xid, prog, vers, proc, xa, a) - cut;
	XDR x;

	assert_int_equal(sendto(fd, buf + 4, len, 0, to, tolen), len);
	got = recv(fd, buf, sizeof(buf), 0);
	assert_true(got > 0);
	memset(&m, 0, sizeof(m));
	m.acpted_rply.ar_results.where = r;
	m.acpted_rply.ar_results.proc = xr;
	xdrmem_create(&x, buf, (u_int)got, XDR_DECODE);
	assert_true(xdr_replymsg(&x, &m));
	xdr_destroy(&x);
	assert_int_equal(m.rm_xid, xid);
	assert_int_equal(m.rm_reply.rp_stat, MSG_ACCEPTED);
	return m.acpted_rply.ar_stat;
}

#endif
