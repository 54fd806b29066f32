# rpc: ONC RPC (headers over libtirpc XDR, credentials, integrity MICs), the
# server dispatcher and workers, and RPC over TCP with record marking.
libnfsrdma_a_SOURCES += \
	common/rpc/rpc.h common/rpc/rpc_msg.c common/rpc/rpc_auth.c common/rpc/rpc_auth.h common/rpc/rpc_svc.c \
	common/rpc/rpc_drc.c common/rpc/rpc_drc.h common/rpc/rpc_replay.c common/rpc/rpc_replay.h \
	common/rpc/integrity.c common/rpc/integrity.h common/base/net.c common/base/net.h \
	common/rpc/rpc_tcp.h common/rpc/rpc_tcp_int.h common/rpc/rpc_tcp.c common/rpc/rpc_tcp_conn.c \
	common/rpc/rpc_tcp_clnt.c common/rpc/rpc_rec.c \
	common/rpc/rpc_udp.c common/rpc/rpc_udp.h

# The transport test program (echo and bulk), shared by the RPC and RPC/RDMA tests.
noinst_LIBRARIES += t/libbulkprog.a
t_libbulkprog_a_SOURCES = t/bulkprog.c t/bulkprog.h
t_libbulkprog_a_CPPFLAGS = $(AM_CPPFLAGS)

if HAVE_CMOCKA
check_PROGRAMS += t/rpc_tcp_test
TESTS += t/rpc_tcp_test
t_rpc_tcp_test_SOURCES = t/rpc_tcp_test.c t/rpcrdma_test_util.c t/rpcrdma_test_util.h
t_rpc_tcp_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_rpc_tcp_test_LDADD = t/libbulkprog.a $(LDADD) $(CMOCKA_LIBS)
check_PROGRAMS += t/rpc_replay_test
TESTS += t/rpc_replay_test
t_rpc_replay_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_rpc_replay_test_LDADD = $(LDADD) $(CMOCKA_LIBS)
check_PROGRAMS += t/rpc_udp_test
TESTS += t/rpc_udp_test
t_rpc_udp_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_rpc_udp_test_LDADD = t/libbulkprog.a $(LDADD) $(CMOCKA_LIBS)
check_PROGRAMS += t/rpc_tcp_limits_test
TESTS += t/rpc_tcp_limits_test
t_rpc_tcp_limits_test_SOURCES = t/rpc_tcp_limits_test.c t/rpcrdma_test_util.c t/rpcrdma_test_util.h \
	t/test_fds.h
t_rpc_tcp_limits_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_rpc_tcp_limits_test_LDADD = t/libbulkprog.a $(LDADD) $(CMOCKA_LIBS)
endif

if HAVE_CMOCKA
check_PROGRAMS += t/rpc_drc_test
TESTS += t/rpc_drc_test
t_rpc_drc_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_rpc_drc_test_LDADD = $(LDADD) $(CMOCKA_LIBS)
endif
