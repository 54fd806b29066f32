/*
 * nfs3_security_test: the export rules on every kind of call: read-only
 * exports, client access lists, integrity, root squash, anonymous callers,
 * and the caller's own identity deciding file access: mode bits, groups,
 * ACLs, sticky and set-group-ID directories, who may chmod. The same
 * answers with the kernel checking (native identity) and with the server
 * checking (NFSRDMA_TEST_IDENTITY=userspace). Needs root (skipped without
 * it, see nfs3_testlib.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <sys/acl.h>
#include <sys/stat.h>

#include "t/unit/nfs3_testlib.h"

/* Access list matcher for the tests: the acl is one IPv4 address. */
static int allow_one(const void *acl, const struct sockaddr *sa)
{
	const struct in_addr *ok = acl;

	return sa->sa_family == AF_INET &&
	       ((const struct sockaddr_in *)sa)->sin_addr.s_addr == ok->s_addr;
}

/* Start t; with a file "f" (0644, root's, "secret") made before. */
static void start_with_file(struct tenv *t)
{
	int fd = open(tpath(t, "f"), O_CREAT | O_WRONLY, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "secret", 6), 6);
	close(fd);
	assert_int_equal(tenv_start(t), 0);
}

/* A read-only export serves reads and refuses every change with ROFS. */
static void read_only_export(void **state)
{
	struct tenv t;
	nfs_fh3 fh = {{0}};
	char buf[16];
	size_t got;
	SETATTR3args sa;
	SETATTR3res sr;
	REMOVE3args ra;
	REMOVE3res rr;
	COMMIT3args ca;
	COMMIT3res cr;

	tenv_init(&t);
	t.conf.ro = 1;
	start_with_file(&t);
	assert_int_equal(t_lookup(&t, &t.root, "f", &fh), NFS3_OK);
	assert_int_equal(t_read(&t, &fh, 0, buf, sizeof(buf), &got), NFS3_OK);
	assert_int_equal(got, 6);
	assert_int_equal(t_write(&t, &fh, 0, "x", 1, FILE_SYNC), NFS3ERR_ROFS);
	assert_int_equal(t_create(&t, &t.root, "new", 0644, NULL), NFS3ERR_ROFS);
	assert_int_equal(t_mkdir(&t, &t.root, "d", NULL), NFS3ERR_ROFS);
	memset(&sa, 0, sizeof(sa));
	sa.object = fh;
	sa.new_attributes.mode.set_it = TRUE;
	sa.new_attributes.mode.set_mode3_u.mode = 0777;
	tcall(&t, NFSPROC3_SETATTR, &sa, &sr);
	assert_int_equal(sr.status, NFS3ERR_ROFS);
	tfree(NFSPROC3_SETATTR, &sr);
	ra.object.dir = t.root;
	ra.object.name = "f";
	tcall(&t, NFSPROC3_REMOVE, &ra, &rr);
	assert_int_equal(rr.status, NFS3ERR_ROFS);
	tfree(NFSPROC3_REMOVE, &rr);
	memset(&ca, 0, sizeof(ca));
	ca.file = fh;
	tcall(&t, NFSPROC3_COMMIT, &ca, &cr);
	assert_int_equal(cr.status, NFS3ERR_ROFS);
	tfree(NFSPROC3_COMMIT, &cr);
	fh_free(&fh);
	tenv_fini(&t);
}

/* A client the access list refuses gets ACCES on every call and on MNT. */
static void client_not_allowed(void **state)
{
	struct in_addr only;
	struct tenv t;
	nfs_fh3 fh = {{0}};
	char *path;
	mountres3 mr;

	tenv_init(&t);
	inet_pton(AF_INET, "192.0.2.1", &only);
	t.conf.acl = &only;
	t.conf.client_allowed = allow_one;
	start_with_file(&t);
	assert_int_equal(t_lookup(&t, &t.root, "f", &fh), NFS3_OK);
	/* another client: every call refused, the mount too */
	inet_pton(AF_INET, "198.51.100.7", &t.client.sin_addr);
	assert_int_equal(t_getattr(&t, &t.root, NULL), NFS3ERR_ACCES);
	assert_int_equal(t_lookup(&t, &t.root, "f", NULL), NFS3ERR_ACCES);
	assert_int_equal(t_write(&t, &fh, 0, "x", 1, UNSTABLE), NFS3ERR_ACCES);
	path = t.dir;
	tcall_mnt(&t, MOUNTPROC3_MNT, &path, &mr);
	assert_int_equal(mr.fhs_status, MNT3ERR_ACCES);
	tfree_mnt(MOUNTPROC3_MNT, &mr);
	/* no address at all: refused where there is a list */
	t.req.client = NULL;
	assert_int_equal(t_getattr(&t, &t.root, NULL), NFS3ERR_ACCES);
	fh_free(&fh);
	tenv_fini(&t);
}

/* An export that requires integrity refuses calls (and MNT) without it. */
static void integrity_required(void **state)
{
	struct tenv t;

	tenv_init(&t);
	t.conf.integrity_required = 1;
	t.req.integrity_ok = 1;
	start_with_file(&t);
	assert_int_equal(t_getattr(&t, &t.root, NULL), NFS3_OK);
	t.req.integrity_ok = 0;
	assert_int_equal(t_getattr(&t, &t.root, NULL), NFS3ERR_ACCES);
	assert_int_equal(t_lookup(&t, &t.root, "f", NULL), NFS3ERR_ACCES);
	assert_int_equal(tenv_restart(&t), -EACCES); /* MNT refused too */
	tenv_fini(&t);
}

/* Owner uid of a file in the export. */
static uid_t owner_of(struct tenv *t, const char *name)
{
	struct stat st;

	assert_int_equal(lstat(tpath(t, name), &st), 0);
	return st.st_uid;
}

/* root_squash: root becomes the anonymous ids for access and ownership. */
static void root_squash(void **state)
{
	struct tenv t;
	nfs_fh3 fh = {{0}};
	char buf[16];
	size_t got;

	tenv_init(&t);
	t.conf.root_squash = 1;
	start_with_file(&t);
	assert_int_equal(chmod(tpath(&t, "f"), 0600), 0);
	assert_int_equal(t_lookup(&t, &t.root, "f", &fh), NFS3_OK);
	/* root is nobody here: root's 0600 file is out of reach */
	assert_int_equal(t_read(&t, &fh, 0, buf, sizeof(buf), &got), NFS3ERR_ACCES);
	assert_int_equal(t_write(&t, &fh, 0, "x", 1, UNSTABLE), NFS3ERR_ACCES);
	/* and what it creates belongs to the anonymous ids (the root is 0777 for that) */
	assert_int_equal(chmod(t.dir, 0777), 0);
	assert_int_equal(t_create(&t, &t.root, "made", 0644, NULL), NFS3_OK);
	assert_int_equal(owner_of(&t, "made"), 65534);
	/* a non-root caller is not squashed */
	t.req.cred.uid = 1234;
	t.req.cred.gid = 1234;
	assert_int_equal(t_mkdir(&t, &t.root, "mine", NULL), NFS3_OK);
	assert_int_equal(owner_of(&t, "mine"), 1234);
	fh_free(&fh);
	tenv_fini(&t);
}

/* AUTH_NONE callers get the anonymous ids whatever the cred says. */
static void auth_none_is_anonymous(void **state)
{
	struct tenv t;

	tenv_init(&t);
	t.conf.anon_uid = 4321;
	t.conf.anon_gid = 4321;
	start_with_file(&t);
	assert_int_equal(chmod(t.dir, 0777), 0);
	t.req.cred.flavor = NFS_AUTH_NONE; /* uid 0 in the cred is ignored */
	assert_int_equal(t_create(&t, &t.root, "anon", 0644, NULL), NFS3_OK);
	assert_int_equal(owner_of(&t, "anon"), 4321);
	tenv_fini(&t);
}

/* The caller's uid and groups decide access; the owner may write its 0444 file. */
static void caller_identity_decides(void **state)
{
	struct tenv t;
	nfs_fh3 fh = {{0}}, mine = {{0}};
	char buf[16];
	size_t got;

	tenv_init(&t);
	start_with_file(&t);
	assert_int_equal(t_lookup(&t, &t.root, "f", &fh), NFS3_OK);
	t.req.cred.uid = 1000;
	t.req.cred.gid = 1000;
	/* root's 0644 file: readable, not writable; root's 0755 dir: no creating */
	assert_int_equal(t_read(&t, &fh, 0, buf, sizeof(buf), &got), NFS3_OK);
	assert_int_equal(t_write(&t, &fh, 0, "x", 1, UNSTABLE), NFS3ERR_ACCES);
	assert_int_equal(t_create(&t, &t.root, "no", 0644, NULL), NFS3ERR_ACCES);
	/* a supplementary group that owns a group-writable file is enough */
	assert_int_equal(chown(tpath(&t, "f"), 0, 77), 0);
	assert_int_equal(chmod(tpath(&t, "f"), 0664), 0);
	t.req.cred.ngids = 2;
	t.req.cred.gids[0] = 1000;
	t.req.cred.gids[1] = 77;
	assert_int_equal(t_write(&t, &fh, 0, "S", 1, UNSTABLE), NFS3_OK);
	t.req.cred.ngids = 0;
	/* the owner may write its own file even without a w bit (as knfsd allows) */
	assert_int_equal(chmod(t.dir, 0777), 0);
	assert_int_equal(t_create(&t, &t.root, "ro-own", 0444, &mine), NFS3_OK);
	assert_int_equal(owner_of(&t, "ro-own"), 1000);
	assert_int_equal(t_write(&t, &mine, 0, "ok", 2, FILE_SYNC), NFS3_OK);
	/* the server's own identity is back after each call */
	assert_int_equal(open(tpath(&t, "f"), O_RDONLY) >= 0, 1);
	fh_free(&fh);
	fh_free(&mine);
	tenv_fini(&t);
}

/* A caller's WRITE clears the set-uid bit, as a local write would. */
static void write_clears_setuid(void **state)
{
	struct tenv t;
	nfs_fh3 fh = {{0}};
	struct stat st;

	tenv_init(&t);
	start_with_file(&t);
	assert_int_equal(chown(tpath(&t, "f"), 1000, 1000), 0);
	assert_int_equal(chmod(tpath(&t, "f"), 04755), 0);
	assert_int_equal(t_lookup(&t, &t.root, "f", &fh), NFS3_OK);
	t.req.cred.uid = 1000;
	t.req.cred.gid = 1000;
	assert_int_equal(t_write(&t, &fh, 0, "x", 1, UNSTABLE), NFS3_OK);
	assert_int_equal(stat(tpath(&t, "f"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	fh_free(&fh);
	tenv_fini(&t);
}

/* SETATTR of the mode as the current caller. */
static nfsstat3 chmod_as(struct tenv *t, const nfs_fh3 *fh, uint32_t mode)
{
	SETATTR3args a = {.object = *fh};
	SETATTR3res r;
	nfsstat3 st;

	a.new_attributes.mode.set_it = TRUE;
	a.new_attributes.mode.set_mode3_u.mode = mode;
	tcall(t, NFSPROC3_SETATTR, &a, &r);
	st = r.status;
	tfree(NFSPROC3_SETATTR, &r);
	return st;
}

static void as_user(struct tenv *t, uint32_t uid, uint32_t gid)
{
	t->req.cred.uid = uid;
	t->req.cred.gid = gid;
	t->req.cred.ngids = 0;
}

/* A sticky directory keeps others' files from a caller; a set-group-ID one
 * gives its group to what is made in it, and its bit to directories; only
 * the owner may chmod, and a set-group-ID bit for a group the caller is not
 * in is dropped. */
static void sticky_setgid_chmod(void **state)
{
	nfs_fh3 tmp = {{0}}, sg = {{0}}, a = {{0}}, b = {{0}};
	struct tenv t;
	struct stat st;

	tenv_init(&t);
	assert_int_equal(mkdir(tpath(&t, "tmp"), 0777), 0);
	assert_int_equal(chmod(tpath(&t, "tmp"), 01777), 0);
	assert_int_equal(mkdir(tpath(&t, "sg"), 0777), 0);
	assert_int_equal(chown(tpath(&t, "sg"), 0, 77), 0);
	assert_int_equal(chmod(tpath(&t, "sg"), 02777), 0);
	assert_int_equal(tenv_start(&t), 0);
	assert_int_equal(t_lookup(&t, &t.root, "tmp", &tmp), NFS3_OK);
	assert_int_equal(t_lookup(&t, &t.root, "sg", &sg), NFS3_OK);
	as_user(&t, 1000, 1000);
	assert_int_equal(t_create(&t, &tmp, "a", 0666, &a), NFS3_OK);
	assert_int_equal(owner_of(&t, "tmp/a"), 1000);
	as_user(&t, 2000, 2000);
	assert_int_equal(t_remove(&t, &tmp, "a"), NFS3ERR_PERM);
	assert_int_equal(chmod_as(&t, &a, 0600), NFS3ERR_PERM);
	assert_int_equal(t_remove(&t, &tmp, "missing"), NFS3ERR_NOENT);
	as_user(&t, 1000, 1000);
	assert_int_equal(chmod_as(&t, &a, 02644), NFS3_OK);
	assert_int_equal(stat(tpath(&t, "tmp/a"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 02644); /* its own group */
	assert_int_equal(t_remove(&t, &tmp, "a"), NFS3_OK);
	assert_int_equal(t_create(&t, &sg, "b", 0644, &b), NFS3_OK);
	assert_int_equal(stat(tpath(&t, "sg/b"), &st), 0);
	assert_int_equal(st.st_uid, 1000);
	assert_int_equal(st.st_gid, 77);
	/* a set-group-ID bit the owner may not have on group 77 is dropped */
	assert_int_equal(chmod_as(&t, &b, 02644), NFS3_OK);
	assert_int_equal(stat(tpath(&t, "sg/b"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	t.req.cred.ngids = 1;
	t.req.cred.gids[0] = 77;
	assert_int_equal(chmod_as(&t, &b, 02644), NFS3_OK);
	assert_int_equal(stat(tpath(&t, "sg/b"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 02644);
	/* a directory made in it keeps the set-group-ID it inherits (knfsd
	 * makes it with the mode; Linux's mkdir gives it the bit) */
	assert_int_equal(t_mkdir(&t, &sg, "d", NULL), NFS3_OK);
	assert_int_equal(stat(tpath(&t, "sg/d"), &st), 0);
	assert_int_equal(st.st_gid, 77);
	assert_int_equal(st.st_mode & 07777, 02755);
	as_user(&t, 0, 0);
	assert_int_equal(t_mkdir(&t, &sg, "r", NULL), NFS3_OK);
	assert_int_equal(stat(tpath(&t, "sg/r"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 02755);
	fh_free(&tmp);
	fh_free(&sg);
	fh_free(&a);
	fh_free(&b);
	tenv_fini(&t);
}

/* A POSIX ACL decides where it is set: a named user's entry gives write
 * to a file whose mode bits give it nothing, and search of a 0700 root
 * directory. */
static void acl_decides(void **state)
{
	nfs_fh3 fh = {{0}}, priv = {{0}}, in = {{0}};
	struct tenv t;
	acl_t acl;
	int r;

	tenv_init(&t);
	start_with_file(&t);
	assert_int_equal(chmod(tpath(&t, "f"), 0600), 0);
	assert_int_equal(mkdir(tpath(&t, "priv"), 0700), 0);
	assert_int_equal(mkdir(tpath(&t, "priv/in"), 0755), 0);
	assert_int_equal(t_lookup(&t, &t.root, "f", &fh), NFS3_OK);
	assert_int_equal(t_lookup(&t, &t.root, "priv", &priv), NFS3_OK);
	as_user(&t, 1000, 1000);
	assert_int_equal(t_write(&t, &fh, 0, "x", 1, UNSTABLE), NFS3ERR_ACCES);
	assert_int_equal(t_lookup(&t, &priv, "in", &in), NFS3ERR_ACCES);
	acl = acl_from_text("u::rw-,u:1000:rw-,g::---,m::rw-,o::---");
	assert_non_null(acl);
	r = acl_set_file(tpath(&t, "f"), ACL_TYPE_ACCESS, acl);
	acl_free(acl);
	if (r < 0 && errno == ENOTSUP) {
		print_message("# no POSIX ACLs under %s: the ACL half is not tried\n", t.dir);
	} else {
		assert_int_equal(r, 0);
		acl = acl_from_text("u::rwx,u:1000:--x,g::---,m::--x,o::---");
		assert_int_equal(acl_set_file(tpath(&t, "priv"), ACL_TYPE_ACCESS, acl), 0);
		acl_free(acl);
		assert_int_equal(t_write(&t, &fh, 0, "x", 1, UNSTABLE), NFS3_OK);
		assert_int_equal(t_lookup(&t, &priv, "in", &in), NFS3_OK);
		as_user(&t, 2000, 2000);
		assert_int_equal(t_write(&t, &fh, 0, "x", 1, UNSTABLE), NFS3ERR_ACCES);
	}
	fh_free(&fh);
	fh_free(&priv);
	fh_free(&in);
	tenv_fini(&t);
}

/* Run the group (TAP output when CMOCKA_MESSAGE_OUTPUT=TAP). */
int main(void)
{
	tenv_require_root();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(read_only_export),
		cmocka_unit_test(client_not_allowed),
		cmocka_unit_test(integrity_required),
		cmocka_unit_test(root_squash),
		cmocka_unit_test(auth_none_is_anonymous),
		cmocka_unit_test(caller_identity_decides),
		cmocka_unit_test(write_clears_setuid),
		cmocka_unit_test(sticky_setgid_chmod),
		cmocka_unit_test(acl_decides),
	};
	return cmocka_run_group_tests_name("nfs3_security", tests, NULL, NULL);
}
