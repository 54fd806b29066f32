/*
 * hostile_bench: how nfsrdma-server serves a well-behaved client while others
 * try to stop it (make bench-hostile). In one process tree: the server (the
 * daemon, a child of this program, soft provider), a good client doing 4 KiB
 * READs and GETATTRs over RPC/RDMA, and the attackers: a TCP client that
 * sends READs of 1 MiB and never reads the replies, an RPC/RDMA client whose
 * device never answers the server's RDMA Reads (it sends WRITEs), 1,000 idle
 * TCP connections, 100 idle RPC/RDMA connections and a UDP flood.
 *
 * Prints the good client's calls/s alone and under attack (median of the
 * rounds, with the spread) and their ratio, the server's threads and RSS at
 * each step, and the server memory each idle connection costs. Figures, not
 * a test: nothing here passes or fails on a number.
 *
 * usage: hostile_bench SERVER-BINARY [--seconds S] [--rounds N]
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "client/nfs3_clnt.h"
#include "common/base/clock.h"
#include "common/base/log.h"
#include "common/base/net.h"
#include "common/nfs/nfs_prog.h"

#define IDLE_TCP     1000
#define IDLE_RDMA    100
#define FILE_SIZE    (4u << 20)
#define MAX_ROUNDS   9
#define BIG_READS    64 /* 1 MiB READs the never-reading client sends */
#define SILENT_WRITE (256u << 10)

struct bench {
	char dir[64], export[96], conf[96];
	int tcp_port, rdma_port;
	char tcp[16], rdma[16];
	pid_t server;
	struct nfs3c *good;
	struct nfs3c_fh fh;
	volatile int stop; /* attackers: end */
};

/* ---- the server ---- */

static void write_conf(struct bench *b)
{
	FILE *f = fopen(b->conf, "w");

	if (!f) {
		perror(b->conf);
		exit(1);
	}
	fprintf(f,
		"log = { level = \"error\"; };\n"
		"rdma = { provider = \"soft\"; };\n"
		"server = {\n"
		"\tlisten = [\"127.0.0.1\"]; rdma_port = %d; tcp_port = %d; threads = 4;\n"
		"\tpidfile = \"%s/pid\"; control_socket = \"%s/ctl.sock\";\n"
		"\thandle_key_file = \"%s/handle.key\";\n"
		"\ttcp_connections_max = 4096; tcp_connections_per_client = 4096;\n"
		"\trdma_connections_max = 1024; rdma_connections_per_client = 1024;\n"
		"\texports = ( { path = \"%s\"; clients = [\"127.0.0.1\"]; access = \"rw\";"
		" root_squash = false; } );\n"
		"};\n",
		b->rdma_port, b->tcp_port, b->dir, b->dir, b->dir, b->export);
	fclose(f);
}

static void start_server(struct bench *b, const char *binary)
{
	struct rlimit r;
	char log[128];
	int fd;

	snprintf(log, sizeof(log), "%s/server.log", b->dir);
	if ((b->server = fork()) == 0) {
		/* room for a thousand idle connections and more */
		if (getrlimit(RLIMIT_NOFILE, &r) == 0) {
			r.rlim_cur = r.rlim_max < 8192 ? r.rlim_max : 8192;
			setrlimit(RLIMIT_NOFILE, &r);
		}
		if ((fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644)) >= 0)
			dup2(fd, STDERR_FILENO);
		execl(binary, binary, "-F", "-f", b->conf, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 100; i++) {
		int s = net_connect_tcp("127.0.0.1", b->tcp, 1000);

		if (s >= 0) {
			close(s);
			return;
		}
		usleep(100000);
	}
	fprintf(stderr, "hostile_bench: the server did not start; see %s\n", log);
	exit(1);
}

/* The server's thread count and resident memory (KiB). */
static void server_state(const struct bench *b, unsigned *threads, unsigned long *rss)
{
	char path[64], line[256];
	FILE *f;

	*threads = 0;
	*rss = 0;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)b->server);
	if (!(f = fopen(path, "r")))
		return;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "Threads: %u", threads);
		sscanf(line, "VmRSS: %lu", rss);
	}
	fclose(f);
}

/* ---- clients ---- */

static int mount_rdma(struct bench *b, struct nfs3c **out)
{
	struct nfs3c_params p;
	char err[256];
	int rc;

	nfs3c_params_defaults(&p);
	p.host = "127.0.0.1";
	p.export = b->export;
	p.proto = p.mountproto = NFS3C_PROTO_RDMA;
	p.port = b->rdma;
	p.rr.provider = "soft";
	p.rr.credits = 16;
	p.noac = 1;
	p.timeout_ms = 15000;
	p.retry_ms = 20000;
	if ((rc = nfs3c_mount(&p, out, err, sizeof(err))) != 0)
		fprintf(stderr, "hostile_bench: mount: %s\n", err);
	return rc;
}

/* The good client's calls per second for secs: a 4 KiB READ at a random
 * offset and a GETATTR, over and over. */
static double measure(struct bench *b, double secs, unsigned *errors)
{
	uint64_t t0 = clock_now_ns(), end = t0 + (uint64_t)(secs * 1e9), calls = 0;
	static uint8_t buf[4096];
	fattr3 a;

	*errors = 0;
	while (clock_now_ns() < end) {
		uint64_t off = (uint64_t)(rand() % (FILE_SIZE / 4096)) * 4096;
		size_t got;
		int eof;

		*errors +=
			nfs3c_read(b->good, NULL, &b->fh, off, buf, sizeof(buf), &got, &eof) != 0;
		*errors += nfs3c_getattr(b->good, NULL, &b->fh, NFS3C_NOCACHE, &a) != 0;
		calls += 2;
	}
	return (double)calls / ((double)(clock_now_ns() - t0) / 1e9);
}

/* ---- attackers ---- */

/* A TCP client that sends BIG_READS READs of 1 MiB and never reads; again
 * once the server has dropped it. */
static void *never_reads(void *arg)
{
	struct bench *b = arg;
	struct rpc_clnt enc; /* only encodes */
	READ3args a = {.file = {.data = {.data_len = b->fh.len, .data_val = (char *)b->fh.data}},
		       .count = 1u << 20};
	struct rpc_call call = {.prog = NFS_PROGRAM,
				.vers = NFS_V3,
				.proc = NFSPROC3_READ,
				.xdr_args = (xdrproc_t)xdr_READ3args,
				.args = &a};

	rpc_clnt_init(&enc, NULL);
	while (!b->stop) {
		int fd = net_connect_tcp("127.0.0.1", b->tcp, 5000), rcvbuf = 4096;
		char one;

		if (fd < 0)
			break;
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
		for (uint32_t xid = 1; xid <= BIG_READS && !b->stop; xid++) {
			uint8_t m[512];
			int len = rpc_encode_call(&enc, xid, &call, m + 4, sizeof(m) - 4, NULL);
			uint32_t mark = htonl(0x80000000u | (uint32_t)len);

			memcpy(m, &mark, 4);
			if (len < 0 || send(fd, m, (size_t)len + 4, MSG_NOSIGNAL) != len + 4)
				break;
		}
		/* never read: wait until the server gives up on us */
		while (!b->stop && recv(fd, &one, 1, MSG_PEEK | MSG_DONTWAIT) != 0 &&
		       (errno == EAGAIN || errno == EWOULDBLOCK))
			usleep(50000);
		close(fd);
	}
	return NULL;
}

/* An RPC/RDMA client whose device never answers the server's RDMA Reads:
 * every WRITE it sends leaves the server waiting for the data. */
struct silent {
	struct bench *b;
	struct nfs3c *c;
};

static void *silent_writer(void *arg)
{
	struct silent *s = arg;
	static uint8_t data[SILENT_WRITE];
	struct nfs3c_file *f;

	while (!s->b->stop && (f = nfs3c_file_get(s->c, &s->b->fh)) != NULL) {
		nfs3c_write(s->c, NULL, f, 0, data, sizeof(data), FILE_SYNC);
		nfs3c_file_put(s->c, f, NULL);
	}
	return NULL;
}

/* NULL calls over UDP as fast as they go; replies are never read. */
static void *udp_flood(void *arg)
{
	struct bench *b = arg;
	struct rpc_call null = {
		.prog = NFS_PROGRAM, .vers = NFS_V3, .proc = 0, .xdr_args = (xdrproc_t)xdr_void};
	struct sockaddr_in to = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)b->tcp_port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_DGRAM, 0), len;
	struct rpc_clnt enc; /* only encodes */
	uint8_t m[128];

	rpc_clnt_init(&enc, NULL);
	len = rpc_encode_call(&enc, 0, &null, m, sizeof(m), NULL);
	for (uint32_t xid = 1; fd >= 0 && len > 0 && !b->stop; xid++) {
		uint32_t x = htonl(xid);

		memcpy(m, &x, 4); /* the same call, a new xid */
		sendto(fd, m, (size_t)len, MSG_DONTWAIT, (struct sockaddr *)&to, sizeof(to));
		if ((xid & 1023) == 0)
			usleep(1000); /* let the machine's two cores breathe */
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* ---- figures ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void print_state(const struct bench *b, const char *step)
{
	unsigned threads;
	unsigned long rss;

	server_state(b, &threads, &rss);
	printf("  %-40s %8u %10.1f\n", step, threads, rss / 1024.0);
}

static void runs(struct bench *b, const char *what, double secs, int rounds, double *out)
{
	for (int r = 0; r < rounds; r++) {
		unsigned errors;

		out[r] = measure(b, secs, &errors);
		printf("  %s, run %d: %.0f calls/s%s\n", what, r + 1, out[r],
		       errors ? " (with errors)" : "");
	}
}

static void setup(struct bench *b, const char *binary)
{
	struct nfs3c_file *f;
	static uint8_t data[FILE_SIZE];
	fattr3 a;

	snprintf(b->dir, sizeof(b->dir), "/tmp/hostile-bench-XXXXXX");
	if (!mkdtemp(b->dir)) {
		perror("mkdtemp");
		exit(1);
	}
	snprintf(b->export, sizeof(b->export), "%s/export", b->dir);
	snprintf(b->conf, sizeof(b->conf), "%s/server.conf", b->dir);
	mkdir(b->export, 0777);
	b->tcp_port = net_free_port();
	b->rdma_port = net_free_port();
	snprintf(b->tcp, sizeof(b->tcp), "%d", b->tcp_port);
	snprintf(b->rdma, sizeof(b->rdma), "%d", b->rdma_port);
	write_conf(b);
	start_server(b, binary);
	if (mount_rdma(b, &b->good) != 0 ||
	    nfs3c_create(b->good, NULL, nfs3c_root(b->good), "data", 0666, 0, &b->fh, &a) != 0 ||
	    !(f = nfs3c_file_get(b->good, &b->fh)) ||
	    nfs3c_write(b->good, NULL, f, 0, data, sizeof(data), FILE_SYNC) != 0) {
		fprintf(stderr, "hostile_bench: cannot set up the good client\n");
		exit(1);
	}
	nfs3c_file_put(b->good, f, NULL);
}

int main(int argc, char **argv)
{
	static int idle_tcp[IDLE_TCP];
	static struct rpc_clnt *idle_rdma[IDLE_RDMA];
	double secs = 3, alone[MAX_ROUNDS], attacked[MAX_ROUNDS], ma, mt;
	unsigned threads0, threads1, threads2, n_tcp = 0, n_rdma = 0;
	unsigned long rss0, rss1, rss2;
	struct silent sil = {0};
	struct bench b = {0};
	pthread_t th[3];
	struct rr_params rp;
	struct rlimit r;
	char cmd[128];
	int rounds = 3;

	for (int i = 2; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--seconds") == 0)
			secs = atof(argv[i + 1]);
		else if (strcmp(argv[i], "--rounds") == 0)
			rounds = atoi(argv[i + 1]);
	}
	if (argc < 2 || secs <= 0 || rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr,
			"usage: hostile_bench SERVER-BINARY [--seconds S] [--rounds 1..%d]\n",
			MAX_ROUNDS);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	log_set_level(LOG_LVL_ERR);
	if (getrlimit(RLIMIT_NOFILE, &r) == 0) {
		r.rlim_cur = r.rlim_max < 8192 ? r.rlim_max : 8192;
		setrlimit(RLIMIT_NOFILE, &r);
	}
	setup(&b, argv[1]);
	printf("hostile_bench: nfsrdma-server (pid %d), 4 workers, soft provider; "
	       "%.1f s per run, %d runs\n",
	       (int)b.server, secs, rounds);
	printf("  %-40s %8s %10s\n", "server", "threads", "RSS MiB");
	print_state(&b, "started, one good client");
	runs(&b, "alone", secs, rounds, alone);
	server_state(&b, &threads0, &rss0);

	for (; n_tcp < IDLE_TCP; n_tcp++)
		if ((idle_tcp[n_tcp] = net_connect_tcp("127.0.0.1", b.tcp, 5000)) < 0)
			break;
	sleep(1);
	server_state(&b, &threads1, &rss1);
	print_state(&b, "+ idle TCP connections");
	rr_params_defaults(&rp);
	rp.provider = "soft";
	rp.credits = 16;
	rp.reg = RR_REG_CACHE; /* idle: nothing registered up front (fastreg: a 64 MB arena) */
	for (; n_rdma < IDLE_RDMA; n_rdma++)
		if (rr_clnt_create(&rp, "127.0.0.1", b.rdma, &idle_rdma[n_rdma]) != 0)
			break;
	sleep(1);
	server_state(&b, &threads2, &rss2);
	print_state(&b, "+ idle RPC/RDMA connections");

	setenv("VB_SOFT_SILENT", "reads", 1); /* for the attacker's device only */
	sil.b = &b;
	if (mount_rdma(&b, &sil.c) != 0)
		sil.c = NULL;
	unsetenv("VB_SOFT_SILENT");
	pthread_create(&th[0], NULL, never_reads, &b);
	pthread_create(&th[1], NULL, udp_flood, &b);
	if (sil.c)
		pthread_create(&th[2], NULL, silent_writer, &sil);
	sleep(1);
	print_state(&b, "+ never-reading, silent RDMA, UDP flood");
	runs(&b, "under attack", secs, rounds, attacked);
	print_state(&b, "after the runs under attack");

	ma = median(alone, rounds);
	mt = median(attacked, rounds);
	printf("good client, calls/s alone:        median %.0f (%.0f..%.0f)\n", ma, alone[0],
	       alone[rounds - 1]);
	printf("good client, calls/s under attack: median %.0f (%.0f..%.0f)\n", mt, attacked[0],
	       attacked[rounds - 1]);
	printf("under attack / alone: %.2f (goal >= 0.5)\n", ma > 0 ? mt / ma : 0);
	printf("idle connections held: %u TCP, %u RPC/RDMA\n", n_tcp, n_rdma);
	printf("server memory per idle TCP connection: %.1f KiB (goal <= 64)\n",
	       n_tcp ? (double)((long)rss1 - (long)rss0) / n_tcp : 0);
	printf("server memory per idle RPC/RDMA connection: %.1f KiB\n",
	       n_rdma ? (double)((long)rss2 - (long)rss1) / n_rdma : 0);
	printf("server threads: %u alone, %u with the idle connections\n", threads0, threads2);
	fflush(stdout);

	b.stop = 1;
	kill(b.server, SIGTERM); /* ends what the attackers wait for */
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	if (sil.c)
		pthread_join(th[2], NULL);
	waitpid(b.server, NULL, 0);
	for (unsigned i = 0; i < n_tcp; i++)
		close(idle_tcp[i]);
	for (unsigned i = 0; i < n_rdma; i++)
		rpc_clnt_destroy(idle_rdma[i]);
	if (sil.c) {
		nfs3c_shutdown(sil.c);
		nfs3c_unmount(sil.c);
	}
	nfs3c_shutdown(b.good);
	nfs3c_unmount(b.good);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", b.dir);
	if (system(cmd) != 0)
		fprintf(stderr, "hostile_bench: %s left behind\n", b.dir);
	return 0;
}
