# backend: NFSv3 and MOUNT v3 procedures over a POSIX backend, the XDR
# routines rpcgen makes from server/*.x, and the per-OS hooks (common/osdep.h).

# XDR: generated at build time into the build tree. The generated C is built
# as its own small library with the warnings rpcgen's output trips relaxed, so
# -Werror still holds for hand-written code; its objects go into libnfsrdma.a.
BACKEND_XDR_GEN = server/nfs3_prot.h server/nfs3_prot_xdr.c \
	server/mount_prot.h server/mount_prot_xdr.c
BUILT_SOURCES += $(BACKEND_XDR_GEN)
CLEANFILES += $(BACKEND_XDR_GEN)
EXTRA_DIST += server/nfs3_prot.x server/mount_prot.x
noinst_LIBRARIES += libnfsxdr.a
nodist_libnfsxdr_a_SOURCES = $(BACKEND_XDR_GEN)
libnfsxdr_a_CFLAGS = $(AM_CFLAGS) -Wno-unused-variable -Wno-unused-parameter \
	-Wno-missing-prototypes -Wno-strict-prototypes -Wno-shadow
libnfsrdma_a_LIBADD = $(libnfsxdr_a_OBJECTS)
EXTRA_libnfsrdma_a_DEPENDENCIES = $(libnfsxdr_a_OBJECTS)

# rpcgen names the header after the .x and includes it by the path it was
# given; the sed makes the include plain, as the .c sits beside its header.
server/nfs3_prot.h: server/nfs3_prot.x
	$(AM_V_GEN)$(MKDIR_P) server && $(RPCGEN) -h $< > $@-t && mv -f $@-t $@
server/mount_prot.h: server/mount_prot.x
	$(AM_V_GEN)$(MKDIR_P) server && $(RPCGEN) -h $< > $@-t && mv -f $@-t $@
server/nfs3_prot_xdr.c: server/nfs3_prot.x server/nfs3_prot.h
	$(AM_V_GEN)$(RPCGEN) -c $(srcdir)/server/nfs3_prot.x > $@-t1 && \
		sed 's|^#include ".*nfs3_prot.h"|#include "nfs3_prot.h"|' $@-t1 > $@-t && \
		rm -f $@-t1 && mv -f $@-t $@
server/mount_prot_xdr.c: server/mount_prot.x server/mount_prot.h
	$(AM_V_GEN)$(RPCGEN) -c $(srcdir)/server/mount_prot.x > $@-t1 && \
		sed 's|^#include ".*mount_prot.h"|#include "mount_prot.h"|' $@-t1 > $@-t && \
		rm -f $@-t1 && mv -f $@-t $@

# The per-OS hooks: one file per OS, chosen by configure. The illumos file is
# not compiled on Linux, but ships in the tarball.
EXTRA_DIST += platform/linux/osdep.c platform/illumos/osdep.c
libnfsrdma_a_SOURCES += common/osdep.h
if PLATFORM_LINUX
libnfsrdma_a_SOURCES += platform/linux/osdep.c
endif
if PLATFORM_ILLUMOS
libnfsrdma_a_SOURCES += platform/illumos/osdep.c
endif

libnfsrdma_a_SOURCES += \
	server/backend.c server/backend.h server/backend_int.h \
	server/backend_attr.c server/backend_fh.c \
	server/export.c server/export.h \
	server/fhcache.c server/fhcache.h \
	server/nfs3.h server/nfs3_proc.h server/nfs3_proc.c server/nfs3_proc_dir.c \
	server/nfs3_proc_io.c server/nfs3_proc_readdir.c \
	server/mount3_proc.c server/nfs3_ddp.c server/nfs3_ddp.h \
	server/nfs_program.c server/nfs_program.h

# Tests: cmocka, over scratch exports under $TMPDIR.
EXTRA_DIST += t/nfs3_testlib.h
if HAVE_CMOCKA
BACKEND_TESTS = t/nfs3_proc_test t/nfs3_security_test t/backend_fh_test \
	t/nfs3_stress_test t/mount3_test t/nfs3_xdr_test
if PLATFORM_LINUX
BACKEND_TESTS += t/backend_osdep_test
endif
check_PROGRAMS += $(BACKEND_TESTS)
TESTS += $(BACKEND_TESTS)
t_nfs3_proc_test_SOURCES = t/nfs3_proc_test.c t/nfs3_testlib.c
t_nfs3_proc_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_nfs3_proc_test_LDADD = $(LDADD) $(CMOCKA_LIBS)
t_nfs3_security_test_SOURCES = t/nfs3_security_test.c t/nfs3_testlib.c
t_nfs3_security_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_nfs3_security_test_LDADD = $(LDADD) $(CMOCKA_LIBS)
t_backend_fh_test_SOURCES = t/backend_fh_test.c t/nfs3_testlib.c
t_backend_fh_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_backend_fh_test_LDADD = $(LDADD) $(CMOCKA_LIBS)
t_nfs3_stress_test_SOURCES = t/nfs3_stress_test.c t/nfs3_testlib.c
t_nfs3_stress_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_nfs3_stress_test_LDADD = $(LDADD) $(CMOCKA_LIBS)
t_mount3_test_SOURCES = t/mount3_test.c t/nfs3_testlib.c
t_mount3_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_mount3_test_LDADD = $(LDADD) $(CMOCKA_LIBS)
t_backend_osdep_test_SOURCES = t/backend_osdep_test.c
t_backend_osdep_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_backend_osdep_test_LDADD = $(LDADD) $(CMOCKA_LIBS)
t_nfs3_xdr_test_SOURCES = t/nfs3_xdr_test.c
t_nfs3_xdr_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_nfs3_xdr_test_LDADD = $(LDADD) $(CMOCKA_LIBS)
endif
