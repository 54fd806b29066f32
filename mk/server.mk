# server: the nfsrdma-server daemon: start-up, reload and drain (server/daemon.c),
# rpcbind registration, the control socket, and its command line.
sbin_PROGRAMS += server/nfsrdma-server
server_nfsrdma_server_SOURCES = server/main.c server/daemon.c server/daemon.h \
	server/rpcbind.c server/rpcbind.h server/ctl.c server/ctl.h
server_nfsrdma_server_CPPFLAGS = $(AM_CPPFLAGS) -DSYSCONFDIR=\"$(sysconfdir)\"
server_nfsrdma_server_LDADD = $(SERVER_LDADD)

TESTS += t/server_daemon.sh t/server_cephfs.sh
EXTRA_DIST += t/server_daemon.sh t/server_cephfs.sh t/test-lib.sh
dist_man_MANS += man/nfsrdma-server.8
TESTS += t/server_fio.sh
EXTRA_DIST += t/server_fio.sh scripts/build-fio-nfs.sh
check_PROGRAMS += t/nfsprobe
t_nfsprobe_SOURCES = t/nfsprobe.c

# The hostile benchmark (issue 11): a good client's calls/s alone and while
# others attack the server; the server's threads and memory. Figures only.
noinst_PROGRAMS += t/hostile_bench
t_hostile_bench_SOURCES = t/hostile_bench.c
bench-hostile: t/hostile_bench$(EXEEXT) server/nfsrdma-server$(EXEEXT)
	./t/hostile_bench$(EXEEXT) server/nfsrdma-server$(EXEEXT) --seconds 3 --rounds 3 \
		>t/bench-hostile.log; st=$$?; sed 's/^/bench-hostile: /' t/bench-hostile.log; exit $$st
PHONY_TARGETS += bench-hostile
EXTRA_TARGETS += bench-hostile:300
CLEANFILES += t/bench-hostile.log
