/*
 * nlm_test_rights.c: who may lock a file. As on the Linux server, a lock
 * request that opens the file for a new lock owner (LOCK, TEST, SHARE) needs
 * its caller, after the export's squashing, to own the file or to have the
 * right to read it; the export option auth_nlm = false (nfs-utils'
 * no_auth_nlm) lets anyone lock. On an export that requires integrity, every
 * lock call must be signed. Part of t/system/nlm_test (see nlm_test.c).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <rpc/rpc.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "common/nfs/nlm_prog.h"
#include "common/nfs/nlm_prot.h"
#include "nlm_test.h"

#define OWNER 1000
#define OTHER 2000

/* A TCP client of the server's NLM whose calls carry AUTH_SYS uid/gid
 * (AUTH_NONE when uid is -1). */
static CLIENT *as_user(int uid)
{
	CLIENT *c = client(IPPROTO_TCP, NLM_PROGRAM, NLM_V4);

	if (uid >= 0) {
		auth_destroy(c->cl_auth);
		c->cl_auth = authunix_create("nlmtest", uid, uid, 0, NULL);
		assert_non_null(c->cl_auth);
	}
	return c;
}

/* Destroy c and its credential (clnt_destroy leaves that). */
static void done_with(CLIENT *c)
{
	auth_destroy(c->cl_auth);
	clnt_destroy(c);
}

/* The handle of file name in export (made if missing), owned by OWNER with mode. */
static void private_file(const char *export, const char *name, mode_t mode, nfs_fh3 *fh)
{
	char path[512];

	file_handle_in(export, name, fh);
	snprintf(path, sizeof(path), "%s/%s/%s", T, export, name);
	assert_int_equal(chown(path, OWNER, OWNER), 0);
	assert_int_equal(chmod(path, mode), 0);
}

/* SHARE or UNSHARE (proc) of fh by c for host's owner "s1", denying mode to
 * others for access; its answer. */
static nlm4_stats share(CLIENT *c, uint32_t proc, const nfs_fh3 *fh, const char *host, int mode,
			int access)
{
	nlm4_shareargs a = {.cookie = COOKIE};

	a.share = (nlm4_share){.fh = {fh->data.data_len, fh->data.data_val}, .oh = {2, "s1"}};
	return do_share(c, proc, &a, host, mode, access);
}

/* The owner, and a caller who may read the file, may lock it; anyone else,
 * an anonymous caller among them, is refused, unless the export says
 * auth_nlm = false. */
void lock_needs_right(void **state)
{
	CLIENT *owner = as_user(OWNER), *other = as_user(OTHER), *anon = as_user(-1);
	nfs_fh3 fh, open_fh;
	char path[512];

	(void)state;
	private_file("export", "private", 0600, &fh);
	/* refused as Linux's lockd refuses an open: FAILED (DENIED would name a
	 * conflicting lock) */
	assert_int_equal(do_lock(other, alock("hostR", &fh, 1, 0, 10), 1, 0, 0), NLM4_FAILED);
	assert_int_equal(do_lock(other, alock("hostR", &fh, 1, 0, 10), 0, 1, 0), NLM4_FAILED);
	assert_int_equal(do_test(other, alock("hostR", &fh, 1, 0, 10), 1, NULL), NLM4_FAILED);
	assert_int_equal(share(other, NLM4_SHARE, &fh, "hostR", NLM4_FSM_DN, NLM4_FSA_R),
			 NLM4_FAILED);
	assert_int_equal(do_lock(anon, alock("hostR", &fh, 2, 0, 10), 0, 0, 0), NLM4_FAILED);
	/* the owner may, even where the mode lets it do nothing (0000) */
	assert_int_equal(do_lock(owner, alock("hostR", &fh, 3, 0, 10), 1, 0, 0), NLM4_GRANTED);
	assert_int_equal(do_unlock(owner, alock("hostR", &fh, 3, 0, 10)), NLM4_GRANTED);
	snprintf(path, sizeof(path), "%s/export/private", T);
	assert_int_equal(chmod(path, 0), 0);
	assert_int_equal(do_lock(owner, alock("hostR", &fh, 4, 0, 10), 0, 0, 0), NLM4_GRANTED);
	assert_int_equal(do_unlock(owner, alock("hostR", &fh, 4, 0, 10)), NLM4_GRANTED);
	/* "other" may read: anyone may lock, a write lock too */
	assert_int_equal(chmod(path, 0604), 0);
	assert_int_equal(do_lock(other, alock("hostR", &fh, 5, 0, 10), 1, 0, 0), NLM4_GRANTED);
	assert_int_equal(do_lock(anon, alock("hostR", &fh, 6, 20, 10), 0, 0, 0), NLM4_GRANTED);
	do_free_all(owner, "hostR");
	/* a share taken while it may read is given back after it may not (the
	 * UNSHARE checks no right): the owner may then write */
	assert_int_equal(share(other, NLM4_SHARE, &fh, "hostS", NLM4_FSM_DW, NLM4_FSA_R),
			 NLM4_GRANTED);
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(share(other, NLM4_UNSHARE, &fh, "hostS", NLM4_FSM_DW, NLM4_FSA_R),
			 NLM4_GRANTED);
	assert_int_equal(share(owner, NLM4_SHARE, &fh, "hostT", NLM4_FSM_DN, NLM4_FSA_W),
			 NLM4_GRANTED);
	do_free_all(owner, "hostT");
	/* export2 says auth_nlm = false */
	private_file("export2", "open", 0600, &open_fh);
	assert_int_equal(do_lock(other, alock("hostR", &open_fh, 7, 0, 10), 1, 0, 0), NLM4_GRANTED);
	assert_int_equal(do_lock(anon, alock("hostR", &open_fh, 8, 20, 10), 1, 0, 0), NLM4_GRANTED);
	do_free_all(owner, "hostR");
	free(fh.data.data_val);
	free(open_fh.data.data_val);
	done_with(owner);
	done_with(other);
	done_with(anon);
}

/* On an export that requires integrity every lock call naming one of its
 * files must carry a valid MIC, as its NFS calls must: unsigned ones are
 * refused (FAILED), those that would release a signed caller's lock too. */
void lock_needs_integrity(void **state)
{
	nfs_fh3 fh;

	(void)state;
	file_handle_signed("signed", "f", &fh);
	assert_int_equal(do_lock(tcp, alock("hostI", &fh, 1, 0, 10), 1, 0, 0), NLM4_FAILED);
	assert_int_equal(do_test(tcp, alock("hostI", &fh, 1, 0, 10), 1, NULL), NLM4_FAILED);
	assert_int_equal(share(tcp, NLM4_SHARE, &fh, "hostI", NLM4_FSM_DN, NLM4_FSA_R),
			 NLM4_FAILED);
	/* signed: granted, and held against another host */
	assert_int_equal(do_lock(SIGNED, alock("hostI", &fh, 1, 0, 10), 1, 0, 0), NLM4_GRANTED);
	assert_int_equal(do_test(SIGNED, alock("hostJ", &fh, 2, 0, 10), 1, NULL), NLM4_DENIED);
	/* unsigned calls of the owner that now exists: refused, the lock stays */
	assert_int_equal(do_unlock(tcp, alock("hostI", &fh, 1, 0, 10)), NLM4_FAILED);
	assert_int_equal(do_cancel(tcp, alock("hostI", &fh, 1, 0, 10), 1), NLM4_FAILED);
	assert_int_equal(do_lock(tcp, alock("hostI", &fh, 1, 20, 10), 1, 0, 0), NLM4_FAILED);
	assert_int_equal(do_test(tcp, alock("hostI", &fh, 1, 0, 10), 1, NULL), NLM4_FAILED);
	assert_int_equal(do_test(SIGNED, alock("hostJ", &fh, 2, 0, 10), 1, NULL), NLM4_DENIED);
	assert_int_equal(do_test(SIGNED, alock("hostJ", &fh, 2, 20, 10), 1, NULL), NLM4_GRANTED);
	/* signed: released */
	assert_int_equal(do_unlock(SIGNED, alock("hostI", &fh, 1, 0, 10)), NLM4_GRANTED);
	assert_int_equal(do_test(SIGNED, alock("hostJ", &fh, 2, 0, 10), 1, NULL), NLM4_GRANTED);
	assert_int_equal(share(SIGNED, NLM4_SHARE, &fh, "hostI", NLM4_FSM_DN, NLM4_FSA_R),
			 NLM4_GRANTED);
	assert_int_equal(share(tcp, NLM4_UNSHARE, &fh, "hostI", NLM4_FSM_DN, NLM4_FSA_R),
			 NLM4_FAILED);
	assert_int_equal(share(SIGNED, NLM4_UNSHARE, &fh, "hostI", NLM4_FSM_DN, NLM4_FSA_R),
			 NLM4_GRANTED);
	do_free_all(SIGNED, "hostI");
	free(fh.data.data_val);
}

/* A blocked request that was signed is granted (GRANTED_MSG) and its
 * GRANTED_RES must be signed too: an unsigned "no" from the client's own
 * address (anyone who saw the cookie) does not give the lock back. */
void granted_res_needs_integrity(void **state)
{
	uint32_t lock_res = NLM4_LOCK_RES;
	int32_t svid = 3;
	nlm4_lockargs la = {.cookie = COOKIE, .exclusive = 1, .block = 1};
	nlm4_res gr = {.stat = NLM4_DENIED};
	nlm4_stats st;
	struct event e;
	int ignored;
	nfs_fh3 fh;

	(void)state;
	file_handle_signed("signed", "g", &fh);
	assert_int_equal(do_lock(SIGNED, alock("hostI", &fh, 1, 0, 10), 1, 0, 0), NLM4_GRANTED);
	la.alock = alock("hostK", &fh, svid, 0, 10);
	assert_int_equal(nlm_call(SIGNED, NLM4_LOCK_MSG, (xdrproc_t)xdr_nlm4_lockargs, &la,
				  (xdrproc_t)xdr_void, NULL),
			 RPC_SUCCESS);
	assert_true(wait_event(match_res_proc, &lock_res, 5000, &e));
	assert_int_equal(e.stat, NLM4_BLOCKED);
	assert_int_equal(do_unlock(SIGNED, alock("hostI", &fh, 1, 0, 10)), NLM4_GRANTED);
	assert_true(wait_event(match_granted_svid, &svid, 5000, &e));
	assert_int_equal(e.kind, EV_GRANTED_MSG);
	gr.cookie = (nlm4_netobj){e.cookie_len, e.cookie};
	ignored = server_log_count("came unsigned: ignored");
	assert_int_equal(nlm_call(udp, NLM4_GRANTED_RES, (xdrproc_t)xdr_nlm4_res, &gr,
				  (xdrproc_t)xdr_void, NULL),
			 RPC_SUCCESS);
	assert_int_equal(server_log_count("came unsigned: ignored"), ignored + 1);
	assert_int_equal(do_test(SIGNED, alock("hostJ", &fh, 2, 0, 10), 1, NULL), NLM4_DENIED);
	/* signed, it is heard: the lock goes back (the server's next turn) */
	assert_int_equal(nlm_call(SIGNED, NLM4_GRANTED_RES, (xdrproc_t)xdr_nlm4_res, &gr,
				  (xdrproc_t)xdr_void, NULL),
			 RPC_SUCCESS);
	for (int i = 0; i < 250 && (st = do_test(SIGNED, alock("hostJ", &fh, 2, 0, 10), 1, NULL)) !=
					   NLM4_GRANTED;
	     i++)
		usleep(20000);
	assert_int_equal(st, NLM4_GRANTED);
	do_free_all(SIGNED, "hostK");
	do_free_all(SIGNED, "hostI");
	free(fh.data.data_val);
}
