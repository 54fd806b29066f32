/*
 * nlm_test_hosts.c: the client hosts' side: the asynchronous
 * (_MSG/_RES) forms, bad input and what the counters say, a host's name
 * given from another machine, a client that never answers, and restarts:
 * the server's (SM_NOTIFY, then the grace period) and a client's.
 * Part of t/system/nlm_test (see nlm_test.c).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <rpc/rpc.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "common/base/ctl.h"
#include "common/nfs/nlm_prog.h"
#include "common/nfs/nlm_prot.h"
#include "common/nfs/nsm_prot.h"
#include "nlm_test.h"

/* A UDP client of prog on the server from another loopback address. */
static CLIENT *client_from(const char *src, uint32_t prog, uint32_t vers)
{
	struct sockaddr_in sin = {.sin_family = AF_INET}, me = {.sin_family = AF_INET};
	struct timeval wait = {1, 0};
	int sock = socket(AF_INET, SOCK_DGRAM, 0);
	CLIENT *c;

	assert_true(sock >= 0);
	inet_pton(AF_INET, src, &me.sin_addr);
	assert_int_equal(bind(sock, (struct sockaddr *)&me, sizeof(me)), 0);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons(tcp_port);
	c = clntudp_create(&sin, prog, vers, wait, &sock);
	assert_non_null(c);
	return c;
}

/* The asynchronous forms: answers come back as _RES calls; a blocked
 * LOCK_MSG is granted with GRANTED_MSG, answered with GRANTED_RES, which is
 * heard only from the client's address. */
void msg_forms(void **state)
{
	uint32_t lock_res = NLM4_LOCK_RES, test_res = NLM4_TEST_RES, unlock_res = NLM4_UNLOCK_RES;
	int32_t svid = 902;
	nlm4_lockargs la = {.cookie = {2, "m1"}, .exclusive = 1};
	nlm4_testargs ta = {.cookie = {2, "m2"}, .exclusive = 1};
	nlm4_unlockargs ua = {.cookie = {2, "m3"}};
	struct event e;
	nfs_fh3 fh;

	(void)state;
	file_handle("msg", &fh);
	la.alock = alock("hostX", &fh, 901, 0, 10);
	assert_int_equal(clnt_call(udp, NLM4_LOCK_MSG, (xdrproc_t)xdr_nlm4_lockargs, (char *)&la,
				   (xdrproc_t)xdr_void, NULL, tmo),
			 RPC_SUCCESS);
	assert_true(wait_event(match_res_proc, &lock_res, 5000, &e));
	assert_int_equal(e.stat, NLM4_GRANTED);
	assert_int_equal(e.cookie_len, 2);
	assert_memory_equal(e.cookie, "m1", 2);
	ta.alock = alock("hostY", &fh, svid, 5, 1);
	assert_int_equal(clnt_call(udp, NLM4_TEST_MSG, (xdrproc_t)xdr_nlm4_testargs, (char *)&ta,
				   (xdrproc_t)xdr_void, NULL, tmo),
			 RPC_SUCCESS);
	assert_true(wait_event(match_res_proc, &test_res, 5000, &e));
	assert_int_equal(e.stat, NLM4_DENIED);
	la.alock = alock("hostY", &fh, svid, 5, 1);
	la.block = 1;
	assert_int_equal(clnt_call(udp, NLM4_LOCK_MSG, (xdrproc_t)xdr_nlm4_lockargs, (char *)&la,
				   (xdrproc_t)xdr_void, NULL, tmo),
			 RPC_SUCCESS);
	assert_true(wait_event(match_res_proc, &lock_res, 5000, &e));
	assert_int_equal(e.stat, NLM4_BLOCKED);
	ua.alock = alock("hostX", &fh, 901, 0, 0);
	assert_int_equal(clnt_call(udp, NLM4_UNLOCK_MSG, (xdrproc_t)xdr_nlm4_unlockargs,
				   (char *)&ua, (xdrproc_t)xdr_void, NULL, tmo),
			 RPC_SUCCESS);
	assert_true(wait_event(match_res_proc, &unlock_res, 5000, &e));
	assert_int_equal(e.stat, NLM4_GRANTED);
	assert_true(wait_event(match_granted_svid, &svid, 5000, &e));
	assert_int_equal(e.kind, EV_GRANTED_MSG);
	/* another machine says no for the client: not heard (the server says
	 * so before it answers), hostY keeps it */
	nlm4_res gr = {.cookie = {e.cookie_len, e.cookie}, .stat = NLM4_DENIED};
	CLIENT *other = client_from("127.0.0.2", NLM_PROGRAM, NLM_V4);
	int ignored = server_log_count("came from another address: ignored");
	nlm4_stats st;

	assert_int_equal(clnt_call(other, NLM4_GRANTED_RES, (xdrproc_t)xdr_nlm4_res, (char *)&gr,
				   (xdrproc_t)xdr_void, NULL, tmo),
			 RPC_SUCCESS);
	clnt_destroy(other);
	assert_int_equal(server_log_count("came from another address: ignored"), ignored + 1);
	assert_int_equal(do_lock(tcp, alock("hostX", &fh, 901, 0, 10), 1, 0, 0), NLM4_DENIED);
	/* the client turns it down: the server gives the lock back (its next
	 * turn, within 5 s) */
	assert_int_equal(clnt_call(udp, NLM4_GRANTED_RES, (xdrproc_t)xdr_nlm4_res, (char *)&gr,
				   (xdrproc_t)xdr_void, NULL, tmo),
			 RPC_SUCCESS);
	for (int i = 0; i < 250 && (st = do_lock(tcp, alock("hostX", &fh, 901, 0, 10), 1, 0, 0)) !=
					   NLM4_GRANTED;
	     i++)
		usleep(20000);
	assert_int_equal(st, NLM4_GRANTED);
	do_free_all(tcp, "hostX");
	do_free_all(tcp, "hostY");
	free(fh.data.data_val);
}

/* Bytes that are not a LOCK's arguments. */
static bool_t xdr_junk(XDR *xdrs, void *unused)
{
	uint32_t v = 7;

	(void)unused;
	return xdr_uint32_t(xdrs, &v);
}

/* Whether the running server's counter name (nfsrdma-server -s) is >= min. */
static int stat_at_least(const char *name, long min)
{
	const char *top = getenv("top_builddir") ? getenv("top_builddir") : ".";
	char cmd[1024], line[256];
	long v = -1;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s/server/nfsrdma-server -s -f %s/srv.conf", top, T);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p))
		if (strncmp(line, name, strlen(name)) == 0 && line[strlen(name)] == ' ')
			v = strtol(line + strlen(name) + 1, NULL, 10);
	pclose(p);
	return v >= min;
}

/* Whether the metrics (control socket's "metrics") have a line beginning so. */
static int metrics_say(const char *start)
{
	char path[512], line[512];
	int found = 0;
	FILE *f = tmpfile();

	assert_non_null(f);
	snprintf(path, sizeof(path), "%s/ctl.sock", T);
	assert_int_equal(ctl_query(path, "metrics", f), 0);
	rewind(f);
	while (fgets(line, sizeof(line), f))
		found |= strncmp(line, start, strlen(start)) == 0;
	fclose(f);
	return found;
}

/* Bad input gets clear answers; the counters say what happened. */
void bad_input(void **state)
{
	nfs_fh3 fh, bogus = {.data = {16, "0123456789abcdef"}};
	nlm4_res r;

	(void)state;
	file_handle("bad", &fh);
	assert_int_equal(do_lock(tcp, alock("hostA", &fh, 1, (uint64_t)1 << 63, 1), 1, 0, 0),
			 NLM4_FBIG);
	/* a range that would end past the largest offset: to the end */
	assert_int_equal(do_lock(tcp, alock("hostA", &fh, 1, 10, UINT64_MAX), 1, 0, 0),
			 NLM4_GRANTED);
	assert_int_equal(do_test(udp, alock("hostB", &fh, 2, (uint64_t)1 << 62, 1), 1, NULL),
			 NLM4_DENIED);
	assert_int_equal(do_lock(tcp, alock("hostA", &bogus, 1, 0, 1), 1, 0, 0), NLM4_STALE_FH);
	assert_int_equal(do_lock(tcp, alock("", &fh, 1, 0, 1), 1, 0, 0), NLM4_FAILED);
	memset(&r, 0, sizeof(r));
	assert_int_equal(clnt_call(tcp, NLM4_LOCK, (xdrproc_t)xdr_junk, NULL,
				   (xdrproc_t)xdr_nlm4_res, (char *)&r, tmo),
			 RPC_CANTDECODEARGS);
	assert_int_equal(
		clnt_call(tcp, 17, (xdrproc_t)xdr_void, NULL, (xdrproc_t)xdr_void, NULL, tmo),
		RPC_PROCUNAVAIL);
	assert_true(stat_at_least("nlm.granted", 10));
	assert_true(stat_at_least("nlm.nolocks", 3));
	assert_true(stat_at_least("nlm.blocked_total", 5));
	assert_false(stat_at_least("nlm.granted", 100000));
	assert_true(metrics_say("nfsrdma_nlm_granted_total "));
	assert_true(metrics_say("nfsrdma_calls_total{transport=\"udp\",program=\"nlm\","
				"procedure=\"LOCK\"}"));
	do_free_all(tcp, "hostA");
	free(fh.data.data_val);
}

/* Another machine cannot act on a client's locks by giving its name: not
 * UNLOCK, CANCEL or FREE_ALL, and an NSM notice from an address no export
 * knows is not heard. */
void forged_from_elsewhere(void **state)
{
	CLIENT *other = client_from("127.0.0.2", NLM_PROGRAM, NLM_V4);
	CLIENT *other_sm = client_from("127.0.0.2", NSM_PROGRAM, NSM_V1);
	nsm_stat_chge sc = {.mon_name = "hostA", .state = 5};
	nfs_fh3 fh;

	(void)state;
	file_handle("forged", &fh);
	assert_int_equal(do_lock(tcp, alock("hostA", &fh, 1, 0, 10), 1, 0, 0), NLM4_GRANTED);
	assert_int_equal(do_lock(other, alock("hostA", &fh, 1, 0, 10), 1, 0, 0), NLM4_FAILED);
	assert_int_equal(do_unlock(other, alock("hostA", &fh, 1, 0, 10)), NLM4_GRANTED);
	do_free_all(other, "hostA");
	assert_int_equal(clnt_call(other_sm, NSM_NOTIFY, (xdrproc_t)xdr_nsm_stat_chge, (char *)&sc,
				   (xdrproc_t)xdr_void, NULL, tmo),
			 RPC_SUCCESS);
	assert_int_equal(do_lock(udp, alock("hostB", &fh, 2, 0, 10), 1, 0, 0), NLM4_DENIED);
	do_free_all(tcp, "hostA");
	assert_int_equal(do_lock(udp, alock("hostB", &fh, 2, 0, 10), 1, 0, 0), NLM4_GRANTED);
	do_free_all(udp, "hostB");
	clnt_destroy(other);
	clnt_destroy(other_sm);
	free(fh.data.data_val);
}

/* A client that does not answer (nothing listens at 127.0.0.3) delays no
 * one else's GRANTED, and the lock granted to it goes back when its tries
 * are over. */
void silent_client_delays_no_one(void **state)
{
	CLIENT *silent = client_from("127.0.0.3", NLM_PROGRAM, NLM_V4);
	int32_t svid_b = 1002;
	uint64_t t0;
	nfs_fh3 fh;

	(void)state;
	file_handle("silent", &fh);
	assert_int_equal(do_lock(tcp, alock("hostA", &fh, 1000, 0, 10), 1, 0, 0), NLM4_GRANTED);
	assert_int_equal(do_lock(silent, alock("hostQ", &fh, 1001, 0, 5), 1, 1, 0), NLM4_BLOCKED);
	assert_int_equal(do_lock(udp, alock("hostB", &fh, svid_b, 5, 5), 1, 1, 0), NLM4_BLOCKED);
	t0 = now_ms();
	assert_int_equal(do_unlock(tcp, alock("hostA", &fh, 1000, 0, 0)), NLM4_GRANTED);
	assert_true(wait_event(match_granted_svid, &svid_b, 5000, NULL));
	assert_true(now_ms() - t0 < 1000);
	/* hostQ holds [0,5) until its 3 tries (about 8 s) are over */
	assert_int_equal(do_lock(tcp, alock("hostA", &fh, 1000, 0, 1), 1, 0, 0), NLM4_DENIED);
	while (now_ms() - t0 < 12000 &&
	       do_lock(tcp, alock("hostA", &fh, 1000, 0, 1), 1, 0, 0) != NLM4_GRANTED)
		usleep(250000);
	assert_true(now_ms() - t0 >= 4000);
	assert_true(now_ms() - t0 < 12000);
	assert_true(stat_at_least("nlm.callbacks_failed", 1));
	do_free_all(tcp, "hostA");
	do_free_all(udp, "hostB");
	clnt_destroy(silent);
	free(fh.data.data_val);
}

/* ---- a restart: SM_NOTIFY to the clients, then the grace period */

static int32_t sm_state(void)
{
	CLIENT *c = client(IPPROTO_UDP, NSM_PROGRAM, NSM_V1);
	nsm_name a = {.mon_name = "me"};
	nsm_stat_res r;

	memset(&r, 0, sizeof(r));
	assert_int_equal(clnt_call(c, NSM_STAT, (xdrproc_t)xdr_nsm_name, (char *)&a,
				   (xdrproc_t)xdr_nsm_stat_res, (char *)&r, tmo),
			 RPC_SUCCESS);
	clnt_destroy(c);
	return r.state;
}

void restart_notifies_and_grace(void **state)
{
	nfs_fh3 fh;
	struct event e;
	int32_t before;

	(void)state;
	file_handle("grace", &fh);
	assert_int_equal(do_lock(tcp, alock("hostR", &fh, 1, 0, 10), 1, 0, 0), NLM4_GRANTED);
	/* a reclaim outside the grace period is refused */
	assert_int_equal(do_lock(tcp, alock("hostR", &fh, 1, 0, 10), 1, 0, 1),
			 NLM4_DENIED_GRACE_PERIOD);
	before = sm_state();
	assert_true(before % 2 == 1);
	clnt_destroy(tcp);
	clnt_destroy(udp);
	stop_server();
	start_server(GRACE_S);
	tcp = client(IPPROTO_TCP, NLM_PROGRAM, NLM_V4);
	udp = client(IPPROTO_UDP, NLM_PROGRAM, NLM_V4);
	assert_int_equal(sm_state(), before + 2);
	assert_true(wait_event(match_notify, NULL, 5000, &e));
	assert_string_equal(e.name, SERVER_NAME);
	assert_int_equal(e.state, before + 2);
	/* grace: only reclaims */
	assert_int_equal(do_lock(udp, alock("hostS", &fh, 2, 0, 10), 1, 0, 0),
			 NLM4_DENIED_GRACE_PERIOD);
	assert_int_equal(do_test(udp, alock("hostS", &fh, 2, 0, 10), 1, NULL),
			 NLM4_DENIED_GRACE_PERIOD);
	assert_int_equal(do_lock(tcp, alock("hostR", &fh, 1, 0, 10), 1, 0, 1), NLM4_GRANTED);
	assert_int_equal(do_lock(udp, alock("hostS", &fh, 2, 0, 10), 1, 0, 1), NLM4_DENIED);
	while (now_ms() < started_ms + GRACE_S * 1000 + 300)
		usleep(100000);
	assert_int_equal(do_lock(udp, alock("hostS", &fh, 2, 0, 10), 1, 0, 0), NLM4_DENIED);
	assert_int_equal(do_lock(udp, alock("hostS", &fh, 2, 20, 10), 1, 0, 0), NLM4_GRANTED);
	assert_int_equal(do_lock(udp, alock("hostS", &fh, 2, 40, 10), 1, 0, 1),
			 NLM4_DENIED_GRACE_PERIOD);
	free(fh.data.data_val);
}

/* A client that tells the server's NSM it rebooted loses its locks. */
void client_reboot_drops_locks(void **state)
{
	CLIENT *c = client(IPPROTO_UDP, NSM_PROGRAM, NSM_V1);
	nsm_stat_chge a = {.mon_name = "hostR", .state = 9};
	nfs_fh3 fh;

	(void)state;
	file_handle("grace", &fh);
	assert_int_equal(do_lock(udp, alock("hostS", &fh, 2, 0, 10), 1, 0, 0), NLM4_DENIED);
	assert_int_equal(clnt_call(c, NSM_NOTIFY, (xdrproc_t)xdr_nsm_stat_chge, (char *)&a,
				   (xdrproc_t)xdr_void, NULL, tmo),
			 RPC_SUCCESS);
	assert_int_equal(do_lock(udp, alock("hostS", &fh, 2, 0, 10), 1, 0, 0), NLM4_GRANTED);
	clnt_destroy(c);
	free(fh.data.data_val);
}
