/*
 * nlm_test.c: the server's lock manager (NLM v4) and status monitor (NSM),
 * spoken to over TCP and UDP with libtirpc clients, against a real
 * nfsrdma-server on a scratch export. The test plays the clients' side too:
 * an rpcbind (PMAP GETPORT) on a port of its own, which the server is told of
 * (server.nlm.client_rpcbind_port), naming the test's NLM and NSM services,
 * where the server's calls back (GRANTED, _RES, SM_NOTIFY) are recorded.
 * Several "client hosts" are caller names of this one process.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <rpc/rpc.h>
#include <rpc/pmap_prot.h>

#include <setjmp.h>
#include <stddef.h>
#include <cmocka.h>

#include "common/base/ctl.h"
#include "common/nfs/mount_prot.h"
#include "common/nfs/nfs3_prot.h"
#include "common/nfs/nfs_prog.h"
#include "common/nfs/nlm_prog.h"
#include "common/nfs/nlm_prot.h"
#include "common/nfs/nsm_prot.h"

#define SERVER_NAME "nlmtest-server"
#define GRACE_S	    4

static char T[256]; /* scratch directory */
static unsigned short tcp_port, rdma_port, pmap_port, cb_port;
static pid_t server_pid;
static uint64_t started_ms;

/* ---- what the server called back */

enum ev_kind { EV_GRANTED, EV_GRANTED_MSG, EV_RES, EV_NOTIFY };

struct event {
	enum ev_kind kind;
	uint32_t proc;
	int stat;
	int32_t svid;
	uint64_t off, len;
	char cookie[64];
	u_int cookie_len;
	char name[64];
	int32_t state;
};

#define MAX_EVENTS 256
static struct event events[MAX_EVENTS];
static unsigned nevents;
static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ev_cond = PTHREAD_COND_INITIALIZER;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void record(const struct event *e)
{
	pthread_mutex_lock(&ev_lock);
	if (nevents < MAX_EVENTS)
		events[nevents++] = *e;
	pthread_cond_broadcast(&ev_cond);
	pthread_mutex_unlock(&ev_lock);
}

typedef int (*ev_match)(const struct event *e, const void *arg);

/* Wait at most ms for an event that match accepts; take it out. */
static int wait_event(ev_match match, const void *arg, int ms, struct event *out)
{
	uint64_t end = now_ms() + (uint64_t)ms;
	int found = 0;

	pthread_mutex_lock(&ev_lock);
	while (!found) {
		for (unsigned i = 0; i < nevents && !found; i++) {
			if (match(&events[i], arg)) {
				if (out)
					*out = events[i];
				events[i] = events[--nevents];
				found = 1;
			}
		}
		if (found || now_ms() >= end)
			break;
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 50 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&ev_cond, &ev_lock, &ts);
	}
	pthread_mutex_unlock(&ev_lock);
	return found;
}

static int match_granted_svid(const struct event *e, const void *arg)
{
	return (e->kind == EV_GRANTED || e->kind == EV_GRANTED_MSG) &&
	       e->svid == *(const int32_t *)arg;
}

static int match_res_proc(const struct event *e, const void *arg)
{
	return e->kind == EV_RES && e->proc == *(const uint32_t *)arg;
}

static int match_notify(const struct event *e, const void *arg)
{
	(void)arg;
	return e->kind == EV_NOTIFY;
}

/* ---- the client side's services: rpcbind, NLM, NSM (one UDP socket) */

static void pmap_dispatch(struct svc_req *rq, SVCXPRT *x)
{
	struct pmap pm;
	u_short port = 0;

	if (rq->rq_proc == 0) {
		svc_sendreply(x, (xdrproc_t)xdr_void, NULL);
		return;
	}
	if (rq->rq_proc != PMAPPROC_GETPORT) {
		svcerr_noproc(x);
		return;
	}
	memset(&pm, 0, sizeof(pm));
	if (!svc_getargs(x, (xdrproc_t)xdr_pmap, (char *)&pm)) {
		svcerr_decode(x);
		return;
	}
	if ((pm.pm_prog == NLM_PROGRAM && pm.pm_vers == NLM_V4) ||
	    (pm.pm_prog == NSM_PROGRAM && pm.pm_vers == NSM_V1))
		port = cb_port;
	svc_sendreply(x, (xdrproc_t)xdr_u_short, (char *)&port);
}

static void set_cookie(struct event *e, const nlm4_netobj *c)
{
	e->cookie_len = c->nlm4_netobj_len < sizeof(e->cookie) ? c->nlm4_netobj_len : 0;
	memcpy(e->cookie, c->nlm4_netobj_val, e->cookie_len);
}

/* GRANTED and GRANTED_MSG: record the lock; GRANTED answers "taken". */
static void nlm_granted(struct svc_req *rq, SVCXPRT *x)
{
	struct event e = {.kind = rq->rq_proc == NLM4_GRANTED_PROC ? EV_GRANTED : EV_GRANTED_MSG};
	nlm4_testargs a;

	memset(&a, 0, sizeof(a));
	if (!svc_getargs(x, (xdrproc_t)xdr_nlm4_testargs, (char *)&a)) {
		svcerr_decode(x);
		return;
	}
	e.svid = a.alock.svid;
	e.off = a.alock.l_offset;
	e.len = a.alock.l_len;
	set_cookie(&e, &a.cookie);
	if (rq->rq_proc == NLM4_GRANTED_PROC) {
		nlm4_res r = {.cookie = a.cookie, .stat = NLM4_GRANTED};

		svc_sendreply(x, (xdrproc_t)xdr_nlm4_res, (char *)&r);
	} else {
		svc_sendreply(x, (xdrproc_t)xdr_void, NULL);
	}
	record(&e);
	svc_freeargs(x, (xdrproc_t)xdr_nlm4_testargs, (char *)&a);
}

static void nlm_dispatch(struct svc_req *rq, SVCXPRT *x)
{
	struct event e = {.kind = EV_RES, .proc = rq->rq_proc};

	switch (rq->rq_proc) {
	case NLM4_GRANTED_PROC:
	case NLM4_GRANTED_MSG:
		nlm_granted(rq, x);
		return;
	case NLM4_TEST_RES: {
		nlm4_testres r;

		memset(&r, 0, sizeof(r));
		if (!svc_getargs(x, (xdrproc_t)xdr_nlm4_testres, (char *)&r)) {
			svcerr_decode(x);
			return;
		}
		e.stat = r.stat.stat;
		set_cookie(&e, &r.cookie);
		svc_freeargs(x, (xdrproc_t)xdr_nlm4_testres, (char *)&r);
		break;
	}
	case NLM4_LOCK_RES:
	case NLM4_CANCEL_RES:
	case NLM4_UNLOCK_RES: {
		nlm4_res r;

		memset(&r, 0, sizeof(r));
		if (!svc_getargs(x, (xdrproc_t)xdr_nlm4_res, (char *)&r)) {
			svcerr_decode(x);
			return;
		}
		e.stat = r.stat;
		set_cookie(&e, &r.cookie);
		svc_freeargs(x, (xdrproc_t)xdr_nlm4_res, (char *)&r);
		break;
	}
	default:
		svcerr_noproc(x);
		return;
	}
	svc_sendreply(x, (xdrproc_t)xdr_void, NULL);
	record(&e);
}

static void nsm_dispatch(struct svc_req *rq, SVCXPRT *x)
{
	struct event e = {.kind = EV_NOTIFY};
	nsm_stat_chge a;

	if (rq->rq_proc != NSM_NOTIFY) {
		svcerr_noproc(x);
		return;
	}
	memset(&a, 0, sizeof(a));
	if (!svc_getargs(x, (xdrproc_t)xdr_nsm_stat_chge, (char *)&a)) {
		svcerr_decode(x);
		return;
	}
	snprintf(e.name, sizeof(e.name), "%s", a.mon_name);
	e.state = a.state;
	svc_sendreply(x, (xdrproc_t)xdr_void, NULL);
	record(&e);
	svc_freeargs(x, (xdrproc_t)xdr_nsm_stat_chge, (char *)&a);
}

static void *svc_thread(void *arg)
{
	(void)arg;
	svc_run();
	return NULL;
}

/* A UDP socket on 127.0.0.1 only: the client at 127.0.0.3 answers nothing. */
static int loopback_socket(void)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	return fd;
}

static void start_services(void)
{
	SVCXPRT *pm = svcudp_create(loopback_socket()), *cb = svcudp_create(loopback_socket());
	pthread_t th;

	assert_non_null(pm);
	assert_non_null(cb);
	pmap_port = pm->xp_port;
	cb_port = cb->xp_port;
	assert_true(svc_register(pm, PMAPPROG, PMAPVERS, pmap_dispatch, 0));
	assert_true(svc_register(cb, NLM_PROGRAM, NLM_V4, nlm_dispatch, 0));
	assert_true(svc_register(cb, NSM_PROGRAM, NSM_V1, nsm_dispatch, 0));
	assert_int_equal(pthread_create(&th, NULL, svc_thread, NULL), 0);
	pthread_detach(th);
}

/* ---- the server */

static unsigned short free_port(int type)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, type, 0);

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	close(fd);
	return ntohs(sin.sin_port);
}

static void write_conf(unsigned grace_s)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/srv.conf", T);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f,
		"log = { level = \"debug\"; };\n"
		"rdma = { provider = \"soft\"; };\n"
		"server = {\n"
		"  listen = [\"127.0.0.1\"];\n"
		"  rdma_port = %u;\n  tcp_port = %u;\n"
		"  control_socket = \"%s/ctl.sock\";\n"
		"  handle_key_file = \"%s/handle.key\";\n"
		"  nlm = { grace_s = %u; owners_per_client = 4; locks_per_client = 8;\n"
		"          blocked_per_client = 2; callback_retries = 3;\n"
		"          client_rpcbind_port = %u; };\n"
		"  nsm = { state_dir = \"%s/sm\"; name = \"" SERVER_NAME "\"; };\n"
		"  exports = ( { path = \"%s/export\"; clients = [\"127.0.0.1\", \"127.0.0.3\"];"
		" access = \"rw\";"
		" root_squash = false; } );\n"
		"};\n",
		rdma_port, tcp_port, T, T, grace_s, pmap_port, T, T);
	fclose(f);
}

static void wait_udp_ready(void);

static void start_server(unsigned grace_s)
{
	const char *top = getenv("top_builddir") ? getenv("top_builddir") : ".";
	char bin[512], conf[512], log[512];
	struct sockaddr_in sin = {.sin_family = AF_INET};
	int up = 0;

	rdma_port = free_port(SOCK_STREAM);
	tcp_port = free_port(SOCK_STREAM);
	write_conf(grace_s);
	snprintf(bin, sizeof(bin), "%s/server/nfsrdma-server", top);
	snprintf(conf, sizeof(conf), "%s/srv.conf", T);
	snprintf(log, sizeof(log), "%s/server.log", T);
	server_pid = fork();
	assert_true(server_pid >= 0);
	if (server_pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);

		dup2(fd, 2);
		execl(bin, bin, "-F", "-f", conf, (char *)NULL);
		_exit(127);
	}
	started_ms = now_ms();
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons(tcp_port);
	for (int i = 0; i < 200 && !up; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		up = connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0;
		close(fd);
		if (!up)
			usleep(50000);
	}
	if (!up) {
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "sed 's/^/# /' %s", log);
		(void)system(cmd);
	}
	assert_true(up);
	wait_udp_ready();
}

static void stop_server(void)
{
	int st;

	if (server_pid <= 0)
		return;
	kill(server_pid, SIGTERM);
	waitpid(server_pid, &st, 0);
	server_pid = 0;
	/* a clean stop: nothing leaked, no sanitizer report */
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* ---- clients */

static CLIENT *client(int proto, uint32_t prog, uint32_t vers)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	struct timeval wait = {1, 0};
	int sock = RPC_ANYSOCK;
	CLIENT *c;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons(tcp_port);
	c = proto == IPPROTO_UDP ? clntudp_create(&sin, prog, vers, wait, &sock)
				 : clnttcp_create(&sin, prog, vers, &sock, 0, 0);
	assert_non_null(c);
	return c;
}

static struct timeval tmo = {10, 0};

/* The server answers on UDP too: its UDP socket may come up a moment after
 * the TCP listener accepts (a call before that is refused: RPC_CANTRECV). */
static void wait_udp_ready(void)
{
	struct timeval brief = {1, 0};
	enum clnt_stat st = RPC_CANTRECV;

	for (int i = 0; i < 100 && st != RPC_SUCCESS; i++) {
		CLIENT *u = client(IPPROTO_UDP, NLM_PROGRAM, NLM_V4);

		st = clnt_call(u, NULLPROC, (xdrproc_t)xdr_void, NULL, (xdrproc_t)xdr_void, NULL,
			       brief);
		clnt_destroy(u);
		if (st != RPC_SUCCESS)
			usleep(50000);
	}
	assert_int_equal(st, RPC_SUCCESS);
}

/* The handle of file name in the export, made if missing. */
static void file_handle(const char *name, nfs_fh3 *out)
{
	char path[512], *dir = path;
	CLIENT *m = client(IPPROTO_TCP, MOUNT_PROGRAM, MOUNT_V3), *n;
	mountres3 mr;
	LOOKUP3args la;
	LOOKUP3res lr;
	int fd;

	snprintf(path, sizeof(path), "%s/export/%s", T, name);
	fd = open(path, O_RDWR | O_CREAT, 0666);
	assert_true(fd >= 0);
	close(fd);
	snprintf(path, sizeof(path), "%s/export", T);
	memset(&mr, 0, sizeof(mr));
	assert_int_equal(clnt_call(m, 1, (xdrproc_t)xdr_dirpath, (char *)&dir,
				   (xdrproc_t)xdr_mountres3, (char *)&mr, tmo),
			 RPC_SUCCESS);
	assert_int_equal(mr.fhs_status, MNT3_OK);
	n = client(IPPROTO_TCP, NFS_PROGRAM, NFS_V3);
	memset(&la, 0, sizeof(la));
	memset(&lr, 0, sizeof(lr));
	la.what.dir.data.data_len = mr.mountres3_u.mountinfo.fhandle.fhandle3_len;
	la.what.dir.data.data_val = mr.mountres3_u.mountinfo.fhandle.fhandle3_val;
	la.what.name = (char *)name;
	assert_int_equal(clnt_call(n, 3, (xdrproc_t)xdr_LOOKUP3args, (char *)&la,
				   (xdrproc_t)xdr_LOOKUP3res, (char *)&lr, tmo),
			 RPC_SUCCESS);
	assert_int_equal(lr.status, NFS3_OK);
	out->data.data_len = lr.LOOKUP3res_u.resok.object.data.data_len;
	out->data.data_val = malloc(out->data.data_len);
	memcpy(out->data.data_val, lr.LOOKUP3res_u.resok.object.data.data_val, out->data.data_len);
	xdr_free((xdrproc_t)xdr_LOOKUP3res, (char *)&lr);
	xdr_free((xdrproc_t)xdr_mountres3, (char *)&mr);
	clnt_destroy(n);
	clnt_destroy(m);
}

/* A lock of host's owner svid on fh. */
static nlm4_lock alock(const char *host, const nfs_fh3 *fh, int32_t svid, uint64_t off,
		       uint64_t len)
{
	static char oh[16][32];
	static unsigned next;
	char *o = oh[next++ % 16];

	snprintf(o, 32, "%s-%d", host, (int)svid);
	return (nlm4_lock){.caller_name = (char *)host,
			   .fh = {fh->data.data_len, fh->data.data_val},
			   .oh = {(u_int)strlen(o), o},
			   .svid = svid,
			   .l_offset = off,
			   .l_len = len};
}

static char cookie_bytes[] = "cookie";
#define COOKIE                                                                                     \
	{                                                                                          \
		sizeof(cookie_bytes) - 1, cookie_bytes                                             \
	}

static nlm4_stats do_lock(CLIENT *c, nlm4_lock l, int exclusive, int block, int reclaim)
{
	nlm4_lockargs a = {.cookie = COOKIE,
			   .block = block,
			   .exclusive = exclusive,
			   .alock = l,
			   .reclaim = reclaim,
			   .state = 1};
	nlm4_res r;

	memset(&r, 0, sizeof(r));
	assert_int_equal(clnt_call(c, NLM4_LOCK, (xdrproc_t)xdr_nlm4_lockargs, (char *)&a,
				   (xdrproc_t)xdr_nlm4_res, (char *)&r, tmo),
			 RPC_SUCCESS);
	assert_int_equal(r.cookie.nlm4_netobj_len, sizeof(cookie_bytes) - 1);
	xdr_free((xdrproc_t)xdr_nlm4_res, (char *)&r);
	return r.stat;
}

static nlm4_stats do_unlock(CLIENT *c, nlm4_lock l)
{
	nlm4_unlockargs a = {.cookie = COOKIE, .alock = l};
	nlm4_res r;

	memset(&r, 0, sizeof(r));
	assert_int_equal(clnt_call(c, NLM4_UNLOCK, (xdrproc_t)xdr_nlm4_unlockargs, (char *)&a,
				   (xdrproc_t)xdr_nlm4_res, (char *)&r, tmo),
			 RPC_SUCCESS);
	xdr_free((xdrproc_t)xdr_nlm4_res, (char *)&r);
	return r.stat;
}

static nlm4_stats do_cancel(CLIENT *c, nlm4_lock l, int exclusive)
{
	nlm4_cancargs a = {.cookie = COOKIE, .block = 1, .exclusive = exclusive, .alock = l};
	nlm4_res r;

	memset(&r, 0, sizeof(r));
	assert_int_equal(clnt_call(c, NLM4_CANCEL, (xdrproc_t)xdr_nlm4_cancargs, (char *)&a,
				   (xdrproc_t)xdr_nlm4_res, (char *)&r, tmo),
			 RPC_SUCCESS);
	xdr_free((xdrproc_t)xdr_nlm4_res, (char *)&r);
	return r.stat;
}

/* TEST; a holder goes to *h (its owner handle freed). */
static nlm4_stats do_test(CLIENT *c, nlm4_lock l, int exclusive, nlm4_holder *h)
{
	nlm4_testargs a = {.cookie = COOKIE, .exclusive = exclusive, .alock = l};
	nlm4_testres r;
	nlm4_stats st;

	memset(&r, 0, sizeof(r));
	assert_int_equal(clnt_call(c, NLM4_TEST, (xdrproc_t)xdr_nlm4_testargs, (char *)&a,
				   (xdrproc_t)xdr_nlm4_testres, (char *)&r, tmo),
			 RPC_SUCCESS);
	st = r.stat.stat;
	if (st == NLM4_DENIED && h) {
		*h = r.stat.nlm4_testrply_u.holder;
		h->oh.nlm4_netobj_val = NULL;
	}
	xdr_free((xdrproc_t)xdr_nlm4_testres, (char *)&r);
	return st;
}

static void do_free_all(CLIENT *c, const char *host)
{
	nlm4_notify a = {.name = (char *)host, .state = 7};

	assert_int_equal(clnt_call(c, NLM4_FREE_ALL, (xdrproc_t)xdr_nlm4_notify, (char *)&a,
				   (xdrproc_t)xdr_void, NULL, tmo),
			 RPC_SUCCESS);
}

/* ---- the tests (one server: grace 0) */

static CLIENT *tcp, *udp;

static int setup(void **state)
{
	char cmd[600];

	(void)state;
	snprintf(T, sizeof(T), "%s/nlm_test.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(T) == NULL)
		return -1;
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/export && chmod 777 %s/export", T, T);
	if (system(cmd) != 0)
		return -1;
	start_services();
	start_server(0);
	tcp = client(IPPROTO_TCP, NLM_PROGRAM, NLM_V4);
	udp = client(IPPROTO_UDP, NLM_PROGRAM, NLM_V4);
	return 0;
}

static int teardown(void **state)
{
	char cmd[600];

	(void)state;
	stop_server();
	if (getenv("NLM_TEST_KEEP") == NULL) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", T);
		(void)system(cmd);
	}
	return 0;
}

/* Two hosts (and two owners of one host) conflict; TEST names the holder. */
static void conflicts_between_hosts(void **state)
{
	nfs_fh3 fh;
	nlm4_holder h;

	(void)state;
	file_handle("conflict", &fh);
	assert_int_equal(do_lock(tcp, alock("hostA", &fh, 11, 0, 100), 1, 0, 0), NLM4_GRANTED);
	/* the same owner again: still granted (a relock) */
	assert_int_equal(do_lock(tcp, alock("hostA", &fh, 11, 0, 100), 1, 0, 0), NLM4_GRANTED);
	assert_int_equal(do_lock(udp, alock("hostB", &fh, 22, 50, 10), 1, 0, 0), NLM4_DENIED);
	assert_int_equal(do_lock(tcp, alock("hostA", &fh, 12, 50, 10), 0, 0, 0), NLM4_DENIED);
	assert_int_equal(do_test(udp, alock("hostB", &fh, 22, 50, 10), 0, &h), NLM4_DENIED);
	assert_true(h.exclusive);
	assert_int_equal(h.svid, 11);
	assert_int_equal(h.l_offset, 0);
	assert_int_equal(h.l_len, 100);
	/* beside it: no conflict */
	assert_int_equal(do_test(udp, alock("hostB", &fh, 22, 100, 10), 1, NULL), NLM4_GRANTED);
	assert_int_equal(do_lock(udp, alock("hostB", &fh, 22, 100, 0), 1, 0, 0), NLM4_GRANTED);
	/* shared locks share */
	assert_int_equal(do_unlock(tcp, alock("hostA", &fh, 11, 0, 0)), NLM4_GRANTED);
	assert_int_equal(do_lock(tcp, alock("hostA", &fh, 11, 0, 10), 0, 0, 0), NLM4_GRANTED);
	assert_int_equal(do_lock(udp, alock("hostB", &fh, 22, 0, 10), 0, 0, 0), NLM4_GRANTED);
	assert_int_equal(do_lock(udp, alock("hostC", &fh, 33, 5, 1), 1, 0, 0), NLM4_DENIED);
	do_free_all(tcp, "hostA");
	do_free_all(tcp, "hostB");
	assert_int_equal(do_lock(udp, alock("hostC", &fh, 33, 0, 0), 1, 0, 0), NLM4_GRANTED);
	do_free_all(tcp, "hostC");
	free(fh.data.data_val);
}

/* One owner's ranges merge, and an unlock in the middle splits them: as the
 * kernel says (TEST's holder, and a local F_GETLK) and as NLM says. */
static void merge_and_split(void **state)
{
	char path[512];
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1000};
	nfs_fh3 fh;
	nlm4_holder h;
	int fd;

	(void)state;
	file_handle("merge", &fh);
	assert_int_equal(do_lock(tcp, alock("hostA", &fh, 1, 0, 10), 1, 0, 0), NLM4_GRANTED);
	assert_int_equal(do_lock(tcp, alock("hostA", &fh, 1, 5, 15), 1, 0, 0), NLM4_GRANTED);
	assert_int_equal(do_test(udp, alock("hostB", &fh, 2, 0, 1000), 1, &h), NLM4_DENIED);
	assert_int_equal(h.l_offset, 0);
	assert_int_equal(h.l_len, 20);
	snprintf(path, sizeof(path), "%s/export/merge", T);
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_GETLK, &fl), 0);
	assert_int_equal(fl.l_type, F_WRLCK);
	assert_int_equal(fl.l_start, 0);
	assert_int_equal(fl.l_len, 20);
	assert_int_equal(fl.l_pid, -1); /* an open file description's lock */
	/* split: [0,8) and [12,20) remain */
	assert_int_equal(do_unlock(tcp, alock("hostA", &fh, 1, 8, 4)), NLM4_GRANTED);
	assert_int_equal(do_test(udp, alock("hostB", &fh, 2, 8, 4), 1, NULL), NLM4_GRANTED);
	assert_int_equal(do_test(udp, alock("hostB", &fh, 2, 0, 1000), 1, &h), NLM4_DENIED);
	assert_int_equal(h.l_offset, 0);
	assert_int_equal(h.l_len, 8);
	assert_int_equal(h.svid, 1);
	assert_int_equal(do_test(udp, alock("hostB", &fh, 2, 10, 1000), 1, &h), NLM4_DENIED);
	assert_int_equal(h.l_offset, 12);
	assert_int_equal(h.l_len, 8);
	fl = (struct flock){.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 8, .l_len = 4};
	assert_int_equal(fcntl(fd, F_SETLK, &fl), 0); /* the hole is free here too */
	fl.l_type = F_UNLCK;
	assert_int_equal(fcntl(fd, F_SETLK, &fl), 0);
	/* unlocking everything closes the owner: its locks are gone */
	assert_int_equal(do_unlock(tcp, alock("hostA", &fh, 1, 0, 0)), NLM4_GRANTED);
	fl = (struct flock){.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
	assert_int_equal(fcntl(fd, F_GETLK, &fl), 0);
	assert_int_equal(fl.l_type, F_UNLCK);
	close(fd);
	free(fh.data.data_val);
}

/* A local process's fcntl lock on the exported file conflicts both ways. */
static void local_process_conflicts(void **state)
{
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 10};
	char path[512];
	nfs_fh3 fh;
	nlm4_holder h;
	int fd;

	(void)state;
	file_handle("local", &fh);
	snprintf(path, sizeof(path), "%s/export/local", T);
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_SETLK, &fl), 0);
	assert_int_equal(do_lock(tcp, alock("hostA", &fh, 5, 5, 1), 1, 0, 0), NLM4_DENIED);
	assert_int_equal(do_test(tcp, alock("hostA", &fh, 5, 5, 1), 0, &h), NLM4_DENIED);
	assert_int_equal(h.svid, getpid());
	assert_int_equal(h.l_offset, 0);
	assert_int_equal(h.l_len, 10);
	assert_int_equal(do_lock(tcp, alock("hostA", &fh, 5, 100, 10), 1, 0, 0), NLM4_GRANTED);
	fl = (struct flock){.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 105, .l_len = 1};
	assert_int_equal(fcntl(fd, F_SETLK, &fl), -1);
	assert_true(errno == EAGAIN || errno == EACCES);
	/* a blocked request goes through when the local lock goes (the tick) */
	assert_int_equal(do_lock(tcp, alock("hostA", &fh, 5, 0, 10), 1, 1, 0), NLM4_BLOCKED);
	fl = (struct flock){.l_type = F_UNLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 10};
	assert_int_equal(fcntl(fd, F_SETLK, &fl), 0);
	int32_t svid = 5;
	struct event e;

	assert_true(wait_event(match_granted_svid, &svid, 5000, &e));
	assert_int_equal(e.kind, EV_GRANTED);
	assert_int_equal(e.off, 0);
	assert_int_equal(e.len, 10);
	close(fd);
	do_free_all(tcp, "hostA");
	free(fh.data.data_val);
}

/* A blocking LOCK waits in the queue and is GRANTED by a call back when the
 * holder unlocks; a CANCELled one never is. */
static void blocked_granted_and_cancelled(void **state)
{
	int32_t svid_b = 201, svid_c = 301;
	nfs_fh3 fh;
	struct event e;

	(void)state;
	file_handle("blocked", &fh);
	assert_int_equal(do_lock(tcp, alock("hostA", &fh, 101, 0, 10), 1, 0, 0), NLM4_GRANTED);
	assert_int_equal(do_lock(udp, alock("hostB", &fh, svid_b, 0, 10), 1, 1, 0), NLM4_BLOCKED);
	/* asked again (clients do): still one request */
	assert_int_equal(do_lock(udp, alock("hostB", &fh, svid_b, 0, 10), 1, 1, 0), NLM4_BLOCKED);
	assert_int_equal(do_lock(tcp, alock("hostC", &fh, svid_c, 5, 1), 1, 1, 0), NLM4_BLOCKED);
	assert_int_equal(do_cancel(tcp, alock("hostC", &fh, svid_c, 5, 1), 1), NLM4_GRANTED);
	assert_false(wait_event(match_granted_svid, &svid_b, 300, NULL));
	assert_int_equal(do_unlock(tcp, alock("hostA", &fh, 101, 0, 10)), NLM4_GRANTED);
	assert_true(wait_event(match_granted_svid, &svid_b, 5000, &e));
	assert_int_equal(e.kind, EV_GRANTED);
	assert_int_equal(e.off, 0);
	assert_int_equal(e.len, 10);
	/* B holds it now */
	assert_int_equal(do_lock(tcp, alock("hostA", &fh, 101, 0, 1), 1, 0, 0), NLM4_DENIED);
	assert_int_equal(do_unlock(udp, alock("hostB", &fh, svid_b, 0, 10)), NLM4_GRANTED);
	assert_false(wait_event(match_granted_svid, &svid_c, 1500, NULL));
	assert_int_equal(do_lock(tcp, alock("hostA", &fh, 101, 0, 10), 1, 0, 0), NLM4_GRANTED);
	do_free_all(tcp, "hostA");
	free(fh.data.data_val);
}

/* An UNLOCK also cancels the owner's blocked requests on the range. */
static void unlock_cancels_waits(void **state)
{
	int32_t svid = 1102;
	nfs_fh3 fh;

	(void)state;
	file_handle("unlockwait", &fh);
	assert_int_equal(do_lock(tcp, alock("hostA", &fh, 1101, 0, 10), 1, 0, 0), NLM4_GRANTED);
	assert_int_equal(do_lock(udp, alock("hostB", &fh, svid, 0, 10), 1, 1, 0), NLM4_BLOCKED);
	assert_int_equal(do_unlock(udp, alock("hostB", &fh, svid, 0, 0)), NLM4_GRANTED);
	assert_int_equal(do_unlock(tcp, alock("hostA", &fh, 1101, 0, 0)), NLM4_GRANTED);
	assert_false(wait_event(match_granted_svid, &svid, 1500, NULL));
	assert_int_equal(do_lock(tcp, alock("hostA", &fh, 1101, 0, 10), 1, 0, 0), NLM4_GRANTED);
	do_free_all(tcp, "hostA");
	free(fh.data.data_val);
}

/* FREE_ALL drops every lock and blocked request of a host. */
static void free_all(void **state)
{
	int32_t svid = 402;
	nfs_fh3 fh;

	(void)state;
	file_handle("freeall", &fh);
	assert_int_equal(do_lock(tcp, alock("hostF", &fh, 401, 0, 10), 1, 0, 0), NLM4_GRANTED);
	assert_int_equal(do_lock(tcp, alock("hostF", &fh, 401, 20, 10), 0, 0, 0), NLM4_GRANTED);
	assert_int_equal(do_lock(udp, alock("hostG", &fh, 501, 40, 10), 1, 0, 0), NLM4_GRANTED);
	assert_int_equal(do_lock(tcp, alock("hostF", &fh, svid, 40, 1), 1, 1, 0), NLM4_BLOCKED);
	do_free_all(udp, "hostF");
	assert_int_equal(do_lock(udp, alock("hostG", &fh, 501, 0, 30), 1, 0, 0), NLM4_GRANTED);
	assert_int_equal(do_unlock(udp, alock("hostG", &fh, 501, 0, 0)), NLM4_GRANTED);
	assert_false(wait_event(match_granted_svid, &svid, 1500, NULL));
	free(fh.data.data_val);
}

/* Past a client's limits: DENIED_NOLOCKS for it, and only for it. */
static void per_client_limits(void **state)
{
	nfs_fh3 fh;

	(void)state;
	file_handle("limits", &fh);
	for (int32_t i = 0; i < 4; i++)
		assert_int_equal(
			do_lock(tcp, alock("hostL", &fh, 600 + i, (uint64_t)i * 10, 1), 1, 0, 0),
			NLM4_GRANTED);
	assert_int_equal(do_lock(tcp, alock("hostL", &fh, 699, 90, 1), 1, 0, 0),
			 NLM4_DENIED_NOLOCKS);
	do_free_all(tcp, "hostL");
	for (int i = 0; i < 8; i++)
		assert_int_equal(
			do_lock(tcp, alock("hostL", &fh, 600, (uint64_t)i * 10, 1), 1, 0, 0),
			NLM4_GRANTED);
	assert_int_equal(do_lock(tcp, alock("hostL", &fh, 600, 200, 1), 1, 0, 0),
			 NLM4_DENIED_NOLOCKS);
	/* one that merges with a range it holds costs nothing */
	assert_int_equal(do_lock(tcp, alock("hostL", &fh, 600, 1, 2), 1, 0, 0), NLM4_GRANTED);
	/* blocked requests too */
	assert_int_equal(do_lock(tcp, alock("hostM", &fh, 700, 0, 1), 1, 1, 0), NLM4_BLOCKED);
	assert_int_equal(do_lock(tcp, alock("hostM", &fh, 701, 10, 1), 1, 1, 0), NLM4_BLOCKED);
	assert_int_equal(do_lock(tcp, alock("hostM", &fh, 702, 20, 1), 1, 1, 0),
			 NLM4_DENIED_NOLOCKS);
	/* others are not affected */
	assert_int_equal(do_lock(udp, alock("hostN", &fh, 800, 500, 1), 1, 0, 0), NLM4_GRANTED);
	do_free_all(tcp, "hostM");
	do_free_all(tcp, "hostL");
	do_free_all(tcp, "hostN");
	free(fh.data.data_val);
}

/* SHARE/UNSHARE: deny modes against access. */
/* SHARE or UNSHARE (proc) of host's share (mode, access) of a; its answer. */
static nlm4_stats do_share(CLIENT *c, uint32_t proc, nlm4_shareargs *a, const char *host, int mode,
			   int access)
{
	nlm4_shareres r;
	nlm4_stats st;

	a->share.caller_name = (char *)host;
	a->share.mode = (nlm4_fsh_mode)mode;
	a->share.access = (nlm4_fsh_access)access;
	memset(&r, 0, sizeof(r));
	assert_int_equal(clnt_call(c, proc, (xdrproc_t)xdr_nlm4_shareargs, (char *)a,
				   (xdrproc_t)xdr_nlm4_shareres, (char *)&r, tmo),
			 RPC_SUCCESS);
	st = r.stat;
	xdr_free((xdrproc_t)xdr_nlm4_shareres, (char *)&r);
	return st;
}

static void shares(void **state)
{
	nlm4_shareargs a = {.cookie = COOKIE};
	nfs_fh3 fh;

	(void)state;
	file_handle("share", &fh);
	a.share = (nlm4_share){.fh = {fh.data.data_len, fh.data.data_val}, .oh = {2, "s1"}};
	assert_int_equal(do_share(tcp, NLM4_SHARE, &a, "hostS", NLM4_FSM_DW, NLM4_FSA_R),
			 NLM4_GRANTED);
	/* the same owner again (a reopen): replaces its share */
	assert_int_equal(do_share(tcp, NLM4_SHARE, &a, "hostS", NLM4_FSM_DW, NLM4_FSA_R),
			 NLM4_GRANTED);
	assert_int_equal(do_share(udp, NLM4_SHARE, &a, "hostT", NLM4_FSM_DN, NLM4_FSA_W),
			 NLM4_DENIED);
	assert_int_equal(do_share(udp, NLM4_SHARE, &a, "hostT", NLM4_FSM_DN, NLM4_FSA_R),
			 NLM4_GRANTED);
	/* S asks to deny reading, which T does: refused, and S keeps what it had */
	assert_int_equal(do_share(tcp, NLM4_SHARE, &a, "hostS", NLM4_FSM_DR, NLM4_FSA_R),
			 NLM4_DENIED);
	assert_int_equal(do_share(udp, NLM4_SHARE, &a, "hostV", NLM4_FSM_DN, NLM4_FSA_W),
			 NLM4_DENIED);
	do_share(tcp, NLM4_UNSHARE, &a, "hostS", NLM4_FSM_DN, NLM4_FSA_R);
	do_share(udp, NLM4_UNSHARE, &a, "hostT", NLM4_FSM_DN, NLM4_FSA_R);
	assert_int_equal(
		do_share(udp, NLM4_SHARE, &a, "hostU", NLM4_FSM_DN, 7 /* no such access */),
		NLM4_FAILED);
	assert_int_equal(do_share(udp, NLM4_SHARE, &a, "hostU", NLM4_FSM_DN, NLM4_FSA_W),
			 NLM4_GRANTED);
	do_free_all(tcp, "hostU");
	free(fh.data.data_val);
}

/* The asynchronous forms: answers come back as _RES calls; a blocked
 * LOCK_MSG is granted with GRANTED_MSG, answered with GRANTED_RES. */
static void msg_forms(void **state)
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
	/* the client turns it down: the server gives the lock back */
	nlm4_res gr = {.cookie = {e.cookie_len, e.cookie}, .stat = NLM4_DENIED};

	assert_int_equal(clnt_call(udp, NLM4_GRANTED_RES, (xdrproc_t)xdr_nlm4_res, (char *)&gr,
				   (xdrproc_t)xdr_void, NULL, tmo),
			 RPC_SUCCESS);
	usleep(200000);
	assert_int_equal(do_lock(tcp, alock("hostX", &fh, 901, 0, 10), 1, 0, 0), NLM4_GRANTED);
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
static void bad_input(void **state)
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

/* Another machine cannot act on a client's locks by giving its name: not
 * UNLOCK, CANCEL or FREE_ALL, and an NSM notice from an address no export
 * knows is not heard. */
static void forged_from_elsewhere(void **state)
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
static void silent_client_delays_no_one(void **state)
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

static void restart_notifies_and_grace(void **state)
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
static void client_reboot_drops_locks(void **state)
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

int main(void)
{
	if (geteuid() != 0) {
		printf("1..0 # SKIP needs root: nfsrdma-server opens files by handle\n");
		return 0;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(conflicts_between_hosts),
		cmocka_unit_test(merge_and_split),
		cmocka_unit_test(local_process_conflicts),
		cmocka_unit_test(blocked_granted_and_cancelled),
		cmocka_unit_test(unlock_cancels_waits),
		cmocka_unit_test(free_all),
		cmocka_unit_test(per_client_limits),
		cmocka_unit_test(shares),
		cmocka_unit_test(msg_forms),
		cmocka_unit_test(bad_input),
		cmocka_unit_test(forged_from_elsewhere),
		cmocka_unit_test(silent_client_delays_no_one),
		cmocka_unit_test(restart_notifies_and_grace),
		cmocka_unit_test(client_reboot_drops_locks),
	};

	return cmocka_run_group_tests_name("nlm", tests, setup, teardown);
}
