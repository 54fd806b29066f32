/*
 * osdep.c (Linux): the backend's per-OS hooks (common/base/osdep.h).
 * Handles are name_to_handle_at/open_by_handle_at handles, which survive a
 * server restart. Credentials are per thread: setfsuid/setfsgid and the raw
 * setgroups system call (glibc's setgroups() changes every thread). The kernel
 * drops the file capabilities (CAP_DAC_READ_SEARCH among them, which
 * open_by_handle_at needs) while the fsuid is not 0, so handles are opened
 * before a caller's identity is taken on.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <linux/quota.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <sys/syscall.h>

#include "common/base/osdep.h"

/* Bytes of the kernel handle after the 4-byte handle type we store first. */
#define LINUX_FH_BYTES (OSDEP_FH_MAX - 4)

union linux_fh {
	struct file_handle fh;
	char space[sizeof(struct file_handle) + MAX_HANDLE_SZ];
};

/* The server's own identity, restored after each request (read once): its
 * groups, uid and gid, which never change while it runs. */
static pthread_once_t server_ident_once = PTHREAD_ONCE_INIT;
static gid_t server_groups[NGROUPS_MAX > 256 ? 256 : NGROUPS_MAX];
static int server_ngroups;
static uid_t server_uid;
static gid_t server_gid;

/* The "/proc/self/fd/N" path that reaches what fd refers to. */
static void fd_path(int fd, char *buf, size_t len)
{
	snprintf(buf, len, "/proc/self/fd/%d", fd);
}

/* See osdep.h. */
int osdep_fh_get(int dirfd, const char *name, struct osdep_fh *fh)
{
	union linux_fh h;
	int mount_id;
	uint32_t type;

	h.fh.handle_bytes = LINUX_FH_BYTES;
	if (name_to_handle_at(dirfd, name, &h.fh, &mount_id, name[0] ? 0 : AT_EMPTY_PATH) < 0)
		return -errno;
	type = (uint32_t)h.fh.handle_type;
	fh->data[0] = (unsigned char)(type >> 24);
	fh->data[1] = (unsigned char)(type >> 16);
	fh->data[2] = (unsigned char)(type >> 8);
	fh->data[3] = (unsigned char)type;
	memcpy(fh->data + 4, h.fh.f_handle, h.fh.handle_bytes);
	fh->len = 4 + h.fh.handle_bytes;
	return 0;
}

/* See osdep.h. */
int osdep_fh_open(int mount_fd, const struct osdep_fh *fh, enum osdep_open_mode mode)
{
	static const int flags[] = {
		[OSDEP_OPEN_PATH] = O_PATH,
		[OSDEP_OPEN_READ] = O_RDONLY | O_NOCTTY | O_NONBLOCK,
		[OSDEP_OPEN_RDWR] = O_RDWR | O_NOCTTY | O_NONBLOCK,
	};
	union linux_fh h;
	int fd;

	if (fh->len <= 4 || fh->len > OSDEP_FH_MAX || (unsigned)mode > OSDEP_OPEN_RDWR)
		return -EINVAL;
	h.fh.handle_type = (int)((uint32_t)fh->data[0] << 24 | (uint32_t)fh->data[1] << 16 |
				 (uint32_t)fh->data[2] << 8 | fh->data[3]);
	h.fh.handle_bytes = fh->len - 4;
	memcpy(h.fh.f_handle, fh->data + 4, h.fh.handle_bytes);
	fd = open_by_handle_at(mount_fd, &h.fh, flags[mode] | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	if (errno == ENOENT || errno == ESTALE)
		return -ESTALE;
	return -errno;
}

/* See osdep.h: statx's birth time (ext4, XFS, Btrfs, tmpfs and others). */
int osdep_fh_stamp(int dirfd, const char *name, uint64_t *stamp)
{
	struct statx stx;

	if (statx(dirfd, name, AT_SYMLINK_NOFOLLOW | (name[0] ? 0 : AT_EMPTY_PATH), STATX_BTIME,
		  &stx) < 0)
		return -errno;
	if (!(stx.stx_mask & STATX_BTIME))
		return -ENOTSUP;
	*stamp = (uint64_t)stx.stx_btime.tv_sec * 1000000000u + stx.stx_btime.tv_nsec;
	*stamp |= *stamp == 0; /* 0 means "none" in a handle */
	return 0;
}

/* See osdep.h: setfsuid/setfsgid and setgroups act on one thread. */
int osdep_cred_native(void)
{
	return 1;
}

/* See osdep.h. */
int osdep_cred_available(void)
{
	return geteuid() == 0;
}

/* Remember the server's own identity. */
static void server_ident_read(void)
{
	int n = getgroups((int)(sizeof(server_groups) / sizeof(server_groups[0])), server_groups);

	server_ngroups = n < 0 ? 0 : n;
	server_uid = geteuid();
	server_gid = getegid();
}

/* This thread's capabilities as the server, read (raw capget acts on the
 * calling thread only) at its first switch, while it is still the server (the
 * workers are started by the server's own thread): a switch to a non-root
 * caller lowers CAP_SYS_RESOURCE and the file capabilities from them and the
 * restore sets them back, one capset each way. A caller must not write past
 * quotas or into the reserved blocks, which is what knfsd drops
 * CAP_SYS_RESOURCE for too. The kernel drops the file capabilities itself when
 * the fsuid leaves 0 (and raises them when it returns), but not when it goes
 * from one caller's to another's, so they are lowered here too. */
static __thread struct {
	int known;
	int lowered; /* the set for a non-root caller is in force */
	/* [0] the server's own, [1] the same without CAP_SYS_RESOURCE and the
	 * file capabilities (the kernel's CAP_FS_SET), both made at the read */
	struct __user_cap_data_struct set[2][2];
} own_caps;

static void cap_lower(struct __user_cap_data_struct data[2], int cap)
{
	data[cap / 32].effective &= ~(1u << (cap % 32));
}

static int own_caps_read(void)
{
	static const int lowered[] = {CAP_SYS_RESOURCE,	   CAP_CHOWN,	     CAP_DAC_OVERRIDE,
				      CAP_DAC_READ_SEARCH, CAP_FOWNER,	     CAP_FSETID,
				      CAP_LINUX_IMMUTABLE, CAP_MAC_OVERRIDE, CAP_MKNOD};
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};

	if (own_caps.known)
		return 0;
	if (syscall(SYS_capget, &hdr, own_caps.set[0]) < 0)
		return -errno;
	memcpy(own_caps.set[1], own_caps.set[0], sizeof(own_caps.set[1]));
	for (size_t i = 0; i < sizeof(lowered) / sizeof(lowered[0]); i++)
		cap_lower(own_caps.set[1], lowered[i]);
	own_caps.known = 1;
	return 0;
}

/* Put in force this thread's capabilities for a non-root caller (lower) or
 * its own as the server, if they are not already. */
static int own_caps_set(int lower)
{
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};

	if (!own_caps.known || own_caps.lowered == lower)
		return 0;
	if (syscall(SYS_capset, &hdr, own_caps.set[lower]) < 0)
		return -errno;
	own_caps.lowered = lower;
	return 0;
}

/* Credential epochs (see osdep.h): each change installs new credentials. */
static unsigned long cred_epochs;
static __thread unsigned long thread_cred_epoch;

static void cred_changed(void)
{
	thread_cred_epoch = __atomic_add_fetch(&cred_epochs, 1, __ATOMIC_RELAXED);
}

/* See osdep.h. */
unsigned long osdep_cred_epoch(void)
{
	return thread_cred_epoch;
}

/* See osdep.h. Groups first, then gid, then uid; each is checked. */
int osdep_cred_set(uid_t uid, gid_t gid, size_t ngids, const gid_t *gids)
{
	int r;

	pthread_once(&server_ident_once, server_ident_read);
	if ((r = own_caps_read()) < 0)
		return r;
	cred_changed();
	if (syscall(SYS_setgroups, ngids, gids) < 0)
		return -errno;
	setfsgid(gid);
	if ((gid_t)setfsgid((gid_t)-1) != gid)
		return -EPERM;
	if ((r = own_caps_set(uid != 0)) < 0)
		return r;
	setfsuid(uid);
	if ((uid_t)setfsuid((uid_t)-1) != uid)
		return -EPERM;
	return 0;
}

/* See osdep.h. */
int osdep_cred_restore(void)
{
	pthread_once(&server_ident_once, server_ident_read);
	cred_changed();
	setfsuid(server_uid);
	setfsgid(server_gid);
	if (syscall(SYS_setgroups, (size_t)server_ngroups, server_groups) < 0)
		return -errno;
	if (own_caps_set(0) < 0)
		return -EPERM;
	if ((uid_t)setfsuid((uid_t)-1) != server_uid || (gid_t)setfsgid((gid_t)-1) != server_gid)
		return -EPERM;
	return 0;
}

/* See osdep.h. faccessat2 with AT_EACCESS checks as the fsuid/fsgid. */
int osdep_access(int fd, int mode)
{
	return faccessat(fd, "", mode, AT_EACCESS | AT_EMPTY_PATH) < 0 ? -errno : 0;
}

/* See osdep.h. */
int osdep_datasync(int fd)
{
	return fdatasync(fd) < 0 ? -errno : 0;
}

/* Whether fd's file system keeps all data in memory (tmpfs, ramfs): a read
 * there never waits for storage, though the kernel may refuse RWF_NOWAIT. */
static int in_memory_fs(int fd)
{
	struct statfs s;

	return fstatfs(fd, &s) == 0 && (s.f_type == TMPFS_MAGIC || s.f_type == RAMFS_MAGIC);
}

/* Whether fd's file system may count quotas: a write by the server, whose
 * CAP_SYS_RESOURCE passes their limits, is then not a user's. ENOSYS: the
 * file system has no quota operations (tmpfs without its quota options,
 * ramfs), or the kernel has no quotactl_fd (5.14) and so no tmpfs quotas
 * (6.6), or a seccomp filter denies it so (then quotas could go unseen);
 * ESRCH: that kind is off; anything else counts as on. */
static int quotas_on(int fd)
{
	static const int types[] = {USRQUOTA, GRPQUOTA, PRJQUOTA};
	uint32_t fmt;

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		/* QCMD's int shift overflows for Q_GETFMT */
		unsigned cmd =
			(unsigned)Q_GETFMT << SUBCMDSHIFT | ((unsigned)types[i] & SUBCMDMASK);

		if (syscall(SYS_quotactl_fd, fd, cmd, 0, &fmt) == 0)
			return 1;
		if (errno == ENOSYS)
			return 0;
		if (errno != ESRCH)
			return 1;
	}
	return 0;
}

/* osdep_pread_nowait's and osdep_pwrite_nowait's *how: what fd's file system does */
enum { NOWAIT_UNKNOWN, NOWAIT_FLAG, NOWAIT_IN_MEMORY, NOWAIT_NONE };

/* pread or pwrite (write) with RWF_NOWAIT: what the page cache holds, or room
 * there; a file system that refuses the flag but keeps everything in memory
 * is read or written plainly, and one that refuses it otherwise always goes
 * to a worker. */
static ssize_t rw_nowait(int fd, void *buf, size_t len, off_t off, int *how, int write)
{
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	int h = __atomic_load_n(how, __ATOMIC_RELAXED);
	ssize_t n;

	if (h == NOWAIT_NONE)
		return -EAGAIN;
	do
		if (h == NOWAIT_IN_MEMORY)
			n = write ? pwrite(fd, buf, len, off) : pread(fd, buf, len, off);
		else
			n = write ? pwritev2(fd, &iov, 1, off, RWF_NOWAIT)
				  : preadv2(fd, &iov, 1, off, RWF_NOWAIT);
	while (n < 0 && errno == EINTR);
	if (h == NOWAIT_UNKNOWN && (n >= 0 || errno != EOPNOTSUPP)) {
		__atomic_store_n(how, NOWAIT_FLAG, __ATOMIC_RELAXED);
	} else if (n < 0 && errno == EOPNOTSUPP) {
		h = in_memory_fs(fd) ? NOWAIT_IN_MEMORY : NOWAIT_NONE;
		__atomic_store_n(how, h, __ATOMIC_RELAXED);
		return h == NOWAIT_IN_MEMORY ? rw_nowait(fd, buf, len, off, how, write) : -EAGAIN;
	}
	return n < 0 ? -errno : n;
}

/* See osdep.h. */
ssize_t osdep_pread_nowait(int fd, void *buf, size_t len, off_t off, int *how)
{
	return rw_nowait(fd, buf, len, off, how, 0);
}

/* See osdep.h. */
int osdep_nowait_never(int how)
{
	return how == NOWAIT_NONE;
}

/* See osdep.h. Linux takes RWF_NOWAIT for buffered writes on some file
 * systems only (XFS; not ext4 as of 6.18). */
ssize_t osdep_pwrite_nowait(int fd, const void *buf, size_t len, off_t off, int *how)
{
	return rw_nowait(fd, (void *)buf, len, off, how, 1);
}

/* See osdep.h. Only tmpfs and ramfs (without quotas) qualify: elsewhere a
 * user's write may be held to reserved blocks (ext4) or quotas that the
 * server's CAP_SYS_RESOURCE passes, and the loop's thread cannot lower it (a
 * new credential would lock it out of the device: osdep_cred_epoch). */
int osdep_write_as_anyone(int fd, int *known)
{
	int k = __atomic_load_n(known, __ATOMIC_RELAXED);

	if (k == 0) {
		k = in_memory_fs(fd) && !quotas_on(fd) ? 1 : 2;
		__atomic_store_n(known, k, __ATOMIC_RELAXED);
	}
	return k == 1;
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
	st->name_max = v.f_namemax > 0 && v.f_namemax < UINT32_MAX ? (uint32_t)v.f_namemax : 255;
	link_max = fpathconf(fd, _PC_LINK_MAX);
	st->link_max = link_max > 0 && link_max < UINT32_MAX ? (uint32_t)link_max : 1;
	return 0;
}

/* See osdep.h. An O_PATH fd refuses fchmod; its /proc path does not. */
int osdep_chmod_fd(int fd, mode_t mode)
{
	char path[64];

	if (fchmod(fd, mode) == 0)
		return 0;
	if (errno != EBADF)
		return -errno;
	fd_path(fd, path, sizeof(path));
	return chmod(path, mode) < 0 ? -errno : 0;
}

/* See osdep.h. */
int osdep_chown_fd(int fd, uid_t uid, gid_t gid)
{
	return fchownat(fd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

/* See osdep.h. */
int osdep_utimens_fd(int fd, const struct timespec times[2])
{
	if (utimensat(fd, "", times, AT_EMPTY_PATH) == 0)
		return 0;
	if (errno != EINVAL)
		return -errno;
	/* Kernels before 5.8 do not take AT_EMPTY_PATH here. */
	return futimens(fd, times) < 0 ? -errno : 0;
}

/* See osdep.h. */
ssize_t osdep_readlink_fd(int fd, char *buf, size_t len)
{
	ssize_t n = readlinkat(fd, "", buf, len);

	if (n < 0)
		return -errno;
	if ((size_t)n >= len)
		return -ENAMETOOLONG;
	return n;
}

/* See osdep.h. */
int osdep_open_path(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* See osdep.h. linkat(AT_EMPTY_PATH) needs CAP_DAC_READ_SEARCH, which a
 * caller's identity lacks; the /proc path does not. */
int osdep_link_fd(int fd, int dirfd, const char *name)
{
	char path[64];

	fd_path(fd, path, sizeof(path));
	return linkat(AT_FDCWD, path, dirfd, name, AT_SYMLINK_FOLLOW) < 0 ? -errno : 0;
}

/* See osdep.h. glibc maps each block from its mmap threshold up (128 KiB at
 * first; it rises to a freed block's size) and unmaps it at free, and gives
 * back the free top of a heap past its trim threshold (twice that): with a few
 * 1 MiB buffers in flight both happen all the time. Fixed thresholds keep the
 * blocks in the arenas; at most OSDEP_MALLOC_KEEP of them are free at an
 * arena's top before it is trimmed. (mmap is capped at 32 MiB by glibc.) */
void osdep_malloc_keep(size_t largest)
{
	size_t block = largest + (64u << 10), cap = 32u << 20;

	if (block > cap)
		block = cap;
	/* refused only for values out of range, which these are not */
	(void)mallopt(M_MMAP_THRESHOLD, (int)block);
	(void)mallopt(M_TRIM_THRESHOLD, (int)(block * OSDEP_MALLOC_KEEP));
}

/* See osdep.h: the fourth field of /proc/loadavg, "running/threads". The file
 * is opened once and read again from its start (its contents are made at each
 * read); -ENOTSUP when it cannot be opened (no /proc). */
static pthread_once_t loadavg_once = PTHREAD_ONCE_INIT;
static int loadavg_fd = -1;

static void loadavg_open(void)
{
	loadavg_fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
}

int osdep_runnable(void)
{
	char buf[128];
	ssize_t n;
	int running;

	pthread_once(&loadavg_once, loadavg_open);
	if (loadavg_fd < 0 || (n = pread(loadavg_fd, buf, sizeof(buf) - 1, 0)) <= 0)
		return -ENOTSUP;
	buf[n] = '\0';
	return sscanf(buf, "%*s %*s %*s %d", &running) == 1 ? running : -ENOTSUP;
}
