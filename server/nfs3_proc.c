/*
 * nfs3_proc.c: the NFSv3 procedure table, the attribute procedures (GETATTR,
 * SETATTR, LOOKUP, ACCESS, READLINK, FSSTAT, FSINFO, PATHCONF) and freeing
 * results. Each procedure resolves its handles (which applies the export's
 * rules), takes on the caller's identity for the file system calls, and fills
 * the result, with attributes wherever the protocol has room for them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "common/base/log.h"
#include "server/nfs3_proc.h"

/* NULL: nothing to do, always succeeds (the RPC "ping"). */
static void nfs3_proc_null(struct nfs_req *req, void *argp, void *resp)
{
}

/* GETATTR: the object's attributes. */
static void nfs3_proc_getattr(struct nfs_req *req, void *argp, void *resp)
{
	GETATTR3args *a = argp;
	GETATTR3res *r = resp;
	struct be_obj o;

	r->status = be_resolve(req, &a->object, OSDEP_OPEN_PATH, 0, &o);
	if (r->status != NFS3_OK)
		return;
	be_fattr(o.exp, &o.st, &r->GETATTR3res_u.resok.obj_attributes);
	be_release(req, &o);
}

/* The times a sattr3 asks for, as utimensat takes them; 0 if none. */
static int sattr_times(const sattr3 *sa, struct timespec ts[2])
{
	const set_atime *at = &sa->atime;
	const set_mtime *mt = &sa->mtime;

	ts[0].tv_sec = ts[1].tv_sec = 0;
	ts[0].tv_nsec = at->set_it == SET_TO_SERVER_TIME ? UTIME_NOW : UTIME_OMIT;
	ts[1].tv_nsec = mt->set_it == SET_TO_SERVER_TIME ? UTIME_NOW : UTIME_OMIT;
	if (at->set_it == SET_TO_CLIENT_TIME) {
		ts[0].tv_sec = at->set_atime_u.atime.seconds;
		ts[0].tv_nsec = at->set_atime_u.atime.nseconds;
	}
	if (mt->set_it == SET_TO_CLIENT_TIME) {
		ts[1].tv_sec = mt->set_mtime_u.mtime.seconds;
		ts[1].tv_nsec = mt->set_mtime_u.mtime.nseconds;
	}
	return at->set_it != DONT_CHANGE || mt->set_it != DONT_CHANGE;
}

/* See nfs3_proc.h. Size first, then owner (which may clear set-id bits),
 * then mode, then times, so that nothing after bumps the times set. A
 * symlink's mode is not settable (as on Linux) and is left alone. */
nfsstat3 nfs3_sattr_apply(int fd, const struct stat *st, const sattr3 *sa)
{
	struct timespec ts[2];
	int r = 0;

	/* a time with nanoseconds past a second is refused before anything changes */
	if ((sa->atime.set_it == SET_TO_CLIENT_TIME &&
	     sa->atime.set_atime_u.atime.nseconds >= 1000000000u) ||
	    (sa->mtime.set_it == SET_TO_CLIENT_TIME &&
	     sa->mtime.set_mtime_u.mtime.nseconds >= 1000000000u))
		return NFS3ERR_INVAL;
	if (sa->size.set_it) {
		if (!S_ISREG(st->st_mode))
			return S_ISDIR(st->st_mode) ? NFS3ERR_ISDIR : NFS3ERR_INVAL;
		if (sa->size.set_size3_u.size > INT64_MAX)
			return NFS3ERR_FBIG;
		if (ftruncate(fd, (off_t)sa->size.set_size3_u.size) < 0)
			return nfs3_errno_to_stat(errno);
	}
	if (sa->uid.set_it || sa->gid.set_it)
		r = osdep_chown_fd(fd, sa->uid.set_it ? sa->uid.set_uid3_u.uid : (uid_t)-1,
				   sa->gid.set_it ? sa->gid.set_gid3_u.gid : (gid_t)-1);
	if (r == 0 && sa->mode.set_it && !S_ISLNK(st->st_mode))
		r = osdep_chmod_fd(fd, sa->mode.set_mode3_u.mode & 07777);
	if (r == 0 && sattr_times(sa, ts))
		r = osdep_utimens_fd(fd, ts);
	return r < 0 ? nfs3_errno_to_stat(-r) : NFS3_OK;
}

/* SETATTR: change attributes, if the guard (the client's idea of ctime)
 * still holds. Truncation needs write access to the file, as knfsd asks. */
static void nfs3_proc_setattr(struct nfs_req *req, void *argp, void *resp)
{
	SETATTR3args *a = argp;
	SETATTR3res *r = resp;
	wcc_data *wcc = &r->SETATTR3res_u.resok.obj_wcc;
	int trunc = a->new_attributes.size.set_it;
	struct be_obj o;

	r->status = be_resolve(req, &a->object, OSDEP_OPEN_PATH, BE_MODIFY, &o);
	if (r->status == NFS3_OK && trunc && S_ISREG(o.st.st_mode)) {
		be_release(req, &o);
		r->status = be_resolve(req, &a->object, OSDEP_OPEN_RDWR, BE_MODIFY, &o);
	}
	if (r->status != NFS3_OK)
		return;
	if (a->guard.check &&
	    (a->guard.sattrguard3_u.obj_ctime.seconds != (uint32)o.st.st_ctim.tv_sec ||
	     a->guard.sattrguard3_u.obj_ctime.nseconds != (uint32)o.st.st_ctim.tv_nsec))
		r->status = NFS3ERR_NOT_SYNC;
	else if ((r->status = be_cred_enter(req, o.exp)) == NFS3_OK) {
		sattr3 sa = a->new_attributes;

		if (trunc && S_ISREG(o.st.st_mode))
			r->status = be_io_allowed(&o, be_req_uid(req, o.exp), 1);
		if (r->status == NFS3_OK)
			r->status = be_may_setattr(o.fd, &o.st, &sa);
		if (r->status == NFS3_OK) {
			be_ordma_forget(req, o.exp, o.fh, o.fhlen);
			r->status = nfs3_sattr_apply(o.fd, &o.st, &sa);
			be_ordma_forget(req, o.exp, o.fh, o.fhlen);
		}
		if (r->status == NFS3_OK && trunc && !sa.mode.set_it)
			be_wrote(o.fd, &o.st); /* a mode set with the size stands */
		be_cred_leave(req);
	}
	be_wcc(o.exp, o.fd, &o.st, wcc);
	be_release(req, &o);
}

/* Resolve a directory handle for a call on a name in it. */
nfsstat3 nfs3_dir_resolve(struct nfs_req *req, const nfs_fh3 *fh, unsigned flags, struct be_obj *d)
{
	nfsstat3 st = be_resolve(req, fh, OSDEP_OPEN_PATH, flags, d);

	if (st == NFS3_OK && !S_ISDIR(d->st.st_mode)) {
		be_release(req, d);
		st = NFS3ERR_NOTDIR;
	}
	return st;
}

/* LOOKUP body, as the caller: ".." of the export root is the root itself, and
 * an object on another file system (a mount inside the export) is refused. */
static nfsstat3 lookup_name(struct be_obj *d, const char *name, LOOKUP3resok *ok)
{
	int at_root = d->st.st_ino == d->exp->ino && d->st.st_dev == d->exp->dev;
	struct stat st;
	nfsstat3 s;

	if (at_root && strcmp(name, "..") == 0)
		name = ".";
	if (fstatat(d->fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return nfs3_errno_to_stat(errno);
	if (st.st_dev != d->exp->dev) {
		log_debug("export '%s': '%s' is on another file system, not exported", d->exp->path,
			  name);
		return NFS3ERR_ACCES;
	}
	if ((s = be_fh_make(d->exp, d->fd, name, &ok->object)) != NFS3_OK)
		return s;
	be_post_attr_st(d->exp, &st, &ok->obj_attributes);
	return NFS3_OK;
}

/* LOOKUP: the handle and attributes of a name in a directory. */
static void nfs3_proc_lookup(struct nfs_req *req, void *argp, void *resp)
{
	LOOKUP3args *a = argp;
	LOOKUP3res *r = resp;
	struct be_obj d;

	r->status = nfs3_dir_resolve(req, &a->what.dir, 0, &d);
	if (r->status != NFS3_OK)
		return;
	r->status = be_name_check(a->what.name);
	if (r->status == NFS3_OK && (r->status = be_cred_enter(req, d.exp)) == NFS3_OK) {
		if ((r->status = be_may(d.fd, &d.st, PERM_X)) == NFS3_OK)
			r->status = lookup_name(&d, a->what.name, &r->LOOKUP3res_u.resok);
		be_cred_leave(req);
	}
	if (r->status == NFS3_OK)
		be_post_attr_fd(d.exp, d.fd, &r->LOOKUP3res_u.resok.dir_attributes);
	else
		be_post_attr_fd(d.exp, d.fd, &r->LOOKUP3res_u.resfail.dir_attributes);
	be_release(req, &d);
}

/* The ACCESS bits the caller (identity in force) has on o, among `want`:
 * exactly what the mode bits and ACLs allow, as the Linux server answers (its
 * owner override is for READ and WRITE of a file already open, not ACCESS,
 * which clients such as Linux's check at open). The export's ro rule is the
 * caller's to apply. */
static uint32 access_bits(const struct be_obj *o, uint32 want)
{
	int dir = S_ISDIR(o->st.st_mode);
	uint32 got = 0;

	if ((want & ACCESS3_READ) && be_access(o->fd, &o->st, PERM_R) == 0)
		got |= ACCESS3_READ;
	if (be_access(o->fd, &o->st, PERM_W) == 0)
		got |= ACCESS3_MODIFY | ACCESS3_EXTEND | (dir ? ACCESS3_DELETE : 0);
	if (be_access(o->fd, &o->st, PERM_X) == 0)
		got |= dir ? ACCESS3_LOOKUP : ACCESS3_EXECUTE;
	return got & want;
}

/* ACCESS: which of the asked rights the caller has on the object. */
static void nfs3_proc_access(struct nfs_req *req, void *argp, void *resp)
{
	ACCESS3args *a = argp;
	ACCESS3res *r = resp;
	struct nfs_client_rule rule;
	struct be_obj o;
	uint32_t got;

	r->status = be_resolve(req, &a->object, OSDEP_OPEN_PATH, 0, &o);
	if (r->status != NFS3_OK)
		return;
	/* a caller who needs an identity switch, on a loop: the kernel's answer
	 * if it is known, else a worker's call */
	if (!be_access_known(req, &o, a->access, &got) &&
	    (r->status = be_cred_enter(req, o.exp)) == NFS3_OK) {
		got = access_bits(&o, a->access);
		be_access_keep(&o, a->access, got);
		be_cred_leave(req);
	}
	if (r->status == NFS3_OK) {
		be_req_rule(req, o.exp, &rule);
		if (rule.ro)
			got &= ~(uint32)(ACCESS3_MODIFY | ACCESS3_EXTEND | ACCESS3_DELETE);
		r->ACCESS3res_u.resok.access = got;
	}
	be_post_attr_st(o.exp, &o.st, &r->ACCESS3res_u.resok.obj_attributes);
	be_release(req, &o);
}

/* READLINK: a symlink's target. */
static void nfs3_proc_readlink(struct nfs_req *req, void *argp, void *resp)
{
	READLINK3args *a = argp;
	READLINK3res *r = resp;
	char buf[NFS3_MAXPATHLEN + 1];
	struct be_obj o;
	ssize_t n;

	r->status = be_resolve(req, &a->symlink, OSDEP_OPEN_PATH, 0, &o);
	if (r->status != NFS3_OK)
		return;
	be_post_attr_st(o.exp, &o.st, &r->READLINK3res_u.resok.symlink_attributes);
	if (!S_ISLNK(o.st.st_mode)) {
		r->status = NFS3ERR_INVAL;
	} else if ((n = osdep_readlink_fd(o.fd, buf, sizeof(buf))) < 0) {
		r->status = nfs3_errno_to_stat((int)-n);
	} else if ((r->READLINK3res_u.resok.data = strndup(buf, (size_t)n)) == NULL) {
		r->status = NFS3ERR_JUKEBOX;
	}
	be_release(req, &o);
}

/* FSSTAT: space and file counts of the export's file system. */
static void nfs3_proc_fsstat(struct nfs_req *req, void *argp, void *resp)
{
	FSSTAT3args *a = argp;
	FSSTAT3res *r = resp;
	FSSTAT3resok *ok = &r->FSSTAT3res_u.resok;
	struct osdep_fsstat fs;
	struct be_obj o;
	int e;

	r->status = be_resolve(req, &a->fsroot, OSDEP_OPEN_PATH, 0, &o);
	if (r->status != NFS3_OK)
		return;
	be_post_attr_st(o.exp, &o.st, &ok->obj_attributes);
	if ((e = osdep_fsstat(o.fd, &fs)) < 0) {
		r->status = nfs3_errno_to_stat(-e);
	} else {
		ok->tbytes = fs.tbytes;
		ok->fbytes = fs.fbytes;
		ok->abytes = fs.abytes;
		ok->tfiles = fs.tfiles;
		ok->ffiles = fs.ffiles;
		ok->afiles = fs.afiles;
		ok->invarsec = 0;
	}
	be_release(req, &o);
}

/* FSINFO: the server's limits; READ/WRITE sizes from the configured max I/O. */
static void nfs3_proc_fsinfo(struct nfs_req *req, void *argp, void *resp)
{
	FSINFO3args *a = argp;
	FSINFO3res *r = resp;
	FSINFO3resok *ok = &r->FSINFO3res_u.resok;
	struct be_obj o;

	r->status = be_resolve(req, &a->fsroot, OSDEP_OPEN_PATH, 0, &o);
	if (r->status != NFS3_OK)
		return;
	be_post_attr_st(o.exp, &o.st, &ok->obj_attributes);
	be_fsinfo_limits(req->be, ok);
	be_release(req, &o);
}

/* PATHCONF: name and link limits of the file system. */
static void nfs3_proc_pathconf(struct nfs_req *req, void *argp, void *resp)
{
	PATHCONF3args *a = argp;
	PATHCONF3res *r = resp;
	PATHCONF3resok *ok = &r->PATHCONF3res_u.resok;
	struct osdep_fsstat fs;
	struct be_obj o;
	int e;

	r->status = be_resolve(req, &a->object, OSDEP_OPEN_PATH, 0, &o);
	if (r->status != NFS3_OK)
		return;
	be_post_attr_st(o.exp, &o.st, &ok->obj_attributes);
	if ((e = osdep_fsstat(o.fd, &fs)) < 0) {
		r->status = nfs3_errno_to_stat(-e);
	} else {
		ok->linkmax = fs.link_max;
		ok->name_max = fs.name_max < NFS3_MAXNAMLEN ? fs.name_max : NFS3_MAXNAMLEN;
		ok->no_trunc = TRUE;
		ok->chown_restricted = TRUE;
		ok->case_insensitive = FALSE;
		ok->case_preserving = TRUE;
	}
	be_release(req, &o);
}

/* See export.h: the POSIX backend's procedures. */
const struct be_ops be_posix_ops = {
	.name = "posix",
	.open = export_posix_open,
	.close = export_posix_close,
	.nfs3 =
		{
			[NFSPROC3_GETATTR] = nfs3_proc_getattr,
			[NFSPROC3_SETATTR] = nfs3_proc_setattr,
			[NFSPROC3_LOOKUP] = nfs3_proc_lookup,
			[NFSPROC3_ACCESS] = nfs3_proc_access,
			[NFSPROC3_READLINK] = nfs3_proc_readlink,
			[NFSPROC3_READ] = nfs3_proc_read,
			[NFSPROC3_WRITE] = nfs3_proc_write,
			[NFSPROC3_CREATE] = nfs3_proc_create,
			[NFSPROC3_MKDIR] = nfs3_proc_mkdir,
			[NFSPROC3_SYMLINK] = nfs3_proc_symlink,
			[NFSPROC3_MKNOD] = nfs3_proc_mknod,
			[NFSPROC3_REMOVE] = nfs3_proc_remove,
			[NFSPROC3_RMDIR] = nfs3_proc_rmdir,
			[NFSPROC3_RENAME] = nfs3_proc_rename,
			[NFSPROC3_LINK] = nfs3_proc_link,
			[NFSPROC3_READDIR] = nfs3_proc_readdir,
			[NFSPROC3_READDIRPLUS] = nfs3_proc_readdirplus,
			[NFSPROC3_FSSTAT] = nfs3_proc_fsstat,
			[NFSPROC3_FSINFO] = nfs3_proc_fsinfo,
			[NFSPROC3_PATHCONF] = nfs3_proc_pathconf,
			[NFSPROC3_COMMIT] = nfs3_proc_commit,
		},
	.open_locked = be_posix_open_locked,
};

/* One entry point per procedure: every NFSv3 procedure's arguments begin
 * with a handle, and the export it names picks the backend (be_dispatch). */
#define DISPATCH(num, fn)                                                                          \
	static void fn(struct nfs_req *req, void *argp, void *resp)                                \
	{                                                                                          \
		be_dispatch(req, num, argp, resp);                                                 \
	}
DISPATCH(NFSPROC3_GETATTR, disp_getattr)
DISPATCH(NFSPROC3_SETATTR, disp_setattr)
DISPATCH(NFSPROC3_LOOKUP, disp_lookup)
DISPATCH(NFSPROC3_ACCESS, disp_access)
DISPATCH(NFSPROC3_READLINK, disp_readlink)
DISPATCH(NFSPROC3_READ, disp_read)
DISPATCH(NFSPROC3_WRITE, disp_write)
DISPATCH(NFSPROC3_CREATE, disp_create)
DISPATCH(NFSPROC3_MKDIR, disp_mkdir)
DISPATCH(NFSPROC3_SYMLINK, disp_symlink)
DISPATCH(NFSPROC3_MKNOD, disp_mknod)
DISPATCH(NFSPROC3_REMOVE, disp_remove)
DISPATCH(NFSPROC3_RMDIR, disp_rmdir)
DISPATCH(NFSPROC3_RENAME, disp_rename)
DISPATCH(NFSPROC3_LINK, disp_link)
DISPATCH(NFSPROC3_READDIR, disp_readdir)
DISPATCH(NFSPROC3_READDIRPLUS, disp_readdirplus)
DISPATCH(NFSPROC3_FSSTAT, disp_fsstat)
DISPATCH(NFSPROC3_FSINFO, disp_fsinfo)
DISPATCH(NFSPROC3_PATHCONF, disp_pathconf)
DISPATCH(NFSPROC3_COMMIT, disp_commit)

#define PROC(n, fn, fl)                                                                            \
	{                                                                                          \
		&nfs3_xdr_procs[NFSPROC3_##n], fn, fl                                              \
	}

/* See nfs3.h. Indexed by procedure number (RFC 1813). */
const struct nfs_proc nfs3_procs[NFS3_NPROCS] = {
	PROC(NULL, nfs3_proc_null, NFS_PROC_INLINE),
	PROC(GETATTR, disp_getattr, NFS_PROC_INLINE),
	PROC(SETATTR, disp_setattr, 0),
	PROC(LOOKUP, disp_lookup, 0),
	PROC(ACCESS, disp_access, NFS_PROC_INLINE),
	PROC(READLINK, disp_readlink, 0),
	PROC(READ, disp_read, NFS_PROC_INLINE),
	PROC(WRITE, disp_write, NFS_PROC_INLINE),
	PROC(CREATE, disp_create, 0),
	PROC(MKDIR, disp_mkdir, 0),
	PROC(SYMLINK, disp_symlink, 0),
	PROC(MKNOD, disp_mknod, 0),
	PROC(REMOVE, disp_remove, 0),
	PROC(RMDIR, disp_rmdir, 0),
	PROC(RENAME, disp_rename, 0),
	PROC(LINK, disp_link, 0),
	PROC(READDIR, disp_readdir, 0),
	PROC(READDIRPLUS, disp_readdirplus, 0),
	PROC(FSSTAT, disp_fsstat, NFS_PROC_INLINE),
	PROC(FSINFO, disp_fsinfo, NFS_PROC_INLINE),
	PROC(PATHCONF, disp_pathconf, NFS_PROC_INLINE),
	PROC(COMMIT, disp_commit, 0),
};

/* See nfs3.h. */
void nfs_proc_free_res(const struct nfs_proc *p, const struct nfs_req *req, void *res)
{
	if (p->wire->res_size == 0 || res == NULL)
		return;
	if (p == &nfs3_procs[NFSPROC3_READ]) {
		READ3res *r = res;

		/* READ data is never freed by XDR (nfs3_ddpdata): a transport's
		 * buffer stays the transport's, our own malloc goes here */
		if (r->status == NFS3_OK) {
			if (!req->get_buf)
				free(r->READ3res_u.resok.data.data_val);
			r->READ3res_u.resok.data.data_val = NULL;
		}
	}
	if (p == &nfs3_procs[NFSPROC3_READDIR])
		nfs3_readdir_free(res);
	if (p == &nfs3_procs[NFSPROC3_READDIRPLUS])
		nfs3_readdirplus_free(res);
	xdr_free(p->wire->xdr_res, res);
}
