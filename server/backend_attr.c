/*
 * backend_attr.c: NFSv3 attributes from struct stat, weak cache consistency
 * data, name checks, what every backend answers alike (FSINFO's limits,
 * MKNOD's type and device), and the errno -> nfsstat3 mapping.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "common/base/log.h"
#include "server/backend_int.h"

static const struct {
	int err;
	nfsstat3 st;
} errno_map[] = {
	{EPERM, NFS3ERR_PERM},
	{ENOENT, NFS3ERR_NOENT},
	{EIO, NFS3ERR_IO},
	{ENXIO, NFS3ERR_NXIO},
	{EACCES, NFS3ERR_ACCES},
	{EEXIST, NFS3ERR_EXIST},
	{EXDEV, NFS3ERR_XDEV},
	{ENODEV, NFS3ERR_NODEV},
	{ENOTDIR, NFS3ERR_NOTDIR},
	{EISDIR, NFS3ERR_ISDIR},
	{EINVAL, NFS3ERR_INVAL},
	{EFBIG, NFS3ERR_FBIG},
	{ENOSPC, NFS3ERR_NOSPC},
	{EROFS, NFS3ERR_ROFS},
	{EMLINK, NFS3ERR_MLINK},
	{ENAMETOOLONG, NFS3ERR_NAMETOOLONG},
	{ENOTEMPTY, NFS3ERR_NOTEMPTY},
	{EDQUOT, NFS3ERR_DQUOT},
	{ESTALE, NFS3ERR_STALE},
	{EREMOTE, NFS3ERR_REMOTE},
	{EBADF, NFS3ERR_BADHANDLE},
	{ENOTSUP, NFS3ERR_NOTSUPP},
	{EOPNOTSUPP, NFS3ERR_NOTSUPP},
	{ENOSYS, NFS3ERR_NOTSUPP},
	{ETXTBSY, NFS3ERR_ACCES},
	{ELOOP, NFS3ERR_INVAL},	      /* a symlink where none may be: not followed */
	{EOVERFLOW, NFS3ERR_FBIG},    /* offset or size past what the file system takes */
	{EAGAIN, NFS3ERR_JUKEBOX},    /* try again later */
	{ETIMEDOUT, NFS3ERR_JUKEBOX}, /* the storage did not answer in time (as nfsd) */
	{ENOMEM, NFS3ERR_JUKEBOX},    /* likewise, memory may come back */
	{EMFILE, NFS3ERR_JUKEBOX},    /* fds: the cache gives them back */
	{ENFILE, NFS3ERR_JUKEBOX},
	{EFAULT, NFS3ERR_SERVERFAULT}, /* our bug, not the client's */
};

/* See nfs3.h. */
nfsstat3 nfs3_errno_to_stat(int err)
{
	for (size_t i = 0; i < sizeof(errno_map) / sizeof(errno_map[0]); i++)
		if (errno_map[i].err == err)
			return errno_map[i].st;
	log_warn("unexpected error %d (%s): reported as NFS3ERR_IO", err, strerror(err));
	return NFS3ERR_IO;
}

static const struct {
	nfsstat3 st;
	const char *name;
} stat_names[] = {
	{NFS3_OK, "NFS3_OK"},
	{NFS3ERR_PERM, "NFS3ERR_PERM"},
	{NFS3ERR_NOENT, "NFS3ERR_NOENT"},
	{NFS3ERR_IO, "NFS3ERR_IO"},
	{NFS3ERR_NXIO, "NFS3ERR_NXIO"},
	{NFS3ERR_ACCES, "NFS3ERR_ACCES"},
	{NFS3ERR_EXIST, "NFS3ERR_EXIST"},
	{NFS3ERR_XDEV, "NFS3ERR_XDEV"},
	{NFS3ERR_NODEV, "NFS3ERR_NODEV"},
	{NFS3ERR_NOTDIR, "NFS3ERR_NOTDIR"},
	{NFS3ERR_ISDIR, "NFS3ERR_ISDIR"},
	{NFS3ERR_INVAL, "NFS3ERR_INVAL"},
	{NFS3ERR_FBIG, "NFS3ERR_FBIG"},
	{NFS3ERR_NOSPC, "NFS3ERR_NOSPC"},
	{NFS3ERR_ROFS, "NFS3ERR_ROFS"},
	{NFS3ERR_MLINK, "NFS3ERR_MLINK"},
	{NFS3ERR_NAMETOOLONG, "NFS3ERR_NAMETOOLONG"},
	{NFS3ERR_NOTEMPTY, "NFS3ERR_NOTEMPTY"},
	{NFS3ERR_DQUOT, "NFS3ERR_DQUOT"},
	{NFS3ERR_STALE, "NFS3ERR_STALE"},
	{NFS3ERR_REMOTE, "NFS3ERR_REMOTE"},
	{NFS3ERR_BADHANDLE, "NFS3ERR_BADHANDLE"},
	{NFS3ERR_NOT_SYNC, "NFS3ERR_NOT_SYNC"},
	{NFS3ERR_BAD_COOKIE, "NFS3ERR_BAD_COOKIE"},
	{NFS3ERR_NOTSUPP, "NFS3ERR_NOTSUPP"},
	{NFS3ERR_TOOSMALL, "NFS3ERR_TOOSMALL"},
	{NFS3ERR_SERVERFAULT, "NFS3ERR_SERVERFAULT"},
	{NFS3ERR_BADTYPE, "NFS3ERR_BADTYPE"},
	{NFS3ERR_JUKEBOX, "NFS3ERR_JUKEBOX"},
};

/* See nfs3.h. */
const char *nfs3_stat_name(nfsstat3 st)
{
	for (size_t i = 0; i < sizeof(stat_names) / sizeof(stat_names[0]); i++)
		if (stat_names[i].st == st)
			return stat_names[i].name;
	return "NFS3ERR_?";
}

/* The NFSv3 type of a stat mode. */
static ftype3 mode_type(mode_t m)
{
	if (S_ISDIR(m))
		return NF3DIR;
	if (S_ISLNK(m))
		return NF3LNK;
	if (S_ISBLK(m))
		return NF3BLK;
	if (S_ISCHR(m))
		return NF3CHR;
	if (S_ISSOCK(m))
		return NF3SOCK;
	if (S_ISFIFO(m))
		return NF3FIFO;
	return NF3REG;
}

/* An nfstime3 from a timespec (seconds wrap in 2106, as the protocol does). */
static nfstime3 nfs_time(const struct timespec *ts)
{
	nfstime3 t = {(uint32)ts->tv_sec, (uint32)ts->tv_nsec};

	return t;
}

/* See backend_int.h. fsid is the export id, so it too survives restarts. */
void be_fattr(const struct export *e, const struct stat *st, fattr3 *out)
{
	out->type = mode_type(st->st_mode);
	out->mode = st->st_mode & 07777;
	out->nlink = (uint32)st->st_nlink;
	out->uid = st->st_uid;
	out->gid = st->st_gid;
	out->size = (size3)st->st_size;
	out->used = (size3)st->st_blocks * 512;
	out->rdev.specdata1 = major(st->st_rdev);
	out->rdev.specdata2 = minor(st->st_rdev);
	out->fsid = e->id;
	out->fileid = st->st_ino;
	out->atime = nfs_time(&st->st_atim);
	out->mtime = nfs_time(&st->st_mtim);
	out->ctime = nfs_time(&st->st_ctim);
}

/* See backend_int.h. */
void be_post_attr_st(const struct export *e, const struct stat *st, post_op_attr *out)
{
	out->attributes_follow = TRUE;
	be_fattr(e, st, &out->post_op_attr_u.attributes);
}

/* See backend_int.h. */
void be_post_attr_fd(const struct export *e, int fd, post_op_attr *out)
{
	struct stat st;

	out->attributes_follow = fd >= 0 && fstat(fd, &st) == 0;
	if (out->attributes_follow)
		be_fattr(e, &st, &out->post_op_attr_u.attributes);
}

/* See backend_int.h. */
void be_pre_attr(const struct stat *st, pre_op_attr *out)
{
	out->attributes_follow = st != NULL;
	if (st == NULL)
		return;
	out->pre_op_attr_u.attributes.size = (size3)st->st_size;
	out->pre_op_attr_u.attributes.mtime = nfs_time(&st->st_mtim);
	out->pre_op_attr_u.attributes.ctime = nfs_time(&st->st_ctim);
}

/* See backend_int.h. */
void be_wcc(const struct export *e, int fd, const struct stat *before, wcc_data *out)
{
	be_pre_attr(before, &out->before);
	be_post_attr_fd(e, fd, &out->after);
}

/* See backend_int.h. */
nfsstat3 be_name_check(const char *name)
{
	size_t len;

	if (name == NULL || name[0] == '\0')
		return NFS3ERR_INVAL;
	len = strlen(name);
	if (len > NFS3_MAXNAMLEN)
		return NFS3ERR_NAMETOOLONG;
	if (memchr(name, '/', len) != NULL)
		return NFS3ERR_INVAL;
	return NFS3_OK;
}

/* See backend_int.h. READ/WRITE sizes from the configured max I/O. */
void be_fsinfo_limits(const struct nfs_backend *be, FSINFO3resok *ok)
{
	uint32_t max = be->max_io;

	ok->rtmax = ok->rtpref = ok->wtmax = ok->wtpref = max;
	ok->rtmult = ok->wtmult = 4096;
	ok->dtpref = max < 32768 ? max : 32768;
	ok->maxfilesize = INT64_MAX;
	ok->time_delta.seconds = 0;
	ok->time_delta.nseconds = 1;
	ok->properties = FSF3_LINK | FSF3_SYMLINK | FSF3_HOMOGENEOUS | FSF3_CANSETTIME;
}

/* See backend_int.h. */
nfsstat3 be_mknod_args(const mknoddata3 *w, mode_t *mode, dev_t *dev, const sattr3 **sa)
{
	*dev = 0;
	switch (w->type) {
	case NF3CHR:
	case NF3BLK:
		*mode = w->type == NF3CHR ? S_IFCHR : S_IFBLK;
		*dev = makedev(w->mknoddata3_u.device.spec.specdata1,
			       w->mknoddata3_u.device.spec.specdata2);
		*sa = &w->mknoddata3_u.device.dev_attributes;
		return NFS3_OK;
	case NF3SOCK:
	case NF3FIFO:
		*mode = w->type == NF3SOCK ? S_IFSOCK : S_IFIFO;
		*sa = &w->mknoddata3_u.pipe_attributes;
		return NFS3_OK;
	default:
		return NFS3ERR_BADTYPE;
	}
}
