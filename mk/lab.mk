# lab: the verbs tests and the verbs microbenchmark on Soft-RoCE (rxe0) inside
# ../shared/rdmalab, a throwaway qemu guest. Not part of `make check`: the
# guest runs under TCG, ~50x slower than the host. scripts/check.sh runs
# lab-verbs where time allows; both targets skip when the lab cannot boot.
lab_scripts = t/lab/lab-common.sh t/lab/verbs-lab.sh t/lab/vbench-lab.sh t/lab/server-kclient.sh \
	t/lab/kclient-suites.sh t/lab/lab-guest.sh t/lab/kclient-locks.sh t/lab/kclient-locks-guest.sh \
	t/lab/kclient-bench.sh t/lab/kclient-bench-guest.sh t/lab/compare-lab.sh
EXTRA_DIST += $(lab_scripts)
LAB_BENCH_DIR = $(abs_top_srcdir)/build/bench

# The lab's TAP stream through automake's driver, so the summary (# TOTAL ...)
# is the usual one; the binaries it runs are the check programs.
lab-verbs: $(check_PROGRAMS)
	$(MAKE) $(AM_MAKEFLAGS) check TESTS=t/lab/verbs-lab.sh TEST_SUITE_LOG=t/lab/lab-verbs.log

# nfsrdma-vbench in the guest; CSV in build/bench/vbench-rxe.csv.
lab-bench-verbs: all
	top_builddir=$(abs_top_builddir) top_srcdir=$(abs_top_srcdir) \
		$(SHELL) $(srcdir)/t/lab/vbench-lab.sh $(LAB_BENCH_DIR)

# The Linux kernel's client over RDMA on rxe0 in front of the kernel's nfsd and
# nfsrdma-server in one boot, rounds interleaved: fio sequential write and read
# (1 MiB) and 4 KiB random reads, medians and nfsrdma/nfsd ratios (issue 12).
# Figures only; CSV in t/lab/bench/kclient-bench.csv.
lab-bench-server: all
	top_builddir=$(abs_top_builddir) top_srcdir=$(abs_top_srcdir) \
		$(SHELL) $(srcdir)/t/lab/kclient-bench.sh

# bench-compare on rxe0 in the guest (issue 12): ratios only; figures in
# build/bench/compare-rxe.
lab-bench-compare: all
	top_builddir=$(abs_top_builddir) top_srcdir=$(abs_top_srcdir) \
		$(SHELL) $(srcdir)/t/lab/compare-lab.sh $(LAB_BENCH_DIR)/compare-rxe

# The Linux kernel's NFS client against nfsrdma-server over RDMA on rxe0, and
# against the kernel's nfsd for comparison (dd MB/s in the TAP comments).
lab-server: all
	$(MAKE) $(AM_MAKEFLAGS) check TESTS=t/lab/server-kclient.sh TEST_SUITE_LOG=t/lab/lab-server.log

# The kernel's client as users run it, against the kernel's nfsd and
# nfsrdma-server side by side: a non-root user, Connectathon and pjdfstest
# (PJD_FILES to choose files); suites built in t/lab/suites.
lab-suites: all
	$(MAKE) $(AM_MAKEFLAGS) check TESTS=t/lab/kclient-suites.sh TEST_SUITE_LOG=t/lab/lab-suites.log

# File locks between the kernel's client (two of them, mounted without
# nolock, each in namespaces of its own) and nfsrdma-server, an nfsrdma-client
# mount over RPC/RDMA beside them, and Connectathon's lock tests (issue 15).
lab-locks: all
	$(MAKE) $(AM_MAKEFLAGS) check TESTS=t/lab/kclient-locks.sh TEST_SUITE_LOG=t/lab/lab-locks.log

PHONY_TARGETS += lab-verbs lab-bench-verbs lab-bench-compare lab-bench-server lab-server lab-suites lab-locks
EXTRA_TARGETS += lab-verbs:400 lab-server:400 lab-suites:1500 lab-locks:600 lab-bench-server:600
CLEANFILES += t/lab/lab-verbs.log t/lab/lab-server.log t/lab/lab-suites.log t/lab/lab-locks.log
