/* bench.h: what the bench runner and its reports share. */
#ifndef NFSRDMA_CLIENT_BENCH_H
#define NFSRDMA_CLIENT_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "client/options.h"

#define BENCH_MAX_LIST	  32
#define BENCH_MAX_THREADS 64

enum bench_test {
	BENCH_WRITE,
	BENCH_READ,
	BENCH_RANDWRITE,
	BENCH_RANDREAD,
	BENCH_NULL, /* NULL calls, one per record, nothing moved */
	BENCH_NTESTS,
};

extern const char *const bench_test_names[BENCH_NTESTS];

/* What to run, from the command line. */
struct bench_cfg {
	struct client_opts o;
	unsigned tests; /* bit per enum bench_test */
	uint32_t records[BENCH_MAX_LIST];
	unsigned nrecords;
	unsigned threads[BENCH_MAX_LIST];
	unsigned nthreads;
	uint64_t file_size; /* per thread */
	const char *csv, *plot;
	const char *hook; /* run as "HOOK start|end TEST THREADS RECORD" around each pass */
	int verify, progress;
};

/* Parse bench's command line into cfg; 0, or the exit status after a message. */
int bench_args(struct bench_cfg *cfg, int argc, char **argv);
/* Say what is about to be measured. */
void bench_banner(const struct bench_cfg *cfg, struct nfs3c *c);

/* One measured point. */
struct bench_result {
	enum bench_test test;
	unsigned threads;
	uint32_t record;
	uint64_t file_size; /* per thread */
	uint64_t bytes;	    /* moved by all threads */
	uint64_t ops;
	double seconds;
	int ordma; /* the pass ran with -o ordma: its reads' outcomes below */
	uint64_t ordma_hits, ordma_misses, ordma_fallbacks;
	uint64_t ordma_miss[NFS3C_ORDMA_CAUSES]; /* misses by cause */
	uint32_t p50_us, p99_us;		 /* records' latency: median, 99th */
};

struct bench_results {
	struct bench_result *v;
	size_t n, cap;
};

int bench_results_add(struct bench_results *r, const struct bench_result *x);
void bench_results_free(struct bench_results *r);

/* "4k" -> 4096, "1m" -> 1048576 ... ; 0 on error. */
uint64_t bench_parse_size(const char *s);
/* Human size: 4096 -> "4k". */
const char *bench_size_str(uint64_t v, char *buf, size_t len);

void bench_print_header(FILE *f);
void bench_print_row(FILE *f, const struct bench_result *x);
int bench_write_csv(const struct bench_results *r, const char *path);
/* Draw MB/s against record size, a line per test and thread count, with gnuplot. */
int bench_plot(const struct bench_results *r, const char *png, const char *title);

#endif
