/*
 * backend_fh_test: file handles and the fd cache. Forged handles (every bit
 * flipped, wrong export, wrong length, wrong version) get BADHANDLE or STALE,
 * never a crash or another object; a restart keeps handles valid and changes
 * the write verifier; bad export settings are refused; the fd cache stays
 * within its bound and keeps held fds open.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include <sys/stat.h>

#include "server/backend_int.h"
#include "server/fhcache.h"
#include "t/unit/nfs3_testlib.h"

/* GETATTR straight into the procedure (no XDR: the handle may break its caps). */
static nfsstat3 raw_getattr(struct tenv *t, const void *fh, size_t len, fattr3 *fa)
{
	GETATTR3args a;
	GETATTR3res r;

	memset(&r, 0, sizeof(r));
	a.object.data.data_val = (char *)fh;
	a.object.data.data_len = (u_int)len;
	nfs3_procs[NFSPROC3_GETATTR].fn(&t->req, &a, &r);
	if (r.status == NFS3_OK && fa)
		*fa = r.GETATTR3res_u.resok.obj_attributes;
	nfs_proc_free_res(&nfs3_procs[NFSPROC3_GETATTR], &t->req, &r);
	return r.status;
}

/* Every bit flip, length, export id and version of a handle is refused; so is
 * a platform handle with a header but no MAC of ours, and a handle made under
 * another key. */
static void forged_handles(void **state)
{
	unsigned char buf[NFS3_FHSIZE + 8];
	struct tenv t;
	nfs_fh3 fh = {{0}};
	fattr3 good, fa;
	size_t len;
	nfsstat3 st;

	tenv_init(&t);
	assert_int_equal(tenv_start(&t), 0);
	assert_int_equal(t_create(&t, &t.root, "victim", 0644, &fh), NFS3_OK);
	len = fh.data.data_len;
	assert_true(len > 8 && len <= NFS3_FHSIZE);
	assert_int_equal(raw_getattr(&t, fh.data.data_val, len, &good), NFS3_OK);
	/* every single bit flipped: refused (the MAC covers all of it) */
	for (size_t bit = 0; bit < len * 8; bit++) {
		memcpy(buf, fh.data.data_val, len);
		buf[bit / 8] ^= (unsigned char)(1u << (bit % 8));
		st = raw_getattr(&t, buf, len, &fa);
		assert_true(st == NFS3ERR_BADHANDLE || st == NFS3ERR_STALE);
	}
	/* the platform handle of the export's root, as a client could forge it
	 * (ext4's is inode 2, generation 0), with a made-up MAC */
	memcpy(buf, fh.data.data_val, BE_FH_HDR);
	buf[1] = (unsigned char)t.be->exports[0].root_fh.len;
	memcpy(buf + BE_FH_HDR, t.be->exports[0].root_fh.data, buf[1]);
	memset(buf + BE_FH_HDR + buf[1], 0, BE_FH_MAC);
	assert_int_equal(raw_getattr(&t, buf, BE_FH_HDR + buf[1] + BE_FH_MAC, NULL), NFS3ERR_STALE);
	/* the right handle under another key */
	t.fh_key[0] ^= 1;
	assert_int_equal(nfs_backend_set_handle_key(t.be, t.fh_key, 32), 0);
	assert_int_equal(raw_getattr(&t, fh.data.data_val, len, NULL), NFS3ERR_STALE);
	t.fh_key[0] ^= 1;
	assert_int_equal(nfs_backend_set_handle_key(t.be, t.fh_key, 32), 0);
	assert_int_equal(raw_getattr(&t, fh.data.data_val, len, NULL), NFS3_OK);
	/* every length but the right one */
	memcpy(buf, fh.data.data_val, len);
	memset(buf + len, 0, sizeof(buf) - len);
	for (size_t l = 0; l <= sizeof(buf); l++)
		if (l != len)
			assert_int_equal(raw_getattr(&t, buf, l, NULL), NFS3ERR_BADHANDLE);
	assert_int_equal(raw_getattr(&t, NULL, 0, NULL), NFS3ERR_BADHANDLE);
	/* another export id: stale, not this export's object */
	buf[7] ^= 0x5a;
	assert_int_equal(raw_getattr(&t, buf, len, NULL), NFS3ERR_STALE);
	buf[7] ^= 0x5a;
	buf[0] = 1; /* a version we do not speak (1: before handles had a MAC) */
	assert_int_equal(raw_getattr(&t, buf, len, NULL), NFS3ERR_BADHANDLE);
	fh_free(&fh);
	tenv_fini(&t);
}

/* A restart keeps handles and the export id, and changes the write verifier. */
static void restart_keeps_handles(void **state)
{
	unsigned char v1[8], v2[8];
	struct tenv t;
	nfs_fh3 fh = {{0}}, dir = {{0}};
	char buf[16];
	size_t got;
	uint32_t id;

	tenv_init(&t);
	assert_int_equal(tenv_start(&t), 0);
	id = nfs_backend_export_id(t.be, 0);
	assert_int_equal(t_mkdir(&t, &t.root, "d", &dir), NFS3_OK);
	assert_int_equal(t_create(&t, &dir, "f", 0644, &fh), NFS3_OK);
	assert_int_equal(t_write(&t, &fh, 0, "before", 6, UNSTABLE), NFS3_OK);
	nfs_backend_write_verf(t.be, v1);
	assert_int_equal(tenv_restart(&t), 0);
	nfs_backend_write_verf(t.be, v2);
	assert_memory_not_equal(v1, v2, 8);
	assert_int_equal(nfs_backend_export_id(t.be, 0), id);
	assert_int_equal(t_read(&t, &fh, 0, buf, sizeof(buf), &got), NFS3_OK);
	assert_int_equal(got, 6);
	assert_memory_equal(buf, "before", 6);
	assert_int_equal(t_lookup(&t, &dir, "f", NULL), NFS3_OK);
	/* with another handle key, the old handles are stale */
	t.fh_key[5] ^= 0x40;
	assert_int_equal(tenv_restart(&t), 0);
	assert_int_equal(t_getattr(&t, &fh, NULL), NFS3ERR_STALE);
	t.fh_key[5] ^= 0x40;
	assert_int_equal(tenv_restart(&t), 0);
	assert_int_equal(t_getattr(&t, &fh, NULL), NFS3_OK);
	/* a configured fsid replaces the path hash */
	t.conf.fsid = 0xabcd;
	assert_int_equal(tenv_restart(&t), 0);
	assert_int_equal(nfs_backend_export_id(t.be, 0), 0xabcd);
	assert_int_equal(t_getattr(&t, &fh, NULL), NFS3ERR_STALE); /* old id: unknown export */
	fh_free(&fh);
	fh_free(&dir);
	tenv_fini(&t);
}

/* Relative or missing paths, a bad max_io and duplicate ids are refused. */
static void bad_exports_refused(void **state)
{
	struct nfs_export_conf c[2];
	struct nfs_backend *be = NULL;
	struct tenv t;

	tenv_init(&t);
	memset(c, 0, sizeof(c));
	c[0].path = "relative/path";
	assert_int_equal(nfs_backend_create(c, 1, 1 << 20, &be), -EINVAL);
	assert_null(be);
	c[0].path = "/nonexistent/nfsrdma/export";
	assert_int_equal(nfs_backend_create(c, 1, 1 << 20, &be), -ENOENT);
	c[0].path = t.dir;
	assert_int_equal(nfs_backend_create(c, 1, 100, &be), -EINVAL); /* max_io too small */
	c[1] = c[0];
	c[0].fsid = c[1].fsid = 7; /* one id twice */
	assert_int_equal(nfs_backend_create(c, 2, 1 << 20, &be), -EINVAL);
	c[1].fsid = 8;
	assert_int_equal(nfs_backend_create(c, 2, 1 << 20, &be), 0);
	assert_int_equal(nfs_backend_export_id(be, 1), 8);
	nfs_backend_destroy(be);
	tenv_fini(&t);
}

/* MNT path on t's backend; the root handle into out. */
static void mnt_root(struct tenv *t, char *path, nfs_fh3 *out)
{
	mountres3 r;

	tcall_mnt(t, MOUNTPROC3_MNT, &path, &r);
	assert_int_equal(r.fhs_status, MNT3_OK);
	out->data.data_len = r.mountres3_u.mountinfo.fhandle.fhandle3_len;
	out->data.data_val = malloc(out->data.data_len);
	memcpy(out->data.data_val, r.mountres3_u.mountinfo.fhandle.fhandle3_val,
	       out->data.data_len);
	tfree_mnt(MOUNTPROC3_MNT, &r);
}

/* RENAME and LINK between two exports are XDEV. */
static void rename_link_across_exports(void **state)
{
	struct nfs_export_conf c[2];
	struct tenv a, b;
	nfs_fh3 ra = {{0}}, rb = {{0}}, f = {{0}};
	RENAME3args rn;
	RENAME3res rr;
	LINK3args ln;
	LINK3res lr;

	tenv_init(&a);
	tenv_init(&b);
	memset(c, 0, sizeof(c));
	c[0].path = a.dir;
	c[1].path = b.dir;
	assert_int_equal(nfs_backend_create(c, 2, 1 << 20, &a.be), 0);
	a.req.be = a.be;
	assert_int_not_equal(nfs_backend_export_id(a.be, 0), nfs_backend_export_id(a.be, 1));
	mnt_root(&a, a.dir, &ra);
	mnt_root(&a, b.dir, &rb);
	assert_memory_not_equal(ra.data.data_val, rb.data.data_val, 8);
	assert_int_equal(t_create(&a, &ra, "x", 0644, &f), NFS3_OK);
	rn.from.dir = ra;
	rn.from.name = "x";
	rn.to.dir = rb;
	rn.to.name = "y";
	tcall(&a, NFSPROC3_RENAME, &rn, &rr);
	assert_int_equal(rr.status, NFS3ERR_XDEV);
	tfree(NFSPROC3_RENAME, &rr);
	ln.file = f;
	ln.link.dir = rb;
	ln.link.name = "y";
	tcall(&a, NFSPROC3_LINK, &ln, &lr);
	assert_int_equal(lr.status, NFS3ERR_XDEV);
	tfree(NFSPROC3_LINK, &lr);
	fh_free(&ra);
	fh_free(&rb);
	fh_free(&f);
	tenv_fini(&b);
	tenv_fini(&a);
}

/* The fd cache keeps its bound, and held or forgotten entries keep their fd. */
static void fhcache_bound_and_refs(void **state)
{
	struct fhcache *c = fhcache_create(4);
	struct fhc_entry *held, *e;
	char key[8];
	int fd;

	assert_non_null(c);
	fd = open("/dev/null", O_RDONLY);
	held = fhcache_insert(c, "held", 4, 0, fd);
	assert_non_null(held);
	for (int i = 0; i < 20; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		e = fhcache_insert(c, key, strlen(key), 0, open("/dev/null", O_RDONLY));
		assert_non_null(e);
		fhcache_put(c, e);
		assert_true(fhcache_count(c) <= 5);
	}
	/* the held entry survived eviction and its fd is open */
	assert_true(fcntl(held->fd, F_GETFD) >= 0);
	/* kinds are separate keys; a second insert of a key returns the first entry */
	assert_null(fhcache_get(c, "held", 4, 1));
	e = fhcache_insert(c, "held", 4, 0, open("/dev/null", O_RDONLY));
	assert_ptr_equal(e, held);
	fhcache_put(c, e);
	/* forgetting a held entry keeps its fd until the last put */
	fhcache_forget(c, "held", 4);
	assert_null(fhcache_get(c, "held", 4, 0));
	assert_true(fcntl(fd, F_GETFD) >= 0);
	fhcache_put(c, held);
	assert_true(fcntl(fd, F_GETFD) < 0);
	fhcache_destroy(c);
}

/* A cache with a closer: objects go to it, idle ones expire, held ones not. */
static int closed[4];

static void count_close(void *arg, int fd, void *obj)
{
	assert_ptr_equal(arg, closed);
	assert_int_equal(fd, -1);
	closed[(int *)obj - closed]++;
}

static void fhcache_closer_and_expiry(void **state)
{
	struct fhcache *c = fhcache_create_with(4, count_close, closed);
	struct fhc_entry *idle, *held, *e;

	(void)state;
	memset(closed, 0, sizeof(closed));
	assert_non_null(c);
	idle = fhcache_insert_obj(c, "a", 1, 0, &closed[0]);
	held = fhcache_insert_obj(c, "b", 1, 0, &closed[1]);
	assert_non_null(idle);
	assert_non_null(held);
	assert_ptr_equal(held->obj, &closed[1]);
	/* a second insert of a key closes the newcomer */
	e = fhcache_insert_obj(c, "a", 1, 0, &closed[2]);
	assert_ptr_equal(e, idle);
	assert_int_equal(closed[2], 1);
	fhcache_put(c, e);
	fhcache_put(c, idle);
	assert_int_equal(fhcache_expire(c, 60000), 0);
	usleep(30000);
	/* the idle one goes, the held one stays however old */
	assert_int_equal(fhcache_expire(c, 20), 1);
	assert_int_equal(closed[0], 1);
	assert_int_equal(closed[1], 0);
	assert_int_equal(fhcache_count(c), 1);
	assert_null(fhcache_get(c, "a", 1, 0));
	fhcache_put(c, held);
	assert_int_equal(fhcache_expire(c, 60000), 0);
	fhcache_destroy(c);
	assert_int_equal(closed[1], 1);
}

/* Run the group (TAP output when CMOCKA_MESSAGE_OUTPUT=TAP). */
int main(void)
{
	tenv_require_root();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(forged_handles),
		cmocka_unit_test(restart_keeps_handles),
		cmocka_unit_test(bad_exports_refused),
		cmocka_unit_test(rename_link_across_exports),
		cmocka_unit_test(fhcache_bound_and_refs),
		cmocka_unit_test(fhcache_closer_and_expiry),
	};
	return cmocka_run_group_tests_name("backend_fh", tests, NULL, NULL);
}
