/*
 * providers.c: the providers built into this program, best first. vb_open
 * ("auto") takes the first one that has a device: real RDMA through
 * rdma-core where configure found it, then the software provider, which
 * always has one.
 */
#include "common/verbs.h"

#if HAVE_RDMACORE
extern const struct vb_ops vb_rdmacore_ops;
#endif
extern const struct vb_ops vb_soft_ops;

const struct vb_ops *const vb_providers[] = {
#if HAVE_RDMACORE
	&vb_rdmacore_ops,
#endif
	&vb_soft_ops,
	NULL,
};
