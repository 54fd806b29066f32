/*
 * osdep_mount.c (illumos): the FUSE mount's OS side (common/base/osdep_mount.h):
 * statvfs's type name, /etc/mnttab, umount2. Stock illumos has no libfuse3, so
 * configure leaves the FUSE mount out and nothing calls these yet; they are
 * compiled and link-checked only (scripts/check-illumos.sh).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mntent.h>
#include <sys/mnttab.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "common/base/osdep_mount.h"

/* See osdep_mount.h. */
int osdep_is_fuse(const char *dir)
{
	struct statvfs sv;

	if (statvfs(dir, &sv) != 0)
		return -errno;
	return strcmp(sv.f_basetype, "fuse") == 0;
}

/* See osdep_mount.h: the mount's entry in /etc/mnttab. */
int osdep_mounted(const char *dir, const char *fstype)
{
	struct mnttab want = {.mnt_mountp = (char *)dir, .mnt_fstype = (char *)fstype}, got;
	FILE *f = fopen(MNTTAB, "r");
	int found;

	if (f == NULL)
		return 0;
	found = getmntany(f, &got, &want) == 0;
	fclose(f);
	return found;
}

/* See osdep_mount.h: umount2 knows MS_FORCE only; NOFOLLOW is an lstat before. */
int osdep_umount(const char *dir, unsigned flags)
{
	struct stat st;

	if (flags & OSDEP_UMOUNT_DETACH)
		return -ENOTSUP;
	if ((flags & OSDEP_UMOUNT_NOFOLLOW) && lstat(dir, &st) == 0 && S_ISLNK(st.st_mode))
		return -ELOOP;
	return umount2(dir, flags & OSDEP_UMOUNT_FORCE ? MS_FORCE : 0) < 0 ? -errno : 0;
}

/* See osdep_mount.h: not told here (FUSE is not built on illumos), so a
 * killed caller's calls wait as any others. */
int osdep_thread_killed(int tid)
{
	(void)tid;
	return 0;
}
