/*
 * osdep_mount.c (Linux): the FUSE mount's OS side (common/base/osdep_mount.h):
 * statfs's magic number, /proc/self/mounts, umount2, /proc/TID/status.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statfs.h>

#include "common/base/osdep_mount.h"

#define FUSE_SUPER_MAGIC 0x65735546

/* See osdep_mount.h. */
int osdep_is_fuse(const char *dir)
{
	struct statfs sf;

	if (statfs(dir, &sf) != 0)
		return -errno;
	return sf.f_type == FUSE_SUPER_MAGIC;
}

/* See osdep_mount.h: the mount's line in /proc/self/mounts. */
int osdep_mounted(const char *dir, const char *fstype)
{
	char line[PATH_MAX + 512], want[PATH_MAX + 64];
	FILE *f = fopen("/proc/self/mounts", "r");
	int found = 0;

	snprintf(want, sizeof(want), " %s %s ", dir, fstype);
	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, want) != NULL;
	if (f)
		fclose(f);
	return found;
}

/* See osdep_mount.h. */
int osdep_umount(const char *dir, unsigned flags)
{
	int f = (flags & OSDEP_UMOUNT_FORCE ? MNT_FORCE : 0) |
		(flags & OSDEP_UMOUNT_DETACH ? MNT_DETACH : 0) |
		(flags & OSDEP_UMOUNT_NOFOLLOW ? UMOUNT_NOFOLLOW : 0);

	return umount2(dir, f) < 0 ? -errno : 0;
}

/* See osdep_mount.h: SIGKILL among the signals pending on the thread
 * (SigPnd) or its process (ShdPnd), as /proc/TID/status gives them. */
int osdep_thread_killed(int tid)
{
	char path[64], line[256];
	unsigned long long mask;
	int killed = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	if (tid <= 0 || (f = fopen(path, "re")) == NULL)
		return 0;
	while (!killed && fgets(line, sizeof(line), f))
		killed = (sscanf(line, "SigPnd: %llx", &mask) == 1 ||
			  sscanf(line, "ShdPnd: %llx", &mask) == 1) &&
			 (mask & (1ull << (SIGKILL - 1)));
	fclose(f);
	return killed;
}
