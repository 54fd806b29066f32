/* providers.c: the providers built into this binary, best first (see vb_open). */
#include "verbs.h"

extern const struct vb_ops vb_soft_ops;

const struct vb_ops *const vb_providers[] = {
	/* The rdma-core provider goes first here, under #if HAVE_RDMACORE ... #endif. */
	&vb_soft_ops,
	NULL,
};
