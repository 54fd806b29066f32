/*
 * nlm_int.h: what the lock manager's files share: the state (client hosts,
 * lock owners, shares, blocked requests), the range arithmetic that mirrors
 * the kernel's, the callback queue and the status monitor. One mutex
 * (nlm->lock) guards the state; the callback queue has its own (taken after
 * nlm->lock, never before).
 *
 * Storage (opening, testing, locking and closing a lock owner's file) is
 * reached only with the turn of the export the file belongs to (its
 * partition's: nlm_enter, one call at a time per export, server/nlm_turn.c)
 * and never with nlm->lock held, which the storage calls let go of and take
 * again (nlm_owner_apply, nlm_owner_maybe_free): a call held in storage that
 * stops answering (a CephFS whose MDS hangs) then holds no lock that the
 * tick, the figures or the GRANTED answers wait for, nor the turn of another
 * export; the tick's storage work runs on a thread of its own (nlm-tick),
 * never on the nlm event loop. So a partition's owners and blocked requests
 * change only with its turn, which keeps them in place across those storage
 * calls; without it, a thread may change only the grants, the counters, the
 * marks that hand work to the next turn (nlm_host.drop_epoch, nlm.undo),
 * and the shares (never in storage: changed within one hold of nlm->lock).
 * Hosts are shared by every partition and forgotten without a turn, so one
 * that a turn holds across a storage call without holding anything yet is
 * pinned (nlm_host.pins): only unpinned empty hosts are forgotten, and only
 * empty partitions that no thread holds (nlm_part.users).
 */
#ifndef NFSRDMA_NLM_INT_H
#define NFSRDMA_NLM_INT_H

#include <pthread.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <rpc/rpc.h>

#include "common/base/workq.h"
#include "common/nfs/nlm_prog.h"
#include "common/rpc/rpc.h"
#include "common/nfs/nlm_prot.h"
#include "common/nfs/nsm_prot.h"
#include "server/backend_lock.h"
#include "server/call_gate.h"
#include "server/nlm.h"

#define NLM_FH_MAX 64 /* NFSv3 handles */
/* A range's end: to the end of any file, through its last possible byte
 * (INT64_MAX); every other end is at most INT64_MAX, so a range that stops
 * just before that byte is not taken for one to the end. */
#define NLM_TO_EOF   ((uint64_t)INT64_MAX + 1)
#define NLM_TICK_MS  1000 /* blocked requests are retried at least this often */
#define NLM_CB_QUEUE 4096 /* calls back waiting at once, all clients */

/* ---- ranges: one owner's locks, merged and split like POSIX (nlm_range.c) */

struct nlm_range {
	uint64_t start, end; /* [start, end); end NLM_TO_EOF: to the end */
	int exclusive;
};

struct nlm_ranges {
	struct nlm_range *v;
	size_t n;
};

/* What r becomes when [start, end) is locked (type 1 shared, 2 exclusive) or
 * unlocked (type 0), into *out (allocated; the caller frees r->v or out->v). */
int nlm_ranges_apply(const struct nlm_ranges *r, uint64_t start, uint64_t end, int type,
		     struct nlm_ranges *out);
/* Whether r has a range overlapping [start, end) of the given kind; *hit is it. */
int nlm_ranges_find(const struct nlm_ranges *r, uint64_t start, uint64_t end, int exclusive,
		    struct nlm_range *hit);

/* ---- state */

struct nlm_host {
	struct nlm_host *next;
	char *name;		      /* caller_name, the key */
	struct sockaddr_storage addr; /* where its last call came from */
	socklen_t addrlen;
	unsigned nowners, nlocks, nblocked; /* nlocks: ranges and shares */
	int monitored;			    /* recorded in the state directory */
	unsigned pins;			    /* turns that hold it across storage calls */
	uint64_t drop_epoch;		    /* its last FREE_ALL or SM_NOTIFY (nlm.drop_epoch then):
					       each partition drops all it holds at its next turn */
	uint64_t idle_since_ms;		    /* holds nothing since; 0: holds something */
};

/* The lock state of one export's files (its handles' export id), with its
 * own turn (nlm_turn.c). */
struct nlm_part {
	struct nlm_part *next;
	uint32_t id;	       /* the export's id, as in its handles */
	char *name;	       /* its path, for the log */
	struct call_gate turn; /* its calls into storage, one at a time */
	unsigned users;	       /* threads that hold it: not freed meanwhile */
	uint64_t drop_seen;    /* hosts' drops up to this nlm.drop_epoch done */
	unsigned nshares;      /* shares on its files (in nlm.shares) */
	struct nlm_owner *owners;
	struct nlm_block *blocked;
};

/* A lock owner: one open file description of one file. */
struct nlm_owner {
	struct nlm_owner *next;
	struct nlm_part *part; /* its file's export's */
	struct nlm_host *host;
	unsigned char fh[NLM_FH_MAX];
	size_t fhlen;
	char *oh;
	size_t ohlen;
	int32_t svid;
	struct nfs_lock_file lf; /* its own open file: its locks go when it is closed */
	struct nlm_ranges ranges;
	unsigned nblocked; /* blocked requests that will use it */
};

struct nlm_share {
	struct nlm_share *next;
	struct nlm_part *part; /* its file's export's */
	struct nlm_host *host;
	char *oh;
	size_t ohlen;
	dev_t dev;
	ino_t ino;
	int mode, access;
};

/* A blocked LOCK: tried again when a lock on the file goes, and every tick. */
struct nlm_block {
	struct nlm_block *next;
	struct nlm_owner *owner;
	uint64_t start, end;
	int exclusive;
	int via_msg; /* came as LOCK_MSG: granted by GRANTED_MSG */
	/* a LOCK of it carried a MIC: so must the GRANTED_RES */
	int signed_req;
	uint64_t deadline_ms;
};

/* A granted blocked lock whose GRANTED call is under way. */
struct nlm_grant {
	struct nlm_grant *next;
	uint64_t id; /* the cookie of the GRANTED call: random, not guessed */
	struct nlm_owner *owner;
	uint64_t start, end;
	/* where the GRANTED_MSG went: its GRANTED_RES comes from there */
	struct sockaddr_storage addr;
	int signed_req;	      /* the request was signed: so must the GRANTED_RES be */
	uint64_t deadline_ms; /* a GRANTED_RES not heard of by then: forgotten */
};

#define NLM_GRANT_WAIT_MS 60000 /* how long a GRANTED_RES is waited for */

struct nlm_cb;

struct nlm {
	struct nlm_params p;
	char *state_dir;
	char name[256]; /* ours, in SM_NOTIFY */
	struct nfs_backend *be;
	pthread_mutex_t lock;
	struct nlm_host *hosts;
	struct nlm_part *parts;	  /* one per export with lock state */
	struct nlm_share *shares; /* all partitions': a file may be in two exports */
	struct nlm_grant *grants;
	struct nlm_grant *undo; /* granted locks not taken: released at their
				   partition's next turn */
	uint64_t drop_epoch;	/* hosts' drops so far */
	unsigned nhosts;
	unsigned nowners, owners_max; /* all clients' descriptions; at most half
					 the process's descriptor limit */
	uint64_t grace_end_ms;
	int32_t nsm_state; /* odd while we run */
	struct nlm_cb *cb;
	struct workq *tickq; /* nlm-tick: the tick's storage work */
	struct work tick_work;
	int tick_queued;
	/* counters */
	uint64_t granted, denied, blocked_n, nolocks, grace_refused, callbacks_failed, reboots;
};

uint64_t nlm_now_ms(void);

/* Every tick of the nlm thread and when kicked (on its event loop, without
 * nlm->lock): forget unanswered grants; then, on the nlm-tick thread, with
 * each partition's turn (if it comes: else at the next tick), do what waits
 * for one, retry blocked requests, expire them; forget idle hosts and empty
 * partitions (nlm_turn.c). */
void nlm_tick(struct nlm *n);
/* RPC call's turn in the partition of the export that handle fh names: 0 with
 * the turn and nlm->lock held, after what waited for the turn (nlm_turn_lock);
 * -ESTALE when no export has that handle and no lock state is left of one
 * that had; -EACCES when the export requires integrity and call has none;
 * -ENOMEM; -ETIMEDOUT when the turn did not come (another call of the export
 * held it a second, or its storage has stalled). Then nlm_leave. */
int nlm_enter(struct nlm *n, const nlm4_netobj *fh, const struct rpc_req *call, struct nlm_part **p,
	      struct nfs_lock_call *lc);
/* Let go of the turn (nlm->lock let go of first). */
void nlm_leave(struct nlm *n, struct nlm_part *p, struct nfs_lock_call *lc);
/* With p's turn: take nlm->lock, and first do what waits for a turn (drop
 * what hosts marked since p's last turn hold there, give back p's grants in
 * nlm.undo), so that it comes before anything this turn does (a rebooted
 * client's new lock). */
void nlm_turn_lock(struct nlm *n, struct nlm_part *p);
/* Whether a partition other than p has blocked requests on dev/ino (a file
 * in two exports). Under nlm->lock. */
int nlm_blocked_elsewhere(struct nlm *n, const struct nlm_part *p, dev_t dev, ino_t ino);
/* A host rebooted (FREE_ALL, NSM NOTIFY): drop all it holds in p. With p's
 * turn, under nlm->lock. */
void nlm_host_drop(struct nlm *n, struct nlm_part *p, struct nlm_host *h);
/* Free every partition (nlm_destroy, after what they held). */
void nlm_parts_free(struct nlm *n);
/* Mark h to have all it holds dropped at each partition's next turn. Under
 * nlm->lock. */
void nlm_host_mark_drop(struct nlm *n, struct nlm_host *h);
/* The host named name at peer's address (any address: peer NULL), or NULL.
 * Under nlm->lock. */
struct nlm_host *nlm_host_find(struct nlm *n, const char *name, const struct sockaddr *peer);

/* ---- hosts (nlm_host.c), owners and the grace period (nlm.c), for the
 * other files; all but nlm_in_grace and nlm_open_stat under nlm->lock */

/* Whether the grace period is on: only reclaims are granted until it ends. */
int nlm_in_grace(const struct nlm *n);
/* What a failure to open a handle's file means to the client (an nlm4_stats). */
nlm4_stats nlm_open_stat(int rc);
/* The host named name (made if new; NULL past clients_max), its address brought up to date. */
struct nlm_host *nlm_host_get(struct nlm *n, const char *name, const struct sockaddr *peer,
			      socklen_t plen);
/* Note whether h holds anything now: once it has held nothing long enough it is forgotten. */
void nlm_host_touch(struct nlm_host *h);

#define NLM_HOST_IDLE_MS 120000 /* a host holding nothing is forgotten after this */

/* Forget hosts that held nothing for older_ms (0: every empty host), but
 * pinned ones. */
void nlm_hosts_gc(struct nlm *n, uint64_t older_ms);
/* Lock (type 1, 2) or unlock (0) [start, end) for o: 0, -EAGAIN (conflict),
 * -ENOSPC (too many). With the turn, under nlm->lock, let go of meanwhile. */
int nlm_owner_apply(struct nlm *n, struct nlm_owner *o, uint64_t start, uint64_t end, int type);
/* Close o if it holds and waits for nothing (closing drops its locks). With
 * the turn, under nlm->lock, let go of meanwhile. */
void nlm_owner_maybe_free(struct nlm *n, struct nlm_owner *o);

/* ---- blocked requests (nlm_block.c), for the lock operations; under nlm->lock */

/* Queue o's blocked request (or find it queued: a client asks again),
 * asked by call: NLM4_BLOCKED or why not. */
nlm4_stats nlm_block_queue(struct nlm *n, struct nlm_owner *o, uint64_t start, uint64_t end,
			   int exclusive, int via_msg, const struct rpc_req *call);
/* o's blocked request for exactly [start, end) of that kind, or NULL. */
struct nlm_block *nlm_block_find(const struct nlm_owner *o, uint64_t start, uint64_t end,
				 int exclusive);
/* Take b off the queue (the caller frees it; its owner stays open). */
void nlm_block_unlink(struct nlm_block *b);
/* Drop b, and close its owner if that was all it waited for and held. */
void nlm_block_free(struct nlm *n, struct nlm_block *b);
/* Retry p's blocked requests on dev/ino (all: every file): grant those that
 * can go, drop expired; a file with waiters in another export too has the
 * tick kicked for them. With p's turn. */
void nlm_blocked_retry(struct nlm *n, struct nlm_part *p, int all, dev_t dev, ino_t ino);
/* Give back the locks in nlm.undo of p's owners (the clients did not take
 * them), closing owners that held only those. With p's turn, under
 * nlm->lock, let go of meanwhile. */
void nlm_grants_undo(struct nlm *n, struct nlm_part *p);
/* Forget grants whose GRANTED_RES never came: the GRANTED_MSG itself was
 * delivered, so the client has the lock. Under nlm->lock. */
void nlm_grants_expire(struct nlm *n);

/* ---- procedures (nlm_proc.c) */
extern const struct rpc_proc_desc nlm4_rpc_procs[NLM4_NPROCS];
extern const struct rpc_proc_desc nsm_rpc_procs[NSM_NPROCS];

/* The lock operations the procedures run (nlm.c, SHARE nlm_share.c); each
 * returns an nlm4_stats. call is the RPC call asking: its peer; its
 * integrity, which an export that requires it checks on every call
 * (nfs_backend_lock_enter); its credential, which must have a right to a
 * file that a new lock owner opens (nfs_backend_open_locked). */
nlm4_stats nlm_do_test(struct nlm *n, const struct rpc_req *call, const nlm4_testargs *a,
		       nlm4_holder *holder);
nlm4_stats nlm_do_lock(struct nlm *n, const struct rpc_req *call, const nlm4_lockargs *a,
		       int via_msg, int monitor);
nlm4_stats nlm_do_cancel(struct nlm *n, const struct rpc_req *call, const nlm4_cancargs *a);
nlm4_stats nlm_do_unlock(struct nlm *n, const struct rpc_req *call, const nlm4_unlockargs *a);
nlm4_stats nlm_do_share(struct nlm *n, const struct rpc_req *call, const nlm4_shareargs *a,
			int unshare);
void nlm_do_free_all(struct nlm *n, const struct sockaddr *peer, const char *name);
/* The answer to a GRANTED_MSG (GRANTED_RES) with cookie, sent by call
 * (nlm_block.c): heard only from the address the GRANTED_MSG went to, and
 * signed if the blocked request was. */
void nlm_granted_res(struct nlm *n, const struct rpc_req *call, const nlm4_netobj *cookie,
		     nlm4_stats st);

/* ---- calls back to clients (nlm_cb.c): one thread, one queue */

/* When a call is over: ok (1 answered, 0 not; -1 never made: the server
 * stops), and its decoded result (NULL if none or failed). Runs on the nlm
 * thread (or in nlm_cb_stop) without any lock held. */
typedef void (*nlm_cb_done)(struct nlm *n, void *arg, int ok, void *res);

int nlm_cb_start(struct nlm *n);
/* Stop the nlm thread: no tick and no call back from now on (the calls
 * queued stay until nlm_cb_stop). */
void nlm_cb_halt(struct nlm *n);
void nlm_cb_stop(struct nlm *n);
/* Queue a call of prog/vers/proc with args (encoded now with xdr_args) to
 * the client at addr (its port from its rpcbind). xdr_res/res_size: the
 * result to decode for done (NULL: void). 0, or -ENOSPC (queue full: done is
 * not called). */
int nlm_cb_call(struct nlm *n, const struct sockaddr *addr, socklen_t alen, uint32_t prog,
		uint32_t vers, uint32_t proc, xdrproc_t xdr_args, const void *args,
		xdrproc_t xdr_res, size_t res_size, nlm_cb_done done, void *arg);
/* Wake the nlm thread for a tick now (a lock went: blocked requests may go). */
void nlm_cb_kick(struct nlm *n);

/* ---- the status monitor (nsm.c) */

/* Read (or make) the state directory, take the next state number, and queue
 * SM_NOTIFY to every client recorded there. */
int nsm_start(struct nlm *n);
/* Record h as holding locks or waiting for one, so it is notified after our
 * restart (at once if it already is). With the turn, under nlm->lock, let go
 * of meanwhile. */
void nsm_monitor(struct nlm *n, struct nlm_host *h);
/* Forget h (it holds nothing any more). */
void nsm_unmonitor(struct nlm *n, struct nlm_host *h);
/* A client rebooted (SM_NOTIFY to us): drop what it held. */
void nsm_rebooted(struct nlm *n, const char *name, const struct sockaddr *peer, int32_t state);

#endif
