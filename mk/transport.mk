# transport: sources, programs and tests of this area.
libnfsrdma_a_SOURCES += \
	common/evloop.c common/evloop.h common/rpcrdma.h common/rpcrdma_int.h \
	common/rpcrdma_reg.c common/rpcrdma_reg.h common/rpcrdma_conn.c \
	common/rpcrdma_svc.c common/rpcrdma_clnt.c

if HAVE_CMOCKA
check_PROGRAMS += t/rpcrdma_test
TESTS += t/rpcrdma_test
t_rpcrdma_test_SOURCES = t/rpcrdma_test.c t/rpcrdma_test_util.c t/rpcrdma_test_util.h
t_rpcrdma_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_rpcrdma_test_LDADD = t/libbulkprog.a $(LDADD) $(CMOCKA_LIBS)
endif

if HAVE_CMOCKA
check_PROGRAMS += t/rpcrdma_hostile_test
TESTS += t/rpcrdma_hostile_test
t_rpcrdma_hostile_test_SOURCES = t/rpcrdma_hostile_test.c t/rpcrdma_test_util.c t/rpcrdma_test_util.h
t_rpcrdma_hostile_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_rpcrdma_hostile_test_LDADD = t/libbulkprog.a $(LDADD) $(CMOCKA_LIBS)
endif
