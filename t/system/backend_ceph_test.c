/*
 * backend_ceph_test: the CephFS backend's procedures against a real cluster
 * (t/system/backend_ceph.sh starts a throwaway one and passes its coordinates in
 * CEPH_CONF, CEPH_CLIENT_ID and CEPH_KEYRING). Every call goes through the
 * procedure table and the XDR routines, as the RPC layer drives them. Each
 * test works in a directory of its own under the export's root.
 *
 * The cases are in backend_ceph_test_procs.c (the procedures),
 * backend_ceph_test_files.c (the open files READ and WRITE keep),
 * backend_ceph_test_snap.c (snapshots) and backend_ceph_test_rules.c
 * (handles, identities, rules, an unreachable cluster); this file has the
 * fixture (backend_ceph_test.h) and the case table.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <cephfs/libcephfs.h>

#include "t/unit/nfs3_testlib.h"
#include "backend_ceph_test.h"

#define EXPORT_NAME "/cephtest"

/* The export as t/system/backend_ceph.sh's cluster gives it. */
static void ceph_conf(struct tenv *t)
{
	t->conf.backend = NFS_BACKEND_CEPHFS;
	t->conf.ceph.conf_file = getenv("CEPH_CONF");
	t->conf.ceph.client_id = getenv("CEPH_CLIENT_ID");
	t->conf.ceph.keyring = getenv("CEPH_KEYRING");
	t->conf.ceph.root = "/";
	t->conf.ceph.mount_timeout_s = 20;
}

/* See backend_ceph_test.h. */
int admin_mount(struct ceph_mount_info **cm)
{
	int r;

	if ((r = ceph_create(cm, "admin")) < 0)
		return r;
	if ((r = ceph_conf_read_file(*cm, getenv("CEPH_CONF"))) == 0 &&
	    (r = ceph_conf_set(*cm, "keyring", getenv("CEPH_ADMIN_KEYRING"))) == 0 &&
	    (r = ceph_conf_set(*cm, "client_acl_type", "posix_acl")) == 0 &&
	    (r = ceph_mount(*cm, "/")) == 0)
		return 0;
	ceph_release(*cm);
	return r;
}

/* See backend_ceph_test.h. */
void admin_done(struct ceph_mount_info *cm)
{
	ceph_unmount(cm);
	ceph_release(cm);
}

/* cmocka setup: mount the cluster and make a fresh directory for the test. */
static int setup(void **state)
{
	static unsigned n;
	struct cenv *c = calloc(1, sizeof(*c));
	char name[64];

	tenv_init(&c->t);
	rmdir(c->t.dir); /* the scratch directory is not used: the export is in Ceph */
	snprintf(c->t.dir, sizeof(c->t.dir), "%s", EXPORT_NAME);
	c->t.conf.path = c->t.dir;
	ceph_conf(&c->t);
	if (tenv_start(&c->t) < 0) {
		free(c);
		return -1;
	}
	snprintf(name, sizeof(name), "t%ld-%u", (long)getpid(), ++n);
	snprintf(c->path, sizeof(c->path), "/%s", name);
	if (t_mkdir(&c->t, &c->t.root, name, &c->dir) != NFS3_OK) {
		tenv_fini(&c->t);
		free(c);
		return -1;
	}
	*state = c;
	return 0;
}

/* cmocka teardown. */
static int teardown(void **state)
{
	struct cenv *c = *state;

	fh_free(&c->dir);
	tenv_fini(&c->t);
	free(c);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(root_and_fs_info, setup, teardown),
		cmocka_unit_test_setup_teardown(write_read_commit, setup, teardown),
		cmocka_unit_test_setup_teardown(lookup_cases, setup, teardown),
		cmocka_unit_test_setup_teardown(setattr_cases, setup, teardown),
		cmocka_unit_test_setup_teardown(namespace_ops, setup, teardown),
		cmocka_unit_test_setup_teardown(create_modes, setup, teardown),
		cmocka_unit_test_setup_teardown(readdir_pages, setup, teardown),
		cmocka_unit_test_setup_teardown(open_files_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(lock_identity, setup, teardown),
		cmocka_unit_test_setup_teardown(snapshot_dotdot_stays_inside, setup, teardown),
		cmocka_unit_test_setup_teardown(snapshot_listing_attrs, setup, teardown),
		cmocka_unit_test_setup_teardown(snapshot_fileids_apart, setup, teardown),
		cmocka_unit_test_setup_teardown(snapshot_by_handle_alone, setup, teardown),
		cmocka_unit_test_setup_teardown(snapshot_links_up, setup, teardown),
		cmocka_unit_test_setup_teardown(handles_across_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(identity_and_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(acls_decide, setup, teardown),
		cmocka_unit_test(unreachable_cluster),
	};

	if (getenv("CEPH_CONF") == NULL || getenv("CEPH_CLIENT_ID") == NULL) {
		printf("1..0 # SKIP no cluster: run through t/system/backend_ceph.sh\n");
		return 0;
	}
	return cmocka_run_group_tests_name("backend_ceph", tests, NULL, NULL);
}
