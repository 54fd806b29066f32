# soft: the software RDMA provider (platform/soft), the provider registry,
# the verbs conformance suite and the verbs microbenchmark (nfsrdma-vbench).
libnfsrdma_a_SOURCES += platform/providers.c \
	platform/soft/soft.h platform/soft/soft_list.h platform/soft/soft_wire.h \
	platform/soft/soft_wire.c platform/soft/soft_dev.c platform/soft/soft_cq.c \
	platform/soft/soft_mr.c platform/soft/soft_engine.c platform/soft/soft_cm.c platform/soft/soft_listen.c \
	platform/soft/soft_local.c platform/soft/soft_cma.c platform/soft/soft_qp.c platform/soft/soft_tx.c platform/soft/soft_rx.c

if HAVE_CMOCKA
check_PROGRAMS += t/system/verbs_conformance
TESTS += t/system/verbs_conformance
t_system_verbs_conformance_SOURCES = t/system/verbs_conformance.c t/system/verbs_conformance.h \
	t/system/verbs_conformance_conn.c t/system/verbs_conformance_data.c \
	t/system/verbs_conformance_access.c t/system/verbs_conformance_hostile.c \
	t/system/verbs_conformance_cma.c
t_system_verbs_conformance_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_system_verbs_conformance_LDADD = $(LDADD) $(CMOCKA_LIBS)
check_PROGRAMS += t/unit/verbs_registry_test
TESTS += t/unit/verbs_registry_test
t_unit_verbs_registry_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_unit_verbs_registry_test_LDADD = $(LDADD) $(CMOCKA_LIBS)
endif
TESTS += t/system/verbs_soft_unix.sh t/system/verbs_soft_tcp.sh t/system/verbs_soft_nocma.sh
dist_check_SCRIPTS += t/system/verbs_soft_unix.sh t/system/verbs_soft_tcp.sh \
	t/system/verbs_soft_nocma.sh

# nfsrdma-vbench: the verbs microbenchmark; `make bench-verbs` runs it quickly
# on the soft provider and writes $(VBENCH_DIR)/vbench-soft.csv.
bin_PROGRAMS += nfsrdma-vbench
nfsrdma_vbench_SOURCES = client/vbench.c client/vbench.h client/vbench_peer.c
dist_man_MANS += man/nfsrdma-vbench.1
VBENCH_DIR = $(abs_top_srcdir)/build/bench
bench-verbs: nfsrdma-vbench$(EXEEXT)
	@mkdir -p $(VBENCH_DIR)
	./nfsrdma-vbench$(EXEEXT) --device soft --quick --csv $(VBENCH_DIR)/vbench-soft.csv \
		> $(VBENCH_DIR)/vbench-soft.txt
	@sed 's/^/bench-verbs: /' $(VBENCH_DIR)/vbench-soft.txt
	@echo "bench-verbs: CSV in $(VBENCH_DIR)/vbench-soft.csv"
PHONY_TARGETS += bench-verbs
EXTRA_TARGETS += bench-verbs:300
