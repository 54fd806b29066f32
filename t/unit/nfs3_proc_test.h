/*
 * nfs3_proc_test.h: what the parts of t/unit/nfs3_proc_test share: a helper
 * over the scratch export (nfs3_proc_test.c; the export itself is
 * nfs3_testlib's) and the cases, one file per topic (nfs3_proc_test_*.c).
 */
#ifndef NFSRDMA_T_NFS3_PROC_TEST_H
#define NFSRDMA_T_NFS3_PROC_TEST_H

#include "t/unit/nfs3_testlib.h"

/* Write a local file in the scratch export. */
void put_file(struct tenv *t, const char *name, const char *text);

/* The cases, each with a started scratch export as *state (but
 * errno_mapping), in nfs3_proc_test_attr.c ... */
void null_and_getattr(void **state);
void lookup_cases(void **state);
void setattr_cases(void **state);
void access_cases(void **state);
void readlink_cases(void **state);
void fs_info(void **state);
void errno_mapping(void **state);
/* ... nfs3_proc_test_io.c ... */
void read_write_commit(void **state);
void read_into_transport_buffer(void **state);
void read_nowait(void **state);
void write_nowait(void **state);
/* ... and nfs3_proc_test_dir.c. */
void create_modes(void **state);
void mkdir_rmdir(void **state);
void symlink_mknod(void **state);
void remove_makes_stale(void **state);
void rename_link(void **state);
void readdir_small(void **state);
void readdirplus_handles(void **state);

#endif
