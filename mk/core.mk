# core: logging, the command line's common parts and the verbs registry
# (common/verbs.h).
libnfsrdma_a_SOURCES += common/base/log.c common/base/log.h common/base/cli.c common/base/cli.h \
	common/verbs.c common/verbs.h common/base/clock.h common/base/workq.c common/base/workq.h

if HAVE_CMOCKA
check_PROGRAMS += t/log_test
TESTS += t/log_test
t_log_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_log_test_LDADD = $(LDADD) $(CMOCKA_LIBS)
endif

# Every command's --help, --version, usage errors and man page.
TESTS += t/cli.sh
EXTRA_DIST += t/cli.sh
