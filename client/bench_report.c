/*
 * bench_report.c: bench's results: the table on stdout, the CSV file, and the
 * gnuplot chart (MB/s against record size, log scale, one line per test and
 * thread count).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "client/bench.h"

const char *const bench_test_names[BENCH_NTESTS] = {
	[BENCH_WRITE] = "write",       [BENCH_READ] = "read", [BENCH_RANDWRITE] = "randwrite",
	[BENCH_RANDREAD] = "randread", [BENCH_NULL] = "null",
};

/* Append one result; -1 when out of memory. */
int bench_results_add(struct bench_results *r, const struct bench_result *x)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 32;
		struct bench_result *v = realloc(r->v, cap * sizeof(*v));

		if (!v)
			return -1;
		r->v = v;
		r->cap = cap;
	}
	r->v[r->n++] = *x;
	return 0;
}

/* Free the results. */
void bench_results_free(struct bench_results *r)
{
	free(r->v);
	memset(r, 0, sizeof(*r));
}

/* See bench.h. */
uint64_t bench_parse_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	int sh = 0;

	if (end == s)
		return 0;
	if (*end == 'k' || *end == 'K')
		sh = 10;
	else if (*end == 'm' || *end == 'M')
		sh = 20;
	else if (*end == 'g' || *end == 'G')
		sh = 30;
	if (sh)
		end++;
	if (*end || v > (UINT64_MAX >> sh))
		return 0;
	return (uint64_t)v << sh;
}

const char *bench_size_str(uint64_t v, char *buf, size_t len)
{
	if (v && v % (1u << 30) == 0)
		snprintf(buf, len, "%llug", (unsigned long long)(v >> 30));
	else if (v && v % (1u << 20) == 0)
		snprintf(buf, len, "%llum", (unsigned long long)(v >> 20));
	else if (v && v % 1024 == 0)
		snprintf(buf, len, "%lluk", (unsigned long long)(v >> 10));
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
	return buf;
}

/* Throughput in 10^6 bytes per second. */
static double mbps(const struct bench_result *x)
{
	return x->seconds > 0 ? (double)x->bytes / x->seconds / 1e6 : 0.0;
}

/* Records per second. */
static double iops(const struct bench_result *x)
{
	return x->seconds > 0 ? (double)x->ops / x->seconds : 0.0;
}

/* The table header. */
void bench_print_header(FILE *f)
{
	fprintf(f, "%-10s %7s %7s %7s %10s %10s\n", "test", "threads", "record", "file", "MB/s",
		"IOPS");
}

/* One table row, flushed so it shows as soon as it is measured. */
void bench_print_row(FILE *f, const struct bench_result *x)
{
	char rec[16], fsz[16];

	fprintf(f, "%-10s %7u %7s %7s %10.1f %10.0f\n", bench_test_names[x->test], x->threads,
		bench_size_str(x->record, rec, sizeof(rec)),
		bench_size_str(x->file_size, fsz, sizeof(fsz)), mbps(x), iops(x));
	if (x->ordma) {
		fprintf(f, "ordma: %llu hits, %llu misses, %llu fallbacks\n",
			(unsigned long long)x->ordma_hits, (unsigned long long)x->ordma_misses,
			(unsigned long long)x->ordma_fallbacks);
		fprintf(f, "ordma misses:");
		for (unsigned i = 1; i < NFS3C_ORDMA_CAUSES; i++)
			fprintf(f, " %s %llu", nfs3c_ordma_cause(i),
				(unsigned long long)x->ordma_miss[i]);
		fprintf(f, "\n");
	}
	fflush(f);
}

/* Every result as a CSV row; 0 or -1. */
int bench_write_csv(const struct bench_results *r, const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fprintf(f, "test,threads,record_bytes,file_bytes,bytes,ops,seconds,mb_per_s,iops,"
		   "ordma_hits,ordma_misses,ordma_fallbacks,p50_us,p99_us\n");
	for (size_t i = 0; i < r->n; i++) {
		const struct bench_result *x = &r->v[i];

		fprintf(f, "%s,%u,%u,%llu,%llu,%llu,%.6f,%.3f,%.1f,%llu,%llu,%llu,%u,%u\n",
			bench_test_names[x->test], x->threads, x->record,
			(unsigned long long)x->file_size, (unsigned long long)x->bytes,
			(unsigned long long)x->ops, x->seconds, mbps(x), iops(x),
			(unsigned long long)x->ordma_hits, (unsigned long long)x->ordma_misses,
			(unsigned long long)x->ordma_fallbacks, x->p50_us, x->p99_us);
	}
	return fclose(f) == 0 ? 0 : -1;
}

/* Write one data block per (test, threads) series; returns the number of series. */
static int write_series(const struct bench_results *r, FILE *dat, FILE *gp, const char *datpath)
{
	int series = 0;

	for (int t = 0; t < BENCH_NTESTS; t++) {
		for (size_t i = 0; i < r->n; i++) {
			const struct bench_result *x = &r->v[i];
			int first = 1;

			for (size_t k = 0; k < i && first; k++)
				if (r->v[k].test == x->test && r->v[k].threads == x->threads)
					first = 0;
			if ((int)x->test != t || !first)
				continue;
			for (size_t k = i; k < r->n; k++)
				if (r->v[k].test == x->test && r->v[k].threads == x->threads)
					fprintf(dat, "%u %.3f\n", r->v[k].record / 1024,
						mbps(&r->v[k]));
			fprintf(dat, "\n\n");
			fprintf(gp,
				"%s'%s' index %d using 1:2 with linespoints title '%s, %u "
				"thread%s'",
				series ? ", \\\n     " : "plot ", datpath, series,
				bench_test_names[t], x->threads, x->threads > 1 ? "s" : "");
			series++;
		}
	}
	fprintf(gp, "\n");
	return series;
}

/* Run gnuplot on script; 0 if it succeeded. */
static int run_gnuplot(const char *script)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		execlp("gnuplot", "gnuplot", script, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* See bench.h: a data file and a script for gnuplot, both removed after. */
int bench_plot(const struct bench_results *r, const char *png, const char *title)
{
	char dat[] = "/tmp/nfsrdma-bench-XXXXXX", gps[64];
	FILE *d, *g;
	int fd = mkstemp(dat), rc = -1;

	if (fd < 0)
		return -1;
	snprintf(gps, sizeof(gps), "%s.gp", dat);
	d = fdopen(fd, "w");
	g = fopen(gps, "w");
	if (d && g) {
		fprintf(g, "set terminal png size 1000,640\nset output '%s'\n", png);
		fprintf(g, "set title \"%s\" noenhanced\nset logscale x 2\n", title);
		fprintf(g, "set xlabel 'record size (KiB)'\nset ylabel 'MB/s'\n");
		fprintf(g, "set key outside right\nset grid\n");
		if (write_series(r, d, g, dat) > 0) {
			fflush(d);
			fflush(g);
			rc = 0;
		}
	}
	if (d)
		fclose(d);
	if (g)
		fclose(g);
	if (rc == 0)
		rc = run_gnuplot(gps);
	unlink(dat);
	unlink(gps);
	return rc;
}
