/*
 * client_nfs3_test.c: the NFSv3 client library against the in-process server
 * (t/system/client_srv.c) over TCP and RPC/RDMA on the soft provider, both modes and
 * every client registration strategy: data both ways, every procedure, the
 * attribute cache, bounded unstable data, reconnection across a server
 * restart, rewriting writes the restart lost, and mount errors.
 *
 * This file has the fixture (a scratch export and a server for it) and the
 * helpers the cases share (client_nfs3_test.h), and the case table; the
 * cases are in client_nfs3_test_*.c by topic.
 */
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include <sys/stat.h>

#include "client/nfs3_clnt.h"
#include "t/system/client_srv.h"
#include "client_nfs3_test.h"

/* ---- helpers ---- */

const char *path_in(struct fx *f, const char *name)
{
	static char buf[PATH_MAX + 64];

	snprintf(buf, sizeof(buf), "%s/%s", f->dir, name);
	return buf;
}

/* Deterministic pseudo-random bytes for seed. */
void pattern(uint8_t *p, size_t len, unsigned seed)
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

/* A scratch export, and its server's parameters (not started). */
struct fx *fx_alloc(void)
{
	struct fx *f = calloc(1, sizeof(*f));
	const char *tmp = getenv("TMPDIR");

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "%s/nfsrdma-clnt-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(f->dir));
	chmod(f->dir, 0755);
	csrv_params_init(&f->sp, f->dir);
	return f;
}

/* A scratch export and a server for it, with slow_proc (if > 0) slowed by
 * slow_ms, before it runs or (slow_after) after. */
struct fx *fx_new_slow(int slow_proc, unsigned slow_ms, int slow_after)
{
	struct fx *f = fx_alloc();

	f->sp.slow_proc = slow_proc;
	f->sp.slow_ms = slow_ms;
	f->sp.slow_after = slow_after;
	assert_int_equal(csrv_start(&f->srv, &f->sp), 0);
	return f;
}

/* A scratch export and a server for it. */
struct fx *fx_new(void)
{
	return fx_new_slow(0, 0, 0);
}

/* See client_nfs3_test.h. Restart the server on the same ports: a new backend, a new write
 * verifier. */
void fx_restart(struct fx *f)
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

/* Unmount, stop the server, remove the export. */
void fx_free(struct fx *f)
{
	if (f->c)
		nfs3c_unmount(f->c);
	csrv_stop(&f->srv);
	nftw(f->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
}

/* Client parameters for proto/mode/reg against f's server. */
void params(struct fx *f, struct nfs3c_params *p, enum nfs3c_proto proto, unsigned mode,
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
void mount_with(struct fx *f, const struct nfs3c_params *p)
{
	char err[512];
	int rc = nfs3c_mount(p, &f->c, err, sizeof(err));

	if (rc)
		fail_msg("mount: %s", err);
}

/* Write len bytes of pattern seed as file name, commit, read back, compare
 * through the client and on the server's disk. */
void roundtrip(struct fx *f, const char *name, size_t len, unsigned seed)
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

/* nfs3c_readdir callback: count and look for the test's names. */
int count_entry(void *arg, const struct nfs3c_dirent *e)
{
	struct names *nm = arg;

	nm->n++;
	nm->seen_file |= strcmp(e->name, "f") == 0 && e->fh && e->attr;
	nm->seen_dir |= strcmp(e->name, "d") == 0;
	return 0;
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
		cmocka_unit_test(test_attrs_never_go_back_evicted),
		cmocka_unit_test(test_attrs_ordered_by_ctime),
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
		cmocka_unit_test(test_nconnect),
		cmocka_unit_test(test_errno_table),
		cmocka_unit_test(test_ordma_hits),
		cmocka_unit_test(test_ordma_sees_other_writer),
		cmocka_unit_test(test_ordma_change_attribute),
		cmocka_unit_test(test_ordma_slot_reused),
		cmocka_unit_test(test_ordma_server_restart),
		cmocka_unit_test(test_ordma_other_user),
		cmocka_unit_test(test_ordma_not_offered),
	};

	if (geteuid() != 0) {
		printf("1..0 # SKIP needs root: the in-process server opens files by handle\n");
		return 0;
	}
	if (getenv("CNT_FILTER")) /* one test, or a few: a cmocka pattern */
		cmocka_set_test_filter(getenv("CNT_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
