/*
 * osdep_lock.c: open-file-description locks (F_OFD_SETLK: Linux 3.15, illumos 2015)
 * for common/base/osdep_lock.h. They conflict with classic POSIX locks and
 * with other descriptions' locks, and a description's own ranges merge and
 * split as a process's POSIX locks do.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "common/base/osdep_lock.h"

static short to_type(enum osdep_lock_type t)
{
	return t == OSDEP_LOCK_WRITE ? F_WRLCK : t == OSDEP_LOCK_READ ? F_RDLCK : F_UNLCK;
}

static void to_flock(const struct osdep_lock *l, struct flock *fl)
{
	memset(fl, 0, sizeof(*fl));
	fl->l_type = to_type(l->type);
	fl->l_whence = SEEK_SET;
	fl->l_start = l->start;
	fl->l_len = l->len;
	fl->l_pid = 0; /* OFD locks require it */
}

/* See osdep_lock.h. */
int osdep_lock_set(int fd, const struct osdep_lock *l)
{
	struct flock fl;

	to_flock(l, &fl);
	if (fcntl(fd, F_OFD_SETLK, &fl) == 0)
		return 0;
	return errno == EACCES ? -EAGAIN : -errno;
}

/* See osdep_lock.h. */
int osdep_lock_test(int fd, struct osdep_lock *l)
{
	struct flock fl;

	to_flock(l, &fl);
	if (fcntl(fd, F_OFD_GETLK, &fl) < 0)
		return -errno;
	l->type = fl.l_type == F_WRLCK	 ? OSDEP_LOCK_WRITE
		  : fl.l_type == F_RDLCK ? OSDEP_LOCK_READ
					 : OSDEP_LOCK_UNLOCK;
	l->start = fl.l_start;
	l->len = fl.l_len;
	l->pid = fl.l_pid;
	return 0;
}
