# codec: the bounds-checked cursor every wire decoder uses, and the RPC/RDMA
# transport header codec (RFC 8166) with RFC 8797 private data.
libnfsrdma_a_SOURCES += common/base/cursor.c common/base/cursor.h common/rpcrdma/rpcrdma_hdr.c common/rpcrdma/rpcrdma_hdr.h \
	common/rpcrdma/rpcrdma_cm_private.c

if HAVE_CMOCKA
check_PROGRAMS += t/cursor_test t/rpcrdma_hdr_test
TESTS += t/cursor_test t/rpcrdma_hdr_test
t_cursor_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_cursor_test_LDADD = $(LDADD) $(CMOCKA_LIBS)
t_rpcrdma_hdr_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_rpcrdma_hdr_test_LDADD = $(LDADD) $(CMOCKA_LIBS)
endif

# Fuzzing with libFuzzer, outside the normal build (never part of `make`,
# `make check` or `make distcheck`): `make fuzz` builds the target with
# $(CLANG); `make fuzz-run` runs it for FUZZ_SECONDS on a working corpus in
# the build tree, seeded from t/fuzz/corpus/rpcrdma_hdr, and prints an
# automake-style summary (SKIP when clang is missing) that scripts/check.sh adds up.
# Regenerate the seeds with: t/rpcrdma_hdr_test --write-corpus $(srcdir)/t/fuzz/corpus/rpcrdma_hdr
FUZZ_SECONDS = 300
FUZZ_CFLAGS = -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer
FUZZ_HDR = t/fuzz/fuzz_rpcrdma_hdr
FUZZ_HDR_SRCS = $(srcdir)/t/fuzz/fuzz_rpcrdma_hdr.c $(srcdir)/common/rpcrdma/rpcrdma_hdr.c \
	$(srcdir)/common/rpcrdma/rpcrdma_cm_private.c \
	$(srcdir)/common/base/cursor.c $(srcdir)/common/base/log.c
FUZZ_HDR_DEPS = $(FUZZ_HDR_SRCS) $(srcdir)/common/rpcrdma/rpcrdma_hdr.h $(srcdir)/common/base/cursor.h \
	$(srcdir)/common/base/log.h config.h

EXTRA_DIST += t/fuzz/fuzz_rpcrdma_hdr.c t/fuzz/corpus
PHONY_TARGETS += fuzz fuzz-run clean-fuzz
EXTRA_TARGETS += fuzz-run:600

fuzz: $(FUZZ_HDR)

$(FUZZ_HDR): $(FUZZ_HDR_DEPS)
	@if test "$(CLANG)" = no; then \
		echo "fuzz: clang not found by configure (Debian: clang libclang-rt-14-dev)" >&2; \
		exit 1; \
	fi
	@$(MKDIR_P) t/fuzz
	$(AM_V_CC)$(CLANG) $(FUZZ_CFLAGS) $(WARN_CFLAGS) -Wno-format-nonliteral -I$(top_builddir) -I$(top_srcdir) \
		-include config.h -o $@ $(FUZZ_HDR_SRCS) -lpthread

fuzz-run:
	@if test "$(CLANG)" = no; then \
		echo "SKIP: fuzz-run (clang not found by configure)"; \
		printf '# TOTAL: 1\n# PASS:  0\n# SKIP:  1\n# FAIL:  0\n'; \
		exit 0; \
	fi; \
	$(MAKE) $(AM_MAKEFLAGS) fuzz || exit 1; \
	$(MKDIR_P) t/fuzz/work-rpcrdma_hdr t/fuzz/artifacts; \
	echo "fuzz-run: $(FUZZ_HDR) for $(FUZZ_SECONDS) s"; \
	if ./$(FUZZ_HDR) -max_total_time=$(FUZZ_SECONDS) -max_len=12288 -print_final_stats=1 \
		-artifact_prefix=t/fuzz/artifacts/ t/fuzz/work-rpcrdma_hdr \
		$(srcdir)/t/fuzz/corpus/rpcrdma_hdr > t/fuzz/fuzz-run.log 2>&1; then \
		grep -E 'INITED|DONE|^Done|stat::' t/fuzz/fuzz-run.log; \
		echo "PASS: fuzz-run $(FUZZ_HDR) ($(FUZZ_SECONDS) s, log t/fuzz/fuzz-run.log)"; \
		printf '# TOTAL: 1\n# PASS:  1\n# SKIP:  0\n# FAIL:  0\n'; \
	else \
		tail -n 60 t/fuzz/fuzz-run.log; \
		echo "FAIL: fuzz-run $(FUZZ_HDR): crash input in t/fuzz/artifacts/"; \
		printf '# TOTAL: 1\n# PASS:  0\n# SKIP:  0\n# FAIL:  1\n'; \
		exit 1; \
	fi

clean-fuzz:
	rm -rf $(FUZZ_HDR) t/fuzz/work-rpcrdma_hdr t/fuzz/artifacts t/fuzz/fuzz-run.log
clean-local: clean-fuzz
