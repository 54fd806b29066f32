/*
 * backend_ceph_attr.c: the CephFS backend's attribute procedures (GETATTR,
 * SETATTR, LOOKUP, ACCESS, READLINK, FSSTAT, FSINFO, PATHCONF), sattr3 as
 * libcephfs takes it, and the caller's rights by mode bits and POSIX ACL.
 * Each runs on an object ce_resolve found, with the caller's UserPerm, so
 * the cluster checks what the caller may change.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/statvfs.h>

#include "common/base/perm.h"
#include "server/backend_ceph.h"

/* See backend_ceph.h. GETATTR: the object's attributes. */
void ce_proc_getattr(struct nfs_req *req, void *argp, void *resp)
{
	GETATTR3args *a = argp;
	GETATTR3res *r = resp;
	struct ce_obj o;

	if ((r->status = ce_resolve(req, &a->object, 0, &o)) != NFS3_OK)
		return;
	be_fattr(o.exp, &o.st, &r->GETATTR3res_u.resok.obj_attributes);
	ce_release(&o);
}

/* See backend_ceph.h. */
nfsstat3 ce_sattr(const sattr3 *sa, struct ceph_statx *stx, int *mask)
{
	struct timespec now = {0, 0};

	memset(stx, 0, sizeof(*stx));
	*mask = 0;
	if ((sa->atime.set_it == SET_TO_CLIENT_TIME &&
	     sa->atime.set_atime_u.atime.nseconds >= 1000000000u) ||
	    (sa->mtime.set_it == SET_TO_CLIENT_TIME &&
	     sa->mtime.set_mtime_u.mtime.nseconds >= 1000000000u))
		return NFS3ERR_INVAL;
	if (sa->size.set_it) {
		if (sa->size.set_size3_u.size > INT64_MAX)
			return NFS3ERR_FBIG;
		stx->stx_size = sa->size.set_size3_u.size;
		*mask |= CEPH_SETATTR_SIZE;
	}
	if (sa->mode.set_it) {
		stx->stx_mode = sa->mode.set_mode3_u.mode & 07777;
		*mask |= CEPH_SETATTR_MODE;
	}
	if (sa->uid.set_it) {
		stx->stx_uid = sa->uid.set_uid3_u.uid;
		*mask |= CEPH_SETATTR_UID;
	}
	if (sa->gid.set_it) {
		stx->stx_gid = sa->gid.set_gid3_u.gid;
		*mask |= CEPH_SETATTR_GID;
	}
	/* the server's clock, set as a time (as FSAL_CEPH does): the _NOW
	 * flags alone leave the times as they were in libcephfs 16 */
	if (sa->atime.set_it == SET_TO_SERVER_TIME || sa->mtime.set_it == SET_TO_SERVER_TIME)
		clock_gettime(CLOCK_REALTIME, &now);
	if (sa->atime.set_it == SET_TO_SERVER_TIME) {
		stx->stx_atime = now;
		*mask |= CEPH_SETATTR_ATIME;
	}
	if (sa->atime.set_it == SET_TO_CLIENT_TIME) {
		stx->stx_atime.tv_sec = sa->atime.set_atime_u.atime.seconds;
		stx->stx_atime.tv_nsec = sa->atime.set_atime_u.atime.nseconds;
		*mask |= CEPH_SETATTR_ATIME;
	}
	if (sa->mtime.set_it == SET_TO_SERVER_TIME) {
		stx->stx_mtime = now;
		*mask |= CEPH_SETATTR_MTIME;
	}
	if (sa->mtime.set_it == SET_TO_CLIENT_TIME) {
		stx->stx_mtime.tv_sec = sa->mtime.set_mtime_u.mtime.seconds;
		stx->stx_mtime.tv_nsec = sa->mtime.set_mtime_u.mtime.nseconds;
		*mask |= CEPH_SETATTR_MTIME;
	}
	return NFS3_OK;
}

/* Apply mask of stx (from sa) to o, in three steps so that none undoes
 * another: the size, by the server for the file's owner (who may always
 * truncate their file, as knfsd and the POSIX backend allow: a file created
 * with mode 0 and then truncated); owner, group and mode as the caller; the
 * times last, so that the truncation's stamps do not replace them. Times
 * set to now are the server's for anyone who may write the file (utimensat
 * allows it; libcephfs 16 only lets the owner set a time). */
static int ce_setattr(struct ce_obj *o, const sattr3 *sa, const struct ceph_statx *stx, int mask)
{
	const int times = CEPH_SETATTR_ATIME | CEPH_SETATTR_MTIME;
	int now_only =
		sa->atime.set_it != SET_TO_CLIENT_TIME && sa->mtime.set_it != SET_TO_CLIENT_TIME;
	const UserPerm *mine = ceph_mount_perms(o->ce->cm);
	struct ceph_statx x; /* libcephfs may write into what it is given */
	int e = 0;

	if (mask & CEPH_SETATTR_SIZE) {
		x = *stx;
		e = ceph_ll_setattr(o->ce->cm, o->in, &x, CEPH_SETATTR_SIZE,
				    o->st.st_uid == o->uid ? mine : o->perm);
	}
	if (e == 0 && (mask & ~(times | CEPH_SETATTR_SIZE))) {
		x = *stx;
		e = ceph_ll_setattr(o->ce->cm, o->in, &x, mask & ~(times | CEPH_SETATTR_SIZE),
				    o->perm);
	}
	if (e == 0 && (mask & times)) {
		x = *stx;
		e = ceph_ll_setattr(o->ce->cm, o->in, &x, mask & times,
				    now_only && o->uid != o->st.st_uid && ce_may(o, W_OK) == 1
					    ? mine
					    : o->perm);
	}
	return e;
}

/* See backend_ceph.h. SETATTR: change attributes if the guard (the client's
 * idea of ctime) still holds; the cluster checks the caller may. A symlink's
 * mode is left alone. */
void ce_proc_setattr(struct nfs_req *req, void *argp, void *resp)
{
	SETATTR3args *a = argp;
	SETATTR3res *r = resp;
	struct ceph_statx stx;
	struct ce_obj o;
	int mask, e;

	if ((r->status = ce_resolve(req, &a->object, BE_MODIFY, &o)) != NFS3_OK)
		return;
	if (a->guard.check &&
	    (a->guard.sattrguard3_u.obj_ctime.seconds != (uint32)o.st.st_ctim.tv_sec ||
	     a->guard.sattrguard3_u.obj_ctime.nseconds != (uint32)o.st.st_ctim.tv_nsec))
		r->status = NFS3ERR_NOT_SYNC;
	else if ((r->status = ce_sattr(&a->new_attributes, &stx, &mask)) == NFS3_OK) {
		if (S_ISLNK(o.st.st_mode))
			mask &= ~CEPH_SETATTR_MODE;
		if ((mask & CEPH_SETATTR_SIZE) && !S_ISREG(o.st.st_mode))
			r->status = S_ISDIR(o.st.st_mode) ? NFS3ERR_ISDIR : NFS3ERR_INVAL;
		else if ((e = ce_setattr(&o, &a->new_attributes, &stx, mask)) < 0)
			r->status = nfs3_errno_to_stat(-e);
	}
	ce_wcc(&o, &r->SETATTR3res_u.resok.obj_wcc);
	ce_release(&o);
}

/* See backend_ceph.h. LOOKUP: the handle and attributes of a name; ".." never
 * leads out of the export (ce_dotdot). */
void ce_proc_lookup(struct nfs_req *req, void *argp, void *resp)
{
	LOOKUP3args *a = argp;
	LOOKUP3res *r = resp;
	LOOKUP3resok *ok = &r->LOOKUP3res_u.resok;
	const char *name = a->what.name;
	struct ceph_statx stx;
	struct stat st;
	struct ce_obj d;
	Inode *in = NULL;
	int e, x;

	if ((r->status = ce_dir_resolve(req, &a->what.dir, 0, &d)) != NFS3_OK)
		return;
	if ((r->status = be_name_check(name)) == NFS3_OK) {
		e = strcmp(name, "..") == 0 ? ce_dotdot(&d, &stx) : 0;
		if (e == 1 && (x = ce_may(&d, X_OK)) != 1)
			e = x < 0 ? x : -EACCES; /* what ceph_ll_lookup would have checked */
		if (e == 0)
			e = ceph_ll_lookup(d.ce->cm, d.in, name, &in, &stx,
					   CE_WANT | CEPH_STATX_INO, 0, d.perm);
		if (e < 0)
			r->status = nfs3_errno_to_stat(-e);
		else if ((r->status = ce_fh_make(d.exp, &stx, &ok->object)) == NFS3_OK) {
			ce_stat_from(&stx, &st);
			be_post_attr_st(d.exp, &st, &ok->obj_attributes);
		}
		if (in)
			ceph_ll_put(d.ce->cm, in);
	}
	ce_post_attr(&d, r->status == NFS3_OK ? &ok->dir_attributes
					      : &r->LOOKUP3res_u.resfail.dir_attributes);
	ce_release(&d);
}

/* The POSIX ACL xattr (system.posix_acl_access) as Linux and CephFS store
 * it: a little-endian header (version 2) and 8-byte entries of a tag, the
 * rights and an id. */
#define ACL_XATTR      "system.posix_acl_access"
#define ACL_VERSION    2
#define ACL_ENTRY_LEN  8
#define ACL_READ_FIRST 32 /* entries read before asking for the length */

static unsigned le16(const unsigned char *p)
{
	return (unsigned)p[0] | (unsigned)p[1] << 8;
}

/* The n entries of xattr a as perm.h's, into e; 0, or -EIO if malformed.
 * (libacl reads ACLs by path or fd only, not from an xattr's bytes.) */
static int acl_parse(const unsigned char *a, size_t n, struct perm_acl_entry *e)
{
	static const struct {
		unsigned xattr;
		enum perm_acl_tag tag;
	} tags[] = {{1, PERM_ACL_USER_OBJ}, {2, PERM_ACL_USER},	 {4, PERM_ACL_GROUP_OBJ},
		    {8, PERM_ACL_GROUP},    {16, PERM_ACL_MASK}, {32, PERM_ACL_OTHER}};

	if ((le16(a) | le16(a + 2) << 16) != ACL_VERSION)
		return -EIO;
	for (size_t i = 0; i < n; i++) {
		const unsigned char *x = a + 4 + i * ACL_ENTRY_LEN;
		size_t t = 0;

		while (t < sizeof(tags) / sizeof(tags[0]) && tags[t].xattr != le16(x))
			t++;
		if (t == sizeof(tags) / sizeof(tags[0]))
			return -EIO;
		e[i].tag = tags[t].tag;
		e[i].perm = le16(x + 2) & 7u;
		e[i].id = (uint32_t)le16(x + 4) | (uint32_t)le16(x + 6) << 16;
	}
	return 0;
}

/* Whether o's access ACL gives id all of each want[i] (may[i] 1 or 0), the
 * ACL read once: 0; -ENODATA if o has none, else -errno (-EIO: malformed). */
static int acl_allows(const struct ce_obj *o, const struct perm_ident *id, const int *want,
		      size_t n, int *may)
{
	unsigned char buf[4 + ACL_READ_FIRST * ACL_ENTRY_LEN], *a = buf;
	struct perm_acl_entry ents[ACL_READ_FIRST], *e = ents;
	int len = ceph_ll_getxattr(o->ce->cm, o->in, ACL_XATTR, buf, sizeof(buf), o->perm), r;
	size_t count;

	if (len == -ERANGE &&
	    (len = ceph_ll_getxattr(o->ce->cm, o->in, ACL_XATTR, NULL, 0, o->perm)) > 0) {
		if ((a = malloc((size_t)len)) == NULL)
			return -ENOMEM;
		len = ceph_ll_getxattr(o->ce->cm, o->in, ACL_XATTR, a, (size_t)len, o->perm);
	}
	count = len >= 4 ? (size_t)(len - 4) / ACL_ENTRY_LEN : 0;
	if (len < 0)
		r = len == -ERANGE ? -EAGAIN : len; /* it grew meanwhile: again */
	else if (len < 4 || (size_t)len != 4 + count * ACL_ENTRY_LEN)
		r = -EIO;
	else if (count > ACL_READ_FIRST && (e = calloc(count, sizeof(*e))) == NULL)
		r = -ENOMEM;
	else if ((r = acl_parse(a, count, e)) == 0)
		for (size_t i = 0; i < n; i++)
			may[i] = perm_acl_allows(e, count, &o->st, id, (unsigned)want[i]);
	if (a != buf)
		free(a);
	if (e != ents)
		free(e);
	return r;
}

/* Whether o's caller may all of each want[i] (may[i] 1 or 0), as libcephfs
 * decides (Client::inode_permission): root may but execute a file with no
 * x bit; anyone but the owner is judged by the object's access ACL if it
 * has one and its group bits (the ACL's mask) are not all clear; else the
 * mode bits decide. 0, or -errno where the cluster cannot give the ACL. */
static int may_each(const struct ce_obj *o, const int *want, size_t n, int *may)
{
	struct perm_ident id = {o->uid, o->gid, o->ngids, o->gids};
	mode_t m = o->st.st_mode;
	unsigned bits;
	int r;

	if (o->uid != 0 && o->uid != o->st.st_uid && (m & 070) &&
	    (r = acl_allows(o, &id, want, n, may)) != -ENODATA)
		return r;
	bits = perm_mode_rights(&o->st, &id);
	for (size_t i = 0; i < n; i++) {
		unsigned w = (unsigned)want[i];

		may[i] = o->uid == 0 ? !(w & X_OK) || S_ISDIR(m) || (m & 0111) : (bits & w) == w;
	}
	return 0;
}

/* See backend_ceph.h. */
int ce_may(const struct ce_obj *o, int want)
{
	int may, r = may_each(o, &want, 1, &may);

	return r < 0 ? r : may;
}

/* See backend_ceph.h. */
nfsstat3 ce_check(const struct ce_obj *o, int want)
{
	int r = ce_may(o, want);

	return r == 1 ? NFS3_OK : r == 0 ? NFS3ERR_ACCES : ce_find_stat(r);
}

/* See backend_ceph.h. ACCESS: the asked rights the caller has, the ACL read
 * once for all three (Pacific has no ll access call). */
void ce_proc_access(struct nfs_req *req, void *argp, void *resp)
{
	static const int want[] = {R_OK, W_OK, X_OK};
	static const uint32 file[] = {ACCESS3_READ, ACCESS3_MODIFY | ACCESS3_EXTEND,
				      ACCESS3_EXECUTE};
	static const uint32 dir[] = {ACCESS3_READ, ACCESS3_MODIFY | ACCESS3_EXTEND | ACCESS3_DELETE,
				     ACCESS3_LOOKUP};
	ACCESS3args *a = argp;
	ACCESS3res *r = resp;
	int may[sizeof(want) / sizeof(want[0])], e;
	struct ce_obj o;
	uint32 got = 0;

	if ((r->status = ce_resolve(req, &a->object, 0, &o)) != NFS3_OK)
		return;
	if ((e = may_each(&o, want, sizeof(want) / sizeof(want[0]), may)) < 0) {
		r->status = ce_find_stat(e); /* the cluster could not say */
		be_post_attr_st(o.exp, &o.st, &r->ACCESS3res_u.resfail.obj_attributes);
		ce_release(&o);
		return;
	}
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (may[i])
			got |= S_ISDIR(o.st.st_mode) ? dir[i] : file[i];
	if (o.rule.ro)
		got &= ~(uint32)(ACCESS3_MODIFY | ACCESS3_EXTEND | ACCESS3_DELETE);
	r->ACCESS3res_u.resok.access = got & a->access;
	be_post_attr_st(o.exp, &o.st, &r->ACCESS3res_u.resok.obj_attributes);
	ce_release(&o);
}

/* See backend_ceph.h. READLINK: a symlink's target. */
void ce_proc_readlink(struct nfs_req *req, void *argp, void *resp)
{
	READLINK3args *a = argp;
	READLINK3res *r = resp;
	char buf[NFS3_MAXPATHLEN + 1];
	struct ce_obj o;
	int n;

	if ((r->status = ce_resolve(req, &a->symlink, 0, &o)) != NFS3_OK)
		return;
	be_post_attr_st(o.exp, &o.st, &r->READLINK3res_u.resok.symlink_attributes);
	if (!S_ISLNK(o.st.st_mode))
		r->status = NFS3ERR_INVAL;
	else if ((n = ceph_ll_readlink(o.ce->cm, o.in, buf, sizeof(buf) - 1, o.perm)) < 0)
		r->status = nfs3_errno_to_stat(-n);
	else if ((r->READLINK3res_u.resok.data = strndup(buf, (size_t)n)) == NULL)
		r->status = NFS3ERR_JUKEBOX;
	ce_release(&o);
}

/* See backend_ceph.h. FSSTAT: space and file counts of the CephFS. */
void ce_proc_fsstat(struct nfs_req *req, void *argp, void *resp)
{
	FSSTAT3args *a = argp;
	FSSTAT3res *r = resp;
	FSSTAT3resok *ok = &r->FSSTAT3res_u.resok;
	struct statvfs vfs;
	struct ce_obj o;
	int e;

	if ((r->status = ce_resolve(req, &a->fsroot, 0, &o)) != NFS3_OK)
		return;
	be_post_attr_st(o.exp, &o.st, &ok->obj_attributes);
	if ((e = ceph_ll_statfs(o.ce->cm, o.in, &vfs)) < 0) {
		r->status = nfs3_errno_to_stat(-e);
	} else {
		ok->tbytes = (uint64_t)vfs.f_blocks * vfs.f_frsize;
		ok->fbytes = (uint64_t)vfs.f_bfree * vfs.f_frsize;
		ok->abytes = (uint64_t)vfs.f_bavail * vfs.f_frsize;
		ok->tfiles = vfs.f_files;
		ok->ffiles = vfs.f_ffree;
		ok->afiles = vfs.f_favail;
		ok->invarsec = 0;
	}
	ce_release(&o);
}

/* See backend_ceph.h. FSINFO: the server's limits, alike for every backend. */
void ce_proc_fsinfo(struct nfs_req *req, void *argp, void *resp)
{
	FSINFO3args *a = argp;
	FSINFO3res *r = resp;
	FSINFO3resok *ok = &r->FSINFO3res_u.resok;
	struct ce_obj o;

	if ((r->status = ce_resolve(req, &a->fsroot, 0, &o)) != NFS3_OK)
		return;
	be_post_attr_st(o.exp, &o.st, &ok->obj_attributes);
	be_fsinfo_limits(req->be, ok);
	ce_release(&o);
}

/* See backend_ceph.h. PATHCONF: CephFS's name and link limits. */
void ce_proc_pathconf(struct nfs_req *req, void *argp, void *resp)
{
	PATHCONF3args *a = argp;
	PATHCONF3res *r = resp;
	PATHCONF3resok *ok = &r->PATHCONF3res_u.resok;
	struct ce_obj o;

	if ((r->status = ce_resolve(req, &a->object, 0, &o)) != NFS3_OK)
		return;
	be_post_attr_st(o.exp, &o.st, &ok->obj_attributes);
	ok->linkmax = 65000;
	ok->name_max = NFS3_MAXNAMLEN;
	ok->no_trunc = TRUE;
	ok->chown_restricted = TRUE;
	ok->case_insensitive = FALSE;
	ok->case_preserving = TRUE;
	ce_release(&o);
}
