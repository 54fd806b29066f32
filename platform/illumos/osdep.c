/*
 * osdep.c (illumos): the backend's per-OS hooks (common/base/osdep.h).
 *
 * Compiled and link-checked against illumos's headers and libraries
 * (scripts/check-illumos.sh), never run: written from the illumos man pages,
 * as the starting point of a port. Where illumos has no
 * equivalent the hook returns -ENOTSUP rather than pretending:
 *  - persistent file handles: illumos has no name_to_handle_at or
 *    open_by_handle_at for user space (the kernel NFS server uses VOP_FID),
 *    so osdep_fh_get/osdep_fh_open return -ENOTSUP, and exports use the
 *    portable handles of server/fh_index.c (server.handles = "auto");
 *    osdep_fh_stamp gives none yet (see there what that costs).
 *  - per-thread credentials: illumos threads share one credential and has no
 *    setfsuid; osdep_cred_native says no, and exports check permissions in
 *    user space as root (server.identity = "auto": server/backend_ident.c,
 *    with the ACLs of osdep_acl.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "common/base/osdep.h"

/* See osdep.h: no user-space file handles on illumos. */
int osdep_fh_get(int dirfd, const char *name, struct osdep_fh *fh)
{
	return -ENOTSUP;
}

/* See osdep.h: no user-space file handles on illumos. */
int osdep_fh_open(int mount_fd, const struct osdep_fh *fh, enum osdep_open_mode mode)
{
	return -ENOTSUP;
}

/* See osdep.h. ZFS records a creation time (getattrat(3C), A_CRTIME), but
 * only through libnvpair; until that is written, none: handles of objects
 * renamed or re-created outside the server are stale (server/fh_index.c). */
int osdep_fh_stamp(int dirfd, const char *name, uint64_t *stamp)
{
	(void)dirfd, (void)name, (void)stamp;
	return -ENOTSUP;
}

/* See osdep.h: no per-thread identities. */
int osdep_cred_native(void)
{
	return 0;
}

/* See osdep.h: no per-thread identities. */
int osdep_cred_available(void)
{
	return 0;
}

/* See osdep.h. */
int osdep_cred_set(uid_t uid, gid_t gid, size_t ngids, const gid_t *gids)
{
	return -ENOTSUP;
}

/* See osdep.h: nothing was switched, nothing to restore. */
int osdep_cred_restore(void)
{
	return 0;
}

/* See osdep.h: threads never change credentials here. */
unsigned long osdep_cred_epoch(void)
{
	return 0;
}

/* See osdep.h. faccessat(AT_EACCESS) checks the effective ids, which are the
 * server's own here (see the top of the file). */
int osdep_access(int fd, int mode)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return faccessat(AT_FDCWD, path, mode, AT_EACCESS) < 0 ? -errno : 0;
}

/* See osdep.h. */
int osdep_datasync(int fd)
{
	return fdatasync(fd) < 0 ? -errno : 0;
}

/* See osdep.h. No way to ask for cached data only: always to a worker. */
ssize_t osdep_pread_nowait(int fd, void *buf, size_t len, off_t off, int *how)
{
	(void)fd, (void)buf, (void)len, (void)off, (void)how;
	return -EAGAIN;
}

/* See osdep.h: neither ever does. */
int osdep_nowait_never(int how)
{
	(void)how;
	return 1;
}

/* See osdep.h: no write runs on a loop here. */
int osdep_write_as_anyone(int fd, int *known)
{
	(void)fd, (void)known;
	return 0;
}

/* See osdep.h. The same for writes. */
ssize_t osdep_pwrite_nowait(int fd, const void *buf, size_t len, off_t off, int *how)
{
	(void)fd, (void)buf, (void)len, (void)off, (void)how;
	return -EAGAIN;
}

/* See osdep.h. */
int osdep_fsstat(int fd, struct osdep_fsstat *st)
{
	struct statvfs v;
	long link_max;

	if (fstatvfs(fd, &v) < 0)
		return -errno;
	st->tbytes = (uint64_t)v.f_blocks * v.f_frsize;
	st->fbytes = (uint64_t)v.f_bfree * v.f_frsize;
	st->abytes = (uint64_t)v.f_bavail * v.f_frsize;
	st->tfiles = v.f_files;
	st->ffiles = v.f_ffree;
	st->afiles = v.f_favail;
	st->name_max = v.f_namemax > 0 ? (uint32_t)v.f_namemax : 255;
	link_max = fpathconf(fd, _PC_LINK_MAX);
	st->link_max = link_max > 0 ? (uint32_t)link_max : 1;
	return 0;
}

/* See osdep.h. */
int osdep_chmod_fd(int fd, mode_t mode)
{
	return fchmod(fd, mode) < 0 ? -errno : 0;
}

/* See osdep.h. */
int osdep_chown_fd(int fd, uid_t uid, gid_t gid)
{
	return fchown(fd, uid, gid) < 0 ? -errno : 0;
}

/* See osdep.h. */
int osdep_utimens_fd(int fd, const struct timespec times[2])
{
	return futimens(fd, times) < 0 ? -errno : 0;
}

/* See osdep.h: illumos cannot read a symlink through an fd (no O_PATH). */
ssize_t osdep_readlink_fd(int fd, char *buf, size_t len)
{
	return -ENOTSUP;
}

/* See osdep.h: without O_PATH a symlink or device cannot be opened safely,
 * so only what opens read-only without side effects is allowed. */
int osdep_open_path(int dirfd, const char *name)
{
	struct stat st;
	int fd;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return -ENOTSUP;
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* See osdep.h: illumos has no flink; refuse honestly. */
int osdep_link_fd(int fd, int dirfd, const char *name)
{
	return -ENOTSUP;
}

/* See osdep.h. libc's malloc keeps freed blocks in its own free lists and does
 * not map large ones apart: nothing to set. */
void osdep_malloc_keep(size_t largest)
{
	(void)largest;
}

/* See osdep.h: illumos counts its run queues only once a second (the
 * sysinfo kstat), too late to decide a spin by. */
int osdep_runnable(void)
{
	return -ENOTSUP;
}
