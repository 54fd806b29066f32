# nlm: file locking across clients (issue 15): NLM v4 and NSM v1, their XDR
# routines made by rpcgen from common/nfs/{nlm,nsm}_prot.x like NFS and MOUNT
# (mk/nfs.mk), the server's lock manager and status monitor, the per-OS
# open-file-description lock hook, and their test.
# (one file for both OSes: each has F_OFD_SETLK)
libnfsrdma_a_SOURCES += common/nfs/nlm_prog.h common/base/osdep_lock.h platform/posix/osdep_lock.c

NLM_XDR_GEN = common/nfs/nlm_prot.h common/nfs/nlm_prot_xdr.c \
	common/nfs/nsm_prot.h common/nfs/nsm_prot_xdr.c
BUILT_SOURCES += $(NLM_XDR_GEN)
CLEANFILES += $(NLM_XDR_GEN)
EXTRA_DIST += common/nfs/nlm_prot.x common/nfs/nsm_prot.x
nodist_libnfsxdr_a_SOURCES += $(NLM_XDR_GEN)

common/nfs/nlm_prot.h: common/nfs/nlm_prot.x
	$(AM_V_GEN)$(MKDIR_P) common/nfs && $(RPCGEN) -h $< > $@-t1 && \
		sed $(XDR_HYPER_SED) $@-t1 > $@-t && rm -f $@-t1 && mv -f $@-t $@
common/nfs/nsm_prot.h: common/nfs/nsm_prot.x
	$(AM_V_GEN)$(MKDIR_P) common/nfs && $(RPCGEN) -h $< > $@-t1 && \
		sed $(XDR_HYPER_SED) $@-t1 > $@-t && rm -f $@-t1 && mv -f $@-t $@
common/nfs/nlm_prot_xdr.c: common/nfs/nlm_prot.x common/nfs/nlm_prot.h
	$(AM_V_GEN)$(RPCGEN) -c $(srcdir)/common/nfs/nlm_prot.x > $@-t1 && \
		sed $(XDR_HYPER_SED) -e 's|^#include ".*nlm_prot.h"|#include "nlm_prot.h"|' \
			-e 's|xdr_string (xdrs, objp,|xdr_nfs_string (xdrs, objp,|' $@-t1 > $@-t && \
		rm -f $@-t1 && mv -f $@-t $@
common/nfs/nsm_prot_xdr.c: common/nfs/nsm_prot.x common/nfs/nsm_prot.h
	$(AM_V_GEN)$(RPCGEN) -c $(srcdir)/common/nfs/nsm_prot.x > $@-t1 && \
		sed $(XDR_HYPER_SED) -e 's|^#include ".*nsm_prot.h"|#include "nsm_prot.h"|' \
			-e 's|xdr_string (xdrs, objp,|xdr_nfs_string (xdrs, objp,|' $@-t1 > $@-t && \
		rm -f $@-t1 && mv -f $@-t $@

# The server's side: lock state and procedures, callbacks, the status monitor,
# and the backend hook that opens a handle's file for locking.
server_libnfsserver_a_SOURCES += server/backend_lock.c server/backend_lock.h \
	server/nlm.c server/nlm.h server/nlm_int.h server/nlm_host.c server/nlm_block.c \
	server/nlm_share.c server/nlm_range.c server/nlm_proc.c server/nlm_cb.c server/nsm.c \
	server/nlm_turn.c

if HAVE_CMOCKA
check_PROGRAMS += t/system/nlm_test
TESTS += t/system/nlm_test
t_system_nlm_test_SOURCES = t/system/nlm_test.c t/system/nlm_test.h t/system/nlm_test_cb.c \
	t/system/nlm_test_locks.c t/system/nlm_test_hosts.c \
	t/system/nlm_test_rights.c
t_system_nlm_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
t_system_nlm_test_LDADD = $(LDADD) $(CMOCKA_LIBS) -lpthread
endif
