# nfs: the NFSv3 and MOUNT v3 protocol that client and server share: the XDR
# routines rpcgen makes from common/nfs/*.x, the program numbers, and the
# RFC 8267 rules for which items move by RDMA.
libnfsrdma_a_SOURCES += common/nfs/ordma.c common/nfs/ordma.h
libnfsrdma_a_SOURCES += common/nfs/nfs_prog.h common/nfs/nfs3_ddp.c common/nfs/nfs3_ddp.h \
	common/nfs/nfs3_xdr.c common/nfs/nfs3_xdr.h

# XDR: generated at build time into the build tree. The generated C is built
# as its own small library with the warnings rpcgen's output trips relaxed, so
# -Werror still holds for hand-written code; its objects go into libnfsrdma.a.
NFS_XDR_GEN = common/nfs/nfs3_prot.h common/nfs/nfs3_prot_xdr.c \
	common/nfs/mount_prot.h common/nfs/mount_prot_xdr.c \
	common/nfs/ordma_prot.h common/nfs/ordma_prot_xdr.c
BUILT_SOURCES += $(NFS_XDR_GEN)
CLEANFILES += $(NFS_XDR_GEN)
EXTRA_DIST += common/nfs/nfs3_prot.x common/nfs/mount_prot.x common/nfs/ordma_prot.x
noinst_LIBRARIES += libnfsxdr.a
nodist_libnfsxdr_a_SOURCES = $(NFS_XDR_GEN)
libnfsxdr_a_CFLAGS = $(AM_CFLAGS) -Wno-unused-variable -Wno-unused-parameter \
	-Wno-missing-prototypes -Wno-strict-prototypes -Wno-shadow
libnfsrdma_a_LIBADD = $(libnfsxdr_a_OBJECTS)
EXTRA_libnfsrdma_a_DEPENDENCIES = $(libnfsxdr_a_OBJECTS)

# Debian's rpcgen writes (u_)quad_t and xdr_(u_)quad_t for (unsigned) hyper,
# which only glibc makes 64-bit integers (illumos's quad_t is a struct; its
# rpcgen writes longlong_t): the fixed-width types and their XDR routines,
# which libtirpc and illumos's libnsl both have, instead.
XDR_HYPER_SED = -e 's/\<xdr_u_quad_t\>/xdr_uint64_t/g' -e 's/\<xdr_quad_t\>/xdr_int64_t/g' \
	-e 's/\<u_quad_t\>/uint64_t/g' -e 's/\<quad_t\>/int64_t/g'

# rpcgen names the header after the .x and includes it by the path it was
# given; the sed makes the include plain, as the .c sits beside its header, and
# sends every string through xdr_nfs_string (common/nfs/nfs3_ddp.h), which
# refuses a NUL inside one.
common/nfs/nfs3_prot.h: common/nfs/nfs3_prot.x
	$(AM_V_GEN)$(MKDIR_P) common/nfs && $(RPCGEN) -h $< > $@-t1 && \
		sed $(XDR_HYPER_SED) $@-t1 > $@-t && rm -f $@-t1 && mv -f $@-t $@
common/nfs/mount_prot.h: common/nfs/mount_prot.x
	$(AM_V_GEN)$(MKDIR_P) common/nfs && $(RPCGEN) -h $< > $@-t1 && \
		sed $(XDR_HYPER_SED) $@-t1 > $@-t && rm -f $@-t1 && mv -f $@-t $@
common/nfs/nfs3_prot_xdr.c: common/nfs/nfs3_prot.x common/nfs/nfs3_prot.h
	$(AM_V_GEN)$(RPCGEN) -c $(srcdir)/common/nfs/nfs3_prot.x > $@-t1 && \
		sed $(XDR_HYPER_SED) -e 's|^#include ".*nfs3_prot.h"|#include "nfs3_prot.h"|' \
			-e 's|xdr_string (xdrs, objp,|xdr_nfs_string (xdrs, objp,|' $@-t1 > $@-t && \
		rm -f $@-t1 && mv -f $@-t $@
common/nfs/mount_prot_xdr.c: common/nfs/mount_prot.x common/nfs/mount_prot.h
	$(AM_V_GEN)$(RPCGEN) -c $(srcdir)/common/nfs/mount_prot.x > $@-t1 && \
		sed $(XDR_HYPER_SED) -e 's|^#include ".*mount_prot.h"|#include "mount_prot.h"|' \
			-e 's|xdr_string (xdrs, objp,|xdr_nfs_string (xdrs, objp,|' $@-t1 > $@-t && \
		rm -f $@-t1 && mv -f $@-t $@
common/nfs/ordma_prot.h: common/nfs/ordma_prot.x
	$(AM_V_GEN)$(MKDIR_P) common/nfs && $(RPCGEN) -h $< > $@-t1 && \
		sed $(XDR_HYPER_SED) $@-t1 > $@-t && rm -f $@-t1 && mv -f $@-t $@
common/nfs/ordma_prot_xdr.c: common/nfs/ordma_prot.x common/nfs/ordma_prot.h
	$(AM_V_GEN)$(RPCGEN) -c $(srcdir)/common/nfs/ordma_prot.x > $@-t1 && \
		sed $(XDR_HYPER_SED) -e 's|^#include ".*ordma_prot.h"|#include "ordma_prot.h"|' \
			$@-t1 > $@-t && rm -f $@-t1 && mv -f $@-t $@
