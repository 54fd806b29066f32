/*
 * bench.c: `nfsrdma-client bench SERVER:/EXPORT`, IOzone-style tests that
 * drive the NFS protocol directly (no FUSE, no page cache, no attribute
 * cache): sequential and random write and read of one file per thread, for
 * each record size and thread count asked. Writes are UNSTABLE and the COMMIT
 * at the end of a pass is inside the timing. Random passes touch every record
 * once, in a shuffled order; "null" makes one NULL call per record (the bare
 * call rate, nothing moved). Reports MB/s (10^6 bytes) and IOPS. A --hook
 * command runs before and after every measured pass, outside the timing, so a
 * script can sample the server (its CPU time) exactly around the pass.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client/bench.h"
#include "client/client.h"
#include "client/options.h"
#include "common/base/log.h"

#define FILL_RECORD (1u << 20) /* the untimed writes before a read test */

struct bench_file {
	struct nfs3c_fh fh;
	struct nfs3c_file *wf;
	char name[64];
};

struct bench_run {
	struct nfs3c *c;
	const struct bench_cfg *cfg;
	enum bench_test test;
	uint32_t record;
	unsigned nthreads;
	struct bench_file *files;
	pthread_barrier_t start;
	uint64_t done_bytes; /* atomic, for progress */
	unsigned finished;   /* atomic */
};

struct worker {
	struct bench_run *run;
	unsigned idx;
	pthread_t th;
	int rc;
	double end;    /* when its last I/O (and commit) finished */
	uint32_t *lat; /* each record's latency, microseconds */
	uint64_t nlat;
};

/* Monotonic seconds, for timing passes. */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The data at off of file idx: every 8 bytes name their position. */
static void fill(uint8_t *buf, uint32_t len, unsigned idx, uint64_t off)
{
	for (uint32_t i = 0; i + 8 <= len; i += 8) {
		uint64_t v = ((uint64_t)idx << 56) ^ (off + i);

		memcpy(buf + i, &v, 8);
	}
}

/* Whether buf holds what fill() wrote there; -EILSEQ if not. */
static int check(const uint8_t *buf, uint32_t len, unsigned idx, uint64_t off)
{
	for (uint32_t i = 0; i + 8 <= len; i += 8) {
		uint64_t v = ((uint64_t)idx << 56) ^ (off + i), got;

		memcpy(&got, buf + i, 8);
		if (got != v)
			return -EILSEQ;
	}
	return 0;
}

/* The record order: 0..n-1, shuffled for the random tests. */
static uint64_t *make_order(uint64_t n, int shuffle, unsigned seed)
{
	uint64_t *v = malloc((n ? n : 1) * sizeof(*v)), x = 0x9e3779b97f4a7c15ull ^ seed;

	for (uint64_t i = 0; v && i < n; i++)
		v[i] = i;
	for (uint64_t i = n; v && shuffle && i > 1; i--) {
		uint64_t j, t;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		j = x % i;
		t = v[i - 1], v[i - 1] = v[j], v[j] = t;
	}
	return v;
}

/* One record of the pass. */
static int do_record(struct bench_run *r, struct bench_file *f, unsigned idx, uint8_t *buf,
		     uint64_t off)
{
	size_t got = 0;
	int rc;

	if (r->test == BENCH_NULL)
		return nfs3c_null(r->c);
	if (r->test == BENCH_WRITE || r->test == BENCH_RANDWRITE) {
		if (r->cfg->verify)
			fill(buf, r->record, idx, off);
		return nfs3c_write(r->c, NULL, f->wf, off, buf, r->record, UNSTABLE);
	}
	rc = nfs3c_read(r->c, NULL, &f->fh, off, buf, r->record, &got, NULL);
	if (rc == 0 && got != r->record)
		rc = -EIO;
	if (rc == 0 && r->cfg->verify)
		rc = check(buf, r->record, idx, off);
	return rc;
}

/* One thread of a pass: its file, every record once, then COMMIT for writes. */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct bench_run *r = w->run;
	struct bench_file *f = &r->files[w->idx];
	uint64_t n = r->cfg->file_size / r->record;
	int rnd = r->test == BENCH_RANDWRITE || r->test == BENCH_RANDREAD;
	uint64_t *order = make_order(n, rnd, w->idx * 7919u + r->record);
	uint8_t *buf = nfs3c_iobuf_get(r->c, r->record); /* READs land in place */

	/* Without --verify every record is written as filled here, as fio
	 * writes its buffers: making up fresh data is the bench's work, not the
	 * mount's, and took nearly half of the client's CPU in 1 MiB writes. */
	if (buf)
		fill(buf, r->record, w->idx, 0);
	w->lat = malloc((n ? n : 1) * sizeof(*w->lat));
	w->nlat = 0;
	pthread_barrier_wait(&r->start);
	w->rc = order && buf && w->lat ? 0 : -ENOMEM;
	for (uint64_t i = 0; i < n && w->rc == 0; i++) {
		double t = now_s(), us;

		w->rc = do_record(r, f, w->idx, buf, order[i] * r->record);
		us = (now_s() - t) * 1e6;
		w->lat[w->nlat++] = us < UINT32_MAX ? (uint32_t)us : UINT32_MAX;
		__atomic_add_fetch(&r->done_bytes, r->record, __ATOMIC_RELAXED);
	}
	if (w->rc == 0 && (r->test == BENCH_WRITE || r->test == BENCH_RANDWRITE))
		w->rc = nfs3c_commit(r->c, NULL, f->wf);
	w->end = now_s();
	__atomic_add_fetch(&r->finished, 1, __ATOMIC_RELAXED);
	free(order);
	nfs3c_iobuf_put(r->c, buf);
	return NULL;
}

/* Show how far the pass is, on a terminal, until every worker is done. */
static void show_progress(struct bench_run *r)
{
	uint64_t total = r->cfg->file_size * r->nthreads;
	char rec[16];

	while (__atomic_load_n(&r->finished, __ATOMIC_RELAXED) < r->nthreads) {
		if (r->cfg->progress) {
			uint64_t d = __atomic_load_n(&r->done_bytes, __ATOMIC_RELAXED);

			printf("\r  %-10s threads %-3u record %-5s %3u%%",
			       bench_test_names[r->test], r->nthreads,
			       bench_size_str(r->record, rec, sizeof(rec)),
			       (unsigned)(total ? d * 100 / total : 100));
			fflush(stdout);
		}
		usleep(r->cfg->progress ? 200000 : 2000);
	}
	if (r->cfg->progress) {
		printf("\r%60s\r", "");
		fflush(stdout);
	}
}

/* Run the --hook command, if any, with what the pass is; its status is ignored. */
static void run_hook(const struct bench_run *r, const char *when)
{
	char cmd[1024];

	if (!r->cfg->hook)
		return;
	snprintf(cmd, sizeof(cmd), "%s %s %s %u %u", r->cfg->hook, when, bench_test_names[r->test],
		 r->nthreads, r->record);
	fflush(stdout);
	if (system(cmd) == -1)
		fprintf(stderr, "nfsrdma-client bench: cannot run the hook\n");
}

static int by_value(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The records' latency percentiles over every worker (and their arrays freed). */
static void latencies(struct worker *w, unsigned n, struct bench_result *res)
{
	uint64_t total = 0, k = 0;
	uint32_t *all;

	for (unsigned i = 0; i < n; i++)
		total += w[i].nlat;
	if (total && (all = malloc(total * sizeof(*all))) != NULL) {
		for (unsigned i = 0; i < n; i++) {
			memcpy(all + k, w[i].lat, w[i].nlat * sizeof(*all));
			k += w[i].nlat;
		}
		qsort(all, total, sizeof(*all), by_value);
		res->p50_us = all[total / 2];
		res->p99_us = all[total * 99 / 100];
		free(all);
	}
	for (unsigned i = 0; i < n; i++)
		free(w[i].lat);
}

/* Run one pass with every thread; fills res. */
static int run_pass(struct bench_run *r, struct bench_result *res, int measured)
{
	struct worker w[BENCH_MAX_THREADS];
	struct nfs3c_stats before, after;
	double t0, t1;
	int rc = 0;

	nfs3c_get_stats(r->c, &before);
	if (measured)
		run_hook(r, "start");
	r->done_bytes = 0;
	r->finished = 0;
	pthread_barrier_init(&r->start, NULL, r->nthreads + 1);
	for (unsigned i = 0; i < r->nthreads; i++) {
		w[i] = (struct worker){.run = r, .idx = i};
		if (pthread_create(&w[i].th, NULL, worker_main, &w[i]) != 0) {
			fprintf(stderr, "nfsrdma-client bench: cannot start threads\n");
			exit(1); /* the barrier cannot be released any more */
		}
	}
	pthread_barrier_wait(&r->start);
	t0 = now_s();
	show_progress(r);
	t1 = t0;
	for (unsigned i = 0; i < r->nthreads; i++) {
		pthread_join(w[i].th, NULL);
		rc = rc ? rc : w[i].rc;
		t1 = w[i].end > t1 ? w[i].end : t1;
	}
	pthread_barrier_destroy(&r->start);
	if (measured)
		run_hook(r, "end");
	*res = (struct bench_result){.test = r->test,
				     .threads = r->nthreads,
				     .record = r->record,
				     .file_size = r->cfg->file_size,
				     .bytes = r->test == BENCH_NULL
						      ? 0
						      : r->cfg->file_size / r->record * r->record *
								r->nthreads,
				     .ops = r->cfg->file_size / r->record * r->nthreads,
				     .seconds = t1 - t0,
				     .ordma = r->cfg->o.nfs.ordma};
	latencies(w, r->nthreads, res);
	nfs3c_get_stats(r->c, &after);
	res->ordma_hits = after.ordma_hits - before.ordma_hits;
	res->ordma_fallbacks = after.ordma_fallbacks - before.ordma_fallbacks;
	for (unsigned i = 1; i < NFS3C_ORDMA_CAUSES; i++) {
		res->ordma_miss[i] = after.ordma_miss[i] - before.ordma_miss[i];
		res->ordma_misses += res->ordma_miss[i];
	}
	return rc;
}

/* Create (or empty) one file per thread in the export's root. */
static int files_open(struct nfs3c *c, struct bench_file *f, unsigned n)
{
	fattr3 a;
	int rc = 0;

	for (unsigned i = 0; i < n && rc == 0; i++) {
		snprintf(f[i].name, sizeof(f[i].name), ".nfsrdma-bench.%d.%u", (int)getpid(), i);
		rc = nfs3c_create(c, NULL, nfs3c_root(c), f[i].name, 0644, 0, &f[i].fh, &a);
		if (rc == 0 && !(f[i].wf = nfs3c_file_get(c, &f[i].fh)))
			rc = -ENOMEM;
		if (rc)
			fprintf(stderr, "nfsrdma-client bench: cannot create %s: %s\n", f[i].name,
				strerror(-rc));
	}
	return rc;
}

/* Release and remove the files of files_open. */
static void files_close(struct nfs3c *c, struct bench_file *f, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (f[i].wf)
			nfs3c_file_put(c, f[i].wf, NULL);
		if (f[i].fh.len)
			nfs3c_remove(c, NULL, nfs3c_root(c), f[i].name);
	}
}

/* Every selected test at one thread count and record size. */
static int run_point(struct bench_run *r, struct bench_results *out, int *filled)
{
	struct bench_result res;
	int rc = 0;

	for (int t = 0; t < BENCH_NTESTS && rc == 0; t++) {
		int reads = t == BENCH_READ || t == BENCH_RANDREAD;

		if (!(r->cfg->tests & (1u << t)))
			continue;
		if (reads && !*filled) { /* the files need data first; not measured */
			uint32_t record = r->record;

			/* in large records where they fit: the data is the same */
			if (r->cfg->file_size % FILL_RECORD == 0)
				r->record = FILL_RECORD;
			r->test = BENCH_WRITE;
			rc = run_pass(r, &res, 0);
			r->record = record;
			if (rc != 0)
				break;
		}
		r->test = (enum bench_test)t;
		rc = run_pass(r, &res, 1);
		if (rc == 0) {
			*filled = *filled || t != BENCH_NULL;
			bench_print_row(stdout, &res);
			rc = bench_results_add(out, &res) ? -ENOMEM : 0;
		}
	}
	if (rc)
		fprintf(stderr, "nfsrdma-client bench: %s, %u threads, record %u: %s\n",
			bench_test_names[r->test], r->nthreads, r->record, strerror(-rc));
	return rc;
}

/* All thread counts and record sizes. */
static int run_all(struct nfs3c *c, const struct bench_cfg *cfg, struct bench_results *out)
{
	int rc = 0;

	bench_print_header(stdout);
	for (unsigned ti = 0; ti < cfg->nthreads && rc == 0; ti++) {
		struct bench_run r = {.c = c, .cfg = cfg, .nthreads = cfg->threads[ti]};
		int filled = 0;

		r.files = calloc(r.nthreads, sizeof(*r.files));
		rc = r.files ? files_open(c, r.files, r.nthreads) : -ENOMEM;
		for (unsigned ri = 0; ri < cfg->nrecords && rc == 0; ri++) {
			r.record = cfg->records[ri];
			rc = run_point(&r, out, &filled);
		}
		if (r.files)
			files_close(c, r.files, r.nthreads);
		free(r.files);
	}
	return rc;
}

/* The chart's title: what was measured, without quotes gnuplot would choke on. */
static const char *bench_title(const struct bench_cfg *cfg, char *buf, size_t len)
{
	const struct nfs3c_params *p = &cfg->o.nfs;

	if (p->proto == NFS3C_PROTO_RDMA)
		snprintf(buf, len, "nfsrdma bench: %s:%s, rdma %s, reg %s", cfg->o.host,
			 cfg->o.export,
			 p->rr.modes & RR_MODE_READ_READ ? "read-read" : "read-write",
			 rr_reg_name(p->rr.reg));
	else
		snprintf(buf, len, "nfsrdma bench: %s:%s, tcp", cfg->o.host, cfg->o.export);
	for (char *q = buf; *q; q++)
		if (*q == '"' || *q == '\\')
			*q = '_';
	return buf;
}

/* bench: mount, run every point, report; 0, 1 (failed) or 2 (usage). */
int client_bench_main(int argc, char **argv)
{
	struct bench_cfg cfg;
	struct bench_results res = {0};
	char err[CLIENT_OPT_ERR_LEN], title[512];
	struct nfs3c *c;
	int rc;

	if ((rc = bench_args(&cfg, argc, argv)) != 0)
		return rc;
	log_open("nfsrdma-client", 0, cfg.o.log_level);
	rc = nfs3c_mount(&cfg.o.nfs, &c, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "nfsrdma-client bench: cannot mount %s:%s: %s\n", cfg.o.host,
			cfg.o.export, err);
		client_opts_free(&cfg.o);
		return 1;
	}
	bench_banner(&cfg, c);
	rc = run_all(c, &cfg, &res);
	nfs3c_unmount(c);
	if (res.n && cfg.csv && bench_write_csv(&res, cfg.csv) != 0) {
		fprintf(stderr, "nfsrdma-client bench: cannot write %s\n", cfg.csv);
		rc = rc ? rc : -EIO;
	}
	if (res.n && cfg.plot &&
	    bench_plot(&res, cfg.plot, bench_title(&cfg, title, sizeof(title))) != 0) {
		fprintf(stderr, "nfsrdma-client bench: gnuplot could not draw %s\n", cfg.plot);
		rc = rc ? rc : -EIO;
	}
	bench_results_free(&res);
	client_opts_free(&cfg.o);
	return rc ? 1 : 0;
}
