/*
 * soft_cma.c: RDMA Write data between two processes of this host without the
 * socket (cross-memory attach, process_vm_readv), on the local carrier.
 *
 * Through the socket, the data of an RDMA Write is copied twice (into the
 * kernel and out of it) and crosses in pieces of the socket's buffer. A
 * responder that may reach its peer's memory copies it once instead: the
 * initiator's Write carries the list of its source segments instead of the
 * data, and the responder reads them into the registration the Write
 * addresses, after the same key, right and bounds checks. It only reads the
 * initiator's memory, what the initiator named, and the Write completes at
 * the acknowledgement, after the copy.
 *
 * Reads stay on the socket: there the responder would write into the
 * initiator's memory, and a Read that the initiator flushes (its QP in
 * error) must not be written to once the application has it back, which
 * would take holding such flushes until the peer is known to have stopped.
 *
 * On unless VB_SOFT_CMA=0. Writes have the mirror of that problem, which
 * the generation words below solve: an initiator whose QP goes to error (its
 * peer silent past the ack timeout) flushes a Write whose segment list may
 * already be in the peer's socket, and the application may then reuse the
 * buffer; a peer that woke up later would copy the new contents and, if the
 * initiator's Send was in the socket too, deliver them as the Write's. So
 * each connection whose peer copies from it has a generation word, in a
 * table of this process that is never freed; the probe tells the peer the
 * word's address and value. The word is raised before the connection
 * flushes anything (soft_qp_error) and when it is freed, and the responder
 * reads it after each copy: a copy is good only if the word still holds the
 * value it was told, i.e. it was taken before the initiator let go of any
 * buffer; otherwise the Write fails as a bad copy does (NAK, the responder's
 * QP to error), and nothing after it is delivered. A slot goes back to the
 * table raised, so the next connection's value differs. When the table is
 * full, the probe names no word and the peer does not copy.
 *
 * Whether a responder may: both ends say in HELLO/ACCEPT that they can
 * (SOFT_FLAG_CMA_ABLE: VB_SOFT_CMA not 0 and the connection is on the
 * local carrier); then each sends a probe (the address of a known word of its
 * own), and the peer that read that word back through process_vm_readv
 * answers CMA_OK. Only an initiator that got CMA_OK sends segment lists, and
 * only a responder that answered it takes them. A responder copies only for
 * a peer of its own user (SO_PEERCRED), which could ptrace it anyway, and
 * only where the kernel lets it (Yama, a process that changed its identity);
 * elsewhere the data goes through the socket as before. The peer is the
 * process that made the connection, held as a pidfd from the start: before
 * each copy the pidfd must still name a live process, so a pid the peer left
 * behind and another process took is never copied from. Linux only.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/pidfd.h>
#endif

#include "common/base/log.h"
#include "soft.h"

#define CMA_SLOTS 1024 /* connections whose peers copy from this process at once */

/* The word the probe names. */
static const volatile uint64_t cma_probe_word = SOFT_WIRE_MAGIC ^ 0x434d41u;

/* The generation words (never freed: a peer may read one at any time) and
 * which slots are taken. */
static uint64_t cma_gen[CMA_SLOTS];
static bool cma_taken[CMA_SLOTS];
static pthread_mutex_t cma_slots_lock = PTHREAD_MUTEX_INITIALIZER;

/* Segment lists on the wire: (address, length) pairs of 8 bytes each, in this
 * host's byte order (both ends are on it). */
static void put_u64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

#ifdef __linux__
/* Whether the peer process is still the one that connected. */
static bool peer_alive(struct soft_conn *c)
{
	return c->cma_pidfd >= 0 && pidfd_send_signal(c->cma_pidfd, 0, NULL, 0) == 0;
}
#endif

/* See soft.h. */
bool soft_cma_able(struct soft_conn *c)
{
#ifdef __linux__
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	return c->dev->cma && c->fd >= 0 && getsockname(c->fd, (struct sockaddr *)&ss, &len) == 0 &&
	       ss.ss_family == AF_UNIX;
#else
	(void)c;
	return false;
#endif
}

/* See soft.h. */
void soft_cma_peer_able(struct soft_conn *c)
{
#ifdef __linux__
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (!soft_cma_able(c) || c->cma_pidfd >= 0 ||
	    getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 || cr.pid <= 0 ||
	    cr.uid != geteuid() || (c->cma_pidfd = pidfd_open(cr.pid, 0)) < 0)
		return;
	c->cma_pid = cr.pid;
	c->cma_probe_owed = true;
#else
	(void)c;
#endif
}

/* See soft.h. */
uint32_t soft_cma_probe_payload(struct soft_conn *c, uint8_t *out)
{
	uint64_t addr = 0;

	if (c->cma_slot < 0) {
		pthread_mutex_lock(&cma_slots_lock);
		for (int i = 0; i < CMA_SLOTS && c->cma_slot < 0; i++)
			if (!cma_taken[i]) {
				cma_taken[i] = true;
				c->cma_slot = i;
			}
		pthread_mutex_unlock(&cma_slots_lock);
		if (c->cma_slot < 0)
			log_notice("%s: %d connections are copied from already: this one's RDMA "
				   "data goes through the socket",
				   c->base.peer, CMA_SLOTS);
		else
			c->cma_gen = __atomic_load_n(&cma_gen[c->cma_slot], __ATOMIC_SEQ_CST);
	}
	if (c->cma_slot >= 0)
		addr = (uint64_t)(uintptr_t)&cma_gen[c->cma_slot];
	put_u64(out, (uint64_t)(uintptr_t)&cma_probe_word);
	put_u64(out + 8, addr);
	put_u64(out + 16, c->cma_gen);
	return SOFT_CMA_PROBE_LEN;
}

/* See soft.h. */
void soft_cma_raise(struct soft_conn *c)
{
	if (c->cma_slot >= 0 &&
	    __atomic_load_n(&cma_gen[c->cma_slot], __ATOMIC_SEQ_CST) == c->cma_gen)
		__atomic_add_fetch(&cma_gen[c->cma_slot], 1, __ATOMIC_SEQ_CST);
}

/* See soft.h. */
void soft_cma_release(struct soft_conn *c)
{
	if (c->cma_slot < 0)
		return;
	soft_cma_raise(c);
	pthread_mutex_lock(&cma_slots_lock);
	cma_taken[c->cma_slot] = false;
	pthread_mutex_unlock(&cma_slots_lock);
	c->cma_slot = -1;
}

/* See soft.h. */
void soft_cma_probe_recv(struct soft_conn *c, const uint8_t *payload, uint32_t len)
{
#ifdef __linux__
	uint64_t got = 0;
	struct iovec l = {&got, sizeof(got)};
	struct iovec r = {NULL, sizeof(got)};
	ssize_t n;

	if (c->cma_pid <= 0 || len != SOFT_CMA_PROBE_LEN || !peer_alive(c))
		return;
	r.iov_base = (void *)(uintptr_t)get_u64(payload);
	n = process_vm_readv(c->cma_pid, &l, 1, &r, 1, 0);
	c->cma_peer_gen_addr = get_u64(payload + 8);
	c->cma_peer_gen = get_u64(payload + 16);

	if (n == (ssize_t)sizeof(got) && got == cma_probe_word && c->cma_peer_gen_addr == 0) {
		log_info("%s: the peer has no generation word to spare: RDMA data goes through the "
			 "socket",
			 c->base.peer);
	} else if (n == (ssize_t)sizeof(got) && got == cma_probe_word) {
		c->cma_we_copy = true;
		c->cma_ok_owed = true;
		log_info("%s: RDMA data from and to this peer is copied directly between the "
			 "processes (cross-memory attach)",
			 c->base.peer);
	} else {
		log_info("%s: the peer's memory is out of reach (%s): RDMA data goes through the "
			 "socket",
			 c->base.peer, n < 0 ? strerror(errno) : "the probe's word differs");
	}
#else
	(void)c, (void)payload, (void)len;
#endif
}

/* See soft.h. */
uint32_t soft_cma_encode(const struct iovec *iov, int n, uint8_t *out)
{
	for (int i = 0; i < n; i++) {
		put_u64(out + 16 * i, (uint64_t)(uintptr_t)iov[i].iov_base);
		put_u64(out + 16 * i + 8, iov[i].iov_len);
	}
	return 16u * (uint32_t)n;
}

/* See soft.h. */
int soft_cma_decode(const uint8_t *in, uint32_t len, uint64_t total, struct iovec *iov)
{
	uint64_t sum = 0;
	int n = (int)(len / 16);

	if (len % 16 || n < 1 || n > SOFT_CMA_MAX_SEG)
		return -1;
	for (int i = 0; i < n; i++) {
		iov[i].iov_base = (void *)(uintptr_t)get_u64(in + 16 * i);
		iov[i].iov_len = get_u64(in + 16 * i + 8);
		if (iov[i].iov_len > total)
			return -1;
		sum += iov[i].iov_len;
	}
	return sum == total ? n : -1;
}

/* See soft.h. */
bool soft_cma_read(struct soft_conn *c, void *local, size_t len, const struct iovec *remote, int n)
{
#ifdef __linux__
	uint64_t gen = 0;
	struct iovec l = {local, len}, lg = {&gen, sizeof(gen)};
	struct iovec rg = {(void *)(uintptr_t)c->cma_peer_gen_addr, sizeof(gen)};
	ssize_t r;

	if (!peer_alive(c)) {
		log_warn("%s: the peer process is gone: no cross-memory copy", c->base.peer);
		return false;
	}
	r = process_vm_readv(c->cma_pid, &l, 1, remote, (unsigned long)n, 0);
	if (r != (ssize_t)len) {
		log_warn("%s: cross-memory copy of %zu bytes from the peer failed: %s",
			 c->base.peer, len, r < 0 ? strerror(errno) : "short");
		return false;
	}
	/* the word is read after the data: a copy taken before the peer raised
	 * it was taken before the peer let go of the buffer */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	r = process_vm_readv(c->cma_pid, &lg, 1, &rg, 1, 0);
	if (r == (ssize_t)sizeof(gen) && gen == c->cma_peer_gen)
		return true;
	log_warn("%s: the peer flushed while its data was copied (generation %s): the copy "
		 "does not count",
		 c->base.peer, r == (ssize_t)sizeof(gen) ? "raised" : "unreadable");
	return false;
#else
	(void)c, (void)local, (void)len, (void)remote, (void)n;
	return false;
#endif
}
