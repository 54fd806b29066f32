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

	if ((r = admin_mount(&cm)) < 0)
		return r;
	r = ceph_mkdir(cm, path, 0755);
	admin_done(cm);
	return r;
}

/* The inode number of path in the CephFS, as its admin sees it. */
static uint64_t admin_ino(const char *path)
{
	struct ceph_mount_info *cm;
	struct ceph_statx stx;

	assert_int_equal(admin_mount(&cm), 0);
	assert_int_equal(ceph_statx(cm, path, &stx, CEPH_STATX_INO, 0), 0);
	admin_done(cm);
	return stx.stx_ino;
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

/* The fileid of name in dir, by LOOKUP and GETATTR; its handle in *fh if
 * fh is not NULL (fh_free it). */
static uint64_t fileid_of(struct tenv *t, const nfs_fh3 *dir, const char *name, nfs_fh3 *fh)
{
	nfs_fh3 got;
	fattr3 a;

	assert_int_equal(t_lookup(t, dir, name, &got), NFS3_OK);
	assert_int_equal(t_getattr(t, &got, &a), NFS3_OK);
	if (fh)
		*fh = got;
	else
		fh_free(&got);
	return a.fileid;
}

/* A snapshot's file is not the live file: each snapshot of a directory, its
 * .snap and the directory itself have fileids of their own, and so have the
 * file and its copies in two snapshots (the cluster gives them one inode
 * number: CephFS tells them apart by st_dev, which NFSv3 has not); live
 * files keep their inode numbers; READDIR and READDIRPLUS agree
 * (listing_matches), and another head gives the same fileids. */
void snapshot_fileids_apart(void **state)
{
	struct cenv *c = *state;
	struct tenv *t = &c->t;
	char path[192];
	uint64_t ids[7];
	nfs_fh3 sub, f, sd, s1, s2;
	fattr3 root;

	if (getenv("CEPH_ADMIN_KEYRING") == NULL)
		skip(); /* run through t/system/backend_ceph.sh */
	assert_int_equal(t_mkdir(t, &c->dir, "sub", &sub), NFS3_OK);
	assert_int_equal(t_create(t, &sub, "f", 0640, &f), NFS3_OK);
	fh_free(&f);
	snprintf(c->root, sizeof(c->root), "%s/sub", c->path);
	for (int i = 1; i <= 2; i++) {
		snprintf(path, sizeof(path), "%s/.snap/s%d", c->root, i);
		assert_int_equal(admin_mkdir(path), 0);
	}
	t->conf.ceph.root = c->root;
	assert_int_equal(tenv_restart(t), 0);

	assert_int_equal(t_getattr(t, &t->root, &root), NFS3_OK);
	ids[0] = root.fileid;
	ids[1] = fileid_of(t, &t->root, ".snap", &sd);
	ids[2] = fileid_of(t, &sd, "s1", &s1);
	ids[3] = fileid_of(t, &sd, "s2", &s2);
	ids[4] = fileid_of(t, &t->root, "f", NULL);
	ids[5] = fileid_of(t, &s1, "f", NULL);
	ids[6] = fileid_of(t, &s2, "f", NULL);
	for (int i = 0; i < 7; i++)
		for (int j = i + 1; j < 7; j++)
			assert_true(ids[i] != ids[j]);
	assert_int_equal(ids[0], admin_ino(c->root));
	snprintf(path, sizeof(path), "%s/f", c->root);
	assert_int_equal(ids[4], admin_ino(path));
	assert_int_equal(listing_matches(t, &sd), 3); /* ".", "s1", "s2" */
	assert_int_equal(listing_matches(t, &s2), 2); /* ".", "f" */

	assert_int_equal(tenv_restart(t), 0); /* another head: the same fileids */
	assert_int_equal(fileid_of(t, &s2, "f", NULL), ids[6]);
	assert_int_equal(fileid_of(t, &sd, "s1", NULL), ids[2]);
	fh_free(&s2);
	fh_free(&s1);
	fh_free(&sd);
	fh_free(&sub);
}

/* The entry name of dir by READDIR: its fileid, or 0 where it is not listed. */
static uint64_t listed(struct tenv *t, const nfs_fh3 *dir, const char *name)
{
	READDIR3args a;
	READDIR3res r;
	uint64_t id = 0;

	memset(&a, 0, sizeof(a));
	a.dir = *dir;
	a.count = 4096;
	tcall(t, NFSPROC3_READDIR, &a, &r);
	assert_int_equal(r.status, NFS3_OK);
	for (entry3 *e = r.READDIR3res_u.resok.reply.entries; e; e = e->nextentry)
		if (strcmp(e->name, name) == 0)
			id = e->fileid;
	tfree(NFSPROC3_READDIR, &r);
	return id;
}

/* RMDIR of dir/name. */
static nfsstat3 rmdir_in(struct tenv *t, const nfs_fh3 *dir, const char *name)
{
	RMDIR3args a = {.object = {.dir = *dir, .name = (char *)name}};
	RMDIR3res r;

	tcall(t, NFSPROC3_RMDIR, &a, &r);
	tfree(NFSPROC3_RMDIR, &r);
	return r.status;
}

/* A head that knows a snapshot's directories by their handles alone (after
 * a restart, or another head's) shows what the snapshot holds, not what the
 * live directories hold now: LOOKUP and READDIR find the file removed since
 * and the file as it was, and ".." is the parent in the snapshot; CREATE is
 * refused, as in any snapshot; a directory removed from the live tree still
 * lists what the snapshot holds. */
void snapshot_by_handle_alone(void **state)
{
	struct cenv *c = *state;
	struct tenv *t = &c->t;
	char path[192];
	nfs_fh3 sub, f, d, g, sd, s1, s1d, s1e, s1f, fh;
	char buf[16];
	size_t got;
	fattr3 a, s1a;

	if (getenv("CEPH_ADMIN_KEYRING") == NULL)
		skip(); /* run through t/system/backend_ceph.sh */
	assert_int_equal(t_mkdir(t, &c->dir, "sub", &sub), NFS3_OK);
	assert_int_equal(t_create(t, &sub, "f", 0640, &f), NFS3_OK);
	assert_int_equal(t_write(t, &f, 0, "old", 3, FILE_SYNC), NFS3_OK);
	assert_int_equal(t_mkdir(t, &sub, "d", &d), NFS3_OK);
	assert_int_equal(t_create(t, &d, "g", 0640, &g), NFS3_OK);
	fh_free(&g);
	assert_int_equal(t_mkdir(t, &sub, "e", &fh), NFS3_OK);
	assert_int_equal(t_create(t, &fh, "h", 0640, &g), NFS3_OK);
	fh_free(&g);
	fh_free(&fh);
	snprintf(c->root, sizeof(c->root), "%s/sub", c->path);
	snprintf(path, sizeof(path), "%s/.snap/s1", c->root);
	assert_int_equal(admin_mkdir(path), 0);
	assert_int_equal(t_write(t, &f, 0, "new data", 8, FILE_SYNC), NFS3_OK);
	assert_int_equal(t_remove(t, &d, "g"), NFS3_OK);
	fh_free(&f);
	t->conf.ceph.root = c->root;
	assert_int_equal(tenv_restart(t), 0);
	assert_int_equal(t_lookup(t, &t->root, ".snap", &sd), NFS3_OK);
	assert_int_equal(t_lookup(t, &sd, "s1", &s1), NFS3_OK);
	assert_int_equal(t_getattr(t, &s1, &s1a), NFS3_OK);
	assert_int_equal(t_lookup(t, &s1, "d", &s1d), NFS3_OK);
	assert_int_equal(t_lookup(t, &s1, "e", &s1e), NFS3_OK);
	assert_int_equal(t_lookup(t, &s1, "f", &s1f), NFS3_OK);
	fh_free(&d);
	assert_int_equal(t_lookup(t, &t->root, "d", &d), NFS3_OK);

	assert_int_equal(tenv_restart(t), 0); /* the handles alone */
	assert_int_equal(t_read(t, &s1f, 0, buf, sizeof(buf), &got), NFS3_OK);
	assert_int_equal(got, 3);
	assert_memory_equal(buf, "old", 3);
	assert_int_equal(t_lookup(t, &s1, "f", &fh), NFS3_OK);
	assert_same_fh(&fh, &s1f);
	assert_int_equal(t_getattr(t, &fh, &a), NFS3_OK);
	assert_int_equal(a.size, 3);
	fh_free(&fh);
	fh_free(&s1f);
	assert_int_equal(t_lookup(t, &s1d, "g", &fh), NFS3_OK);
	fh_free(&fh);
	assert_true(listed(t, &s1d, "g") != 0);
	assert_int_equal(listed(t, &s1d, ".."), s1a.fileid);
	assert_int_equal(t_create(t, &s1d, "x", 0640, &fh), NFS3ERR_ROFS);
	assert_int_equal(t_lookup(t, &d, "x", NULL), NFS3ERR_NOENT);
	assert_int_equal(t_lookup(t, &d, "g", NULL), NFS3ERR_NOENT);
	/* e, removed from the live tree, is still the snapshot's e */
	assert_int_equal(t_lookup(t, &sub, "e", &fh), NFS3_OK);
	assert_int_equal(t_remove(t, &fh, "h"), NFS3_OK);
	fh_free(&fh);
	assert_int_equal(rmdir_in(t, &sub, "e"), NFS3_OK);
	assert_int_equal(tenv_restart(t), 0);
	assert_int_equal(t_lookup(t, &s1e, "h", NULL), NFS3_OK);
	assert_true(listed(t, &s1e, "h") != 0);
	fh_free(&s1e);
	fh_free(&s1d);
	fh_free(&s1);
	fh_free(&sd);
	fh_free(&d);
	fh_free(&sub);
}

/* A snapshot's directory known by its handle alone is linked from its
 * parent in the snapshot, up to the directory the snapshot was taken of:
 * below the export's root (b1, of d) or above it (a1, of the export root's
 * parent: the root's .snap lists it as _a1_INO), so that its ".." is that
 * parent, not its own .snap; a file removed since is still listed. */
void snapshot_links_up(void **state)
{
	struct cenv *c = *state;
	struct tenv *t = &c->t;
	char path[192], name[64];
	nfs_fh3 sub, d, d2, fh, sd, x, y, deep[2];
	uint64_t up[2];
	fattr3 a;

	if (getenv("CEPH_ADMIN_KEYRING") == NULL)
		skip(); /* run through t/system/backend_ceph.sh */
	assert_int_equal(t_mkdir(t, &c->dir, "sub", &sub), NFS3_OK);
	assert_int_equal(t_mkdir(t, &sub, "d", &d), NFS3_OK);
	assert_int_equal(t_mkdir(t, &d, "d2", &d2), NFS3_OK);
	assert_int_equal(t_create(t, &d2, "k", 0640, &fh), NFS3_OK);
	fh_free(&fh);
	snprintf(c->root, sizeof(c->root), "%s/sub", c->path);
	snprintf(path, sizeof(path), "%s/.snap/a1", c->path);
	assert_int_equal(admin_mkdir(path), 0);
	snprintf(path, sizeof(path), "%s/d/.snap/b1", c->root);
	assert_int_equal(admin_mkdir(path), 0);
	assert_int_equal(t_remove(t, &d2, "k"), NFS3_OK);
	fh_free(&d2);
	fh_free(&d);
	t->conf.ceph.root = c->root;
	assert_int_equal(tenv_restart(t), 0);
	snprintf(name, sizeof(name), "_a1_%llu", (unsigned long long)admin_ino(c->path));
	assert_int_equal(t_lookup(t, &t->root, ".snap", &sd), NFS3_OK);
	assert_int_equal(t_lookup(t, &sd, name, &x), NFS3_OK);
	assert_int_equal(t_lookup(t, &x, "d", &y), NFS3_OK);
	assert_int_equal(t_getattr(t, &y, &a), NFS3_OK);
	up[0] = a.fileid;
	assert_int_equal(t_lookup(t, &y, "d2", &deep[0]), NFS3_OK);
	fh_free(&y);
	fh_free(&x);
	fh_free(&sd);
	assert_int_equal(t_lookup(t, &t->root, "d", &d), NFS3_OK);
	assert_int_equal(t_lookup(t, &d, ".snap", &sd), NFS3_OK);
	assert_int_equal(t_lookup(t, &sd, "b1", &x), NFS3_OK);
	assert_int_equal(t_getattr(t, &x, &a), NFS3_OK);
	up[1] = a.fileid;
	assert_int_equal(t_lookup(t, &x, "d2", &deep[1]), NFS3_OK);
	fh_free(&x);
	fh_free(&sd);
	fh_free(&d);

	for (int i = 0; i < 2; i++) {
		assert_int_equal(tenv_restart(t), 0); /* the deepest handle first */
		assert_int_equal(t_lookup(t, &deep[i], "k", NULL), NFS3_OK);
		assert_int_equal(listed(t, &deep[i], ".."), up[i]);
		assert_int_equal(listing_matches(t, &deep[i]), 2); /* ".", "k" */
		fh_free(&deep[i]);
	}
	fh_free(&sub);
}
