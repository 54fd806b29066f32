/*
 * osdep_lock.h: byte-range locks owned by an open file description (not by a
 * process), one implementation per OS in platform/<os>/osdep_lock.c. The lock
 * manager (server/nlm.c) opens one description per lock owner, so that the
 * kernel does the POSIX range arithmetic (merging, splitting, conflicts) and
 * local processes see the same locks. Both Linux (3.15) and illumos (2015)
 * call these F_OFD_SETLK/F_OFD_GETLK.
 */
#ifndef NFSRDMA_OSDEP_LOCK_H
#define NFSRDMA_OSDEP_LOCK_H

#include <stdint.h>

enum osdep_lock_type {
	OSDEP_LOCK_UNLOCK,
	OSDEP_LOCK_READ,
	OSDEP_LOCK_WRITE,
};

/* A range: start, and len bytes (0: to the end of any file). */
struct osdep_lock {
	enum osdep_lock_type type;
	int64_t start;
	int64_t len;
	int32_t pid; /* osdep_lock_test: the holder's process for a process-owned
			lock, -1 for one owned by an open file description */
};

/* Take (or, for UNLOCK, release) the range for the description fd refers to,
 * without waiting: 0, -EAGAIN when another owner holds a conflicting lock,
 * -EBADF when fd is not open for the access the type needs, -ENOLCK. */
int osdep_lock_set(int fd, const struct osdep_lock *l);
/* Whether l would conflict with a lock of another owner: 0 with l->type
 * UNLOCK when not, else the first conflicting lock in *l. */
int osdep_lock_test(int fd, struct osdep_lock *l);

#endif
