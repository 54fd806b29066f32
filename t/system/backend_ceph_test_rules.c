/*
 * backend_ceph_test_rules.c: handles across a restart, damaged handles, the
 * caller's identity after squashing and the export's rules, and a cluster
 * that does not answer.
 * Part of t/system/backend_ceph_test (see backend_ceph_test.c).
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

#include <cmocka.h>

#include "t/unit/nfs3_testlib.h"
#include "server/backend_ceph.h"
#include "server/backend_lock.h"
#include "backend_ceph_test.h"

/* Handles: still good after a restart (the inode found again with
 * ceph_ll_lookup_inode), a flipped MAC byte is STALE, a cut one BADHANDLE;
 * of the cluster's errors only those of an inode that is gone are STALE. */
void handles_across_restart(void **state)
{
	struct cenv *c = *state;
	struct tenv *t = &c->t;
	nfs_fh3 fh, bad;
	fattr3 fa;
	char buf[16];
	size_t got;

	assert_int_equal(t_create(t, &c->dir, "keep", 0644, &fh), NFS3_OK);
	assert_int_equal(t_write(t, &fh, 0, "kept", 4, UNSTABLE), NFS3_OK);
	assert_int_equal(tenv_restart(t), 0);
	assert_int_equal(t_getattr(t, &fh, &fa), NFS3_OK);
	assert_int_equal(fa.size, 4);
	assert_int_equal(t_read(t, &fh, 0, buf, sizeof(buf), &got), NFS3_OK);
	assert_int_equal(got, 4);
	assert_memory_equal(buf, "kept", 4);
	fh_copy(&bad, &fh);
	bad.data.data_val[bad.data.data_len - 1] ^= 1;
	assert_int_equal(t_getattr(t, &bad, &fa), NFS3ERR_STALE);
	bad.data.data_len -= 3;
	assert_int_equal(t_getattr(t, &bad, &fa), NFS3ERR_BADHANDLE);
	fh_free(&bad);
	fh_free(&fh);
	assert_int_equal(ce_find_stat(-ESTALE), NFS3ERR_STALE);
	assert_int_equal(ce_find_stat(-ENOENT), NFS3ERR_STALE);
	assert_int_equal(ce_find_stat(-EIO), NFS3ERR_IO);
	assert_int_equal(ce_find_stat(-ETIMEDOUT), NFS3ERR_JUKEBOX);
	assert_int_equal(ce_find_stat(-ENOMEM), NFS3ERR_JUKEBOX);
}

/* A directory name in top, of mode (set after MKDIR: no umask), its handle in out. */
static void mkdir_mode(struct tenv *t, const nfs_fh3 *top, const char *name, uint32_t mode,
		       nfs_fh3 *out)
{
	SETATTR3args sa;
	SETATTR3res sr;

	assert_int_equal(t_mkdir(t, top, name, out), NFS3_OK);
	memset(&sa, 0, sizeof(sa));
	sa.object = *out;
	sa.new_attributes.mode.set_it = TRUE;
	sa.new_attributes.mode.set_mode3_u.mode = mode;
	tcall(t, NFSPROC3_SETATTR, &sa, &sr);
	assert_int_equal(sr.status, NFS3_OK);
	tfree(NFSPROC3_SETATTR, &sr);
}

/* MKNOD of type (NF3FIFO, NF3CHR) named name in dir: its status. */
static nfsstat3 t_mknod(struct tenv *t, const nfs_fh3 *dir, const char *name, ftype3 type)
{
	MKNOD3args ma;
	MKNOD3res mr;
	nfsstat3 st;

	memset(&ma, 0, sizeof(ma));
	ma.where.dir = *dir;
	ma.where.name = (char *)name;
	ma.what.type = type;
	if (type == NF3CHR) {
		ma.what.mknoddata3_u.device.spec.specdata1 = 1; /* 1,3: /dev/null's */
		ma.what.mknoddata3_u.device.spec.specdata2 = 3;
	}
	tcall(t, NFSPROC3_MKNOD, &ma, &mr);
	st = mr.status;
	tfree(NFSPROC3_MKNOD, &mr);
	return st;
}

/* In a directory anyone may write, uid 1000 may make a FIFO but not a
 * device (the kernel's CAP_MKNOD, which the cluster does not check); root
 * may make both. */
static void mknod_devices_root_only(struct tenv *t, const nfs_fh3 *top)
{
	nfs_fh3 pub;

	mkdir_mode(t, top, "pub", 0777, &pub);
	t->req.cred.uid = t->req.cred.gid = 1000;
	assert_int_equal(t_mknod(t, &pub, "fifo", NF3FIFO), NFS3_OK);
	assert_int_equal(t_mknod(t, &pub, "null", NF3CHR), NFS3ERR_PERM);
	assert_int_equal(t_lookup(t, &pub, "null", NULL), NFS3ERR_NOENT);
	t->req.cred.uid = t->req.cred.gid = 0;
	assert_int_equal(t_mknod(t, &pub, "null", NF3CHR), NFS3_OK);
	fh_free(&pub);
}

/* READDIR of dir as the caller: its status. */
static nfsstat3 t_readdir(struct tenv *t, const nfs_fh3 *dir)
{
	READDIR3args a;
	READDIR3res r;
	nfsstat3 st;

	memset(&a, 0, sizeof(a));
	a.dir = *dir;
	a.count = 4096;
	tcall(t, NFSPROC3_READDIR, &a, &r);
	st = r.status;
	tfree(NFSPROC3_READDIR, &r);
	return st;
}

/* A directory of root's of mode 0744: others may read it but not search
 * it, so they may not list it (its entries' handles would take them past
 * it), as on POSIX exports; its owner may. */
static void listing_needs_search(struct tenv *t, const nfs_fh3 *top)
{
	nfs_fh3 dir;

	mkdir_mode(t, top, "nosearch", 0744, &dir);
	assert_int_equal(t_create(t, &dir, "inside", 0644, NULL), NFS3_OK);
	assert_int_equal(t_readdir(t, &dir), NFS3_OK);
	t->req.cred.uid = t->req.cred.gid = 1000;
	assert_int_equal(t_readdir(t, &dir), NFS3ERR_ACCES);
	t->req.cred.uid = t->req.cred.gid = 0;
	fh_free(&dir);
}

/* The caller's identity after squashing decides: root squashed creates as
 * 65534; uid 1000 cannot create in a 0755 directory of root's, may make a
 * FIFO but not a device where it may create, may not list a directory it
 * may not search, and ACCESS says what it may do; a read-only export
 * refuses changes. */
void identity_and_rules(void **state)
{
	struct cenv *c = *state;
	struct tenv *t = &c->t;
	ACCESS3args aa;
	ACCESS3res ar;
	nfs_fh3 fh;
	fattr3 fa;

	assert_int_equal(t_create(t, &c->dir, "rootfile", 0644, &fh), NFS3_OK);
	t->req.cred.uid = t->req.cred.gid = 1000;
	assert_int_equal(t_create(t, &c->dir, "userfile", 0644, NULL), NFS3ERR_ACCES);
	aa.object = fh;
	aa.access = ACCESS3_READ | ACCESS3_MODIFY | ACCESS3_EXECUTE;
	tcall(t, NFSPROC3_ACCESS, &aa, &ar);
	assert_int_equal(ar.status, NFS3_OK);
	assert_int_equal(ar.ACCESS3res_u.resok.access, ACCESS3_READ);
	tfree(NFSPROC3_ACCESS, &ar);
	assert_int_equal(t_write(t, &fh, 0, "no", 2, FILE_SYNC), NFS3ERR_ACCES);
	t->req.cred.uid = t->req.cred.gid = 0;
	mknod_devices_root_only(t, &c->dir);
	listing_needs_search(t, &c->dir);
	/* root, squashed */
	t->conf.root_squash = 1;
	assert_int_equal(tenv_restart(t), 0);
	{
		SETATTR3args sa;
		SETATTR3res sr;

		memset(&sa, 0, sizeof(sa));
		sa.object = c->dir;
		sa.new_attributes.mode.set_it = TRUE;
		sa.new_attributes.mode.set_mode3_u.mode = 0777;
		tcall(t, NFSPROC3_SETATTR, &sa, &sr);
		assert_int_equal(sr.status, NFS3ERR_PERM); /* not the owner any more */
		tfree(NFSPROC3_SETATTR, &sr);
	}
	t->conf.root_squash = 0;
	assert_int_equal(tenv_restart(t), 0);
	{
		SETATTR3args sa;
		SETATTR3res sr;

		memset(&sa, 0, sizeof(sa));
		sa.object = c->dir;
		sa.new_attributes.mode.set_it = TRUE;
		sa.new_attributes.mode.set_mode3_u.mode = 0777;
		tcall(t, NFSPROC3_SETATTR, &sa, &sr);
		assert_int_equal(sr.status, NFS3_OK);
		tfree(NFSPROC3_SETATTR, &sr);
	}
	t->conf.root_squash = 1;
	assert_int_equal(tenv_restart(t), 0);
	fh_free(&fh);
	assert_int_equal(t_create(t, &c->dir, "squashed", 0644, &fh), NFS3_OK);
	assert_int_equal(t_getattr(t, &fh, &fa), NFS3_OK);
	assert_int_equal(fa.uid, 65534);
	assert_int_equal(fa.gid, 65534);
	fh_free(&fh);
	/* the owner may truncate a file of mode 0 (pjdfstest ftruncate/00.t) */
	t->conf.root_squash = 0;
	assert_int_equal(tenv_restart(t), 0);
	t->req.cred.uid = t->req.cred.gid = 1000;
	assert_int_equal(t_create(t, &c->dir, "mode0", 0, &fh), NFS3_OK);
	assert_int_equal(t_write(t, &fh, 0, "x", 1, FILE_SYNC), NFS3_OK);
	{
		SETATTR3args sa;
		SETATTR3res sr;

		memset(&sa, 0, sizeof(sa));
		sa.object = fh;
		sa.new_attributes.size.set_it = TRUE;
		tcall(t, NFSPROC3_SETATTR, &sa, &sr);
		assert_int_equal(sr.status, NFS3_OK);
		tfree(NFSPROC3_SETATTR, &sr);
	}
	assert_int_equal(t_getattr(t, &fh, &fa), NFS3_OK);
	assert_int_equal(fa.size, 0);
	assert_int_equal(fa.uid, 1000);
	fh_free(&fh);
	/* times set to now by a user who may write a file it does not own
	 * (pjdfstest utimensat/06.t), not by one who may not */
	t->req.cred.uid = t->req.cred.gid = 0;
	assert_int_equal(t_create(t, &c->dir, "shared", 0666, &fh), NFS3_OK);
	{
		SETATTR3args sa;
		SETATTR3res sr;

		memset(&sa, 0, sizeof(sa));
		sa.object = fh;
		sa.new_attributes.mtime.set_it = SET_TO_CLIENT_TIME;
		sa.new_attributes.mtime.set_mtime_u.mtime.seconds = 1000000000;
		tcall(t, NFSPROC3_SETATTR, &sa, &sr);
		assert_int_equal(sr.status, NFS3_OK);
		tfree(NFSPROC3_SETATTR, &sr);
		t->req.cred.uid = t->req.cred.gid = 1000;
		tcall(t, NFSPROC3_SETATTR, &sa, &sr);
		assert_int_equal(sr.status, NFS3ERR_PERM); /* a given time: owner only */
		tfree(NFSPROC3_SETATTR, &sr);
		sa.new_attributes.mtime.set_it = SET_TO_SERVER_TIME;
		tcall(t, NFSPROC3_SETATTR, &sa, &sr);
		assert_int_equal(sr.status, NFS3_OK);
		tfree(NFSPROC3_SETATTR, &sr);
		assert_int_equal(t_getattr(t, &fh, &fa), NFS3_OK);
		assert_true(fa.mtime.seconds + 60 > (uint32)time(NULL));
		t->req.cred.uid = t->req.cred.gid = 0;
		sa.new_attributes.mode.set_it = TRUE;
		sa.new_attributes.mode.set_mode3_u.mode = 0644;
		sa.new_attributes.mtime.set_it = DONT_CHANGE;
		tcall(t, NFSPROC3_SETATTR, &sa, &sr);
		assert_int_equal(sr.status, NFS3_OK);
		tfree(NFSPROC3_SETATTR, &sr);
		t->req.cred.uid = t->req.cred.gid = 1000;
		sa.new_attributes.mode.set_it = FALSE;
		sa.new_attributes.mtime.set_it = SET_TO_SERVER_TIME;
		tcall(t, NFSPROC3_SETATTR, &sa, &sr);
		assert_true(sr.status == NFS3ERR_PERM || sr.status == NFS3ERR_ACCES);
		tfree(NFSPROC3_SETATTR, &sr);
	}
	fh_free(&fh);
	t->req.cred.uid = t->req.cred.gid = 0;
	t->conf.ro = 1;
	assert_int_equal(tenv_restart(t), 0);
	assert_int_equal(t_create(t, &c->dir, "ro", 0644, NULL), NFS3ERR_ROFS);
	assert_int_equal(t_lookup(t, &c->dir, "squashed", NULL), NFS3_OK);
}

/* ACCESS of fh as the caller: the rights granted of all asked. */
static uint32 t_access(struct tenv *t, const nfs_fh3 *fh)
{
	ACCESS3args aa;
	ACCESS3res ar;
	uint32 got;

	aa.object = *fh;
	aa.access =
		ACCESS3_READ | ACCESS3_MODIFY | ACCESS3_EXTEND | ACCESS3_EXECUTE | ACCESS3_LOOKUP;
	tcall(t, NFSPROC3_ACCESS, &aa, &ar);
	assert_int_equal(ar.status, NFS3_OK);
	got = ar.ACCESS3res_u.resok.access;
	tfree(NFSPROC3_ACCESS, &ar);
	return got;
}

/* One entry of a POSIX ACL: tag (1 user::, 2 user:, 4 group::, 8 group:,
 * 16 mask, 32 other), rights (rwx as 4 2 1), id (named entries). */
struct acl_ent {
	unsigned tag, perm;
	uint32_t id;
};

/* Set ACL xattr (system.posix_acl_access or _default: little-endian,
 * version 2) of name in c's directory, as the cluster's admin. */
static void set_acl(struct cenv *c, const char *name, const char *xattr, const struct acl_ent *e,
		    size_t n)
{
	unsigned char buf[4 + 64 * 8], *p = buf;
	struct ceph_mount_info *cm;
	char path[160];

	assert_true(n <= 64);
	memset(buf, 0, sizeof(buf));
	p[0] = 2;
	for (p += 4; n--; e++, p += 8) {
		p[0] = (unsigned char)e->tag;
		p[2] = (unsigned char)e->perm;
		for (int i = 0; i < 4; i++)
			p[4 + i] = (unsigned char)(e->id >> (8 * i));
	}
	snprintf(path, sizeof(path), "%s/%s", c->path, name);
	assert_int_equal(admin_mount(&cm), 0);
	assert_int_equal(ceph_setxattr(cm, path, xattr, buf, (size_t)(p - buf), 0), 0);
	admin_done(cm);
}

#define ACCESS_ACL "system.posix_acl_access"

/* An ACL longer than the server reads at first (32 entries): 40 named
 * users, the last of whom may read and write. */
static void many_entries(struct cenv *c)
{
	struct acl_ent e[44];
	struct tenv *t = &c->t;
	size_t n = 0;
	nfs_fh3 fh;

	e[n++] = (struct acl_ent){1, 6, 0xffffffffu};
	for (uint32_t id = 2000; id < 2040; id++)
		e[n++] = (struct acl_ent){2, id == 2039 ? 6 : 0, id};
	e[n++] = (struct acl_ent){4, 0, 0xffffffffu};
	e[n++] = (struct acl_ent){16, 6, 0xffffffffu};
	e[n++] = (struct acl_ent){32, 0, 0xffffffffu};
	assert_int_equal(t_create(t, &c->dir, "many", 0600, &fh), NFS3_OK);
	set_acl(c, "many", ACCESS_ACL, e, n);
	t->req.cred.uid = t->req.cred.gid = 2039;
	assert_int_equal(t_access(t, &fh), ACCESS3_READ | ACCESS3_MODIFY | ACCESS3_EXTEND);
	t->req.cred.uid = t->req.cred.gid = 2038;
	assert_int_equal(t_access(t, &fh), 0);
	t->req.cred.uid = t->req.cred.gid = 0;
	fh_free(&fh);
}

/* The mask bounds a named user's entry; a file made where no default ACL
 * is keeps the mode asked for (no umask of libcephfs's); a .snap, which
 * has no ACL, is judged by its mode bits. */
static void mask_and_plain(struct cenv *c)
{
	static const struct acl_ent masked[] = {
		{1, 6, 0xffffffffu},  {2, 6, 1000},	    {4, 4, 0xffffffffu},
		{16, 4, 0xffffffffu}, {32, 0, 0xffffffffu},
	};
	struct tenv *t = &c->t;
	nfs_fh3 fh, snap;
	fattr3 fa;

	assert_int_equal(t_create(t, &c->dir, "masked", 0640, &fh), NFS3_OK);
	set_acl(c, "masked", ACCESS_ACL, masked, sizeof(masked) / sizeof(masked[0]));
	t->req.cred.uid = t->req.cred.gid = 1000;
	assert_int_equal(t_access(t, &fh), ACCESS3_READ);
	assert_int_equal(t_write(t, &fh, 0, "no", 2, FILE_SYNC), NFS3ERR_ACCES);
	t->req.cred.uid = t->req.cred.gid = 0;
	fh_free(&fh);
	assert_int_equal(t_create(t, &c->dir, "plain", 0666, &fh), NFS3_OK);
	assert_int_equal(t_getattr(t, &fh, &fa), NFS3_OK);
	assert_int_equal(fa.mode & 0777, 0666);
	fh_free(&fh);
	assert_int_equal(t_lookup(t, &c->dir, ".snap", &snap), NFS3_OK);
	t->req.cred.uid = t->req.cred.gid = 1000;
	assert_int_equal(t_access(t, &snap), ACCESS3_READ | ACCESS3_LOOKUP);
	assert_int_equal(t_readdir(t, &snap), NFS3_OK);
	t->req.cred.uid = t->req.cred.gid = 0;
	fh_free(&snap);
}

/* The caller's rights on a file and a directory with POSIX ACLs, where the
 * server checks them itself (ACCESS, WRITE, READ, READDIR) as libcephfs
 * does for the rest: a named user's entry, the owning and a named group's
 * within the mask, others'; each case differs from what the mode bits
 * alone would give. A directory's default ACL is a new file's. A long
 * ACL is read whole. */
void acls_decide(void **state)
{
	static const struct acl_ent facl[] = {
		{1, 6, 0xffffffffu},  {2, 6, 1000}, {2, 0, 1001},
		{4, 4, 0xffffffffu},  {8, 6, 1500}, {16, 6, 0xffffffffu},
		{32, 4, 0xffffffffu},
	};
	static const struct acl_ent dacl[] = {
		{1, 7, 0xffffffffu},  {2, 5, 1000},	    {4, 0, 0xffffffffu},
		{16, 5, 0xffffffffu}, {32, 0, 0xffffffffu},
	};
	static const struct acl_ent inherit[] = {
		{1, 6, 0xffffffffu},  {4, 4, 0xffffffffu},  {8, 6, 1500},
		{16, 6, 0xffffffffu}, {32, 0, 0xffffffffu},
	};
	const uint32 rw = ACCESS3_READ | ACCESS3_MODIFY | ACCESS3_EXTEND;
	struct cenv *c = *state;
	struct tenv *t = &c->t;
	struct nfs_lock_file lf;
	nfs_fh3 fh, dir;
	fattr3 fa;
	char buf[8];
	size_t got;

	assert_int_equal(t_create(t, &c->dir, "acl", 0640, &fh), NFS3_OK);
	assert_int_equal(t_write(t, &fh, 0, "acl", 3, FILE_SYNC), NFS3_OK);
	set_acl(c, "acl", ACCESS_ACL, facl, sizeof(facl) / sizeof(facl[0]));
	assert_int_equal(t_getattr(t, &fh, &fa), NFS3_OK);
	assert_int_equal(fa.mode & 0777, 0664); /* the mask is the group's bits */
	/* a named user, given more than others have */
	t->req.cred.uid = t->req.cred.gid = 1000;
	assert_int_equal(t_access(t, &fh), rw);
	assert_int_equal(t_write(t, &fh, 0, "ACL", 3, FILE_SYNC), NFS3_OK);
	assert_int_equal(ce_open_locked(&t->req, &fh, 1, &lf), 0); /* may lock it too */
	lf.ops->close(&lf);
	/* a named user, given less than others have */
	t->req.cred.uid = t->req.cred.gid = 1001;
	assert_int_equal(t_access(t, &fh), 0);
	assert_int_equal(t_read(t, &fh, 0, buf, sizeof(buf), &got), NFS3ERR_ACCES);
	assert_int_equal(ce_open_locked(&t->req, &fh, 1, &lf), -EACCES);
	/* the owning group: its entry, not the mask that the mode shows */
	t->req.cred.uid = 1002;
	t->req.cred.gid = 0;
	assert_int_equal(t_access(t, &fh), ACCESS3_READ);
	assert_int_equal(t_write(t, &fh, 0, "no", 2, FILE_SYNC), NFS3ERR_ACCES);
	/* a named group, among the caller's others */
	t->req.cred.uid = t->req.cred.gid = 1003;
	t->req.cred.ngids = 1;
	t->req.cred.gids[0] = 1500;
	assert_int_equal(t_access(t, &fh), rw);
	t->req.cred.ngids = 0;
	/* anyone else */
	t->req.cred.uid = t->req.cred.gid = 1004;
	assert_int_equal(t_access(t, &fh), ACCESS3_READ);
	assert_int_equal(t_read(t, &fh, 0, buf, sizeof(buf), &got), NFS3_OK);
	assert_memory_equal(buf, "ACL", 3);
	/* a directory only a named user may list */
	t->req.cred.uid = t->req.cred.gid = 0;
	mkdir_mode(t, &c->dir, "adir", 0700, &dir);
	set_acl(c, "adir", ACCESS_ACL, dacl, sizeof(dacl) / sizeof(dacl[0]));
	set_acl(c, "adir", "system.posix_acl_default", inherit,
		sizeof(inherit) / sizeof(inherit[0]));
	t->req.cred.uid = t->req.cred.gid = 1000;
	assert_int_equal(t_readdir(t, &dir), NFS3_OK);
	assert_int_equal(t_access(t, &dir), ACCESS3_READ | ACCESS3_LOOKUP);
	t->req.cred.uid = t->req.cred.gid = 1001;
	assert_int_equal(t_readdir(t, &dir), NFS3ERR_ACCES);
	/* a file made in it takes its default ACL (libcephfs), not the umask */
	t->req.cred.uid = t->req.cred.gid = 0;
	fh_free(&fh);
	assert_int_equal(t_create(t, &dir, "inherits", 0666, &fh), NFS3_OK);
	assert_int_equal(t_getattr(t, &fh, &fa), NFS3_OK);
	assert_int_equal(fa.mode & 0777, 0660);
	t->req.cred.uid = t->req.cred.gid = 1003;
	t->req.cred.ngids = 1;
	assert_int_equal(t_write(t, &fh, 0, "group", 5, FILE_SYNC), NFS3_OK);
	t->req.cred.ngids = 0;
	t->req.cred.uid = t->req.cred.gid = 1004;
	assert_int_equal(t_access(t, &fh), 0);
	t->req.cred.uid = t->req.cred.gid = 0;
	fh_free(&dir);
	fh_free(&fh);
	many_entries(c);
	mask_and_plain(c);
}

/* A cluster that does not answer: create fails within the timeout. */
void unreachable_cluster(void **state)
{
	char path[PATH_MAX], line[512];
	const char *conf = getenv("CEPH_CONF");
	struct nfs_export_conf e;
	struct nfs_backend *be;
	FILE *in, *out;
	time_t t0;
	int r;

	snprintf(path, sizeof(path), "%s.unreachable", conf);
	in = fopen(conf, "r");
	out = fopen(path, "w");
	assert_non_null(in);
	assert_non_null(out);
	while (fgets(line, sizeof(line), in))
		fputs(strncmp(line, "mon_host", 8) == 0 ? "mon_host = v2:127.0.0.1:9\n" : line,
		      out);
	fclose(in);
	fclose(out);
	memset(&e, 0, sizeof(e));
	e.path = "/nowhere";
	e.backend = NFS_BACKEND_CEPHFS;
	e.ceph.conf_file = path;
	e.ceph.client_id = getenv("CEPH_CLIENT_ID");
	e.ceph.keyring = getenv("CEPH_KEYRING");
	e.ceph.mount_timeout_s = 2;
	t0 = time(NULL);
	r = nfs_backend_create(&e, 1, 1 << 20, &be);
	assert_true(r < 0);
	assert_true(time(NULL) - t0 < 15);
	unlink(path);
}
