/*
 * nlm_test.c: the server's lock manager (NLM v4) and status monitor (NSM),
 * spoken to over TCP and UDP with libtirpc clients, against a real
 * nfsrdma-server on a scratch export. The test plays the clients' side too:
 * an rpcbind (PMAP GETPORT) on a port of its own, which the server is told of
 * (server.nlm.client_rpcbind_port), naming the test's NLM and NSM services,
 * where the server's calls back (GRANTED, _RES, SM_NOTIFY) are recorded.
 * Several "client hosts" are caller names of this one process.
 *
 * This file starts and stops the server and has the clients' calls;
 * nlm_test_cb.c has the test's own services, the cases are in
 * nlm_test_locks.c, nlm_test_rights.c and nlm_test_hosts.c, and nlm_test.h declares what they
 * share.
 */
#include <errno.h>
#include <fcntl.h>
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

#include "common/nfs/mount_prot.h"
#include "common/nfs/nfs3_prot.h"
#include "common/nfs/nfs_prog.h"
#include "common/nfs/nlm_prog.h"
#include "common/nfs/nlm_prot.h"
#include "common/nfs/nsm_prot.h"
#include "common/rpc/integrity.h"
#include "common/rpc/rpc.h"
#include "common/rpc/rpc_tcp.h"
#include "nlm_test.h"

char T[256]; /* scratch directory */
unsigned short tcp_port;
static unsigned short rdma_port;
static pid_t server_pid;
uint64_t started_ms;
/* the integrity key of the server (its file hmac.key) and of SIGNED calls */
static const char key_bytes[] = "nlm_test's integrity key, 32 by";

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
		"  integrity = { mode = \"hmac-sha256\"; key_file = \"%s/hmac.key\"; };\n"
		"  nlm = { grace_s = %u; owners_per_client = 4; locks_per_client = 8;\n"
		"          blocked_per_client = 2; callback_retries = 3;\n"
		"          client_rpcbind_port = %u; };\n"
		"  nsm = { state_dir = \"%s/sm\"; name = \"" SERVER_NAME "\"; };\n"
		"  exports = ( { path = \"%s/export\"; clients = [\"127.0.0.1\", \"127.0.0.3\"];"
		" access = \"rw\"; root_squash = false; },\n"
		"    { path = \"%s/export2\"; clients = [\"127.0.0.1\"]; access = \"rw\";"
		" root_squash = false; auth_nlm = false; },\n"
		"    { path = \"%s/signed\"; clients = [\"127.0.0.1\"]; access = \"rw\";"
		" root_squash = false; integrity_required = true; } );\n"
		"};\n",
		rdma_port, tcp_port, T, T, T, grace_s, pmap_port, T, T, T, T);
	fclose(f);
	snprintf(path, sizeof(path), "%s/hmac.key", T);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(key_bytes, 1, sizeof(key_bytes) - 1, f), sizeof(key_bytes) - 1);
	assert_int_equal(fchmod(fileno(f), 0600), 0);
	fclose(f);
}

static void wait_udp_ready(void);

void start_server(unsigned grace_s)
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

/* See nlm_test.h. */
int server_log_count(const char *text)
{
	char path[512], line[2048];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "%s/server.log", T);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, text) != NULL;
	fclose(f);
	return n;
}

void stop_server(void)
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

CLIENT *client(int proto, uint32_t prog, uint32_t vers)
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

struct timeval tmo = {10, 0};

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

/* A call of proc of prog v vers, signed with the server's key
 * (AUTH_NFSRDMA_HMAC, uid 0) on a connection of its own: RPC_SUCCESS with
 * its result in *r (for xdr_free), or RPC_CANTRECV. */
static enum clnt_stat signed_call(uint32_t prog, uint32_t vers, uint32_t proc, xdrproc_t xa,
				  void *a, xdrproc_t xr, void *r)
{
	struct rpc_call call = {.prog = prog,
				.vers = vers,
				.proc = proc,
				.xdr_args = xa,
				.args = a,
				.xdr_res = xr,
				.res = r,
				.timeout_ms = 10000};
	struct integrity_key key;
	struct rpc_clnt *c;
	char port[16];
	int rc;

	snprintf(port, sizeof(port), "%u", tcp_port);
	assert_int_equal(integrity_key_set(&key, key_bytes, sizeof(key_bytes) - 1, 0), 0);
	assert_int_equal(rpc_tcp_clnt_create("127.0.0.1", port, 10000, 1 << 20, &c), 0);
	c->key = &key;
	if ((rc = rpc_clnt_call(c, &call)) == 0) {
		call.xdr_res = (xdrproc_t)xdr_void; /* the result stays in r */
		rpc_clnt_free_res(c, &call);
	}
	rpc_clnt_destroy(c);
	integrity_key_clear(&key);
	return rc == 0 ? RPC_SUCCESS : RPC_CANTRECV;
}

enum clnt_stat nlm_call(CLIENT *c, uint32_t proc, xdrproc_t xa, void *a, xdrproc_t xr, void *r)
{
	if (c == SIGNED)
		return signed_call(NLM_PROGRAM, NLM_V4, proc, xa, a, xr, r);
	return clnt_call(c, proc, xa, (char *)a, xr, (char *)r, tmo);
}

/* A call of prog's proc over TCP, signed or not. */
static enum clnt_stat call_prog(int sign, uint32_t prog, uint32_t vers, uint32_t proc, xdrproc_t xa,
				void *a, xdrproc_t xr, void *r)
{
	CLIENT *c;
	enum clnt_stat st;

	if (sign)
		return signed_call(prog, vers, proc, xa, a, xr, r);
	c = client(IPPROTO_TCP, prog, vers);
	st = clnt_call(c, proc, xa, (char *)a, xr, (char *)r, tmo);
	clnt_destroy(c);
	return st;
}

/* The handle of file name in the export, made if missing. */
void file_handle(const char *name, nfs_fh3 *out)
{
	file_handle_in("export", name, out);
}

/* The handle of file name in export dir (under T), made if missing, mode
 * 0666, asked for with signed calls if sign. */
static void handle_of(const char *export, const char *name, int sign, nfs_fh3 *out)
{
	char path[512], *dir = path;
	mountres3 mr;
	LOOKUP3args la;
	LOOKUP3res lr;
	int fd;

	snprintf(path, sizeof(path), "%s/%s/%s", T, export, name);
	fd = open(path, O_RDWR | O_CREAT, 0666);
	assert_true(fd >= 0);
	/* whatever the umask: the cases' anonymous callers may read it (and so lock it) */
	assert_int_equal(fchmod(fd, 0666), 0);
	close(fd);
	snprintf(path, sizeof(path), "%s/%s", T, export);
	memset(&mr, 0, sizeof(mr));
	assert_int_equal(call_prog(sign, MOUNT_PROGRAM, MOUNT_V3, 1, (xdrproc_t)xdr_dirpath, &dir,
				   (xdrproc_t)xdr_mountres3, &mr),
			 RPC_SUCCESS);
	assert_int_equal(mr.fhs_status, MNT3_OK);
	memset(&la, 0, sizeof(la));
	memset(&lr, 0, sizeof(lr));
	la.what.dir.data.data_len = mr.mountres3_u.mountinfo.fhandle.fhandle3_len;
	la.what.dir.data.data_val = mr.mountres3_u.mountinfo.fhandle.fhandle3_val;
	la.what.name = (char *)name;
	assert_int_equal(call_prog(sign, NFS_PROGRAM, NFS_V3, 3, (xdrproc_t)xdr_LOOKUP3args, &la,
				   (xdrproc_t)xdr_LOOKUP3res, &lr),
			 RPC_SUCCESS);
	assert_int_equal(lr.status, NFS3_OK);
	out->data.data_len = lr.LOOKUP3res_u.resok.object.data.data_len;
	out->data.data_val = malloc(out->data.data_len);
	memcpy(out->data.data_val, lr.LOOKUP3res_u.resok.object.data.data_val, out->data.data_len);
	xdr_free((xdrproc_t)xdr_LOOKUP3res, (char *)&lr);
	xdr_free((xdrproc_t)xdr_mountres3, (char *)&mr);
}

void file_handle_in(const char *export, const char *name, nfs_fh3 *out)
{
	handle_of(export, name, 0, out);
}

void file_handle_signed(const char *export, const char *name, nfs_fh3 *out)
{
	handle_of(export, name, 1, out);
}

/* A lock of host's owner svid on fh. */
nlm4_lock alock(const char *host, const nfs_fh3 *fh, int32_t svid, uint64_t off, uint64_t len)
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

char cookie_bytes[] = "cookie";

nlm4_stats do_lock(CLIENT *c, nlm4_lock l, int exclusive, int block, int reclaim)
{
	nlm4_lockargs a = {.cookie = COOKIE,
			   .block = block,
			   .exclusive = exclusive,
			   .alock = l,
			   .reclaim = reclaim,
			   .state = 1};
	nlm4_res r;

	memset(&r, 0, sizeof(r));
	assert_int_equal(nlm_call(c, NLM4_LOCK, (xdrproc_t)xdr_nlm4_lockargs, &a,
				  (xdrproc_t)xdr_nlm4_res, &r),
			 RPC_SUCCESS);
	assert_int_equal(r.cookie.nlm4_netobj_len, sizeof(cookie_bytes) - 1);
	xdr_free((xdrproc_t)xdr_nlm4_res, (char *)&r);
	return r.stat;
}

nlm4_stats do_unlock(CLIENT *c, nlm4_lock l)
{
	nlm4_unlockargs a = {.cookie = COOKIE, .alock = l};
	nlm4_res r;

	memset(&r, 0, sizeof(r));
	assert_int_equal(nlm_call(c, NLM4_UNLOCK, (xdrproc_t)xdr_nlm4_unlockargs, &a,
				  (xdrproc_t)xdr_nlm4_res, &r),
			 RPC_SUCCESS);
	xdr_free((xdrproc_t)xdr_nlm4_res, (char *)&r);
	return r.stat;
}

nlm4_stats do_cancel(CLIENT *c, nlm4_lock l, int exclusive)
{
	nlm4_cancargs a = {.cookie = COOKIE, .block = 1, .exclusive = exclusive, .alock = l};
	nlm4_res r;

	memset(&r, 0, sizeof(r));
	assert_int_equal(nlm_call(c, NLM4_CANCEL, (xdrproc_t)xdr_nlm4_cancargs, &a,
				  (xdrproc_t)xdr_nlm4_res, &r),
			 RPC_SUCCESS);
	xdr_free((xdrproc_t)xdr_nlm4_res, (char *)&r);
	return r.stat;
}

/* TEST; a holder goes to *h (its owner handle freed). */
nlm4_stats do_test(CLIENT *c, nlm4_lock l, int exclusive, nlm4_holder *h)
{
	nlm4_testargs a = {.cookie = COOKIE, .exclusive = exclusive, .alock = l};
	nlm4_testres r;
	nlm4_stats st;

	memset(&r, 0, sizeof(r));
	assert_int_equal(nlm_call(c, NLM4_TEST, (xdrproc_t)xdr_nlm4_testargs, &a,
				  (xdrproc_t)xdr_nlm4_testres, &r),
			 RPC_SUCCESS);
	st = r.stat.stat;
	if (st == NLM4_DENIED && h) {
		*h = r.stat.nlm4_testrply_u.holder;
		h->oh.nlm4_netobj_val = NULL;
	}
	xdr_free((xdrproc_t)xdr_nlm4_testres, (char *)&r);
	return st;
}

void do_free_all(CLIENT *c, const char *host)
{
	nlm4_notify a = {.name = (char *)host, .state = 7};

	assert_int_equal(nlm_call(c, NLM4_FREE_ALL, (xdrproc_t)xdr_nlm4_notify, &a,
				  (xdrproc_t)xdr_void, NULL),
			 RPC_SUCCESS);
}

int monitored(const char *host)
{
	char path[600];
	size_t off = (size_t)snprintf(path, sizeof(path), "%s/sm/c-", T);

	for (const unsigned char *p = (const unsigned char *)host; *p && off + 3 < sizeof(path);
	     p++)
		off += (size_t)snprintf(path + off, sizeof(path) - off, "%02x", *p);
	return access(path, F_OK) == 0;
}

/* ---- the set-up: one server, grace 0 */

CLIENT *tcp, *udp;

static int setup(void **state)
{
	char cmd[1600];

	(void)state;
	snprintf(T, sizeof(T), "%s/nlm_test.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(T) == NULL)
		return -1;
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p %s/export %s/export2 %s/signed && chmod 777 %s/export %s/export2", T, T,
		 T, T, T);
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
	char cmd[1200];

	(void)state;
	stop_server();
	if (getenv("NLM_TEST_KEEP") == NULL) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", T);
		(void)system(cmd);
	}
	return 0;
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
		cmocka_unit_test(last_bytes),
		cmocka_unit_test(local_process_conflicts),
		cmocka_unit_test(blocked_granted_and_cancelled),
		cmocka_unit_test(unlock_cancels_waits),
		cmocka_unit_test(free_all),
		cmocka_unit_test(free_all_exports),
		cmocka_unit_test(per_client_limits),
		cmocka_unit_test(shares),
		cmocka_unit_test(lock_needs_right),
		cmocka_unit_test(lock_needs_integrity),
		cmocka_unit_test(granted_res_needs_integrity),
		cmocka_unit_test(msg_forms),
		cmocka_unit_test(bad_input),
		cmocka_unit_test(forged_from_elsewhere),
		cmocka_unit_test(silent_client_delays_no_one),
		cmocka_unit_test(restart_notifies_and_grace),
		cmocka_unit_test(client_reboot_drops_locks),
	};

	return cmocka_run_group_tests_name("nlm", tests, setup, teardown);
}
