/*
 * fuzz_soft_wire: libFuzzer target for the soft provider's wire format as a
 * hostile peer speaks it (platform/soft/soft_wire.h): after a real handshake
 * from a raw socket (HELLO, ACCEPT, RTU), the input is written to the
 * connection as it is — headers, payloads, anything — and the socket is shut.
 * The passive side is a real soft connection with four Receives posted, a
 * registered buffer the peer may read and write, and an RDMA Read and a Send
 * of its own on the wire (so that READ_RESP, ACK and NAK have something to
 * answer). Whatever the input, the connection must end (DISCONNECTED) and tear
 * down without a sanitizer report, and nothing may land outside the buffers.
 *
 * An input that starts with "RAW!" skips the handshake: the rest is the
 * connection's first bytes, so HELLO itself (magic, private data, IRD/ORD)
 * and whatever follows it before ACCEPT are fuzzed too.
 *
 * Keys: a header whose key is "KEY!" (0x4b455921) names the registered buffer:
 * its key is put there and its address added to the header's, so the seeds in
 * t/fuzz/corpus/soft_wire reach real memory whatever this run's keys are.
 * Built by `make fuzz`, run by `make fuzz-run`.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "common/base/log.h"
#include "common/verbs.h"
#include "platform/soft/soft_wire.h"
#include "t/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define KEY_MARK  0x4b455921u
#define BUF_LEN	  65536
#define RECV_LEN  1024
#define NRECV	  4
#define WAIT_MS	  5000
#define INPUT_MAX (1u << 20)

static struct vb_device *dev;
static struct vb_listener *lst;
static struct vb_pd *pd;
static struct vb_cq *scq, *rcq;
static struct vb_mr *mr, *lmr;
static uint8_t *remote, *local; /* the peer's to read and write; our Receives' and Read's */
static struct sockaddr_un sun_addr;

/* Wait for fd to be readable, at most ms; 1 if it is. */
static int readable(int fd, int ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, ms) == 1;
}

/* At exit: the listener's socket file goes. */
static void remove_socket(void)
{
	unlink(sun_addr.sun_path);
}

static void setup(void)
{
	char path[64], port[] = "0";

	log_set_level(LOG_LVL_ERR);
	snprintf(path, sizeof(path), "/tmp/nfsrdma-fuzz-soft-%d.sock", (int)getpid());
	unlink(path);
	sun_addr.sun_family = AF_UNIX;
	snprintf(sun_addr.sun_path, sizeof(sun_addr.sun_path), "%s", path);
	atexit(remove_socket);
	snprintf(path, sizeof(path), "unix:%s", sun_addr.sun_path);
	remote = aligned_alloc(4096, BUF_LEN);
	local = aligned_alloc(4096, BUF_LEN);
	if (!remote || !local || vb_open("soft", &dev) != 0 ||
	    vb_listen(dev, path, port, 16, &lst) != 0 || vb_alloc_pd(dev, &pd) != 0 ||
	    vb_create_cq(dev, 256, &scq) != 0 || vb_create_cq(dev, 256, &rcq) != 0 ||
	    vb_reg_mr(pd, remote, BUF_LEN, VB_ACCESS_LOCAL_WRITE | VB_ACCESS_REMOTE, &mr) != 0 ||
	    vb_reg_mr(pd, local, BUF_LEN, VB_ACCESS_LOCAL_WRITE, &lmr) != 0)
		fuzz_die("fuzz_soft_wire", "cannot set up the soft device");
}

/* Write all of b to fd; 0 once the peer stopped reading (that is allowed). */
static int put(int fd, const void *b, size_t n)
{
	while (n) {
		ssize_t w = send(fd, b, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return 0;
		b = (const uint8_t *)b + w;
		n -= (size_t)w;
	}
	return 1;
}

/* Read one message header from fd (skipping its payload). */
static int get_hdr(int fd, struct soft_hdr *h)
{
	uint8_t b[SOFT_HDR_LEN], skip[256];
	size_t got = 0;

	while (got < sizeof(b)) {
		ssize_t n;

		if (!readable(fd, WAIT_MS) || (n = read(fd, b + got, sizeof(b) - got)) <= 0)
			return 0;
		got += (size_t)n;
	}
	soft_hdr_decode(b, h);
	for (uint32_t left = h->len; left;) {
		ssize_t n = read(fd, skip, left < sizeof(skip) ? left : sizeof(skip));

		if (n <= 0)
			return 0;
		left -= (uint32_t)n;
	}
	return 1;
}

/* The next event of the connection, at most WAIT_MS; -1 if none came. */
static int conn_event(struct vb_conn *c)
{
	long long end = fuzz_now_ms() + WAIT_MS;
	struct vb_cm_event ev;

	while (fuzz_now_ms() < end) {
		if (vb_conn_get_event(c, &ev) == 0)
			return (int)ev.type;
		readable(vb_conn_fd(c), 50);
	}
	return -1;
}

/* Turn a connection request down and forget it. */
static void refuse(struct vb_conn *c)
{
	(void)vb_reject(c, NULL, 0);
	if (vb_conn_destroy(c) != 0)
		fuzz_die("fuzz_soft_wire", "conn_destroy of a rejected request");
}

/* A raw socket's handshake with a passive soft connection, which posts its
 * Receives, a Read and a Send. */
static struct vb_conn *establish(int fd)
{
	static uint32_t serial;
	uint8_t pdata[4];
	struct vb_qp_cap cap = {.max_send_wr = 16,
				.max_recv_wr = 16,
				.max_send_sge = 4,
				.max_recv_sge = 4,
				.max_inline_data = 64};
	struct soft_hdr h = {
		.op = SOFT_OP_HELLO, .len = 4, .addr = SOFT_WIRE_MAGIC, .aux = 8 << 8 | 8};
	uint8_t b[SOFT_HDR_LEN];
	struct vb_cm_event ev;
	long long end = fuzz_now_ms() + WAIT_MS;
	struct vb_conn *c;

	serial++;
	memcpy(pdata, &serial, sizeof(pdata)); /* ours, not a "RAW!" input's request */
	soft_hdr_encode(&h, b);
	if (!put(fd, b, sizeof(b)) || !put(fd, pdata, sizeof(pdata)))
		fuzz_die("fuzz_soft_wire", "HELLO not sent");
	for (;;) {
		if (vb_listener_get_event(lst, &ev) == -EAGAIN) {
			if (fuzz_now_ms() > end)
				fuzz_die("fuzz_soft_wire", "no CONNECT_REQUEST for a HELLO");
			readable(vb_listener_fd(lst), 50);
			continue;
		}
		if (ev.private_data_len >= sizeof(pdata) &&
		    memcmp(ev.private_data, pdata, sizeof(pdata)) == 0)
			break;
		refuse(ev.conn); /* an earlier input's handshake */
	}
	c = ev.conn;
	if (vb_create_qp(c, pd, scq, rcq, &cap) != 0)
		fuzz_die("fuzz_soft_wire", "create_qp");
	for (int i = 0; i < NRECV; i++) {
		struct vb_sge s = {(uintptr_t)local + (size_t)i * RECV_LEN, RECV_LEN, lmr->lkey};
		struct vb_recv_wr wr = {.wr_id = (uint64_t)i, .sg_list = &s, .num_sge = 1};

		if (vb_post_recv(c, &wr, NULL) != 0)
			fuzz_die("fuzz_soft_wire", "post_recv");
	}
	if (vb_accept(c, NULL) != 0 || !get_hdr(fd, &h) || h.op != SOFT_OP_ACCEPT)
		fuzz_die("fuzz_soft_wire", "no ACCEPT");
	h = (struct soft_hdr){.op = SOFT_OP_RTU};
	soft_hdr_encode(&h, b);
	if (!put(fd, b, sizeof(b)) || conn_event(c) != VB_CM_ESTABLISHED)
		fuzz_die("fuzz_soft_wire", "not ESTABLISHED after RTU");
	struct vb_sge rs = {(uintptr_t)local + 8192, 64, lmr->lkey};
	struct vb_sge ss = {(uintptr_t)local + 16384, 16, lmr->lkey};
	struct vb_send_wr send = {.wr_id = 101,
				  .sg_list = &ss,
				  .num_sge = 1,
				  .opcode = VB_WR_SEND,
				  .send_flags = VB_SEND_SIGNALED};
	struct vb_send_wr rd = {.wr_id = 100,
				.next = &send,
				.sg_list = &rs,
				.num_sge = 1,
				.opcode = VB_WR_RDMA_READ,
				.send_flags = VB_SEND_SIGNALED,
				.remote_addr = 4096,
				.rkey = 0x1234};
	if (vb_post_send(c, &rd, NULL) != 0)
		fuzz_die("fuzz_soft_wire", "post_send");
	return c;
}

/* The input with each "KEY!" header pointed at the registered buffer. */
static size_t with_keys(const uint8_t *in, size_t len, uint8_t *out)
{
	memcpy(out, in, len);
	for (size_t i = 0; i + SOFT_HDR_LEN <= len;) {
		struct soft_hdr h;

		soft_hdr_decode(out + i, &h);
		if (h.key == KEY_MARK) {
			h.key = mr->rkey;
			h.addr += (uintptr_t)remote;
			soft_hdr_encode(&h, out + i);
		}
		if (h.len > len - i - SOFT_HDR_LEN)
			break;
		i += SOFT_HDR_LEN + h.len;
	}
	return len;
}

/* Write b to fd (non-blocking now) while reading and dropping what comes
 * back, so that neither side waits for the other; give up on what is left
 * after WAIT_MS or once the peer stopped reading. */
static void feed(int fd, const uint8_t *b, size_t n)
{
	long long end = fuzz_now_ms() + WAIT_MS;
	uint8_t sink[4096];

	while (n && fuzz_now_ms() < end) {
		struct pollfd p = {.fd = fd, .events = POLLIN | POLLOUT};
		ssize_t w;

		if (poll(&p, 1, 50) <= 0)
			continue;
		if (p.revents & POLLIN)
			while (read(fd, sink, sizeof(sink)) > 0)
				;
		if (!(p.revents & POLLOUT))
			continue;
		w = send(fd, b, n, MSG_NOSIGNAL);
		if (w < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (w <= 0)
			return;
		b += w;
		n -= (size_t)w;
	}
}

/* "RAW!" inputs: the rest is the connection's very first bytes, HELLO and
 * all. The listener must turn a good HELLO into a connection request (turned
 * down here) and drop anything else, at the latest at our EOF. */
static void handshake_only(int fd, const uint8_t *b, size_t n)
{
	long long end = fuzz_now_ms() + WAIT_MS;
	struct vb_cm_event ev;
	uint8_t sink[4096];

	if (fcntl(fd, F_SETFL, O_NONBLOCK) != 0)
		fuzz_die("fuzz_soft_wire", "O_NONBLOCK");
	feed(fd, b, n);
	shutdown(fd, SHUT_WR);
	for (;;) {
		struct pollfd p[2] = {{.fd = fd, .events = POLLIN},
				      {.fd = vb_listener_fd(lst), .events = POLLIN}};
		ssize_t r;

		if (vb_listener_get_event(lst, &ev) == 0) {
			refuse(ev.conn);
			return;
		}
		while ((r = read(fd, sink, sizeof(sink))) > 0)
			;
		if (r == 0)
			return; /* dropped */
		if (fuzz_now_ms() > end)
			fuzz_die("fuzz_soft_wire",
				 "the listener kept a broken handshake past the peer's EOF");
		poll(p, 2, 20);
	}
}

/* Until the connection ends: drain what it sends us and its completions. */
static void until_disconnected(struct vb_conn *c, int fd)
{
	long long end = fuzz_now_ms() + WAIT_MS;
	struct vb_cm_event ev;
	struct vb_wc wc[16];
	uint8_t sink[4096];

	for (;;) {
		int rc = vb_conn_get_event(c, &ev);

		if (rc == 0 && (ev.type == VB_CM_DISCONNECTED || ev.type == VB_CM_ERROR))
			return;
		while (read(fd, sink, sizeof(sink)) > 0)
			;
		while (vb_poll_cq(scq, 16, wc) > 0 || vb_poll_cq(rcq, 16, wc) > 0)
			;
		if (fuzz_now_ms() > end)
			fuzz_die("fuzz_soft_wire",
				 "the connection did not end after the peer's EOF");
		readable(vb_conn_fd(c), 20);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t *buf;
	struct vb_wc wc[16];
	struct vb_conn *c;
	int fd;

	if (!dev)
		setup();
	if (size > INPUT_MAX)
		return 0;
	if (!buf && !(buf = malloc(INPUT_MAX)))
		abort();
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun_addr, sizeof(sun_addr)) != 0)
		fuzz_die("fuzz_soft_wire", "cannot connect to the listener");
	if (size >= 4 && memcmp(data, "RAW!", 4) == 0) {
		handshake_only(fd, data + 4, size - 4);
		close(fd);
		return 0;
	}
	c = establish(fd);
	if (fcntl(fd, F_SETFL, O_NONBLOCK) != 0)
		fuzz_die("fuzz_soft_wire", "O_NONBLOCK");
	feed(fd, buf, with_keys(data, size, buf));
	shutdown(fd, SHUT_WR);
	until_disconnected(c, fd);
	if (vb_conn_destroy(c) != 0)
		fuzz_die("fuzz_soft_wire", "conn_destroy");
	close(fd);
	while (vb_poll_cq(scq, 16, wc) > 0 || vb_poll_cq(rcq, 16, wc) > 0)
		;
	return 0;
}
