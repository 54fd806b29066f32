/*
 * client_nfs3_test_ops.c: data both ways over TCP and over RPC/RDMA in both
 * modes with every client registration strategy, every procedure, a directory
 * longer than one reply, the attribute cache (attributes never go back in
 * time, long names) and several writers on one file.
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
#include "client/nfs3_clnt_int.h" /* nfs3c_attr_update, NFS3C_ATTR_* */
#include "t/system/client_srv.h"
#include "client_nfs3_test.h"

/* ---- data over every transport combination ---- */

/* Unstable writes of wsize go from the buffers that keep them until COMMIT,
 * not copied again, where the strategy has an arena (fastreg, allphys); with
 * fastreg in Read-Write mode the server places READs into a slot of
 * nfs3c_iobuf_get itself; the data arrives whole either way, and a slot
 * taken and given back leaves the spares as they were. */
static void whole_writes(struct fx *f, enum nfs3c_proto proto, unsigned mode, enum rr_reg reg)
{
	int in_place =
		proto == NFS3C_PROTO_RDMA && (reg == RR_REG_FASTREG || reg == RR_REG_ALLPHYS);
	uint32_t ws = nfs3c_wsize(f->c);
	size_t len = 4 * (size_t)ws, got = 0;
	uint8_t *w = malloc(len), *r = malloc(len);
	struct rr_stats st0 = {0}, st = {0};
	struct nfs3c_stats ns0, ns;
	struct nfs3c_file *wf;
	struct nfs3c_fh fh;
	fattr3 a;
	int eof = 0;

	pattern(w, len, 3);
	assert_int_equal(nfs3c_create(f->c, NULL, nfs3c_root(f->c), "whole", 0644, 0, &fh, &a), 0);
	assert_non_null(wf = nfs3c_file_get(f->c, &fh));
	if (proto == NFS3C_PROTO_RDMA)
		nfs3c_get_xprt_stats(f->c, &st0);
	for (size_t off = 0; off < len; off += ws)
		assert_int_equal(nfs3c_write(f->c, NULL, wf, off, w + off, ws, UNSTABLE), 0);
	if (proto == NFS3C_PROTO_RDMA)
		nfs3c_get_xprt_stats(f->c, &st);
	assert_int_equal(nfs3c_file_put(f->c, wf, NULL), 0); /* commits */
	assert_int_equal(nfs3c_read(f->c, NULL, &fh, 0, r, len, &got, &eof), 0);
	assert_int_equal(got, len);
	assert_memory_equal(r, w, len);
	assert_int_equal(st.bytes_in_place - st0.bytes_in_place, in_place ? len : 0);

	/* a READ into a slot: placed there (the malloc'd r above was not) */
	free(r);
	nfs3c_get_stats(f->c, &ns0);
	assert_non_null(r = nfs3c_iobuf_get(f->c, ws));
	nfs3c_get_stats(f->c, &ns);
	assert_int_equal(ns0.wbufs_spare - ns.wbufs_spare, ws); /* a free slot */
	memset(r, 0, ws);
	if (proto == NFS3C_PROTO_RDMA)
		nfs3c_get_xprt_stats(f->c, &st0);
	assert_int_equal(nfs3c_read(f->c, NULL, &fh, ws, r, ws, &got, &eof), 0);
	assert_int_equal(got, ws);
	assert_memory_equal(r, w + ws, ws);
	/* and one short at the end of the file: what came counts, not what was asked */
	assert_int_equal(nfs3c_read(f->c, NULL, &fh, len - ws / 2, r, ws, &got, &eof), 0);
	assert_int_equal(got, ws / 2);
	assert_true(eof);
	assert_memory_equal(r, w + len - ws / 2, ws / 2);
	if (proto == NFS3C_PROTO_RDMA) {
		nfs3c_get_xprt_stats(f->c, &st);
		assert_int_equal(st.bytes_in_place - st0.bytes_in_place,
				 reg == RR_REG_FASTREG && mode == RR_MODE_READ_WRITE ? ws + ws / 2
										     : 0);
	}
	nfs3c_iobuf_put(f->c, r);
	nfs3c_get_stats(f->c, &ns);
	assert_int_equal(ns.wbufs_spare, ns0.wbufs_spare);
	/* larger than a slot: malloc's, and still read whole */
	assert_non_null(r = nfs3c_iobuf_get(f->c, len));
	assert_int_equal(nfs3c_read(f->c, NULL, &fh, 0, r, len, &got, &eof), 0);
	assert_int_equal(got, len);
	assert_memory_equal(r, w, len);
	nfs3c_iobuf_put(f->c, r);
	free(w);
}

static void data_matrix_one(enum nfs3c_proto proto, unsigned mode, enum rr_reg reg)
{
	struct fx *f = fx_new();
	struct nfs3c_params p;

	params(f, &p, proto, mode, reg);
	mount_with(f, &p);
	roundtrip(f, "small", 1000, 1);
	roundtrip(f, "big", (3u << 20) + 12345, 2);
	whole_writes(f, proto, mode, reg);
	fx_free(f);
}

/* Data both ways over TCP. */
void test_data_tcp(void **state)
{
	data_matrix_one(NFS3C_PROTO_TCP, RR_MODE_READ_WRITE, RR_REG_ZEROCOPY);
}

/* Data both ways over RPC/RDMA, both modes, every client strategy. */
void test_data_rdma_matrix(void **state)
{
	static const enum rr_reg regs[] = {RR_REG_ZEROCOPY, RR_REG_CACHE, RR_REG_FASTREG,
					   RR_REG_ALLPHYS};

	for (int m = 0; m < 2; m++)
		for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
			data_matrix_one(NFS3C_PROTO_RDMA,
					m ? RR_MODE_READ_READ : RR_MODE_READ_WRITE, regs[i]);
}

/* ---- every procedure ---- */

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
void test_procs_tcp(void **state)
{
	procs_on(NFS3C_PROTO_TCP);
}

/* The procedures over RPC/RDMA. */
void test_procs_rdma(void **state)
{
	procs_on(NFS3C_PROTO_RDMA);
}

/* A directory longer than one READDIRPLUS reply (and an RDMA Reply chunk). */
void test_big_dir(void **state)
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

void test_attr_cache(void **state)
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
	/* unchanged attributes double the timeout only once it has run out: a
	 * burst of replies leaves it at the minimum, not at acregmax */
	p.acregmax = 60;
	mount_with(f, &p);
	for (int i = 0; i < 10; i++)
		assert_int_equal(nfs3c_getattr(f->c, NULL, &fh, NFS3C_NOCACHE, &a), 0);
	assert_in_range(nfs3c_attr_valid_ms(f->c, &fh), 1, 1000);
	usleep(1100000);
	assert_int_equal(nfs3c_getattr(f->c, NULL, &fh, NFS3C_NOCACHE, &a), 0);
	assert_in_range(nfs3c_attr_valid_ms(f->c, &fh), 1001, 2000); /* run out: doubled */
	assert_int_equal(truncate(path_in(f, "f"), 778), 0);
	assert_int_equal(nfs3c_getattr(f->c, NULL, &fh, NFS3C_NOCACHE, &a), 0);
	assert_in_range(nfs3c_attr_valid_ms(f->c, &fh), 1, 1000); /* changed: the minimum */
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
void test_attrs_never_go_back(void **state)
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

/* Fill fh's chain of the attribute cache with other handles, so that fh's
 * entry is the oldest of a full chain and goes. */
static void evict_attrs(struct nfs3c *c, const struct nfs3c_fh *fh)
{
	unsigned bucket = nfs3c_fh_hash(fh) % NFS3C_ATTR_BUCKETS, n = 0;
	fattr3 a = {.type = NF3REG};

	for (uint32_t i = 0; n < NFS3C_ATTR_CHAIN_MAX; i++) {
		struct nfs3c_fh o = {.len = sizeof(i)};

		memcpy(o.data, &i, sizeof(i));
		if (nfs3c_fh_hash(&o) % NFS3C_ATTR_BUCKETS != bucket)
			continue;
		a.fileid = i;
		nfs3c_attr_update(c, __atomic_add_fetch(&c->attr_gen, 1, __ATOMIC_RELAXED), &o, &a);
		n++;
	}
}

/* An entry that a full chain pushes out is forgotten as one found stale is:
 * a READ's reply that was on the way (the size before a truncate) is not
 * cached once the truncate's newer attributes were pushed out. */
void test_attrs_never_go_back_evicted(void **state)
{
	struct fx *f = fx_new_slow(NFSPROC3_READ, 1000, 1);
	struct slow_read sr = {.f = f};
	sattr3 sa = {0};
	struct nfs3c_params p;
	pthread_t t;
	fattr3 a;

	params(f, &p, NFS3C_PROTO_TCP, RR_MODE_READ_WRITE, RR_REG_ZEROCOPY);
	p.acregmin = p.acregmax = 60;
	mount_with(f, &p);
	assert_int_equal(nfs3c_create(f->c, NULL, nfs3c_root(f->c), "f", 0644, 0, &sr.fh, &a), 0);
	assert_int_equal(truncate(path_in(f, "f"), 1000), 0);
	assert_int_equal(nfs3c_getattr(f->c, NULL, &sr.fh, NFS3C_NOCACHE, &a), 0);
	assert_int_equal(pthread_create(&t, NULL, slow_read_main, &sr), 0);
	usleep(300000); /* the READ has run; its reply waits */
	sa.size.set_it = TRUE;
	sa.size.set_size3_u.size = 10;
	assert_int_equal(nfs3c_setattr(f->c, NULL, &sr.fh, &sa, &a), 0);
	evict_attrs(f->c, &sr.fh);
	assert_int_equal(nfs3c_attr_lookup(f->c, &sr.fh, &a), -ENOENT);
	pthread_join(t, NULL);
	assert_int_equal(sr.rc, 0);
	assert_int_equal(nfs3c_getattr(f->c, NULL, &sr.fh, 0, &a), 0);
	assert_int_equal(a.size, 10);
	fx_free(f);
}

/* A WRITE that extends the file, in a thread. */
struct slow_write {
	struct fx *f;
	struct nfs3c_file *wf;
	int rc;
};

static void *slow_write_main(void *arg)
{
	struct slow_write *sw = arg;
	uint8_t buf[4000];

	memset(buf, 'w', sizeof(buf));
	sw->rc = nfs3c_write(sw->f->c, NULL, sw->wf, 1000, buf, sizeof(buf), UNSTABLE);
	return NULL;
}

/* Calls on the way together run in either order on the server: a WRITE is
 * sent first but runs late, a READ sent after it runs at once and its reply
 * (the size before the WRITE) comes first; the WRITE's reply, though its call
 * is older, is newer by the server's change time, and the cache takes it. */
void test_attrs_ordered_by_ctime(void **state)
{
	struct fx *f = fx_new_slow(NFSPROC3_WRITE, 500, 0);
	struct slow_write sw = {.f = f};
	struct nfs3c_params p;
	struct nfs3c_fh fh;
	uint8_t buf[100];
	size_t got = 0;
	pthread_t t;
	int eof = 0;
	fattr3 a;

	params(f, &p, NFS3C_PROTO_TCP, RR_MODE_READ_WRITE, RR_REG_ZEROCOPY);
	p.acregmin = p.acregmax = 60;
	mount_with(f, &p);
	assert_int_equal(nfs3c_create(f->c, NULL, nfs3c_root(f->c), "f", 0644, 0, &fh, &a), 0);
	assert_int_equal(truncate(path_in(f, "f"), 1000), 0);
	assert_int_equal(nfs3c_getattr(f->c, NULL, &fh, NFS3C_NOCACHE, &a), 0);
	assert_non_null(sw.wf = nfs3c_file_get(f->c, &fh));
	assert_int_equal(pthread_create(&t, NULL, slow_write_main, &sw), 0);
	usleep(200000); /* the WRITE waits on the server */
	assert_int_equal(nfs3c_read(f->c, NULL, &fh, 0, buf, sizeof(buf), &got, &eof), 0);
	assert_int_equal(nfs3c_getattr(f->c, NULL, &fh, 0, &a), 0);
	assert_int_equal(a.size, 1000); /* the READ ran before the WRITE */
	pthread_join(t, NULL);
	assert_int_equal(sw.rc, 0);
	assert_int_equal(nfs3c_getattr(f->c, NULL, &fh, 0, &a), 0);
	assert_int_equal(a.size, 5000);
	assert_int_equal(nfs3c_file_put(f->c, sw.wf, NULL), 0);
	fx_free(f);
}

/* Names NFSv3 cannot carry are ENAMETOOLONG, said by the client before it
 * sends anything (not ENOSPC from an encoder); the longest that fit work. */
void test_long_names(void **state)
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
void test_concurrent_writers(void **state)
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
