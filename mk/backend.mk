# backend: NFSv3 and MOUNT v3 procedures over a POSIX backend, in a library
# of the server's own (the client never links it), and the per-OS hooks
# (common/base/osdep.h).

# The per-OS hooks: one file per OS, chosen by configure. The illumos file is
# not compiled on Linux, but ships in the tarball.
EXTRA_DIST += platform/linux/osdep.c platform/illumos/osdep.c \
	platform/linux/osdep_mount.c platform/illumos/osdep_mount.c \
	platform/linux/osdep_acl.c platform/illumos/osdep_acl.c
libnfsrdma_a_SOURCES += common/base/osdep.h common/base/osdep_mount.h \
	common/base/perm.c common/base/perm.h
if PLATFORM_LINUX
libnfsrdma_a_SOURCES += platform/linux/osdep.c platform/linux/osdep_mount.c \
	platform/linux/osdep_acl.c
endif
if PLATFORM_ILLUMOS
libnfsrdma_a_SOURCES += platform/illumos/osdep.c platform/illumos/osdep_mount.c \
	platform/illumos/osdep_acl.c
endif

noinst_LIBRARIES += server/libnfsserver.a
server_libnfsserver_a_SOURCES = \
	server/backend.c server/backend.h server/backend_int.h \
	server/backend_attr.c server/backend_fh.c server/backend_ident.c \
	server/export.c server/export.h server/call_gate.c server/call_gate.h \
	server/fh_index.c server/fh_index.h server/fh_index_int.h server/fh_index_store.c \
	server/fhcache.c server/fhcache.h server/ordma_cache.c server/ordma_cache.h \
	server/nfs3.h server/nfs3_proc.h server/nfs3_proc.c server/nfs3_proc_dir.c \
	server/nfs3_proc_io.c server/nfs3_proc_readdir.c \
	server/mount3_proc.c server/nfs_program.c server/nfs_program.h server/ordma_proc.c
# The CephFS backend (libcephfs), where configure found it. Its header wants
# a 64-bit off_t, hence CEPHFS_CFLAGS on the whole library.
EXTRA_DIST += server/backend_ceph.c server/backend_ceph_attr.c server/backend_ceph_io.c \
	server/backend_ceph_dir.c server/backend_ceph_lock.c server/backend_ceph_files.c \
	server/backend_ceph_snap.c server/backend_ceph.h
server_libnfsserver_a_CFLAGS = $(AM_CFLAGS) $(CEPHFS_CFLAGS) $(LMDB_CFLAGS)
if HAVE_CEPHFS
server_libnfsserver_a_SOURCES += server/backend_ceph.c server/backend_ceph_attr.c \
	server/backend_ceph_io.c server/backend_ceph_dir.c server/backend_ceph_lock.c \
	server/backend_ceph_files.c server/backend_ceph_snap.c \
	server/backend_ceph.h
endif
# What links the server's procedures: the daemon and the tests that serve.
SERVER_LDADD = server/libnfsserver.a $(LDADD) $(CEPHFS_LIBS) $(LMDB_LIBS)

# Tests: cmocka, over scratch exports under $TMPDIR.
EXTRA_DIST += t/unit/nfs3_testlib.h
dist_check_SCRIPTS += t/unit/fh_index_stamps.sh t/unit/fh_index_reuse.sh \
	t/unit/nfs3_proc_portable.sh t/unit/backend_fh_portable.sh \
	t/unit/nfs3_security_portable.sh t/unit/nfs3_stress_portable.sh \
	t/unit/nfs3_proc_userspace.sh t/unit/nfs3_security_userspace.sh \
	t/unit/nfs3_stress_userspace.sh
if HAVE_CMOCKA
BACKEND_TESTS = t/unit/nfs3_proc_test t/unit/nfs3_security_test t/unit/backend_fh_test \
	t/unit/nfs3_stress_test t/unit/mount3_test t/unit/nfs3_xdr_test
if PLATFORM_LINUX
BACKEND_TESTS += t/unit/backend_osdep_test
endif
BACKEND_TESTS += t/unit/fh_index_test
check_PROGRAMS += $(BACKEND_TESTS)
TESTS += $(BACKEND_TESTS)
# Portable handles: the index's tests that need birth times and inode
# re-use, and the backend's tests again with portable handles.
BACKEND_PORTABLE = t/unit/fh_index_stamps.sh t/unit/fh_index_reuse.sh \
	t/unit/nfs3_proc_portable.sh t/unit/backend_fh_portable.sh \
	t/unit/nfs3_security_portable.sh t/unit/nfs3_stress_portable.sh
TESTS += $(BACKEND_PORTABLE)
# User-space identity checks: their rules, and the backend's tests again with
# them (server.identity = "userspace").
check_PROGRAMS += t/unit/perm_test
BACKEND_USERSPACE = t/unit/perm_test t/unit/nfs3_proc_userspace.sh \
	t/unit/nfs3_security_userspace.sh t/unit/nfs3_stress_userspace.sh
TESTS += $(BACKEND_USERSPACE)
# The gate that bounds the workers a stalled storage holds (server/call_gate.c).
check_PROGRAMS += t/unit/call_gate_test
TESTS += t/unit/call_gate_test
t_unit_call_gate_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_unit_call_gate_test_LDADD = $(SERVER_LDADD) $(CMOCKA_LIBS)
# Optimistic RDMA's block cache and the client's check of a slot (issue 23).
check_PROGRAMS += t/unit/ordma_test
TESTS += t/unit/ordma_test
t_unit_ordma_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_unit_ordma_test_LDADD = $(SERVER_LDADD) $(CMOCKA_LIBS)
t_unit_perm_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_unit_perm_test_LDADD = $(LDADD) $(CMOCKA_LIBS)
t_unit_fh_index_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_unit_fh_index_test_LDADD = $(SERVER_LDADD) $(CMOCKA_LIBS)
t_unit_nfs3_proc_test_SOURCES = t/unit/nfs3_proc_test.c t/unit/nfs3_proc_test.h \
	t/unit/nfs3_proc_test_attr.c t/unit/nfs3_proc_test_io.c t/unit/nfs3_proc_test_dir.c \
	t/unit/nfs3_testlib.c
t_unit_nfs3_proc_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_unit_nfs3_proc_test_LDADD = $(SERVER_LDADD) $(CMOCKA_LIBS)
t_unit_nfs3_security_test_SOURCES = t/unit/nfs3_security_test.c t/unit/nfs3_testlib.c
t_unit_nfs3_security_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_unit_nfs3_security_test_LDADD = $(SERVER_LDADD) $(CMOCKA_LIBS)
t_unit_backend_fh_test_SOURCES = t/unit/backend_fh_test.c t/unit/nfs3_testlib.c
t_unit_backend_fh_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_unit_backend_fh_test_LDADD = $(SERVER_LDADD) $(CMOCKA_LIBS)
t_unit_nfs3_stress_test_SOURCES = t/unit/nfs3_stress_test.c t/unit/nfs3_testlib.c
t_unit_nfs3_stress_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_unit_nfs3_stress_test_LDADD = $(SERVER_LDADD) $(CMOCKA_LIBS)
t_unit_mount3_test_SOURCES = t/unit/mount3_test.c t/unit/nfs3_testlib.c
t_unit_mount3_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_unit_mount3_test_LDADD = $(SERVER_LDADD) $(CMOCKA_LIBS)
t_unit_backend_osdep_test_SOURCES = t/unit/backend_osdep_test.c
t_unit_backend_osdep_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_unit_backend_osdep_test_LDADD = $(SERVER_LDADD) $(CMOCKA_LIBS)
# The CephFS backend against a throwaway cluster (t/system/ceph_lib.sh).
if HAVE_CEPHFS
check_PROGRAMS += t/system/backend_ceph_test
t_system_backend_ceph_test_SOURCES = t/system/backend_ceph_test.c t/system/backend_ceph_test.h \
	t/system/backend_ceph_test_procs.c t/system/backend_ceph_test_files.c \
	t/system/backend_ceph_test_rules.c t/system/backend_ceph_test_snap.c \
	t/unit/nfs3_testlib.c
t_system_backend_ceph_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(CEPHFS_CFLAGS)
t_system_backend_ceph_test_LDADD = $(SERVER_LDADD) $(CMOCKA_LIBS)
endif
TESTS += t/system/backend_ceph.sh
EXTRA_DIST += t/system/backend_ceph.sh t/system/ceph_lib.sh t/system/ceph_lsan.supp

# bench-ceph (issue 16): 1 MiB WRITE and READ by 4 threads through one head
# against libcephfs driven directly (t/bench/ceph_direct), and through two
# heads against one; figures only. Skips without the CephFS backend.
CEPH_BENCH_DIR = bench-ceph
CEPH_BENCH_DEPS =
if HAVE_CEPHFS
noinst_PROGRAMS += t/bench/ceph_direct
t_bench_ceph_direct_SOURCES = t/bench/ceph_direct.c
t_bench_ceph_direct_CFLAGS = $(AM_CFLAGS) $(CEPHFS_CFLAGS)
t_bench_ceph_direct_LDADD = $(CEPHFS_LIBS)
CEPH_BENCH_DEPS += t/bench/ceph_direct$(EXEEXT)
endif
EXTRA_DIST += t/bench/ceph_bench.sh t/bench/ceph_direct.c
bench-ceph: nfsrdma-client$(EXEEXT) server/nfsrdma-server$(EXEEXT) $(CEPH_BENCH_DEPS)
	@top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
		$(SHELL) $(srcdir)/t/bench/ceph_bench.sh $(CEPH_BENCH_DIR) 2>&1 | tee t/bench-ceph.log
	@$(CLIENT_TAP_SUMMARY) t/bench-ceph.log
PHONY_TARGETS += bench-ceph
EXTRA_TARGETS += bench-ceph:400
CLEANFILES += t/bench-ceph.log
t_unit_nfs3_xdr_test_SOURCES = t/unit/nfs3_xdr_test.c
t_unit_nfs3_xdr_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_unit_nfs3_xdr_test_LDADD = $(SERVER_LDADD) $(CMOCKA_LIBS)
endif
