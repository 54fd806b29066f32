/*
 * client_nfs3_test_restart.c: unstable data: bounded, and written again
 * when a server restart lost it (overlapping records included); requests
 * retransmitted and answered from the server's duplicate request cache;
 * calls that wait across a restart, and soft mounts that give up.
 * Part of t/system/client_nfs3_test (see client_nfs3_test.c).
 */
#include <fcntl.h>
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
#include "common/rpc/rpc_drc.h"
#include "t/system/client_srv.h"
#include "client_nfs3_test.h"

/* ---- unstable data: bounded, and rewritten after a restart ---- */

void test_dirty_bounded(void **state)
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
	/* the data's buffers come back for the next writes, no more than dirty
	 * ever holds: dirty_max and the write that went past it */
	assert_true(st.wbufs_made <= p.dirty_max / p.wsize + 1);
	assert_int_equal(st.wbufs_made, 0); /* one writer: the slots of the slab do */
	assert_true(st.wbufs_spare <= p.dirty_max + p.wsize);
	assert_int_equal(nfs3c_file_put(f->c, wf, NULL), 0);
	nfs3c_get_stats(f->c, &st);
	assert_int_equal(st.dirty_now, 0);
	assert_true(st.wbufs_spare > 0 && st.wbufs_spare <= p.dirty_max + p.wsize);
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

/* The server restarts and loses what was not committed of file "f": the
 * client's COMMIT notices, resends its records, and the file reads back as
 * expect. */
static void lose_and_resend(struct fx *f, struct nfs3c_file *wf, const struct nfs3c_fh *fh,
			    const uint8_t *expect, size_t len)
{
	uint8_t *r = malloc(len);
	struct nfs3c_stats st;
	size_t got;

	fx_restart(f); /* a new write verifier */
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
void test_overlapping_records(void **state)
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

void test_retransmit_tcp(void **state)
{
	retransmit_on(NFS3C_PROTO_TCP);
}

void test_retransmit_rdma(void **state)
{
	retransmit_on(NFS3C_PROTO_RDMA);
}

/* Resend over TCP. */
void test_resend_tcp(void **state)
{
	resend_on(NFS3C_PROTO_TCP);
}

/* Resend over RPC/RDMA. */
void test_resend_rdma(void **state)
{
	resend_on(NFS3C_PROTO_RDMA);
}

/* A later WRITE that sees the new verifier rewrites the older ones at once,
 * and an overlapping newer write is not undone by that. */
void test_resend_by_write(void **state)
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
	p.wsize = 8192; /* the first write's record is a slot of the slab, resent in two pieces */
	mount_with(f, &p);
	memset(a1, 'a', sizeof(a1));
	memset(b1, 'b', sizeof(b1));
	assert_int_equal(nfs3c_create(f->c, NULL, nfs3c_root(f->c), "f", 0644, 0, &fh, &a), 0);
	assert_non_null(wf = nfs3c_file_get(f->c, &fh));
	assert_int_equal(nfs3c_write(f->c, NULL, wf, 0, a1, sizeof(a1), UNSTABLE), 0);
	fx_restart(f);
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
void test_survive_restart(void **state)
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
void test_soft_gives_up(void **state)
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
void test_soft_gives_up_on_slow_server(void **state)
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
