/*
 * nlm_test_locks.c: locks between hosts and owners, merged and
 * split ranges, a local process's fcntl locks, blocked requests granted,
 * cancelled and unlocked, FREE_ALL, the per-client limits, and shares.
 * Part of t/system/nlm_test (see nlm_test.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <rpc/rpc.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "common/nfs/nlm_prog.h"
#include "common/nfs/nlm_prot.h"
#include "common/nfs/nsm_prot.h"
#include "nlm_test.h"

/* Two hosts (and two owners of one host) conflict; TEST names the holder. */
void conflicts_between_hosts(void **state)
{
	nfs_fh3 fh;
	nlm4_holder h;

	(void)state;
	file_handle("conflict", &fh);
	assert_int_equal(do_lock(tcp, alock("hostA", &fh, 11, 0, 100), 1, 0, 0), NLM4_GRANTED);
	/* the same owner again: still granted (a relock) */
	assert_int_equal(do_lock(tcp, alock("hostA", &fh, 11, 0, 100), 1, 0, 0), NLM4_GRANTED);
	assert_int_equal(do_lock(udp, alock("hostB", &fh, 22, 50, 10), 1, 0, 0), NLM4_DENIED);
	assert_int_equal(do_lock(tcp, alock("hostA", &fh, 12, 50, 10), 0, 0, 0), NLM4_DENIED);
	assert_int_equal(do_test(udp, alock("hostB", &fh, 22, 50, 10), 0, &h), NLM4_DENIED);
	assert_true(h.exclusive);
	assert_int_equal(h.svid, 11);
	assert_int_equal(h.l_offset, 0);
	assert_int_equal(h.l_len, 100);
	/* beside it: no conflict */
	assert_int_equal(do_test(udp, alock("hostB", &fh, 22, 100, 10), 1, NULL), NLM4_GRANTED);
	assert_int_equal(do_lock(udp, alock("hostB", &fh, 22, 100, 0), 1, 0, 0), NLM4_GRANTED);
	/* shared locks share */
	assert_int_equal(do_unlock(tcp, alock("hostA", &fh, 11, 0, 0)), NLM4_GRANTED);
	assert_int_equal(do_lock(tcp, alock("hostA", &fh, 11, 0, 10), 0, 0, 0), NLM4_GRANTED);
	assert_int_equal(do_lock(udp, alock("hostB", &fh, 22, 0, 10), 0, 0, 0), NLM4_GRANTED);
	assert_int_equal(do_lock(udp, alock("hostC", &fh, 33, 5, 1), 1, 0, 0), NLM4_DENIED);
	do_free_all(tcp, "hostA");
	do_free_all(tcp, "hostB");
	assert_int_equal(do_lock(udp, alock("hostC", &fh, 33, 0, 0), 1, 0, 0), NLM4_GRANTED);
	do_free_all(tcp, "hostC");
	free(fh.data.data_val);
}

/* The last bytes a file can have (Connectathon lock test 6): a lock of byte
 * 2^63-1 alone (the Linux client sends it as "to the end") leaves the byte
 * before it free, and a range that ends just before it is not one to the
 * end; past 2^63-1 is NLM4_FBIG. */
void last_bytes(void **state)
{
	const uint64_t last = INT64_MAX;
	nfs_fh3 fh;
	nlm4_holder h;

	(void)state;
	file_handle("lastbytes", &fh);
	assert_int_equal(do_lock(tcp, alock("hostA", &fh, 11, last, 0), 1, 0, 0), NLM4_GRANTED);
	assert_int_equal(do_test(udp, alock("hostB", &fh, 22, last - 1, 1), 1, NULL), NLM4_GRANTED);
	assert_int_equal(do_lock(udp, alock("hostB", &fh, 22, last - 1, 1), 1, 0, 0), NLM4_GRANTED);
	assert_int_equal(do_test(udp, alock("hostC", &fh, 33, last, 1), 1, &h), NLM4_DENIED);
	assert_int_equal(h.svid, 11);
	assert_int_equal(do_test(udp, alock("hostC", &fh, 33, last - 1, 0), 1, &h), NLM4_DENIED);
	assert_int_equal(do_lock(tcp, alock("hostA", &fh, 12, last + 1, 1), 1, 0, 0), NLM4_FBIG);
	do_free_all(tcp, "hostA");
	do_free_all(udp, "hostB");
	/* a range to just before the last byte, then the last byte */
	assert_int_equal(do_lock(tcp, alock("hostA", &fh, 11, 0, last), 1, 0, 0), NLM4_GRANTED);
	assert_int_equal(do_lock(udp, alock("hostB", &fh, 22, last, 1), 1, 0, 0), NLM4_GRANTED);
	do_free_all(tcp, "hostA");
	do_free_all(udp, "hostB");
	free(fh.data.data_val);
}

/* One owner's ranges merge, and an unlock in the middle splits them: as the
 * kernel says (TEST's holder, and a local F_GETLK) and as NLM says. */
void merge_and_split(void **state)
{
	char path[512];
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1000};
	nfs_fh3 fh;
	nlm4_holder h;
	int fd;

	(void)state;
	file_handle("merge", &fh);
	assert_int_equal(do_lock(tcp, alock("hostA", &fh, 1, 0, 10), 1, 0, 0), NLM4_GRANTED);
	assert_int_equal(do_lock(tcp, alock("hostA", &fh, 1, 5, 15), 1, 0, 0), NLM4_GRANTED);
	assert_int_equal(do_test(udp, alock("hostB", &fh, 2, 0, 1000), 1, &h), NLM4_DENIED);
	assert_int_equal(h.l_offset, 0);
	assert_int_equal(h.l_len, 20);
	snprintf(path, sizeof(path), "%s/export/merge", T);
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_GETLK, &fl), 0);
	assert_int_equal(fl.l_type, F_WRLCK);
	assert_int_equal(fl.l_start, 0);
	assert_int_equal(fl.l_len, 20);
	assert_int_equal(fl.l_pid, -1); /* an open file description's lock */
	/* split: [0,8) and [12,20) remain */
	assert_int_equal(do_unlock(tcp, alock("hostA", &fh, 1, 8, 4)), NLM4_GRANTED);
	assert_int_equal(do_test(udp, alock("hostB", &fh, 2, 8, 4), 1, NULL), NLM4_GRANTED);
	assert_int_equal(do_test(udp, alock("hostB", &fh, 2, 0, 1000), 1, &h), NLM4_DENIED);
	assert_int_equal(h.l_offset, 0);
	assert_int_equal(h.l_len, 8);
	assert_int_equal(h.svid, 1);
	assert_int_equal(do_test(udp, alock("hostB", &fh, 2, 10, 1000), 1, &h), NLM4_DENIED);
	assert_int_equal(h.l_offset, 12);
	assert_int_equal(h.l_len, 8);
	fl = (struct flock){.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 8, .l_len = 4};
	assert_int_equal(fcntl(fd, F_SETLK, &fl), 0); /* the hole is free here too */
	fl.l_type = F_UNLCK;
	assert_int_equal(fcntl(fd, F_SETLK, &fl), 0);
	/* unlocking everything closes the owner: its locks are gone */
	assert_int_equal(do_unlock(tcp, alock("hostA", &fh, 1, 0, 0)), NLM4_GRANTED);
	fl = (struct flock){.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
	assert_int_equal(fcntl(fd, F_GETLK, &fl), 0);
	assert_int_equal(fl.l_type, F_UNLCK);
	close(fd);
	free(fh.data.data_val);
}

/* A local process's fcntl lock on the exported file conflicts both ways. */
void local_process_conflicts(void **state)
{
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 10};
	char path[512];
	nfs_fh3 fh;
	nlm4_holder h;
	int fd;

	(void)state;
	file_handle("local", &fh);
	snprintf(path, sizeof(path), "%s/export/local", T);
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_SETLK, &fl), 0);
	assert_int_equal(do_lock(tcp, alock("hostA", &fh, 5, 5, 1), 1, 0, 0), NLM4_DENIED);
	assert_int_equal(do_test(tcp, alock("hostA", &fh, 5, 5, 1), 0, &h), NLM4_DENIED);
	assert_int_equal(h.svid, getpid());
	assert_int_equal(h.l_offset, 0);
	assert_int_equal(h.l_len, 10);
	assert_int_equal(do_lock(tcp, alock("hostA", &fh, 5, 100, 10), 1, 0, 0), NLM4_GRANTED);
	fl = (struct flock){.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 105, .l_len = 1};
	assert_int_equal(fcntl(fd, F_SETLK, &fl), -1);
	assert_true(errno == EAGAIN || errno == EACCES);
	/* a blocked request goes through when the local lock goes (the tick) */
	assert_int_equal(do_lock(tcp, alock("hostA", &fh, 5, 0, 10), 1, 1, 0), NLM4_BLOCKED);
	fl = (struct flock){.l_type = F_UNLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 10};
	assert_int_equal(fcntl(fd, F_SETLK, &fl), 0);
	int32_t svid = 5;
	struct event e;

	assert_true(wait_event(match_granted_svid, &svid, 5000, &e));
	assert_int_equal(e.kind, EV_GRANTED);
	assert_int_equal(e.off, 0);
	assert_int_equal(e.len, 10);
	close(fd);
	do_free_all(tcp, "hostA");
	free(fh.data.data_val);
}

/* A blocking LOCK waits in the queue and is GRANTED by a call back when the
 * holder unlocks; a CANCELled one never is. Its client (hostW, which never
 * gets a lock at once) is monitored from its request on, so that it hears of
 * a restart. */
void blocked_granted_and_cancelled(void **state)
{
	int32_t svid_b = 201, svid_c = 301;
	nfs_fh3 fh;
	struct event e;

	(void)state;
	file_handle("blocked", &fh);
	assert_int_equal(do_lock(tcp, alock("hostA", &fh, 101, 0, 10), 1, 0, 0), NLM4_GRANTED);
	assert_false(monitored("hostW"));
	assert_int_equal(do_lock(udp, alock("hostW", &fh, svid_b, 0, 10), 1, 1, 0), NLM4_BLOCKED);
	assert_true(monitored("hostW"));
	/* asked again (clients do): still one request */
	assert_int_equal(do_lock(udp, alock("hostW", &fh, svid_b, 0, 10), 1, 1, 0), NLM4_BLOCKED);
	assert_int_equal(do_lock(tcp, alock("hostC", &fh, svid_c, 5, 1), 1, 1, 0), NLM4_BLOCKED);
	assert_int_equal(do_cancel(tcp, alock("hostC", &fh, svid_c, 5, 1), 1), NLM4_GRANTED);
	assert_false(wait_event(match_granted_svid, &svid_b, 300, NULL));
	assert_int_equal(do_unlock(tcp, alock("hostA", &fh, 101, 0, 10)), NLM4_GRANTED);
	assert_true(wait_event(match_granted_svid, &svid_b, 5000, &e));
	assert_int_equal(e.kind, EV_GRANTED);
	assert_int_equal(e.off, 0);
	assert_int_equal(e.len, 10);
	/* W holds it now */
	assert_int_equal(do_lock(tcp, alock("hostA", &fh, 101, 0, 1), 1, 0, 0), NLM4_DENIED);
	assert_int_equal(do_unlock(udp, alock("hostW", &fh, svid_b, 0, 10)), NLM4_GRANTED);
	assert_false(wait_event(match_granted_svid, &svid_c, 1500, NULL));
	assert_int_equal(do_lock(tcp, alock("hostA", &fh, 101, 0, 10), 1, 0, 0), NLM4_GRANTED);
	do_free_all(tcp, "hostA");
	free(fh.data.data_val);
}

/* An UNLOCK also cancels the owner's blocked requests on the range. */
void unlock_cancels_waits(void **state)
{
	int32_t svid = 1102;
	nfs_fh3 fh;

	(void)state;
	file_handle("unlockwait", &fh);
	assert_int_equal(do_lock(tcp, alock("hostA", &fh, 1101, 0, 10), 1, 0, 0), NLM4_GRANTED);
	assert_int_equal(do_lock(udp, alock("hostB", &fh, svid, 0, 10), 1, 1, 0), NLM4_BLOCKED);
	assert_int_equal(do_unlock(udp, alock("hostB", &fh, svid, 0, 0)), NLM4_GRANTED);
	assert_int_equal(do_unlock(tcp, alock("hostA", &fh, 1101, 0, 0)), NLM4_GRANTED);
	assert_false(wait_event(match_granted_svid, &svid, 1500, NULL));
	assert_int_equal(do_lock(tcp, alock("hostA", &fh, 1101, 0, 10), 1, 0, 0), NLM4_GRANTED);
	do_free_all(tcp, "hostA");
	free(fh.data.data_val);
}

/* FREE_ALL drops every lock and blocked request of a host. */
void free_all(void **state)
{
	int32_t svid = 402;
	nfs_fh3 fh;

	(void)state;
	file_handle("freeall", &fh);
	assert_int_equal(do_lock(tcp, alock("hostF", &fh, 401, 0, 10), 1, 0, 0), NLM4_GRANTED);
	assert_int_equal(do_lock(tcp, alock("hostF", &fh, 401, 20, 10), 0, 0, 0), NLM4_GRANTED);
	assert_int_equal(do_lock(udp, alock("hostG", &fh, 501, 40, 10), 1, 0, 0), NLM4_GRANTED);
	assert_int_equal(do_lock(tcp, alock("hostF", &fh, svid, 40, 1), 1, 1, 0), NLM4_BLOCKED);
	do_free_all(udp, "hostF");
	assert_int_equal(do_lock(udp, alock("hostG", &fh, 501, 0, 30), 1, 0, 0), NLM4_GRANTED);
	assert_int_equal(do_unlock(udp, alock("hostG", &fh, 501, 0, 0)), NLM4_GRANTED);
	assert_false(wait_event(match_granted_svid, &svid, 1500, NULL));
	free(fh.data.data_val);
}

/* Each export's lock calls have a turn of their own, and a client's FREE_ALL
 * drops what it holds in every export, each at its next turn, before that
 * turn's own call: the rebooted client's new lock there stays. */
void free_all_exports(void **state)
{
	nfs_fh3 f1, f2;

	(void)state;
	file_handle_in("export", "fa1", &f1);
	file_handle_in("export2", "fa2", &f2);
	assert_int_equal(do_lock(tcp, alock("hostP", &f1, 1, 0, 10), 1, 0, 0), NLM4_GRANTED);
	assert_int_equal(do_lock(tcp, alock("hostP", &f2, 2, 0, 10), 1, 0, 0), NLM4_GRANTED);
	assert_int_equal(do_lock(udp, alock("hostQ", &f2, 3, 0, 10), 1, 0, 0), NLM4_DENIED);
	do_free_all(udp, "hostP");
	assert_int_equal(do_lock(tcp, alock("hostP", &f2, 2, 20, 10), 1, 0, 0), NLM4_GRANTED);
	assert_int_equal(do_lock(udp, alock("hostQ", &f1, 3, 0, 10), 1, 0, 0), NLM4_GRANTED);
	assert_int_equal(do_lock(udp, alock("hostQ", &f2, 3, 0, 10), 1, 0, 0), NLM4_GRANTED);
	assert_int_equal(do_lock(udp, alock("hostQ", &f2, 3, 20, 10), 1, 0, 0), NLM4_DENIED);
	do_free_all(tcp, "hostP");
	do_free_all(tcp, "hostQ");
	free(f1.data.data_val);
	free(f2.data.data_val);
}

/* Past a client's limits: DENIED_NOLOCKS for it, and only for it. */
void per_client_limits(void **state)
{
	nfs_fh3 fh;

	(void)state;
	file_handle("limits", &fh);
	for (int32_t i = 0; i < 4; i++)
		assert_int_equal(
			do_lock(tcp, alock("hostL", &fh, 600 + i, (uint64_t)i * 10, 1), 1, 0, 0),
			NLM4_GRANTED);
	assert_int_equal(do_lock(tcp, alock("hostL", &fh, 699, 90, 1), 1, 0, 0),
			 NLM4_DENIED_NOLOCKS);
	do_free_all(tcp, "hostL");
	for (int i = 0; i < 8; i++)
		assert_int_equal(
			do_lock(tcp, alock("hostL", &fh, 600, (uint64_t)i * 10, 1), 1, 0, 0),
			NLM4_GRANTED);
	assert_int_equal(do_lock(tcp, alock("hostL", &fh, 600, 200, 1), 1, 0, 0),
			 NLM4_DENIED_NOLOCKS);
	/* one that merges with a range it holds costs nothing */
	assert_int_equal(do_lock(tcp, alock("hostL", &fh, 600, 1, 2), 1, 0, 0), NLM4_GRANTED);
	/* blocked requests too */
	assert_int_equal(do_lock(tcp, alock("hostM", &fh, 700, 0, 1), 1, 1, 0), NLM4_BLOCKED);
	assert_int_equal(do_lock(tcp, alock("hostM", &fh, 701, 10, 1), 1, 1, 0), NLM4_BLOCKED);
	assert_int_equal(do_lock(tcp, alock("hostM", &fh, 702, 20, 1), 1, 1, 0),
			 NLM4_DENIED_NOLOCKS);
	/* others are not affected */
	assert_int_equal(do_lock(udp, alock("hostN", &fh, 800, 500, 1), 1, 0, 0), NLM4_GRANTED);
	do_free_all(tcp, "hostM");
	do_free_all(tcp, "hostL");
	do_free_all(tcp, "hostN");
	free(fh.data.data_val);
}

/* SHARE/UNSHARE: deny modes against access. */
nlm4_stats do_share(CLIENT *c, uint32_t proc, nlm4_shareargs *a, const char *host, int mode,
		    int access)
{
	nlm4_shareres r;
	nlm4_stats st;

	a->share.caller_name = (char *)host;
	a->share.mode = (nlm4_fsh_mode)mode;
	a->share.access = (nlm4_fsh_access)access;
	memset(&r, 0, sizeof(r));
	assert_int_equal(nlm_call(c, proc, (xdrproc_t)xdr_nlm4_shareargs, a,
				  (xdrproc_t)xdr_nlm4_shareres, &r),
			 RPC_SUCCESS);
	st = r.stat;
	xdr_free((xdrproc_t)xdr_nlm4_shareres, (char *)&r);
	return st;
}

void shares(void **state)
{
	nlm4_shareargs a = {.cookie = COOKIE};
	nfs_fh3 fh;

	(void)state;
	file_handle("share", &fh);
	a.share = (nlm4_share){.fh = {fh.data.data_len, fh.data.data_val}, .oh = {2, "s1"}};
	assert_int_equal(do_share(tcp, NLM4_SHARE, &a, "hostS", NLM4_FSM_DW, NLM4_FSA_R),
			 NLM4_GRANTED);
	/* the same owner again (a reopen): replaces its share */
	assert_int_equal(do_share(tcp, NLM4_SHARE, &a, "hostS", NLM4_FSM_DW, NLM4_FSA_R),
			 NLM4_GRANTED);
	assert_int_equal(do_share(udp, NLM4_SHARE, &a, "hostT", NLM4_FSM_DN, NLM4_FSA_W),
			 NLM4_DENIED);
	assert_int_equal(do_share(udp, NLM4_SHARE, &a, "hostT", NLM4_FSM_DN, NLM4_FSA_R),
			 NLM4_GRANTED);
	/* S asks to deny reading, which T does: refused, and S keeps what it had */
	assert_int_equal(do_share(tcp, NLM4_SHARE, &a, "hostS", NLM4_FSM_DR, NLM4_FSA_R),
			 NLM4_DENIED);
	assert_int_equal(do_share(udp, NLM4_SHARE, &a, "hostV", NLM4_FSM_DN, NLM4_FSA_W),
			 NLM4_DENIED);
	do_share(tcp, NLM4_UNSHARE, &a, "hostS", NLM4_FSM_DN, NLM4_FSA_R);
	do_share(udp, NLM4_UNSHARE, &a, "hostT", NLM4_FSM_DN, NLM4_FSA_R);
	assert_int_equal(
		do_share(udp, NLM4_SHARE, &a, "hostU", NLM4_FSM_DN, 7 /* no such access */),
		NLM4_FAILED);
	assert_int_equal(do_share(udp, NLM4_SHARE, &a, "hostU", NLM4_FSM_DN, NLM4_FSA_W),
			 NLM4_GRANTED);
	do_free_all(tcp, "hostU");
	free(fh.data.data_val);
}
