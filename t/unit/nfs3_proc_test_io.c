/*
 * nfs3_proc_test_io.c: WRITE, READ and COMMIT, a READ into a buffer the
 * transport gives, and a READ or WRITE that must not wait.
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
#include <sys/vfs.h>
#include <linux/magic.h>

#include "t/unit/nfs3_testlib.h"
#include "nfs3_proc_test.h"

/* WRITE returning the result for inspection. */
static void write3(struct tenv *t, const nfs_fh3 *fh, uint64_t off, const char *data, count3 count,
		   stable_how how, WRITE3res *r)
{
	WRITE3args a = {*fh, off, count, how, {(u_int)strlen(data), (char *)data}};

	tcall(t, NFSPROC3_WRITE, &a, r);
}

/* WRITE at each stability level, READ back, COMMIT with the write verifier, errors. */
void read_write_commit(void **state)
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
void read_into_transport_buffer(void **state)
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

/* Run proc with args into res (len bytes, zeroed first); whether it gave up
 * (req->would_block, cleared). The caller frees res (nfs_proc_free_res). */
static int run_gave_up(struct nfs_req *req, int proc, void *args, void *res, size_t len)
{
	int gave_up;

	memset(res, 0, len);
	req->would_block = 0;
	nfs3_procs[proc].fn(req, args, res);
	gave_up = req->would_block;
	req->would_block = 0;
	return gave_up;
}

/* One READ of a; whether the loop gave it up. */
static int read_gave_up(struct nfs_req *req, READ3args *a, nfsstat3 *status)
{
	READ3res r;
	int gave_up = run_gave_up(req, NFSPROC3_READ, a, &r, sizeof(r));

	*status = r.status;
	nfs_proc_free_res(&nfs3_procs[NFSPROC3_READ], req, &r);
	return gave_up;
}

/* read_nowait, native identities, uid 1000 not the owner of the file a
 * names: once a worker's READ was let through by the kernel, the loop serves
 * the same caller's next READs (where it served root's: served); another
 * caller, or the same after a chmod,
 * goes to a worker again, and the kernel's refusal stands there. */
static void read_nowait_granted(struct tenv *t, struct nfs_req *req, READ3args *a, struct tbuf *b,
				int served)
{
	char path[PATH_MAX + 8];
	nfsstat3 st;

	snprintf(path, sizeof(path), "%s/nw", t->dir);
	t_settle_ctime(path);
	req->nowait = 0;
	assert_false(read_gave_up(req, a, &st));
	assert_int_equal(st, NFS3_OK);
	req->nowait = 1;
	b->calls = 0;
	if (served) { /* as root's was */
		assert_false(read_gave_up(req, a, &st));
		assert_int_equal(st, NFS3_OK);
		assert_int_equal(b->calls, 1);
	}
	req->cred.uid = 1001; /* not the caller the kernel answered */
	assert_true(read_gave_up(req, a, &st));
	req->cred.uid = 1000;
	assert_int_equal(chmod(path, 0600), 0); /* the answer no longer holds */
	assert_true(read_gave_up(req, a, &st));
	req->nowait = 0;
	assert_false(read_gave_up(req, a, &st));
	assert_int_equal(st, NFS3ERR_ACCES);
	req->nowait = 1;
	assert_true(read_gave_up(req, a, &st));
	assert_int_equal(chmod(path, 0644), 0);
}

/* READ on an event loop (nowait, server.inline_calls): served there only when
 * nothing waits; a large READ, or a caller who needs an identity switch and
 * whom the kernel has not yet let read the file, gives up (would_block) and
 * is run again by a worker. */
void read_nowait(void **state)
{
	struct tenv *t = *state;
	const struct nfs_proc *d = &nfs3_procs[NFSPROC3_READ];
	struct nfs_req req = t->req;
	struct tbuf b = {.calls = 0};
	nfs_fh3 fh = {{0}};
	READ3args a;
	READ3res r;
	int served;

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
	if ((served = !req.would_block)) {
		assert_int_equal(r.status, NFS3_OK);
		assert_int_equal(r.READ3res_u.resok.count, 10);
		assert_memory_equal(b.data, "no waiting", 10);
	}
	nfs_proc_free_res(d, &req, &r);
	/* more than 128 KiB is never a loop's */
	req.would_block = 0;
	a.count = 132 * 1024;
	memset(&r, 0, sizeof(r));
	d->fn(&req, &a, &r);
	assert_true(req.would_block);
	nfs_proc_free_res(d, &req, &r);
	/* a caller who is not root: the loop never takes on an identity; with
	 * userspace checks there is none to take on, and the call stays */
	req.would_block = 0;
	req.cred.uid = 1000;
	req.cred.gid = 1000;
	a.count = 100;
	b.calls = 0;
	memset(&r, 0, sizeof(r));
	d->fn(&req, &a, &r);
	if (t->conf.identity == NFS_ID_USERSPACE) {
		assert_true(req.would_block || r.status == NFS3_OK);
	} else {
		assert_true(req.would_block);
		assert_int_equal(b.calls, 0); /* before any buffer was taken */
		read_nowait_granted(t, &req, &a, &b, served);
	}
	nfs_proc_free_res(d, &req, &r);
	fh_free(&fh);
}

/* One WRITE of a, on an event loop (nowait) or a worker; whether it gave up
 * (would_block), else *status. */
static int write_run(struct nfs_req *req, WRITE3args *a, int nowait, nfsstat3 *status)
{
	WRITE3res r;
	int gave_up;

	req->nowait = nowait;
	gave_up = run_gave_up(req, NFSPROC3_WRITE, a, &r, sizeof(r));
	req->nowait = 0;
	*status = r.status;
	if (!gave_up && r.status == NFS3_OK) {
		assert_int_equal(r.WRITE3res_u.resok.count, a->count);
		assert_int_equal(r.WRITE3res_u.resok.committed, UNSTABLE);
		assert_true(r.WRITE3res_u.resok.file_wcc.after.attributes_follow);
	}
	nfs_proc_free_res(&nfs3_procs[NFSPROC3_WRITE], req, &r);
	return gave_up;
}

/* The same on an event loop. */
static int write_gave_up(struct nfs_req *req, WRITE3args *a, nfsstat3 *status)
{
	return write_run(req, a, 1, status);
}

/* write_nowait, native identities, uid 1000, a UNSTABLE: the loop writes
 * for a caller who needs a switch only where writing as the server changes
 * nothing (in_memory: tmpfs without quotas), and there only for the file's
 * owner (whatever the mode, as be_io_allowed), never a file with a set-id
 * bit; uid 0 with any group needs no switch. Anything else goes to a
 * worker, where the kernel's refusal stands. Ends with a written. */
static void write_nowait_granted(struct tenv *t, struct nfs_req *req, WRITE3args *a, int in_memory)
{
	const char *path = tpath(t, "wn");
	nfsstat3 st;

	assert_true(write_gave_up(req, a, &st)); /* 0644, root's */
	assert_false(write_run(req, a, 0, &st));
	assert_int_equal(st, NFS3ERR_ACCES);
	assert_int_equal(chmod(path, 0666), 0); /* the kernel would let it: still a worker's */
	assert_true(write_gave_up(req, a, &st));
	assert_int_equal(chown(path, 1000, 1000), 0);
	assert_int_equal(chmod(path, 0444), 0);
	assert_int_equal(write_gave_up(req, a, &st), !in_memory); /* the owner */
	if (!in_memory)
		assert_false(write_run(req, a, 0, &st));
	assert_int_equal(st, NFS3_OK);
	req->cred.uid = 1001;
	assert_true(write_gave_up(req, a, &st));
	req->cred.uid = 1000;
	assert_int_equal(chmod(path, 02664), 0);
	assert_true(write_gave_up(req, a, &st)); /* set-group-ID */
	assert_int_equal(chmod(path, 04644), 0);
	assert_true(write_gave_up(req, a, &st)); /* set-user-ID */
	req->cred.uid = 0; /* root with another group: root's rights, no switch */
	if (in_memory)
		assert_false(write_gave_up(req, a, &st));
	req->cred.uid = 1000;
	assert_int_equal(chown(path, 0, 0), 0);
	assert_int_equal(chmod(path, 0644), 0);
}

/* WRITE on an event loop: served there when it is UNSTABLE, at most 128 KiB,
 * and the file system takes it without waiting (tmpfs always: it keeps
 * everything in memory; a disk file system only where Linux takes
 * RWF_NOWAIT for buffered writes), by a caller who needs no identity switch
 * or one allowed as write_nowait_granted says; anything else gives up
 * before it writes, and a worker runs it. */
void write_nowait(void **state)
{
	struct tenv *t = *state;
	static char big[132 * 1024];
	struct nfs_req req = t->req;
	nfs_fh3 fh = {{0}};
	struct statfs fs;
	WRITE3args a;
	nfsstat3 st;
	char buf[16];
	int fd, in_memory;

	put_file(t, "wn", "0123456789");
	assert_int_equal(t_lookup(t, &t->root, "wn", &fh), NFS3_OK);
	assert_int_equal(statfs(t->dir, &fs), 0);
	in_memory = fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC;
	a = (WRITE3args){fh, 2, 3, UNSTABLE, {3, (char *)"abc"}};
	/* no descriptor open to write yet: opening by handle is a worker's */
	assert_true(write_gave_up(&req, &a, &st));
	assert_int_equal(t_write(t, &fh, 0, "0", 1, UNSTABLE), NFS3_OK); /* caches it */
	if (in_memory)
		assert_false(write_gave_up(&req, &a, &st));
	else if (write_gave_up(&req, &a, &st))
		assert_int_equal(t_write(t, &fh, 2, "abc", 3, UNSTABLE), NFS3_OK);
	assert_int_equal(st, NFS3_OK);
	/* a stable WRITE syncs, a long one copies long: neither writes there */
	a = (WRITE3args){fh, 5, 3, FILE_SYNC, {3, (char *)"XYZ"}};
	assert_true(write_gave_up(&req, &a, &st));
	a.stable = DATA_SYNC;
	assert_true(write_gave_up(&req, &a, &st));
	a = (WRITE3args){fh, 0, sizeof(big), UNSTABLE, {sizeof(big), big}};
	assert_true(write_gave_up(&req, &a, &st));
	a = (WRITE3args){fh, 5, 3, UNSTABLE, {3, (char *)"XYZ"}};
	req.cred.uid = req.cred.gid = 1000;
	if (t->conf.identity != NFS_ID_USERSPACE) {
		write_nowait_granted(t, &req, &a, in_memory);
	} else {
		if (!write_gave_up(&req, &a, &st)) /* checked as the caller's: 0644, root's */
			assert_int_equal(st, NFS3ERR_ACCES);
		a.data.data_val = (char *)"567";
	}
	fd = open(tpath(t, "wn"), O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, sizeof(buf)), 10);
	assert_memory_equal(buf, "01abc", 5);
	assert_memory_equal(buf + 5, a.data.data_val, 3);
	close(fd);
	fh_free(&fh);
}
