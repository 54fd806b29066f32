/*
 * backend_ceph_test_snap.c: snapshots of an export whose root is a directory
 * below the CephFS root, made by the cluster's admin (CEPH_ADMIN_KEYRING:
 * the test's own client may not make them).
 * Part of t/system/backend_ceph_test (see backend_ceph_test.c).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cephfs/libcephfs.h>

#include "t/unit/nfs3_testlib.h"
#include "backend_ceph_test.h"

/* mkdir path as the cluster's admin (a snapshot, under a .snap): 0 or -errno. */
static int admin_mkdir(const char *path)
{
	struct ceph_mount_info *cm;
	int r;

	if ((r = ceph_create(&cm, "admin")) < 0)
		return r;
	if ((r = ceph_conf_read_file(cm, getenv("CEPH_CONF"))) == 0 &&
	    (r = ceph_conf_set(cm, "keyring", getenv("CEPH_ADMIN_KEYRING"))) == 0 &&
	    (r = ceph_mount(cm, "/")) == 0)
		r = ceph_mkdir(cm, path, 0755);
	ceph_release(cm); /* unmounts */
	return r;
}

static void assert_same_fh(const nfs_fh3 *a, const nfs_fh3 *b)
{
	assert_int_equal(a->data.data_len, b->data.data_len);
	assert_memory_equal(a->data.data_val, b->data.data_val, a->data.data_len);
}

/* dir/.. by LOOKUP and as READDIRPLUS lists it: both are want. */
static void dotdot_is(struct tenv *t, const nfs_fh3 *dir, const nfs_fh3 *want)
{
	READDIRPLUS3args a;
	READDIRPLUS3res r;
	nfs_fh3 up;
	int seen = 0;

	assert_int_equal(t_lookup(t, dir, "..", &up), NFS3_OK);
	assert_same_fh(&up, want);
	fh_free(&up);
	memset(&a, 0, sizeof(a));
	a.dir = *dir;
	a.dircount = 4096;
	a.maxcount = 16384;
	tcall(t, NFSPROC3_READDIRPLUS, &a, &r);
	assert_int_equal(r.status, NFS3_OK);
	for (entryplus3 *e = r.READDIRPLUS3res_u.resok.reply.entries; e; e = e->nextentry) {
		if (strcmp(e->name, "..") != 0)
			continue;
		assert_true(e->name_handle.handle_follows);
		assert_same_fh(&e->name_handle.post_op_fh3_u.handle, want);
		seen = 1;
	}
	tfree(NFSPROC3_READDIRPLUS, &r);
	assert_true(seen);
}

/* ".." of the export's root, of its .snap and of a snapshot in it stays in
 * the export: libcephfs answers the CephFS parent of ceph.root for the
 * .snap, and for a snapshot that it has not reached through the .snap (as
 * after a restart, from the handle alone). */
void snapshot_dotdot_stays_inside(void **state)
{
	struct cenv *c = *state;
	struct tenv *t = &c->t;
	char snap[192];
	nfs_fh3 sub, sd, s1, again;

	if (getenv("CEPH_ADMIN_KEYRING") == NULL)
		skip(); /* run through t/system/backend_ceph.sh */
	assert_int_equal(t_mkdir(t, &c->dir, "sub", &sub), NFS3_OK);
	snprintf(c->root, sizeof(c->root), "%s/sub", c->path);
	snprintf(snap, sizeof(snap), "%s/.snap/s1", c->root);
	assert_int_equal(admin_mkdir(snap), 0);
	t->conf.ceph.root = c->root;
	assert_int_equal(tenv_restart(t), 0);

	dotdot_is(t, &t->root, &t->root);
	assert_int_equal(t_lookup(t, &t->root, ".snap", &sd), NFS3_OK);
	dotdot_is(t, &sd, &t->root);
	assert_int_equal(t_lookup(t, &sd, "s1", &s1), NFS3_OK);
	dotdot_is(t, &s1, &sd);

	assert_int_equal(tenv_restart(t), 0); /* the snapshot known by its handle only */
	dotdot_is(t, &s1, &sd);
	dotdot_is(t, &sd, &t->root);
	assert_int_equal(t_lookup(t, &sd, "s1", &again), NFS3_OK);
	assert_same_fh(&again, &s1);
	fh_free(&again);
	fh_free(&s1);
	fh_free(&sd);
	fh_free(&sub);
}
