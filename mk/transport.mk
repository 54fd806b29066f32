# transport: sources, programs and tests of this area.
libnfsrdma_a_SOURCES += \
	common/base/evloop.c common/base/evloop.h common/rpcrdma/rpcrdma.h common/rpcrdma/rpcrdma_int.h \
	common/rpcrdma/rpcrdma_reg.c common/rpcrdma/rpcrdma_reg.h \
	common/rpcrdma/rpcrdma_reg_int.h common/rpcrdma/rpcrdma_reg_dynamic.c common/rpcrdma/rpcrdma_reg_cache.c \
	common/rpcrdma/rpcrdma_reg_fastreg.c common/rpcrdma/rpcrdma_reg_allphys.c common/rpcrdma/rpcrdma_reg_arena.c common/rpcrdma/rpcrdma_conn.c common/rpcrdma/rpcrdma_config.c common/rpcrdma/rpcrdma_post.c \
	common/rpcrdma/rpcrdma_svc.c common/rpcrdma/rpcrdma_svc.h \
	common/rpcrdma/rpcrdma_svc_bufs.c common/rpcrdma/rpcrdma_svc_call.c common/rpcrdma/rpcrdma_svc_reply.c \
	common/rpcrdma/rpcrdma_svc_admit.c common/rpcrdma/rpcrdma_clnt.c common/rpcrdma/rpcrdma_clnt.h \
	common/rpcrdma/rpcrdma_clnt_chunks.c

RRT_RAW = t/system/rpcrdma_raw.c t/system/rpcrdma_raw.h
RRT_RAW_CALLS = t/system/rpcrdma_raw_calls.c t/system/rpcrdma_raw_calls.h $(RRT_RAW)
if HAVE_CMOCKA
check_PROGRAMS += t/system/rpcrdma_test
TESTS += t/system/rpcrdma_test
t_system_rpcrdma_test_SOURCES = t/system/rpcrdma_test.c t/system/rpcrdma_test_reg.c \
	t/system/rpcrdma_test_inline.c $(RRT_UTIL) $(RRT_RAW)
t_system_rpcrdma_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_system_rpcrdma_test_LDADD = t/system/libbulkprog.a $(LDADD) $(CMOCKA_LIBS)
endif

if HAVE_CMOCKA
check_PROGRAMS += t/system/rpcrdma_hostile_test
TESTS += t/system/rpcrdma_hostile_test
t_system_rpcrdma_hostile_test_SOURCES = t/system/rpcrdma_hostile_test.c $(RRT_UTIL) $(RRT_RAW_CALLS)
t_system_rpcrdma_hostile_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_system_rpcrdma_hostile_test_LDADD = t/system/libbulkprog.a $(LDADD) $(CMOCKA_LIBS)
check_PROGRAMS += t/system/rpcrdma_exposure_test
TESTS += t/system/rpcrdma_exposure_test
t_system_rpcrdma_exposure_test_SOURCES = t/system/rpcrdma_exposure_test.c $(RRT_UTIL) \
	$(RRT_RAW_CALLS)
t_system_rpcrdma_exposure_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_system_rpcrdma_exposure_test_LDADD = t/system/libbulkprog.a $(LDADD) $(CMOCKA_LIBS)
t_system_rpcrdma_exposure_test_LDFLAGS = $(AM_LDFLAGS) -Wl,--wrap=soft_bind_mw \
	-Wl,--wrap=soft_alloc_mw
check_PROGRAMS += t/system/rpcrdma_alloc_test
TESTS += t/system/rpcrdma_alloc_test
t_system_rpcrdma_alloc_test_SOURCES = t/system/rpcrdma_alloc_test.c $(RRT_UTIL)
t_system_rpcrdma_alloc_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_system_rpcrdma_alloc_test_LDADD = t/system/libbulkprog.a $(LDADD) $(CMOCKA_LIBS)
t_system_rpcrdma_alloc_test_LDFLAGS = $(AM_LDFLAGS) -Wl,--wrap=malloc -Wl,--wrap=calloc \
	-Wl,--wrap=realloc
check_PROGRAMS += t/system/rpcrdma_clnt_hostile_test
TESTS += t/system/rpcrdma_clnt_hostile_test
t_system_rpcrdma_clnt_hostile_test_SOURCES = t/system/rpcrdma_clnt_hostile_test.c $(RRT_RAW)
t_system_rpcrdma_clnt_hostile_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_system_rpcrdma_clnt_hostile_test_LDADD = $(LDADD) $(CMOCKA_LIBS)
endif

# RPC/RDMA bulk throughput per mode and strategy (and RPC/TCP), non-sanitized
# numbers only mean something; CSV in build/bench/rpc-bulk.csv.
noinst_PROGRAMS += t/bench/rpc_bulk_bench
t_bench_rpc_bulk_bench_SOURCES = t/bench/rpc_bulk_bench.c $(RRT_UTIL)
t_bench_rpc_bulk_bench_LDADD = t/system/libbulkprog.a $(LDADD)
bench-rpc: t/bench/rpc_bulk_bench
	$(MKDIR_P) $(abs_top_srcdir)/build/bench
	./t/bench/rpc_bulk_bench --seconds 1 --csv $(abs_top_srcdir)/build/bench/rpc-bulk.csv
PHONY_TARGETS += bench-rpc
EXTRA_TARGETS += bench-rpc:450

# The soak: SOAK_SECONDS of random calls over random modes and strategies.
noinst_PROGRAMS += t/bench/rpcrdma_soak
t_bench_rpcrdma_soak_SOURCES = t/bench/rpcrdma_soak.c $(RRT_UTIL)
t_bench_rpcrdma_soak_LDADD = t/system/libbulkprog.a $(LDADD)
EXTRA_DIST += t/bench/rpcrdma_soak.sh
soak: t/bench/rpcrdma_soak
	$(MAKE) $(AM_MAKEFLAGS) check TESTS=t/bench/rpcrdma_soak.sh TEST_SUITE_LOG=t/rpcrdma-soak.log
PHONY_TARGETS += soak
EXTRA_TARGETS += soak:900
CLEANFILES += t/rpcrdma-soak.log

if HAVE_CMOCKA
check_PROGRAMS += t/unit/evloop_test t/unit/poller_test
TESTS += t/unit/evloop_test t/unit/poller_test
t_unit_evloop_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_unit_evloop_test_LDADD = $(LDADD) $(CMOCKA_LIBS)
t_unit_evloop_test_LDFLAGS = $(AM_LDFLAGS) -Wl,--wrap=malloc
t_unit_poller_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_unit_poller_test_LDADD = $(LDADD) $(CMOCKA_LIBS)
# Once more with the portable poll() backend (NFSRDMA_POLLER=poll): the event
# loop, the soft provider's engine under RPC/RDMA, and the daemon.
TESTS += t/unit/evloop_poll.sh t/unit/poller_poll.sh t/system/rpcrdma_poll.sh
endif
TESTS += t/system/server_daemon_poll.sh
# Listen addresses: "0.0.0.0" beside "::", and as many as server.listen takes.
TESTS += t/system/server_listen.sh
dist_check_SCRIPTS += t/system/server_listen.sh
# Once more with portable file handles (server.handles = "portable").
TESTS += t/system/server_daemon_portable.sh
dist_check_SCRIPTS += t/system/server_daemon_portable.sh
# And as an illumos server runs: userspace identity checks, portable handles,
# the poll() event loop.
TESTS += t/system/server_daemon_userspace.sh
dist_check_SCRIPTS += t/system/server_daemon_userspace.sh
# Optimistic RDMA through the daemon and nfsrdma-client bench (issue 23).
TESTS += t/system/server_ordma.sh
dist_check_SCRIPTS += t/system/server_ordma.sh
dist_check_SCRIPTS += t/unit/evloop_poll.sh t/unit/poller_poll.sh t/system/rpcrdma_poll.sh \
	t/system/server_daemon_poll.sh
