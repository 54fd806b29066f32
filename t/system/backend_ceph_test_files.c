/*
 * backend_ceph_test_files.c: the files a CephFS export keeps open between
 * READs and WRITEs (server/backend_ceph_files.c): what the server opens as
 * itself stays open and is used again, one per inode and mode; a caller who
 * opens as themselves does not leave one; REMOVE and RENAME over a file close
 * it at once, and an idle one closes within a few seconds. And the files
 * the lock manager opens (server/backend_ceph_lock.c): the identity it
 * finds their locks by.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cmocka.h>

#include "server/backend_ceph.h"
#include "server/backend_int.h"
#include "server/backend_lock.h"
#include "t/unit/nfs3_testlib.h"
#include "backend_ceph_test.h"

/* The files the test's export holds open. */
static size_t open_files(struct tenv *t)
{
	return ce_files_count(t->be->exports[0].priv);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void open_files_kept(void **state)
{
	struct cenv *c = *state;
	struct tenv *t = &c->t;
	char back[16];
	nfs_fh3 f, g, h;
	size_t got;
	double t0;

	assert_int_equal(open_files(t), 0);
	assert_int_equal(t_create(t, &c->dir, "f", 0644, &f), NFS3_OK);
	/* the owner's WRITEs share one open file, READs another */
	assert_int_equal(t_write(t, &f, 0, "0123456789", 10, UNSTABLE), NFS3_OK);
	assert_int_equal(open_files(t), 1);
	assert_int_equal(t_write(t, &f, 10, "abcdef", 6, UNSTABLE), NFS3_OK);
	assert_int_equal(open_files(t), 1);
	assert_int_equal(t_read(t, &f, 0, back, sizeof(back), &got), NFS3_OK);
	assert_int_equal(got, 16);
	assert_memory_equal(back, "0123456789abcdef", 16);
	assert_int_equal(open_files(t), 2);
	/* someone else opens as themselves, for the call alone */
	assert_int_equal(t_create(t, &c->dir, "g", 0666, &g), NFS3_OK);
	t->req.cred.uid = t->req.cred.gid = 1000;
	assert_int_equal(t_write(t, &g, 0, "user", 4, FILE_SYNC), NFS3_OK);
	assert_int_equal(t_read(t, &g, 0, back, 4, &got), NFS3_OK);
	assert_memory_equal(back, "user", 4);
	t->req.cred.uid = t->req.cred.gid = 0;
	assert_int_equal(open_files(t), 2);
	/* a REMOVE closes the removed file's, both modes */
	assert_int_equal(t_remove(t, &c->dir, "f"), NFS3_OK);
	assert_int_equal(open_files(t), 0);
	/* so does a RENAME over it, not a RENAME of it */
	assert_int_equal(t_create(t, &c->dir, "h", 0644, &h), NFS3_OK);
	assert_int_equal(t_write(t, &h, 0, "h", 1, UNSTABLE), NFS3_OK);
	assert_int_equal(t_write(t, &g, 0, "g", 1, UNSTABLE), NFS3_OK);
	assert_int_equal(open_files(t), 2);
	assert_int_equal(t_rename(t, &c->dir, "h", "h2"), NFS3_OK);
	assert_int_equal(open_files(t), 2);
	assert_int_equal(t_rename(t, &c->dir, "g", "h2"), NFS3_OK);
	assert_int_equal(open_files(t), 1);
	assert_int_equal(t_read(t, &g, 0, back, 4, &got), NFS3_OK);
	assert_memory_equal(back, "gser", 4);
	/* an idle one closes after two seconds (the sweeper looks every second) */
	assert_int_equal(open_files(t), 2);
	t0 = now_s();
	while (open_files(t) > 0 && now_s() - t0 < 10)
		usleep(50000);
	assert_int_equal(open_files(t), 0);
	assert_true(now_s() - t0 >= 1.5);
	fh_free(&f);
	fh_free(&g);
	fh_free(&h);
}

/* The identity the lock manager finds a CephFS file's locks by: the same
 * for every open of one file, another inode for another file, and a device
 * no local file system has (a POSIX export's files are never mistaken for
 * it; before, every CephFS file had device 0). Who may open one: its owner,
 * whatever its mode, or a caller who may read it. */
void lock_identity(void **state)
{
	struct cenv *c = *state;
	struct tenv *t = &c->t;
	struct nfs_lock_file a1, a2, b, p;
	nfs_fh3 fa, fb, fp, fo;
	SETATTR3args sa;
	SETATTR3res sr;
	struct stat st;

	assert_int_equal(t_create(t, &c->dir, "la", 0644, &fa), NFS3_OK);
	assert_int_equal(t_create(t, &c->dir, "lb", 0644, &fb), NFS3_OK);
	assert_int_equal(ce_open_locked(&t->req, &fa, 1, &a1), 0);
	assert_int_equal(ce_open_locked(&t->req, &fa, 1, &a2), 0);
	assert_int_equal(ce_open_locked(&t->req, &fb, 1, &b), 0);
	assert_true(a1.dev == a2.dev && a1.ino == a2.ino);
	assert_true(b.dev == a1.dev && b.ino != a1.ino);
	assert_int_equal(stat("/", &st), 0);
	assert_true(a1.dev != 0 && a1.dev != st.st_dev);
	assert_true(major(a1.dev) > 4095); /* beyond Linux's 12-bit majors */
	a1.ops->close(&a1);
	a2.ops->close(&a2);
	b.ops->close(&b);
	assert_int_equal(t_create(t, &c->dir, "lp", 0600, &fp), NFS3_OK);
	t->req.cred.uid = t->req.cred.gid = 1000;
	assert_int_equal(ce_open_locked(&t->req, &fp, 1, &p), -EACCES);
	assert_int_equal(ce_open_locked(&t->req, &fa, 1, &p), 0); /* 0644: may read */
	p.ops->close(&p);
	t->req.cred.uid = t->req.cred.gid = 0;
	assert_int_equal(t_create(t, &c->dir, "lo", 0, &fo), NFS3_OK);
	memset(&sa, 0, sizeof(sa));
	sa.object = fo;
	sa.new_attributes.uid.set_it = TRUE;
	sa.new_attributes.uid.set_uid3_u.uid = 1000;
	tcall(t, NFSPROC3_SETATTR, &sa, &sr);
	assert_int_equal(sr.status, NFS3_OK);
	tfree(NFSPROC3_SETATTR, &sr);
	t->req.cred.uid = t->req.cred.gid = 1000;
	assert_int_equal(ce_open_locked(&t->req, &fo, 1, &p), 0); /* its own, mode 0 */
	p.ops->close(&p);
	t->req.cred.uid = t->req.cred.gid = 0;
	fh_free(&fa);
	fh_free(&fb);
	fh_free(&fp);
	fh_free(&fo);
}
