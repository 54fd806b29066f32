/*
 * bench_args.c: bench's command line. Lists are comma-separated ("4k,64k") or
 * ranges of powers of two ("4k-1m", "1-8").
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/bench.h"
#include "common/base/cli.h"

#define ME "nfsrdma-client bench"

/* bench's usage message. */
static void bench_usage(FILE *f)
{
	fprintf(f,
		"usage: nfsrdma-client bench SERVER:/EXPORT [-o OPTIONS] [-t TESTS] [-r RECORDS]\n"
		"                            [-j THREADS] [-s SIZE] [--csv FILE] [--plot "
		"FILE.png]\n"
		"                            [--verify] [--hook CMD] [-q]\n"
		"       nfsrdma-client bench --help | --version\n"
		"  -t TESTS     of write,read,randwrite,randread (all), null (NULL calls)\n"
		"  -r RECORDS   record sizes 4k..1m, list or range (4k-1m)\n"
		"  -j THREADS   thread counts, one file each, list or range (1)\n"
		"  -s SIZE      file size per thread (64m)\n"
		"  --csv FILE   results as CSV\n"
		"  --plot FILE  results drawn by gnuplot as PNG\n"
		"  --verify     write every record's own data, check it in every read\n"
		"  --hook CMD   run `CMD start|end TEST THREADS RECORD` around each pass\n"
		"  -q           no progress line\n"
		"mount options (-o) as for mount; attributes are never cached (but with "
		"ordma):\n%s",
		client_opts_help);
}

/* A list or power-of-two range of numbers (sizes if sized) into v. */
static int parse_list(const char *s, int sized, uint64_t min, uint64_t max, uint64_t *v,
		      unsigned *n)
{
	char *copy = strdup(s), *save = NULL, *item, *dash;
	int rc = copy ? 0 : -1;

	*n = 0;
	for (item = copy ? strtok_r(copy, ",", &save) : NULL; item && rc == 0;
	     item = strtok_r(NULL, ",", &save)) {
		uint64_t lo, hi;

		if ((dash = strchr(item, '-')) != NULL)
			*dash++ = '\0';
		lo = sized ? bench_parse_size(item) : strtoull(item, NULL, 10);
		hi = dash ? (sized ? bench_parse_size(dash) : strtoull(dash, NULL, 10)) : lo;
		if (lo < min || hi > max || hi < lo) {
			rc = -1;
			break;
		}
		for (uint64_t x = lo; x <= hi && rc == 0; x = x * 2) {
			if (*n == BENCH_MAX_LIST)
				rc = -1;
			else
				v[(*n)++] = x;
		}
	}
	free(copy);
	return rc == 0 && *n ? 0 : -1;
}

/* Test names into a bit set. */
static int parse_tests(const char *s, unsigned *out)
{
	char *copy = strdup(s), *save = NULL, *item;
	int rc = copy ? 0 : -1;

	*out = 0;
	for (item = copy ? strtok_r(copy, ",", &save) : NULL; item && rc == 0;
	     item = strtok_r(NULL, ",", &save)) {
		int t;

		for (t = 0; t < BENCH_NTESTS && strcmp(item, bench_test_names[t]); t++)
			;
		if (t == BENCH_NTESTS)
			rc = -1;
		else
			*out |= 1u << t;
	}
	free(copy);
	return rc == 0 && *out ? 0 : -1;
}

/* Defaults, then -t/-r/-j/-s. Returns 0 or -1 after a message. */
static int parse_lists(struct bench_cfg *cfg, int ch, const char *arg)
{
	uint64_t v[BENCH_MAX_LIST];
	unsigned n;

	switch (ch) {
	case 't':
		if (parse_tests(arg, &cfg->tests) == 0)
			return 0;
		cli_usage_error(ME, "-t %s: tests are write, read, randwrite, randread, null", arg);
		return -1;
	case 'r':
		if (parse_list(arg, 1, 4096, 1u << 20, v, &n) == 0) {
			for (unsigned i = 0; i < n; i++)
				cfg->records[i] = (uint32_t)v[i];
			cfg->nrecords = n;
			return 0;
		}
		cli_usage_error(ME, "-r %s: record sizes are 4k..1m", arg);
		return -1;
	case 'j':
		if (parse_list(arg, 0, 1, BENCH_MAX_THREADS, v, &n) == 0) {
			for (unsigned i = 0; i < n; i++)
				cfg->threads[i] = (unsigned)v[i];
			cfg->nthreads = n;
			return 0;
		}
		cli_usage_error(ME, "-j %s: thread counts are 1..%d", arg, BENCH_MAX_THREADS);
		return -1;
	default:
		cfg->file_size = bench_parse_size(arg);
		if (cfg->file_size >= 4096)
			return 0;
		cli_usage_error(ME, "-s %s: not a file size of at least 4k", arg);
		return -1;
	}
}

/* Every test, records 4k..1m, one thread, 64 MiB files; progress on a terminal. */
static void bench_defaults(struct bench_cfg *cfg)
{
	static const uint32_t recs[] = {4096, 16384, 65536, 262144, 1048576};

	memset(cfg, 0, sizeof(*cfg));
	client_opts_init(&cfg->o);
	cfg->tests = (1u << BENCH_NULL) - 1; /* the I/O tests */
	memcpy(cfg->records, recs, sizeof(recs));
	cfg->nrecords = sizeof(recs) / sizeof(recs[0]);
	cfg->threads[0] = 1;
	cfg->nthreads = 1;
	cfg->file_size = 64u << 20;
	cfg->progress = isatty(STDOUT_FILENO);
}

/* Check the whole: every record size must divide the file size. */
static int bench_check(struct bench_cfg *cfg, int argc, char **argv)
{
	char err[CLIENT_OPT_ERR_LEN];

	if (argc - optind < 1) {
		cli_usage_error(ME, "SERVER:/EXPORT is needed");
		return -1;
	}
	if (argc - optind > 1) {
		cli_usage_error(ME, "unexpected argument '%s'", argv[optind + 1]);
		return -1;
	}
	if (client_opts_spec(&cfg->o, argv[optind], err, sizeof(err)) != 0 ||
	    client_opts_finish(&cfg->o, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s: %s\n", ME, err);
		return -1;
	}
	for (unsigned i = 0; i < cfg->nrecords; i++) {
		if (cfg->file_size % cfg->records[i]) {
			cli_usage_error(ME, "file size %llu is not a multiple of record %u",
					(unsigned long long)cfg->file_size, cfg->records[i]);
			return -1;
		}
	}
	/* bench measures the protocol: nothing cached, except with ordma, whose
	 * reads need the file's attributes (acregmin..acregmax) */
	if (!cfg->o.nfs.ordma)
		cfg->o.nfs.noac = 1;
	return 0;
}

/* See bench.h. */
int bench_args(struct bench_cfg *cfg, int argc, char **argv)
{
	static const struct option longs[] = {{"csv", required_argument, NULL, 'C'},
					      {"plot", required_argument, NULL, 'P'},
					      {"verify", no_argument, NULL, 'E'},
					      {"hook", required_argument, NULL, 'H'},
					      {"help", no_argument, NULL, 'h'},
					      {"version", no_argument, NULL, 'V'},
					      {NULL, 0, NULL, 0}};
	char err[CLIENT_OPT_ERR_LEN];
	int ch, rc = 0;

	bench_defaults(cfg);
	optind = 1;
	opterr = 0;
	while (rc == 0 && (ch = getopt_long(argc, argv, ":o:t:r:j:s:qhV", longs, NULL)) != -1) {
		if (ch == 'o' && client_opts_parse(&cfg->o, optarg, err, sizeof(err)) != 0) {
			fprintf(stderr, "%s: %s\n", ME, err);
			rc = -1;
		} else if (ch == 't' || ch == 'r' || ch == 'j' || ch == 's') {
			rc = parse_lists(cfg, ch, optarg);
		} else if (ch == 'C' || ch == 'P' || ch == 'H') {
			*(ch == 'C' ? &cfg->csv : ch == 'P' ? &cfg->plot : &cfg->hook) = optarg;
		} else if (ch == 'E' || ch == 'q') {
			*(ch == 'E' ? &cfg->verify : &cfg->progress) = ch == 'E';
		} else if (ch == 'h' || ch == 'V') {
			if (ch == 'h')
				bench_usage(stdout);
			else
				cli_version("nfsrdma-client");
			client_opts_free(&cfg->o);
			exit(0);
		} else if (ch != 'o') {
			cli_getopt_error(ME, ch, argv);
			rc = -1;
		}
	}
	if (rc == 0)
		rc = bench_check(cfg, argc, argv);
	if (rc)
		client_opts_free(&cfg->o);
	return rc ? CLI_EXIT_USAGE : 0;
}

/* See bench.h. */
void bench_banner(const struct bench_cfg *cfg, struct nfs3c *c)
{
	const struct nfs3c_params *p = &cfg->o.nfs;
	char fsz[16];

	printf("nfsrdma bench: %s:%s over %s", cfg->o.host, cfg->o.export,
	       p->proto == NFS3C_PROTO_RDMA ? "rdma" : "tcp");
	if (p->proto == NFS3C_PROTO_RDMA)
		printf(" (%s, reg %s, provider %s, credits %u)",
		       p->rr.modes & RR_MODE_READ_READ ? "read-read" : "read-write",
		       rr_reg_name(p->rr.reg), p->rr.provider, p->rr.credits);
	printf(", rsize %u, wsize %u, file %s per thread%s\n", nfs3c_rsize(c), nfs3c_wsize(c),
	       bench_size_str(cfg->file_size, fsz, sizeof(fsz)),
	       cfg->verify ? ", reads verified" : "");
}
