# rpc: ONC RPC (headers over libtirpc XDR, credentials, integrity MICs), the
# server dispatcher and workers, and RPC over TCP with record marking.
libnfsrdma_a_SOURCES += \
	common/rpc/rpc.h common/rpc/rpc_msg.c common/rpc/rpc_auth.c common/rpc/rpc_auth.h common/rpc/rpc_svc.c \
	common/rpc/rpc_drc.c common/rpc/rpc_drc.h common/rpc/rpc_replay.c common/rpc/rpc_replay.h \
	common/rpc/integrity.c common/rpc/integrity.h common/base/net.c common/base/net.h \
	common/rpc/rpc_tcp.h common/rpc/rpc_tcp_int.h common/rpc/rpc_tcp.c common/rpc/rpc_tcp_conn.c \
	common/rpc/rpc_tcp_clnt.c common/rpc/rpc_rec.c \
	common/rpc/rpc_udp.c common/rpc/rpc_udp.h common/rpc/rpcb.c common/rpc/rpcb.h

# The transport test program (echo and bulk), shared by the RPC and RPC/RDMA tests.
noinst_LIBRARIES += t/system/libbulkprog.a
t_system_libbulkprog_a_SOURCES = t/system/bulkprog.c t/system/bulkprog.h
t_system_libbulkprog_a_CPPFLAGS = $(AM_CPPFLAGS)
# Servers, clients and bulk calls for the RPC and RPC/RDMA tests and benchmarks.
RRT_UTIL = t/system/rpcrdma_test_util.c t/system/rpcrdma_test_util.h

if HAVE_CMOCKA
check_PROGRAMS += t/system/rpc_tcp_test
TESTS += t/system/rpc_tcp_test
t_system_rpc_tcp_test_SOURCES = t/system/rpc_tcp_test.c $(RRT_UTIL)
t_system_rpc_tcp_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_system_rpc_tcp_test_LDADD = t/system/libbulkprog.a $(LDADD) $(CMOCKA_LIBS)
check_PROGRAMS += t/unit/net_str_test
TESTS += t/unit/net_str_test
t_unit_net_str_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_unit_net_str_test_LDADD = $(LDADD) $(CMOCKA_LIBS)
check_PROGRAMS += t/unit/rpc_replay_test
TESTS += t/unit/rpc_replay_test
t_unit_rpc_replay_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_unit_rpc_replay_test_LDADD = $(LDADD) $(CMOCKA_LIBS)
check_PROGRAMS += t/system/rpc_udp_test
TESTS += t/system/rpc_udp_test
t_system_rpc_udp_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_system_rpc_udp_test_LDADD = t/system/libbulkprog.a $(LDADD) $(CMOCKA_LIBS)
check_PROGRAMS += t/system/rpc_tcp_limits_test
TESTS += t/system/rpc_tcp_limits_test
t_system_rpc_tcp_limits_test_SOURCES = t/system/rpc_tcp_limits_test.c $(RRT_UTIL) \
	t/system/test_fds.h
t_system_rpc_tcp_limits_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_system_rpc_tcp_limits_test_LDADD = t/system/libbulkprog.a $(LDADD) $(CMOCKA_LIBS)
endif

if HAVE_CMOCKA
check_PROGRAMS += t/unit/rpc_drc_test
TESTS += t/unit/rpc_drc_test
t_unit_rpc_drc_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_unit_rpc_drc_test_LDADD = $(LDADD) $(CMOCKA_LIBS)
endif
