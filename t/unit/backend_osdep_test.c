/*
 * backend_osdep_test: the platform hooks the backend relies on: identities
 * are per thread (one thread's switch does not leak into another), restore
 * gives the server's identity back (its capabilities too, switch after switch), handles round-trip
 * through open_by_handle, and a file's POSIX ACL is read through an O_PATH fd for the user-space
 * checks, and a read that must not wait reads a file in memory. Needs root: skipped (the whole
 * program, see nfs3_testlib.h) without it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include <sys/acl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/capability.h>

#include "common/base/osdep.h"

/* This thread's effective, permitted and inheritable sets. */
static void caps_now(struct __user_cap_data_struct data[2])
{
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};

	assert_int_equal(syscall(SYS_capget, &hdr, data), 0);
}

/* Whether this thread can open path for reading. */
static int can_read(const char *path)
{
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/* Whether CAP_SYS_RESOURCE is in this thread's effective set. */
static int has_sys_resource(void)
{
	struct __user_cap_data_struct data[2];

	caps_now(data);
	return (data[CAP_SYS_RESOURCE / 32].effective >> (CAP_SYS_RESOURCE % 32)) & 1;
}

struct other {
	pthread_barrier_t switched, done;
	const char *path;
	int result;
};

/* The other thread: wait until main has switched, then create a file. */
static void *other_main(void *arg)
{
	struct other *o = arg;
	int fd;

	pthread_barrier_wait(&o->switched);
	fd = open(o->path, O_CREAT | O_EXCL | O_WRONLY, 0600);
	o->result = fd >= 0 ? 0 : -1;
	if (fd >= 0)
		close(fd);
	pthread_barrier_wait(&o->done);
	return NULL;
}

/* A scratch directory name (made 0777 so uid 1000 may create in it). */
static void scratch(char *dir, size_t len)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, len, "%s/nfsrdma-osdep-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chmod(dir, 0777), 0);
}

/* One thread's identity switch does not reach another; restore undoes it. */
static void identity_is_per_thread(void **state)
{
	char dir[256], mine[300], theirs[300];
	gid_t groups[1] = {1000};
	struct other o;
	pthread_t th;
	int had_sys_resource;
	struct stat st;
	int fd;

	scratch(dir, sizeof(dir));
	snprintf(mine, sizeof(mine), "%s/mine", dir);
	snprintf(theirs, sizeof(theirs), "%s/theirs", dir);
	o.path = theirs;
	had_sys_resource = has_sys_resource();
	pthread_barrier_init(&o.switched, NULL, 2);
	pthread_barrier_init(&o.done, NULL, 2);
	assert_int_equal(pthread_create(&th, NULL, other_main, &o), 0);
	assert_int_equal(osdep_cred_set(1000, 1000, 1, groups), 0);
	fd = open(mine, O_CREAT | O_EXCL | O_WRONLY, 0600);
	pthread_barrier_wait(&o.switched);
	pthread_barrier_wait(&o.done);
	/* as uid 1000 a root-only file is out of reach, and quotas apply */
	assert_false(can_read("/etc/shadow"));
	assert_false(has_sys_resource());
	assert_int_equal(osdep_cred_restore(), 0);
	assert_int_equal(has_sys_resource(), had_sys_resource);
	pthread_join(th, NULL);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(o.result, 0);
	assert_int_equal(stat(mine, &st), 0);
	assert_int_equal(st.st_uid, 1000);
	assert_int_equal(stat(theirs, &st), 0);
	assert_int_equal(st.st_uid, 0);
	/* and root's reach is back */
	assert_true(can_read("/etc/shadow"));
	unlink(mine);
	unlink(theirs);
	rmdir(dir);
	pthread_barrier_destroy(&o.switched);
	pthread_barrier_destroy(&o.done);
}

/* Switches one after the other on one thread: to different callers, from one
 * caller straight to another, and to a root caller of another group. Each
 * non-root caller is without root's reach (a root-only file) and the quota
 * exemption, a root caller keeps both, and each restore gives back exactly
 * the capabilities the thread had before its first switch. */
static void switches_again(void **state)
{
	struct __user_cap_data_struct before[2], now[2];
	char dir[256], secret[300];
	gid_t groups[2] = {1000, 1001};
	uid_t uids[3] = {1000, 1001, 1000};
	int had_sys_resource = has_sys_resource();
	int i, fd;

	scratch(dir, sizeof(dir));
	snprintf(secret, sizeof(secret), "%s/secret", dir);
	fd = open(secret, O_CREAT | O_EXCL | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	caps_now(before);
	for (i = 0; i < 3; i++) {
		assert_int_equal(osdep_cred_set(uids[i], 1000 + (gid_t)i, 2, groups), 0);
		assert_false(can_read(secret));
		assert_false(has_sys_resource());
		assert_int_equal(osdep_cred_restore(), 0);
		caps_now(now);
		assert_memory_equal(now, before, sizeof(before));
		assert_true(can_read(secret));
	}
	/* from one caller to another without a restore between */
	assert_int_equal(osdep_cred_set(1000, 1000, 2, groups), 0);
	assert_int_equal(osdep_cred_set(1001, 1001, 2, groups), 0);
	assert_false(can_read(secret));
	assert_false(has_sys_resource());
	assert_int_equal(osdep_cred_restore(), 0);
	/* root of another group keeps root's reach and its exemption */
	assert_int_equal(osdep_cred_set(0, 1000, 0, NULL), 0);
	assert_int_equal(has_sys_resource(), had_sys_resource);
	assert_true(can_read(secret));
	assert_int_equal(osdep_cred_restore(), 0);
	caps_now(now);
	assert_memory_equal(now, before, sizeof(before));
	unlink(secret);
	rmdir(dir);
}

/* A handle opens the same file; STALE once it is gone; EINVAL when malformed. */
static void handles_round_trip(void **state)
{
	char dir[256], path[300], buf[8];
	struct osdep_fh fh;
	struct stat a, b;
	int root, fd, r;

	scratch(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/f", dir);
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "abc", 3), 3);
	close(fd);
	root = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(root >= 0);
	r = osdep_fh_get(root, "f", &fh);
	assert_int_equal(r, 0);
	assert_true(fh.len > 4 && fh.len <= OSDEP_FH_MAX);
	fd = osdep_fh_open(root, &fh, OSDEP_OPEN_READ);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, sizeof(buf)), 3);
	assert_int_equal(fstat(fd, &a), 0);
	assert_int_equal(stat(path, &b), 0);
	assert_int_equal(a.st_ino, b.st_ino);
	close(fd);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(osdep_fh_open(root, &fh, OSDEP_OPEN_PATH), -ESTALE);
	fh.len = 2;
	assert_int_equal(osdep_fh_open(root, &fh, OSDEP_OPEN_PATH), -EINVAL);
	close(root);
	rmdir(dir);
}

/* osdep_acl_allows reads the ACL of an O_PATH fd: a named user's entry
 * under the mask decides, and a file with none says -ENODATA. */
static void acl_through_path_fd(void **state)
{
	struct perm_ident named = {1000, 1000, 0, NULL}, stranger = {2000, 2000, 0, NULL};
	char dir[256], path[300];
	struct stat st;
	acl_t acl;
	int fd, r;

	scratch(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/f", dir);
	fd = open(path, O_CREAT | O_WRONLY, 0640);
	assert_true(fd >= 0);
	close(fd);
	fd = open(path, O_PATH);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(osdep_acl_allows(fd, &st, &named, PERM_R), -ENODATA);
	acl = acl_from_text("u::rw-,u:1000:rwx,g::r--,m::r-x,o::---");
	assert_non_null(acl);
	r = acl_set_file(path, ACL_TYPE_ACCESS, acl);
	acl_free(acl);
	if (r < 0 && errno == ENOTSUP) {
		print_message("# no POSIX ACLs on %s: the ACL half is not tried\n", dir);
	} else {
		assert_int_equal(r, 0);
		assert_int_equal(fstat(fd, &st), 0);
		assert_int_equal(osdep_acl_allows(fd, &st, &named, PERM_R | PERM_X), 1);
		assert_int_equal(osdep_acl_allows(fd, &st, &named, PERM_W), 0);
		assert_int_equal(osdep_acl_allows(fd, &st, &stranger, PERM_R), 0);
	}
	close(fd);
	unlink(path);
	rmdir(dir);
}

/* A read that must not wait, on a file in memory (tmpfs): the data, and what
 * was learnt about the file system kept for the next read, which gives the
 * same; the end of the file reads short. */
static void pread_nowait_in_memory(void **state)
{
	char path[] = "/dev/shm/nfsrdma-osdep.XXXXXX", buf[16];
	int fd = mkstemp(path), how = 0, learnt;

	if (fd < 0) {
		print_message("# no tmpfs at /dev/shm: not tried\n");
		return;
	}
	unlink(path);
	assert_int_equal(write(fd, "in memory", 9), 9);
	assert_int_equal(osdep_pread_nowait(fd, buf, 6, 3, &how), 6);
	assert_memory_equal(buf, "memory", 6);
	assert_int_not_equal(how, 0);
	learnt = how;
	memset(buf, 0, sizeof(buf));
	assert_int_equal(osdep_pread_nowait(fd, buf, sizeof(buf), 0, &how), 9);
	assert_memory_equal(buf, "in memory", 9);
	assert_int_equal(how, learnt);
	close(fd);
}

/* Run the group (TAP output when CMOCKA_MESSAGE_OUTPUT=TAP). */
int main(void)
{
	if (!osdep_cred_available()) {
		printf("1..0 # SKIP needs root to switch identities and open by handle\n");
		return 0;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(identity_is_per_thread), cmocka_unit_test(switches_again),
		cmocka_unit_test(handles_round_trip),	  cmocka_unit_test(acl_through_path_fd),
		cmocka_unit_test(pread_nowait_in_memory),
	};
	return cmocka_run_group_tests_name("backend_osdep", tests, NULL, NULL);
}
