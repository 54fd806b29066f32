/*
 * osdep.h: the per-OS hooks the NFS backend needs, one implementation per OS in
 * platform/<os>/osdep.c (as tmux does). Everything here is plain POSIX types:
 * no OS conditionals, no verbs. Unless said otherwise a hook returns 0 or a
 * negative errno, and leaves errno alone for the caller to ignore.
 */
#ifndef NFSRDMA_OSDEP_H
#define NFSRDMA_OSDEP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "common/base/perm.h"

/* Bytes of platform handle that fit in a 64-byte NFSv3 handle after our header. */
#define OSDEP_FH_MAX 56

/* A platform file handle: opaque bytes that name an object on one file system
 * and stay valid across a restart of the server (not across a re-format). */
struct osdep_fh {
	uint32_t len;
	unsigned char data[OSDEP_FH_MAX];
};

/* How osdep_fh_open opens the object. PATH gives an fd usable for fstat, the
 * *at() calls and the other osdep hooks, on any type of object, with no side
 * effects (devices and FIFOs are not opened); READ/RDWR are for regular files. */
enum osdep_open_mode {
	OSDEP_OPEN_PATH,
	OSDEP_OPEN_READ,
	OSDEP_OPEN_RDWR,
};

/* The handle of dirfd/name (name "" means dirfd itself); a final symlink is not
 * followed. -EOVERFLOW if the handle does not fit OSDEP_FH_MAX. */
int osdep_fh_get(int dirfd, const char *name, struct osdep_fh *fh);
/* Open the object fh names on the file system mount_fd is on. Needs the
 * server's own privileges: call it before osdep_cred_set. Returns an fd, or
 * -ESTALE when the object is gone, -EINVAL when fh is malformed. */
int osdep_fh_open(int mount_fd, const struct osdep_fh *fh, enum osdep_open_mode mode);
/* A number that tells apart two objects that had the same inode number on
 * one file system one after the other (the birth time where the file system
 * records one), for the portable handles of server/fh_index.h; a final
 * symlink is not followed, name "" means dirfd itself. 0 and a nonzero stamp,
 * or -ENOTSUP when the OS or the file system gives none. */
int osdep_fh_stamp(int dirfd, const char *name, uint64_t *stamp);

/* Whether this OS lets a thread take on an identity of its own (the
 * server.identity = "native" way): 1 yes, 0 no. */
int osdep_cred_native(void);
/* Whether this process can take on a caller's identity per thread (the OS
 * can, and it is root): 1 yes, 0 no. */
int osdep_cred_available(void);
/* Switch the calling THREAD (only) to uid/gid/groups for file system access. */
int osdep_cred_set(uid_t uid, gid_t gid, size_t ngids, const gid_t *gids);
/* Back to the server's own identity, for the calling thread. */
int osdep_cred_restore(void);
/* The calling thread's credential epoch: 0 while it has never changed its
 * credentials, else a number that changes at every osdep_cred_set and
 * osdep_cred_restore and is never reused. Linux compares a thread's credentials
 * with those a uverbs or rdma_cm file was opened with, and refuses the write()
 * that posts, arms or connects when they differ (even after a restore); the
 * soft provider applies the same rule through this epoch. */
unsigned long osdep_cred_epoch(void);

/* Check access (R_OK, W_OK, X_OK) to the object fd refers to as the calling
 * thread's current identity, with ACLs, as open() would. */
int osdep_access(int fd, int mode);
/* Whether the access ACL of the object fd refers to (st: its attributes)
 * gives id all of want (PERM_R/W/X), for the user-space checks of
 * server.identity = "userspace": 1 yes, 0 no, -ENODATA when the object or
 * its file system has no such ACL (the mode bits decide), or -errno. */
int osdep_acl_allows(int fd, const struct stat *st, const struct perm_ident *id, unsigned want);
/* Flush a file's data and the metadata needed to read it back. */
int osdep_datasync(int fd);
/* pread that never waits for storage: bytes read (short at the end of the
 * file), -EAGAIN when the data is not at hand (not in the page cache, or the
 * OS cannot tell), or -errno. For calls run on an event loop. *how is what
 * the first call learnt about fd's file system (how it can read without
 * waiting), kept by the caller with the open file: 0 before the first. */
ssize_t osdep_pread_nowait(int fd, void *buf, size_t len, off_t off, int *how);
/* The same for pwrite: bytes written (short when room ran out, or all that
 * could be written without waiting), -EAGAIN when writing would wait for
 * storage or the OS cannot tell, or -errno. A file system that keeps
 * everything in memory is written plainly: that may wait for the file's
 * lock behind another write to it, or for memory. *how is kept as for
 * reads, for a file open to write. */
ssize_t osdep_pwrite_nowait(int fd, const void *buf, size_t len, off_t off, int *how);
/* Whether *how (of the two above) says the file system never reads or
 * writes without waiting: the call is a worker's from the start. */
int osdep_nowait_never(int how);
/* Whether a write to fd by the server itself has just the effect the same
 * write by any user would have, so that a caller who would need an identity
 * switch may write there on an event loop (once allowed to): no quota or
 * reserved blocks that the server's privilege would pass, and a file system
 * that keeps everything in memory. *known is what the first call learnt,
 * kept by the caller with the open file: 0 before the first. 1 yes, 0 no. */
int osdep_write_as_anyone(int fd, int *known);

/* File system figures for FSSTAT/PATHCONF. */
struct osdep_fsstat {
	uint64_t tbytes, fbytes, abytes;
	uint64_t tfiles, ffiles, afiles;
	uint32_t name_max, link_max;
};
int osdep_fsstat(int fd, struct osdep_fsstat *st);

/* Metadata changes on an fd from osdep_fh_open(PATH) or a plain fd; each is
 * checked against the calling thread's identity like its path-based cousin. */
int osdep_chmod_fd(int fd, mode_t mode);
int osdep_chown_fd(int fd, uid_t uid, gid_t gid);
/* times[0] atime, times[1] mtime; tv_nsec may be UTIME_NOW or UTIME_OMIT. */
int osdep_utimens_fd(int fd, const struct timespec times[2]);
/* Read the target of the symlink fd refers to into buf (not terminated);
 * returns its length, or -ENAMETOOLONG if it does not fit. */
ssize_t osdep_readlink_fd(int fd, char *buf, size_t len);
/* Open dirfd/name, not following a final symlink, as osdep_fh_open(PATH)
 * would: for fstat and the hooks above. Returns an fd or a negative errno. */
int osdep_open_path(int dirfd, const char *name);
/* Make a new hard link dirfd/name to the object fd refers to. */
int osdep_link_fd(int fd, int dirfd, const char *name);

/* Have the allocator keep freed blocks of up to largest bytes (I/O buffers:
 * a call's record, a READ's data) for the next ones, up to about
 * OSDEP_MALLOC_KEEP of them per arena, instead of giving each back to the
 * system at its free: a fresh block costs a page fault and the zeroing of
 * every page, per call. Call once, before the threads start. */
#define OSDEP_MALLOC_KEEP 8
void osdep_malloc_keep(size_t largest);

/* How many threads of the whole machine are running or ready to run at this
 * moment (the caller among them), or -ENOTSUP where the OS does not say. */
int osdep_runnable(void);

#endif
