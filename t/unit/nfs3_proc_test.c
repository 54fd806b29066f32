/*
 * nfs3_proc_test: every NFSv3 procedure over a scratch export, its success
 * and its error cases, each call going through the XDR routines both ways.
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

/* cmocka setup: a started scratch export per test. */
static int setup(void **state)
{
	struct tenv *t = calloc(1, sizeof(*t));

	tenv_init(t);
	if (tenv_start(t) < 0) {
		tenv_fini(t);
		free(t);
		return -1;
	}
	*state = t;
	return 0;
}

/* cmocka teardown. */
static int teardown(void **state)
{
	tenv_fini(*state);
	free(*state);
	return 0;
}

/* Write a local file in the scratch export. */
static void put_file(struct tenv *t, const char *name, const char *text)
{
	int fd = open(tpath(t, name), O_CREAT | O_TRUNC | O_WRONLY, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* NULL answers; GETATTR of the root gives a directory with the export id as fsid. */
static void null_and_getattr(void **state)
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
static void lookup_cases(void **state)
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
static void setattr_cases(void **state)
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

/* ACCESS: only asked bits come back; another user gets only READ on root's
 * 0644 file; the owner of a 0200 file gets MODIFY and no READ (what the mode
 * bits say, as knfsd answers: a kernel client refuses the open for reading). */
static void access_cases(void **state)
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
		assert_int_equal(access3(t, &fh, all, &st), ACCESS3_READ);
		assert_int_equal(chown(path, 1000, 1000), 0);
		assert_int_equal(chmod(path, 0200), 0);
		assert_int_equal(access3(t, &fh, all, &st), ACCESS3_MODIFY | ACCESS3_EXTEND);
		t->req.cred.uid = t->req.cred.gid = 0;
	}
	fh_free(&fh);
}

/* READLINK: a symlink's target; INVAL on a directory. */
static void readlink_cases(void **state)
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

/* WRITE returning the result for inspection. */
static void write3(struct tenv *t, const nfs_fh3 *fh, uint64_t off, const char *data, count3 count,
		   stable_how how, WRITE3res *r)
{
	WRITE3args a = {*fh, off, count, how, {(u_int)strlen(data), (char *)data}};

	tcall(t, NFSPROC3_WRITE, &a, r);
}

/* WRITE at each stability level, READ back, COMMIT with the write verifier, errors. */
static void read_write_commit(void **state)
{
	struct tenv *t = *state;
	unsigned char verf[8];
	char buf[64];
	nfs_fh3 fh = {{0}};
	COMMIT3args ca;
	COMMIT3res cr;
	WRITE3res r;
	size_t got;

	nfs_backend_write_verf(t->be, verf);
	assert_int_equal(t_create(t, &t->root, "rw", 0644, &fh), NFS3_OK);
	for (int how = UNSTABLE; how <= FILE_SYNC; how++) {
		write3(t, &fh, (uint64_t)how * 4, "abcd", 4, (stable_how)how, &r);
		assert_int_equal(r.status, NFS3_OK);
		assert_int_equal(r.WRITE3res_u.resok.committed, how);
		assert_memory_equal(r.WRITE3res_u.resok.verf, verf, 8);
		assert_true(r.WRITE3res_u.resok.file_wcc.before.attributes_follow);
		assert_int_equal(r.WRITE3res_u.resok.file_wcc.after.post_op_attr_u.attributes.size,
				 (uint64_t)how * 4 + 4);
		tfree(NFSPROC3_WRITE, &r);
	}
	assert_int_equal(t_read(t, &fh, 2, buf, sizeof(buf), &got), NFS3_OK);
	assert_int_equal(got, 10);
	assert_memory_equal(buf, "cdabcdabcd", 10);
	assert_int_equal(t_read(t, &fh, 100, buf, sizeof(buf), &got), NFS3_OK);
	assert_int_equal(got, 0);
	/* count larger than the data sent */
	write3(t, &fh, 0, "ab", 10, UNSTABLE, &r);
	assert_int_equal(r.status, NFS3ERR_INVAL);
	tfree(NFSPROC3_WRITE, &r);
	assert_int_equal(t_read(t, &t->root, 0, buf, 8, &got), NFS3ERR_ISDIR);
	assert_int_equal(t_write(t, &t->root, 0, "x", 1, UNSTABLE), NFS3ERR_ISDIR);
	ca.file = fh;
	ca.offset = 0;
	ca.count = 0;
	tcall(t, NFSPROC3_COMMIT, &ca, &cr);
	assert_int_equal(cr.status, NFS3_OK);
	assert_memory_equal(cr.COMMIT3res_u.resok.verf, verf, 8);
	tfree(NFSPROC3_COMMIT, &cr);
	ca.file = t->root;
	tcall(t, NFSPROC3_COMMIT, &ca, &cr);
	assert_int_equal(cr.status, NFS3ERR_ISDIR);
	tfree(NFSPROC3_COMMIT, &cr);
	if (geteuid() == 0) {
		/* a caller who may not write root's 0644 file may not commit it either */
		ca.file = fh;
		t->req.cred.uid = t->req.cred.gid = 1000;
		tcall(t, NFSPROC3_COMMIT, &ca, &cr);
		assert_int_equal(cr.status, NFS3ERR_ACCES);
		tfree(NFSPROC3_COMMIT, &cr);
		t->req.cred.uid = t->req.cred.gid = 0;
	}
	fh_free(&fh);
}

/* A transport-owned READ buffer. */
struct tbuf {
	char data[256];
	int calls;
};

/* get_buf for read_into_transport_buffer. */
static void *give_buf(void *opaque, size_t len)
{
	struct tbuf *b = opaque;

	b->calls++;
	return len <= sizeof(b->data) ? b->data : NULL;
}

/* READ into a buffer from get_buf, which free_res leaves alone; none: JUKEBOX. */
static void read_into_transport_buffer(void **state)
{
	struct tenv *t = *state;
	const struct nfs_proc *d = &nfs3_procs[NFSPROC3_READ];
	struct nfs_req req = t->req;
	struct tbuf b = {.calls = 0};
	nfs_fh3 fh = {{0}};
	READ3args a;
	READ3res r;

	put_file(t, "tb", "transport");
	assert_int_equal(t_lookup(t, &t->root, "tb", &fh), NFS3_OK);
	req.get_buf = give_buf;
	req.buf_opaque = &b;
	a.file = fh;
	a.offset = 0;
	a.count = 100;
	memset(&r, 0, sizeof(r));
	d->fn(&req, &a, &r);
	assert_int_equal(r.status, NFS3_OK);
	assert_int_equal(b.calls, 1);
	assert_ptr_equal(r.READ3res_u.resok.data.data_val, b.data);
	assert_int_equal(r.READ3res_u.resok.count, 9);
	assert_true(r.READ3res_u.resok.eof);
	assert_memory_equal(b.data, "transport", 9);
	/* freeing leaves the transport's buffer alone (ASan would see a bad free) */
	nfs_proc_free_res(d, &req, &r);
	/* no buffer from the transport: JUKEBOX, the client retries */
	a.count = 1000;
	memset(&r, 0, sizeof(r));
	d->fn(&req, &a, &r);
	assert_int_equal(r.status, NFS3ERR_JUKEBOX);
	nfs_proc_free_res(d, &req, &r);
	fh_free(&fh);
}

/* READ on an event loop (nowait, server.inline_calls): served there only when
 * nothing waits; a large READ or a caller who needs an identity switch gives
 * up (would_block) and is run again by a worker. */
static void read_nowait(void **state)
{
	struct tenv *t = *state;
	const struct nfs_proc *d = &nfs3_procs[NFSPROC3_READ];
	struct nfs_req req = t->req;
	struct tbuf b = {.calls = 0};
	nfs_fh3 fh = {{0}};
	READ3args a;
	READ3res r;

	put_file(t, "nw", "no waiting");
	assert_int_equal(t_lookup(t, &t->root, "nw", &fh), NFS3_OK);
	req.get_buf = give_buf;
	req.buf_opaque = &b;
	req.nowait = 1;
	a.file = fh;
	a.offset = 0;
	a.count = 100;
	/* no READ descriptor cached yet: opening by handle is a worker's */
	memset(&r, 0, sizeof(r));
	d->fn(&req, &a, &r);
	assert_true(req.would_block);
	assert_int_equal(b.calls, 0);
	nfs_proc_free_res(d, &req, &r);
	req.nowait = req.would_block = 0; /* the worker's run caches it */
	memset(&r, 0, sizeof(r));
	d->fn(&req, &a, &r);
	assert_int_equal(r.status, NFS3_OK);
	nfs_proc_free_res(d, &req, &r);
	req.nowait = 1;
	/* root: from the page cache, or (a file system without RWF_NOWAIT) given up */
	memset(&r, 0, sizeof(r));
	d->fn(&req, &a, &r);
	if (!req.would_block) {
		assert_int_equal(r.status, NFS3_OK);
		assert_int_equal(r.READ3res_u.resok.count, 10);
		assert_memory_equal(b.data, "no waiting", 10);
	}
	nfs_proc_free_res(d, &req, &r);
	/* more than 64 KiB is never a loop's */
	req.would_block = 0;
	a.count = 128 * 1024;
	memset(&r, 0, sizeof(r));
	d->fn(&req, &a, &r);
	assert_true(req.would_block);
	nfs_proc_free_res(d, &req, &r);
	/* a caller who is not root: the loop never takes on an identity */
	req.would_block = 0;
	req.cred.uid = 1000;
	req.cred.gid = 1000;
	a.count = 100;
	b.calls = 0;
	memset(&r, 0, sizeof(r));
	d->fn(&req, &a, &r);
	assert_true(req.would_block);
	assert_int_equal(b.calls, 0); /* before any buffer was taken */
	nfs_proc_free_res(d, &req, &r);
	fh_free(&fh);
}

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
static void create_modes(void **state)
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
static void mkdir_rmdir(void **state)
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
static void symlink_mknod(void **state)
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
static void remove_makes_stale(void **state)
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
static void rename_link(void **state)
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
static void readdir_small(void **state)
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
static void readdirplus_handles(void **state)
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

/* FSSTAT, FSINFO (rtmax/wtmax from max_io) and PATHCONF. */
static void fs_info(void **state)
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
static void errno_mapping(void **state)
{
	assert_int_equal(nfs3_errno_to_stat(ENOENT), NFS3ERR_NOENT);
	assert_int_equal(nfs3_errno_to_stat(EDQUOT), NFS3ERR_DQUOT);
	assert_int_equal(nfs3_errno_to_stat(ENOTEMPTY), NFS3ERR_NOTEMPTY);
	assert_int_equal(nfs3_errno_to_stat(EXDEV), NFS3ERR_XDEV);
	assert_int_equal(nfs3_errno_to_stat(EOPNOTSUPP), NFS3ERR_NOTSUPP);
	assert_int_equal(nfs3_errno_to_stat(12345), NFS3ERR_IO);
	assert_string_equal(nfs3_stat_name(NFS3ERR_STALE), "NFS3ERR_STALE");
	assert_string_equal(nfs3_stat_name((nfsstat3)4242), "NFS3ERR_?");
}

/* Run the group (TAP output when CMOCKA_MESSAGE_OUTPUT=TAP). */
int main(void)
{
	tenv_require_root();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(null_and_getattr, setup, teardown),
		cmocka_unit_test_setup_teardown(lookup_cases, setup, teardown),
		cmocka_unit_test_setup_teardown(setattr_cases, setup, teardown),
		cmocka_unit_test_setup_teardown(access_cases, setup, teardown),
		cmocka_unit_test_setup_teardown(readlink_cases, setup, teardown),
		cmocka_unit_test_setup_teardown(read_write_commit, setup, teardown),
		cmocka_unit_test_setup_teardown(read_into_transport_buffer, setup, teardown),
		cmocka_unit_test_setup_teardown(read_nowait, setup, teardown),
		cmocka_unit_test_setup_teardown(create_modes, setup, teardown),
		cmocka_unit_test_setup_teardown(mkdir_rmdir, setup, teardown),
		cmocka_unit_test_setup_teardown(symlink_mknod, setup, teardown),
		cmocka_unit_test_setup_teardown(remove_makes_stale, setup, teardown),
		cmocka_unit_test_setup_teardown(rename_link, setup, teardown),
		cmocka_unit_test_setup_teardown(readdir_small, setup, teardown),
		cmocka_unit_test_setup_teardown(readdirplus_handles, setup, teardown),
		cmocka_unit_test_setup_teardown(fs_info, setup, teardown),
		cmocka_unit_test(errno_mapping),
	};
	return cmocka_run_group_tests_name("nfs3_proc", tests, NULL, NULL);
}
