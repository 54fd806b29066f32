# config: the configuration file (common/config.c over libconfig), sizes, the
# sample file and its man page. (nfsrdma-server itself: mk/server.mk.)
libnfsrdma_a_SOURCES += common/config.c common/config.h common/config_int.h \
	common/config_table.c common/config_check.c common/config_parse.c common/config_addr.c \
	common/size.c common/size.h

dist_sysconf_DATA += etc/nfsrdma.conf
dist_man_MANS += man/nfsrdma.conf.5

if HAVE_CMOCKA
check_PROGRAMS += t/config_test
TESTS += t/config_test
t_config_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_config_test_LDADD = $(LDADD) $(CMOCKA_LIBS)
endif

TESTS += t/config_check.sh
EXTRA_DIST += t/config_check.sh t/data/config
