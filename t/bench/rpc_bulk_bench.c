/*
 * rpc_bulk_bench: RPC/RDMA bulk throughput over a provider (default soft), for
 * every mode x server strategy x client strategy, at 128 KiB and 1 MiB: PUT
 * (bulk arguments: the server RDMA-Reads them) and GET (bulk results: RDMA Write
 * in Read-Write, client RDMA Read + RDMA_DONE in Read-Read). THREADS callers
 * share one connection. Prints a table and, with --csv FILE, CSV. Also TCP.
 *   rpc_bulk_bench [--seconds S] [--threads N] [--csv FILE] [--quick]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/base/log.h"
#include "common/rpc/rpc_tcp.h"
#include "common/rpcrdma/rpcrdma.h"
#include "t/system/bulkprog.h"
#include "t/system/rpcrdma_test_util.h"

struct job {
	struct rpc_clnt *c;
	int get;
	size_t size;
	double until;
	uint64_t bytes;
	int errors;
	char *buf;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *worker(void *p)
{
	struct job *j = p;

	while (now() < j->until) {
		int rc;

		if (j->get) {
			struct bulk_get_args a = {.seed = 1, .len = (u_int)j->size};
			struct bulk_get_res r = {0};
			struct rpc_call call = {.prog = BULKPROG,
						.vers = BULKVERS,
						.proc = BULK_GET,
						.xdr_args = (xdrproc_t)xdr_bulk_get_args,
						.args = &a,
						.xdr_res = (xdrproc_t)xdr_bulk_get_res,
						.res = &r,
						.reply_data = j->buf,
						.reply_data_len = (uint32_t)j->size};

			rc = rpc_clnt_call(j->c, &call);
			if (rc == 0) {
				rc = r.len == j->size ? 0 : -EIO;
				rpc_clnt_free_res(j->c, &call);
			}
		} else {
			struct bulk_put_args a = {.seed = 1, .data = {(u_int)j->size, j->buf}};
			struct bulk_sum s;
			struct rpc_call call = {.prog = BULKPROG,
						.vers = BULKVERS,
						.proc = BULK_PUT,
						.xdr_args = (xdrproc_t)xdr_bulk_put_args,
						.args = &a,
						.xdr_res = (xdrproc_t)xdr_bulk_sum,
						.res = &s};

			rc = rpc_clnt_call(j->c, &call);
			if (rc == 0)
				rpc_clnt_free_res(j->c, &call);
		}
		if (rc) {
			j->errors++;
			break;
		}
		j->bytes += j->size;
	}
	return NULL;
}

/* MB/s of nthreads callers doing one kind of call for secs seconds. */
static double measure(struct rpc_clnt *c, int get, size_t size, int nthreads, double secs)
{
	pthread_t t[64];
	struct job j[64];
	uint64_t total = 0;
	double t0 = now(), el;

	for (int i = 0; i < nthreads; i++) {
		j[i] = (struct job){
			.c = c, .get = get, .size = size, .until = t0 + secs, .buf = malloc(size)};
		memset(j[i].buf, i, size);
		pthread_create(&t[i], NULL, worker, &j[i]);
	}
	for (int i = 0; i < nthreads; i++) {
		pthread_join(t[i], NULL);
		total += j[i].bytes;
		if (j[i].errors)
			fprintf(stderr, "rpc_bulk_bench: a call failed\n");
		free(j[i].buf);
	}
	el = now() - t0;
	return total / el / 1e6;
}

int main(int argc, char **argv)
{
	static const enum rr_reg sregs[] = {RR_REG_DYNAMIC, RR_REG_FASTREG, RR_REG_CACHE,
					    RR_REG_ALLPHYS};
	static const enum rr_reg cregs[] = {RR_REG_ZEROCOPY, RR_REG_CACHE, RR_REG_FASTREG,
					    RR_REG_ALLPHYS};
	static const size_t sizes[] = {128 << 10, 1 << 20};
	double secs = 1.0;
	int nthreads = 4, quick = 0, only_overlap = 0;
	FILE *csv = NULL;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			secs = atof(argv[++i]);
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			nthreads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--csv") && i + 1 < argc)
			csv = fopen(argv[++i], "w");
		else if (!strcmp(argv[i], "--quick"))
			quick = 1;
		else if (!strcmp(argv[i], "--overlap"))
			only_overlap = 1;
		else {
			fprintf(stderr, "usage: rpc_bulk_bench [--seconds S] [--threads N] "
					"[--csv FILE] [--quick] [--overlap]\n");
			return 2;
		}
	}
	if (nthreads < 1 || nthreads > 64)
		nthreads = 4;
	log_set_level(LOG_LVL_ERR);
	printf("%-10s %-8s %-8s %8s %10s %10s\n", "mode", "server", "client", "size", "PUT MB/s",
	       "GET MB/s");
	if (csv)
		fprintf(csv, "transport,mode,server,client,size,put_mbs,get_mbs\n");
	for (unsigned m = 0; m < 2 && !only_overlap; m++) {
		for (unsigned s = 0; s < 4; s++) {
			for (unsigned c = 0; c < 4; c++) {
				struct rrt_server t;
				struct rpc_clnt *cl;
				unsigned mode = m ? RR_MODE_READ_READ : RR_MODE_READ_WRITE;

				if (quick && c != s % 4)
					continue;
				if (rrt_server_start(&t, RR_MODE_READ_WRITE | RR_MODE_READ_READ,
						     sregs[s], 0) != 0 ||
				    rrt_client(&t, mode, cregs[c], 0, &cl) != 0) {
					fprintf(stderr, "cannot set up %s/%s\n",
						rr_reg_name(sregs[s]), rr_reg_name(cregs[c]));
					return 1;
				}
				for (unsigned z = 0; z < 2; z++) {
					double put = measure(cl, 0, sizes[z], nthreads, secs);
					double get = measure(cl, 1, sizes[z], nthreads, secs);

					printf("%-10s %-8s %-8s %7zuK %10.0f %10.0f\n",
					       m ? "read-read" : "read-write",
					       rr_reg_name(sregs[s]), rr_reg_name(cregs[c]),
					       sizes[z] >> 10, put, get);
					if (csv)
						fprintf(csv, "rdma,%s,%s,%s,%zu,%.1f,%.1f\n",
							m ? "read-read" : "read-write",
							rr_reg_name(sregs[s]),
							rr_reg_name(cregs[c]), sizes[z], put, get);
					fflush(stdout);
				}
				rpc_clnt_destroy(cl);
				rrt_server_stop(&t);
			}
		}
	}
	/* dynamic registration: the reply buffer registered while the procedure fills
	 * it, against registered first and filled after, side by side */
	for (int overlap = 1; overlap >= 0; overlap--) {
		struct rrt_server t;
		struct rpc_clnt *cl;
		struct rr_params p;

		rrt_params(&p, RR_MODE_READ_WRITE, RR_REG_DYNAMIC);
		p.no_reg_overlap = !overlap;
		if (rrt_server_start_p(&t, &p, 0) != 0 ||
		    rrt_client(&t, RR_MODE_READ_WRITE, RR_REG_CACHE, 0, &cl) != 0)
			return 1;
		for (unsigned z = 0; z < 2; z++) {
			double get = measure(cl, 1, sizes[z], nthreads, secs);

			printf("%-10s %-8s %-8s %7zuK %10s %10.0f   (registration %s the fill)\n",
			       "read-write", "dynamic", "cache", sizes[z] >> 10, "-", get,
			       overlap ? "overlapping" : "before");
			if (csv)
				fprintf(csv, "rdma-%s,read-write,dynamic,cache,%zu,,%.1f\n",
					overlap ? "overlap" : "no-overlap", sizes[z], get);
		}
		rpc_clnt_destroy(cl);
		rrt_server_stop(&t);
	}
	/* the same program over RPC/TCP, as the baseline */
	{
		struct rpc_server_params sp = {.threads = 8};
		struct rpc_tcp_params tp = {
			.max_record = 17u << 20, .max_reply = 65536, .max_inflight = 32};
		struct rpc_server *rpc;
		struct tcp_listener *l;
		struct rpc_clnt *cl;
		char port[16];

		rpc_server_create(&sp, &rpc);
		rpc_server_add_program(rpc, &bulk_program);
		rpc_tcp_listen(rpc, "127.0.0.1", "0", &tp, &l);
		snprintf(port, sizeof(port), "%d", rpc_tcp_port(l));
		rpc_tcp_clnt_create("127.0.0.1", port, 5000, 17u << 20, &cl);
		for (unsigned z = 0; z < 2; z++) {
			double put = measure(cl, 0, sizes[z], nthreads, secs);
			double get = measure(cl, 1, sizes[z], nthreads, secs);

			printf("%-10s %-8s %-8s %7zuK %10.0f %10.0f\n", "tcp", "-", "-",
			       sizes[z] >> 10, put, get);
			if (csv)
				fprintf(csv, "tcp,-,-,-,%zu,%.1f,%.1f\n", sizes[z], put, get);
		}
		rpc_clnt_destroy(cl);
		rpc_tcp_stop(l);
		rpc_server_destroy(rpc);
	}
	if (csv)
		fclose(csv);
	return 0;
}
