# rdmacore: the rdma-core provider (libibverbs + librdmacm) and its tests.
# Built only when configure found rdma-core; the tests skip without a device.


if HAVE_RDMACORE
libnfsrdma_a_SOURCES += \
	platform/linux/verbs_rdmacore.h \
	platform/linux/verbs_rdmacore.c \
	platform/linux/verbs_rdmacore_cm.c \
	platform/linux/verbs_rdmacore_event.c \
	platform/linux/verbs_rdmacore_listen.c \
	platform/linux/verbs_rdmacore_post.c \
	platform/linux/verbs_rdmacore_map.c

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
