/*
 * nfs3_proc_test_attr.c: NULL, GETATTR, LOOKUP, SETATTR, ACCESS,
 * READLINK, FSSTAT, FSINFO and PATHCONF, with their error cases, and the
 * errno to nfsstat3 mapping.
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

/* NULL answers; GETATTR of the root gives a directory with the export id as fsid. */
void null_and_getattr(void **state)
{
	struct tenv *t = *state;
	fattr3 fa;

	tcall(t, NFSPROC3_NULL, NULL, NULL);
	assert_int_equal(t_getattr(t, &t->root, &fa), NFS3_OK);
	assert_int_equal(fa.type, NF3DIR);
	assert_int_equal(fa.fsid, nfs_backend_export_id(t->be, 0));
	assert_int_equal(fa.mode, 0755);
}

/* LOOKUP: found, NOENT, NOTDIR, bad names, ".." at the root, NAMETOOLONG. */
void lookup_cases(void **state)
{
	struct tenv *t = *state;
	char longname[300];
	nfs_fh3 fh = {{0}}, up = {{0}};
	LOOKUP3args a;
	LOOKUP3res r;
	fattr3 fa;

	put_file(t, "f", "hello");
	assert_int_equal(t_lookup(t, &t->root, "f", &fh), NFS3_OK);
	assert_int_equal(t_getattr(t, &fh, &fa), NFS3_OK);
	assert_int_equal(fa.type, NF3REG);
	assert_int_equal(fa.size, 5);
	assert_int_equal(t_lookup(t, &t->root, "missing", NULL), NFS3ERR_NOENT);
	assert_int_equal(t_lookup(t, &fh, "x", NULL), NFS3ERR_NOTDIR);
	assert_int_equal(t_lookup(t, &t->root, "", NULL), NFS3ERR_INVAL);
	assert_int_equal(t_lookup(t, &t->root, "a/b", NULL), NFS3ERR_INVAL);
	/* ".." of the export root stays at the root */
	assert_int_equal(t_lookup(t, &t->root, "..", &up), NFS3_OK);
	assert_memory_equal(up.data.data_val, t->root.data.data_val, t->root.data.data_len);
	/* longer than NFS3_MAXNAMLEN: XDR refuses it on the wire, the backend too */
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	memset(&r, 0, sizeof(r));
	a.what.dir = t->root;
	a.what.name = longname;
	nfs3_procs[NFSPROC3_LOOKUP].fn(&t->req, &a, &r);
	assert_int_equal(r.status, NFS3ERR_NAMETOOLONG);
	nfs_proc_free_res(&nfs3_procs[NFSPROC3_LOOKUP], &t->req, &r);
	fh_free(&fh);
	fh_free(&up);
}

/* SETATTR with the given attributes (and guard ctime if guard). */
static nfsstat3 setattr(struct tenv *t, const nfs_fh3 *fh, const sattr3 *sa, const nfstime3 *guard)
{
	SETATTR3args a;
	SETATTR3res r;
	nfsstat3 st;

	memset(&a, 0, sizeof(a));
	a.object = *fh;
	a.new_attributes = *sa;
	if (guard) {
		a.guard.check = TRUE;
		a.guard.sattrguard3_u.obj_ctime = *guard;
	}
	tcall(t, NFSPROC3_SETATTR, &a, &r);
	st = r.status;
	assert_true(r.SETATTR3res_u.resok.obj_wcc.after.attributes_follow);
	tfree(NFSPROC3_SETATTR, &r);
	return st;
}

/* SETATTR: mode, size and mtime applied; the ctime guard; size on a directory. */
void setattr_cases(void **state)
{
	struct tenv *t = *state;
	nfs_fh3 fh = {{0}};
	nfstime3 wrong = {1, 2};
	fattr3 fa;
	sattr3 sa;

	assert_int_equal(t_create(t, &t->root, "s", 0600, &fh), NFS3_OK);
	assert_int_equal(t_write(t, &fh, 0, "0123456789", 10, FILE_SYNC), NFS3_OK);
	memset(&sa, 0, sizeof(sa));
	sa.mode.set_it = TRUE;
	sa.mode.set_mode3_u.mode = 0640;
	sa.size.set_it = TRUE;
	sa.size.set_size3_u.size = 4;
	sa.mtime.set_it = SET_TO_CLIENT_TIME;
	sa.mtime.set_mtime_u.mtime.seconds = 1000000;
	sa.mtime.set_mtime_u.mtime.nseconds = 5;
	assert_int_equal(setattr(t, &fh, &sa, NULL), NFS3_OK);
	assert_int_equal(t_getattr(t, &fh, &fa), NFS3_OK);
	assert_int_equal(fa.mode, 0640);
	assert_int_equal(fa.size, 4);
	assert_int_equal(fa.mtime.seconds, 1000000);
	assert_int_equal(fa.mtime.nseconds, 5);
	/* the guard: a wrong ctime is NOT_SYNC and changes nothing, the right one works */
	sa.size.set_it = FALSE;
	sa.mode.set_mode3_u.mode = 0604;
	sa.mtime.set_it = DONT_CHANGE;
	assert_int_equal(setattr(t, &fh, &sa, &wrong), NFS3ERR_NOT_SYNC);
	assert_int_equal(setattr(t, &fh, &sa, &fa.ctime), NFS3_OK);
	assert_int_equal(t_getattr(t, &fh, &fa), NFS3_OK);
	assert_int_equal(fa.mode, 0604);
	/* a size on a directory */
	sa.size.set_it = TRUE;
	assert_int_equal(setattr(t, &t->root, &sa, NULL), NFS3ERR_ISDIR);
	/* nanoseconds past a second: INVAL, and the size asked with it is not applied */
	sa.size.set_size3_u.size = 1;
	sa.mtime.set_it = SET_TO_CLIENT_TIME;
	sa.mtime.set_mtime_u.mtime.nseconds = 1000000000u;
	assert_int_equal(setattr(t, &fh, &sa, NULL), NFS3ERR_INVAL);
	assert_int_equal(t_getattr(t, &fh, &fa), NFS3_OK);
	assert_int_equal(fa.size, 4);
	fh_free(&fh);
}

/* ACCESS of the asked bits. */
static uint32_t access3(struct tenv *t, const nfs_fh3 *fh, uint32_t want, nfsstat3 *st)
{
	ACCESS3args a = {*fh, want};
	ACCESS3res r;
	uint32_t got;

	tcall(t, NFSPROC3_ACCESS, &a, &r);
	*st = r.status;
	got = r.status == NFS3_OK ? r.ACCESS3res_u.resok.access : 0;
	tfree(NFSPROC3_ACCESS, &r);
	return got;
}

/* ACCESS by t's caller (not root, native identities) on an event loop: the
 * kernel's answer `known` if a worker asked for it since fh last changed (0:
 * none is, and the call goes to a worker); another caller's is never known. */
static void access_on_loop(struct tenv *t, const nfs_fh3 *fh, uint32_t want, uint32_t known)
{
	uint32_t uid = t->req.cred.uid, got;
	nfsstat3 st;

	t->req.nowait = 1;
	t->req.would_block = 0;
	got = access3(t, fh, want, &st);
	assert_int_equal(t->req.would_block, !known);
	if (known) {
		assert_int_equal(st, NFS3_OK);
		assert_int_equal(got, known);
		t->req.cred.uid = uid + 1;
		(void)access3(t, fh, want, &st);
		assert_true(t->req.would_block);
		t->req.cred.uid = uid;
	}
	t->req.nowait = t->req.would_block = 0;
}

/* ACCESS: only asked bits come back; another user gets only READ on root's
 * 0644 file; the owner of a 0200 file gets MODIFY and no READ (what the mode
 * bits say, as knfsd answers: a kernel client refuses the open for reading).
 * On an event loop that user's answer is the kernel's, kept until the chmod. */
void access_cases(void **state)
{
	struct tenv *t = *state;
	uint32_t all = ACCESS3_READ | ACCESS3_LOOKUP | ACCESS3_MODIFY | ACCESS3_EXTEND |
		       ACCESS3_DELETE | ACCESS3_EXECUTE;
	nfs_fh3 fh = {{0}};
	nfsstat3 st;
	char path[PATH_MAX + 8];

	snprintf(path, sizeof(path), "%s/a", t->dir);
	assert_int_equal(access3(t, &t->root, all, &st), ACCESS3_READ | ACCESS3_LOOKUP |
								 ACCESS3_MODIFY | ACCESS3_EXTEND |
								 ACCESS3_DELETE);
	assert_int_equal(st, NFS3_OK);
	assert_int_equal(t_create(t, &t->root, "a", 0644, &fh), NFS3_OK);
	/* only bits asked for come back; no x bit: no EXECUTE even for root */
	assert_int_equal(access3(t, &fh, ACCESS3_READ | ACCESS3_EXECUTE, &st), ACCESS3_READ);
	if (geteuid() == 0) {
		t->req.cred.uid = 1000;
		t->req.cred.gid = 1000;
		if (t->conf.identity != NFS_ID_USERSPACE)
			t_settle_ctime(path);
		assert_int_equal(access3(t, &fh, all, &st), ACCESS3_READ);
		if (t->conf.identity != NFS_ID_USERSPACE)
			access_on_loop(t, &fh, all, ACCESS3_READ);
		assert_int_equal(chown(path, 1000, 1000), 0);
		assert_int_equal(chmod(path, 0200), 0);
		if (t->conf.identity != NFS_ID_USERSPACE)
			access_on_loop(t, &fh, all, 0); /* not since the chmod */
		assert_int_equal(access3(t, &fh, all, &st), ACCESS3_MODIFY | ACCESS3_EXTEND);
		t->req.cred.uid = t->req.cred.gid = 0;
	}
	fh_free(&fh);
}

/* READLINK: a symlink's target; INVAL on a directory. */
void readlink_cases(void **state)
{
	struct tenv *t = *state;
	nfs_fh3 fh = {{0}};
	READLINK3args a;
	READLINK3res r;

	assert_int_equal(symlink("some/target", tpath(t, "l")), 0);
	assert_int_equal(t_lookup(t, &t->root, "l", &fh), NFS3_OK);
	a.symlink = fh;
	tcall(t, NFSPROC3_READLINK, &a, &r);
	assert_int_equal(r.status, NFS3_OK);
	assert_string_equal(r.READLINK3res_u.resok.data, "some/target");
	tfree(NFSPROC3_READLINK, &r);
	a.symlink = t->root;
	tcall(t, NFSPROC3_READLINK, &a, &r);
	assert_int_equal(r.status, NFS3ERR_INVAL);
	tfree(NFSPROC3_READLINK, &r);
	fh_free(&fh);
}

/* FSSTAT, FSINFO (rtmax/wtmax from max_io) and PATHCONF. */
void fs_info(void **state)
{
	struct tenv *t = *state;
	FSSTAT3args sa = {t->root};
	FSSTAT3res sr;
	FSINFO3args ia = {t->root};
	FSINFO3res ir;
	PATHCONF3args pa = {t->root};
	PATHCONF3res pr;

	tcall(t, NFSPROC3_FSSTAT, &sa, &sr);
	assert_int_equal(sr.status, NFS3_OK);
	assert_true(sr.FSSTAT3res_u.resok.tbytes >= sr.FSSTAT3res_u.resok.fbytes);
	assert_true(sr.FSSTAT3res_u.resok.fbytes >= sr.FSSTAT3res_u.resok.abytes);
	assert_true(sr.FSSTAT3res_u.resok.tbytes > 0);
	tfree(NFSPROC3_FSSTAT, &sr);
	tcall(t, NFSPROC3_FSINFO, &ia, &ir);
	assert_int_equal(ir.status, NFS3_OK);
	assert_int_equal(ir.FSINFO3res_u.resok.rtmax, 1 << 20);
	assert_int_equal(ir.FSINFO3res_u.resok.wtmax, 1 << 20);
	assert_true(ir.FSINFO3res_u.resok.properties & FSF3_SYMLINK);
	tfree(NFSPROC3_FSINFO, &ir);
	tcall(t, NFSPROC3_PATHCONF, &pa, &pr);
	assert_int_equal(pr.status, NFS3_OK);
	assert_int_equal(pr.PATHCONF3res_u.resok.name_max, 255);
	assert_true(pr.PATHCONF3res_u.resok.linkmax >= 1);
	tfree(NFSPROC3_PATHCONF, &pr);
}

/* errno -> nfsstat3 and status names. */
void errno_mapping(void **state)
{
	assert_int_equal(nfs3_errno_to_stat(ENOENT), NFS3ERR_NOENT);
	assert_int_equal(nfs3_errno_to_stat(EDQUOT), NFS3ERR_DQUOT);
	assert_int_equal(nfs3_errno_to_stat(ENOTEMPTY), NFS3ERR_NOTEMPTY);
	assert_int_equal(nfs3_errno_to_stat(EXDEV), NFS3ERR_XDEV);
	assert_int_equal(nfs3_errno_to_stat(EOPNOTSUPP), NFS3ERR_NOTSUPP);
	assert_int_equal(nfs3_errno_to_stat(ETIMEDOUT), NFS3ERR_JUKEBOX);
	assert_int_equal(nfs3_errno_to_stat(12345), NFS3ERR_IO);
	assert_string_equal(nfs3_stat_name(NFS3ERR_STALE), "NFS3ERR_STALE");
	assert_string_equal(nfs3_stat_name((nfsstat3)4242), "NFS3ERR_?");
}
