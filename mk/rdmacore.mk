# rdmacore: the verbs provider (libibverbs + librdmacm: rdma-core on Linux,
# OFED 1.1.8 on illumos) and its tests. Built only when configure found the
# libraries; the tests skip without a device.
EXTRA_DIST += platform/ibverbs/verbs_rdmacore_mw.c platform/ibverbs/verbs_rdmacore_nomw.c


if HAVE_RDMACORE
libnfsrdma_a_SOURCES += \
	platform/ibverbs/verbs_rdmacore.h \
	platform/ibverbs/verbs_rdmacore.c \
	platform/ibverbs/verbs_rdmacore_cm.c \
	platform/ibverbs/verbs_rdmacore_event.c \
	platform/ibverbs/verbs_rdmacore_listen.c \
	platform/ibverbs/verbs_rdmacore_post.c \
	platform/ibverbs/verbs_rdmacore_map.c
# Memory windows and Send with Invalidate where the verbs API has them.
if HAVE_IBV_MW
libnfsrdma_a_SOURCES += platform/ibverbs/verbs_rdmacore_mw.c
else
libnfsrdma_a_SOURCES += platform/ibverbs/verbs_rdmacore_nomw.c
endif

if HAVE_CMOCKA
check_PROGRAMS += t/unit/rdmacore_unit_test t/system/rdmacore_test
TESTS += t/unit/rdmacore_unit_test t/system/rdmacore_test
t_unit_rdmacore_unit_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_unit_rdmacore_unit_test_LDADD = $(LDADD) $(CMOCKA_LIBS)
t_system_rdmacore_test_SOURCES = t/system/rdmacore_test.c t/system/rdmacore_util.c \
	t/system/rdmacore_util.h
t_system_rdmacore_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_system_rdmacore_test_LDADD = $(LDADD) $(CMOCKA_LIBS)
endif
endif
