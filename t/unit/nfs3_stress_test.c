/*
 * nfs3_stress_test: several threads WRITE to different files at once through
 * one backend (content checked byte for byte, with a small fd cache so
 * entries are evicted under the writers); READDIR and READDIRPLUS over a
 * directory of 1000 entries in small chunks return every entry exactly once.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "t/unit/nfs3_testlib.h"

#define NTHREADS 4
#define NFILES	 6 /* per thread */
#define CHUNK	 4096
#define NCHUNKS	 32
#define NENTRIES 1000

struct writer {
	struct tenv *t;
	int id;
	nfs_fh3 fh[NFILES];
	int failures;
};

/* The byte at offset off of file f of writer w. */
static unsigned char pattern(int w, int f, size_t off)
{
	return (unsigned char)(w * 31 + f * 7 + off * 13 + off / 4096);
}

/* One writer thread: interleave chunks over its files, each via its own
 * nfs_req (as worker threads each have one) as the files' owner, mixing
 * stability levels. No cmocka asserts here: they cannot leave a thread. */
static void *writer_main(void *arg)
{
	struct writer *w = arg;
	struct nfs_req req = w->t->req;
	unsigned char buf[CHUNK];
	WRITE3args a;
	WRITE3res r;

	req.cred.uid = req.cred.gid = (uint32_t)(1000 + w->id);
	for (int c = 0; c < NCHUNKS; c++)
		for (int f = 0; f < NFILES; f++) {
			for (size_t i = 0; i < CHUNK; i++)
				buf[i] = pattern(w->id, f, (size_t)c * CHUNK + i);
			memset(&a, 0, sizeof(a));
			a.file = w->fh[f];
			a.offset = (uint64_t)c * CHUNK;
			a.count = CHUNK;
			a.stable = (stable_how)((c + f) % 3);
			a.data.data_len = CHUNK;
			a.data.data_val = (char *)buf;
			memset(&r, 0, sizeof(r));
			nfs3_procs[NFSPROC3_WRITE].fn(&req, &a, &r);
			if (r.status != NFS3_OK || r.WRITE3res_u.resok.count != CHUNK)
				w->failures++;
			nfs_proc_free_res(&nfs3_procs[NFSPROC3_WRITE], &req, &r);
		}
	return NULL;
}

/* Check file f of writer w on disk. */
static void check_file(struct tenv *t, int w, int f)
{
	char name[32];
	unsigned char *buf = malloc(CHUNK * NCHUNKS + 1);
	int fd;

	snprintf(name, sizeof(name), "w%d-%d", w, f);
	fd = open(tpath(t, name), O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, CHUNK * NCHUNKS + 1), CHUNK * NCHUNKS);
	close(fd);
	for (size_t i = 0; i < CHUNK * NCHUNKS; i++)
		if (buf[i] != pattern(w, f, i))
			fail_msg("%s: byte %zu is %u, not %u", name, i, buf[i], pattern(w, f, i));
	free(buf);
}

/* Several threads write their own files at once; every byte is checked. */
static void concurrent_writes(void **state)
{
	struct writer w[NTHREADS];
	pthread_t th[NTHREADS];
	struct rlimit saved, low;
	struct tenv t;
	char name[32];

	/* a low fd limit makes the fd cache small (a quarter of it): evictions */
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
	low = saved;
	low.rlim_cur = 64;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	tenv_init(&t);
	assert_int_equal(tenv_start(&t), 0);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);
	assert_int_equal(chmod(t.dir, 0777), 0);
	for (int i = 0; i < NTHREADS; i++) {
		w[i].t = &t;
		w[i].id = i;
		w[i].failures = 0;
		for (int f = 0; f < NFILES; f++) {
			snprintf(name, sizeof(name), "w%d-%d", i, f);
			assert_int_equal(t_create(&t, &t.root, name, 0600, &w[i].fh[f]), NFS3_OK);
			if (geteuid() == 0)
				assert_int_equal(chown(tpath(&t, name), 1000 + i, 1000 + i), 0);
		}
	}
	for (int i = 0; i < NTHREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, writer_main, &w[i]), 0);
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(w[i].failures, 0);
	}
	for (int i = 0; i < NTHREADS; i++)
		for (int f = 0; f < NFILES; f++) {
			check_file(&t, i, f);
			fh_free(&w[i].fh[f]);
		}
	tenv_fini(&t);
}

/* Make NENTRIES files e0000.. in the export root. */
static void make_entries(struct tenv *t)
{
	char name[64];

	for (int i = 0; i < NENTRIES; i++) {
		snprintf(name, sizeof(name), "e%04d-%.*s", i, i % 40,
			 "padding-to-vary-name-lengths-a-bit-more");
		int fd = open(tpath(t, name), O_CREAT | O_WRONLY, 0644);
		assert_true(fd >= 0);
		close(fd);
	}
}

/* Count one name into seen[]; fails on a duplicate. */
static void see(unsigned char *seen, const char *name, int *dots)
{
	int i;

	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
		(*dots)++;
		return;
	}
	assert_int_equal(sscanf(name, "e%4d", &i), 1);
	assert_in_range(i, 0, NENTRIES - 1);
	if (seen[i]++)
		fail_msg("entry %s returned twice", name);
}

/* READDIR of 1000 entries in 1 KiB chunks returns each exactly once. */
static void readdir_1000_in_chunks(void **state)
{
	unsigned char seen[NENTRIES] = {0};
	struct tenv t;
	READDIR3args a;
	READDIR3res r;
	int calls = 0, dots = 0, eof = 0;

	tenv_init(&t);
	assert_int_equal(tenv_start(&t), 0);
	make_entries(&t);
	memset(&a, 0, sizeof(a));
	a.dir = t.root;
	a.count = 1024;
	while (!eof) {
		tcall(&t, NFSPROC3_READDIR, &a, &r);
		assert_int_equal(r.status, NFS3_OK);
		assert_true(++calls < 1000);
		for (entry3 *e = r.READDIR3res_u.resok.reply.entries; e; e = e->nextentry) {
			see(seen, e->name, &dots);
			a.cookie = e->cookie;
		}
		memcpy(a.cookieverf, r.READDIR3res_u.resok.cookieverf, NFS3_COOKIEVERFSIZE);
		eof = r.READDIR3res_u.resok.reply.eof;
		tfree(NFSPROC3_READDIR, &r);
	}
	for (int i = 0; i < NENTRIES; i++)
		if (!seen[i])
			fail_msg("entry %d never returned", i);
	assert_int_equal(dots, 2);
	assert_true(calls > 10); /* it really was chunked */
	tenv_fini(&t);
}

/* READDIRPLUS of 1000 entries in small chunks returns each exactly once. */
static void readdirplus_1000_in_chunks(void **state)
{
	unsigned char seen[NENTRIES] = {0};
	struct tenv t;
	READDIRPLUS3args a;
	READDIRPLUS3res r;
	int calls = 0, dots = 0, eof = 0;

	tenv_init(&t);
	assert_int_equal(tenv_start(&t), 0);
	make_entries(&t);
	memset(&a, 0, sizeof(a));
	a.dir = t.root;
	a.dircount = 512;
	a.maxcount = 4096;
	while (!eof) {
		tcall(&t, NFSPROC3_READDIRPLUS, &a, &r);
		assert_int_equal(r.status, NFS3_OK);
		assert_true(++calls < 2000);
		for (entryplus3 *e = r.READDIRPLUS3res_u.resok.reply.entries; e; e = e->nextentry) {
			see(seen, e->name, &dots);
			assert_true(e->name_handle.handle_follows);
			a.cookie = e->cookie;
		}
		eof = r.READDIRPLUS3res_u.resok.reply.eof;
		tfree(NFSPROC3_READDIRPLUS, &r);
	}
	for (int i = 0; i < NENTRIES; i++)
		if (!seen[i])
			fail_msg("entry %d never returned", i);
	assert_int_equal(dots, 2);
	assert_true(calls > 10);
	tenv_fini(&t);
}

/* Run the group (TAP output when CMOCKA_MESSAGE_OUTPUT=TAP). */
int main(void)
{
	tenv_require_root();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(concurrent_writes),
		cmocka_unit_test(readdir_1000_in_chunks),
		cmocka_unit_test(readdirplus_1000_in_chunks),
	};
	return cmocka_run_group_tests_name("nfs3_stress", tests, NULL, NULL);
}
