/*
 * nlm_test.h: what the parts of t/system/nlm_test share: the server under
 * test and the clients' calls to it (nlm_test.c), the events the test's own
 * services record (nlm_test_cb.c), and the cases, one file per topic
 * (nlm_test_locks.c, nlm_test_hosts.c).
 */
#ifndef NFSRDMA_T_NLM_TEST_H
#define NFSRDMA_T_NLM_TEST_H

#include <stdint.h>
#include <rpc/rpc.h>

#include "common/nfs/nfs3_prot.h"
#include "common/nfs/nlm_prot.h"

#define SERVER_NAME "nlmtest-server"
#define GRACE_S	    4

/* nlm_test.c: the server, started at started_ms (now_ms) on tcp_port with its
 * files in the scratch directory T, and the clients of it the cases share. */
extern char T[256];
extern unsigned short tcp_port;
extern uint64_t started_ms;
extern CLIENT *tcp, *udp;
extern struct timeval tmo; /* for every call */

void start_server(unsigned grace_s);
/* Stop it; it must exit 0 (nothing leaked, no sanitizer report). */
void stop_server(void);
/* A TCP or UDP client of prog on the server. */
CLIENT *client(int proto, uint32_t prog, uint32_t vers);
/* Where a client goes, SIGNED: NLM calls signed with the server's integrity
 * key (AUTH_NFSRDMA_HMAC, uid 0), each on a connection of its own. */
#define SIGNED ((CLIENT *)NULL)
/* A call of proc of c's program (NLM v4 for SIGNED), its result in *r (for
 * xdr_free): RPC_SUCCESS or the failure. */
enum clnt_stat nlm_call(CLIENT *c, uint32_t proc, xdrproc_t xa, void *a, xdrproc_t xr, void *r);
/* The handle of file name in the export, made if missing. */
void file_handle(const char *name, nfs_fh3 *out);
/* The handle of file name in export dir "export" or "export2", made if missing. */
void file_handle_in(const char *export, const char *name, nfs_fh3 *out);
/* The same in "signed", the export that requires integrity, asked for signed. */
void file_handle_signed(const char *export, const char *name, nfs_fh3 *out);
/* A lock of host's owner svid on fh. */
nlm4_lock alock(const char *host, const nfs_fh3 *fh, int32_t svid, uint64_t off, uint64_t len);
/* The cookie every call carries. */
extern char cookie_bytes[sizeof("cookie")];
#define COOKIE                                                                                     \
	{                                                                                          \
		sizeof(cookie_bytes) - 1, cookie_bytes                                             \
	}
/* LOCK, UNLOCK, CANCEL, TEST (a holder goes to *h) and FREE_ALL calls (of c or SIGNED). */
nlm4_stats do_lock(CLIENT *c, nlm4_lock l, int exclusive, int block, int reclaim);
nlm4_stats do_unlock(CLIENT *c, nlm4_lock l);
nlm4_stats do_cancel(CLIENT *c, nlm4_lock l, int exclusive);
nlm4_stats do_test(CLIENT *c, nlm4_lock l, int exclusive, nlm4_holder *h);
void do_free_all(CLIENT *c, const char *host);
/* SHARE or UNSHARE (proc) of host's share (mode, access) of a (its handle and
 * owner set); its answer. */
nlm4_stats do_share(CLIENT *c, uint32_t proc, nlm4_shareargs *a, const char *host, int mode,
		    int access);
/* How many lines of the server's log hold text so far (a line is written
 * before the call that made it is answered). */
int server_log_count(const char *text);
/* Whether the server's status monitor has host recorded (its file in the
 * state directory): it will be told of the server's restart. */
int monitored(const char *host);

/* nlm_test_cb.c: what the server called back, recorded by the test's
 * rpcbind, NLM and NSM services (on pmap_port, which the server is told). */
enum ev_kind { EV_GRANTED, EV_GRANTED_MSG, EV_RES, EV_NOTIFY };

struct event {
	enum ev_kind kind;
	uint32_t proc;
	int stat;
	int32_t svid;
	uint64_t off, len;
	char cookie[64];
	u_int cookie_len;
	char name[64];
	int32_t state;
};

typedef int (*ev_match)(const struct event *e, const void *arg);

extern unsigned short pmap_port;
uint64_t now_ms(void);
/* Wait at most ms for an event that match accepts; take it out. */
int wait_event(ev_match match, const void *arg, int ms, struct event *out);
/* Matches: a GRANTED(_MSG) for svid, a _RES call of proc, an SM_NOTIFY. */
int match_granted_svid(const struct event *e, const void *arg);
int match_res_proc(const struct event *e, const void *arg);
int match_notify(const struct event *e, const void *arg);
/* Start the services, on a thread of their own. */
void start_services(void);

/* The cases, in nlm_test_locks.c ... */
void conflicts_between_hosts(void **state);
void merge_and_split(void **state);
void last_bytes(void **state);
void local_process_conflicts(void **state);
void blocked_granted_and_cancelled(void **state);
void unlock_cancels_waits(void **state);
void free_all(void **state);
void free_all_exports(void **state);
void per_client_limits(void **state);
void shares(void **state);
/* ... nlm_test_rights.c ... */
void lock_needs_right(void **state);
void lock_needs_integrity(void **state);
void granted_res_needs_integrity(void **state);
/* ... and nlm_test_hosts.c. */
void msg_forms(void **state);
void bad_input(void **state);
void forged_from_elsewhere(void **state);
void silent_client_delays_no_one(void **state);
void restart_notifies_and_grace(void **state);
void client_reboot_drops_locks(void **state);

#endif
