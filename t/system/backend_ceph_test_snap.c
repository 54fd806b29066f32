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

/* READDIRPLUS of dir (one page, 16 KiB), which succeeds; tfree r. */
static void readdirplus(struct tenv *t, const nfs_fh3 *dir, READDIRPLUS3res *r)
{
	READDIRPLUS3args a;

	memset(&a, 0, sizeof(a));
	a.dir = *dir;
	a.dircount = 4096;
	a.maxcount = 16384;
	tcall(t, NFSPROC3_READDIRPLUS, &a, r);
	assert_int_equal(r->status, NFS3_OK);
}

/* dir/.. by LOOKUP and as READDIRPLUS lists it: both are want. */
static void dotdot_is(struct tenv *t, const nfs_fh3 *dir, const nfs_fh3 *want)
{
	READDIRPLUS3res r;
	nfs_fh3 up;
	int seen = 0;

	assert_int_equal(t_lookup(t, dir, "..", &up), NFS3_OK);
	assert_same_fh(&up, want);
	fh_free(&up);
	readdirplus(t, dir, &r);
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

/* Every entry READDIRPLUS lists in dir (but ".."): its fileid, handle and
 * attributes are what LOOKUP of its name and GETATTR of that handle give;
 * READDIR lists the same fileids. Returns the entries seen. */
static int listing_matches(struct tenv *t, const nfs_fh3 *dir)
{
	READDIRPLUS3res r;
	READDIR3args ra;
	READDIR3res rr;
	int n = 0;

	readdirplus(t, dir, &r);
	assert_true(r.READDIRPLUS3res_u.resok.reply.eof);
	memset(&ra, 0, sizeof(ra));
	ra.dir = *dir;
	ra.count = 4096;
	tcall(t, NFSPROC3_READDIR, &ra, &rr);
	assert_int_equal(rr.status, NFS3_OK);
	for (entryplus3 *e = r.READDIRPLUS3res_u.resok.reply.entries; e; e = e->nextentry) {
		const fattr3 *got = &e->name_attributes.post_op_attr_u.attributes;
		entry3 *p = rr.READDIR3res_u.resok.reply.entries;
		nfs_fh3 fh;
		fattr3 want;

		while (p && strcmp(p->name, e->name) != 0)
			p = p->nextentry;
		assert_non_null(p);			/* READDIR lists it too, */
		assert_int_equal(p->fileid, e->fileid); /* as the same file */
		if (strcmp(e->name, "..") == 0)
			continue; /* (dotdot_is) */
		assert_int_equal(t_lookup(t, dir, e->name, &fh), NFS3_OK);
		assert_true(e->name_handle.handle_follows);
		assert_same_fh(&e->name_handle.post_op_fh3_u.handle, &fh);
		assert_int_equal(t_getattr(t, &fh, &want), NFS3_OK);
		assert_true(e->name_attributes.attributes_follow);
		assert_int_equal(e->fileid, want.fileid);
		assert_int_equal(got->fileid, want.fileid);
		assert_int_equal(got->fsid, want.fsid);
		assert_int_equal(got->type, want.type);
		assert_int_equal(got->mode, want.mode);
		assert_int_equal(got->nlink, want.nlink);
		assert_int_equal(got->uid, want.uid);
		assert_int_equal(got->gid, want.gid);
		assert_int_equal(got->size, want.size);
		assert_int_equal(got->mtime.seconds, want.mtime.seconds);
		assert_int_equal(got->mtime.nseconds, want.mtime.nseconds);
		assert_int_equal(got->ctime.seconds, want.ctime.seconds);
		assert_int_equal(got->ctime.nseconds, want.ctime.nseconds);
		fh_free(&fh);
		n++;
	}
	tfree(NFSPROC3_READDIR, &rr);
	tfree(NFSPROC3_READDIRPLUS, &r);
	return n;
}

/* READDIRPLUS of the .snap and of a snapshot gives each entry the handle and
 * attributes that LOOKUP and GETATTR give it (a snapshot's file is another
 * file than the live one, with its own handle, size and times), and READDIR
 * the same fileids; the live directory too, after the file changed. */
void snapshot_listing_attrs(void **state)
{
	struct cenv *c = *state;
	struct tenv *t = &c->t;
	char snap[192];
	nfs_fh3 sub, f, sd, s1, live;
	fattr3 old, now;

	if (getenv("CEPH_ADMIN_KEYRING") == NULL)
		skip(); /* run through t/system/backend_ceph.sh */
	assert_int_equal(t_mkdir(t, &c->dir, "sub", &sub), NFS3_OK);
	assert_int_equal(t_create(t, &sub, "f", 0640, &f), NFS3_OK);
	assert_int_equal(t_write(t, &f, 0, "snapshot", 8, FILE_SYNC), NFS3_OK);
	snprintf(c->root, sizeof(c->root), "%s/sub", c->path);
	snprintf(snap, sizeof(snap), "%s/.snap/s1", c->root);
	assert_int_equal(admin_mkdir(snap), 0);
	assert_int_equal(t_write(t, &f, 8, " and after", 10, FILE_SYNC), NFS3_OK);
	fh_free(&f);
	t->conf.ceph.root = c->root;
	assert_int_equal(tenv_restart(t), 0);

	assert_int_equal(t_lookup(t, &t->root, ".snap", &sd), NFS3_OK);
	assert_int_equal(listing_matches(t, &sd), 2); /* ".", "s1" */
	assert_int_equal(t_lookup(t, &sd, "s1", &s1), NFS3_OK);
	assert_int_equal(listing_matches(t, &s1), 2); /* ".", "f" */
	assert_int_equal(listing_matches(t, &t->root), 2);
	assert_int_equal(t_lookup(t, &s1, "f", &f), NFS3_OK);
	assert_int_equal(t_getattr(t, &f, &old), NFS3_OK);
	fh_free(&f);
	assert_int_equal(t_lookup(t, &t->root, "f", &live), NFS3_OK);
	assert_int_equal(t_getattr(t, &live, &now), NFS3_OK);
	assert_int_equal(old.size, 8); /* the snapshot's file is as it was */
	assert_int_equal(now.size, 18);
	fh_free(&live);
	fh_free(&s1);
	fh_free(&sd);
	fh_free(&sub);
}
