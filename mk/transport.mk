# transport: sources, programs and tests of this area.
libnfsrdma_a_SOURCES += \
	common/evloop.c common/evloop.h common/rpcrdma.h common/rpcrdma_int.h \
	common/rpcrdma_reg.c common/rpcrdma_reg.h common/rpcrdma_conn.c \
	common/rpcrdma_svc.c common/rpcrdma_clnt.c
