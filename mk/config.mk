# config: the configuration file (common/base/config.c over libconfig), sizes, the
# sample file and its man page. (nfsrdma-server itself: mk/server.mk.)
libnfsrdma_a_SOURCES += common/base/config.c common/base/config.h common/base/config_int.h \
	common/base/config_errors.c common/base/config_exports.c common/base/config_exportsfile.c \
	common/base/config_table.c common/base/config_doc.c common/base/config_check.c common/base/config_parse.c common/base/config_addr.c \
	common/base/size.c common/base/size.h

dist_sysconf_DATA += etc/nfsrdma.conf etc/nfsrdma.exports
dist_man_MANS += man/nfsrdma.conf.5 man/nfsrdma.exports.5

if HAVE_CMOCKA
check_PROGRAMS += t/unit/config_test
TESTS += t/unit/config_test
t_unit_config_test_SOURCES = t/unit/config_test.c t/unit/config_test.h t/unit/config_test_values.c \
	t/unit/config_test_errors.c t/unit/config_test_files.c t/unit/config_test_clients.c
t_unit_config_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_unit_config_test_LDADD = $(LDADD) $(CMOCKA_LIBS)
endif

TESTS += t/system/config_check.sh t/system/exports_file.sh
EXTRA_DIST += t/system/config_check.sh t/system/exports_file.sh t/data/config
