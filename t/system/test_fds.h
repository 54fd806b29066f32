/*
 * test_fds.h: run a process out of file descriptors on purpose (tests of
 * what a listener does when accept fails with EMFILE), and give them back.
 */
#ifndef NFSRDMA_T_TEST_FDS_H
#define NFSRDMA_T_TEST_FDS_H

#include <errno.h>
#include <unistd.h>
#include <sys/resource.h>

#define TEST_FDS_MAX 4096

struct test_fds {
	struct rlimit old;
	int fd[TEST_FDS_MAX];
	int n;
};

/* Lower the descriptor limit to at most 1024 and take every descriptor but
 * one (room for one socket of the test's, none for the one after). 0, or -1
 * if the process did not run out as it should. */
static inline int test_fds_fill(struct test_fds *t)
{
	struct rlimit low;

	t->n = 0;
	if (getrlimit(RLIMIT_NOFILE, &t->old) != 0)
		return -1;
	low = t->old;
	low.rlim_cur = 1024 < t->old.rlim_cur ? 1024 : t->old.rlim_cur;
	if (setrlimit(RLIMIT_NOFILE, &low) != 0)
		return -1;
	while (t->n < TEST_FDS_MAX && (t->fd[t->n] = dup(0)) >= 0)
		t->n++;
	if (errno != EMFILE || t->n == 0)
		return -1;
	close(t->fd[--t->n]);
	return 0;
}

/* Give the descriptors back, and the old limit. 0, or -1. */
static inline int test_fds_release(struct test_fds *t)
{
	while (t->n)
		close(t->fd[--t->n]);
	return setrlimit(RLIMIT_NOFILE, &t->old);
}

#endif
