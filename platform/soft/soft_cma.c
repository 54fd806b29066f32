/*
 * soft_cma.c: RDMA data between two processes of this host without the
 * socket (cross-memory attach, process_vm_readv), on the local carrier.
 * On unless VB_SOFT_CMA=0.
 *
 * Through the socket, RDMA data is copied twice (into the kernel and out of
 * it) and crosses in pieces of the socket's buffer. An end that may reach
 * its peer's memory copies it once instead, always out of the peer's memory
 * into its own, after the usual key, right and bounds checks:
 *
 *   Write  the initiator's Write carries the list of its source segments
 *          instead of the data; the responder reads them into the
 *          registration the Write addresses. The Write completes at the
 *          acknowledgement, after the copy.
 *   Read   the initiator asks for a copy of its own (SOFT_FLAG_CMA on the
 *          request); the responder checks the key and answers with a grant
 *          instead of the data; the initiator reads what it asked for into
 *          its own landing zone, then completes the Read.
 *
 * Nobody writes into the peer's memory: a Read that its initiator flushed
 * (its QP in error) is never written to once the application has it back.
 *
 * Generation words. The end whose memory is read may let go of it while the
 * other still has to copy: an initiator whose QP goes to error (its peer
 * silent past the ack timeout) flushes a Write whose segment list may already
 * be in the peer's socket, and its application may reuse the buffer; a
 * responder that granted a Read may lose the key (deregistration, a window
 * invalidated) or flush, and reuse the memory. A peer that copied later
 * would take the new contents for the old. So what may be let go of has a
 * generation word, in a table of this process that is never freed: each
 * connection whose peer copies from it (the probe tells the peer the word's
 * address and value), raised before the connection flushes anything
 * (soft_qp_error) and when it is freed; and each key a Read was granted
 * through (the grant names it), raised when the key goes (soft_mr.c). The
 * copying end reads the words after each copy: a copy counts only if they
 * still hold the values it was told, i.e. it was taken before anything was
 * let go of. Otherwise a Write fails as a bad copy does (NAK, the
 * responder's QP to error: nothing after it is delivered) and a Read with
 * REM_ACCESS_ERR. A word goes back to the table raised, so its next user's
 * value differs. When the table is full, a probe names no word and the peer
 * does not copy, a grant is not given and the data goes through the socket.
 *
 * Whether an end may copy: both ends say in HELLO/ACCEPT that they can
 * (SOFT_FLAG_CMA_ABLE: VB_SOFT_CMA not 0 and the connection is on the
 * local carrier); then each sends a probe (the address of a known word of its
 * own, and its generation word), and the peer that read that word back
 * through process_vm_readv answers CMA_OK. Only an end that got CMA_OK sends
 * segment lists (a Write's initiator) and grants (a Read's responder), and
 * only an end that answered it takes them. An end copies only from a peer of its own user
 * (SO_PEERCRED), which could ptrace it anyway, and only where the kernel lets it (Yama, a process
 * that changed its identity); elsewhere the data goes through the socket as before. The peer is the
 * process that made the connection, held as a pidfd from the start: before each copy the pidfd must
 * still name a live process, so a pid the peer left behind and another process took is never copied
 * from. Linux only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/pidfd.h>
#endif

#include "common/base/log.h"
#include "soft.h"

#define WORDS_CHUNK 4096 /* words made at a time */
#define WORDS_MAX   (256u * WORDS_CHUNK)

/* The word the probe names. */
static const volatile uint64_t cma_probe_word = SOFT_WIRE_MAGIC ^ 0x434d41u;

/* The generation words of connections and keys, made a chunk at a time and
 * never freed (a peer may read one at any time), and the free ones. */
static struct {
	pthread_mutex_t lock;
	uint64_t *chunk[WORDS_MAX / WORDS_CHUNK];
	uint32_t made;	       /* words in the chunks */
	uint32_t *free, nfree; /* numbers of words to give again (1-based) */
} words = {.lock = PTHREAD_MUTEX_INITIALIZER};

static uint64_t *word_at(uint32_t w)
{
	return &words.chunk[(w - 1) / WORDS_CHUNK][(w - 1) % WORDS_CHUNK];
}

/* See soft.h. */
uint32_t soft_cma_word_get(void)
{
	uint32_t w = 0;

	pthread_mutex_lock(&words.lock);
	if (words.nfree) {
		w = words.free[--words.nfree];
	} else if (words.made < WORDS_MAX) {
		uint64_t **ch = &words.chunk[words.made / WORDS_CHUNK];
		uint32_t *f =
			words.made % WORDS_CHUNK
				? words.free
				: realloc(words.free, (words.made + WORDS_CHUNK) * sizeof(*f));

		if (f)
			words.free = f;
		if (f && *ch == NULL)
			*ch = calloc(WORDS_CHUNK, sizeof(**ch));
		if (f && *ch)
			w = ++words.made;
	}
	pthread_mutex_unlock(&words.lock);
	return w;
}

/* See soft.h. */
uint64_t soft_cma_word_value(uint32_t w)
{
	return __atomic_load_n(word_at(w), __ATOMIC_SEQ_CST);
}

/* See soft.h. */
uint64_t soft_cma_word_addr(uint32_t w)
{
	return (uint64_t)(uintptr_t)word_at(w);
}

/* See soft.h. */
void soft_cma_word_raise(uint32_t w)
{
	__atomic_add_fetch(word_at(w), 1, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* See soft.h. */
void soft_cma_word_put(uint32_t w)
{
	if (w == 0)
		return;
	soft_cma_word_raise(w); /* before anything the word guards is let go */
	pthread_mutex_lock(&words.lock);
	words.free[words.nfree++] = w;
	pthread_mutex_unlock(&words.lock);
}

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
	if (c->cma_word == 0) {
		if ((c->cma_word = soft_cma_word_get()) == 0)
			log_notice("%s: no generation word left: this end's RDMA data goes through "
				   "the socket",
				   c->base.peer);
		else
			c->cma_gen = soft_cma_word_value(c->cma_word);
	}
	put_u64(out, (uint64_t)(uintptr_t)&cma_probe_word);
	put_u64(out + 8, c->cma_word ? soft_cma_word_addr(c->cma_word) : 0);
	put_u64(out + 16, c->cma_gen);
	return SOFT_CMA_PROBE_LEN;
}

/* See soft.h. */
void soft_cma_raise(struct soft_conn *c)
{
	if (c->cma_word)
		soft_cma_word_raise(c->cma_word);
}

/* See soft.h. */
void soft_cma_release(struct soft_conn *c)
{
	soft_cma_word_put(c->cma_word);
	c->cma_word = 0;
}

/* See soft.h. */
void soft_cma_probe_recv(struct soft_conn *c, const uint8_t *payload, uint32_t len)
{
#ifdef __linux__
	uint64_t got = 0;
	struct iovec l = {&got, sizeof(got)};
	struct iovec r = {NULL, sizeof(got)};
	ssize_t n;

	if (c->cma_pid <= 0 || !peer_alive(c))
		return;
	if (len != SOFT_CMA_PROBE_LEN) {
		log_info("%s: the peer's probe names no generation word (an older build): RDMA "
			 "data goes through the socket",
			 c->base.peer);
		return;
	}
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
uint32_t soft_cma_grant(const uint64_t word[2], uint8_t *out)
{
	put_u64(out, word[0]);
	put_u64(out + 8, word[1]);
	return SOFT_CMA_GRANT_LEN;
}

#ifdef __linux__
/* Copy len bytes from the peer's remote iovecs into the local ones; then
 * whether the peer's n words at addr[] still hold want[] (read after the
 * data: a copy taken before the peer raised a word was taken before the peer
 * let go of what it guards). Logged when not. */
static bool copy_from_peer(struct soft_conn *c, const struct iovec *local, int nl,
			   const struct iovec *remote, int nr, size_t len, const uint64_t *addr,
			   const uint64_t *want, int n)
{
	uint64_t got[2] = {0, 0};
	struct iovec lw = {got, sizeof(*got) * (size_t)n}, rw[2];
	ssize_t r;

	if (!peer_alive(c)) {
		log_warn("%s: the peer process is gone: no cross-memory copy", c->base.peer);
		return false;
	}
	r = process_vm_readv(c->cma_pid, local, (unsigned long)nl, remote, (unsigned long)nr, 0);
	if (r != (ssize_t)len) {
		log_warn("%s: cross-memory copy of %zu bytes from the peer failed: %s",
			 c->base.peer, len, r < 0 ? strerror(errno) : "short");
		return false;
	}
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (int i = 0; i < n; i++)
		rw[i] = (struct iovec){.iov_base = (void *)(uintptr_t)addr[i], .iov_len = 8};
	r = process_vm_readv(c->cma_pid, &lw, 1, rw, (unsigned long)n, 0);
	if (r == (ssize_t)lw.iov_len && memcmp(got, want, lw.iov_len) == 0)
		return true;
	log_warn("%s: the peer let go of what was copied meanwhile (%s): the copy does not "
		 "count",
		 c->base.peer,
		 r == (ssize_t)lw.iov_len ? "a generation word was raised" : "unreadable");
	return false;
}
#endif

/* See soft.h. */
bool soft_cma_read(struct soft_conn *c, void *local, size_t len, const struct iovec *remote, int n)
{
#ifdef __linux__
	struct iovec l = {local, len};

	return copy_from_peer(c, &l, 1, remote, n, len, &c->cma_peer_gen_addr, &c->cma_peer_gen, 1);
#else
	(void)c, (void)local, (void)len, (void)remote, (void)n;
	return false;
#endif
}

/* See soft.h. */
bool soft_cma_pull(struct soft_conn *c, const struct iovec *local, int n, uint64_t addr, size_t len,
		   const uint8_t *grant)
{
#ifdef __linux__
	struct iovec r = {(void *)(uintptr_t)addr, len};
	uint64_t waddr[2] = {c->cma_peer_gen_addr, get_u64(grant)};
	uint64_t want[2] = {c->cma_peer_gen, get_u64(grant + 8)};

	return copy_from_peer(c, local, n, &r, 1, len, waddr, want, 2);
#else
	(void)c, (void)local, (void)n, (void)addr, (void)len, (void)grant;
	return false;
#endif
}
