/*
 * client_nfs3_test.h: what the parts of t/system/client_nfs3_test share: the
 * fixture (a scratch export and an in-process server for it) and the helpers
 * over it (client_nfs3_test.c), and the cases, one file per topic
 * (client_nfs3_test_*.c).
 */
#ifndef NFSRDMA_T_CLIENT_NFS3_TEST_H
#define NFSRDMA_T_CLIENT_NFS3_TEST_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "client/nfs3_clnt.h"
#include "t/system/client_srv.h"

struct fx {
	char dir[PATH_MAX];
	struct csrv_params sp;
	struct csrv srv;
	struct nfs3c *c;
};

/* The path of name in f's export (a static buffer). */
const char *path_in(struct fx *f, const char *name);
/* Deterministic pseudo-random bytes for seed. */
void pattern(uint8_t *p, size_t len, unsigned seed);
/* A scratch export and a server for it, with slow_proc (if > 0) slowed by
 * slow_ms, before it runs or (slow_after) after; fx_new: none slowed. */
struct fx *fx_new_slow(int slow_proc, unsigned slow_ms, int slow_after);
/* The export and its server's parameters, for a caller to change and start. */
struct fx *fx_alloc(void);
struct fx *fx_new(void);
/* Restart the server on the same ports: a new backend, a new write verifier. */
void fx_restart(struct fx *f);
/* Unmount, stop the server, remove the export. */
void fx_free(struct fx *f);
/* Client parameters for proto/mode/reg against f's server. */
void params(struct fx *f, struct nfs3c_params *p, enum nfs3c_proto proto, unsigned mode,
	    enum rr_reg reg);
/* Mount with p or fail the test with the message. */
void mount_with(struct fx *f, const struct nfs3c_params *p);
/* Write len bytes of pattern seed as file name, commit, read back, compare
 * through the client and on the server's disk. */
void roundtrip(struct fx *f, const char *name, size_t len, unsigned seed);

/* What a READDIR(PLUS) saw: count_entry, its callback, counts the entries and
 * looks for the file "f" (with handle and attributes) and the directory "d". */
struct names {
	int n;
	int seen_file, seen_dir;
};
int count_entry(void *arg, const struct nfs3c_dirent *e);

/* The cases, in client_nfs3_test_ops.c ... */
void test_data_tcp(void **state);
void test_data_rdma_matrix(void **state);
void test_procs_tcp(void **state);
void test_procs_rdma(void **state);
void test_big_dir(void **state);
void test_attr_cache(void **state);
void test_attrs_never_go_back(void **state);
void test_attrs_never_go_back_evicted(void **state);
void test_attrs_ordered_by_ctime(void **state);
void test_long_names(void **state);
void test_concurrent_writers(void **state);
/* ... client_nfs3_test_restart.c ... */
void test_dirty_bounded(void **state);
void test_resend_tcp(void **state);
void test_resend_rdma(void **state);
void test_resend_by_write(void **state);
void test_overlapping_records(void **state);
void test_retransmit_tcp(void **state);
void test_retransmit_rdma(void **state);
void test_survive_restart(void **state);
void test_soft_gives_up(void **state);
void test_soft_gives_up_on_slow_server(void **state);
/* ... and client_nfs3_test_errors.c. */
void test_mount_errors(void **state);
void test_integrity(void **state);
void test_nonroot_rdma_matrix(void **state);
void test_post_failures(void **state);
void test_nconnect(void **state);
void test_errno_table(void **state);
/* ... and client_nfs3_test_ordma.c (Optimistic RDMA). */
void test_ordma_hits(void **state);
void test_ordma_sees_other_writer(void **state);
void test_ordma_change_attribute(void **state);
void test_ordma_slot_reused(void **state);
void test_ordma_server_restart(void **state);
void test_ordma_other_user(void **state);
void test_ordma_not_offered(void **state);

#endif
