/*
 * client_nfs3_test.c: the NFSv3 client library against the in-process server
 * (t/system/client_srv.c) over TCP and RPC/RDMA on the soft provider, both modes and
 * every client registration strategy: data both ways, every procedure, the
 * attribute cache, bounded unstable data, reconnection across a server
 * restart, rewriting writes the restart lost, and mount errors.
 */
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include <sys/stat.h>

#include "client/nfs3_clnt.h"
#include "common/base/clock.h"
#include "common/base/net.h"
#include "common/rpc/rpc_drc.h"
#include "t/system/client_srv.h"

struct fx {
	char dir[PATH_MAX];
	struct csrv_params sp;
	struct csrv srv;
	struct nfs3c *c;
};

/* ---- helpers ---- */

static const char *path_in(struct fx *f, const char *name)
{
	static char buf[PATH_MAX + 64];

	snprintf(buf, sizeof(buf), "%s/%s", f->dir, name);
	return buf;
}

/* Deterministic pseudo-random bytes for seed. */
static void pattern(uint8_t *p, size_t len, unsigned seed)
{
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < len; i++) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		p[i] = (uint8_t)x;
	}
}

/* nftw callback: remove one entry. */
static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(p);
}

/* A scratch export and a server for it, with slow_proc (if > 0) slowed by
 * slow_ms, before it runs or (slow_after) after. */
static struct fx *fx_new_slow(int slow_proc, unsigned slow_ms, int slow_after)
{
	struct fx *f = calloc(1, sizeof(*f));
	const char *tmp = getenv("TMPDIR");

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "%s/nfsrdma-clnt-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(f->dir));
	chmod(f->dir, 0755);
	csrv_params_init(&f->sp, f->dir);
	f->sp.slow_proc = slow_proc;
	f->sp.slow_ms = slow_ms;
	f->sp.slow_after = slow_after;
	assert_int_equal(csrv_start(&f->srv, &f->sp), 0);
	return f;
}

/* A scratch export and a server for it. */
static struct fx *fx_new(void)
{
	return fx_new_slow(0, 0, 0);
}

/* Unmount, stop the server, remove the export. */
static void fx_free(struct fx *f)
{
	if (f->c)
		nfs3c_unmount(f->c);
	csrv_stop(&f->srv);
	nftw(f->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
}

/* Client parameters for proto/mode/reg against f's server. */
static void params(struct fx *f, struct nfs3c_params *p, enum nfs3c_proto proto, unsigned mode,
		   enum rr_reg reg)
{
	nfs3c_params_defaults(p);
	p->host = "127.0.0.1";
	p->export = f->dir;
	p->proto = proto;
	p->mountproto = proto;
	p->port = proto == NFS3C_PROTO_RDMA ? f->srv.rdma_port : f->srv.tcp_port;
	p->rr.provider = "soft";
	p->rr.modes = mode;
	p->rr.reg = reg;
	p->rr.trusted_peers = 1;
	p->rr.credits = 16;
	p->rr.arena_size = 32u << 20;
	p->rr.cache_budget = 16u << 20;
	p->rr.fastreg_pool = 64;
	p->timeout_ms = 10000;
	p->connect_timeout_ms = 2000;
}

/* Mount with p or fail the test with the message. */
static void mount_with(struct fx *f, const struct nfs3c_params *p)
{
	char err[512];
	int rc = nfs3c_mount(p, &f->c, err, sizeof(err));

	if (rc)
		fail_msg("mount: %s", err);
}

/* Write len bytes of pattern seed as file name, commit, read back, compare
 * through the client and on the server's disk. */
static void roundtrip(struct fx *f, const char *name, size_t len, unsigned seed)
{
	uint8_t *w = malloc(len), *r = malloc(len + 4096), *disk = malloc(len + 1);
	struct nfs3c_fh fh;
	struct nfs3c_file *wf;
	size_t got = 0;
	fattr3 a;
	int eof = 0, fd;

	pattern(w, len, seed);
	assert_int_equal(nfs3c_create(f->c, NULL, nfs3c_root(f->c), name, 0644, 0, &fh, &a), 0);
	assert_non_null(wf = nfs3c_file_get(f->c, &fh));
	/* in uneven pieces, so some cross wsize */
	for (size_t off = 0; off < len;) {
		size_t n = len - off < 300000 ? len - off : 300000;

		assert_int_equal(nfs3c_write(f->c, NULL, wf, off, w + off, n, UNSTABLE), 0);
		off += n;
	}
	assert_int_equal(nfs3c_commit(f->c, NULL, wf), 0);
	assert_int_equal(nfs3c_file_dirty(wf), 0);
	assert_int_equal(nfs3c_file_put(f->c, wf, NULL), 0);
	assert_int_equal(nfs3c_read(f->c, NULL, &fh, 0, r, len + 4096, &got, &eof), 0);
	assert_int_equal(got, len);
	assert_true(eof);
	assert_memory_equal(r, w, len);
	assert_int_equal(nfs3c_getattr(f->c, NULL, &fh, NFS3C_NOCACHE, &a), 0);
	assert_int_equal(a.size, len);
	assert_true((fd = open(path_in(f, name), O_RDONLY)) >= 0);
	assert_int_equal(read(fd, disk, len + 1), (ssize_t)len);
	close(fd);
	assert_memory_equal(disk, w, len);
	free(w);
	free(r);
	free(disk);
}

/* ---- data over every transport combination ---- */

static void data_matrix_one(enum nfs3c_proto proto, unsigned mode, enum rr_reg reg)
{
	struct fx *f = fx_new();
	struct nfs3c_params p;

	params(f, &p, proto, mode, reg);
	mount_with(f, &p);
	roundtrip(f, "small", 1000, 1);
	roundtrip(f, "big", (3u << 20) + 12345, 2);
	fx_free(f);
}

/* Data both ways over TCP. */
static void test_data_tcp(void **state)
{
	data_matrix_one(NFS3C_PROTO_TCP, RR_MODE_READ_WRITE, RR_REG_ZEROCOPY);
}

/* Data both ways over RPC/RDMA, both modes, every client strategy. */
static void test_data_rdma_matrix(void **state)
{
	static const enum rr_reg regs[] = {RR_REG_ZEROCOPY, RR_REG_CACHE, RR_REG_FASTREG,
					   RR_REG_ALLPHYS};

	for (int m = 0; m < 2; m++)
		for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
			data_matrix_one(NFS3C_PROTO_RDMA,
					m ? RR_MODE_READ_READ : RR_MODE_READ_WRITE, regs[i]);
}

/* ---- every procedure ---- */

struct names {
	int n;
	int seen_file, seen_dir;
};

/* nfs3c_readdir callback: count and look for the test's names. */
static int count_entry(void *arg, const struct nfs3c_dirent *e)
{
	struct names *nm = arg;

	nm->n++;
	nm->seen_file |= strcmp(e->name, "f") == 0 && e->fh && e->attr;
	nm->seen_dir |= strcmp(e->name, "d") == 0;
	return 0;
}

/* Every NFS procedure the client has, over proto. */
static void procs_on(enum nfs3c_proto proto)
{
	struct fx *f = fx_new();
	struct nfs3c_params p;
	struct nfs3c_fh d, fh, l, x, n;
	const struct nfs3c_fh *root;
	struct names nm = {0};
	char buf[64];
	uint32_t got;
	FSSTAT3resok fs;
	sattr3 s;
	fattr3 a;

	params(f, &p, proto, RR_MODE_READ_WRITE, RR_REG_ZEROCOPY);
	mount_with(f, &p);
	root = nfs3c_root(f->c);
	assert_int_equal(nfs3c_mkdir(f->c, NULL, root, "d", 0750, &d, &a), 0);
	assert_int_equal(a.type, NF3DIR);
	assert_int_equal(a.mode & 0777, 0750);
	assert_int_equal(nfs3c_mkdir(f->c, NULL, root, "d", 0750, &x, &a), -EEXIST);
	assert_int_equal(nfs3c_create(f->c, NULL, root, "f", 0640, 1, &fh, &a), 0);
	assert_int_equal(a.mode & 0777, 0640);
	assert_int_equal(nfs3c_create(f->c, NULL, root, "f", 0640, 1, &x, &a), -EEXIST);
	assert_int_equal(nfs3c_lookup(f->c, NULL, root, "f", &x, &a), 0);
	assert_true(nfs3c_fh_equal(&x, &fh));
	assert_int_equal(nfs3c_lookup(f->c, NULL, root, "nope", &x, &a), -ENOENT);
	assert_int_equal(nfs3c_link(f->c, NULL, &fh, &d, "hard", &a), 0);
	assert_int_equal(a.nlink, 2);
	assert_int_equal(nfs3c_symlink(f->c, NULL, root, "s", "d/hard", &l, &a), 0);
	assert_int_equal(a.type, NF3LNK);
	assert_int_equal(nfs3c_readlink(f->c, NULL, &l, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "d/hard");
	assert_int_equal(nfs3c_readlink(f->c, NULL, &l, buf, 3), -ENAMETOOLONG);
	assert_int_equal(nfs3c_mknod(f->c, NULL, root, "fifo", NF3FIFO, 0600, 0, 0, &n, &a), 0);
	assert_int_equal(a.type, NF3FIFO);
	memset(&s, 0, sizeof(s));
	s.size.set_it = TRUE;
	s.size.set_size3_u.size = 12345;
	s.mode.set_it = TRUE;
	s.mode.set_mode3_u.mode = 0604;
	assert_int_equal(nfs3c_setattr(f->c, NULL, &fh, &s, &a), 0);
	assert_int_equal(a.size, 12345);
	assert_int_equal(a.mode & 0777, 0604);
	assert_int_equal(nfs3c_access(f->c, NULL, &fh, ACCESS3_READ | ACCESS3_MODIFY, &got), 0);
	assert_true(got & ACCESS3_READ);
	assert_int_equal(nfs3c_rename(f->c, NULL, root, "f", &d, "g"), 0);
	assert_int_equal(nfs3c_lookup(f->c, NULL, root, "f", &x, NULL), -ENOENT);
	assert_int_equal(nfs3c_lookup(f->c, NULL, &d, "g", &x, NULL), 0);
	assert_int_equal(nfs3c_rename(f->c, NULL, &d, "g", root, "f"), 0);
	assert_int_equal(nfs3c_readdir(f->c, NULL, root, count_entry, &nm), 0);
	assert_true(nm.seen_file && nm.seen_dir);
	assert_int_equal(nm.n, 6); /* . .. d f s fifo */
	assert_int_equal(nfs3c_rmdir(f->c, NULL, root, "d"), -ENOTEMPTY);
	assert_int_equal(nfs3c_remove(f->c, NULL, &d, "hard"), 0);
	assert_int_equal(nfs3c_getattr(f->c, NULL, &fh, 0, &a), 0);
	assert_int_equal(a.nlink, 1); /* the cached count was dropped with the link */
	assert_int_equal(nfs3c_rmdir(f->c, NULL, root, "d"), 0);
	assert_int_equal(nfs3c_remove(f->c, NULL, root, "nope"), -ENOENT);
	assert_int_equal(nfs3c_fsstat(f->c, NULL, root, &fs), 0);
	assert_true(fs.tbytes > 0);
	fx_free(f);
}

/* The procedures over TCP. */
static void test_procs_tcp(void **state)
{
	procs_on(NFS3C_PROTO_TCP);
}

/* The procedures over RPC/RDMA. */
static void test_procs_rdma(void **state)
{
	procs_on(NFS3C_PROTO_RDMA);
}

/* A directory longer than one READDIRPLUS reply (and an RDMA Reply chunk). */
static void test_big_dir(void **state)
{
	struct fx *f = fx_new();
	struct nfs3c_params p;
	struct names nm = {0};
	char name[PATH_MAX + 64];

	for (int i = 0; i < 600; i++) {
		snprintf(name, sizeof(name), "%s/entry-with-a-longish-name-%04d", f->dir, i);
		close(open(name, O_CREAT | O_WRONLY, 0644));
	}
	params(f, &p, NFS3C_PROTO_RDMA, RR_MODE_READ_WRITE, RR_REG_ZEROCOPY);
	mount_with(f, &p);
	assert_int_equal(nfs3c_readdir(f->c, NULL, nfs3c_root(f->c), count_entry, &nm), 0);
	assert_int_equal(nm.n, 602);
	fx_free(f);
}

/* ---- the attribute cache ---- */

static void test_attr_cache(void **state)
{
	struct fx *f = fx_new();
	struct nfs3c_params p;
	struct nfs3c_stats st;
	struct nfs3c_fh fh;
	fattr3 a;

	params(f, &p, NFS3C_PROTO_TCP, RR_MODE_READ_WRITE, RR_REG_ZEROCOPY);
	p.acregmin = p.acregmax = 1;
	mount_with(f, &p);
	assert_int_equal(nfs3c_create(f->c, NULL, nfs3c_root(f->c), "f", 0644, 0, &fh, &a), 0);
	assert_int_equal(truncate(path_in(f, "f"), 777), 0); /* behind the client's back */
	assert_int_equal(nfs3c_getattr(f->c, NULL, &fh, 0, &a), 0);
	assert_int_equal(a.size, 0); /* cached */
	assert_true(nfs3c_attr_valid_ms(f->c, &fh) > 0);
	nfs3c_get_stats(f->c, &st);
	assert_true(st.attr_hits >= 1);
	usleep(1100000);
	assert_int_equal(nfs3c_getattr(f->c, NULL, &fh, 0, &a), 0);
	assert_int_equal(a.size, 777); /* expired, fetched */
	nfs3c_unmount(f->c);
	p.noac = 1;
	mount_with(f, &p);
	assert_int_equal(truncate(path_in(f, "f"), 5), 0);
	assert_int_equal(nfs3c_getattr(f->c, NULL, &fh, 0, &a), 0);
	assert_int_equal(a.size, 5);
	assert_int_equal(nfs3c_attr_valid_ms(f->c, &fh), 0);
	fx_free(f);
}

/* A READ whose reply is slow, in a thread. */
struct slow_read {
	struct fx *f;
	struct nfs3c_fh fh;
	int rc;
};

static void *slow_read_main(void *arg)
{
	struct slow_read *sr = arg;
	uint8_t buf[100];
	size_t got = 0;
	int eof = 0;

	sr->rc = nfs3c_read(sr->f->c, NULL, &sr->fh, 0, buf, sizeof(buf), &got, &eof);
	return NULL;
}

/* Attributes never go back in time: a READ runs, a truncating SETATTR is
 * sent and answered, then the READ's reply (with the size before the
 * truncate in its post-op attributes) arrives; the cache keeps the newer. */
static void test_attrs_never_go_back(void **state)
{
	struct fx *f = fx_new_slow(NFSPROC3_READ, 1000, 1);
	struct slow_read sr = {.f = f};
	sattr3 sa = {0};
	struct nfs3c_params p;
	struct nfs3c_stats st;
	pthread_t t;
	fattr3 a;

	params(f, &p, NFS3C_PROTO_TCP, RR_MODE_READ_WRITE, RR_REG_ZEROCOPY);
	p.acregmin = p.acregmax = 60;
	mount_with(f, &p);
	assert_int_equal(nfs3c_create(f->c, NULL, nfs3c_root(f->c), "f", 0644, 0, &sr.fh, &a), 0);
	assert_int_equal(truncate(path_in(f, "f"), 1000), 0);
	assert_int_equal(nfs3c_getattr(f->c, NULL, &sr.fh, NFS3C_NOCACHE, &a), 0);
	assert_int_equal(a.size, 1000);
	assert_int_equal(pthread_create(&t, NULL, slow_read_main, &sr), 0);
	usleep(300000); /* the READ has run; its reply waits */
	sa.size.set_it = TRUE;
	sa.size.set_size3_u.size = 10;
	assert_int_equal(nfs3c_setattr(f->c, NULL, &sr.fh, &sa, &a), 0);
	assert_int_equal(a.size, 10);
	pthread_join(t, NULL);
	assert_int_equal(sr.rc, 0);
	assert_int_equal(nfs3c_getattr(f->c, NULL, &sr.fh, 0, &a), 0);
	assert_int_equal(a.size, 10);
	nfs3c_get_stats(f->c, &st);
	assert_true(st.attr_stale >= 1);
	fx_free(f);
}

/* Names NFSv3 cannot carry are ENAMETOOLONG, said by the client before it
 * sends anything (not ENOSPC from an encoder); the longest that fit work. */
static void test_long_names(void **state)
{
	struct fx *f = fx_new();
	char longest[256], too_long[257], *target = malloc(4098);
	struct nfs3c_params p;
	struct nfs3c_fh fh, fh2;
	fattr3 a;

	params(f, &p, NFS3C_PROTO_TCP, RR_MODE_READ_WRITE, RR_REG_ZEROCOPY);
	mount_with(f, &p);
	memset(longest, 'n', 255);
	longest[255] = '\0';
	memset(too_long, 'n', 256);
	too_long[256] = '\0';
	memset(target, 't', 4097);
	target[4097] = '\0';
	assert_int_equal(nfs3c_create(f->c, NULL, nfs3c_root(f->c), longest, 0644, 0, &fh, &a), 0);
	assert_int_equal(nfs3c_create(f->c, NULL, nfs3c_root(f->c), too_long, 0644, 0, &fh2, &a),
			 -ENAMETOOLONG);
	assert_int_equal(nfs3c_lookup(f->c, NULL, nfs3c_root(f->c), too_long, &fh2, &a),
			 -ENAMETOOLONG);
	assert_int_equal(nfs3c_mkdir(f->c, NULL, nfs3c_root(f->c), too_long, 0755, &fh2, &a),
			 -ENAMETOOLONG);
	assert_int_equal(
		nfs3c_rename(f->c, NULL, nfs3c_root(f->c), longest, nfs3c_root(f->c), too_long),
		-ENAMETOOLONG);
	assert_int_equal(nfs3c_symlink(f->c, NULL, nfs3c_root(f->c), "l", target, &fh2, &a),
			 -ENAMETOOLONG);
	assert_int_equal(nfs3c_remove(f->c, NULL, nfs3c_root(f->c), longest), 0);
	free(target);
	fx_free(f);
}

/* ---- unstable data: bounded, and rewritten after a restart ---- */

static void test_dirty_bounded(void **state)
{
	struct fx *f = fx_new();
	struct nfs3c_params p;
	struct nfs3c_stats st;
	struct nfs3c_fh fh;
	struct nfs3c_file *wf;
	uint8_t *buf = malloc(256 << 10);
	fattr3 a;

	params(f, &p, NFS3C_PROTO_RDMA, RR_MODE_READ_WRITE, RR_REG_CACHE);
	p.dirty_max = 1u << 20;
	p.wsize = 256u << 10;
	mount_with(f, &p);
	assert_int_equal(nfs3c_create(f->c, NULL, nfs3c_root(f->c), "f", 0644, 0, &fh, &a), 0);
	assert_non_null(wf = nfs3c_file_get(f->c, &fh));
	pattern(buf, 256 << 10, 9);
	for (int i = 0; i < 32; i++)
		assert_int_equal(
			nfs3c_write(f->c, NULL, wf, (uint64_t)i << 18, buf, 256 << 10, UNSTABLE),
			0);
	nfs3c_get_stats(f->c, &st);
	assert_true(st.dirty_now <= p.dirty_max);
	assert_true(st.dirty_peak <= p.dirty_max + p.wsize);
	assert_true(st.commits >= 4);
	assert_int_equal(nfs3c_file_put(f->c, wf, NULL), 0);
	nfs3c_get_stats(f->c, &st);
	assert_int_equal(st.dirty_now, 0);
	free(buf);
	fx_free(f);
}

/* Overwrite a file on the server's disk, as if a crash lost its unstable data. */
static void clobber(struct fx *f, const char *name, size_t len)
{
	uint8_t *z = calloc(1, len);
	int fd = open(path_in(f, name), O_WRONLY);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, z, len, 0), (ssize_t)len);
	close(fd);
	free(z);
}

/* Restart the server on the same ports: a new backend, a new write verifier. */
static void restart(struct fx *f)
{
	char rp[16], tp[16];

	memcpy(rp, f->srv.rdma_port, sizeof(rp));
	memcpy(tp, f->srv.tcp_port, sizeof(tp));
	csrv_stop(&f->srv);
	f->sp.rdma_port = rp;
	f->sp.tcp_port = tp;
	assert_int_equal(csrv_start(&f->srv, &f->sp), 0);
	f->sp.rdma_port = f->sp.tcp_port = NULL;
}

/* The server restarts and loses what was not committed of file "f": the
 * client's COMMIT notices, resends its records, and the file reads back as
 * expect. */
static void lose_and_resend(struct fx *f, struct nfs3c_file *wf, const struct nfs3c_fh *fh,
			    const uint8_t *expect, size_t len)
{
	uint8_t *r = malloc(len);
	struct nfs3c_stats st;
	size_t got;

	restart(f); /* a new write verifier */
	clobber(f, "f", len);
	assert_int_equal(nfs3c_commit(f->c, NULL, wf), 0); /* reconnects, notices, rewrites */
	nfs3c_get_stats(f->c, &st);
	assert_true(st.verf_changes >= 1);
	assert_true(st.writes_resent >= 1);
	assert_true(st.reconnects >= 2);
	assert_int_equal(nfs3c_file_dirty(wf), 0);
	assert_int_equal(nfs3c_read(f->c, NULL, fh, 0, r, len, &got, NULL), 0);
	assert_int_equal(got, len);
	assert_memory_equal(r, expect, len);
	free(r);
}

/* Unstable data lost in a restart is written again by the COMMIT that notices. */
static void resend_on(enum nfs3c_proto proto)
{
	struct fx *f = fx_new();
	size_t len = (2u << 20) + 100;
	uint8_t *w = malloc(len);
	struct nfs3c_params p;
	struct nfs3c_fh fh;
	struct nfs3c_file *wf;
	fattr3 a;

	params(f, &p, proto, RR_MODE_READ_WRITE, RR_REG_ZEROCOPY);
	mount_with(f, &p);
	pattern(w, len, 42);
	assert_int_equal(nfs3c_create(f->c, NULL, nfs3c_root(f->c), "f", 0644, 0, &fh, &a), 0);
	assert_non_null(wf = nfs3c_file_get(f->c, &fh));
	assert_int_equal(nfs3c_write(f->c, NULL, wf, 0, w, len, UNSTABLE), 0);
	lose_and_resend(f, wf, &fh, w, len);
	assert_int_equal(nfs3c_file_put(f->c, wf, NULL), 0);
	free(w);
	fx_free(f);
}

/* Thousands of random, overlapping unstable writes (appends, rewrites,
 * holes punched in the middle of earlier ones), then a restart that loses them
 * all: what the client resends from its records alone must be exactly the
 * file's last contents. */
static void test_overlapping_records(void **state)
{
	enum { SIZE = 256 << 10, WRITES = 3000 };
	struct fx *f = fx_new();
	uint8_t *mirror = calloc(1, SIZE), *piece = malloc(8192);
	struct nfs3c_params p;
	struct nfs3c_fh fh;
	struct nfs3c_file *wf;
	unsigned seed = 7;
	size_t hi = 0;
	fattr3 a;

	params(f, &p, NFS3C_PROTO_TCP, RR_MODE_READ_WRITE, RR_REG_ZEROCOPY);
	mount_with(f, &p);
	assert_int_equal(nfs3c_create(f->c, NULL, nfs3c_root(f->c), "f", 0644, 0, &fh, &a), 0);
	assert_non_null(wf = nfs3c_file_get(f->c, &fh));
	for (int i = 0; i < WRITES; i++) {
		size_t len = 1 + rand_r(&seed) % 8192, off = rand_r(&seed) % (SIZE - len);

		if (i % 5 == 0) /* some appends too */
			off = hi < SIZE - len ? hi : off;
		for (size_t k = 0; k < len; k++)
			piece[k] = (uint8_t)(i * 31 + k);
		assert_int_equal(nfs3c_write(f->c, NULL, wf, off, piece, len, UNSTABLE), 0);
		memcpy(mirror + off, piece, len);
		if (off + len > hi)
			hi = off + len;
	}
	lose_and_resend(f, wf, &fh, mirror, hi);
	assert_int_equal(nfs3c_file_put(f->c, wf, NULL), 0);
	free(mirror);
	free(piece);
	fx_free(f);
}

/* A REMOVE that outlives the client's timeout is sent again, on a new
 * connection, with its first xid: the server drops the copies that come while
 * it still runs and answers the next from its reply cache. It runs once, and
 * the client sees its success, not the NOENT a second run would give. */
static void retransmit_on(enum nfs3c_proto proto)
{
	struct fx *f = fx_new();
	struct rpc_drc_stats before, after;
	struct nfs3c_params p;
	struct nfs3c_stats st;
	struct nfs3c_fh fh;
	struct stat sb;
	fattr3 a;

	csrv_stop(&f->srv);
	f->sp.slow_proc = NFSPROC3_REMOVE;
	f->sp.slow_ms = 900;
	assert_int_equal(csrv_start(&f->srv, &f->sp), 0);
	params(f, &p, proto, RR_MODE_READ_WRITE, RR_REG_ZEROCOPY);
	mount_with(f, &p);
	assert_int_equal(nfs3c_create(f->c, NULL, nfs3c_root(f->c), "victim", 0644, 1, &fh, &a), 0);
	nfs3c_unmount(f->c);
	p.timeout_ms = 300; /* the REMOVE takes 900 ms */
	p.retry_ms = 10000; /* soft: a client that never gets its reply fails the test */
	mount_with(f, &p);
	rpc_server_get_drc_stats(f->srv.rpc, &before);
	assert_int_equal(nfs3c_remove(f->c, NULL, nfs3c_root(f->c), "victim"), 0);
	rpc_server_get_drc_stats(f->srv.rpc, &after);
	nfs3c_get_stats(f->c, &st);
	assert_true(st.retries >= 1);
	assert_int_equal(after.misses - before.misses, 1); /* it ran once */
	assert_true(after.hits - before.hits >= 1);	   /* a retransmission got its reply */
	assert_int_equal(stat(path_in(f, "victim"), &sb), -1);
	fx_free(f);
}

static void test_retransmit_tcp(void **state)
{
	retransmit_on(NFS3C_PROTO_TCP);
}

static void test_retransmit_rdma(void **state)
{
	retransmit_on(NFS3C_PROTO_RDMA);
}

/* Resend over TCP. */
static void test_resend_tcp(void **state)
{
	resend_on(NFS3C_PROTO_TCP);
}

/* Resend over RPC/RDMA. */
static void test_resend_rdma(void **state)
{
	resend_on(NFS3C_PROTO_RDMA);
}

/* A later WRITE that sees the new verifier rewrites the older ones at once,
 * and an overlapping newer write is not undone by that. */
static void test_resend_by_write(void **state)
{
	struct fx *f = fx_new();
	uint8_t a1[8192], b1[4096], r[8192];
	struct nfs3c_params p;
	struct nfs3c_stats st;
	struct nfs3c_fh fh;
	struct nfs3c_file *wf;
	size_t got;
	fattr3 a;

	params(f, &p, NFS3C_PROTO_RDMA, RR_MODE_READ_READ, RR_REG_FASTREG);
	mount_with(f, &p);
	memset(a1, 'a', sizeof(a1));
	memset(b1, 'b', sizeof(b1));
	assert_int_equal(nfs3c_create(f->c, NULL, nfs3c_root(f->c), "f", 0644, 0, &fh, &a), 0);
	assert_non_null(wf = nfs3c_file_get(f->c, &fh));
	assert_int_equal(nfs3c_write(f->c, NULL, wf, 0, a1, sizeof(a1), UNSTABLE), 0);
	restart(f);
	clobber(f, "f", sizeof(a1));
	assert_int_equal(nfs3c_write(f->c, NULL, wf, 2048, b1, sizeof(b1), UNSTABLE), 0);
	nfs3c_get_stats(f->c, &st);
	assert_true(st.writes_resent >= 1);
	assert_int_equal(nfs3c_read(f->c, NULL, &fh, 0, r, sizeof(r), &got, NULL), 0);
	assert_int_equal(got, sizeof(r));
	assert_memory_equal(r, a1, 2048);
	assert_memory_equal(r + 2048, b1, 4096);
	assert_memory_equal(r + 6144, a1, 2048);
	assert_int_equal(nfs3c_file_put(f->c, wf, NULL), 0);
	fx_free(f);
}

/* Calls made while the server is down wait for it and then succeed. */
static void *restart_later(void *arg)
{
	struct fx *f = arg;
	char rp[16], tp[16];

	memcpy(rp, f->srv.rdma_port, sizeof(rp));
	memcpy(tp, f->srv.tcp_port, sizeof(tp));
	csrv_stop(&f->srv);
	usleep(700000);
	f->sp.rdma_port = rp;
	f->sp.tcp_port = tp;
	if (csrv_start(&f->srv, &f->sp) != 0)
		abort();
	return NULL;
}

/* A call made while the server is down waits and succeeds. */
static void test_survive_restart(void **state)
{
	struct fx *f = fx_new();
	struct nfs3c_params p;
	struct nfs3c_stats st;
	struct nfs3c_fh fh;
	pthread_t th;
	fattr3 a;

	params(f, &p, NFS3C_PROTO_RDMA, RR_MODE_READ_WRITE, RR_REG_ZEROCOPY);
	p.noac = 1;
	mount_with(f, &p);
	assert_int_equal(nfs3c_create(f->c, NULL, nfs3c_root(f->c), "f", 0644, 0, &fh, &a), 0);
	assert_int_equal(pthread_create(&th, NULL, restart_later, f), 0);
	usleep(200000);
	assert_int_equal(nfs3c_getattr(f->c, NULL, &fh, 0, &a), 0);
	pthread_join(th, NULL);
	nfs3c_get_stats(f->c, &st);
	assert_true(st.reconnects >= 2);
	fx_free(f);
}

/* soft: with the server gone for good, a call fails after retry_ms. */
static void test_soft_gives_up(void **state)
{
	struct fx *f = fx_new();
	struct nfs3c_params p;
	struct nfs3c_fh fh;
	fattr3 a;

	params(f, &p, NFS3C_PROTO_TCP, RR_MODE_READ_WRITE, RR_REG_ZEROCOPY);
	p.noac = 1;
	p.retry_ms = 800;
	mount_with(f, &p);
	assert_int_equal(nfs3c_create(f->c, NULL, nfs3c_root(f->c), "f", 0644, 0, &fh, &a), 0);
	csrv_stop(&f->srv);
	assert_int_equal(nfs3c_getattr(f->c, NULL, &fh, 0, &a), -EIO);
	nfs3c_unmount(f->c);
	f->c = NULL;
	assert_int_equal(csrv_start(&f->srv, &f->sp), 0);
	fx_free(f);
}

/* soft: a server that takes every connection but never answers in time is
 * given up on after retry_ms as well. */
static void test_soft_gives_up_on_slow_server(void **state)
{
	struct fx *f = fx_new_slow(NFSPROC3_GETATTR, 1500, 0);
	struct nfs3c_params p;
	struct nfs3c_fh fh;
	uint64_t t0;
	fattr3 a;

	params(f, &p, NFS3C_PROTO_TCP, RR_MODE_READ_WRITE, RR_REG_ZEROCOPY);
	p.noac = 1;
	mount_with(f, &p);
	assert_int_equal(nfs3c_create(f->c, NULL, nfs3c_root(f->c), "f", 0644, 0, &fh, &a), 0);
	nfs3c_unmount(f->c);
	p.timeout_ms = 200;
	p.retry_ms = 800;
	mount_with(f, &p);
	t0 = clock_now_ns();
	assert_int_equal(nfs3c_getattr(f->c, NULL, &fh, 0, &a), -EIO);
	assert_true(clock_now_ns() - t0 < 5000000000ull);
	fx_free(f);
}

/* ---- several writers on one file ---- */

struct writer {
	struct fx *f;
	struct nfs3c_file *wf;
	int idx, rc;
};

/* One writer: ten pieces at its own offsets. */
static void *writer_main(void *arg)
{
	struct writer *w = arg;
	uint8_t buf[100000];

	pattern(buf, sizeof(buf), (unsigned)w->idx + 100);
	for (int i = 0; i < 10 && w->rc == 0; i++)
		w->rc = nfs3c_write(w->f->c, NULL, w->wf, ((uint64_t)w->idx * 10 + i) * sizeof(buf),
				    buf, sizeof(buf), UNSTABLE);
	return NULL;
}

/* Four threads writing one file through one write state. */
static void test_concurrent_writers(void **state)
{
	struct fx *f = fx_new();
	struct writer w[4];
	pthread_t th[4];
	struct nfs3c_params p;
	struct nfs3c_fh fh;
	struct nfs3c_file *wf;
	uint8_t *all = malloc(4000000), want[100000];
	size_t got;
	fattr3 a;

	params(f, &p, NFS3C_PROTO_RDMA, RR_MODE_READ_WRITE, RR_REG_CACHE);
	mount_with(f, &p);
	assert_int_equal(nfs3c_create(f->c, NULL, nfs3c_root(f->c), "f", 0644, 0, &fh, &a), 0);
	assert_non_null(wf = nfs3c_file_get(f->c, &fh));
	for (int i = 0; i < 4; i++) {
		w[i] = (struct writer){.f = f, .wf = wf, .idx = i};
		assert_int_equal(pthread_create(&th[i], NULL, writer_main, &w[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(w[i].rc, 0);
	}
	assert_int_equal(nfs3c_file_put(f->c, wf, NULL), 0);
	assert_int_equal(nfs3c_read(f->c, NULL, &fh, 0, all, 4000000, &got, NULL), 0);
	assert_int_equal(got, 4000000);
	for (int i = 0; i < 40; i++) {
		pattern(want, sizeof(want), (unsigned)(i / 10) + 100);
		assert_memory_equal(all + (size_t)i * sizeof(want), want, sizeof(want));
	}
	free(all);
	fx_free(f);
}

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
static void test_mount_errors(void **state)
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
	expect_mount_error(&p, -EHOSTUNREACH, "cannot connect");
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
static void test_integrity(void **state)
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
static void test_nonroot_rdma_matrix(void **state)
{
	static const enum rr_reg regs[] = {RR_REG_DYNAMIC, RR_REG_CACHE, RR_REG_FASTREG,
					   RR_REG_ALLPHYS};

	for (int m = 0; m < 2; m++)
		for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
			nonroot_on(m ? RR_MODE_READ_READ : RR_MODE_READ_WRITE, regs[i]);
}

/* ---- posts the provider refuses ---- */

/* The server's soft device fails its nth post_send carrying op (VB_SOFT_FAIL_POST,
 * see platform/soft/soft_dev.c): the connection ends and is counted, what was
 * posted is completed once (ASan watches), the client reconnects, resends, and
 * the data arrive whole. */
static void post_failure_on(unsigned mode, const char *how)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct nfs3c_params p;
	struct rr_stats st;

	snprintf(f->dir, sizeof(f->dir), "/tmp/nfsrdma-postfail-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	csrv_params_init(&f->sp, f->dir);
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
	for (int i = 0; i < 100 && st.conns != 1; i++) {
		usleep(50000);
		rr_server_get_stats(f->srv.rr, &st);
	}
	assert_int_equal(st.conns, 1);
	fx_free(f);
}

/* Sends, RDMA Writes and RDMA Reads, refused before queueing and queued with
 * a failed doorbell, in both modes (no RDMA Writes in Read-Read). */
static void test_post_failures(void **state)
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

/* Needs root, for the in-process server. */
/* Every NFS3ERR_* (RFC 1813) has the errno a local file system would give,
 * those with no local meaning the nearest one; anything else is EIO. */
static void test_errno_table(void **state)
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_data_tcp),
		cmocka_unit_test(test_data_rdma_matrix),
		cmocka_unit_test(test_procs_tcp),
		cmocka_unit_test(test_procs_rdma),
		cmocka_unit_test(test_big_dir),
		cmocka_unit_test(test_attr_cache),
		cmocka_unit_test(test_attrs_never_go_back),
		cmocka_unit_test(test_long_names),
		cmocka_unit_test(test_dirty_bounded),
		cmocka_unit_test(test_resend_tcp),
		cmocka_unit_test(test_resend_rdma),
		cmocka_unit_test(test_resend_by_write),
		cmocka_unit_test(test_overlapping_records),
		cmocka_unit_test(test_retransmit_tcp),
		cmocka_unit_test(test_retransmit_rdma),
		cmocka_unit_test(test_survive_restart),
		cmocka_unit_test(test_soft_gives_up),
		cmocka_unit_test(test_soft_gives_up_on_slow_server),
		cmocka_unit_test(test_concurrent_writers),
		cmocka_unit_test(test_mount_errors),
		cmocka_unit_test(test_integrity),
		cmocka_unit_test(test_nonroot_rdma_matrix),
		cmocka_unit_test(test_post_failures),
		cmocka_unit_test(test_errno_table),
	};

	if (geteuid() != 0) {
		printf("1..0 # SKIP needs root: the in-process server opens files by handle\n");
		return 0;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
