/*
 * client_nfs3_test_ordma.c: Optimistic RDMA (issue 23) between the client
 * library and the in-process server with a cache: READs of cached blocks
 * become RDMA Reads with the very bytes of the file; a block another client
 * rewrites is never read old (noac); a slot that now holds another file's
 * block, and a server restarted under the client's references, give misses
 * and the right bytes, never an error; a block rewritten on the server's
 * disk behind its back is refused by its change attribute; a server without
 * the cache exposes
 * nothing and the client reads with READ alone.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include <sys/stat.h>

#include "server/ordma_cache.h"
#include "client_nfs3_test.h"

#define BLK	    4096u
#define MAP_WAIT_US 250000 /* past the client's MAP_AGAIN_MS */

/* A server whose export has ordma, with a cache of `cache` bytes. */
static struct fx *fx_ordma(uint64_t cache)
{
	struct fx *f = fx_alloc();

	f->sp.ordma_cache = cache;
	assert_int_equal(csrv_start(&f->srv, &f->sp), 0);
	return f;
}

/* A second client of f's export (ordma or not, noac or not). */
static struct nfs3c *second(struct fx *f, int ordma, int noac)
{
	struct nfs3c_params p;
	struct nfs3c *c;
	char err[256];

	params(f, &p, NFS3C_PROTO_RDMA, RR_MODE_READ_WRITE, RR_REG_ZEROCOPY);
	p.ordma = ordma;
	p.noac = noac;
	if (nfs3c_mount(&p, &c, err, sizeof(err)) != 0)
		fail_msg("mount: %s", err);
	return c;
}

/* Make `name` of nblocks blocks of pattern seed through c. */
static void make_file(struct nfs3c *c, const char *name, unsigned nblocks, unsigned seed,
		      struct nfs3c_fh *fh)
{
	uint8_t *w = malloc(nblocks * BLK);
	struct nfs3c_file *wf;
	fattr3 a;

	pattern(w, nblocks * BLK, seed);
	assert_int_equal(nfs3c_create(c, NULL, nfs3c_root(c), name, 0644, 0, fh, &a), 0);
	assert_non_null(wf = nfs3c_file_get(c, fh));
	assert_int_equal(nfs3c_write(c, NULL, wf, 0, w, nblocks * BLK, FILE_SYNC), 0);
	assert_int_equal(nfs3c_file_put(c, wf, NULL), 0);
	free(w);
}

/* Read every block of the file one by one and compare with pattern seed
 * (block `seed2_block`, if < nblocks, with pattern seed2). */
static void read_blocks(struct nfs3c *c, const struct nfs3c_fh *fh, unsigned nblocks, unsigned seed,
			unsigned seed2_block, unsigned seed2)
{
	uint8_t *want = malloc(nblocks * BLK), buf[BLK], one[BLK];
	size_t got;
	int eof;

	pattern(want, nblocks * BLK, seed);
	if (seed2_block < nblocks) {
		pattern(one, BLK, seed2);
		memcpy(want + seed2_block * BLK, one, BLK);
	}
	for (unsigned i = 0; i < nblocks; i++) {
		assert_int_equal(nfs3c_read(c, NULL, fh, (uint64_t)i * BLK, buf, BLK, &got, &eof),
				 0);
		assert_int_equal(got, BLK);
		assert_int_equal(eof, i + 1 == nblocks);
		assert_memory_equal(buf, want + i * BLK, BLK);
	}
	free(want);
}

/* Read the file until a pass is all hits (the client learns references
 * after a miss, a region at a time, at most every MAP_AGAIN_MS; on a busy
 * machine a MAP's answer may come after the next pass began): how many
 * passes it took, of at most WARM_PASSES. */
#define WARM_PASSES 40
static unsigned warm(struct nfs3c *c, const struct nfs3c_fh *fh, unsigned nblocks, unsigned seed)
{
	struct nfs3c_stats a, b;

	nfs3c_get_stats(c, &b);
	for (unsigned pass = 1; pass <= WARM_PASSES; pass++) {
		a = b;
		read_blocks(c, fh, nblocks, seed, nblocks, 0);
		nfs3c_get_stats(c, &b);
		if (b.ordma_hits - a.ordma_hits == nblocks)
			return pass;
		usleep(MAP_WAIT_US);
	}
	fail_msg(
		"no pass of %u blocks was all hits in %u (last: %llu hits; misses: no reference "
		"%llu, torn %llu, other %llu, stale %llu)",
		nblocks, WARM_PASSES, (unsigned long long)(b.ordma_hits - a.ordma_hits),
		(unsigned long long)(b.ordma_miss[NFS3C_ORDMA_NOREF] -
				     a.ordma_miss[NFS3C_ORDMA_NOREF]),
		(unsigned long long)(b.ordma_miss[ORDMA_MISS_TORN] - a.ordma_miss[ORDMA_MISS_TORN]),
		(unsigned long long)(b.ordma_miss[ORDMA_MISS_OTHER] -
				     a.ordma_miss[ORDMA_MISS_OTHER]),
		(unsigned long long)(b.ordma_miss[ORDMA_MISS_STALE] -
				     a.ordma_miss[ORDMA_MISS_STALE]));
	return 0;
}

/* Cached blocks are read by RDMA, byte for byte. */
void test_ordma_hits(void **state)
{
	struct fx *f = fx_ordma(1u << 20);
	struct nfs3c_params p;
	struct nfs3c_stats st;
	struct ordma_cache_stats ss;
	struct nfs3c_fh fh;

	params(f, &p, NFS3C_PROTO_RDMA, RR_MODE_READ_WRITE, RR_REG_ZEROCOPY);
	p.ordma = 1;
	mount_with(f, &p);
	make_file(f->c, "f", 16, 7, &fh);
	assert_true(warm(f->c, &fh, 16, 7) >= 2); /* the first pass cannot hit */
	nfs3c_get_stats(f->c, &st);
	assert_true(st.ordma_hits >= 16);
	assert_true(st.ordma_maps >= 1);
	nfs_backend_ordma_stats(f->srv.be, &ss);
	assert_true(ss.fills >= 16);
	assert_true(ss.refs >= 16);
	fx_free(f);
}

/* A block another client rewrote is read new by a noac client, never old. */
void test_ordma_sees_other_writer(void **state)
{
	struct fx *f = fx_ordma(1u << 20);
	struct nfs3c *b;
	struct nfs3c_file *wf;
	struct nfs3c_stats s0, s1;
	struct nfs3c_fh fh;
	uint8_t fresh[BLK];

	f->c = second(f, 1, 1);
	b = second(f, 0, 1);
	make_file(b, "f", 8, 11, &fh);
	warm(f->c, &fh, 8, 11);
	pattern(fresh, BLK, 99);
	assert_non_null(wf = nfs3c_file_get(b, &fh));
	assert_int_equal(nfs3c_write(b, NULL, wf, 5 * BLK, fresh, BLK, FILE_SYNC), 0);
	assert_int_equal(nfs3c_file_put(b, wf, NULL), 0);
	nfs3c_get_stats(f->c, &s0);
	read_blocks(f->c, &fh, 8, 11, 5, 99);
	nfs3c_get_stats(f->c, &s1);
	/* the write moved the file's ctime: what the slots hold is older */
	assert_true(s1.ordma_miss[ORDMA_MISS_STALE] + s1.ordma_miss[ORDMA_MISS_OTHER] +
			    s1.ordma_miss[NFS3C_ORDMA_NOREF] >
		    s0.ordma_miss[ORDMA_MISS_STALE] + s0.ordma_miss[ORDMA_MISS_OTHER] +
			    s0.ordma_miss[NFS3C_ORDMA_NOREF]);
	nfs3c_unmount(b);
	fx_free(f);
}

/* A block rewritten on the server's disk behind the server's back stays in
 * its slot, but the file's ctime moved: a noac client refuses it (STALE). */
void test_ordma_change_attribute(void **state)
{
	struct fx *f = fx_ordma(1u << 20);
	struct nfs3c_stats s0, s1;
	struct nfs3c_fh fh;
	uint8_t fresh[BLK];
	int fd;

	f->c = second(f, 1, 1);
	make_file(f->c, "f", 8, 51, &fh);
	warm(f->c, &fh, 8, 51);
	pattern(fresh, BLK, 52);
	fd = open(path_in(f, "f"), O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, fresh, BLK, 6 * BLK), BLK);
	close(fd);
	nfs3c_get_stats(f->c, &s0);
	read_blocks(f->c, &fh, 8, 51, 6, 52);
	nfs3c_get_stats(f->c, &s1);
	assert_true(s1.ordma_miss[ORDMA_MISS_STALE] > s0.ordma_miss[ORDMA_MISS_STALE]);
	fx_free(f);
}

/* A slot now holding another file's block is a miss with the right bytes. */
void test_ordma_slot_reused(void **state)
{
	struct fx *f = fx_ordma(4 * ordma_slot_size(BLK));
	struct nfs3c_stats s0, s1;
	struct nfs3c_fh x, y;

	f->c = second(f, 1, 0);
	make_file(f->c, "x", 4, 21, &x);
	make_file(f->c, "y", 8, 22, &y);
	warm(f->c, &x, 4, 21);
	read_blocks(f->c, &y, 8, 22, 8, 0); /* y's blocks push x's out */
	nfs3c_get_stats(f->c, &s0);
	read_blocks(f->c, &x, 4, 21, 4, 0);
	nfs3c_get_stats(f->c, &s1);
	assert_true(s1.ordma_miss[ORDMA_MISS_OTHER] > s0.ordma_miss[ORDMA_MISS_OTHER]);
	fx_free(f);
}

/* References from before a server restart are not used on the new
 * connection: misses, the right bytes, no error; then hits again. */
void test_ordma_server_restart(void **state)
{
	struct fx *f = fx_ordma(1u << 20);
	struct nfs3c_stats st;
	struct nfs3c_fh fh;
	f->c = second(f, 1, 0);
	make_file(f->c, "f", 8, 31, &fh);
	warm(f->c, &fh, 8, 31);
	fx_restart(f);
	read_blocks(f->c, &fh, 8, 31, 8, 0);
	usleep(MAP_WAIT_US);
	warm(f->c, &fh, 8, 31);
	nfs3c_get_stats(f->c, &st);
	assert_true(st.reconnects >= 2);
	fx_free(f);
}

/* References are the credential's that MAPped them: another user of the
 * same mount never reads a block by RDMA that the server would not let it
 * READ (its READ is refused, its RDMA Reads never tried). */
void test_ordma_other_user(void **state)
{
	struct rpc_cred owner = {.flavor = 1, .uid = 1000, .gid = 1000},
			other = {.flavor = 1, .uid = 2000, .gid = 2000};
	struct fx *f = fx_ordma(1u << 20);
	struct nfs3c_stats s0, s1;
	struct nfs3c_file *wf;
	struct nfs3c_fh fh;
	uint8_t w[4 * BLK], buf[BLK];
	size_t got;
	fattr3 a;
	int eof;

	if (geteuid() != 0)
		skip();
	chmod(f->dir, 0777);
	f->c = second(f, 1, 0);
	pattern(w, sizeof(w), 61);
	assert_int_equal(nfs3c_create(f->c, &owner, nfs3c_root(f->c), "mine", 0600, 0, &fh, &a), 0);
	assert_non_null(wf = nfs3c_file_get(f->c, &fh));
	assert_int_equal(nfs3c_write(f->c, &owner, wf, 0, w, sizeof(w), FILE_SYNC), 0);
	assert_int_equal(nfs3c_file_put(f->c, wf, &owner), 0);
	memset(&s0, 0, sizeof(s0));
	for (int pass = 0; pass < WARM_PASSES && s0.ordma_hits == 0; pass++) {
		for (unsigned i = 0; i < 4; i++)
			assert_int_equal(nfs3c_read(f->c, &owner, &fh, (uint64_t)i * BLK, buf, BLK,
						    &got, &eof),
					 0);
		usleep(MAP_WAIT_US);
		nfs3c_get_stats(f->c, &s0);
	}
	assert_true(s0.ordma_hits > 0);
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(
			nfs3c_read(f->c, &other, &fh, (uint64_t)i * BLK, buf, BLK, &got, &eof),
			-EACCES);
	nfs3c_get_stats(f->c, &s1);
	assert_int_equal(s1.ordma_hits, s0.ordma_hits);
	fx_free(f);
}

/* Without ordma on the export: no cache, nothing exposed, READ alone. */
void test_ordma_not_offered(void **state)
{
	struct fx *f = fx_new();
	struct ordma_cache_stats ss;
	struct nfs3c_stats st;
	struct nfs3c_fh fh;

	f->c = second(f, 1, 0);
	make_file(f->c, "f", 4, 41, &fh);
	for (int i = 0; i < 3; i++) {
		read_blocks(f->c, &fh, 4, 41, 4, 0);
		usleep(MAP_WAIT_US);
	}
	nfs3c_get_stats(f->c, &st);
	assert_int_equal(st.ordma_hits, 0);
	assert_true(st.ordma_maps >= 1);
	nfs_backend_ordma_stats(f->srv.be, &ss);
	assert_int_equal(ss.slots, 0);
	fx_free(f);
}
