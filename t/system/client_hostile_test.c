/*
 * client_hostile_test.c: the NFSv3 client library against servers that
 * misbehave, one way at a time: the in-process server (t/system/client_srv.c) with a
 * procedure's results mangled, behind a TCP proxy that corrupts a record
 * mark, or on a soft device that stops answering RDMA Reads or acknowledging
 * Sends. Each case ends in a clean error or a recovery, within a bound.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "client/nfs3_clnt.h"
#include "common/base/clock.h"
#include "common/base/net.h"
#include "t/system/client_srv.h"

struct fx {
	char dir[PATH_MAX];
	struct csrv_params sp;
	struct csrv srv;
	struct nfs3c *c;
};

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(p);
}

/* A scratch export with a 256 KiB file "f" and a server for it; env, if not
 * NULL, is VB_SOFT_SILENT for the server's device. */
static struct fx *fx_new(struct csrv_params *tweak, const char *silent)
{
	struct fx *f = calloc(1, sizeof(*f));
	char path[PATH_MAX + 8];
	uint8_t data[4096];
	int fd;

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/nfsrdma-hostile-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	chmod(f->dir, 0755);
	snprintf(path, sizeof(path), "%s/f", f->dir);
	assert_true((fd = open(path, O_CREAT | O_WRONLY, 0644)) >= 0);
	for (int i = 0; i < 64; i++) {
		memset(data, i, sizeof(data));
		assert_int_equal(write(fd, data, sizeof(data)), (ssize_t)sizeof(data));
	}
	close(fd);
	for (int i = 0; i < 40; i++) {
		snprintf(path, sizeof(path), "%s/entry%02d", f->dir, i);
		close(open(path, O_CREAT | O_WRONLY, 0644));
	}
	csrv_params_init(&f->sp, f->dir);
	if (tweak) {
		f->sp.modes = tweak->modes ? tweak->modes : f->sp.modes;
		f->sp.mangle_proc = tweak->mangle_proc;
		f->sp.mangle = tweak->mangle;
		f->sp.slow_proc = tweak->slow_proc;
		f->sp.slow_ms = tweak->slow_ms;
		f->sp.op_deadline_ms = tweak->op_deadline_ms;
	}
	if (silent)
		setenv("VB_SOFT_SILENT", silent, 1);
	assert_int_equal(csrv_start(&f->srv, &f->sp), 0);
	unsetenv("VB_SOFT_SILENT");
	return f;
}

static void fx_free(struct fx *f)
{
	if (f->c)
		nfs3c_unmount(f->c);
	csrv_stop(&f->srv);
	nftw(f->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
}

/* Client parameters: proto to port (MOUNT over TCP to mport), short timeouts. */
static void params(struct fx *f, struct nfs3c_params *p, enum nfs3c_proto proto, const char *port,
		   const char *mport, unsigned mode)
{
	nfs3c_params_defaults(p);
	p->host = "127.0.0.1";
	p->export = f->dir;
	p->proto = proto;
	p->port = port;
	p->mountproto = NFS3C_PROTO_TCP;
	p->mountport = mport;
	p->rr.provider = "soft";
	p->rr.modes = mode ? mode : RR_MODE_READ_WRITE;
	p->rr.credits = 16;
	p->rr.arena_size = 32u << 20;
	p->timeout_ms = 1000;
	p->connect_timeout_ms = 2000;
}

static void mount_with(struct fx *f, const struct nfs3c_params *p)
{
	char err[512];

	if (nfs3c_mount(p, &f->c, err, sizeof(err)) != 0)
		fail_msg("mount: %s", err);
}

static int lookup_f(struct fx *f, struct nfs3c_fh *fh)
{
	return nfs3c_lookup(f->c, NULL, nfs3c_root(f->c), "f", fh, NULL);
}

static uint64_t now_ms(void)
{
	return clock_now_ns() / 1000000u;
}

/* ---- a TCP proxy that can corrupt a reply's record mark ---- */

struct proxy {
	int lfd;
	char port[16];
	const char *to; /* the server's port */
	int corrupt;	/* atomic: replace the next reply's record mark */
	pthread_t acceptor;
};

struct pump {
	struct proxy *px;
	int cfd, sfd;
};

static int copy_some(int from, int to)
{
	char buf[65536];
	ssize_t n = read(from, buf, sizeof(buf));

	struct iovec iov = {buf, (size_t)n};

	return n > 0 && net_writev_full(to, &iov, 1) == 0 ? 0 : -1;
}

/* One reply record from the server to the client, its mark corrupted if asked. */
static int copy_record(struct proxy *px, int from, int to)
{
	uint32_t mark, len;
	struct iovec iov[2];
	char *body;
	int rc, one = 1;

	if (net_read_full(from, &mark, 4) != 0)
		return -1;
	len = ntohl(mark) & 0x7fffffffu;
	if (!(body = malloc(len ? len : 1)) || net_read_full(from, body, len) != 0) {
		free(body);
		return -1;
	}
	if (__atomic_compare_exchange_n(&px->corrupt, &one, 0, 0, __ATOMIC_SEQ_CST,
					__ATOMIC_SEQ_CST))
		mark = htonl(0xffffffffu); /* a last fragment of 2 GiB */
	iov[0] = (struct iovec){&mark, 4};
	iov[1] = (struct iovec){body, len};
	rc = net_writev_full(to, iov, 2) == 0 ? 0 : -1;
	free(body);
	return rc;
}

static void *pump_main(void *arg)
{
	struct pump *pm = arg;
	struct pollfd pfd[2] = {{pm->cfd, POLLIN, 0}, {pm->sfd, POLLIN, 0}};

	while (poll(pfd, 2, -1) > 0) {
		if ((pfd[0].revents && copy_some(pm->cfd, pm->sfd) != 0) ||
		    (pfd[1].revents && copy_record(pm->px, pm->sfd, pm->cfd) != 0))
			break;
	}
	close(pm->cfd);
	close(pm->sfd);
	free(pm);
	return NULL;
}

static void *acceptor_main(void *arg)
{
	struct proxy *px = arg;
	int fd;

	while ((fd = accept(px->lfd, NULL, NULL)) >= 0) {
		struct pump *pm = calloc(1, sizeof(*pm));
		pthread_t t;

		pm->px = px;
		pm->cfd = fd;
		pm->sfd = net_connect_tcp("127.0.0.1", px->to, 2000);
		if (pm->sfd < 0 || pthread_create(&t, NULL, pump_main, pm) != 0) {
			close(fd);
			free(pm);
			continue;
		}
		pthread_detach(t);
	}
	return NULL;
}

static void proxy_start(struct proxy *px, const char *to)
{
	const char *err;

	memset(px, 0, sizeof(*px));
	px->to = to;
	snprintf(px->port, sizeof(px->port), "%d", net_free_port());
	assert_true((px->lfd = net_listen_tcp("127.0.0.1", px->port, 16, &err)) >= 0);
	assert_int_equal(pthread_create(&px->acceptor, NULL, acceptor_main, px), 0);
}

static void proxy_stop(struct proxy *px)
{
	shutdown(px->lfd, SHUT_RDWR);
	pthread_join(px->acceptor, NULL);
	close(px->lfd);
}

/* A reply record that claims 2 GiB: the stream is lost, so the connection
 * ends, a new one is made and the call is sent again. */
static void test_tcp_bad_record_mark(void **state)
{
	struct fx *f = fx_new(NULL, NULL);
	struct nfs3c_params p;
	struct nfs3c_stats st;
	struct proxy px;
	struct nfs3c_fh fh;
	fattr3 a;

	proxy_start(&px, f->srv.tcp_port);
	params(f, &p, NFS3C_PROTO_TCP, px.port, px.port, 0);
	mount_with(f, &p);
	assert_int_equal(lookup_f(f, &fh), 0);
	__atomic_store_n(&px.corrupt, 1, __ATOMIC_SEQ_CST);
	assert_int_equal(nfs3c_getattr(f->c, NULL, &fh, NFS3C_NOCACHE, &a), 0);
	assert_int_equal(a.size, 64 * 4096);
	nfs3c_get_stats(f->c, &st);
	assert_int_equal(st.reconnects, 2); /* the first connection, and its replacement */
	fx_free(f);
	proxy_stop(&px);
}

/* ---- results a broken server sends ---- */

/* READ: no data, and no end of file either. */
static void empty_read(void *res)
{
	READ3res *r = res;

	if (r->status == NFS3_OK) {
		r->READ3res_u.resok.count = 0;
		r->READ3res_u.resok.data.data_len = 0;
		r->READ3res_u.resok.eof = FALSE;
	}
}

/* READ: at most a quarter of what was asked, never eof. */
static void short_read(void *res)
{
	READ3res *r = res;

	if (r->status == NFS3_OK && r->READ3res_u.resok.count > 1024) {
		r->READ3res_u.resok.count /= 4;
		r->READ3res_u.resok.data.data_len = r->READ3res_u.resok.count;
		r->READ3res_u.resok.eof = FALSE;
	}
}

/* READDIRPLUS: every entry's cookie is the same, and the listing never ends. */
static void looping_cookies(void *res)
{
	READDIRPLUS3res *r = res;

	if (r->status != NFS3_OK)
		return;
	for (entryplus3 *e = r->READDIRPLUS3res_u.resok.reply.entries; e; e = e->nextentry)
		e->cookie = 7;
	r->READDIRPLUS3res_u.resok.reply.eof = FALSE;
}

/* FSINFO: transfers of one byte. */
static void tiny_fsinfo(void *res)
{
	FSINFO3res *r = res;

	if (r->status == NFS3_OK) {
		FSINFO3resok *ok = &r->FSINFO3res_u.resok;

		ok->rtmax = ok->rtpref = ok->wtmax = ok->wtpref = 1;
	}
}

/* READ: every second one says it carries a byte more than it does. */
static void every_other_read_bad(void *res)
{
	static unsigned n;
	READ3res *r = res;

	if (r->status == NFS3_OK && n++ % 2 == 1)
		r->READ3res_u.resok.count++;
}

/* MKDIR: the first EEXIST is answered NFS3ERR_JUKEBOX (try again later). */
static void exist_first_jukebox(void *res)
{
	static int done;
	MKDIR3res *r = res;

	if (r->status == NFS3ERR_EXIST && !done++)
		r->status = NFS3ERR_JUKEBOX;
}

/* COMMIT: always fails (NFS3ERR_IO). */
static void failed_commit(void *res)
{
	COMMIT3res *r = res;

	if (r->status == NFS3_OK)
		r->status = NFS3ERR_IO;
}

/* A mount (rsize: 0 for the server's) of a server whose proc's results go
 * through mangle. */
static struct fx *mangled_mount_rsize(int proc, void (*mangle)(void *res), uint32_t rsize)
{
	struct csrv_params t = {.mangle_proc = proc, .mangle = mangle};
	struct fx *f = fx_new(&t, NULL);
	struct nfs3c_params p;

	params(f, &p, NFS3C_PROTO_TCP, f->srv.tcp_port, f->srv.tcp_port, 0);
	p.rsize = rsize;
	mount_with(f, &p);
	return f;
}

static struct fx *mangled_mount(int proc, void (*mangle)(void *res))
{
	return mangled_mount_rsize(proc, mangle, 0);
}

static int count_entry(void *arg, const struct nfs3c_dirent *e)
{
	++*(unsigned *)arg;
	return 0;
}

/* READ with no data and no eof is not the end of the file: a few tries, then EIO. */
static void test_read_without_progress(void **state)
{
	struct fx *f = mangled_mount(NFSPROC3_READ, empty_read);
	static uint8_t buf[64 * 4096];
	struct nfs3c_stats st;
	struct nfs3c_fh fh;
	size_t got = 1;

	assert_int_equal(lookup_f(f, &fh), 0);
	assert_int_equal(nfs3c_read(f->c, NULL, &fh, 0, buf, sizeof(buf), &got, NULL), -EIO);
	nfs3c_get_stats(f->c, &st);
	assert_true(st.calls < 20);
	fx_free(f);
}

/* A READ of several rsize pieces whose second piece fails fails whole, with
 * EIO: the first piece's data alone would read as the end of the file (FUSE
 * takes a short read so) and hide the error. */
static void test_read_error_midway(void **state)
{
	struct fx *f = mangled_mount_rsize(NFSPROC3_READ, every_other_read_bad, 65536);
	static uint8_t buf[4 * 65536];
	struct nfs3c_fh fh;
	size_t got = 0;

	assert_int_equal(lookup_f(f, &fh), 0);
	assert_int_equal(nfs3c_read(f->c, NULL, &fh, 0, buf, sizeof(buf), &got, NULL), -EIO);
	assert_int_equal(got, 65536);
	fx_free(f);
}

/* MKDIR of a directory that exists, answered JUKEBOX first: the retry (a new
 * request) gets EEXIST, which is real, not the trace of an earlier try that
 * made the directory, as it would be after a retransmission. */
static void test_jukebox_then_exist(void **state)
{
	struct fx *f = mangled_mount(NFSPROC3_MKDIR, exist_first_jukebox);
	struct nfs3c_stats st;
	struct nfs3c_fh d;

	assert_int_equal(nfs3c_mkdir(f->c, NULL, nfs3c_root(f->c), "d", 0755, &d, NULL), 0);
	assert_int_equal(nfs3c_mkdir(f->c, NULL, nfs3c_root(f->c), "d", 0755, &d, NULL), -EEXIST);
	nfs3c_get_stats(f->c, &st);
	assert_int_equal(st.jukebox, 1);
	fx_free(f);
}

/* A COMMIT that fails reports the error once and drops the writes it could
 * not make stable, as Linux's client does, rather than keep them (and the
 * file's state) for ever, failing every later commit; one that commit_all
 * made (no caller of the file's) is reported at the file's own next commit. */
static void test_failed_commit(void **state)
{
	struct fx *f = mangled_mount(NFSPROC3_COMMIT, failed_commit);
	struct nfs3c_file *wf;
	struct nfs3c_fh fh;
	uint8_t w[8192];

	memset(w, 7, sizeof(w));
	assert_int_equal(lookup_f(f, &fh), 0);
	assert_non_null(wf = nfs3c_file_get(f->c, &fh));
	assert_int_equal(nfs3c_write(f->c, NULL, wf, 0, w, sizeof(w), UNSTABLE), 0);
	assert_int_equal(nfs3c_commit(f->c, NULL, wf), -EIO);
	assert_int_equal(nfs3c_file_dirty(wf), 0);
	assert_int_equal(nfs3c_commit(f->c, NULL, wf), 0);
	assert_int_equal(nfs3c_write(f->c, NULL, wf, 0, w, sizeof(w), UNSTABLE), 0);
	assert_int_equal(nfs3c_commit_all(f->c), -EIO);
	assert_int_equal(nfs3c_file_dirty(wf), 0);
	assert_int_equal(nfs3c_commit(f->c, NULL, wf), -EIO); /* the file's own, once */
	assert_int_equal(nfs3c_file_put(f->c, wf, NULL), 0);
	fx_free(f);
}

/* Short READs without eof go on from where they stopped: the data arrive whole. */
static void test_short_reads(void **state)
{
	struct fx *f = mangled_mount(NFSPROC3_READ, short_read);
	static uint8_t buf[64 * 4096];
	struct nfs3c_fh fh;
	size_t got = 0;
	int eof = 0;

	assert_int_equal(lookup_f(f, &fh), 0);
	assert_int_equal(nfs3c_read(f->c, NULL, &fh, 0, buf, sizeof(buf), &got, &eof), 0);
	assert_int_equal(got, sizeof(buf));
	for (size_t i = 0; i < sizeof(buf); i++)
		if (buf[i] != (uint8_t)(i / 4096))
			fail_msg("byte %zu is %u", i, buf[i]);
	fx_free(f);
}

/* READDIRPLUS cookies that loop end the listing with ELOOP, memory bounded. */
static void test_readdir_loop(void **state)
{
	struct fx *f = mangled_mount(NFSPROC3_READDIRPLUS, looping_cookies);
	unsigned n = 0;

	assert_int_equal(nfs3c_readdir(f->c, NULL, nfs3c_root(f->c), count_entry, &n), -ELOOP);
	assert_true(n < 1000);
	fx_free(f);
}

/* A listing longer than dir_max ends with EOVERFLOW. */
static void test_readdir_ceiling(void **state)
{
	struct fx *f = fx_new(NULL, NULL);
	struct nfs3c_params p;
	unsigned n = 0;

	params(f, &p, NFS3C_PROTO_TCP, f->srv.tcp_port, f->srv.tcp_port, 0);
	p.dir_max = 16;
	mount_with(f, &p);
	assert_int_equal(nfs3c_readdir(f->c, NULL, nfs3c_root(f->c), count_entry, &n), -EOVERFLOW);
	assert_int_equal(n, 16);
	fx_free(f);
}

/* FSINFO's one-byte transfers are taken as 4 KiB: 256 KiB in 64 READs. */
static void test_fsinfo_clamped(void **state)
{
	struct fx *f = mangled_mount(NFSPROC3_FSINFO, tiny_fsinfo);
	static uint8_t buf[64 * 4096];
	struct nfs3c_stats before, after;
	struct nfs3c_fh fh;
	size_t got = 0;

	assert_int_equal(nfs3c_rsize(f->c), 4096);
	assert_int_equal(lookup_f(f, &fh), 0);
	nfs3c_get_stats(f->c, &before);
	assert_int_equal(nfs3c_read(f->c, NULL, &fh, 0, buf, sizeof(buf), &got, NULL), 0);
	assert_int_equal(got, sizeof(buf));
	nfs3c_get_stats(f->c, &after);
	assert_true(after.calls - before.calls <= 66);
	fx_free(f);
}

/* ---- RPC/RDMA peers that stop answering ---- */

/* Read-Read: the server never answers the RDMA Reads that pull its reply; a
 * soft mount gives up within its retry time instead of waiting for ever. */
static void test_rdma_unanswered_reads(void **state)
{
	struct csrv_params t = {.modes = RR_MODE_READ_READ};
	struct fx *f = fx_new(&t, "reads");
	static uint8_t buf[64 * 4096];
	struct nfs3c_params p;
	struct nfs3c_fh fh;
	uint64_t t0;
	size_t got;
	int rc;

	params(f, &p, NFS3C_PROTO_RDMA, f->srv.rdma_port, f->srv.tcp_port, RR_MODE_READ_READ);
	p.retry_ms = 3000;
	mount_with(f, &p);
	assert_int_equal(lookup_f(f, &fh), 0);
	t0 = now_ms();
	rc = nfs3c_read(f->c, NULL, &fh, 0, buf, sizeof(buf), &got, NULL);
	assert_true(rc == -EIO || rc == -ETIMEDOUT);
	assert_true(now_ms() - t0 < 10000);
	fx_free(f);
}

/* The server never acknowledges our Sends: each call still ends (its reply
 * came) and the connection that cannot send is replaced, within the timeout. */
static void test_rdma_unacknowledged_sends(void **state)
{
	struct fx *f = fx_new(NULL, "acks");
	struct nfs3c_params p;
	struct nfs3c_stats st;
	struct nfs3c_fh fh;
	uint64_t t0;
	fattr3 a;

	params(f, &p, NFS3C_PROTO_RDMA, f->srv.rdma_port, f->srv.tcp_port, 0);
	p.retry_ms = 5000;
	mount_with(f, &p);
	t0 = now_ms();
	assert_int_equal(lookup_f(f, &fh), 0);
	assert_int_equal(nfs3c_getattr(f->c, NULL, &fh, NFS3C_NOCACHE, &a), 0);
	assert_true(now_ms() - t0 < 10000);
	nfs3c_get_stats(f->c, &st);
	assert_true(st.reconnects >= 2);
	fx_free(f);
}

/* READ answers later than the client waits: the client gives the call up and
 * replaces the connection, so the server's late RDMA Writes into the Write
 * chunk meet a gone connection (a QP error on its side). A soft mount fails
 * the READ within its retry time, and the next call is answered at once. */
static void test_rdma_late_writes(void **state)
{
	struct csrv_params t = {.slow_proc = NFSPROC3_READ, .slow_ms = 1500};
	struct fx *f = fx_new(&t, NULL);
	static uint8_t buf[64 * 4096];
	struct nfs3c_params p;
	struct nfs3c_fh fh;
	uint64_t t0;
	size_t got;
	fattr3 a;
	int rc;

	params(f, &p, NFS3C_PROTO_RDMA, f->srv.rdma_port, f->srv.tcp_port, 0);
	p.retry_ms = 3000;
	mount_with(f, &p);
	assert_int_equal(lookup_f(f, &fh), 0);
	t0 = now_ms();
	rc = nfs3c_read(f->c, NULL, &fh, 0, buf, sizeof(buf), &got, NULL);
	assert_true(rc == -EIO || rc == -ETIMEDOUT);
	assert_true(now_ms() - t0 < 10000);
	t0 = now_ms();
	assert_int_equal(nfs3c_getattr(f->c, NULL, &fh, NFS3C_NOCACHE, &a), 0);
	assert_true(now_ms() - t0 < 3000);
	fx_free(f);
}

/* ---- the server against a client that stops answering ---- */

/* A client whose device never answers the server's RDMA Reads (the WRITE data
 * in its Read chunks): the server drops that connection after its deadline,
 * giving back what the call held, and serves another client all the while. */
static void test_server_unanswered_pull(void **state)
{
	struct csrv_params t = {.op_deadline_ms = 500};
	struct fx *f = fx_new(&t, NULL), *g = calloc(1, sizeof(*g));
	static uint8_t w[300000];
	struct nfs3c_params p;
	struct nfs3c_file *wf;
	struct rr_stats st;
	struct nfs3c_fh fh;
	uint64_t t0;
	fattr3 a;
	int rc;

	params(f, &p, NFS3C_PROTO_RDMA, f->srv.rdma_port, f->srv.tcp_port, 0);
	p.timeout_ms = 3000; /* longer than the server's deadline: the server acts first */
	p.retry_ms = 4000;
	/* the client's own devices, one per connection it makes, are silent */
	setenv("VB_SOFT_SILENT", "reads", 1);
	mount_with(f, &p);
	assert_int_equal(nfs3c_create(f->c, NULL, nfs3c_root(f->c), "w", 0644, 0, &fh, &a), 0);
	assert_non_null(wf = nfs3c_file_get(f->c, &fh));
	t0 = now_ms();
	rc = nfs3c_write(f->c, NULL, wf, 0, w, sizeof(w), FILE_SYNC);
	unsetenv("VB_SOFT_SILENT");
	if (rc != -EIO && rc != -ETIMEDOUT)
		fail_msg("the WRITE ended with %d", rc);
	assert_true(now_ms() - t0 < 10000);
	nfs3c_file_put(f->c, wf, NULL);
	rr_server_get_stats(f->srv.rr, &st);
	assert_true(st.op_timeouts >= 1);
	/* another client of the same server is served */
	memcpy(g->dir, f->dir, sizeof(g->dir));
	params(f, &p, NFS3C_PROTO_RDMA, f->srv.rdma_port, f->srv.tcp_port, 0);
	mount_with(g, &p);
	assert_int_equal(nfs3c_lookup(g->c, NULL, nfs3c_root(g->c), "f", &fh, &a), 0);
	assert_int_equal(a.size, 64 * 4096);
	nfs3c_unmount(g->c);
	free(g);
	fx_free(f);
}

/* Needs root, for the in-process server. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tcp_bad_record_mark),
		cmocka_unit_test(test_read_without_progress),
		cmocka_unit_test(test_short_reads),
		cmocka_unit_test(test_read_error_midway),
		cmocka_unit_test(test_jukebox_then_exist),
		cmocka_unit_test(test_failed_commit),
		cmocka_unit_test(test_readdir_loop),
		cmocka_unit_test(test_readdir_ceiling),
		cmocka_unit_test(test_fsinfo_clamped),
		cmocka_unit_test(test_rdma_unanswered_reads),
		cmocka_unit_test(test_rdma_unacknowledged_sends),
		cmocka_unit_test(test_rdma_late_writes),
		cmocka_unit_test(test_server_unanswered_pull),
	};

	if (geteuid() != 0) {
		printf("1..0 # SKIP needs root: the in-process server opens files by handle\n");
		return 0;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
