/*
 * backend_ceph_test.h: what the parts of t/system/backend_ceph_test share:
 * the state each case gets from the set-up (backend_ceph_test.c) and the
 * cases, one file per topic (backend_ceph_test_procs.c, _files.c, _rules.c).
 */
#ifndef NFSRDMA_T_BACKEND_CEPH_TEST_H
#define NFSRDMA_T_BACKEND_CEPH_TEST_H

#include "t/unit/nfs3_testlib.h"

/* A test's state: the backend on the cluster and the test's own directory. */
struct cenv {
	struct tenv t;
	nfs_fh3 dir;
	char path[72];	/* dir's path in the CephFS */
	char root[128]; /* room for a case's own ceph.root */
};

struct ceph_mount_info;
/* The cluster's admin's own mount of the CephFS root (CEPH_ADMIN_KEYRING),
 * with POSIX ACLs; 0 or -errno. admin_done(cm) after. */
int admin_mount(struct ceph_mount_info **cm);
void admin_done(struct ceph_mount_info *cm);

/* The cases, with a struct cenv as *state (but unreachable_cluster), in
 * backend_ceph_test_procs.c ... */
void root_and_fs_info(void **state);
void write_read_commit(void **state);
void lookup_cases(void **state);
void setattr_cases(void **state);
void namespace_ops(void **state);
void create_modes(void **state);
void readdir_pages(void **state);
/* ... backend_ceph_test_files.c ... */
void open_files_kept(void **state);
void lock_identity(void **state);
/* ... backend_ceph_test_snap.c ... */
void snapshot_dotdot_stays_inside(void **state);
void snapshot_listing_attrs(void **state);
void snapshot_fileids_apart(void **state);
void snapshot_by_handle_alone(void **state);
void snapshot_links_up(void **state);
/* ... and backend_ceph_test_rules.c. */
void handles_across_restart(void **state);
void identity_and_rules(void **state);
void acls_decide(void **state);
void unreachable_cluster(void **state);

#endif
