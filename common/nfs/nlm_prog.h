/* nlm_prog.h: the program, version and procedure numbers of NLM v4 and NSM
 * v1, which the server (and later the client) share. */
#ifndef NFSRDMA_NLM_PROG_H
#define NFSRDMA_NLM_PROG_H

#define NLM_PROGRAM 100021
#define NLM_V4	    4
#define NSM_PROGRAM 100024
#define NSM_V1	    1

/* NLM v4 procedures (16..19 are unused in version 4). */
enum nlm4_proc {
	NLM4_NULL = 0,
	NLM4_TEST = 1,
	NLM4_LOCK = 2,
	NLM4_CANCEL = 3,
	NLM4_UNLOCK = 4,
	NLM4_GRANTED_PROC = 5,
	NLM4_TEST_MSG = 6,
	NLM4_LOCK_MSG = 7,
	NLM4_CANCEL_MSG = 8,
	NLM4_UNLOCK_MSG = 9,
	NLM4_GRANTED_MSG = 10,
	NLM4_TEST_RES = 11,
	NLM4_LOCK_RES = 12,
	NLM4_CANCEL_RES = 13,
	NLM4_UNLOCK_RES = 14,
	NLM4_GRANTED_RES = 15,
	NLM4_SHARE = 20,
	NLM4_UNSHARE = 21,
	NLM4_NM_LOCK = 22,
	NLM4_FREE_ALL = 23,
	NLM4_NPROCS = 24
};

/* NSM v1 procedures. */
enum nsm_proc {
	NSM_NULL = 0,
	NSM_STAT = 1,
	NSM_MON = 2,
	NSM_UNMON = 3,
	NSM_UNMON_ALL = 4,
	NSM_SIMU_CRASH = 5,
	NSM_NOTIFY = 6,
	NSM_NPROCS = 7
};

#endif
