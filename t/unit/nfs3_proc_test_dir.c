/*
 * nfs3_proc_test_dir.c: directory entries: CREATE in its three modes,
 * MKDIR and RMDIR, SYMLINK and MKNOD, REMOVE (the handle goes stale), RENAME
 * and LINK, READDIR and READDIRPLUS.
 * Part of t/unit/nfs3_proc_test (see nfs3_proc_test.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include <sys/stat.h>

#include "t/unit/nfs3_testlib.h"
#include "nfs3_proc_test.h"

/* CREATE with how; returns the status and (if OK) the fileid. */
static nfsstat3 create3(struct tenv *t, const char *name, createmode3 how, const char *verf,
			int truncate, uint64_t *fileid)
{
	CREATE3args a;
	CREATE3res r;
	nfsstat3 st;

	memset(&a, 0, sizeof(a));
	a.where.dir = t->root;
	a.where.name = (char *)name;
	a.how.mode = how;
	if (how == EXCLUSIVE)
		memcpy(a.how.createhow3_u.verf, verf, 8);
	else if (truncate) {
		a.how.createhow3_u.obj_attributes.size.set_it = TRUE;
		a.how.createhow3_u.obj_attributes.size.set_size3_u.size = 0;
	}
	tcall(t, NFSPROC3_CREATE, &a, &r);
	st = r.status;
	if (st == NFS3_OK) {
		assert_true(r.CREATE3res_u.resok.obj.handle_follows);
		assert_true(r.CREATE3res_u.resok.obj_attributes.attributes_follow);
		*fileid = r.CREATE3res_u.resok.obj_attributes.post_op_attr_u.attributes.fileid;
	}
	if (st == NFS3_OK)
		assert_true(r.CREATE3res_u.resok.dir_wcc.after.attributes_follow);
	if (st == NFS3ERR_EXIST)
		assert_true(r.CREATE3res_u.resfail.dir_wcc.after.attributes_follow);
	tfree(NFSPROC3_CREATE, &r);
	return st;
}

/* CREATE UNCHECKED (truncating), GUARDED, EXCLUSIVE and its replay. */
void create_modes(void **state)
{
	struct tenv *t = *state;
	uint64_t id1, id2;
	struct stat st;

	put_file(t, "u", "data");
	assert_int_equal(create3(t, "u", UNCHECKED, NULL, 0, &id1), NFS3_OK);
	assert_int_equal(stat(tpath(t, "u"), &st), 0);
	assert_int_equal(st.st_size, 4);
	assert_int_equal(create3(t, "u", UNCHECKED, NULL, 1, &id1), NFS3_OK);
	assert_int_equal(stat(tpath(t, "u"), &st), 0);
	assert_int_equal(st.st_size, 0);
	assert_int_equal(create3(t, "u", GUARDED, NULL, 0, &id1), NFS3ERR_EXIST);
	assert_int_equal(create3(t, "g", GUARDED, NULL, 0, &id1), NFS3_OK);
	assert_int_equal(stat(tpath(t, "g"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	/* EXCLUSIVE: a replay with the same verifier succeeds, on the same file */
	assert_int_equal(create3(t, "x", EXCLUSIVE, "verf0001", 0, &id1), NFS3_OK);
	assert_int_equal(create3(t, "x", EXCLUSIVE, "verf0001", 0, &id2), NFS3_OK);
	assert_int_equal(id1, id2);
	assert_int_equal(create3(t, "x", EXCLUSIVE, "verf0002", 0, &id2), NFS3ERR_EXIST);
	assert_int_equal(create3(t, "g", EXCLUSIVE, "verf0001", 0, &id2), NFS3ERR_EXIST);
	assert_int_equal(create3(t, "a/b", GUARDED, NULL, 0, &id2), NFS3ERR_INVAL);
}

/* MKDIR and RMDIR with their error cases (NOTEMPTY, INVAL, NOTDIR, NOENT). */
void mkdir_rmdir(void **state)
{
	struct tenv *t = *state;
	nfs_fh3 d = {{0}}, f = {{0}};
	RMDIR3args a;
	RMDIR3res r;
	static const struct {
		const char *name;
		int dir_is_sub;
		nfsstat3 want;
	} cases[] = {
		{"d", 0, NFS3ERR_NOTEMPTY}, {".", 1, NFS3ERR_INVAL}, {"file", 1, NFS3ERR_NOTDIR},
		{"nope", 0, NFS3ERR_NOENT}, {"e", 1, NFS3_OK},	     {"d", 0, NFS3ERR_NOTEMPTY},
	};

	assert_int_equal(t_mkdir(t, &t->root, "d", &d), NFS3_OK);
	assert_int_equal(t_mkdir(t, &t->root, "d", NULL), NFS3ERR_EXIST);
	assert_int_equal(t_mkdir(t, &d, "e", NULL), NFS3_OK);
	assert_int_equal(t_create(t, &d, "file", 0644, &f), NFS3_OK);
	assert_int_equal(t_mkdir(t, &f, "x", NULL), NFS3ERR_NOTDIR);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		a.object.dir = cases[i].dir_is_sub ? d : t->root;
		a.object.name = (char *)cases[i].name;
		tcall(t, NFSPROC3_RMDIR, &a, &r);
		assert_int_equal(r.status, cases[i].want);
		tfree(NFSPROC3_RMDIR, &r);
	}
	fh_free(&d);
	fh_free(&f);
}

/* SYMLINK (and SETATTR through its handle), MKNOD of FIFO, socket, device, BADTYPE. */
void symlink_mknod(void **state)
{
	struct tenv *t = *state;
	SYMLINK3args sa;
	SYMLINK3res sr;
	MKNOD3args ma;
	MKNOD3res mr;
	struct stat st;
	char target[32];
	static const struct {
		ftype3 type;
		const char *name;
		mode_t fmt;
	} nodes[] = {
		{NF3FIFO, "fifo", S_IFIFO}, {NF3SOCK, "sock", S_IFSOCK}, {NF3CHR, "chr", S_IFCHR}};

	memset(&sa, 0, sizeof(sa));
	sa.where.dir = t->root;
	sa.where.name = "sl";
	sa.symlink.symlink_data = "../elsewhere";
	tcall(t, NFSPROC3_SYMLINK, &sa, &sr);
	assert_int_equal(sr.status, NFS3_OK);
	assert_int_equal(sr.SYMLINK3res_u.resok.obj_attributes.post_op_attr_u.attributes.type,
			 NF3LNK);
	tfree(NFSPROC3_SYMLINK, &sr);
	assert_int_equal(readlink(tpath(t, "sl"), target, sizeof(target)), 12);
	/* a symlink's times and owner can be set through its handle, not its target's */
	{
		SETATTR3args a;
		SETATTR3res r;
		nfs_fh3 fh = {{0}};

		assert_int_equal(t_lookup(t, &t->root, "sl", &fh), NFS3_OK);
		memset(&a, 0, sizeof(a));
		a.object = fh;
		a.new_attributes.mtime.set_it = SET_TO_CLIENT_TIME;
		a.new_attributes.mtime.set_mtime_u.mtime.seconds = 123456;
		a.new_attributes.mode.set_it = TRUE; /* ignored for symlinks, as on Linux */
		a.new_attributes.mode.set_mode3_u.mode = 0600;
		a.new_attributes.uid.set_it = TRUE;
		a.new_attributes.uid.set_uid3_u.uid = geteuid();
		tcall(t, NFSPROC3_SETATTR, &a, &r);
		assert_int_equal(r.status, NFS3_OK);
		tfree(NFSPROC3_SETATTR, &r);
		assert_int_equal(lstat(tpath(t, "sl"), &st), 0);
		assert_int_equal(st.st_mtime, 123456);
		fh_free(&fh);
	}
	tcall(t, NFSPROC3_SYMLINK, &sa, &sr);
	assert_int_equal(sr.status, NFS3ERR_EXIST);
	tfree(NFSPROC3_SYMLINK, &sr);
	for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
		memset(&ma, 0, sizeof(ma));
		ma.where.dir = t->root;
		ma.where.name = (char *)nodes[i].name;
		ma.what.type = nodes[i].type;
		if (nodes[i].type == NF3CHR) {
			ma.what.mknoddata3_u.device.spec.specdata1 = 1; /* /dev/null's numbers */
			ma.what.mknoddata3_u.device.spec.specdata2 = 3;
		}
		tcall(t, NFSPROC3_MKNOD, &ma, &mr);
		if (nodes[i].type == NF3CHR && geteuid() != 0) {
			assert_int_equal(mr.status, NFS3ERR_PERM);
		} else {
			assert_int_equal(mr.status, NFS3_OK);
			assert_int_equal(lstat(tpath(t, nodes[i].name), &st), 0);
			assert_int_equal(st.st_mode & S_IFMT, nodes[i].fmt);
			assert_int_equal(st.st_mode & 07777, 0644);
		}
		tfree(NFSPROC3_MKNOD, &mr);
	}
	ma.where.name = "reg";
	ma.what.type = NF3REG;
	tcall(t, NFSPROC3_MKNOD, &ma, &mr);
	assert_int_equal(mr.status, NFS3ERR_BADTYPE);
	tfree(NFSPROC3_MKNOD, &mr);
}

/* REMOVE dir/name. */
static nfsstat3 remove3(struct tenv *t, const nfs_fh3 *dir, const char *name)
{
	REMOVE3args a = {{*dir, (char *)name}};
	REMOVE3res r;
	nfsstat3 st;

	tcall(t, NFSPROC3_REMOVE, &a, &r);
	st = r.status;
	assert_true(r.REMOVE3res_u.resok.dir_wcc.before.attributes_follow);
	tfree(NFSPROC3_REMOVE, &r);
	return st;
}

/* REMOVE: the handle goes STALE even with its fd cached; NOENT; ISDIR. */
void remove_makes_stale(void **state)
{
	struct tenv *t = *state;
	nfs_fh3 fh = {{0}};
	char buf[8];
	size_t got;

	assert_int_equal(t_create(t, &t->root, "r", 0644, &fh), NFS3_OK);
	assert_int_equal(t_write(t, &fh, 0, "data", 4, UNSTABLE), NFS3_OK); /* caches an fd */
	assert_int_equal(remove3(t, &t->root, "r"), NFS3_OK);
	assert_int_equal(t_getattr(t, &fh, NULL), NFS3ERR_STALE);
	assert_int_equal(t_read(t, &fh, 0, buf, sizeof(buf), &got), NFS3ERR_STALE);
	assert_int_equal(remove3(t, &t->root, "r"), NFS3ERR_NOENT);
	assert_int_equal(t_mkdir(t, &t->root, "dd", NULL), NFS3_OK);
	assert_int_equal(remove3(t, &t->root, "dd"), NFS3ERR_ISDIR);
	fh_free(&fh);
}

/* RENAME fromdir/from -> todir/to. */
static nfsstat3 rename3(struct tenv *t, const nfs_fh3 *fd, const char *from, const nfs_fh3 *td,
			const char *to)
{
	RENAME3args a = {{*fd, (char *)from}, {*td, (char *)to}};
	RENAME3res r;
	nfsstat3 st;

	tcall(t, NFSPROC3_RENAME, &a, &r);
	st = r.status;
	if (st == NFS3_OK || st == NFS3ERR_NOENT || st == NFS3ERR_NOTEMPTY) {
		assert_true(r.RENAME3res_u.resok.fromdir_wcc.after.attributes_follow);
		assert_true(r.RENAME3res_u.resok.todir_wcc.after.attributes_follow);
	}
	tfree(NFSPROC3_RENAME, &r);
	return st;
}

/* RENAME and LINK, their errors, and handles that survive a rename. */
void rename_link(void **state)
{
	struct tenv *t = *state;
	nfs_fh3 fh = {{0}}, sub = {{0}};
	LINK3args la;
	LINK3res lr;
	struct stat st;

	assert_int_equal(t_create(t, &t->root, "a", 0644, &fh), NFS3_OK);
	assert_int_equal(t_mkdir(t, &t->root, "sub", &sub), NFS3_OK);
	assert_int_equal(rename3(t, &t->root, "a", &sub, "b"), NFS3_OK);
	assert_int_equal(stat(tpath(t, "sub/b"), &st), 0);
	assert_int_equal(rename3(t, &t->root, "a", &sub, "b"), NFS3ERR_NOENT);
	assert_int_equal(t_mkdir(t, &sub, "full", NULL), NFS3_OK);
	assert_int_equal(t_mkdir(t, &t->root, "empty", NULL), NFS3_OK);
	assert_int_equal(t_create(t, &t->root, "inside", 0644, NULL), NFS3_OK);
	assert_int_equal(rename3(t, &t->root, "empty", &t->root, "sub"), NFS3ERR_NOTEMPTY);
	assert_int_equal(rename3(t, &sub, "b", &fh, "c"), NFS3ERR_NOTDIR);
	/* the handle still works after a rename: handles name objects, not paths */
	assert_int_equal(t_write(t, &fh, 0, "x", 1, UNSTABLE), NFS3_OK);
	la.file = fh;
	la.link.dir = t->root;
	la.link.name = "hard";
	tcall(t, NFSPROC3_LINK, &la, &lr);
	assert_int_equal(lr.status, NFS3_OK);
	assert_int_equal(lr.LINK3res_u.resok.file_attributes.post_op_attr_u.attributes.nlink, 2);
	tfree(NFSPROC3_LINK, &lr);
	tcall(t, NFSPROC3_LINK, &la, &lr);
	assert_int_equal(lr.status, NFS3ERR_EXIST);
	tfree(NFSPROC3_LINK, &lr);
	/* a symlink links as itself, not as its target */
	assert_int_equal(symlink("b", tpath(t, "sub/sl")), 0);
	fh_free(&fh);
	assert_int_equal(t_lookup(t, &sub, "sl", &fh), NFS3_OK);
	la.file = fh;
	la.link.name = "sl2";
	tcall(t, NFSPROC3_LINK, &la, &lr);
	assert_int_equal(lr.status, NFS3_OK);
	tfree(NFSPROC3_LINK, &lr);
	assert_int_equal(lstat(tpath(t, "sl2"), &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	la.file = sub;
	la.link.name = "dirlink";
	tcall(t, NFSPROC3_LINK, &la, &lr);
	assert_int_equal(lr.status, NFS3ERR_ISDIR);
	tfree(NFSPROC3_LINK, &lr);
	fh_free(&fh);
	fh_free(&sub);
}

/* READDIR: every name with . and ..; TOOSMALL; BAD_COOKIE; NOTDIR. */
void readdir_small(void **state)
{
	struct tenv *t = *state;
	READDIR3args a;
	READDIR3res r;
	int seen = 0;

	put_file(t, "one", "1");
	put_file(t, "two", "2");
	memset(&a, 0, sizeof(a));
	a.dir = t->root;
	a.count = 4096;
	tcall(t, NFSPROC3_READDIR, &a, &r);
	assert_int_equal(r.status, NFS3_OK);
	assert_true(r.READDIR3res_u.resok.reply.eof);
	for (entry3 *e = r.READDIR3res_u.resok.reply.entries; e; e = e->nextentry)
		seen |= strcmp(e->name, "one") == 0   ? 1
			: strcmp(e->name, "two") == 0 ? 2
			: strcmp(e->name, ".") == 0   ? 4
			: strcmp(e->name, "..") == 0  ? 8
						      : 16;
	assert_int_equal(seen, 15);
	tfree(NFSPROC3_READDIR, &r);
	/* too small for even one entry */
	a.count = 100;
	tcall(t, NFSPROC3_READDIR, &a, &r);
	assert_int_equal(r.status, NFS3ERR_TOOSMALL);
	tfree(NFSPROC3_READDIR, &r);
	/* a verifier we never gave out, on a continued listing */
	a.count = 4096;
	a.cookie = 1;
	memcpy(a.cookieverf, "12345678", 8);
	tcall(t, NFSPROC3_READDIR, &a, &r);
	assert_int_equal(r.status, NFS3ERR_BAD_COOKIE);
	tfree(NFSPROC3_READDIR, &r);
	/* READDIR of a file */
	put_file(t, "plain", "");
	a.cookie = 0;
	memset(a.cookieverf, 0, 8);
	assert_int_equal(t_lookup(t, &t->root, "plain", &a.dir), NFS3_OK);
	tcall(t, NFSPROC3_READDIR, &a, &r);
	assert_int_equal(r.status, NFS3ERR_NOTDIR);
	tfree(NFSPROC3_READDIR, &r);
	fh_free(&a.dir);
}

/* READDIRPLUS: each entry's handle and attributes match; TOOSMALL. */
void readdirplus_handles(void **state)
{
	struct tenv *t = *state;
	READDIRPLUS3args a;
	READDIRPLUS3res r;
	fattr3 fa;
	int found = 0;

	put_file(t, "p", "plus");
	memset(&a, 0, sizeof(a));
	a.dir = t->root;
	a.dircount = 4096;
	a.maxcount = 8192;
	tcall(t, NFSPROC3_READDIRPLUS, &a, &r);
	assert_int_equal(r.status, NFS3_OK);
	assert_true(r.READDIRPLUS3res_u.resok.reply.eof);
	for (entryplus3 *e = r.READDIRPLUS3res_u.resok.reply.entries; e; e = e->nextentry) {
		assert_true(e->name_attributes.attributes_follow);
		assert_true(e->name_handle.handle_follows);
		assert_int_equal(t_getattr(t, &e->name_handle.post_op_fh3_u.handle, &fa), NFS3_OK);
		assert_int_equal(fa.fileid, e->fileid);
		if (strcmp(e->name, "p") == 0) {
			found = 1;
			assert_int_equal(fa.size, 4);
		}
	}
	assert_true(found);
	tfree(NFSPROC3_READDIRPLUS, &r);
	a.maxcount = 120;
	tcall(t, NFSPROC3_READDIRPLUS, &a, &r);
	assert_int_equal(r.status, NFS3ERR_TOOSMALL);
	tfree(NFSPROC3_READDIRPLUS, &r);
}
