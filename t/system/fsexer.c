/*
 * fsexer.c: a random-operation file exerciser, in the spirit of fsx. One file
 * is read, written, read and written through shared mappings, truncated,
 * synced, closed and reopened, in an order a seed decides; every byte read is
 * checked against a shadow copy kept in memory. After each close, the file is
 * also read whole through a second path (another mount of the same export)
 * when one is given: close-to-open consistency.
 *
 *   fsexer [-s SEED] [-n OPS] [-l MAXLEN] [-m MAXIO] [-2 OTHER_PATH] FILE
 *
 * Prints the seed first, so that a failure can be replayed with -s; on a
 * mismatch, the last operations and the first byte that differs, exit 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define HISTORY 16

struct ex {
	const char *path, *other;
	int fd;
	uint64_t rng;
	unsigned char *shadow, *buf;
	size_t len, maxlen, maxio;
	unsigned long op;
	char history[HISTORY][96];
};

/* xorshift64*: the whole run follows from the seed. */
static uint64_t rnd(struct ex *x)
{
	x->rng ^= x->rng >> 12;
	x->rng ^= x->rng << 25;
	x->rng ^= x->rng >> 27;
	return x->rng * 2685821657736338717ull;
}

static size_t below(struct ex *x, size_t n)
{
	return n ? (size_t)(rnd(x) % n) : 0;
}

/* Record the operation: its name, length and offset. */
static void note(struct ex *x, const char *what, size_t n, size_t off)
{
	snprintf(x->history[x->op % HISTORY], sizeof(x->history[0]), "%s %zu at %zu", what, n, off);
}

/* Print what led here and exit 1. */
static void fail(struct ex *x, const char *what)
{
	fprintf(stderr, "fsexer: op %lu: %s\nfsexer: the last operations:\n", x->op, what);
	for (unsigned long i = x->op >= HISTORY ? x->op - HISTORY + 1 : 0; i <= x->op; i++)
		fprintf(stderr, "  %lu %s\n", i, x->history[i % HISTORY]);
	exit(1);
}

static void sys_fail(struct ex *x, const char *call)
{
	char msg[160];

	snprintf(msg, sizeof(msg), "%s: %s", call, strerror(errno));
	fail(x, msg);
}

/* got[0..n) must be the shadow at off. */
static void compare(struct ex *x, const unsigned char *got, size_t off, size_t n, const char *how)
{
	for (size_t i = 0; i < n; i++) {
		if (got[i] != x->shadow[off + i]) {
			char msg[160];

			snprintf(msg, sizeof(msg), "%s: byte %zu is 0x%02x, expected 0x%02x", how,
				 off + i, got[i], x->shadow[off + i]);
			fail(x, msg);
		}
	}
}

static void full_pread(struct ex *x, int fd, unsigned char *b, size_t n, size_t off)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = pread(fd, b + done, n - done, (off_t)(off + done));

		if (r < 0)
			sys_fail(x, "pread");
		if (r == 0)
			fail(x, "pread: end of file before the expected size");
		done += (size_t)r;
	}
}

static void op_read(struct ex *x)
{
	size_t off = below(x, x->len + 1), n = below(x, x->maxio + 1);

	if (off + n > x->len)
		n = x->len - off;
	note(x, "read", n, off);
	full_pread(x, x->fd, x->buf, n, off);
	compare(x, x->buf, off, n, "read");
}

static void op_write(struct ex *x)
{
	size_t off = below(x, x->maxlen), n = 1 + below(x, x->maxio);

	if (off + n > x->maxlen)
		n = x->maxlen - off;
	note(x, "write", n, off);
	for (size_t i = 0; i < n; i++)
		x->buf[i] = (unsigned char)rnd(x);
	if (pwrite(x->fd, x->buf, n, (off_t)off) != (ssize_t)n)
		sys_fail(x, "pwrite");
	if (off > x->len)
		memset(x->shadow + x->len, 0, off - x->len);
	memcpy(x->shadow + off, x->buf, n);
	if (off + n > x->len)
		x->len = off + n;
}

static void op_truncate(struct ex *x)
{
	size_t n = below(x, x->maxlen + 1);

	note(x, "truncate to", n, 0);
	if (ftruncate(x->fd, (off_t)n) != 0)
		sys_fail(x, "ftruncate");
	if (n > x->len)
		memset(x->shadow + x->len, 0, n - x->len);
	x->len = n;
}

/* A mapping of [off, off+n) of the file: returns the map and the byte of off in it. */
static unsigned char *map(struct ex *x, size_t off, size_t n, int prot, size_t *skip, size_t *mlen)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), start = off / page * page;
	void *m;

	*skip = off - start;
	*mlen = *skip + n;
	m = mmap(NULL, *mlen, prot, MAP_SHARED, x->fd, (off_t)start);
	if (m == MAP_FAILED)
		sys_fail(x, "mmap");
	return (unsigned char *)m + *skip;
}

static void op_mapread(struct ex *x)
{
	size_t off, n, skip, mlen;
	unsigned char *m;

	if (x->len == 0)
		return;
	off = below(x, x->len);
	n = 1 + below(x, x->maxio);
	if (off + n > x->len)
		n = x->len - off;
	note(x, "mapread", n, off);
	m = map(x, off, n, PROT_READ, &skip, &mlen);
	compare(x, m, off, n, "mapread");
	munmap(m - skip, mlen);
}

static void op_mapwrite(struct ex *x)
{
	size_t off = below(x, x->maxlen), n = 1 + below(x, x->maxio), skip, mlen;
	unsigned char *m;

	if (off + n > x->maxlen)
		n = x->maxlen - off;
	note(x, "mapwrite", n, off);
	if (off + n > x->len) { /* a mapping cannot grow the file */
		if (ftruncate(x->fd, (off_t)(off + n)) != 0)
			sys_fail(x, "ftruncate before mapwrite");
		memset(x->shadow + x->len, 0, off + n - x->len);
		x->len = off + n;
	}
	m = map(x, off, n, PROT_READ | PROT_WRITE, &skip, &mlen);
	for (size_t i = 0; i < n; i++)
		m[i] = x->shadow[off + i] = (unsigned char)rnd(x);
	if (msync(m - skip, mlen, MS_SYNC) != 0)
		sys_fail(x, "msync");
	munmap(m - skip, mlen);
}

static void op_fsync(struct ex *x)
{
	note(x, "fsync", 0, 0);
	if (fsync(x->fd) != 0)
		sys_fail(x, "fsync");
}

/* The whole file through path: size and every byte. */
static void check_whole(struct ex *x, const char *path, const char *how)
{
	int fd = open(path, O_RDONLY);
	struct stat st;

	if (fd < 0)
		sys_fail(x, how);
	if (fstat(fd, &st) != 0)
		sys_fail(x, how);
	if ((size_t)st.st_size != x->len) {
		char msg[160];

		snprintf(msg, sizeof(msg), "%s: size %jd, expected %zu", how, (intmax_t)st.st_size,
			 x->len);
		fail(x, msg);
	}
	full_pread(x, fd, x->buf, x->len, 0);
	compare(x, x->buf, 0, x->len, how);
	close(fd);
}

static void op_reopen(struct ex *x)
{
	note(x, "close and reopen, length", x->len, 0);
	if (close(x->fd) != 0)
		sys_fail(x, "close");
	if (x->other)
		check_whole(x, x->other, "read through the other path after close");
	if ((x->fd = open(x->path, O_RDWR)) < 0)
		sys_fail(x, "reopen");
}

int main(int argc, char **argv)
{
	static void (*const ops[])(struct ex *) = {op_read,	op_read,    op_write,
						   op_write,	op_mapread, op_mapwrite,
						   op_truncate, op_fsync,   op_reopen};
	struct ex x = {.maxlen = 256 * 1024, .maxio = 64 * 1024};
	unsigned long n = 2000, seed = (unsigned long)time(NULL) ^ (unsigned long)getpid();
	int c;

	while ((c = getopt(argc, argv, "s:n:l:m:2:")) != -1) {
		if (c == 's')
			seed = strtoul(optarg, NULL, 0);
		else if (c == 'n')
			n = strtoul(optarg, NULL, 0);
		else if (c == 'l')
			x.maxlen = strtoul(optarg, NULL, 0);
		else if (c == 'm')
			x.maxio = strtoul(optarg, NULL, 0);
		else if (c == '2')
			x.other = optarg;
		else
			goto usage;
	}
	if (optind != argc - 1 || x.maxlen == 0 || x.maxio == 0)
		goto usage;
	x.path = argv[optind];
	x.rng = seed * 0x9E3779B97F4A7C15ull + 1;
	printf("fsexer: seed %lu, %lu operations on %s\n", seed, n, x.path);
	fflush(stdout);
	x.shadow = calloc(1, x.maxlen);
	x.buf = malloc(x.maxlen > x.maxio ? x.maxlen : x.maxio);
	if (!x.shadow || !x.buf)
		return 1;
	if ((x.fd = open(x.path, O_RDWR | O_CREAT | O_TRUNC, 0644)) < 0)
		sys_fail(&x, "open");
	for (x.op = 0; x.op < n; x.op++)
		ops[below(&x, sizeof(ops) / sizeof(ops[0]))](&x);
	op_reopen(&x);
	check_whole(&x, x.path, "read whole at the end");
	close(x.fd);
	printf("fsexer: seed %lu: %lu operations, every read as expected\n", seed, n);
	free(x.shadow);
	free(x.buf);
	return 0;
usage:
	fprintf(stderr,
		"usage: fsexer [-s SEED] [-n OPS] [-l MAXLEN] [-m MAXIO] [-2 OTHER_PATH] FILE\n");
	return 2;
}
