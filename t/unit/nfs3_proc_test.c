/*
 * nfs3_proc_test: every NFSv3 procedure over a scratch export, its success
 * and its error cases, each call going through the XDR routines both ways.
 *
 * The cases are in nfs3_proc_test_*.c by topic: attributes and names, reads
 * and writes, directory entries. This file has the fixture, the helper they
 * share (nfs3_proc_test.h) and the case table.
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

/* The same on tmpfs (/dev/shm), where there is one: what the loop writes
 * without waiting (write_nowait); elsewhere as setup. */
static int setup_shm(void **state)
{
	const char *was = getenv("TMPDIR");
	char *keep = was ? strdup(was) : NULL;
	struct stat st;
	int rc;

	if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode))
		setenv("TMPDIR", "/dev/shm", 1);
	rc = setup(state);
	if (keep)
		setenv("TMPDIR", keep, 1);
	else
		unsetenv("TMPDIR");
	free(keep);
	return rc;
}

/* cmocka teardown. */
static int teardown(void **state)
{
	tenv_fini(*state);
	free(*state);
	return 0;
}

/* Write a local file in the scratch export. */
void put_file(struct tenv *t, const char *name, const char *text)
{
	int fd = open(tpath(t, name), O_CREAT | O_TRUNC | O_WRONLY, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
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
		cmocka_unit_test_setup_teardown(write_nowait, setup_shm, teardown),
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
