# core: logging, the command line's common parts and the verbs registry
# (common/verbs.h).
libnfsrdma_a_SOURCES += common/base/log.c common/base/log.h common/base/poison.h common/base/cli.c common/base/cli.h \
	common/base/ctl.c common/base/ctl.h \
	common/verbs.c common/verbs.h common/base/clock.c common/base/clock.h common/base/workq.c common/base/workq.h

# The poller the event loops and the soft provider wait in (common/base/poller.h):
# the OS's own backend, and the portable poll() one, which every OS builds.
libnfsrdma_a_SOURCES += common/base/poller.h platform/poller.c platform/posix/poller_poll.c \
	platform/posix/wakefd_pipe.c
EXTRA_DIST += platform/linux/poller_epoll.c platform/linux/wakefd_eventfd.c \
	platform/illumos/poller_port.c platform/illumos/wakefd_native.c
if PLATFORM_LINUX
libnfsrdma_a_SOURCES += platform/linux/poller_epoll.c platform/linux/wakefd_eventfd.c
endif
if PLATFORM_ILLUMOS
libnfsrdma_a_SOURCES += platform/illumos/poller_port.c platform/illumos/wakefd_native.c
endif

if HAVE_CMOCKA
check_PROGRAMS += t/unit/log_test
TESTS += t/unit/log_test
t_unit_log_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_unit_log_test_LDADD = $(LDADD) $(CMOCKA_LIBS)
endif

# Every command's --help, --version, usage errors and man page.
TESTS += t/system/cli.sh
EXTRA_DIST += t/system/cli.sh
