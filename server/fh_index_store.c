/*
 * fh_index_store.c: the portable handles' index on disk (fh_index_int.h):
 * one LMDB file per export, its entries, and opening and closing it. Keys
 * are inode numbers (8 bytes, big endian); each value is the object's
 * generation, stamp, and the names it was last seen under (up to FHX_NAMES
 * hard links, newest first), each its parent directory's inode number and
 * its name in it. The key "root" holds the export root's inode number and
 * generation; an index made for another directory (the export's path
 * changed, its id did not) is emptied when opened.
 *
 * The index is written without waiting for the disk (MDB_NOSYNC), and synced
 * at most once a second by a writer and when it is closed: a lost entry costs
 * a walk of the export (with stamps) or a stale handle (without), never a
 * wrong object, so the server does not pay an fsync per handle it hands out.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "common/base/log.h"
#include "server/fh_index_int.h"

/* Open indexes: a reload opens the new exports before it closes the old, and
 * LMDB forbids opening one file twice in a process. */
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fh_index *open_list;

/* The index of parent/name among r's names, or -1. */
int rec_find(const struct fhx_rec *r, uint64_t parent, const char *name)
{
	for (unsigned i = 0; i < r->n; i++)
		if (r->names[i].parent == parent && strcmp(r->names[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* Forget parent/name among r's names (if there). */
void rec_drop(struct fhx_rec *r, uint64_t parent, const char *name)
{
	int i = rec_find(r, parent, name);

	if (i < 0)
		return;
	memmove(&r->names[i], &r->names[i + 1], (r->n - (unsigned)i - 1) * sizeof(r->names[0]));
	r->n--;
}

/* Make parent/name r's newest name (the oldest goes when all are taken). */
void rec_add(struct fhx_rec *r, uint64_t parent, const char *name)
{
	rec_drop(r, parent, name);
	if (r->n == FHX_NAMES)
		r->n--;
	memmove(&r->names[1], &r->names[0], r->n * sizeof(r->names[0]));
	r->names[0].parent = parent;
	snprintf(r->names[0].name, sizeof(r->names[0].name), "%s", name);
	r->n++;
}

/* Make parent/name r's only name. */
void rec_only(struct fhx_rec *r, uint64_t parent, const char *name)
{
	r->n = 0;
	rec_add(r, parent, name);
}

/* An LMDB error as a negative errno (LMDB's own codes are below -30000). */
static int mdb_errno(int rc)
{
	if (rc == 0)
		return 0;
	if (rc == MDB_MAP_FULL || rc == MDB_TXN_FULL)
		return -ENOSPC;
	if (rc == MDB_NOTFOUND)
		return -ENOENT;
	return rc > 0 ? -rc : -EIO;
}

/* Decode an entry's value into r: 0, or -1 when it is malformed. */
static int rec_decode(const unsigned char *v, size_t len, struct fhx_rec *r)
{
	size_t off = 13, n;

	if (len < 13 || v[12] > FHX_NAMES)
		return -1;
	r->gen = get32(v);
	r->stamp = get64(v + 4);
	r->n = v[12];
	for (unsigned i = 0; i < r->n; i++) {
		if (len - off < 9 || (n = v[off + 8]) == 0 || n > NAME_MAX || len - off - 9 < n)
			return -1;
		r->names[i].parent = get64(v + off);
		memcpy(r->names[i].name, v + off + 9, n);
		r->names[i].name[n] = '\0';
		off += 9 + n;
	}
	return off == len ? 0 : -1;
}

/* Encode r into v (room for FHX_VALUE_MAX bytes); its length. */
#define FHX_VALUE_MAX (13 + FHX_NAMES * (9 + NAME_MAX))
static size_t rec_encode(const struct fhx_rec *r, unsigned char *v)
{
	size_t off = 13, n;

	put32(v, r->gen);
	put64(v + 4, r->stamp);
	v[12] = (unsigned char)r->n;
	for (unsigned i = 0; i < r->n; i++) {
		n = strlen(r->names[i].name);
		put64(v + off, r->names[i].parent);
		v[off + 8] = (unsigned char)n;
		memcpy(v + off + 9, r->names[i].name, n);
		off += 9 + n;
	}
	return off;
}

/* The entry of ino: 0, -ENOENT or another -errno. */
int rec_get(struct fh_index *x, uint64_t ino, struct fhx_rec *r)
{
	unsigned char k[8];
	MDB_val key = {sizeof(k), k}, val;
	MDB_txn *txn;
	int rc;

	put64(k, ino);
	if ((rc = mdb_txn_begin(x->env, NULL, MDB_RDONLY, &txn)) != 0)
		return mdb_errno(rc);
	rc = mdb_get(txn, x->dbi, &key, &val);
	if (rc == 0 && rec_decode(val.mv_data, val.mv_size, r) < 0)
		rc = MDB_CORRUPTED;
	mdb_txn_abort(txn);
	return rc == 0 ? 0 : mdb_errno(rc);
}

/* Write out what was committed, at most once a second. */
static void maybe_sync(struct fh_index *x)
{
	time_t now = now_s(), last;

	pthread_mutex_lock(&x->lock);
	last = x->last_sync;
	if (now != last)
		x->last_sync = now;
	pthread_mutex_unlock(&x->lock);
	if (now != last)
		mdb_env_sync(x->env, 1);
}

/* Put (r != NULL) or delete the entry of ino, if what is there is what
 * expect (and gen) say; else -EAGAIN and nothing written. */
int rec_put(struct fh_index *x, uint64_t ino, enum fhx_expect expect, uint32_t gen,
	    const struct fhx_rec *r)
{
	unsigned char k[8], v[FHX_VALUE_MAX];
	MDB_val key = {sizeof(k), k}, val = {r ? rec_encode(r, v) : 0, v}, cur;
	MDB_txn *txn;
	int rc;

	put64(k, ino);
	if ((rc = mdb_txn_begin(x->env, NULL, 0, &txn)) != 0)
		return mdb_errno(rc);
	if (expect != FHX_ANY) {
		rc = mdb_get(txn, x->dbi, &key, &cur);
		if (rc != 0 && rc != MDB_NOTFOUND) {
			mdb_txn_abort(txn);
			return mdb_errno(rc);
		}
		if (expect == FHX_ABSENT
			    ? rc == 0
			    : rc != 0 || cur.mv_size < 4 || get32(cur.mv_data) != gen) {
			mdb_txn_abort(txn);
			return -EAGAIN;
		}
	}
	rc = r ? mdb_put(txn, x->dbi, &key, &val, 0) : mdb_del(txn, x->dbi, &key, NULL);
	if (rc == MDB_NOTFOUND && r == NULL)
		rc = 0;
	if (rc != 0)
		mdb_txn_abort(txn);
	else
		rc = mdb_txn_commit(txn);
	if (rc == MDB_MAP_FULL && !x->full_logged) {
		x->full_logged = 1;
		log_err("file handle index %s is full (%zu MiB): new objects get no handle",
			x->path, FHX_MAP_SIZE >> 20);
	}
	if (rc == 0)
		maybe_sync(x);
	return rc == 0 ? 0 : mdb_errno(rc);
}

/* See fh_index.h. */
void fh_index_stats(struct fh_index *x, struct fh_index_stats *out)
{
	MDB_stat ms;
	MDB_txn *txn;

	memset(out, 0, sizeof(*out));
	if (mdb_txn_begin(x->env, NULL, MDB_RDONLY, &txn) == 0) {
		if (mdb_stat(txn, x->dbi, &ms) == 0 && ms.ms_entries > 0)
			out->entries = ms.ms_entries - 1; /* not the root's */
		mdb_txn_abort(txn);
	}
	pthread_mutex_lock(&x->lock);
	out->walks = x->walks;
	out->found = x->found;
	pthread_mutex_unlock(&x->lock);
}

/* Read the root's entry, or (re)start the index for this root. */
static int load_root(struct fh_index *x)
{
	static const char rk[] = "root";
	MDB_val key = {sizeof(rk) - 1, (void *)rk}, val;
	unsigned char v[12];
	MDB_txn *txn;
	int rc;

	if ((rc = mdb_txn_begin(x->env, NULL, 0, &txn)) != 0)
		return mdb_errno(rc);
	if ((rc = mdb_dbi_open(txn, NULL, 0, &x->dbi)) != 0)
		goto fail;
	rc = mdb_get(txn, x->dbi, &key, &val);
	if (rc == 0 && val.mv_size == sizeof(v) && get64(val.mv_data) == x->root_ino) {
		x->root_gen = get32((const unsigned char *)val.mv_data + 8);
		mdb_txn_abort(txn);
		return 0;
	}
	if (rc == 0) {
		log_notice("file handle index %s was made for another directory: starting afresh "
			   "(handles of the old one are stale)",
			   x->path);
		if ((rc = mdb_drop(txn, x->dbi, 0)) != 0)
			goto fail;
	} else if (rc != MDB_NOTFOUND) {
		goto fail;
	}
	if (getentropy(&x->root_gen, sizeof(x->root_gen)) != 0) {
		rc = errno;
		goto fail;
	}
	put64(v, x->root_ino);
	put32(v + 8, x->root_gen);
	val.mv_size = sizeof(v);
	val.mv_data = v;
	if ((rc = mdb_put(txn, x->dbi, &key, &val, 0)) != 0)
		goto fail;
	return mdb_errno(mdb_txn_commit(txn));
fail:
	mdb_txn_abort(txn);
	return mdb_errno(rc);
}

/* mkdir -p dir, mode 0700 for what is made. */
static int make_dir(const char *dir)
{
	char buf[PATH_MAX];
	size_t n = strlen(dir);

	if (n == 0 || n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, dir, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0700) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return mkdir(buf, 0700) < 0 && errno != EEXIST ? -errno : 0;
}

static void index_free(struct fh_index *x)
{
	if (x->env) {
		mdb_env_sync(x->env, 1);
		mdb_env_close(x->env);
	}
	if (x->root_fd >= 0)
		close(x->root_fd);
	pthread_mutex_destroy(&x->lock);
	pthread_mutex_destroy(&x->walk_lock);
	free(x->path);
	free(x);
}

/* A new index for p at path. */
static int index_new(const struct fh_index_params *p, const char *path, const struct stat *root,
		     struct fh_index **out)
{
	struct fh_index *x = calloc(1, sizeof(*x));
	int rc;

	if (x == NULL)
		return -ENOMEM;
	pthread_mutex_init(&x->lock, NULL);
	pthread_mutex_init(&x->walk_lock, NULL);
	x->refs = 1;
	x->dev = root->st_dev;
	x->root_ino = (uint64_t)root->st_ino;
	x->stamps = p->stamps;
	x->walk_max = p->walk_max ? p->walk_max : 1000000;
	x->root_fd = fcntl(p->root_fd, F_DUPFD_CLOEXEC, 0);
	if (x->root_fd < 0 || (x->path = strdup(path)) == NULL) {
		rc = x->root_fd < 0 ? -errno : -ENOMEM;
		goto fail;
	}
	if ((rc = mdb_env_create(&x->env)) != 0) {
		x->env = NULL;
		rc = mdb_errno(rc);
		goto fail;
	}
	if ((rc = mdb_env_set_mapsize(x->env, FHX_MAP_SIZE)) != 0 ||
	    (rc = mdb_env_set_maxreaders(x->env, 1024)) != 0 ||
	    (rc = mdb_env_open(x->env, path, MDB_NOSUBDIR | MDB_NOTLS | MDB_NOSYNC, 0600)) != 0) {
		log_err("file handle index %s: %s", path, mdb_strerror(rc));
		rc = mdb_errno(rc);
		goto fail;
	}
	if ((rc = load_root(x)) < 0) {
		log_err("file handle index %s: %s", path, strerror(-rc));
		goto fail;
	}
	*out = x;
	return 0;
fail:
	index_free(x);
	return rc;
}

/* See fh_index.h. */
int fh_index_open(const struct fh_index_params *p, struct fh_index **out)
{
	char path[PATH_MAX];
	struct fh_index *x;
	struct stat root;
	int rc;

	*out = NULL;
	if (p->dir == NULL || p->dir[0] != '/') {
		log_err("portable file handles need an absolute index directory "
			"(server.handle_index_dir)");
		return -EINVAL;
	}
	if (fstat(p->root_fd, &root) < 0)
		return -errno;
	if ((size_t)snprintf(path, sizeof(path), "%s/%08x.lmdb", p->dir, p->export_id) >=
	    sizeof(path))
		return -ENAMETOOLONG;
	if ((rc = make_dir(p->dir)) < 0) {
		log_err("file handle index directory %s: %s", p->dir, strerror(-rc));
		return rc;
	}
	pthread_mutex_lock(&open_lock);
	for (x = open_list; x; x = x->next)
		if (strcmp(x->path, path) == 0)
			break;
	if (x && x->root_ino != (uint64_t)root.st_ino) {
		log_err("file handle index %s is in use for another directory", path);
		rc = -EBUSY;
	} else if (x) {
		x->refs++;
		rc = 0;
	} else if ((rc = index_new(p, path, &root, &x)) == 0) {
		x->next = open_list;
		open_list = x;
	}
	pthread_mutex_unlock(&open_lock);
	if (rc == 0)
		*out = x;
	return rc;
}

/* See fh_index.h. */
void fh_index_close(struct fh_index *x)
{
	struct fh_index **pp;

	if (x == NULL)
		return;
	pthread_mutex_lock(&open_lock);
	if (--x->refs > 0) {
		pthread_mutex_unlock(&open_lock);
		return;
	}
	for (pp = &open_list; *pp; pp = &(*pp)->next)
		if (*pp == x) {
			*pp = x->next;
			break;
		}
	pthread_mutex_unlock(&open_lock);
	index_free(x);
}
