/*
 * mount3_test: MOUNT v3 over a scratch export: MNT gives the root handle and
 * the flavors, unknown paths are NOENT, the mount list follows MNT, UMNT and
 * UMNTALL per client, and EXPORT lists every export with its clients.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>
#include <arpa/inet.h>

#include "t/unit/nfs3_testlib.h"

/* MNT path, returning the status. */
static mountstat3 mnt(struct tenv *t, const char *path, mountres3 *keep)
{
	char *p = (char *)path;
	mountres3 r;
	mountstat3 st;

	tcall_mnt(t, MOUNTPROC3_MNT, &p, &r);
	st = r.fhs_status;
	if (keep)
		*keep = r;
	else
		tfree_mnt(MOUNTPROC3_MNT, &r);
	return st;
}

/* Entries in the DUMP list; how many are for host. */
static int dump(struct tenv *t, const char *host, int *for_host)
{
	mountlist list = NULL;
	int n = 0;

	*for_host = 0;
	tcall_mnt(t, MOUNTPROC3_DUMP, NULL, &list);
	for (mountlist m = list; m; m = m->ml_next) {
		n++;
		assert_string_equal(m->ml_directory, t->dir);
		if (strcmp(m->ml_hostname, host) == 0)
			(*for_host)++;
	}
	tfree_mnt(MOUNTPROC3_DUMP, &list);
	return n;
}

/* MNT, DUMP, UMNT and UMNTALL keep the mount list per client. */
static void mnt_dump_umnt(void **state)
{
	char slashed[PATH_MAX + 2];
	struct tenv t;
	mountres3 r;
	char *p;
	int mine;

	tenv_init(&t);
	assert_int_equal(tenv_start(&t), 0); /* MNTs from 192.0.2.1 */
	tcall_mnt(&t, MOUNTPROC3_NULL, NULL, NULL);
	assert_int_equal(mnt(&t, t.dir, &r), MNT3_OK);
	assert_int_equal(r.mountres3_u.mountinfo.fhandle.fhandle3_len, t.root.data.data_len);
	assert_memory_equal(r.mountres3_u.mountinfo.fhandle.fhandle3_val, t.root.data.data_val,
			    t.root.data.data_len);
	assert_int_equal(r.mountres3_u.mountinfo.auth_flavors.auth_flavors_len, 1);
	assert_int_equal(r.mountres3_u.mountinfo.auth_flavors.auth_flavors_val[0], NFS_AUTH_SYS);
	tfree_mnt(MOUNTPROC3_MNT, &r);
	snprintf(slashed, sizeof(slashed), "%s//", t.dir);
	assert_int_equal(mnt(&t, slashed, NULL), MNT3_OK);
	assert_int_equal(mnt(&t, "/no/such/export", NULL), MNT3ERR_NOENT);
	assert_int_equal(mnt(&t, "", NULL), MNT3ERR_NOENT);
	assert_int_equal(dump(&t, "192.0.2.1", &mine), 1); /* recorded once */
	assert_int_equal(mine, 1);
	inet_pton(AF_INET, "192.0.2.2", &t.client.sin_addr);
	assert_int_equal(mnt(&t, t.dir, NULL), MNT3_OK);
	assert_int_equal(dump(&t, "192.0.2.2", &mine), 2);
	assert_int_equal(mine, 1);
	p = t.dir;
	tcall_mnt(&t, MOUNTPROC3_UMNT, &p, NULL);
	assert_int_equal(dump(&t, "192.0.2.2", &mine), 1);
	assert_int_equal(mine, 0);
	inet_pton(AF_INET, "192.0.2.1", &t.client.sin_addr);
	tcall_mnt(&t, MOUNTPROC3_UMNTALL, NULL, NULL);
	assert_int_equal(dump(&t, "192.0.2.1", &mine), 0);
	tenv_fini(&t);
}

/* EXPORT lists the export with its client names as groups. */
static void export_list(void **state)
{
	const char *clients[] = {"192.0.2.0/24", "host.example"};
	struct tenv t;
	mntexports list = NULL;
	int n = 0;

	tenv_init(&t);
	t.conf.clients = clients;
	t.conf.nclients = 2;
	assert_int_equal(tenv_start(&t), 0);
	tcall_mnt(&t, MOUNTPROC3_EXPORT, NULL, &list);
	for (mntexports e = list; e; e = e->ex_next) {
		n++;
		assert_string_equal(e->ex_dir, t.dir);
		assert_non_null(e->ex_groups);
		assert_string_equal(e->ex_groups->gr_name, "192.0.2.0/24");
		assert_non_null(e->ex_groups->gr_next);
		assert_string_equal(e->ex_groups->gr_next->gr_name, "host.example");
		assert_null(e->ex_groups->gr_next->gr_next);
	}
	assert_int_equal(n, 1);
	tfree_mnt(MOUNTPROC3_EXPORT, &list);
	tenv_fini(&t);
}

/* Run the group (TAP output when CMOCKA_MESSAGE_OUTPUT=TAP). */
int main(void)
{
	tenv_require_root();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mnt_dump_umnt),
		cmocka_unit_test(export_list),
	};
	return cmocka_run_group_tests_name("mount3", tests, NULL, NULL);
}
