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
check_PROGRAMS += t/rdmacore_unit_test t/rdmacore_test
TESTS += t/rdmacore_unit_test t/rdmacore_test
t_rdmacore_unit_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_rdmacore_unit_test_LDADD = $(LDADD) $(CMOCKA_LIBS)
t_rdmacore_test_SOURCES = t/rdmacore_test.c t/rdmacore_util.c t/rdmacore_util.h
t_rdmacore_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_rdmacore_test_LDADD = $(LDADD) $(CMOCKA_LIBS)
endif
endif
