/*
 * soft_dev.c: the soft provider's device and protection domains, its tunables
 * and its ops table (vb_soft_ops).
 *
 * Tunables, read from the environment:
 *   VB_SOFT_SOCKBUF          socket buffer bytes per connection; default: TCP lets
 *                            the kernel autotune (up to net.ipv4.tcp_[rw]mem max,
 *                            more than an explicit size may get: [rw]mem_max caps
 *                            those), AF_UNIX gets 4 MiB
 *   VB_SOFT_RNR_TIMEOUT_MS   how long a Send waits for a Receive before the
 *                            sender's WR fails RNR_RETRY_EXC_ERR (default 3000),
 *                            read when a QP is created
 *   VB_SOFT_ACK_TIMEOUT_MS   how long the oldest send WR (Send, Write or Read)
 *                            may wait for the peer's answer before it fails
 *                            RETRY_EXC_ERR and the QP goes to error, as an RC
 *                            QP's retry count x local ACK timeout (default 8000,
 *                            about rdma_cm's defaults), read when a QP is created
 *   VB_SOFT_HELLO_TIMEOUT_MS how long an accepted socket may take to send its
 *                            connect request (default 10000), read by listen
 *   VB_SOFT_DIRECT_TX        1 (default): post_send starts transmitting from the
 *                            caller's thread; 0: the engine thread sends everything
 *   VB_SOFT_CQ_DRIVE         1 (default): a CQ whose consumer asks for it
 *                            (vb_cq_drive) reads its connections' sockets in
 *                            poll_cq, on the consumer's thread; 0: the engine
 *                            thread reads every socket, as before
 *   VB_SOFT_LOCAL_UNIX       1 (default): a connection between two ends on this
 *                            host's loopback goes over AF_UNIX (soft_local.c);
 *                            0: over TCP, as any other
 *   VB_SOFT_CMA              1 (default): on AF_UNIX, the data of Writes and
 *                            Reads of 16 KiB to 64 MiB is copied between the two
 *                            processes of one user where the kernel allows
 *                            (soft_cma.c); 0: through the socket
 *   VB_SOFT_ACK_DELAY_MS     how long the acknowledgement of Sends whose
 *                            sender expects an answer (VB_SEND_ANSWERED) waits,
 *                            from the first, for that answer to carry it
 *                            (default 1; 0: acknowledge at once); Writes just
 *                            before such a Send wait with it, anything else
 *                            is acknowledged at once; read when a QP is created
 *   VB_SOFT_NO_ORD_THROTTLE  test only: 1 lets a QP created while it is set put
 *                            more Reads on the wire than its ORD, so a test can
 *                            see the responder refuse them (REM_INV_REQ_ERR)
 *   VB_SOFT_NO_MW            test only: 1 makes a device opened while it is set
 *                            answer "not supported" to memory windows, as devices
 *                            without them do
 *   VB_SOFT_SILENT           test only: "reads" makes a device opened while it is
 *                            set never answer the RDMA Reads its peers ask of
 *                            it, "acks" never acknowledge their requests (their
 *                            Sends and Writes never complete), "reads,acks" both:
 *                            a peer that stopped responding
 *   VB_SOFT_FAIL_POST        test only: MODE:OP:N makes the Nth post_send (from
 *                            1) whose chain carries OP (send, write, read or
 *                            any) on a device opened while it is set fail once:
 *                            MODE "refuse" fails it before anything is queued
 *                            (*bad is its first WR); "doorbell" queues the whole
 *                            chain and then fails without starting it and
 *                            without setting *bad, as rxe does when its
 *                            doorbell write() is refused
 *
 * Whatever the environment says, a thread whose credentials changed after the
 * device was opened cannot post, poll, arm, register or connect on it (see
 * soft_cred_check), as on rxe and siw.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/log.h"
#include "common/base/osdep.h"
#include "soft.h"

/* An unsigned tunable from the environment, within [min, max]; def if unset or bad. */
unsigned soft_env_uint(const char *name, unsigned def, unsigned min, unsigned max)
{
	const char *s = getenv(name);
	char *end;
	unsigned long v;

	if (s == NULL || *s == '\0')
		return def;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end != '\0' || v < min || v > max) {
		log_warn("%s=%s is not a number in [%u, %u]; using %u", name, s, min, max, def);
		return def;
	}
	return (unsigned)v;
}

/* See soft.h. */
int soft_cred_check(struct vb_device *d)
{
	struct soft_device *dev = soft_dev(d);

	if (osdep_cred_epoch() == dev->cred_epoch)
		return 0;
	if (!__atomic_exchange_n(&dev->cred_warned, 1, __ATOMIC_RELAXED))
		log_err("device soft: a thread whose credentials changed after the device was "
			"opened used it; refused (EACCES), as the kernel refuses it on rxe");
	return -EACCES;
}

/* VB_SOFT_FAIL_POST=MODE:OP:N (see the top of the file); a bad value is ignored, said. */
static void fail_post_parse(struct soft_device *dev)
{
	static const char *const ops[] = {"send", "write", "read", "any"};
	static const int opcodes[] = {VB_WR_SEND, VB_WR_RDMA_WRITE, VB_WR_RDMA_READ, -1};
	const char *s = getenv("VB_SOFT_FAIL_POST");
	char mode[16], op[16];
	unsigned n;

	if (s == NULL || *s == '\0')
		return;
	if (sscanf(s, "%15[a-z]:%15[a-z]:%u", mode, op, &n) != 3 || n == 0 ||
	    (strcmp(mode, "refuse") != 0 && strcmp(mode, "doorbell") != 0)) {
		log_warn("VB_SOFT_FAIL_POST=%s is not MODE:OP:N (refuse|doorbell, "
			 "send|write|read|any,"
			 " N >= 1); ignored",
			 s);
		return;
	}
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		if (strcmp(op, ops[i]) == 0) {
			dev->fail_mode = mode[0] == 'r' ? SOFT_FAIL_REFUSE : SOFT_FAIL_DOORBELL;
			dev->fail_op = opcodes[i];
			dev->fail_countdown = n;
			return;
		}
	}
	log_warn("VB_SOFT_FAIL_POST=%s: no operation '%s'; ignored", s, op);
}

/* See soft.h. */
enum soft_fail_mode soft_fail_post(struct soft_device *dev, const struct vb_send_wr *wr)
{
	unsigned left;
	int match = 0;

	if (dev->fail_mode == SOFT_FAIL_NONE)
		return SOFT_FAIL_NONE;
	for (; wr && !match; wr = wr->next) {
		int op = wr->opcode == VB_WR_SEND_WITH_INV ? VB_WR_SEND : (int)wr->opcode;

		match = dev->fail_op < 0 || dev->fail_op == op;
	}
	left = match ? __atomic_load_n(&dev->fail_countdown, __ATOMIC_RELAXED) : 0;
	while (left && !__atomic_compare_exchange_n(&dev->fail_countdown, &left, left - 1, 0,
						    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	if (left != 1)
		return SOFT_FAIL_NONE;
	log_notice("device soft: failing a post_send as VB_SOFT_FAIL_POST asks (%s)",
		   dev->fail_mode == SOFT_FAIL_REFUSE ? "refused" : "queued, doorbell failed");
	return dev->fail_mode;
}

/* Open the one soft device: NULL or "soft"; anything else is not ours. */
static int soft_open(const char *name, struct vb_device **out)
{
	struct soft_device *dev;
	int rc;

	*out = NULL;
	if (name != NULL && strcmp(name, "soft") != 0)
		return -ENODEV;
	dev = calloc(1, sizeof(*dev));
	if (dev == NULL)
		return -ENOMEM;
	dev->base.ops = &vb_soft_ops;
	strcpy(dev->base.name, "soft");
	dev->base.provider = "soft";
	dev->sockbuf = (int)soft_env_uint("VB_SOFT_SOCKBUF", 0, 0, 1u << 30);
	dev->direct_tx = soft_env_uint("VB_SOFT_DIRECT_TX", 1, 0, 1);
	dev->cq_drive = soft_env_uint("VB_SOFT_CQ_DRIVE", 1, 0, 1);
	dev->local_unix = soft_env_uint("VB_SOFT_LOCAL_UNIX", 1, 0, 1);
	dev->cma = soft_env_uint("VB_SOFT_CMA", 1, 0, 1);
	dev->no_mw = soft_env_uint("VB_SOFT_NO_MW", 0, 0, 1);
	dev->cred_epoch = osdep_cred_epoch();
	fail_post_parse(dev);
	if (getenv("VB_SOFT_SILENT")) {
		dev->silent_reads = strstr(getenv("VB_SOFT_SILENT"), "reads") != NULL;
		dev->silent_acks = strstr(getenv("VB_SOFT_SILENT"), "acks") != NULL;
	}
	if ((rc = soft_keys_init(&dev->keys)) != 0) {
		free(dev);
		return rc;
	}
	if ((rc = soft_engine_start(dev)) != 0) {
		soft_keys_fini(&dev->keys);
		free(dev);
		return rc;
	}
	*out = &dev->base;
	return 0;
}

/* Stop the engine and free the device; objects still open are the caller's leak. */
static void soft_close(struct vb_device *d)
{
	struct soft_device *dev = soft_dev(d);

	soft_engine_stop(dev);
	if (dev->keys.count)
		log_warn("closing device soft with %u keys still registered", dev->keys.count);
	soft_keys_fini(&dev->keys);
	free(dev);
}

/* The limits this provider enforces. */
static int soft_query_device(struct vb_device *d, struct vb_device_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->max_sge = SOFT_MAX_SGE;
	attr->max_qp_wr = SOFT_MAX_QP_WR;
	attr->max_cqe = SOFT_MAX_CQE;
	attr->max_mr_size = SOFT_MAX_MR_SIZE;
	attr->max_qp_rd_atom = SOFT_MAX_RD_ATOM;
	attr->max_qp_init_rd_atom = SOFT_MAX_RD_ATOM;
	attr->has_mw = !soft_dev(d)->no_mw;
	attr->has_send_inv = 1;
	attr->mw_remote_inv = attr->has_mw;
	return 0;
}

/* A protection domain: keys and QPs of one PD only reach each other. */
static int soft_alloc_pd(struct vb_device *d, struct vb_pd **out)
{
	struct soft_pd *pd = calloc(1, sizeof(*pd));

	if (pd == NULL)
		return -ENOMEM;
	pd->base.dev = d;
	*out = &pd->base;
	return 0;
}

/* Free a PD; -EBUSY while MRs, windows or QPs still use it. */
static int soft_dealloc_pd(struct vb_pd *p)
{
	struct soft_pd *pd = (struct soft_pd *)p;
	struct soft_keytab *t = &soft_dev(p->dev)->keys;
	unsigned users;

	pthread_mutex_lock(&t->lock);
	users = pd->users;
	pthread_mutex_unlock(&t->lock);
	if (users) {
		log_err("protection domain still has %u users (MRs, windows or QPs)", users);
		return -EBUSY;
	}
	free(pd);
	return 0;
}

const struct vb_ops vb_soft_ops = {
	.name = "soft",
	.open = soft_open,
	.close = soft_close,
	.query_device = soft_query_device,
	.alloc_pd = soft_alloc_pd,
	.dealloc_pd = soft_dealloc_pd,
	.create_cq = soft_create_cq,
	.destroy_cq = soft_destroy_cq,
	.cq_fd = soft_cq_fd,
	.cq_arm = soft_cq_arm,
	.cq_ack = soft_cq_ack,
	.poll_cq = soft_poll_cq,
	.cq_drive = soft_cq_drive,
	.reg_mr = soft_reg_mr,
	.dereg_mr = soft_dereg_mr,
	.alloc_mw = soft_alloc_mw,
	.bind_mw = soft_bind_mw,
	.dealloc_mw = soft_dealloc_mw,
	.listen = soft_listen,
	.listener_fd = soft_listener_fd,
	.listener_get_event = soft_listener_get_event,
	.listener_destroy = soft_listener_destroy,
	.resolve = soft_resolve,
	.create_qp = soft_create_qp,
	.connect = soft_connect,
	.accept = soft_accept,
	.reject = soft_reject,
	.disconnect = soft_disconnect,
	.conn_fd = soft_conn_fd,
	.conn_get_event = soft_conn_get_event,
	.conn_destroy = soft_conn_destroy,
	.post_send = soft_post_send,
	.post_recv = soft_post_recv,
};
