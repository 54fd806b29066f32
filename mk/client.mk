# client: the NFSv3 client library (in libnfsrdma.a, so tests and other
# programs can use it), nfsrdma-client (mount helper through FUSE, umount,
# bench), installed also as mount.nfsrdma, and its tests.
libnfsrdma_a_SOURCES += \
	client/nfs3_clnt.h client/nfs3_clnt_int.h client/nfs3_clnt.c client/nfs3_clnt_call.c \
	client/nfs3_clnt_mount.c client/nfs3_clnt_attr.c client/nfs3_clnt_wrec.c client/nfs3_clnt_ops.c \
	client/nfs3_clnt_dir.c client/nfs3_clnt_io.c client/nfs3_clnt_ordma.c client/nfs3_clnt_stats.c

# The lock manager's client (NLM v4, its callback service, reclaim): only
# nfsrdma-client has it (with FUSE), and its test; t/fuzz builds it too.
CLIENT_NLM_SOURCES = client/nlm_clnt.c client/nlm_clnt.h client/nlm_clnt_int.h \
	client/nlm_clnt_cb.c client/nlm_clnt_cbsock.c client/nlm_clnt_reclaim.c \
	client/nlm_clnt_held.c client/nlm_clnt_held.h

sbin_PROGRAMS += nfsrdma-client
nfsrdma_client_SOURCES = client/main.c client/client.h client/options.h client/options.c \
	client/stats.c \
	client/options_config.c client/bench.h client/bench.c client/bench_args.c \
	client/bench_report.c
nfsrdma_client_CPPFLAGS = $(AM_CPPFLAGS) -DSYSCONFDIR=\"$(sysconfdir)\"
nfsrdma_client_CFLAGS = $(AM_CFLAGS) $(FUSE_CFLAGS)
nfsrdma_client_LDADD = $(LDADD) $(FUSE_LIBS)
if HAVE_FUSE
nfsrdma_client_SOURCES += client/mount.c client/fuse_fs.h client/fuse_fs.c \
	client/fuse_fs_file.c client/fuse_fs_dir.c client/fuse_fs_silly.c \
	client/fuse_fs_lock.c $(CLIENT_NLM_SOURCES)
else
nfsrdma_client_SOURCES += client/mount_nofuse.c
endif
EXTRA_DIST += client/mount.c client/fuse_fs.h client/fuse_fs.c client/fuse_fs_file.c \
	client/fuse_fs_dir.c client/fuse_fs_silly.c client/mount_nofuse.c \
	client/fuse_fs_lock.c $(CLIENT_NLM_SOURCES)
dist_man_MANS += man/nfsrdma-client.8 man/mount.nfsrdma.8

# mount(8) runs /sbin/mount.TYPE: the same program under that name.
PHONY_TARGETS += client-install-exec-hook client-uninstall-hook
install-exec-hook: client-install-exec-hook
client-install-exec-hook:
	cd $(DESTDIR)$(sbindir) && rm -f mount.nfsrdma$(EXEEXT) && \
		ln -s nfsrdma-client$(EXEEXT) mount.nfsrdma$(EXEEXT)
uninstall-hook: client-uninstall-hook
client-uninstall-hook:
	rm -f $(DESTDIR)$(sbindir)/mount.nfsrdma$(EXEEXT)

# A random-operation exerciser, every read checked against a shadow copy.
check_PROGRAMS += t/system/fsexer
t_system_fsexer_SOURCES = t/system/fsexer.c
t_system_fsexer_LDADD =

# Takes and tests fcntl and flock locks for t/system/client_locks.sh.
check_PROGRAMS += t/system/lockprog
t_system_lockprog_SOURCES = t/system/lockprog.c
t_system_lockprog_LDADD =

# An in-process NFS server (backend + RPC/RDMA soft + TCP) for the shell tests.
CLIENT_SRV = t/system/client_srv.c t/system/client_srv.h
check_PROGRAMS += t/system/client_testsrv
t_system_client_testsrv_SOURCES = t/system/client_testsrv.c
t_system_client_testsrv_LDADD = $(SERVER_LDADD)

if HAVE_CMOCKA
check_PROGRAMS += t/system/client_nfs3_test
TESTS += t/system/client_nfs3_test
t_system_client_nfs3_test_SOURCES = t/system/client_nfs3_test.c t/system/client_nfs3_test.h \
	t/system/client_nfs3_test_ops.c t/system/client_nfs3_test_restart.c \
	t/system/client_nfs3_test_errors.c t/system/client_nfs3_test_ordma.c $(CLIENT_SRV)
t_system_client_nfs3_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_system_client_nfs3_test_LDADD = $(SERVER_LDADD) $(CMOCKA_LIBS)
check_PROGRAMS += t/system/client_hostile_test
TESTS += t/system/client_hostile_test
t_system_client_hostile_test_SOURCES = t/system/client_hostile_test.c $(CLIENT_SRV)
t_system_client_hostile_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_system_client_hostile_test_LDADD = $(SERVER_LDADD) $(CMOCKA_LIBS)
# What lock owners hold (t/unit/nlm_clnt_held_test.c).
check_PROGRAMS += t/unit/nlm_clnt_held_test
TESTS += t/unit/nlm_clnt_held_test
t_unit_nlm_clnt_held_test_SOURCES = t/unit/nlm_clnt_held_test.c client/nlm_clnt_held.c \
	client/nlm_clnt_held.h
t_unit_nlm_clnt_held_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_unit_nlm_clnt_held_test_LDADD = $(LDADD) $(CMOCKA_LIBS)
# A blocked request interrupted, against a fake server's NLM (t/unit/nlm_clnt_wait_test.c).
check_PROGRAMS += t/unit/nlm_clnt_wait_test
TESTS += t/unit/nlm_clnt_wait_test
t_unit_nlm_clnt_wait_test_SOURCES = t/unit/nlm_clnt_wait_test.c t/unit/udp_rpc_call.h $(CLIENT_NLM_SOURCES)
t_unit_nlm_clnt_wait_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_unit_nlm_clnt_wait_test_LDADD = $(LDADD) $(CMOCKA_LIBS) -lpthread
# The callback service over loopback UDP (t/unit/nlm_clnt_cb_test.c).
check_PROGRAMS += t/unit/nlm_clnt_cb_test
TESTS += t/unit/nlm_clnt_cb_test
t_unit_nlm_clnt_cb_test_SOURCES = t/unit/nlm_clnt_cb_test.c t/unit/udp_rpc_call.h $(CLIENT_NLM_SOURCES)
t_unit_nlm_clnt_cb_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_unit_nlm_clnt_cb_test_LDADD = $(LDADD) $(CMOCKA_LIBS) -lpthread
endif
t_system_client_testsrv_SOURCES += $(CLIENT_SRV)

CLIENT_SH_TESTS = t/system/client_errors.sh t/system/client_mount.sh \
	t/system/client_fsops.sh t/system/client_restart.sh t/system/client_bench.sh \
	t/system/client_ganesha.sh t/system/client_daemon.sh t/system/client_fullfs.sh \
	t/system/client_stop.sh t/system/client_posix.sh t/system/client_exerciser.sh \
	t/system/client_stats.sh t/system/client_locks.sh \
	t/system/client_lock_rpcb.sh t/system/client_kill.sh
TESTS += $(CLIENT_SH_TESTS)
dist_check_SCRIPTS += $(CLIENT_SH_TESTS) t/system/client_lib.sh

# pjdfstest, Connectathon and the exerciser on mounts of nfsrdma-server over
# RPC/RDMA read-write, read-read and TCP; the suites are built in the build tree.
EXTRA_DIST += t/system/posix_suites.sh
check-posix: nfsrdma-client$(EXEEXT) server/nfsrdma-server$(EXEEXT) t/system/fsexer$(EXEEXT)
	$(MAKE) $(AM_MAKEFLAGS) check TESTS=t/system/posix_suites.sh TEST_SUITE_LOG=t/posix-suites.log
PHONY_TARGETS += check-posix
EXTRA_TARGETS += check-posix:1200
CLEANFILES += t/posix-suites.log
# The same suites over RPC/RDMA on the portable paths an illumos server takes:
# portable file handles (server.handles = "portable"), permissions checked in
# user space (server.identity = "userspace") and the poll() event loop. The
# results must be the native run's.
check-posix-portable: nfsrdma-client$(EXEEXT) server/nfsrdma-server$(EXEEXT) t/system/fsexer$(EXEEXT)
	POSIX_HANDLES=portable POSIX_IDENTITY=userspace NFSRDMA_POLLER=poll POSIX_TRANSPORTS=rdma-rw POSIX_LOGS=$(abs_top_builddir)/t/posix-portable-run \
		$(MAKE) $(AM_MAKEFLAGS) check TESTS=t/system/posix_suites.sh \
		TEST_SUITE_LOG=t/posix-suites-portable.log
PHONY_TARGETS += check-posix-portable
EXTRA_TARGETS += check-posix-portable:900
CLEANFILES += t/posix-suites-portable.log
# The same suites over RPC/RDMA on a CephFS export (issue 16): a throwaway
# cluster (t/system/ceph_lib.sh) instead of the tmpfs; the differences from
# the POSIX backend are named in posix_suites.sh (EXPECTED_CEPHFS).
check-posix-ceph: nfsrdma-client$(EXEEXT) server/nfsrdma-server$(EXEEXT) t/system/fsexer$(EXEEXT)
	POSIX_BACKEND=cephfs POSIX_TRANSPORTS=rdma-rw POSIX_LOGS=$(abs_top_builddir)/t/posix-ceph-run \
		$(MAKE) $(AM_MAKEFLAGS) check TESTS=t/system/posix_suites.sh \
		TEST_SUITE_LOG=t/posix-suites-ceph.log
PHONY_TARGETS += check-posix-ceph
EXTRA_TARGETS += check-posix-ceph:900
CLEANFILES += t/posix-suites-ceph.log

# The Linux kernel's nfsd and nfsrdma-server inside the Soft-RoCE lab
# (../shared/rdmalab), over TCP and over RPC/RDMA on rxe0.
EXTRA_DIST += t/lab/client-knfsd.sh t/lab/client-knfsd-guest.sh
PHONY_TARGETS += lab-client bench-client
EXTRA_TARGETS += lab-client:500
# TAP summary lines in automake's format, which scripts/check.sh adds up.
CLIENT_TAP_SUMMARY = $(AWK) '/^ok .*\# SKIP/ {s++; next} /^ok/ {p++} /^not ok/ {f++} \
	/^1\.\.0 .*SKIP/ {s++} END {printf "\# TOTAL: %d\n\# PASS: %d\n\# SKIP: %d\n\# FAIL: %d\n\# ERROR: 0\n", \
	p + s + f, p, s, f; exit (f > 0)}'
lab-client: nfsrdma-client$(EXEEXT) server/nfsrdma-server$(EXEEXT)
	@top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
		$(SHELL) $(srcdir)/t/lab/client-knfsd.sh 2>&1 | tee t/lab-client.log
	@$(CLIENT_TAP_SUMMARY) t/lab-client.log

# bench over the soft provider against nfsrdma-server: table, CSV and plot per run.
CLIENT_BENCH_DIR = bench-client
bench-client: nfsrdma-client$(EXEEXT) t/system/client_testsrv$(EXEEXT) \
		server/nfsrdma-server$(EXEEXT)
	@top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
		$(SHELL) $(srcdir)/t/system/client_bench.sh --full $(CLIENT_BENCH_DIR) 2>&1 | \
		tee t/bench-client.log
	@$(CLIENT_TAP_SUMMARY) t/bench-client.log
EXTRA_TARGETS += bench-client:300
CLEANFILES += t/lab-client.log t/bench-client.log

# bench-compare (issue 12): the provider's limits, NULL/READ rates on every
# transport against nfsrdma-server, ratios, server CPU per READ; figures only.
COMPARE_BENCH_DIR = bench-compare
bench-compare: nfsrdma-client$(EXEEXT) nfsrdma-vbench$(EXEEXT) server/nfsrdma-server$(EXEEXT)
	@top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
		$(SHELL) $(srcdir)/t/bench/bench_compare.sh $(COMPARE_BENCH_DIR) 2>&1 | tee t/bench-compare.log
	@$(CLIENT_TAP_SUMMARY) t/bench-compare.log
PHONY_TARGETS += bench-compare
EXTRA_DIST += t/bench/bench_compare.sh t/bench/bench_lib.sh t/bench/ganesha_compare.sh \
	t/bench/start_together.sh
EXTRA_TARGETS += bench-compare:900
CLEANFILES += t/bench-compare.log

# bench-ordma (issue 23): 4 KiB random READs of cached data by 1 and 4 clients,
# plain READ against Optimistic RDMA; rates, latencies, server CPU per READ.
ORDMA_BENCH_DIR = bench-ordma
bench-ordma: nfsrdma-client$(EXEEXT) server/nfsrdma-server$(EXEEXT)
	@top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
		$(SHELL) $(srcdir)/t/bench/ordma_bench.sh $(ORDMA_BENCH_DIR) 2>&1 | tee t/bench-ordma.log
	@$(CLIENT_TAP_SUMMARY) t/bench-ordma.log
PHONY_TARGETS += bench-ordma
EXTRA_DIST += t/bench/ordma_bench.sh
EXTRA_TARGETS += bench-ordma:300
CLEANFILES += t/bench-ordma.log
