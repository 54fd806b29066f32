# server: the nfsrdma-server daemon: start-up, reload and drain (server/daemon.c),
# its stats and exports reports (server/daemon_report.c),
# rpcbind registration, the control socket, and its command line.
sbin_PROGRAMS += server/nfsrdma-server
server_nfsrdma_server_SOURCES = server/main.c server/daemon.c server/daemon_report.c server/daemon.h \
	server/rpcbind.c server/rpcbind.h
server_nfsrdma_server_SOURCES += server/notify.c server/notify.h server/metrics.c server/metrics.h
server_nfsrdma_server_CPPFLAGS = $(AM_CPPFLAGS) -DSYSCONFDIR=\"$(sysconfdir)\"
server_nfsrdma_server_CFLAGS = $(AM_CFLAGS) $(SYSTEMD_CFLAGS) $(MHD_CFLAGS)
server_nfsrdma_server_LDADD = $(SERVER_LDADD) $(SYSTEMD_LIBS) $(MHD_LIBS)

# The systemd unit (Type=notify), with this build's paths; installed by make install.
systemdsystemunit_DATA = etc/nfsrdma-server.service
etc/nfsrdma-server.service: $(srcdir)/etc/nfsrdma-server.service.in Makefile
	$(MKDIR_P) etc
	sed -e 's|@sbindir[@]|$(sbindir)|g' -e 's|@sysconfdir[@]|$(sysconfdir)|g' \
		$(srcdir)/etc/nfsrdma-server.service.in >$@
CLEANFILES += etc/nfsrdma-server.service
EXTRA_DIST += etc/nfsrdma-server.service.in
TESTS += t/system/systemd_unit.sh t/system/systemd_notify.sh t/system/metrics.sh
EXTRA_DIST += t/system/systemd_unit.sh t/system/systemd_notify.sh t/system/metrics.sh
check_DATA = etc/nfsrdma-server.service

TESTS += t/system/server_daemon.sh t/system/exports_daemon.sh t/system/server_cephfs.sh \
	t/system/server_storage_stall.sh t/system/server_lock_stall.sh
EXTRA_DIST += t/system/server_daemon.sh t/system/exports_daemon.sh t/system/server_cephfs.sh \
	t/system/server_storage_stall.sh t/system/server_lock_stall.sh \
	t/test-lib.sh
dist_man_MANS += man/nfsrdma-server.8 man/nfsrdma-metrics.7
TESTS += t/system/server_fio.sh
EXTRA_DIST += t/system/server_fio.sh scripts/build-fio-nfs.sh
check_PROGRAMS += t/system/nfsprobe
t_system_nfsprobe_SOURCES = t/system/nfsprobe.c

# The hostile benchmark (issue 11): a good client's calls/s alone and while
# others attack the server; the server's threads and memory. Figures only.
noinst_PROGRAMS += t/bench/hostile_bench
t_bench_hostile_bench_SOURCES = t/bench/hostile_bench.c
bench-hostile: t/bench/hostile_bench$(EXEEXT) server/nfsrdma-server$(EXEEXT)
	./t/bench/hostile_bench$(EXEEXT) server/nfsrdma-server$(EXEEXT) --seconds 3 --rounds 3 \
		>t/bench-hostile.log; st=$$?; sed 's/^/bench-hostile: /' t/bench-hostile.log; exit $$st
PHONY_TARGETS += bench-hostile
EXTRA_TARGETS += bench-hostile:300
CLEANFILES += t/bench-hostile.log
