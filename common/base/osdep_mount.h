/*
 * osdep_mount.h: what the FUSE mount (client/mount.c) needs from the OS, one
 * implementation per OS in platform/<os>/osdep_mount.c: whether a directory is
 * a FUSE mount, whether a mount of a type is on it, unmounting, and whether
 * the thread a FUSE request is for has been killed. Each
 * returns 0 or a negative errno unless said otherwise.
 */
#ifndef NFSRDMA_OSDEP_MOUNT_H
#define NFSRDMA_OSDEP_MOUNT_H

/* osdep_umount's flags. */
#define OSDEP_UMOUNT_FORCE    1u /* abort what is in flight (a FUSE mount's connection) */
#define OSDEP_UMOUNT_DETACH   2u /* lazy: detach now, clean up once no longer busy */
#define OSDEP_UMOUNT_NOFOLLOW 4u /* refuse a final symlink of dir (-ELOOP or -EINVAL) */

/* 1 if dir answers as the root of a FUSE mount, 0 if not, or a negative errno. */
int osdep_is_fuse(const char *dir);
/* 1 if the mount table has a mount of type fstype (the name FUSE gives it,
 * e.g. "fuse.nfsrdma") on dir, else 0. */
int osdep_mounted(const char *dir, const char *fstype);
/* Unmount dir; -ENOTSUP for a flag the OS does not have. */
int osdep_umount(const char *dir, unsigned flags);
/* 1 if thread tid (the pid a FUSE request names) has been killed: a fatal
 * signal is pending on it (the kernel makes it a SIGKILL on every thread of
 * the process); 0 if not, or if that cannot be told (gone, or an OS that
 * does not say). */
int osdep_thread_killed(int tid);

#endif
