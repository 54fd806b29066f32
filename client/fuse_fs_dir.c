/*
 * fuse_fs_dir.c: directory listings. The whole listing is read with
 * READDIRPLUS when the kernel asks for offset 0 (opendir, rewinddir) and
 * served from that snapshot by index; an entry's offset is its index + 1.
 * readdirplus hands the kernel handles and attributes too, which raises the
 * lookup count of every entry it returns but "." and "..".
 */
#include <stdlib.h>
#include <string.h>

#include "client/fuse_fs.h"

struct dent {
	char *name;
	uint64_t fileid;
	struct nfs3c_fh fh; /* len 0: the server sent none */
	fattr3 attr;
	int have_attr;
};

struct dirh {
	pthread_mutex_t lock;
	struct dent *v;
	size_t n, cap;
};

/* The listing behind fi. */
static struct dirh *dirh_of(struct fuse_file_info *fi)
{
	return (struct dirh *)(uintptr_t)fi->fh;
}

/* Forget the entries of a listing. */
static void dirh_clear(struct dirh *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->v[i].name);
	d->n = 0;
}

/* nfs3c_readdir callback: append one entry to the snapshot. */
static int add_entry(void *arg, const struct nfs3c_dirent *e)
{
	struct dirh *d = arg;
	struct dent *x;

	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 64;
		struct dent *v = realloc(d->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		d->v = v;
		d->cap = cap;
	}
	x = &d->v[d->n];
	memset(x, 0, sizeof(*x));
	if (!(x->name = strdup(e->name)))
		return -ENOMEM;
	x->fileid = e->fileid;
	if (e->fh)
		x->fh = *e->fh;
	if (e->attr) {
		x->attr = *e->attr;
		x->have_attr = 1;
	}
	d->n++;
	return 0;
}

/* opendir: an empty listing, read at the first readdir. */
void nfsfs_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct dirh *d = calloc(1, sizeof(*d));

	if (!d)
		return nfsfs_reply_err(req, -ENOMEM);
	pthread_mutex_init(&d->lock, NULL);
	fi->fh = (uint64_t)(uintptr_t)d;
	if (fuse_reply_open(req, fi) != 0) {
		pthread_mutex_destroy(&d->lock);
		free(d);
	}
}

/* (Re)read the listing when the kernel starts from the beginning. Lock held. */
static int load(fuse_req_t req, struct dirh *d, fuse_ino_t ino, off_t off)
{
	struct nfsfs *fs = nfsfs_of(req);
	struct rpc_cred cr;

	if (off != 0)
		return 0;
	dirh_clear(d);
	nfsfs_cred(req, &cr);
	return nfs3c_readdir(fs->c, &cr, &nfsfs_node(fs, ino)->fh, add_entry, d);
}

/* Whether name is "." or "..", which readdirplus must not count. */
static int is_dot(const char *name)
{
	return strcmp(name, ".") == 0 || strcmp(name, "..") == 0;
}

/* One entry for readdirplus into buf; 0 when it does not fit (nothing kept). */
static size_t add_plus(fuse_req_t req, struct nfsfs *fs, const struct dent *x, char *buf,
		       size_t rem, off_t next)
{
	struct fuse_entry_param e;
	struct nfsfs_node *n = NULL;
	size_t len;

	memset(&e, 0, sizeof(e));
	e.attr.st_ino = x->fileid;
	if (x->have_attr && x->fh.len && !is_dot(x->name)) {
		if (!(n = nfsfs_node_get(fs, &x->fh)))
			return 0;
		e.ino = n == fs->root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)n;
		nfsfs_to_stat(&x->attr, &e.attr);
		e.attr_timeout = nfsfs_attr_timeout(fs, &x->fh);
		e.entry_timeout = fs->entry_timeout;
	} else if (x->have_attr) {
		e.attr.st_mode = x->attr.type == NF3DIR ? S_IFDIR : S_IFREG;
	}
	len = fuse_add_direntry_plus(req, buf, rem, x->name, &e, next);
	if (len > rem) {
		if (n)
			nfsfs_node_forget(fs, n, 1);
		return 0;
	}
	return len;
}

/* One entry for readdir into buf; 0 when it does not fit. */
static size_t add_plain(fuse_req_t req, const struct dent *x, char *buf, size_t rem, off_t next)
{
	struct stat st;
	size_t len;

	memset(&st, 0, sizeof(st));
	st.st_ino = x->fileid;
	if (x->have_attr) {
		struct stat full;

		nfsfs_to_stat(&x->attr, &full);
		st.st_mode = full.st_mode & S_IFMT;
	}
	len = fuse_add_direntry(req, buf, rem, x->name, &st, next);
	return len > rem ? 0 : len;
}

/* readdir and readdirplus: as many entries from off as fit in size. */
static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi, int plus)
{
	struct nfsfs *fs = nfsfs_of(req);
	struct dirh *d = dirh_of(fi);
	char *buf = malloc(size ? size : 1);
	size_t pos = 0;
	int rc;

	if (!buf)
		return nfsfs_reply_err(req, -ENOMEM);
	pthread_mutex_lock(&d->lock);
	rc = load(req, d, ino, off);
	for (size_t i = (size_t)off; rc == 0 && off >= 0 && i < d->n; i++) {
		size_t len = plus ? add_plus(req, fs, &d->v[i], buf + pos, size - pos, (off_t)i + 1)
				  : add_plain(req, &d->v[i], buf + pos, size - pos, (off_t)i + 1);

		if (len == 0)
			break;
		pos += len;
	}
	pthread_mutex_unlock(&d->lock);
	if (rc)
		nfsfs_reply_err(req, rc);
	else
		fuse_reply_buf(req, buf, pos);
	free(buf);
}

/* readdir: names and types. */
void nfsfs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		   struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, 0);
}

/* readdirplus: names with handles and attributes. */
void nfsfs_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, 1);
}

/* releasedir: free the listing. */
void nfsfs_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct dirh *d = dirh_of(fi);

	dirh_clear(d);
	free(d->v);
	pthread_mutex_destroy(&d->lock);
	free(d);
	fuse_reply_err(req, 0);
}
