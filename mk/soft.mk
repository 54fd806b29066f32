# soft: the software RDMA provider (platform/soft), the provider registry,
# the verbs conformance suite and the verbs microbenchmark (nfsrdma-vbench).
libnfsrdma_a_SOURCES += platform/providers.c \
	platform/soft/soft.h platform/soft/soft_list.h platform/soft/soft_wire.h \
	platform/soft/soft_wire.c platform/soft/soft_dev.c platform/soft/soft_cq.c \
	platform/soft/soft_mr.c platform/soft/soft_engine.c platform/soft/soft_cm.c \
	platform/soft/soft_qp.c platform/soft/soft_tx.c platform/soft/soft_rx.c

if HAVE_CMOCKA
check_PROGRAMS += t/verbs_conformance
TESTS += t/verbs_conformance
t_verbs_conformance_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_verbs_conformance_LDADD = $(LDADD) $(CMOCKA_LIBS)
endif
TESTS += t/verbs_soft_unix.sh
dist_check_SCRIPTS += t/verbs_soft_unix.sh
