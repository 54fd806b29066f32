/*
 * nfs3_proc_dir.c: the procedures that change a directory: CREATE, MKDIR,
 * SYMLINK, MKNOD, REMOVE, RMDIR, RENAME, LINK. All run as the caller: the
 * kernel checks permissions and new objects get the caller's ownership, or
 * with server.identity = "userspace" the be_may_* checks and be_own_new do
 * (backend_ident.c); each reports the directory's attributes before and
 * after (wcc_data).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "common/base/log.h"
#include "server/nfs3_proc.h"

static void dirop_end(struct nfs_req *req, struct be_obj *d, wcc_data *wcc);

/* dirop_begin flags: the call makes where->name (be_may_create). */
#define DIROP_CREATE 0x1

/* Start a call on where->name: resolve the directory (ROFS on ro exports),
 * check the name, take on the caller's identity (and with DIROP_CREATE, ask
 * whether it may create). On NFS3_OK the caller ends with dirop_end; a
 * failure after the directory resolved fills wcc. */
static nfsstat3 dirop_begin(struct nfs_req *req, const diropargs3 *where, unsigned flags,
			    struct be_obj *d, wcc_data *wcc)
{
	nfsstat3 st = nfs3_dir_resolve(req, &where->dir, BE_MODIFY, d);

	if (st != NFS3_OK)
		return st;
	if ((st = be_name_check(where->name)) != NFS3_OK ||
	    (st = be_cred_enter(req, d->exp)) != NFS3_OK) {
		be_wcc(d->exp, d->fd, &d->st, wcc);
		be_release(req, d);
		return st;
	}
	if ((flags & DIROP_CREATE) && (st = be_may_create(d, where->name)) != NFS3_OK) {
		dirop_end(req, d, wcc);
		return st;
	}
	return NFS3_OK;
}

/* End a dirop: the caller's identity off, the directory's wcc_data filled
 * (the resok or resfail one: their dir_wcc sit at different places). */
static void dirop_end(struct nfs_req *req, struct be_obj *d, wcc_data *wcc)
{
	be_cred_leave(req);
	be_wcc(d->exp, d->fd, &d->st, wcc);
	be_release(req, d);
}

/* The result of a call on dirfd/name: handle and attributes. With sa the
 * call just made the object: it is given to the caller (be_own_new), then sa
 * applies, through fd if it is open (else a PATH fd), with def_mode when sa
 * leaves the mode unset (the object was made private). */
static nfsstat3 made_object(struct be_obj *d, const char *name, int fd, const sattr3 *sa,
			    mode_t def_mode, post_op_fh3 *fh, post_op_attr *attr)
{
	int own = fd < 0 ? osdep_open_path(d->fd, name) : fd;
	struct stat st;
	sattr3 s2;
	nfsstat3 s = NFS3_OK;

	if (own < 0)
		return nfs3_errno_to_stat(-own);
	if (sa) {
		s2 = *sa;
		if (!s2.mode.set_it) {
			s2.mode.set_it = TRUE;
			s2.mode.set_mode3_u.mode = def_mode;
		}
		if (fstat(own, &st) < 0)
			s = nfs3_errno_to_stat(errno);
		else if ((s = be_own_new(own, &d->st, &st)) == NFS3_OK &&
			 (s = be_may_setattr(own, &st, &s2)) == NFS3_OK) {
			/* a directory keeps the set-group-ID it took from its
			 * parent, as one knfsd makes with the mode does */
			if (S_ISDIR(st.st_mode) && (st.st_mode & S_ISGID))
				s2.mode.set_mode3_u.mode |= S_ISGID;
			s = nfs3_sattr_apply(own, &st, &s2);
		}
	}
	if (s == NFS3_OK) {
		be_post_fh(d->exp, d->fd, name, fh);
		be_post_attr_fd(d->exp, own, attr);
	}
	if (own != fd)
		close(own);
	return s;
}

/* The EXCLUSIVE verifier as the times it is stored in (atime, mtime). The top
 * bit of each half is dropped, as knfsd does, so that file systems whose
 * timestamps end in 2038 store (and give back) exactly what we compare. */
static void verf_times(const createverf3 v, struct timespec ts[2])
{
	for (int i = 0; i < 2; i++) {
		const unsigned char *p = (const unsigned char *)v + 4 * i;

		ts[i].tv_sec = (time_t)(((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
					 (uint32_t)p[2] << 8 | p[3]) &
					0x7fffffff);
		ts[i].tv_nsec = 0;
	}
}

/* EXCLUSIVE create: the verifier goes into atime/mtime of the new file; a
 * retransmission finds the file with the same times and succeeds. */
static nfsstat3 create_exclusive(struct be_obj *d, const char *name, const createverf3 verf)
{
	struct timespec ts[2];
	struct stat st;
	nfsstat3 s;
	int fd, e;

	verf_times(verf, ts);
	fd = openat(d->fd, name, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0);
	if (fd < 0 && errno == EEXIST) {
		if (fstatat(d->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
		    st.st_atim.tv_sec == ts[0].tv_sec && st.st_mtim.tv_sec == ts[1].tv_sec)
			return NFS3_OK;
		return NFS3ERR_EXIST;
	}
	if (fd < 0)
		return nfs3_errno_to_stat(errno);
	e = fstat(fd, &st) < 0 ? errno : 0;
	if (e == 0 && (s = be_own_new(fd, &d->st, &st)) != NFS3_OK) {
		close(fd);
		return s;
	}
	if (e == 0 && futimens(fd, ts) < 0)
		e = errno;
	close(fd);
	return e ? nfs3_errno_to_stat(e) : NFS3_OK;
}

/* UNCHECKED on an existing file: only the size of sa applies (the
 * truncation open(O_TRUNC) would do), with write access; not a regular
 * file: EXIST. */
static nfsstat3 create_existing(struct be_obj *d, const char *name, const sattr3 *sa,
				CREATE3resok *ok)
{
	struct stat st;
	nfsstat3 s;
	int fd, e;

	if (fstatat(d->fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return nfs3_errno_to_stat(errno);
	if (!S_ISREG(st.st_mode))
		return NFS3ERR_EXIST;
	if (sa->size.set_it) {
		if (sa->size.set_size3_u.size > INT64_MAX)
			return NFS3ERR_FBIG;
		fd = openat(d->fd, name, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			return nfs3_errno_to_stat(errno);
		if ((s = be_may(fd, &st, PERM_W)) != NFS3_OK) {
			close(fd);
			return s;
		}
		e = ftruncate(fd, (off_t)sa->size.set_size3_u.size) < 0 ? errno : 0;
		if (e == 0)
			be_wrote(fd, &st);
		close(fd);
		if (e)
			return nfs3_errno_to_stat(e);
	}
	return made_object(d, name, -1, NULL, 0, &ok->obj, &ok->obj_attributes);
}

/* UNCHECKED/GUARDED create: a new file gets all of sa. */
static nfsstat3 create_checked(struct be_obj *d, const char *name, const CREATE3args *a,
			       CREATE3resok *ok)
{
	const sattr3 *sa = &a->how.createhow3_u.obj_attributes;
	int fd = openat(d->fd, name, O_CREAT | O_EXCL | O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0600);
	nfsstat3 s;

	if (fd < 0 && errno == EEXIST && a->how.mode == UNCHECKED)
		return create_existing(d, name, sa, ok);
	if (fd < 0)
		return nfs3_errno_to_stat(errno);
	s = made_object(d, name, fd, sa, 0644, &ok->obj, &ok->obj_attributes);
	close(fd);
	return s;
}

/* CREATE's body, by how: UNCHECKED, GUARDED or EXCLUSIVE. */
static nfsstat3 create_how(struct be_obj *d, const CREATE3args *a, CREATE3resok *ok)
{
	nfsstat3 s;

	switch (a->how.mode) {
	case UNCHECKED:
	case GUARDED:
		return create_checked(d, a->where.name, a, ok);
	case EXCLUSIVE:
		s = create_exclusive(d, a->where.name, a->how.createhow3_u.verf);
		if (s == NFS3_OK)
			s = made_object(d, a->where.name, -1, NULL, 0, &ok->obj,
					&ok->obj_attributes);
		return s;
	default:
		return NFS3ERR_INVAL;
	}
}

/* See nfs3_proc.h. CREATE: a regular file. */
void nfs3_proc_create(struct nfs_req *req, void *argp, void *resp)
{
	CREATE3args *a = argp;
	CREATE3res *r = resp;
	CREATE3resok *ok = &r->CREATE3res_u.resok;
	struct be_obj d;

	if ((r->status = dirop_begin(req, &a->where, DIROP_CREATE, &d,
				     &r->CREATE3res_u.resfail.dir_wcc)) != NFS3_OK)
		return;
	r->status = create_how(&d, a, ok);
	dirop_end(req, &d, r->status == NFS3_OK ? &ok->dir_wcc : &r->CREATE3res_u.resfail.dir_wcc);
}

/* See nfs3_proc.h. MKDIR: a directory with the given attributes. */
void nfs3_proc_mkdir(struct nfs_req *req, void *argp, void *resp)
{
	MKDIR3args *a = argp;
	MKDIR3res *r = resp;
	MKDIR3resok *ok = &r->MKDIR3res_u.resok;
	struct be_obj d;

	if ((r->status = dirop_begin(req, &a->where, DIROP_CREATE, &d,
				     &r->MKDIR3res_u.resfail.dir_wcc)) != NFS3_OK)
		return;
	if (mkdirat(d.fd, a->where.name, 0700) < 0)
		r->status = nfs3_errno_to_stat(errno);
	else
		r->status = made_object(&d, a->where.name, -1, &a->attributes, 0755, &ok->obj,
					&ok->obj_attributes);
	dirop_end(req, &d, r->status == NFS3_OK ? &ok->dir_wcc : &r->MKDIR3res_u.resfail.dir_wcc);
}

/* See nfs3_proc.h. SYMLINK: a symlink to symlink_data (stored as given). */
void nfs3_proc_symlink(struct nfs_req *req, void *argp, void *resp)
{
	SYMLINK3args *a = argp;
	SYMLINK3res *r = resp;
	SYMLINK3resok *ok = &r->SYMLINK3res_u.resok;
	const char *target = a->symlink.symlink_data;
	struct be_obj d;

	if ((r->status = dirop_begin(req, &a->where, DIROP_CREATE, &d,
				     &r->SYMLINK3res_u.resfail.dir_wcc)) != NFS3_OK)
		return;
	if (target == NULL || target[0] == '\0')
		r->status = NFS3ERR_INVAL;
	else if (symlinkat(target, d.fd, a->where.name) < 0)
		r->status = nfs3_errno_to_stat(errno);
	else
		r->status = made_object(&d, a->where.name, -1, &a->symlink.symlink_attributes, 0777,
					&ok->obj, &ok->obj_attributes);
	dirop_end(req, &d, r->status == NFS3_OK ? &ok->dir_wcc : &r->SYMLINK3res_u.resfail.dir_wcc);
}

/* See nfs3_proc.h. MKNOD: a device, socket or FIFO. */
void nfs3_proc_mknod(struct nfs_req *req, void *argp, void *resp)
{
	MKNOD3args *a = argp;
	MKNOD3res *r = resp;
	MKNOD3resok *ok = &r->MKNOD3res_u.resok;
	const sattr3 *sa = NULL;
	struct be_obj d;
	mode_t mode;
	dev_t dev;

	if ((r->status = dirop_begin(req, &a->where, DIROP_CREATE, &d,
				     &r->MKNOD3res_u.resfail.dir_wcc)) != NFS3_OK)
		return;
	if ((r->status = be_mknod_args(&a->what, &mode, &dev, &sa)) == NFS3_OK)
		r->status = be_may_mknod(mode);
	if (r->status == NFS3_OK && mknodat(d.fd, a->where.name, mode | 0600, dev) < 0)
		r->status = nfs3_errno_to_stat(errno);
	if (r->status == NFS3_OK)
		r->status =
			made_object(&d, a->where.name, -1, sa, 0644, &ok->obj, &ok->obj_attributes);
	dirop_end(req, &d, r->status == NFS3_OK ? &ok->dir_wcc : &r->MKNOD3res_u.resfail.dir_wcc);
}

/* Forget cached fds of d/name, which is about to lose a link; *was gets what
 * it is (st_nlink 0: nothing is there), for be_fh_removed. */
static void forget_name(struct nfs_req *req, const struct be_obj *d, const char *name,
			struct stat *was)
{
	unsigned char buf[NFS3_FHSIZE];
	struct osdep_fh ofh;
	size_t len;

	if (fstatat(d->fd, name, was, AT_SYMLINK_NOFOLLOW) < 0) {
		memset(was, 0, sizeof(*was));
		return;
	}
	if (be_fh_get(d->exp, d->fd, name, &ofh) == 0 &&
	    be_fh_encode(d->exp, &ofh, buf, &len) == 0) {
		fhcache_forget(req->be->fds, buf, len);
		be_ordma_forget(req, d->exp, buf, len);
	}
}

/* See nfs3_proc.h. REMOVE: unlink a non-directory. */
void nfs3_proc_remove(struct nfs_req *req, void *argp, void *resp)
{
	REMOVE3args *a = argp;
	REMOVE3res *r = resp;
	struct be_obj d;
	struct stat was;

	if ((r->status = dirop_begin(req, &a->object, 0, &d, &r->REMOVE3res_u.resok.dir_wcc)) !=
	    NFS3_OK)
		return;
	forget_name(req, &d, a->object.name, &was);
	if ((r->status = be_may_delete(&d, &was)) == NFS3_OK &&
	    unlinkat(d.fd, a->object.name, 0) < 0)
		r->status = nfs3_errno_to_stat(errno);
	else if (r->status == NFS3_OK && was.st_nlink)
		be_fh_removed(d.exp, &was, d.fd, a->object.name);
	dirop_end(req, &d, &r->REMOVE3res_u.resok.dir_wcc);
}

/* See nfs3_proc.h. RMDIR: remove an empty directory ("." is INVAL). */
void nfs3_proc_rmdir(struct nfs_req *req, void *argp, void *resp)
{
	RMDIR3args *a = argp;
	RMDIR3res *r = resp;
	struct be_obj d;
	struct stat was;

	if ((r->status = dirop_begin(req, &a->object, 0, &d, &r->RMDIR3res_u.resok.dir_wcc)) !=
	    NFS3_OK)
		return;
	if (strcmp(a->object.name, ".") == 0)
		r->status = NFS3ERR_INVAL;
	else if (strcmp(a->object.name, "..") == 0)
		r->status = NFS3ERR_NOTEMPTY;
	else if (fstatat(d.fd, a->object.name, &was, AT_SYMLINK_NOFOLLOW) < 0)
		r->status = nfs3_errno_to_stat(errno);
	else if ((r->status = be_may_delete(&d, &was)) == NFS3_OK) {
		if (unlinkat(d.fd, a->object.name, AT_REMOVEDIR) < 0)
			r->status = errno == EEXIST ? NFS3ERR_NOTEMPTY : nfs3_errno_to_stat(errno);
		else
			be_fh_removed(d.exp, &was, d.fd, a->object.name);
	}
	dirop_end(req, &d, &r->RMDIR3res_u.resok.dir_wcc);
}

/* Resolve two handles of one call (RENAME, LINK): both on one export, else
 * XDEV. On NFS3_OK both must be released. */
static nfsstat3 resolve_pair(struct nfs_req *req, const nfs_fh3 *fa, const nfs_fh3 *fb,
			     struct be_obj *a, struct be_obj *b, int a_is_dir)
{
	nfsstat3 st = a_is_dir ? nfs3_dir_resolve(req, fa, BE_MODIFY, a)
			       : be_resolve(req, fa, OSDEP_OPEN_PATH, BE_MODIFY, a);

	if (st != NFS3_OK)
		return st;
	st = nfs3_dir_resolve(req, fb, BE_MODIFY, b);
	if (st == NFS3_OK && a->exp != b->exp) {
		be_release(req, b);
		st = NFS3ERR_XDEV;
	}
	if (st != NFS3_OK)
		be_release(req, a);
	return st;
}

/* Tell the handle scheme about a RENAME of moved from fromdir/from over
 * victim (st_nlink 0: there was none) at todir/to. */
static void note_rename(const struct export *e, const struct stat *moved, const struct stat *victim,
			int fromdir, const char *from, int todir, const char *to)
{
	if (victim->st_nlink)
		be_fh_removed(e, victim, todir, to);
	be_fh_moved(e, moved, fromdir, from, todir, to);
}

/* See nfs3_proc.h. RENAME: from.dir/from.name -> to.dir/to.name. */
void nfs3_proc_rename(struct nfs_req *req, void *argp, void *resp)
{
	RENAME3args *a = argp;
	RENAME3res *r = resp;
	RENAME3resok *ok = &r->RENAME3res_u.resok;
	struct be_obj from, to;
	struct stat moved, victim;
	int e;

	r->status = resolve_pair(req, &a->from.dir, &a->to.dir, &from, &to, 1);
	if (r->status != NFS3_OK)
		return;
	if ((r->status = be_name_check(a->from.name)) == NFS3_OK &&
	    (r->status = be_name_check(a->to.name)) == NFS3_OK &&
	    (r->status = be_cred_enter(req, from.exp)) == NFS3_OK) {
		forget_name(req, &to, a->to.name, &victim); /* it may be replaced */
		e = fstatat(from.fd, a->from.name, &moved, AT_SYMLINK_NOFOLLOW) < 0 ? errno : 0;
		if (e)
			moved.st_nlink = 0;
		r->status = be_may_rename(&from, a->from.name, &moved, &to, &victim);
		if (r->status == NFS3_OK && e)
			r->status = nfs3_errno_to_stat(e);
		else if (r->status == NFS3_OK &&
			 renameat(from.fd, a->from.name, to.fd, a->to.name) < 0)
			r->status = nfs3_errno_to_stat(errno);
		else if (r->status == NFS3_OK &&
			 (victim.st_nlink == 0 || victim.st_ino != moved.st_ino))
			note_rename(from.exp, &moved, &victim, from.fd, a->from.name, to.fd,
				    a->to.name);
		be_cred_leave(req);
	}
	be_wcc(from.exp, from.fd, &from.st, &ok->fromdir_wcc);
	be_wcc(to.exp, to.fd, &to.st, &ok->todir_wcc);
	be_release(req, &to);
	be_release(req, &from);
}

/* See nfs3_proc.h. LINK: a new name link.dir/link.name for file. */
void nfs3_proc_link(struct nfs_req *req, void *argp, void *resp)
{
	LINK3args *a = argp;
	LINK3res *r = resp;
	LINK3resok *ok = &r->LINK3res_u.resok;
	struct be_obj file, dir;
	int e;

	r->status = resolve_pair(req, &a->file, &a->link.dir, &file, &dir, 0);
	if (r->status != NFS3_OK)
		return;
	if (S_ISDIR(file.st.st_mode))
		r->status = NFS3ERR_ISDIR;
	else if ((r->status = be_name_check(a->link.name)) == NFS3_OK &&
		 (r->status = be_cred_enter(req, file.exp)) == NFS3_OK) {
		if ((r->status = be_may_link(&file, &dir, a->link.name)) == NFS3_OK) {
			if ((e = osdep_link_fd(file.fd, dir.fd, a->link.name)) < 0)
				r->status = nfs3_errno_to_stat(-e);
			else
				be_fh_moved(file.exp, &file.st, -1, NULL, dir.fd, a->link.name);
		}
		be_cred_leave(req);
	}
	be_post_attr_fd(file.exp, file.fd, &ok->file_attributes);
	be_wcc(dir.exp, dir.fd, &dir.st, &ok->linkdir_wcc);
	be_release(req, &dir);
	be_release(req, &file);
}
