/*
 * ceph_direct.c: the baseline of make bench-ceph (issue 16): libcephfs
 * driven directly, the way a head drives it, with nothing of NFS between.
 *
 *   ceph_direct CONF CLIENT_ID KEYRING THREADS SIZE_MIB [RECORD_KIB]
 *
 * One CephFS mount (one client session, as one head has), THREADS threads,
 * each with its own file /ceph-direct.PID.N of SIZE_MIB in records of
 * RECORD_KIB (1024, 1 MiB, by default), written with ceph_ll_write and
 * made stable with ceph_ll_fsync (as bench's UNSTABLE writes and COMMIT),
 * then read back with ceph_ll_read, then
 * removed. Prints one line per pass, "write MBPS CPU MACHINE" and "read MBPS
 * CPU MACHINE": the bytes of all threads over the time from the first
 * thread's start to the last one's end, the process's CPU time (user +
 * system, all its threads, libcephfs's own included) per MiB in microseconds,
 * and the whole machine's busy time (/proc/stat: the cluster's daemons too)
 * per MiB. Exit 0, or 1 with the failing call named on stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <cephfs/libcephfs.h>

static unsigned record = 1u << 20; /* bytes */
#define MAX_THREADS 64

struct job {
	struct ceph_mount_info *cm;
	struct Inode *root;
	unsigned idx;
	uint64_t records;
	int write, rc;
	const char *failed;
	pthread_barrier_t *start;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void name_of(unsigned idx, char *buf, size_t len)
{
	snprintf(buf, len, "ceph-direct.%ld.%u", (long)getpid(), idx);
}

/* CPU seconds of the whole process so far. */
static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* Busy CPU seconds of the whole machine so far (all CPUs), 0 if unknown. */
static double machine_s(void)
{
	unsigned long long v[8] = {0};
	FILE *f = fopen("/proc/stat", "r");
	int n = 0;

	if (f) {
		n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
			   &v[3], &v[4], &v[5], &v[6], &v[7]);
		fclose(f);
	}
	if (n != 8)
		return 0;
	/* user nice system idle iowait irq softirq steal: all but idle and iowait */
	return (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / (double)sysconf(_SC_CLK_TCK);
}

/* One thread's pass over its file. */
static void *pass(void *arg)
{
	struct job *j = arg;
	UserPerm *perms = ceph_mount_perms(j->cm);
	struct ceph_statx stx;
	struct Inode *in = NULL;
	struct Fh *fh = NULL;
	char name[64], *buf;
	int rc = 0;

	name_of(j->idx, name, sizeof(name));
	if ((buf = malloc(record)) == NULL) {
		j->rc = -ENOMEM, j->failed = "malloc";
		return NULL;
	}
	memset(buf, (int)('a' + j->idx), record);
	pthread_barrier_wait(j->start);
	if (j->write)
		rc = ceph_ll_create(j->cm, j->root, name, 0644, O_RDWR | O_CREAT | O_TRUNC, &in,
				    &fh, &stx, 0, 0, perms);
	else if ((rc = ceph_ll_lookup(j->cm, j->root, name, &in, &stx, 0, 0, perms)) == 0)
		rc = ceph_ll_open(j->cm, in, O_RDONLY, &fh, perms);
	if (rc < 0) {
		j->failed = j->write ? "ceph_ll_create" : "ceph_ll_lookup/open";
		goto out;
	}
	for (uint64_t i = 0; i < j->records && rc >= 0; i++) {
		int64_t off = (int64_t)(i * record);

		rc = j->write ? ceph_ll_write(j->cm, fh, off, record, buf)
			      : ceph_ll_read(j->cm, fh, off, record, buf);
		if (rc >= 0 && rc != (int)record)
			rc = -EIO; /* short */
	}
	if (rc < 0)
		j->failed = j->write ? "ceph_ll_write" : "ceph_ll_read";
	else if (j->write && (rc = ceph_ll_fsync(j->cm, fh, 0)) < 0)
		j->failed = "ceph_ll_fsync";
out:
	if (fh)
		ceph_ll_close(j->cm, fh);
	if (in)
		ceph_ll_put(j->cm, in);
	free(buf);
	j->rc = rc < 0 ? rc : 0;
	return NULL;
}

/* Both passes with n threads; 0 or -1. */
static int run(struct ceph_mount_info *cm, struct Inode *root, unsigned n, unsigned mib)
{
	uint64_t records = ((uint64_t)mib << 20) / record;
	struct job jobs[MAX_THREADS];
	pthread_t th[MAX_THREADS];
	pthread_barrier_t start;

	for (int write = 1; write >= 0; write--) {
		double t0, t1, c0, c1, m0, m1;

		pthread_barrier_init(&start, NULL, n + 1);
		for (unsigned i = 0; i < n; i++) {
			jobs[i] = (struct job){cm, root, i, records, write, 0, NULL, &start};
			if (pthread_create(&th[i], NULL, pass, &jobs[i]) != 0) {
				fprintf(stderr, "ceph_direct: cannot start thread %u\n", i);
				exit(1);
			}
		}
		pthread_barrier_wait(&start);
		t0 = now_s();
		c0 = cpu_s();
		m0 = machine_s();
		for (unsigned i = 0; i < n; i++)
			pthread_join(th[i], NULL);
		t1 = now_s();
		c1 = cpu_s();
		m1 = machine_s();
		pthread_barrier_destroy(&start);
		for (unsigned i = 0; i < n; i++) {
			if (jobs[i].rc) {
				fprintf(stderr, "ceph_direct: thread %u: %s: %s\n", i,
					jobs[i].failed, strerror(-jobs[i].rc));
				return -1;
			}
		}
		printf("%s %.1f %.1f %.1f\n", write ? "write" : "read",
		       (double)n * (double)(records * record) / 1e6 / (t1 - t0),
		       (c1 - c0) * 1e6 / n / mib, (m1 - m0) * 1e6 / n / mib);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct ceph_mount_info *cm;
	struct Inode *root;
	unsigned n, mib, kib = 1024;
	int rc;

	if ((argc != 6 && argc != 7) || (n = (unsigned)atoi(argv[4])) == 0 || n > MAX_THREADS ||
	    (mib = (unsigned)atoi(argv[5])) == 0 ||
	    (argc == 7 && ((kib = (unsigned)atoi(argv[6])) == 0 || kib > 1024 || 1024 % kib))) {
		fprintf(stderr,
			"usage: ceph_direct CONF CLIENT_ID KEYRING THREADS(1..%d) SIZE_MIB "
			"[RECORD_KIB(a divisor of 1024)]\n",
			MAX_THREADS);
		return 2;
	}
	record = kib << 10;
	if ((rc = ceph_create(&cm, argv[2])) < 0 || (rc = ceph_conf_read_file(cm, argv[1])) < 0 ||
	    (rc = ceph_conf_set(cm, "keyring", argv[3])) < 0 ||
	    (rc = ceph_conf_set(cm, "client_mount_timeout", "30")) < 0 ||
	    (rc = ceph_mount(cm, "/")) < 0) {
		fprintf(stderr, "ceph_direct: cannot mount CephFS with %s: %s\n", argv[1],
			strerror(-rc));
		return 1;
	}
	if ((rc = ceph_ll_lookup_root(cm, &root)) < 0) {
		fprintf(stderr, "ceph_direct: ceph_ll_lookup_root: %s\n", strerror(-rc));
		return 1;
	}
	rc = run(cm, root, n, mib);
	for (unsigned i = 0; i < n; i++) {
		char name[64];

		name_of(i, name, sizeof(name));
		ceph_ll_unlink(cm, root, name, ceph_mount_perms(cm));
	}
	ceph_ll_put(cm, root);
	ceph_unmount(cm);
	ceph_release(cm);
	return rc ? 1 : 0;
}
