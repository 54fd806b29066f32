# Fuzzing with libFuzzer, outside the normal build (never part of `make`,
# `make check` or `make distcheck`): `make fuzz` builds one target per decoder
# of untrusted bytes with $(CLANG) (each from the sources it needs); `make
# fuzz-run` runs each for FUZZ_RUNS executions (at most FUZZ_SECONDS) on a
# working corpus in the build tree, seeded from t/fuzz/corpus/NAME, and prints
# an automake-style summary (SKIP when clang is missing) that scripts/check.sh
# adds up; a target that fails has its sanitizer's report and the crash
# input's name in "# " lines, which check.sh shows with the FAIL line. The
# targets:
#   rpcrdma_hdr  the RPC/RDMA header and RFC 8797 private data (both sides)
#   rpc_call     the server's RPC call header, credentials and NFS/MOUNT arguments
#   rpc_reply    the client's RPC reply and NFS/MOUNT results (READDIR entries too)
#   nlm          the server's NLM v4 and NSM calls, through the real lock manager
#   soft_wire    the soft provider's wire format from a hostile peer, on a real connection
#   nlm_cb       the client's NLM callback service: GRANTED, SM_NOTIFY, forwards, GETPORT
#   nlm_cbtcp    the same service's TCP connections: record marking and the calls
#   rpc_tcp      RPC over TCP from a hostile client: record marking and the calls, on loopback
FUZZ_RUNS = 1000000
FUZZ_SECONDS = 60
FUZZ_NAMES = rpcrdma_hdr rpc_call rpc_reply nlm soft_wire nlm_cb nlm_cbtcp rpc_tcp
FUZZ_CFLAGS = -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer
FUZZ_CC = $(CLANG) $(FUZZ_CFLAGS) $(WARN_CFLAGS) -Wno-format-nonliteral -I$(top_builddir) \
	-I$(top_srcdir) $(TIRPC_CFLAGS) -include config.h
# rpcgen's output trips warnings that hand-written code may not (see mk/nfs.mk)
FUZZ_XDR_FLAGS = -Wno-unused-variable -Wno-unused-parameter -Wno-missing-prototypes \
	-Wno-strict-prototypes -Wno-shadow -Wno-cast-qual -Wno-unused-function

FUZZ_rpcrdma_hdr_SRCS = common/rpcrdma/rpcrdma_hdr.c common/rpcrdma/rpcrdma_cm_private.c \
	common/base/cursor.c common/base/log.c
FUZZ_RPC_SRCS = common/rpc/rpc_msg.c common/rpc/rpc_auth.c common/rpc/integrity.c \
	common/base/log.c common/nfs/nfs3_xdr.c common/nfs/nfs3_ddp.c
FUZZ_rpc_call_SRCS = $(FUZZ_RPC_SRCS) common/rpc/rpc_svc.c common/rpc/rpc_drc.c common/rpc/rpc_replay.c \
	common/base/workq.c
FUZZ_rpc_reply_SRCS = $(FUZZ_RPC_SRCS)
FUZZ_RPC_LIBS = $(TIRPC_LIBS) $(CRYPTO_LIBS)
FUZZ_TARGETS = $(FUZZ_NAMES:%=t/fuzz/fuzz_%)
$(FUZZ_TARGETS): $(srcdir)/t/fuzz/fuzz_common.h

EXTRA_DIST += $(FUZZ_NAMES:%=t/fuzz/fuzz_%.c) t/fuzz/fuzz_common.h t/fuzz/corpus
PHONY_TARGETS += fuzz fuzz-run clean-fuzz
EXTRA_TARGETS += fuzz-run:700

fuzz: $(FUZZ_TARGETS)

fuzz-check-clang:
	@if test "$(CLANG)" = no; then \
		echo "fuzz: clang not found by configure (Debian: clang libclang-rt-14-dev)" >&2; \
		exit 1; \
	fi
	@$(MKDIR_P) t/fuzz t/fuzz/obj

# The generated XDR, compiled once for the targets that decode NFS (and NLM).
t/fuzz/obj/nfs_xdr.o: $(NFS_XDR_GEN) $(NLM_XDR_GEN) | fuzz-check-clang
	$(AM_V_CC)for x in nfs3 mount ordma nlm nsm; do \
		$(FUZZ_CC) $(FUZZ_XDR_FLAGS) -fsanitize=fuzzer-no-link -c -o t/fuzz/obj/$$x.o \
			common/nfs/$${x}_prot_xdr.c || exit 1; \
	done && \
	ld -r -o $@ t/fuzz/obj/nfs3.o t/fuzz/obj/mount.o t/fuzz/obj/ordma.o t/fuzz/obj/nlm.o \
		t/fuzz/obj/nsm.o

# Targets that run the server's own procedures link its libraries, compiled
# for the fuzzer into one archive (the linker takes only what is used), with
# the client's lock manager, which only nfsrdma-client links (mk/client.mk).
FUZZ_LIB_OBJS = $(patsubst %.c,t/fuzz/obj/%.o,$(filter %.c,$(server_libnfsserver_a_SOURCES) \
	$(libnfsrdma_a_SOURCES) $(CLIENT_NLM_SOURCES)))
FUZZ_LIB_CFLAGS = $(LIBCONFIG_CFLAGS) $(CRYPTO_CFLAGS) $(CEPHFS_CFLAGS) $(LMDB_CFLAGS)
FUZZ_LIB_LIBS = $(RDMACORE_LIBS) $(TIRPC_LIBS) $(LIBCONFIG_LIBS) $(CRYPTO_LIBS) $(CEPHFS_LIBS) $(LMDB_LIBS) $(LIBS)
t/fuzz/obj/%.o: $(srcdir)/%.c | fuzz-check-clang
	@$(MKDIR_P) $(@D)
	$(AM_V_CC)$(FUZZ_CC) $(FUZZ_LIB_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<
-include $(FUZZ_LIB_OBJS:.o=.d)
t/fuzz/obj/libserver.a: $(FUZZ_LIB_OBJS) t/fuzz/obj/nfs_xdr.o
	$(AM_V_AR)rm -f $@ && $(AR) rcs $@ $(FUZZ_LIB_OBJS) t/fuzz/obj/nfs_xdr.o

t/fuzz/fuzz_rpcrdma_hdr: $(srcdir)/t/fuzz/fuzz_rpcrdma_hdr.c \
		$(FUZZ_rpcrdma_hdr_SRCS:%=$(srcdir)/%) | fuzz-check-clang
	$(AM_V_CC)$(FUZZ_CC) -o $@ $(srcdir)/t/fuzz/fuzz_rpcrdma_hdr.c \
		$(FUZZ_rpcrdma_hdr_SRCS:%=$(srcdir)/%) -lpthread
t/fuzz/fuzz_rpc_call: $(srcdir)/t/fuzz/fuzz_rpc_call.c $(FUZZ_rpc_call_SRCS:%=$(srcdir)/%) \
		t/fuzz/obj/nfs_xdr.o | fuzz-check-clang
	$(AM_V_CC)$(FUZZ_CC) -o $@ $(srcdir)/t/fuzz/fuzz_rpc_call.c \
		$(FUZZ_rpc_call_SRCS:%=$(srcdir)/%) t/fuzz/obj/nfs_xdr.o $(FUZZ_RPC_LIBS) -lpthread
t/fuzz/fuzz_rpc_reply: $(srcdir)/t/fuzz/fuzz_rpc_reply.c $(FUZZ_rpc_reply_SRCS:%=$(srcdir)/%) \
		t/fuzz/obj/nfs_xdr.o | fuzz-check-clang
	$(AM_V_CC)$(FUZZ_CC) -o $@ $(srcdir)/t/fuzz/fuzz_rpc_reply.c \
		$(FUZZ_rpc_reply_SRCS:%=$(srcdir)/%) t/fuzz/obj/nfs_xdr.o $(FUZZ_RPC_LIBS) -lpthread

t/fuzz/fuzz_nlm: $(srcdir)/t/fuzz/fuzz_nlm.c t/fuzz/obj/libserver.a | fuzz-check-clang
	$(AM_V_CC)$(FUZZ_CC) $(FUZZ_LIB_CFLAGS) -o $@ $(srcdir)/t/fuzz/fuzz_nlm.c \
		t/fuzz/obj/libserver.a $(FUZZ_LIB_LIBS) -lpthread

t/fuzz/fuzz_soft_wire: $(srcdir)/t/fuzz/fuzz_soft_wire.c t/fuzz/obj/libserver.a | fuzz-check-clang
	$(AM_V_CC)$(FUZZ_CC) $(FUZZ_LIB_CFLAGS) -o $@ $(srcdir)/t/fuzz/fuzz_soft_wire.c \
		t/fuzz/obj/libserver.a $(FUZZ_LIB_LIBS) -lpthread

t/fuzz/fuzz_nlm_cb: $(srcdir)/t/fuzz/fuzz_nlm_cb.c t/fuzz/obj/libserver.a | fuzz-check-clang
	$(AM_V_CC)$(FUZZ_CC) $(FUZZ_LIB_CFLAGS) -o $@ $(srcdir)/t/fuzz/fuzz_nlm_cb.c \
		t/fuzz/obj/libserver.a $(FUZZ_LIB_LIBS) -lpthread

t/fuzz/fuzz_nlm_cbtcp: $(srcdir)/t/fuzz/fuzz_nlm_cbtcp.c $(srcdir)/t/fuzz/fuzz_nlm_cb.c \
		t/fuzz/obj/libserver.a | fuzz-check-clang
	$(AM_V_CC)$(FUZZ_CC) $(FUZZ_LIB_CFLAGS) -o $@ $(srcdir)/t/fuzz/fuzz_nlm_cbtcp.c \
		t/fuzz/obj/libserver.a $(FUZZ_LIB_LIBS) -lpthread

t/fuzz/fuzz_rpc_tcp: $(srcdir)/t/fuzz/fuzz_rpc_tcp.c t/fuzz/obj/libserver.a | fuzz-check-clang
	$(AM_V_CC)$(FUZZ_CC) $(FUZZ_LIB_CFLAGS) -o $@ $(srcdir)/t/fuzz/fuzz_rpc_tcp.c \
		t/fuzz/obj/libserver.a $(FUZZ_LIB_LIBS) -lpthread

fuzz-run:
	@if test "$(CLANG)" = no; then \
		echo "SKIP: fuzz-run (clang not found by configure)"; \
		printf '# TOTAL: 1\n# PASS:  0\n# SKIP:  1\n# FAIL:  0\n'; \
		exit 0; \
	fi; \
	$(MAKE) $(AM_MAKEFLAGS) fuzz || exit 1; \
	pass=0 fail=0 skip=0; \
	for n in $(FUZZ_NAMES); do \
		if test $$n = nlm && test "$$(id -u)" -ne 0; then \
			echo "SKIP: fuzz-run nlm (needs root: the backend opens files by handle)"; \
			skip=$$((skip + 1)); continue; \
		fi; \
		$(MKDIR_P) t/fuzz/work-$$n t/fuzz/artifacts; \
		seeds=$(srcdir)/t/fuzz/corpus/$$n; test -d $$seeds || seeds=; \
		if ./t/fuzz/fuzz_$$n -runs=$(FUZZ_RUNS) -max_total_time=$(FUZZ_SECONDS) \
			-max_len=65536 -print_final_stats=1 -artifact_prefix=t/fuzz/artifacts/$$n- \
			t/fuzz/work-$$n $$seeds > t/fuzz/fuzz-$$n.log 2>&1; then \
			execs=$$(sed -n 's/^stat::number_of_executed_units: *//p' t/fuzz/fuzz-$$n.log); \
			echo "PASS: fuzz-run $$n ($$execs executions, log t/fuzz/fuzz-$$n.log)"; \
			pass=$$((pass + 1)); \
		else \
			tail -n 60 t/fuzz/fuzz-$$n.log; \
			grep -E 'ERROR|runtime error|SUMMARY|Test unit written to|^ *#[0-9]+ 0x' \
				t/fuzz/fuzz-$$n.log | head -n 25 | sed 's/^/# /'; \
			echo "FAIL: fuzz-run $$n: crash input in t/fuzz/artifacts/"; \
			fail=$$((fail + 1)); \
		fi; \
	done; \
	printf '# TOTAL: %d\n# PASS:  %d\n# SKIP:  %d\n# FAIL:  %d\n' $$((pass + fail + skip)) $$pass \
		$$skip $$fail; \
	test $$fail -eq 0

clean-fuzz:
	rm -rf $(FUZZ_TARGETS) t/fuzz/obj t/fuzz/work-* t/fuzz/artifacts t/fuzz/fuzz-*.log
clean-local: clean-fuzz
PHONY_TARGETS += fuzz-check-clang
