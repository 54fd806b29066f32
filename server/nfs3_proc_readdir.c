/*
 * nfs3_proc_readdir.c: READDIR and READDIRPLUS.
 *
 * Cookies are the file system's own directory positions (telldir after each
 * entry, the d_off of getdents). On ext4, xfs, btrfs and tmpfs those stay
 * meaningful while the directory changes and across a server restart, so
 * there is nothing for a cookie verifier to invalidate: we always hand out a
 * zero verifier, as knfsd does in effect. A call with cookie 0 may carry any
 * verifier (the Linux client sends zero first, but RFC 1813 says it is to be
 * ignored then); a call that continues a listing must carry ours (zero), any
 * other verifier did not come from us and gets NFS3ERR_BAD_COOKIE.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "common/base/log.h"
#include "server/nfs3_proc.h"

static void entries_free(entry3 **list);
static void entriesplus_free(entryplus3 **list);

/* A listing in progress. */
struct rd_walk {
	DIR *dir;
	int at_root; /* the directory is the export root: ".." means "." */
};

/* Open the directory (as the caller: needs read and search permission) at
 * cookie, after checking the verifier (see the top of the file). */
static nfsstat3 rd_open(struct be_obj *d, cookie3 cookie, const cookieverf3 verf, struct rd_walk *w)
{
	static const cookieverf3 zero;
	int fd;

	nfsstat3 s;

	if (cookie != 0 && (memcmp(verf, zero, sizeof(zero)) != 0 || cookie > LONG_MAX))
		return NFS3ERR_BAD_COOKIE;
	if ((s = be_may(d->fd, &d->st, PERM_R | PERM_X)) != NFS3_OK)
		return s;
	fd = openat(d->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return nfs3_errno_to_stat(errno);
	if ((w->dir = fdopendir(fd)) == NULL) {
		close(fd);
		return nfs3_errno_to_stat(errno);
	}
	if (cookie != 0)
		seekdir(w->dir, (long)cookie);
	w->at_root = d->st.st_ino == d->exp->ino && d->st.st_dev == d->exp->dev;
	return NFS3_OK;
}

/* The next entry and the cookie after it; NULL at the end (or on error, with
 * *err set). */
static struct dirent *rd_next(struct rd_walk *w, cookie3 *cookie, int *err)
{
	struct dirent *de;

	errno = 0;
	de = readdir(w->dir);
	*err = de == NULL ? errno : 0;
	if (de)
		*cookie = (cookie3)telldir(w->dir);
	return de;
}

/* Step back to before the entry just read (it did not fit). */
static void rd_unread(struct rd_walk *w, cookie3 before)
{
	seekdir(w->dir, (long)before);
}

/* A READDIR entry (malloc'd), or NULL. */
static entry3 *entry_new(const struct dirent *de, cookie3 cookie)
{
	entry3 *e = calloc(1, sizeof(*e));

	if (e && (e->name = strdup(de->d_name)) == NULL) {
		free(e);
		return NULL;
	}
	if (e) {
		e->fileid = de->d_ino;
		e->cookie = cookie;
	}
	return e;
}

/* READDIR body, as the caller: entries that fit count. */
static nfsstat3 readdir_fill(struct nfs_req *req, struct be_obj *d, const READDIR3args *a,
			     READDIR3resok *ok)
{
	size_t count = a->count < req->be->max_io ? a->count : req->be->max_io;
	size_t used = RD_BASE, n = 0;
	entry3 **tail = &ok->reply.entries;
	cookie3 pos = a->cookie, next;
	struct dirent *de = NULL;
	struct rd_walk w;
	nfsstat3 st;
	int err = 0;

	if ((st = rd_open(d, a->cookie, a->cookieverf, &w)) != NFS3_OK)
		return st;
	while (n < NFS3_READDIR_MAX_ENTRIES && (de = rd_next(&w, &next, &err)) != NULL) {
		size_t sz = RD_ENTRY(strlen(de->d_name));

		if (used + sz > count) {
			rd_unread(&w, pos);
			break;
		}
		if ((*tail = entry_new(de, next)) == NULL) {
			err = ENOMEM;
			break;
		}
		tail = &(*tail)->nextentry;
		used += sz;
		pos = next;
		n++;
	}
	ok->reply.eof = de == NULL && err == 0;
	closedir(w.dir);
	if (err)
		return nfs3_errno_to_stat(err);
	return n == 0 && !ok->reply.eof ? NFS3ERR_TOOSMALL : NFS3_OK;
}

/* See nfs3_proc.h. READDIR: names and fileids from cookie on. */
void nfs3_proc_readdir(struct nfs_req *req, void *argp, void *resp)
{
	READDIR3args *a = argp;
	READDIR3res *r = resp;
	READDIR3resok *ok = &r->READDIR3res_u.resok;
	struct be_obj d;

	if ((r->status = nfs3_dir_resolve(req, &a->dir, 0, &d)) != NFS3_OK)
		return;
	if ((r->status = be_cred_enter(req, d.exp)) == NFS3_OK) {
		r->status = readdir_fill(req, &d, a, ok);
		be_cred_leave(req);
	}
	if (r->status != NFS3_OK)
		entries_free(&ok->reply.entries);
	be_post_attr_fd(d.exp, d.fd, &ok->dir_attributes);
	be_release(req, &d);
}

/* A READDIRPLUS entry with attributes and handle where they can be had:
 * not for objects on another file system (mounts inside the export). */
static entryplus3 *entryplus_new(struct be_obj *d, const struct rd_walk *w, const struct dirent *de,
				 cookie3 cookie)
{
	entryplus3 *e = calloc(1, sizeof(*e));
	const char *name = de->d_name;
	struct stat st;

	if (e == NULL || (e->name = strdup(name)) == NULL) {
		free(e);
		return NULL;
	}
	e->fileid = de->d_ino;
	e->cookie = cookie;
	if (w->at_root && strcmp(name, "..") == 0)
		name = ".";
	if (fstatat(d->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == d->exp->dev) {
		e->fileid = st.st_ino;
		be_post_attr_st(d->exp, &st, &e->name_attributes);
		be_post_fh(d->exp, d->fd, name, &e->name_handle);
	}
	return e;
}

/* READDIRPLUS limits: dircount bounds names+cookies, maxcount the reply. */
struct rdp_budget {
	size_t dircount, maxcount, dirused, maxused;
};

/* Whether an entry with this name still fits; the first always may, as far
 * as dircount goes. */
static int rdp_fits(struct rdp_budget *b, size_t namelen, size_t n)
{
	size_t dsz = RD_ENTRY(namelen) - 4, msz = RD_ENTRY(namelen) + RD_PLUS_EXTRA;

	if (b->maxused + msz > b->maxcount || (n > 0 && b->dirused + dsz > b->dircount))
		return 0;
	b->dirused += dsz;
	b->maxused += msz;
	return 1;
}

/* READDIRPLUS body, as the caller. */
static nfsstat3 readdirplus_fill(struct nfs_req *req, struct be_obj *d, const READDIRPLUS3args *a,
				 READDIRPLUS3resok *ok)
{
	struct rdp_budget b = {a->dircount,
			       a->maxcount < req->be->max_io ? a->maxcount : req->be->max_io, 0,
			       RD_BASE};
	entryplus3 **tail = &ok->reply.entries;
	cookie3 pos = a->cookie, next;
	struct dirent *de = NULL;
	struct rd_walk w;
	size_t n = 0;
	nfsstat3 st;
	int err = 0;

	if ((st = rd_open(d, a->cookie, a->cookieverf, &w)) != NFS3_OK)
		return st;
	while (n < NFS3_READDIR_MAX_ENTRIES && (de = rd_next(&w, &next, &err)) != NULL) {
		if (!rdp_fits(&b, strlen(de->d_name), n)) {
			rd_unread(&w, pos);
			break;
		}
		if ((*tail = entryplus_new(d, &w, de, next)) == NULL) {
			err = ENOMEM;
			break;
		}
		tail = &(*tail)->nextentry;
		pos = next;
		n++;
	}
	ok->reply.eof = de == NULL && err == 0;
	closedir(w.dir);
	if (err)
		return nfs3_errno_to_stat(err);
	return n == 0 && !ok->reply.eof ? NFS3ERR_TOOSMALL : NFS3_OK;
}

/* See nfs3_proc.h. READDIRPLUS: entries with attributes and handles. */
void nfs3_proc_readdirplus(struct nfs_req *req, void *argp, void *resp)
{
	READDIRPLUS3args *a = argp;
	READDIRPLUS3res *r = resp;
	READDIRPLUS3resok *ok = &r->READDIRPLUS3res_u.resok;
	struct be_obj d;

	if ((r->status = nfs3_dir_resolve(req, &a->dir, 0, &d)) != NFS3_OK)
		return;
	if ((r->status = be_cred_enter(req, d.exp)) == NFS3_OK) {
		r->status = readdirplus_fill(req, &d, a, ok);
		be_cred_leave(req);
	}
	if (r->status != NFS3_OK)
		entriesplus_free(&ok->reply.entries);
	be_post_attr_fd(d.exp, d.fd, &ok->dir_attributes);
	be_release(req, &d);
}

/* Free a READDIR entry list without recursion. */
static void entries_free(entry3 **list)
{
	entry3 *e = *list, *next;

	for (; e; e = next) {
		next = e->nextentry;
		free(e->name);
		free(e);
	}
	*list = NULL;
}

/* Free a READDIRPLUS entry list without recursion. */
static void entriesplus_free(entryplus3 **list)
{
	entryplus3 *e = *list, *next;

	for (; e; e = next) {
		next = e->nextentry;
		free(e->name);
		if (e->name_handle.handle_follows)
			free(e->name_handle.post_op_fh3_u.handle.data.data_val);
		free(e);
	}
	*list = NULL;
}

/* See nfs3_proc.h. */
void nfs3_readdir_free(READDIR3res *res)
{
	if (res->status == NFS3_OK)
		entries_free(&res->READDIR3res_u.resok.reply.entries);
}

/* See nfs3_proc.h. */
void nfs3_readdirplus_free(READDIRPLUS3res *res)
{
	if (res->status == NFS3_OK)
		entriesplus_free(&res->READDIRPLUS3res_u.resok.reply.entries);
}
