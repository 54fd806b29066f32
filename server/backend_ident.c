/*
 * backend_ident.c: acting as the caller. Each call on a POSIX export runs as
 * the identity the export maps the caller's credential to, in one of two ways
 * (server.identity, export->user_ident):
 *  - native: the worker thread takes on that identity (osdep_cred_set,
 *    setfsuid on Linux) and the kernel checks each system call;
 *  - userspace: the thread keeps the server's own (root's), and the
 *    procedures ask be_may_* before each system call, which decide as the
 *    Linux kernel does for the caller: mode bits and POSIX ACLs
 *    (osdep_acl_allows), sticky directories, protected hard links, who may
 *    chown, chmod and set times; a new object is then given to the caller
 *    (be_own_new), and a write by anyone but root clears set-id bits
 *    (be_wrote).
 * In native mode, and when the server is not root, be_may_* say yes: the
 * kernel decides. A userspace check and the system call after it are two
 * steps: a mode changed in between counts as it was at the check.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "common/base/log.h"
#include "server/backend_int.h"

/* How this thread acts for the call in progress. */
enum cred_mode {
	CRED_NONE,   /* as the server: no switch (root caller, or not root) */
	CRED_NATIVE, /* switched with osdep_cred_set: be_cred_leave restores */
	CRED_USER,   /* userspace checks as `caller` */
};

static _Thread_local struct {
	enum cred_mode mode;
	uid_t uid;
	gid_t gid;
	size_t ngids;
	gid_t gids[NFS_CRED_MAX_GIDS];
} caller;
/* A restore that failed: the thread refuses calls until one works. */
static _Thread_local int identity_lost;

/* The identity e maps the caller to, into caller's fields. */
static void map_caller(const struct nfs_req *req, const struct export *e)
{
	struct nfs_client_rule rule;

	be_req_rule(req, e, &rule);
	export_map_cred(&rule, &req->cred, &caller.uid, &caller.gid, &caller.ngids, caller.gids);
}

/* Whether the mapped caller is root: no switch is needed (see be_cred_enter). */
static int caller_is_root(void)
{
	return caller.uid == 0 && caller.gid == 0;
}

/* See backend_int.h. A caller mapped to uid 0 and gid 0 needs no switch: the
 * server already is root, and root's access does not depend on groups. That
 * saves the switch's system calls (about 12 us a call on a VM). */
nfsstat3 be_cred_enter(struct nfs_req *req, const struct export *e)
{
	int r;

	caller.mode = CRED_NONE;
	if (!req->be->cred_ok)
		return NFS3_OK;
	map_caller(req, e);
	if (e->user_ident) {
		caller.mode = CRED_USER;
		return NFS3_OK;
	}
	if (caller_is_root())
		return NFS3_OK;
	if (req->nowait) {
		/* an event loop's thread never takes on an identity: it could touch
		 * the device no more (rpcrdma_int.h); the call goes to a worker */
		req->would_block = 1;
		return NFS3ERR_JUKEBOX;
	}
	caller.mode = CRED_NATIVE;
	r = osdep_cred_set(caller.uid, caller.gid, caller.ngids, caller.gids);
	if (r < 0) {
		log_err("cannot take on uid %u gid %u: %s", (unsigned)caller.uid,
			(unsigned)caller.gid, strerror(-r));
		be_cred_leave(req);
		return NFS3ERR_SERVERFAULT;
	}
	return NFS3_OK;
}

/* The mapped caller's identity, st's mode, owner, ctime, inode and device
 * and what was asked (what) in one word, never 0: an answer of the kernel's
 * holds for the same word. Words mixed as splitmix64 does. */
static uint64_t grant_key(const struct stat *st, uint64_t what)
{
	uint64_t w[9 + NFS_CRED_MAX_GIDS], h = 0x9e3779b97f4a7c15ull;
	size_t n = 0;

	w[n++] = what;
	w[n++] = (uint64_t)caller.uid << 32 | caller.gid;
	w[n++] = st->st_mode;
	w[n++] = (uint64_t)st->st_uid << 32 | st->st_gid;
	w[n++] = (uint64_t)st->st_ctim.tv_sec;
	w[n++] = (uint64_t)st->st_ctim.tv_nsec;
	w[n++] = (uint64_t)st->st_ino;
	w[n++] = (uint64_t)st->st_dev;
	w[n++] = caller.ngids;
	for (size_t i = 0; i < caller.ngids && n < sizeof(w) / sizeof(w[0]); i++)
		w[n++] = caller.gids[i];
	for (size_t i = 0; i < n; i++) {
		h += w[i] + 0x9e3779b97f4a7c15ull;
		h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
		h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
		h ^= h >> 31;
	}
	return h ? h : 1;
}

/* Whether an answer for st may be kept: its ctime is 2 s old or more. A
 * file system's timestamps advance in steps (a clock tick, or a second on
 * some), so a change of permissions in the same step as the ctime before it
 * (an ACL set right after a write) would leave the key as it was. */
static int ctime_settled(const struct stat *st)
{
	struct timespec now;

	return clock_gettime(CLOCK_REALTIME, &now) == 0 && now.tv_sec > st->st_ctim.tv_sec + 1;
}

/* The kernel's answers kept in an fd-cache entry (answers[]): a word with the
 * key of what was asked (grant_key) above ANSWER_BITS and the answer in them. */
#define ANSWER_BITS 0x3full
enum { ANSWER_READ, ANSWER_ACCESS };

/* On an event loop with native identities: whether the call can be answered
 * there without a switch, the caller mapped (caller.mode CRED_NONE). */
static int on_loop_native(const struct nfs_req *req, const struct export *e)
{
	if (!req->nowait || !req->be->cred_ok || e->user_ident)
		return 0;
	caller.mode = CRED_NONE;
	map_caller(req, e);
	return 1;
}

/* Whether o's entry holds the kernel's answer to `what` for the mapped
 * caller and o as it is now; *got the answer. */
static int answer_known(const struct be_obj *o, int which, uint64_t what, uint32_t *got)
{
	uint64_t key, w;

	if (!o->ent)
		return 0;
	key = grant_key(&o->st, what) & ~ANSWER_BITS;
	w = __atomic_load_n(&o->ent->answers[which], __ATOMIC_RELAXED);
	if (!key || (w & ~ANSWER_BITS) != key)
		return 0;
	*got = (uint32_t)(w & ANSWER_BITS);
	return 1;
}

/* Keep the kernel's answer got to `what` (a worker that switched identity
 * asked it), once o's ctime has settled. */
static void answer_keep(const struct be_obj *o, int which, uint64_t what, uint32_t got)
{
	if (caller.mode == CRED_NATIVE && o->ent && !(got & ~ANSWER_BITS) && ctime_settled(&o->st))
		__atomic_store_n(&o->ent->answers[which],
				 (grant_key(&o->st, what) & ~ANSWER_BITS) | got, __ATOMIC_RELAXED);
}

/* be_read_enter's and be_write_enter's part off the loop: the caller's
 * identity taken on, and its right to read or write o decided
 * (be_io_allowed); given back where it has none. */
static nfsstat3 io_enter(struct nfs_req *req, struct be_obj *o, int write)
{
	nfsstat3 st = be_cred_enter(req, o->exp);

	if (st == NFS3_OK && (st = be_io_allowed(o, be_req_uid(req, o->exp), write)) != NFS3_OK)
		be_cred_leave(req);
	return st;
}

/* See backend_int.h. */
nfsstat3 be_read_enter(struct nfs_req *req, struct be_obj *o)
{
	uint32_t may = 0;
	nfsstat3 st;

	if (on_loop_native(req, o->exp)) {
		if (caller.uid == o->st.st_uid || caller_is_root() ||
		    (answer_known(o, ANSWER_READ, 0, &may) && may))
			return NFS3_OK;
		req->would_block = 1; /* the kernel decides, on a worker */
		return NFS3ERR_JUKEBOX;
	}
	if ((st = io_enter(req, o, 0)) == NFS3_OK)
		answer_keep(o, ANSWER_READ, 0, 1);
	return st;
}

/* On an event loop: whether the mapped caller, who needs a switch, may
 * write o there as the server (see be_write_enter). */
static int owner_writes_here(const struct be_obj *o)
{
	return caller.uid == o->st.st_uid && o->ent && !(o->st.st_mode & (S_ISUID | S_ISGID)) &&
	       osdep_write_as_anyone(o->fd, &o->ent->write_anyone);
}

/* See backend_int.h. Root's right to write does not depend on its group. */
nfsstat3 be_write_enter(struct nfs_req *req, struct be_obj *o)
{
	if (on_loop_native(req, o->exp)) {
		if (caller.uid == 0)
			return be_io_allowed(o, 0, 1);
		if (owner_writes_here(o))
			return NFS3_OK;
		req->would_block = 1; /* the kernel decides, on a worker */
		return NFS3ERR_JUKEBOX;
	}
	return io_enter(req, o, 1);
}

/* See backend_int.h. */
int be_access_known(struct nfs_req *req, const struct be_obj *o, uint32_t want, uint32_t *got)
{
	/* root needs no switch: be_cred_enter runs it here */
	return on_loop_native(req, o->exp) && !caller_is_root() &&
	       answer_known(o, ANSWER_ACCESS, want, got);
}

/* See backend_int.h. */
void be_access_keep(const struct be_obj *o, uint32_t want, uint32_t got)
{
	answer_keep(o, ANSWER_ACCESS, want, got);
}

/* See backend_int.h. If our identity cannot be had back (setgroups can fail
 * for memory), this thread refuses every call until it can: see
 * be_identity_ok. */
void be_cred_leave(struct nfs_req *req)
{
	enum cred_mode was = caller.mode;
	int r;

	(void)req;
	caller.mode = CRED_NONE;
	if (was != CRED_NATIVE)
		return;
	r = osdep_cred_restore();
	if (r < 0) {
		log_err("cannot restore the server's identity: %s; refusing calls on this thread "
			"until it can",
			strerror(-r));
		identity_lost = 1;
	}
}

/* See backend_int.h. */
int be_identity_ok(void)
{
	if (identity_lost && osdep_cred_restore() == 0)
		identity_lost = 0;
	return !identity_lost;
}

/* Whether the userspace checks are on for the call in progress. */
static int checking(void)
{
	return caller.mode == CRED_USER;
}

/* The caller's rights on the object fd (st its attributes): 0 if it has all
 * of want, else -EACCES (or the error reading its ACL). Root may read and
 * write anything, and execute what has an execute bit (and every
 * directory), as the kernel lets CAP_DAC_OVERRIDE. */
static int user_access(int fd, const struct stat *st, unsigned want)
{
	struct perm_ident id = {caller.uid, caller.gid, caller.ngids, caller.gids};
	int r;

	if (caller.uid == 0)
		return !(want & PERM_X) || S_ISDIR(st->st_mode) || (st->st_mode & 0111) ? 0
											: -EACCES;
	r = osdep_acl_allows(fd, st, &id, want);
	if (r == -ENODATA)
		r = (perm_mode_rights(st, &id) & want) == want;
	return r < 0 ? r : r ? 0 : -EACCES;
}

/* See backend_int.h. */
int be_access(int fd, const struct stat *st, unsigned want)
{
	return checking() ? user_access(fd, st, want) : osdep_access(fd, (int)want);
}

/* See backend_int.h. */
nfsstat3 be_may(int fd, const struct stat *st, unsigned want)
{
	int r = checking() ? user_access(fd, st, want) : 0;

	return r < 0 ? nfs3_errno_to_stat(-r) : NFS3_OK;
}

/* See backend_int.h. As the kernel: the search right first (without it
 * EACCES even where the name exists), then an existing name is left to the
 * call, which fails with EEXIST, before write access counts. */
nfsstat3 be_may_create(const struct be_obj *d, const char *name)
{
	struct stat st;

	if (!checking())
		return NFS3_OK;
	if (fstatat(d->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return be_may(d->fd, &d->st, PERM_X);
	return be_may(d->fd, &d->st, PERM_W | PERM_X);
}

/* The sticky rule: in a sticky directory d only the owner of the victim or
 * of d (or root) may remove or replace it. */
static nfsstat3 sticky_ok(const struct stat *d, const struct stat *victim)
{
	if (!(d->st_mode & S_ISVTX) || caller.uid == 0 || caller.uid == victim->st_uid ||
	    caller.uid == d->st_uid)
		return NFS3_OK;
	return NFS3ERR_PERM;
}

/* See backend_int.h. */
nfsstat3 be_may_delete(const struct be_obj *d, const struct stat *victim)
{
	nfsstat3 s;

	if (!checking())
		return NFS3_OK;
	if (victim->st_nlink == 0) /* none: with the search right, ENOENT */
		return be_may(d->fd, &d->st, PERM_X);
	if ((s = be_may(d->fd, &d->st, PERM_W | PERM_X)) != NFS3_OK)
		return s;
	return sticky_ok(&d->st, victim);
}

/* See backend_int.h. A directory that changes parent needs write access to
 * itself too (its ".." changes). */
nfsstat3 be_may_rename(const struct be_obj *from, const char *name, const struct stat *moved,
		       const struct be_obj *to, const struct stat *victim)
{
	nfsstat3 s;
	int fd;

	if (!checking())
		return NFS3_OK;
	if ((s = be_may(to->fd, &to->st, PERM_X)) != NFS3_OK ||
	    (s = be_may_delete(from, moved)) != NFS3_OK || moved->st_nlink == 0)
		return s; /* no moved: with the search right, ENOENT */
	if (victim->st_nlink)
		s = be_may_delete(to, victim);
	else
		s = be_may(to->fd, &to->st, PERM_W | PERM_X);
	if (s != NFS3_OK || !S_ISDIR(moved->st_mode) || from->st.st_ino == to->st.st_ino)
		return s;
	if ((fd = osdep_open_path(from->fd, name)) < 0)
		return nfs3_errno_to_stat(-fd);
	s = be_may(fd, moved, PERM_W);
	close(fd);
	return s;
}

/* See backend_int.h. Hard links to another user's file are refused unless
 * it is a plain regular file the caller may read and write, as Linux does
 * with fs.protected_hardlinks = 1 (Debian's default). */
nfsstat3 be_may_link(const struct be_obj *file, const struct be_obj *dir, const char *name)
{
	const struct stat *st = &file->st;
	nfsstat3 s;

	struct stat there;

	if (!checking())
		return NFS3_OK;
	if ((s = be_may(dir->fd, &dir->st, PERM_X)) != NFS3_OK ||
	    fstatat(dir->fd, name, &there, AT_SYMLINK_NOFOLLOW) == 0)
		return s; /* an existing name: with the search right, EEXIST */
	if (caller.uid != 0 && caller.uid != st->st_uid &&
	    (!S_ISREG(st->st_mode) || (st->st_mode & S_ISUID) ||
	     (st->st_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP) ||
	     user_access(file->fd, st, PERM_R | PERM_W) < 0))
		return NFS3ERR_PERM;
	return be_may(dir->fd, &dir->st, PERM_W | PERM_X);
}

/* See backend_int.h. */
nfsstat3 be_may_mknod(mode_t type)
{
	return checking() ? be_mknod_allowed(caller.uid, type) : NFS3_OK;
}

/* See backend_int.h. */
nfsstat3 be_mknod_allowed(uid_t uid, mode_t type)
{
	if (uid == 0 || S_ISFIFO(type) || S_ISSOCK(type))
		return NFS3_OK;
	return NFS3ERR_PERM; /* devices need CAP_MKNOD */
}

/* See backend_int.h. The kernel's setattr_prepare for a caller without
 * capabilities: only the owner may change the mode, give the file to a group
 * it is in, or set explicit times; setting both times to now needs write
 * access instead; set-group-ID is dropped from a mode whose group the caller
 * is not in. */
nfsstat3 be_may_setattr(int fd, const struct stat *st, sattr3 *sa)
{
	struct perm_ident id = {caller.uid, caller.gid, caller.ngids, caller.gids};
	int owner = caller.uid == st->st_uid;
	gid_t gid;

	if (!checking() || caller.uid == 0)
		return NFS3_OK;
	if (sa->uid.set_it && sa->uid.set_uid3_u.uid != st->st_uid)
		return NFS3ERR_PERM;
	gid = sa->gid.set_it ? sa->gid.set_gid3_u.gid : st->st_gid;
	if (sa->gid.set_it && gid != st->st_gid && (!owner || !perm_in_group(&id, gid)))
		return NFS3ERR_PERM;
	if (sa->mode.set_it && !S_ISLNK(st->st_mode)) {
		if (!owner)
			return NFS3ERR_PERM;
		if (!perm_in_group(&id, gid))
			sa->mode.set_mode3_u.mode &= ~(uint32)S_ISGID;
	}
	if (sa->atime.set_it == DONT_CHANGE && sa->mtime.set_it == DONT_CHANGE)
		return NFS3_OK;
	if (owner)
		return NFS3_OK;
	if (sa->atime.set_it == SET_TO_SERVER_TIME && sa->mtime.set_it == SET_TO_SERVER_TIME)
		return be_may(fd, st, PERM_W);
	return NFS3ERR_PERM;
}

/* See backend_int.h. The group is the directory's where it has
 * set-group-ID, else the caller's, as the kernel gives. */
nfsstat3 be_own_new(int fd, const struct stat *dir, struct stat *st)
{
	gid_t gid = (dir->st_mode & S_ISGID) ? dir->st_gid : caller.gid;
	int r;

	if (!checking() || (st->st_uid == caller.uid && st->st_gid == gid))
		return NFS3_OK;
	if (st->st_uid != geteuid()) {
		/* not what this thread made: the name was replaced meanwhile */
		log_warn("a new object changed owner before it was given to uid %u; left alone",
			 (unsigned)caller.uid);
		return NFS3ERR_JUKEBOX;
	}
	if ((r = osdep_chown_fd(fd, caller.uid, gid)) < 0)
		return nfs3_errno_to_stat(-r);
	st->st_uid = caller.uid;
	st->st_gid = gid;
	return NFS3_OK;
}

/* See backend_int.h. The kernel's file_remove_privs for a writer without
 * CAP_FSETID: set-user-ID goes, and set-group-ID where group execute is on
 * (else it marks mandatory locking). */
void be_wrote(int fd, const struct stat *st)
{
	mode_t kill = 0;

	if (!checking() || caller.uid == 0 || !S_ISREG(st->st_mode))
		return;
	if (st->st_mode & S_ISUID)
		kill |= S_ISUID;
	if ((st->st_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP))
		kill |= S_ISGID;
	if (kill && osdep_chmod_fd(fd, st->st_mode & 07777 & ~kill) < 0)
		log_warn("cannot clear the set-id bits of a file written by uid %u",
			 (unsigned)caller.uid);
}
