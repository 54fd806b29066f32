# codec: the bounds-checked cursor every wire decoder uses, and the RPC/RDMA
# transport header codec (RFC 8166) with RFC 8797 private data.
libnfsrdma_a_SOURCES += common/base/cursor.c common/base/cursor.h common/rpcrdma/rpcrdma_hdr.c common/rpcrdma/rpcrdma_hdr.h \
	common/rpcrdma/rpcrdma_cm_private.c

if HAVE_CMOCKA
check_PROGRAMS += t/unit/cursor_test t/unit/rpcrdma_hdr_test
TESTS += t/unit/cursor_test t/unit/rpcrdma_hdr_test
t_unit_cursor_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_unit_cursor_test_LDADD = $(LDADD) $(CMOCKA_LIBS)
t_unit_rpcrdma_hdr_test_SOURCES = t/unit/rpcrdma_hdr_test.c t/unit/rpcrdma_hdr_test.h \
	t/unit/rpcrdma_hdr_test_vectors.c t/unit/rpcrdma_hdr_test_rules.c \
	t/unit/rpcrdma_hdr_test_random.c
t_unit_rpcrdma_hdr_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_unit_rpcrdma_hdr_test_LDADD = $(LDADD) $(CMOCKA_LIBS)
endif
