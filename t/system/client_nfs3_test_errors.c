/*
 * client_nfs3_test_errors.c: mount errors that say what is wrong, calls
 * signed for integrity, callers who are not root (the server must not post
 * from a thread that took on their identity), posts the provider fails on
 * purpose, several transports (nconnect) of which one breaks, and the errno
 * each NFS3ERR maps to.
 * Part of t/system/client_nfs3_test (see client_nfs3_test.c).
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include <sys/stat.h>

#include "client/nfs3_clnt.h"
#include "common/base/net.h"
#include "t/system/client_srv.h"
#include "client_nfs3_test.h"

/* ---- mount errors say what is wrong ---- */

static void expect_mount_error(struct nfs3c_params *p, int want, const char *words)
{
	struct nfs3c *c = NULL;
	char err[512] = "";
	int rc = nfs3c_mount(p, &c, err, sizeof(err));

	assert_int_equal(rc, want);
	assert_null(c);
	if (!strstr(err, words))
		fail_msg("message '%s' lacks '%s'", err, words);
}

/* Bad name, closed ports, unknown export, refused client. */
void test_mount_errors(void **state)
{
	struct fx *f = fx_new();
	struct nfs3c_params p;
	char port[16];

	params(f, &p, NFS3C_PROTO_TCP, RR_MODE_READ_WRITE, RR_REG_ZEROCOPY);
	p.host = "no-such-host.invalid";
	expect_mount_error(&p, -EHOSTUNREACH, "cannot resolve server name");
	params(f, &p, NFS3C_PROTO_TCP, RR_MODE_READ_WRITE, RR_REG_ZEROCOPY);
	snprintf(port, sizeof(port), "%d", net_free_port());
	p.port = port;
	expect_mount_error(&p, -ECONNREFUSED, "Connection refused");
	params(f, &p, NFS3C_PROTO_RDMA, RR_MODE_READ_WRITE, RR_REG_ZEROCOPY);
	p.port = port;
	expect_mount_error(&p, -ECONNREFUSED, "over rdma: Connection refused");
	params(f, &p, NFS3C_PROTO_RDMA, RR_MODE_READ_WRITE, RR_REG_ZEROCOPY);
	p.export = "/no/such/export";
	expect_mount_error(&p, -ENOENT, "MNT3ERR_NOENT");
	csrv_stop(&f->srv);
	f->sp.deny = 1;
	assert_int_equal(csrv_start(&f->srv, &f->sp), 0);
	params(f, &p, NFS3C_PROTO_TCP, RR_MODE_READ_WRITE, RR_REG_ZEROCOPY);
	expect_mount_error(&p, -EACCES, "MNT3ERR_ACCES");
	fx_free(f);
}

/* Integrity: every call signed with the shared key. */
void test_integrity(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char keyfile[PATH_MAX + 16], err[256];
	struct integrity_key key;
	struct nfs3c_params p;
	int fd;

	snprintf(f->dir, sizeof(f->dir), "/tmp/nfsrdma-clnt-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(keyfile, sizeof(keyfile), "%s.key", f->dir);
	fd = open(keyfile, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	assert_int_equal(write(fd, "0123456789abcdef0123456789abcdef", 32), 32);
	close(fd);
	csrv_params_init(&f->sp, f->dir);
	f->sp.keyfile = keyfile;
	assert_int_equal(csrv_start(&f->srv, &f->sp), 0);
	assert_int_equal(integrity_key_load(keyfile, &key, err, sizeof(err)), 0);
	params(f, &p, NFS3C_PROTO_RDMA, RR_MODE_READ_WRITE, RR_REG_ZEROCOPY);
	p.key = &key;
	mount_with(f, &p);
	roundtrip(f, "signed", 200000, 5);
	nfs3c_unmount(f->c);
	f->c = NULL;
	integrity_key_clear(&key);
	unlink(keyfile);
	fx_free(f);
}

/* ---- callers who are not root ---- */

/* Everything a caller who is not root does, over RPC/RDMA in mode against a
 * server registering with sreg. */
static void nonroot_on(unsigned mode, enum rr_reg sreg)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct rpc_cred nobody = {.flavor = AUTH_SYS, .uid = 65534, .gid = 65534};
	size_t len = 700000, got = 0;
	uint8_t *w = malloc(len), *r = malloc(len);
	struct nfs3c_params p;
	struct nfs3c_file *wf;
	struct names nm = {0};
	struct rr_stats st;
	struct nfs3c_fh fh, d;
	fattr3 a;
	int eof = 0;

	snprintf(f->dir, sizeof(f->dir), "/tmp/nfsrdma-nonroot-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	chmod(f->dir, 0777);
	csrv_params_init(&f->sp, f->dir);
	f->sp.modes = mode;
	f->sp.reg = sreg;
	assert_int_equal(csrv_start(&f->srv, &f->sp), 0);
	params(f, &p, NFS3C_PROTO_RDMA, mode, RR_REG_FASTREG);
	mount_with(f, &p);
	pattern(w, len, 7);
	/* as nobody: a file made, written through Read chunks, read back through
	 * Write chunks (or exposed, in Read-Read), listed, removed */
	assert_int_equal(nfs3c_mkdir(f->c, &nobody, nfs3c_root(f->c), "d", 0755, &d, &a), 0);
	assert_int_equal(a.uid, 65534);
	assert_int_equal(nfs3c_create(f->c, &nobody, &d, "f", 0600, 0, &fh, &a), 0);
	assert_non_null(wf = nfs3c_file_get(f->c, &fh));
	assert_int_equal(nfs3c_write(f->c, &nobody, wf, 0, w, len, UNSTABLE), 0);
	assert_int_equal(nfs3c_file_put(f->c, wf, &nobody), 0);
	assert_int_equal(nfs3c_read(f->c, &nobody, &fh, 0, r, len, &got, &eof), 0);
	assert_int_equal(got, len);
	assert_memory_equal(r, w, len);
	assert_int_equal(nfs3c_readdir(f->c, &nobody, &d, count_entry, &nm), 0);
	assert_int_equal(nm.n, 3);
	/* and as root after it, on workers that served nobody */
	assert_int_equal(nfs3c_read(f->c, NULL, &fh, 0, r, len, &got, &eof), 0);
	assert_memory_equal(r, w, len);
	assert_int_equal(nfs3c_remove(f->c, &nobody, &d, "f"), 0);
	assert_int_equal(nfs3c_rmdir(f->c, NULL, nfs3c_root(f->c), "d"), 0);
	rr_server_get_stats(f->srv.rr, &st);
	assert_int_equal(st.post_failures, 0);
	assert_int_equal(st.conns, 1); /* never reconnected */
	free(w);
	free(r);
	fx_free(f);
}

/* A caller who is not root makes the server's worker take on its identity,
 * after which Linux (and the soft provider) refuse that thread's posts: the
 * server must never post, poll or register there. Both modes, every server
 * registration strategy. */
void test_nonroot_rdma_matrix(void **state)
{
	static const enum rr_reg regs[] = {RR_REG_DYNAMIC, RR_REG_CACHE, RR_REG_FASTREG,
					   RR_REG_ALLPHYS};

	for (int m = 0; m < 2; m++)
		for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
			nonroot_on(m ? RR_MODE_READ_READ : RR_MODE_READ_WRITE, regs[i]);
}

/* ---- posts the provider refuses ---- */

/* The server's live RPC/RDMA connections, once they are n (or 5 s went by). */
static uint64_t conns_settle(struct fx *f, uint64_t n)
{
	struct rr_stats st;

	rr_server_get_stats(f->srv.rr, &st);
	for (int i = 0; i < 100 && st.conns != n; i++) {
		usleep(50000);
		rr_server_get_stats(f->srv.rr, &st);
	}
	return st.conns;
}

/* The server's soft device fails its nth post_send carrying op (VB_SOFT_FAIL_POST,
 * see platform/soft/soft_dev.c): the connection ends and is counted, what was
 * posted is completed once (ASan watches), the client reconnects, resends, and
 * the data arrive whole. */
static void post_failure_on(unsigned mode, const char *how)
{
	struct fx *f = fx_alloc();
	struct nfs3c_params p;
	struct rr_stats st;

	f->sp.modes = mode;
	f->sp.reg = RR_REG_CACHE;
	setenv("VB_SOFT_FAIL_POST", how, 1);
	assert_int_equal(csrv_start(&f->srv, &f->sp), 0);
	unsetenv("VB_SOFT_FAIL_POST");
	params(f, &p, NFS3C_PROTO_RDMA, mode, RR_REG_FASTREG);
	mount_with(f, &p);
	roundtrip(f, "pf", 700000, 9);
	rr_server_get_stats(f->srv.rr, &st);
	if (st.post_failures != 1)
		fail_msg("%s: %llu post failures counted, 1 expected", how,
			 (unsigned long long)st.post_failures);
	/* the failed connection is torn down and freed; the client's new one stays */
	assert_int_equal(conns_settle(f, 1), 1);
	fx_free(f);
}

/* Sends, RDMA Writes and RDMA Reads, refused before queueing and queued with
 * a failed doorbell, in both modes (no RDMA Writes in Read-Read). */
void test_post_failures(void **state)
{
	static const char *const hows[] = {"refuse:send:3",  "doorbell:send:3",
					   "refuse:read:1",  "doorbell:read:1",
					   "refuse:write:1", "doorbell:write:1"};

	for (size_t i = 0; i < sizeof(hows) / sizeof(hows[0]); i++) {
		post_failure_on(RR_MODE_READ_WRITE, hows[i]);
		if (!strstr(hows[i], "write"))
			post_failure_on(RR_MODE_READ_READ, hows[i]);
	}
}

/* ---- several transports (nconnect) ---- */

/* The calls each RPC/RDMA connection of f's server took, from its
 * per-connection counters; their number. */
static size_t calls_per_conn(struct fx *f, unsigned long long *calls, size_t max)
{
	char *text = NULL, *save = NULL;
	size_t len = 0, n = 0;
	FILE *m = open_memstream(&text, &len);

	assert_non_null(m);
	rr_server_print_stats(f->srv.rr, m);
	fclose(m);
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *v = strrchr(l, ' ');

		if (strncmp(l, "rdma.conn.", 10) == 0 && v && v - l > 6 &&
		    strncmp(v - 6, ".calls", 6) == 0 && n < max)
			calls[n++] = strtoull(v + 1, NULL, 10);
	}
	free(text);
	return n;
}

/* nconnect=3: three connections, which calls take in turn; when the server's
 * 60th Send fails, that connection breaks, the client replaces all three and
 * the data arrive whole. Over TCP, two connections carry the same. */
void test_nconnect(void **state)
{
	struct fx *f = fx_alloc();
	struct nfs3c_params p;
	struct nfs3c_stats cs;
	struct rr_stats st;
	unsigned long long calls[8];
	fattr3 a;

	setenv("VB_SOFT_FAIL_POST", "refuse:send:60", 1);
	assert_int_equal(csrv_start(&f->srv, &f->sp), 0);
	unsetenv("VB_SOFT_FAIL_POST");
	params(f, &p, NFS3C_PROTO_RDMA, RR_MODE_READ_WRITE, RR_REG_FASTREG);
	p.nconnect = NFS3C_NCONNECT_MAX + 1;
	expect_mount_error(&p, -EINVAL, "nconnect: 17 is more than 16");
	p.nconnect = 3;
	mount_with(f, &p);
	assert_int_equal(conns_settle(f, 3), 3);
	for (int i = 0; i < 30; i++)
		assert_int_equal(nfs3c_getattr(f->c, NULL, nfs3c_root(f->c), NFS3C_NOCACHE, &a), 0);
	assert_int_equal(calls_per_conn(f, calls, 8), 3);
	for (int i = 0; i < 3; i++)
		if (calls[i] < 10)
			fail_msg("connection %d took %llu calls of 30 and more", i, calls[i]);
	for (int i = 0; i < 40; i++) /* past the 60th Send */
		assert_int_equal(nfs3c_getattr(f->c, NULL, nfs3c_root(f->c), NFS3C_NOCACHE, &a), 0);
	roundtrip(f, "nc", 700000, 5);
	rr_server_get_stats(f->srv.rr, &st);
	assert_int_equal(st.post_failures, 1);
	nfs3c_get_stats(f->c, &cs);
	assert_int_equal(cs.reconnects, 2); /* the mount's, and one for all three */
	assert_int_equal(cs.transports, 3);
	assert_int_equal(conns_settle(f, 3), 3);
	fx_free(f);

	f = fx_new();
	params(f, &p, NFS3C_PROTO_TCP, 0, RR_REG_FASTREG);
	p.nconnect = 2;
	mount_with(f, &p);
	roundtrip(f, "nc", 700000, 6);
	nfs3c_get_stats(f->c, &cs);
	assert_int_equal(cs.reconnects, 1);
	assert_int_equal(cs.transports, 2);
	fx_free(f);
}

/* Needs root, for the in-process server. */
/* Every NFS3ERR_* (RFC 1813) has the errno a local file system would give,
 * those with no local meaning the nearest one; anything else is EIO. */
void test_errno_table(void **state)
{
	static const struct {
		nfsstat3 st;
		int err;
	} want[] = {
		{NFS3_OK, 0},
		{NFS3ERR_PERM, EPERM},
		{NFS3ERR_NOENT, ENOENT},
		{NFS3ERR_IO, EIO},
		{NFS3ERR_NXIO, ENXIO},
		{NFS3ERR_ACCES, EACCES},
		{NFS3ERR_EXIST, EEXIST},
		{NFS3ERR_XDEV, EXDEV},
		{NFS3ERR_NODEV, ENODEV},
		{NFS3ERR_NOTDIR, ENOTDIR},
		{NFS3ERR_ISDIR, EISDIR},
		{NFS3ERR_INVAL, EINVAL},
		{NFS3ERR_FBIG, EFBIG},
		{NFS3ERR_NOSPC, ENOSPC},
		{NFS3ERR_ROFS, EROFS},
		{NFS3ERR_MLINK, EMLINK},
		{NFS3ERR_NAMETOOLONG, ENAMETOOLONG},
		{NFS3ERR_NOTEMPTY, ENOTEMPTY},
		{NFS3ERR_DQUOT, EDQUOT},
		{NFS3ERR_STALE, ESTALE},
		{NFS3ERR_REMOTE, EREMOTE},
		{NFS3ERR_BADHANDLE, ESTALE},
		{NFS3ERR_NOT_SYNC, EIO},
		{NFS3ERR_BAD_COOKIE, EINVAL},
		{NFS3ERR_NOTSUPP, ENOTSUP},
		{NFS3ERR_TOOSMALL, EOVERFLOW},
		{NFS3ERR_SERVERFAULT, EIO},
		{NFS3ERR_BADTYPE, EINVAL},
		{NFS3ERR_JUKEBOX, EAGAIN},
		{(nfsstat3)4242, EIO},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		if (nfs3c_errno(want[i].st) != -want[i].err)
			fail_msg("status %d: errno %d, expected %d", (int)want[i].st,
				 -nfs3c_errno(want[i].st), want[i].err);
		assert_true(want[i].st == (nfsstat3)4242 ||
			    strncmp(nfs3c_stat_name(want[i].st), "NFS3", 4) == 0);
	}
}
