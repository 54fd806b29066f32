/*
 * vbench.c: nfsrdma-vbench, the verbs microbenchmark.
 *
 * Forks a passive and an active process that open the same provider and
 * connect over loopback, then measures, for message sizes 4 KiB..1 MiB:
 *   - RDMA Write, RDMA Read and Send bandwidth at queue depths 1, 4, 16;
 *   - half round-trip latency of a Send ping-pong;
 *   - the cost of registering + deregistering a buffer of that size, and the
 *     ping-pong latency with that cost added ("latency with registration");
 *   - plain TCP loopback bandwidth between the same two processes, as the
 *     baseline, and the ratio of the best verbs bandwidth to it.
 * Prints a table; --csv FILE also writes every figure as CSV.
 *
 * The passive process registers one region: a 16 MiB window the active side
 * writes to and reads from, a pool of receive buffers and a reply area; it
 * answers control messages (ping-pong mode, message count, TCP run, quit)
 * that travel as 64-byte Sends.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/base/cli.h"
#include "common/base/log.h"
#include "vbench.h"

static const char *const op_names[NOPS] = {"write", "read", "send"};

/* ---- active process ---- */

struct active {
	struct ep e;
	struct peer_info pi;
	int tfd;
	uint8_t *ctl; /* the last MAXSZ of the region: control messages and replies */
};

/* Send a control message; with want_reply, wait for the passive side's answer. */
static uint64_t ctl_call(struct active *a, enum cmd cmd, uint32_t size, bool want_reply)
{
	struct ctl *c = (struct ctl *)a->ctl, *r = (struct ctl *)(a->ctl + 4096);
	struct vb_wc wc[8];
	bool sent = false, got = !want_reply;

	if (want_reply)
		vbench_post_recv(&a->e, 901, r, sizeof(*r));
	*c = (struct ctl){.magic = CTL_MAGIC, .cmd = cmd, .size = size};
	vbench_post_send(&a->e, 900, c, sizeof(*c), true);
	while (!sent || !got) {
		int n = vbench_wait_wcs(&a->e, wc, 8);

		for (int i = 0; i < n; i++) {
			vbench_check_wc(&wc[i]);
			sent |= wc[i].wr_id == 900;
			got |= wc[i].wr_id == 901;
		}
	}
	return want_reply ? r->count : 0;
}

/* Post up to k signaled WRs of one kind in one chain; each of the depth WRs
 * outstanding has its own buffer (and remote buffer), as an application would. */
static void post_chain(struct active *a, enum op op, size_t size, int depth, uint64_t *posted,
		       int k)
{
	static const enum vb_wr_opcode opc[NOPS] = {VB_WR_RDMA_WRITE, VB_WR_RDMA_READ, VB_WR_SEND};
	struct vb_send_wr wr[16];
	struct vb_sge s[16];
	size_t slots = (size_t)depth * size <= AREA ? (size_t)depth : AREA / size;
	int rc;

	for (int i = 0; i < k; i++) {
		size_t off = (size_t)((*posted + (uint64_t)i) % slots) * size;

		s[i] = (struct vb_sge){.addr = (uintptr_t)(a->e.buf + off),
				       .length = (uint32_t)size,
				       .lkey = a->e.mr->lkey};
		wr[i] = (struct vb_send_wr){.wr_id = *posted + (uint64_t)i,
					    .sg_list = &s[i],
					    .num_sge = 1,
					    .opcode = opc[op],
					    .send_flags = VB_SEND_SIGNALED,
					    .remote_addr = a->pi.addr + off,
					    .rkey = a->pi.rkey,
					    .next = i + 1 < k ? &wr[i + 1] : NULL};
	}
	if ((rc = vb_post_send(a->e.conn, wr, NULL)) != 0)
		vbench_die("post_send: %s", strerror(-rc));
	*posted += (uint64_t)k;
}

/* Bandwidth in MB/s of op at size with depth WRs outstanding, for secs seconds. */
static double run_bw(struct active *a, enum op op, size_t size, int depth, double secs)
{
	uint64_t posted = 0, done = 0;
	struct vb_wc wc[32];
	double t0, t1;

	if (op == OP_SEND)
		ctl_call(a, CMD_COUNT, 0, true); /* zero the passive side's count */
	t0 = vbench_now_s();
	for (;;) {
		bool more = vbench_now_s() - t0 < secs;

		if (more && posted - done < (uint64_t)depth) {
			int k = depth - (int)(posted - done);

			post_chain(a, op, size, depth, &posted, k > 16 ? 16 : k);
		}
		if (posted == done)
			break;
		int n = vbench_wait_wcs(&a->e, wc, 32);
		for (int i = 0; i < n; i++)
			vbench_check_wc(&wc[i]);
		done += (uint64_t)n;
	}
	t1 = vbench_now_s();
	if (op == OP_SEND && ctl_call(a, CMD_COUNT, 0, true) != done)
		vbench_die("the passive side counted a different number of Sends");
	return (double)done * (double)size / (t1 - t0) / 1e6;
}

/* Half round trip of a Send ping-pong of size bytes, in microseconds. As
 * perftest's send_lat does, only every 16th Send is signaled and each round
 * waits for the answer's Receive only. */
static double run_latency(struct active *a, size_t size, double secs)
{
	uint8_t *rb = a->e.buf + AREA;
	struct vb_wc wc[4];
	long iters = 0;
	double t0 = 0;

	ctl_call(a, CMD_PINGPONG, (uint32_t)size, false);
	for (long i = 0;; i++) {
		bool answered = false;

		if (i == 10)
			t0 = vbench_now_s(); /* after a warm-up */
		if (i > 10 && (vbench_now_s() - t0 >= secs && iters >= 20))
			break;
		if (i > 10)
			iters++;
		vbench_post_recv(&a->e, 2, rb, (uint32_t)size);
		vbench_post_send(&a->e, 1, a->e.buf, (uint32_t)size, i % 16 == 0);
		while (!answered) {
			int n = vbench_wait_wcs(&a->e, wc, 4);

			for (int k = 0; k < n; k++) {
				vbench_check_wc(&wc[k]);
				answered |= wc[k].wr_id == 2;
			}
		}
	}
	double t = vbench_now_s() - t0;
	ctl_call(a, CMD_COUNT, 0, true); /* leave ping-pong mode */
	return t / (double)iters / 2 * 1e6;
}

/* Register + deregister a fresh buffer of size bytes, in microseconds. */
static double run_reg(struct active *a, size_t size, double secs)
{
	uint8_t *p = aligned_alloc(4096, size);
	long n = 0;
	double t0 = vbench_now_s();

	if (p == NULL)
		vbench_die("out of memory");
	memset(p, 1, size);
	do {
		struct vb_mr *mr;
		int rc = vb_reg_mr(a->e.pd, p, size, VB_ACCESS_LOCAL_WRITE | VB_ACCESS_REMOTE, &mr);

		if (rc)
			vbench_die("reg_mr of %zu bytes: %s", size, strerror(-rc));
		vb_dereg_mr(mr);
		n++;
	} while (vbench_now_s() - t0 < secs || n < 10);
	double t = vbench_now_s() - t0;
	free(p);
	return t / (double)n * 1e6;
}

/* One TCP transfer of total bytes in size-byte writes; returns seconds. */
static double tcp_once(struct active *a, size_t size, uint64_t total)
{
	uint64_t hdr[2] = {size, total};
	uint8_t *src = a->e.buf;
	char ack;
	double t0;

	ctl_call(a, CMD_TCP, (uint32_t)size, false);
	t0 = vbench_now_s();
	if (!vbench_write_full(a->tfd, hdr, sizeof(hdr)))
		vbench_die("TCP baseline: write: %s", strerror(errno));
	for (uint64_t left = total; left;) {
		size_t n = left < size ? (size_t)left : size;

		if (!vbench_write_full(a->tfd, src, n))
			vbench_die("TCP baseline: write: %s", strerror(errno));
		left -= n;
	}
	if (!vbench_read_full(a->tfd, &ack, 1))
		vbench_die("TCP baseline: no ack");
	return vbench_now_s() - t0;
}

/* TCP loopback bandwidth in MB/s for size-byte writes, about secs long. */
static double run_tcp(struct active *a, size_t size, double secs)
{
	uint64_t probe = 32u << 20;
	double rate = (double)probe / tcp_once(a, size, probe);
	uint64_t total = (uint64_t)(rate * secs);

	if (total < probe)
		total = probe;
	total -= total % size;
	return (double)total / tcp_once(a, size, total) / 1e6;
}

/* Connect to the passive side (verbs and TCP). */
static void active_connect(struct active *a, const struct opts *o, const char *port, int tport)
{
	struct vb_cm_event ev;
	struct sockaddr_in sin = {.sin_family = AF_INET,
				  .sin_port = htons((uint16_t)tport),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};

	vbench_ep_open(&a->e, o->device, AREA + 2 * MAXSZ);
	a->ctl = a->e.buf + AREA + MAXSZ;
	if (vb_resolve(a->e.dev, o->addr, port, 5000, &a->e.conn) ||
	    vb_create_qp(a->e.conn, a->e.pd, a->e.cq, a->e.cq, &vbench_qp_cap) ||
	    vb_connect(a->e.conn, NULL))
		vbench_die("cannot connect to %s:%s", o->addr, port);
	vbench_wait_event(a->e.conn, VB_CM_ESTABLISHED, &ev);
	if (ev.private_data_len < sizeof(a->pi))
		vbench_die("the passive side sent no region address");
	memcpy(&a->pi, ev.private_data, sizeof(a->pi));
	a->tfd = socket(AF_INET, SOCK_STREAM, 0);
	if (a->tfd < 0 || connect(a->tfd, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		vbench_die("TCP baseline: connect: %s", strerror(errno));
}

/* The median of n samples (sorts them). */
static double median(double *v, int n)
{
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One repetition of every point, TCP and verbs interleaved size by size, so that
 * load from elsewhere on the machine hits the baseline and the provider alike. */
static void measure_once(struct active *a, const struct opts *o, struct samples *m, int rep)
{
	for (int s = 0; s < o->nsizes; s++) {
		size_t sz = o->sizes[s];

		m->tcp[s][rep] = run_tcp(a, sz, o->secs);
		for (int op = 0; op < NOPS; op++)
			for (int d = 0; d < o->ndepths; d++)
				m->bw[op][s][d][rep] =
					run_bw(a, (enum op)op, sz, o->depths[d], o->secs);
		m->lat[s][rep] = run_latency(a, sz, o->secs);
		m->reg[s][rep] = run_reg(a, sz, o->secs / 2);
	}
}

/* Every measurement, o->reps times; medians into r. */
static void measure(struct active *a, const struct opts *o, struct results *r)
{
	struct samples *m = calloc(1, sizeof(*m));

	if (m == NULL)
		vbench_die("out of memory");
	for (int rep = 0; rep < o->reps; rep++) {
		measure_once(a, o, m, rep);
		fprintf(stderr, "nfsrdma-vbench: repetition %d of %d done\n", rep + 1, o->reps);
	}
	for (int s = 0; s < o->nsizes; s++) {
		for (int op = 0; op < NOPS; op++)
			for (int d = 0; d < o->ndepths; d++)
				r->bw[op][s][d] = median(m->bw[op][s][d], o->reps);
		r->tcp[s] = median(m->tcp[s], o->reps);
		r->lat[s] = median(m->lat[s], o->reps);
		r->reg[s] = median(m->reg[s], o->reps);
	}
	free(m);
}

/* ---- output ---- */

static double best_bw(const struct opts *o, const struct results *r, int op, int s)
{
	double b = 0;

	for (int d = 0; d < o->ndepths; d++)
		if (r->bw[op][s][d] > b)
			b = r->bw[op][s][d];
	return b;
}

/* The results as a table on stdout. */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1 /* ASan makes mlock a no-op and slows everything down */
#else
#define SANITIZED 0
#endif

static void print_table(const struct opts *o, const struct results *r, const char *dev)
{
	if (SANITIZED)
		printf("WARNING: built with AddressSanitizer: mlock is a no-op and copies are "
		       "instrumented, so these figures are not representative; use a plain "
		       "build\n");
	printf("nfsrdma-vbench: device %s, %ld CPUs, %.2f s per point, median of %d runs\n\n", dev,
	       sysconf(_SC_NPROCESSORS_ONLN), o->secs, o->reps);
	if (strcmp(dev, "soft") == 0) {
		const char *e = getenv("VB_SOFT_LOCAL_UNIX"), *m = getenv("VB_SOFT_CMA");
		int tcp = e && strcmp(e, "0") == 0, cma = !m || strcmp(m, "0") != 0;

		printf("soft on loopback goes over %s (VB_SOFT_LOCAL_UNIX=%s)%s\n",
		       tcp ? "TCP" : "AF_UNIX where the OS has it", e && *e ? e : "1",
		       !tcp && cma ? ", Writes and Reads from 16 KiB copied between the processes "
				     "(VB_SOFT_CMA=0 turns that off)"
				   : "");
	}
	printf("bandwidth, MB/s (qd = work requests outstanding); tcp = plain TCP loopback\n");
	printf("%8s %-6s", "size", "op");
	for (int d = 0; d < o->ndepths; d++)
		printf(" %7s%-2d", "qd", o->depths[d]);
	printf(" %9s %8s\n", "tcp", "best/tcp");
	for (int s = 0; s < o->nsizes; s++)
		for (int op = 0; op < NOPS; op++) {
			printf("%8zu %-6s", o->sizes[s], op_names[op]);
			for (int d = 0; d < o->ndepths; d++)
				printf(" %9.0f", r->bw[op][s][d]);
			printf(" %9.0f %8.2f\n", r->tcp[s], best_bw(o, r, op, s) / r->tcp[s]);
		}
	printf("\nlatency, microseconds: Send ping-pong half round trip, registration\n");
	printf("%8s %12s %12s %14s\n", "size", "ping-pong", "reg+dereg", "with reg");
	for (int s = 0; s < o->nsizes; s++)
		printf("%8zu %12.1f %12.1f %14.1f\n", o->sizes[s], r->lat[s], r->reg[s],
		       r->lat[s] + r->reg[s]);
}

/* The results as CSV, one figure per line. */
static void write_csv(const struct opts *o, const struct results *r, const char *dev)
{
	FILE *f = fopen(o->csv, "w");

	if (f == NULL)
		vbench_die("cannot write %s: %s", o->csv, strerror(errno));
	fprintf(f, "device,metric,op,size,qd,value,unit\n");
	fprintf(f, "%s,sanitized_build,,,,%d,\n", dev, SANITIZED);
	for (int s = 0; s < o->nsizes; s++) {
		size_t sz = o->sizes[s];

		for (int op = 0; op < NOPS; op++) {
			for (int d = 0; d < o->ndepths; d++)
				fprintf(f, "%s,bandwidth,%s,%zu,%d,%.1f,MB/s\n", dev, op_names[op],
					sz, o->depths[d], r->bw[op][s][d]);
			fprintf(f, "%s,ratio_to_tcp,%s,%zu,best,%.3f,\n", dev, op_names[op], sz,
				best_bw(o, r, op, s) / r->tcp[s]);
		}
		fprintf(f, "%s,bandwidth,tcp,%zu,,%.1f,MB/s\n", dev, sz, r->tcp[s]);
		fprintf(f, "%s,latency,send,%zu,1,%.2f,us\n", dev, sz, r->lat[s]);
		fprintf(f, "%s,reg_dereg,mr,%zu,,%.2f,us\n", dev, sz, r->reg[s]);
		fprintf(f, "%s,latency_with_reg,send,%zu,1,%.2f,us\n", dev, sz,
			r->lat[s] + r->reg[s]);
	}
	if (fclose(f) != 0)
		vbench_die("cannot write %s: %s", o->csv, strerror(errno));
}

/* The active process: connect, measure, report, tell the passive side to quit. */
static int run_active(const struct opts *o, const char *port, int tport)
{
	struct active a = {0};
	struct results *r = calloc(1, sizeof(*r));
	char dev[VB_NAME_MAX + 16];

	if (r == NULL)
		vbench_die("out of memory");
	active_connect(&a, o, port, tport);
	snprintf(dev, sizeof(dev), "%s", a.e.dev->name);
	measure(&a, o, r);
	ctl_call(&a, CMD_QUIT, 0, false);
	close(a.tfd);
	print_table(o, r, dev);
	if (o->csv)
		write_csv(o, r, dev);
	vbench_ep_close(&a.e);
	free(r);
	return 0;
}

/* ---- start-up ---- */

/* A listening TCP socket on a free loopback port; its port in *port. */
static int tcp_listener(int *port)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(fd, 4) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) < 0)
		vbench_die("cannot open a loopback TCP socket: %s", strerror(errno));
	*port = ntohs(sin.sin_port);
	return fd;
}

/* A usage error: one line, exit status 2. */
__attribute__((format(printf, 1, 2), noreturn)) static void usage_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	exit(cli_vusage_error("nfsrdma-vbench", fmt, ap));
}

/* Parse "a,b,c" of numbers with an optional k/m suffix into out. */
static int parse_list(const char *s, const char *what, size_t *out, long max)
{
	int n = 0;

	for (const char *p = s; *p && n < MAX_POINTS; n++) {
		char *end;
		long v = strtol(p, &end, 10);

		if (*end == 'k' || *end == 'K')
			v *= 1024, end++;
		else if (*end == 'm' || *end == 'M')
			v *= 1024 * 1024, end++;
		if (end == p || v < 1 || v > max || (*end && *end != ','))
			usage_die("bad %s list '%s': numbers 1..%ld, comma-separated", what, s,
				  max);
		out[n] = (size_t)v;
		p = *end ? end + 1 : end;
	}
	return n;
}

/* Command-line help. */
static void usage(void)
{
	printf("usage: nfsrdma-vbench [--device NAME] [--addr IP] [--quick] [--csv FILE]\n"
	       "                      [--time SECONDS] [--sizes 4k,64k,1m] [--depths 1,4,16] "
	       "[--reps N]\n"
	       "  --device  verbs device: auto (default), soft, or a device name like rxe0\n"
	       "  --addr    the device's IP address, where both sides meet (default 127.0.0.1)\n"
	       "  --quick   fewer sizes and 0.2 s per point (make bench-verbs)\n"
	       "  --csv     also write every figure to FILE as CSV\n"
	       "  --time    seconds per point (default 0.5, quick 0.2)\n"
	       "  --reps    repetitions; figures are medians (default 3)\n"
	       "  -h, --help     show this help\n"
	       "  -V, --version  print the version\n");
}

/* Options into o; bad values end the program with the reason. */
static void parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{"device", 1, 0, 'd'}, {"csv", 1, 0, 'c'},   {"time", 1, 0, 't'},
		{"quick", 0, 0, 'q'},  {"sizes", 1, 0, 's'}, {"depths", 1, 0, 'D'},
		{"help", 0, 0, 'h'},   {"reps", 1, 0, 'r'},  {"version", 0, 0, 'V'},
		{"addr", 1, 0, 'a'},   {0, 0, 0, 0},
	};
	const char *sizes = NULL, *depths = "1,4,16";
	size_t dv[MAX_POINTS];
	int c;

	*o = (struct opts){.device = "auto", .addr = "127.0.0.1", .secs = 0.5, .reps = 3};
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":d:a:c:t:qs:D:hVr:", lo, NULL)) != -1) {
		switch (c) {
		case 'd':
			o->device = optarg;
			break;
		case 'a':
			o->addr = optarg;
			break;
		case 'c':
			o->csv = optarg;
			break;
		case 'q':
			o->quick = true;
			break;
		case 's':
			sizes = optarg;
			break;
		case 'D':
			depths = optarg;
			break;
		case 't':
			o->secs = atof(optarg);
			if (o->secs <= 0 || o->secs > 60)
				usage_die("--time must be in (0, 60] seconds");
			break;
		case 'r':
			o->reps = atoi(optarg);
			if (o->reps < 1 || o->reps > MAX_REPS)
				usage_die("--reps must be in [1, %d]", MAX_REPS);
			break;
		case 'h':
			usage();
			exit(0);
		case 'V':
			cli_version("nfsrdma-vbench");
			exit(0);
		default:
			exit(cli_getopt_error("nfsrdma-vbench", c, argv));
		}
	}
	if (optind < argc)
		usage_die("unexpected argument '%s'", argv[optind]);
	if (o->quick && o->secs == 0.5)
		o->secs = 0.2;
	if (sizes == NULL)
		sizes = o->quick ? "4k,16k,64k,256k,1m" : "4k,8k,16k,32k,64k,128k,256k,512k,1m";
	o->nsizes = parse_list(sizes, "size", o->sizes, MAXSZ);
	o->ndepths = parse_list(depths, "depth", dv, 64);
	for (int i = 0; i < o->ndepths; i++)
		o->depths[i] = (int)dv[i];
}

/* Fork the passive side, run the active side, wait for both. */
int main(int argc, char **argv)
{
	struct opts o;
	int ready[2], tport, tlfd, vport, status;
	char port[16];
	pid_t pid;

	parse_args(argc, argv, &o);
	log_set_level(LOG_LVL_WARN);
	signal(SIGPIPE, SIG_IGN);
	tlfd = tcp_listener(&tport);
	close(tcp_listener(&vport)); /* a free port for the verbs listener */
	snprintf(port, sizeof(port), "%d", vport);
	if (pipe(ready) < 0)
		vbench_die("pipe: %s", strerror(errno));
	if ((pid = fork()) < 0)
		vbench_die("fork: %s", strerror(errno));
	if (pid == 0) {
		close(ready[0]);
		return run_passive(&o, port, tlfd, ready[1]);
	}
	close(ready[1]);
	close(tlfd);
	char one;
	if (read(ready[0], &one, 1) != 1)
		vbench_die("the passive process did not start");
	close(ready[0]);
	run_active(&o, port, tport);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		vbench_die("the passive process failed");
	return 0;
}
