/*
 * nfs3_testlib.c: see nfs3_testlib.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <sys/stat.h>

#include "common/base/osdep.h"
#include "t/unit/nfs3_testlib.h"

/* See nfs3_testlib.h. */
void tenv_require_root(void)
{
	const char *tmp = getenv("TMPDIR");
	char dir[PATH_MAX];
	struct osdep_fh fh;
	int fd, r;

	if (!osdep_cred_available()) {
		printf("1..0 # SKIP needs root: the backend switches to callers' identities\n");
		exit(0);
	}
	snprintf(dir, sizeof(dir), "%s/nfsrdma-probe-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL) {
		printf("1..0 # SKIP cannot make a scratch directory under %s\n", dir);
		exit(0);
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	r = fd < 0 ? -errno : osdep_fh_get(fd, "", &fh);
	if (r == 0 && (r = osdep_fh_open(fd, &fh, OSDEP_OPEN_PATH)) >= 0) {
		close(r);
		r = 0;
	}
	if (fd >= 0)
		close(fd);
	rmdir(dir);
	if (r < 0) {
		printf("1..0 # SKIP no file handles on %s here: %s\n", dir, strerror(-r));
		exit(0);
	}
}

/* See nfs3_testlib.h. */
void tenv_init(struct tenv *t)
{
	const char *tmp = getenv("TMPDIR");

	memset(t, 0, sizeof(*t));
	snprintf(t->dir, sizeof(t->dir), "%s/nfsrdma-be-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(t->dir));
	assert_int_equal(chmod(t->dir, 0755), 0);
	t->conf.path = t->dir;
	t->conf.anon_uid = t->conf.anon_gid = 65534;
	assert_true(strlen(t->dir) + 7 <= sizeof(t->index_dir));
	memcpy(t->index_dir, t->dir, strlen(t->dir));
	strcpy(t->index_dir + strlen(t->dir), ".index");
	t->conf.handle_index_dir = t->index_dir;
	if (getenv("NFSRDMA_TEST_HANDLES") &&
	    strcmp(getenv("NFSRDMA_TEST_HANDLES"), "portable") == 0)
		t->conf.handles = NFS_FH_PORTABLE;
	if (getenv("NFSRDMA_TEST_IDENTITY") &&
	    strcmp(getenv("NFSRDMA_TEST_IDENTITY"), "userspace") == 0)
		t->conf.identity = NFS_ID_USERSPACE;
	memcpy(t->fh_key, "nfs3 test handle key, 32 bytes..", 32);
	t->client.sin_family = AF_INET;
	t->client.sin_port = htons(700);
	inet_pton(AF_INET, "192.0.2.1", &t->client.sin_addr);
	t->req.client = (const struct sockaddr *)&t->client;
	t->req.client_len = sizeof(t->client);
	t->req.cred.flavor = NFS_AUTH_SYS;
}

/* MNT the export and keep its root handle. */
static int mount_root(struct tenv *t)
{
	char *path = t->dir;
	mountres3 res;

	tcall_mnt(t, MOUNTPROC3_MNT, &path, &res);
	if (res.fhs_status != MNT3_OK) {
		tfree_mnt(MOUNTPROC3_MNT, &res);
		return -EACCES;
	}
	fh_free(&t->root);
	t->root.data.data_len = res.mountres3_u.mountinfo.fhandle.fhandle3_len;
	t->root.data.data_val = malloc(t->root.data.data_len);
	memcpy(t->root.data.data_val, res.mountres3_u.mountinfo.fhandle.fhandle3_val,
	       t->root.data.data_len);
	tfree_mnt(MOUNTPROC3_MNT, &res);
	return 0;
}

/* See nfs3_testlib.h. */
int tenv_start(struct tenv *t)
{
	int r = nfs_backend_create(&t->conf, 1, 1 << 20, &t->be);

	if (r < 0)
		return r;
	if ((r = nfs_backend_set_handle_key(t->be, t->fh_key, 32)) < 0)
		return r;
	t->req.be = t->be;
	return mount_root(t);
}

/* Wire buffers whose decoded results the test may still read; freed at tenv_fini. */
static char **kept;
static size_t nkept;

/* See nfs3_testlib.h. */
int tenv_restart(struct tenv *t)
{
	nfs_backend_destroy(t->be);
	t->be = NULL;
	return tenv_start(t);
}

/* nftw callback: remove one entry. */
static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path) < 0 ? -1 : 0;
}

/* See nfs3_testlib.h. */
void tenv_fini(struct tenv *t)
{
	nfs_backend_destroy(t->be);
	t->be = NULL;
	while (nkept)
		free(kept[--nkept]);
	free(kept);
	kept = NULL;
	fh_free(&t->root);
	nftw(t->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	nftw(t->index_dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Encode obj with proc into a fresh buffer and decode it into out. READ and
 * WRITE data decode in place (nfs3_ddpdata), so the buffer is returned for the
 * caller to free once out is no longer used. */
static char *xdr_round_trip(xdrproc_t proc, void *obj, void *out, size_t size)
{
	unsigned long len = xdr_sizeof(proc, obj);
	char *buf = malloc(len ? len : 4);
	XDR x;

	assert_non_null(buf);
	xdrmem_create(&x, buf, (u_int)len, XDR_ENCODE);
	assert_true(proc(&x, obj));
	xdr_destroy(&x);
	memset(out, 0, size);
	xdrmem_create(&x, buf, (u_int)len, XDR_DECODE);
	assert_true(proc(&x, out));
	assert_int_equal(xdr_getpos(&x), len);
	xdr_destroy(&x);
	return buf;
}

static void keep(char *buf)
{
	char **k = realloc(kept, (nkept + 1) * sizeof(*kept));

	assert_non_null(k);
	kept = k;
	kept[nkept++] = buf;
}

/* Drive one procedure of a table the way the RPC layer does. */
static void run(const struct nfs_proc *p, struct nfs_req *req, void *args, void *res)
{
	const struct rpc_proc_desc *d = p->wire;
	void *a = calloc(1, d->args_size + 1), *r = calloc(1, d->res_size + 1);
	char *abuf = NULL;

	assert_non_null(a);
	assert_non_null(r);
	if (d->args_size)
		abuf = xdr_round_trip(d->xdr_args, args, a, d->args_size);
	p->fn(req, a, r);
	if (d->res_size)
		keep(xdr_round_trip(d->xdr_res, r, res, d->res_size));
	nfs_proc_free_res(p, req, r);
	if (d->args_size)
		xdr_free(d->xdr_args, a);
	free(abuf);
	free(a);
	free(r);
}

/* See nfs3_testlib.h. */
void t_settle_ctime(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	while (time(NULL) <= st.st_ctim.tv_sec + 1)
		usleep(50000);
}

/* See nfs3_testlib.h. */
void tcall_req(struct tenv *t, struct nfs_req *req, int proc, void *args, void *res)
{
	assert_in_range(proc, 0, NFS3_NPROCS - 1);
	run(&nfs3_procs[proc], req, args, res);
}

/* See nfs3_testlib.h. */
void tcall(struct tenv *t, int proc, void *args, void *res)
{
	tcall_req(t, &t->req, proc, args, res);
}

/* See nfs3_testlib.h. */
void tfree(int proc, void *res)
{
	xdr_free(nfs3_xdr_procs[proc].xdr_res, res);
}

/* See nfs3_testlib.h. */
void tcall_mnt(struct tenv *t, int proc, void *args, void *res)
{
	assert_in_range(proc, 0, MOUNT3_NPROCS - 1);
	run(&mount3_procs[proc], &t->req, args, res);
}

/* See nfs3_testlib.h. */
void tfree_mnt(int proc, void *res)
{
	if (mount3_xdr_procs[proc].res_size)
		xdr_free(mount3_xdr_procs[proc].xdr_res, res);
}

/* See nfs3_testlib.h. */
void fh_copy(nfs_fh3 *dst, const nfs_fh3 *src)
{
	dst->data.data_len = src->data.data_len;
	dst->data.data_val = malloc(src->data.data_len ? src->data.data_len : 1);
	assert_non_null(dst->data.data_val);
	memcpy(dst->data.data_val, src->data.data_val, src->data.data_len);
}

/* See nfs3_testlib.h. */
void fh_free(nfs_fh3 *fh)
{
	free(fh->data.data_val);
	fh->data.data_val = NULL;
	fh->data.data_len = 0;
}

/* See nfs3_testlib.h. */
nfsstat3 t_lookup(struct tenv *t, const nfs_fh3 *dir, const char *name, nfs_fh3 *out)
{
	LOOKUP3args a = {{*dir, (char *)name}};
	LOOKUP3res r;
	nfsstat3 st;

	tcall(t, NFSPROC3_LOOKUP, &a, &r);
	st = r.status;
	if (st == NFS3_OK && out)
		fh_copy(out, &r.LOOKUP3res_u.resok.object);
	tfree(NFSPROC3_LOOKUP, &r);
	return st;
}

/* See nfs3_testlib.h. */
nfsstat3 t_create(struct tenv *t, const nfs_fh3 *dir, const char *name, uint32_t mode, nfs_fh3 *out)
{
	CREATE3args a;
	CREATE3res r;
	nfsstat3 st;

	memset(&a, 0, sizeof(a));
	a.where.dir = *dir;
	a.where.name = (char *)name;
	a.how.mode = GUARDED;
	a.how.createhow3_u.obj_attributes.mode.set_it = TRUE;
	a.how.createhow3_u.obj_attributes.mode.set_mode3_u.mode = mode;
	tcall(t, NFSPROC3_CREATE, &a, &r);
	st = r.status;
	if (st == NFS3_OK && out) {
		assert_true(r.CREATE3res_u.resok.obj.handle_follows);
		fh_copy(out, &r.CREATE3res_u.resok.obj.post_op_fh3_u.handle);
	}
	tfree(NFSPROC3_CREATE, &r);
	return st;
}

/* See nfs3_testlib.h. */
nfsstat3 t_mkdir(struct tenv *t, const nfs_fh3 *dir, const char *name, nfs_fh3 *out)
{
	MKDIR3args a;
	MKDIR3res r;
	nfsstat3 st;

	memset(&a, 0, sizeof(a));
	a.where.dir = *dir;
	a.where.name = (char *)name;
	a.attributes.mode.set_it = TRUE;
	a.attributes.mode.set_mode3_u.mode = 0755;
	tcall(t, NFSPROC3_MKDIR, &a, &r);
	st = r.status;
	if (st == NFS3_OK && out)
		fh_copy(out, &r.MKDIR3res_u.resok.obj.post_op_fh3_u.handle);
	tfree(NFSPROC3_MKDIR, &r);
	return st;
}

/* See nfs3_testlib.h. */
nfsstat3 t_write(struct tenv *t, const nfs_fh3 *fh, uint64_t off, const void *data, size_t len,
		 stable_how how)
{
	WRITE3args a = {*fh, off, (count3)len, how, {(u_int)len, (char *)data}};
	WRITE3res r;
	nfsstat3 st;

	tcall(t, NFSPROC3_WRITE, &a, &r);
	st = r.status;
	if (st == NFS3_OK)
		assert_int_equal(r.WRITE3res_u.resok.count, len);
	tfree(NFSPROC3_WRITE, &r);
	return st;
}

/* See nfs3_testlib.h. */
nfsstat3 t_read(struct tenv *t, const nfs_fh3 *fh, uint64_t off, void *buf, size_t len, size_t *got)
{
	READ3args a = {*fh, off, (count3)len};
	READ3res r;
	nfsstat3 st;

	tcall(t, NFSPROC3_READ, &a, &r);
	st = r.status;
	*got = 0;
	if (st == NFS3_OK) {
		assert_true(r.READ3res_u.resok.data.data_len <= len);
		*got = r.READ3res_u.resok.data.data_len;
		if (*got)
			memcpy(buf, r.READ3res_u.resok.data.data_val, *got);
	}
	tfree(NFSPROC3_READ, &r);
	return st;
}

/* See nfs3_testlib.h. */
nfsstat3 t_remove(struct tenv *t, const nfs_fh3 *dir, const char *name)
{
	REMOVE3args a = {.object = {*dir, (char *)name}};
	REMOVE3res r;
	nfsstat3 st;

	tcall(t, NFSPROC3_REMOVE, &a, &r);
	st = r.status;
	tfree(NFSPROC3_REMOVE, &r);
	return st;
}

/* See nfs3_testlib.h. */
nfsstat3 t_rename(struct tenv *t, const nfs_fh3 *dir, const char *from, const char *to)
{
	RENAME3args a = {.from = {*dir, (char *)from}, .to = {*dir, (char *)to}};
	RENAME3res r;
	nfsstat3 st;

	tcall(t, NFSPROC3_RENAME, &a, &r);
	st = r.status;
	tfree(NFSPROC3_RENAME, &r);
	return st;
}

/* See nfs3_testlib.h. */
nfsstat3 t_getattr(struct tenv *t, const nfs_fh3 *fh, fattr3 *out)
{
	GETATTR3args a = {*fh};
	GETATTR3res r;
	nfsstat3 st;

	tcall(t, NFSPROC3_GETATTR, &a, &r);
	st = r.status;
	if (st == NFS3_OK && out)
		*out = r.GETATTR3res_u.resok.obj_attributes;
	tfree(NFSPROC3_GETATTR, &r);
	return st;
}

/* See nfs3_testlib.h. */
const char *tpath(struct tenv *t, const char *name)
{
	static char buf[PATH_MAX + 256];

	snprintf(buf, sizeof(buf), "%s/%s", t->dir, name);
	return buf;
}
