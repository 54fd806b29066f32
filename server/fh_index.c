/*
 * fh_index.c: portable file handles (fh_index.h) over an LMDB index per
 * export. Keys are inode numbers (8 bytes, big endian); each value is the
 * object's generation, stamp, and the names it was last seen under (up to
 * FHX_NAMES hard links, newest first), each its parent directory's inode
 * number and its name in it. The
 * key "root" holds the export root's inode number and generation; an index
 * made for another directory (the export's path changed, its id did not) is
 * emptied when opened.
 *
 * The index is written without waiting for the disk (MDB_NOSYNC), and synced
 * at most once a second by a writer and when it is closed: a lost entry costs
 * a walk of the export (with stamps) or a stale handle (without), never a
 * wrong object, so the server does not pay an fsync per handle it hands out.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include <lmdb.h>

#include "common/base/log.h"
#include "server/fh_index.h"

/* Handle bytes: scheme, flags (0), inode number, generation, stamp. */
#define FHX_SCHEME 'P'
#define FHX_LEN	   (2 + 8 + 4 + 8)
/* Address space the index file may grow to (sparse: only what is used is
 * on disk); at about 40 bytes of overhead and the name per entry, some
 * millions of objects. Past it fh_index_get says -ENOSPC. */
#define FHX_MAP_SIZE ((size_t)1 << 30)
/* Directories between an object and the root that are followed. */
#define FHX_DEPTH_MAX 1024
/* Names (hard links) of one object the index keeps. */
#define FHX_NAMES 4
/* Searches that found nothing, remembered so that a client repeating a
 * stale handle does not walk the export each time. */
#define FHX_MISSES	 16
#define FHX_MISS_SECONDS 30

struct fhx_name {
	uint64_t parent; /* the directory's inode number */
	char name[NAME_MAX + 1];
};

struct fhx_rec {
	uint32_t gen;
	uint64_t stamp;
	unsigned n; /* names, newest first; 0: none known now */
	struct fhx_name names[FHX_NAMES];
};

/* The index of parent/name among r's names, or -1. */
static int rec_find(const struct fhx_rec *r, uint64_t parent, const char *name)
{
	for (unsigned i = 0; i < r->n; i++)
		if (r->names[i].parent == parent && strcmp(r->names[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* Forget parent/name among r's names (if there). */
static void rec_drop(struct fhx_rec *r, uint64_t parent, const char *name)
{
	int i = rec_find(r, parent, name);

	if (i < 0)
		return;
	memmove(&r->names[i], &r->names[i + 1], (r->n - (unsigned)i - 1) * sizeof(r->names[0]));
	r->n--;
}

/* Make parent/name r's newest name (the oldest goes when all are taken). */
static void rec_add(struct fhx_rec *r, uint64_t parent, const char *name)
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
static void rec_only(struct fhx_rec *r, uint64_t parent, const char *name)
{
	r->n = 0;
	rec_add(r, parent, name);
}

struct fh_index {
	struct fh_index *next; /* in the open list */
	char *path;
	unsigned refs;
	MDB_env *env;
	MDB_dbi dbi;
	int root_fd;
	dev_t dev;
	uint64_t root_ino;
	uint32_t root_gen;
	int stamps;
	uint64_t walk_max;
	pthread_mutex_t walk_lock; /* one walk at a time; misses */
	pthread_mutex_t lock;	   /* stats, last_sync */
	struct {
		uint64_t ino;
		uint32_t gen;
		time_t when;
	} misses[FHX_MISSES];
	unsigned next_miss;
	time_t last_sync;
	uint64_t walks, found;
	int full_logged;
};

/* Open indexes: a reload opens the new exports before it closes the old, and
 * LMDB forbids opening one file twice in a process. */
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fh_index *open_list;

static void put64(unsigned char *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (unsigned char)v;
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 3; i >= 0; i--, v >>= 8)
		p[i] = (unsigned char)v;
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static time_t now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
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
static int rec_get(struct fh_index *x, uint64_t ino, struct fhx_rec *r)
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

/* What a write of an entry expects to find there: nothing, an entry of a
 * given generation, or anything. Writers are serialised by LMDB, so checking
 * inside the write makes it a compare-and-swap: two threads handing out the
 * first handle of one object cannot give it two generations. */
enum fhx_expect {
	FHX_ABSENT,
	FHX_GEN,
	FHX_ANY,
};

/* Put (r != NULL) or delete the entry of ino, if what is there is what
 * expect (and gen) say; else -EAGAIN and nothing written. */
static int rec_put(struct fh_index *x, uint64_t ino, enum fhx_expect expect, uint32_t gen,
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

/* The stamp of dirfd/name, or 0 when there is none (or stamps are off). */
static uint64_t stamp_of(const struct fh_index *x, int dirfd, const char *name)
{
	uint64_t s;

	return x->stamps && osdep_fh_stamp(dirfd, name, &s) == 0 ? s : 0;
}

/* Whether fd is the object ino of the export's file system. */
static int is_object(const struct fh_index *x, int fd, uint64_t ino)
{
	struct stat st;

	return fstat(fd, &st) == 0 && st.st_dev == x->dev && (uint64_t)st.st_ino == ino;
}

/* Open dirfd/name as mode (or a directory, dir) and check it is object ino
 * with the given stamp (0: not checked). An fd, or -ESTALE when something
 * else is there. Only a regular file is opened for reading or writing, and
 * only after a look at what the name is now, so that a name replaced by a
 * device or a FIFO outside the server is not opened (which may act). */
static int open_checked(struct fh_index *x, int dirfd, const char *name, uint64_t ino,
			uint64_t stamp, enum osdep_open_mode mode, int dir)
{
	static const int flags[] = {
		[OSDEP_OPEN_READ] = O_RDONLY | O_NOCTTY | O_NONBLOCK,
		[OSDEP_OPEN_RDWR] = O_RDWR | O_NOCTTY | O_NONBLOCK,
	};
	struct stat st;
	uint64_t now;
	int fd;

	if (dir)
		fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	else if (mode == OSDEP_OPEN_PATH)
		fd = osdep_open_path(dirfd, name);
	else if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		fd = -1;
	else if ((uint64_t)st.st_ino != ino || !S_ISREG(st.st_mode))
		return (uint64_t)st.st_ino != ino ? -ESTALE
		       : S_ISDIR(st.st_mode)	  ? -EISDIR
						  : -EINVAL;
	else
		fd = openat(dirfd, name, flags[mode] | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1)
		fd = -errno;
	if (fd < 0)
		return fd == -ENOENT || fd == -ENOTDIR || fd == -ELOOP ? -ESTALE : fd;
	if (!is_object(x, fd, ino) ||
	    (stamp && (now = stamp_of(x, dirfd, name)) != 0 && now != stamp)) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/* An fd of the directory ino, by the names the index holds: its ancestors'
 * entries are read up to the root, then opened down from it, each checked.
 * (A directory has one name; files, the leaves, may have several.) */
static int open_dir(struct fh_index *x, uint64_t ino)
{
	struct step {
		uint64_t ino, stamp;
		char name[NAME_MAX + 1];
	} *chain = NULL, *grown;
	size_t n = 0, cap = 0;
	struct fhx_rec r;
	int fd, next, rc = 0;

	for (uint64_t cur = ino; cur != x->root_ino && rc == 0; cur = r.names[0].parent) {
		if (n == FHX_DEPTH_MAX || (rc = rec_get(x, cur, &r)) < 0 || r.n == 0) {
			rc = rc < 0 && rc != -ENOENT ? rc : -ESTALE;
			break;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			if ((grown = realloc(chain, cap * sizeof(*chain))) == NULL) {
				rc = -ENOMEM;
				break;
			}
			chain = grown;
		}
		chain[n].ino = cur;
		chain[n].stamp = r.stamp;
		memcpy(chain[n].name, r.names[0].name, sizeof(chain[n].name));
		n++;
	}
	fd = rc < 0 ? rc : openat(x->root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd == -1)
		fd = -errno;
	while (fd >= 0 && n > 0) {
		n--;
		next = open_checked(x, fd, chain[n].name, chain[n].ino, chain[n].stamp,
				    OSDEP_OPEN_READ, 1);
		close(fd);
		fd = next;
	}
	free(chain);
	return fd;
}

/* Open object ino (a handle's stamp: 0, not checked) as mode by the names r
 * holds, newest first: an fd, or -ESTALE when none leads to it now. */
static int open_by_names(struct fh_index *x, const struct fhx_rec *r, uint64_t ino, uint64_t stamp,
			 enum osdep_open_mode mode)
{
	int pfd, fd;

	for (unsigned i = 0; i < r->n; i++) {
		if ((pfd = open_dir(x, r->names[i].parent)) == -ESTALE)
			continue;
		if (pfd < 0)
			return pfd;
		fd = open_checked(x, pfd, r->names[i].name, ino, stamp, mode, 0);
		close(pfd);
		if (fd != -ESTALE)
			return fd;
	}
	return -ESTALE;
}

/* Whether a name r holds still leads to object ino. */
static int rec_leads_to(struct fh_index *x, const struct fhx_rec *r, uint64_t ino)
{
	struct stat st;
	int pfd, ok = 0;

	for (unsigned i = 0; i < r->n && !ok; i++) {
		if ((pfd = open_dir(x, r->names[i].parent)) < 0)
			continue;
		ok = fstatat(pfd, r->names[i].name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		     st.st_dev == x->dev && (uint64_t)st.st_ino == ino;
		close(pfd);
	}
	return ok;
}

/* A search of the export for object want (with stamp, if nonzero). */
struct walk {
	struct fh_index *x;
	uint64_t want, stamp, visited;
	uint64_t parent; /* where it was found */
	char name[NAME_MAX + 1];
	int found;
};

/* Record that the directory ino is dir/name, seen on the way to what a walk
 * found: a new entry, or the new place of one whose stamp proves it the same
 * directory. Nothing else is changed. */
static void note_dir(struct fh_index *x, int dir, uint64_t dir_ino, const char *name, uint64_t ino)
{
	uint64_t s = stamp_of(x, dir, name);
	enum fhx_expect e = FHX_ABSENT;
	struct fhx_rec r;

	if (rec_get(x, ino, &r) == 0) {
		if (rec_find(&r, dir_ino, name) >= 0)
			return;
		if (r.stamp == 0 || r.stamp != s)
			return;
		e = FHX_GEN;
	} else if (getentropy(&r.gen, sizeof(r.gen)) != 0) {
		return;
	}
	r.stamp = s;
	rec_only(&r, dir_ino, name);
	rec_put(x, ino, e, r.gen, &r); /* lost to another writer: theirs stands */
}

/* Search dir (an fd this takes) and below; -E2BIG when walk_max is reached. */
static int walk_dir(struct walk *w, int dir, uint64_t dir_ino, int depth)
{
	struct fh_index *x = w->x;
	DIR *d = fdopendir(dir);
	struct dirent *de;
	struct stat st;
	int r = 0, sub;

	if (d == NULL) {
		close(dir);
		return 0;
	}
	while (!w->found && r == 0 && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (++w->visited > x->walk_max) {
			r = -E2BIG;
			break;
		}
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    st.st_dev != x->dev)
			continue;
		if ((uint64_t)st.st_ino == w->want &&
		    (w->stamp == 0 || stamp_of(x, dirfd(d), de->d_name) == w->stamp)) {
			w->found = 1;
			w->parent = dir_ino;
			snprintf(w->name, sizeof(w->name), "%s", de->d_name);
			break;
		}
		if (!S_ISDIR(st.st_mode) || depth >= FHX_DEPTH_MAX)
			continue;
		sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			continue;
		r = walk_dir(w, sub, (uint64_t)st.st_ino, depth + 1);
		if (w->found)
			note_dir(x, dirfd(d), dir_ino, de->d_name, (uint64_t)st.st_ino);
	}
	closedir(d);
	return r;
}

/* Find object ino (a handle of generation gen, with stamp if nonzero) by
 * walking the export; on success w->parent/name say where. */
static int walk_export(struct fh_index *x, uint64_t ino, uint32_t gen, uint64_t stamp,
		       struct walk *w)
{
	time_t now = now_s();
	int dir, r;

	memset(w, 0, sizeof(*w));
	w->x = x;
	w->want = ino;
	w->stamp = stamp;
	pthread_mutex_lock(&x->walk_lock);
	for (unsigned i = 0; i < FHX_MISSES; i++)
		if (x->misses[i].ino == ino && x->misses[i].gen == gen &&
		    now - x->misses[i].when < FHX_MISS_SECONDS) {
			pthread_mutex_unlock(&x->walk_lock);
			return -ESTALE;
		}
	dir = openat(x->root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	r = dir < 0 ? -errno : walk_dir(w, dir, x->root_ino, 0);
	if (!w->found) {
		x->misses[x->next_miss].ino = ino;
		x->misses[x->next_miss].gen = gen;
		x->misses[x->next_miss].when = now;
		x->next_miss = (x->next_miss + 1) % FHX_MISSES;
	}
	pthread_mutex_unlock(&x->walk_lock);
	pthread_mutex_lock(&x->lock);
	x->walks++;
	x->found += (uint64_t)w->found;
	pthread_mutex_unlock(&x->lock);
	if (r == -E2BIG)
		log_warn("file handle index %s: gave up a search for inode %llu after %llu entries",
			 x->path, (unsigned long long)ino, (unsigned long long)x->walk_max);
	return w->found ? 0 : -ESTALE;
}

/* The name under which directory dir (ino) is found in its parent pdir. */
static int name_in_parent(const struct fh_index *x, int pdir, uint64_t ino, char *name, size_t len)
{
	int fd = fcntl(pdir, F_DUPFD_CLOEXEC, 0), found = 0;
	struct dirent *de;
	struct stat st;
	DIR *d;

	if (fd < 0 || (d = fdopendir(fd)) == NULL) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	rewinddir(d);
	while (!found && (de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0 &&
		    fstatat(pdir, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    st.st_dev == x->dev && (uint64_t)st.st_ino == ino && strlen(de->d_name) < len) {
			memcpy(name, de->d_name, strlen(de->d_name) + 1);
			found = 1;
		}
	closedir(d);
	return found ? 0 : -ESTALE;
}

/* Make sure directory dir and those above it up to the root have entries
 * (a handle of a directory the server met through a path it did not hand out,
 * or whose entry was lost): each missing one is found by name in "..". */
static int ensure_dir(struct fh_index *x, int dir, int depth)
{
	char name[NAME_MAX + 1];
	struct stat st, pst;
	struct fhx_rec r;
	int pdir, rc;

	if (fstat(dir, &st) < 0)
		return -errno;
	if ((uint64_t)st.st_ino == x->root_ino || st.st_dev != x->dev)
		return st.st_dev == x->dev ? 0 : -EXDEV;
	if ((rc = rec_get(x, (uint64_t)st.st_ino, &r)) != -ENOENT)
		return rc;
	if (depth > FHX_DEPTH_MAX)
		return -ELOOP;
	if ((pdir = openat(dir, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -errno;
	if (fstat(pdir, &pst) < 0)
		rc = -errno;
	else if ((rc = name_in_parent(x, pdir, (uint64_t)st.st_ino, name, sizeof(name))) == 0 &&
		 (rc = ensure_dir(x, pdir, depth + 1)) == 0 &&
		 (rc = getentropy(&r.gen, sizeof(r.gen)) != 0 ? -errno : 0) == 0) {
		r.stamp = stamp_of(x, pdir, name);
		rec_only(&r, (uint64_t)pst.st_ino, name);
		rc = rec_put(x, (uint64_t)st.st_ino, FHX_ABSENT, 0, &r);
		rc = rc == -EAGAIN ? 0 : rc; /* another thread made it */
	}
	close(pdir);
	return rc;
}

static void encode(struct osdep_fh *fh, uint64_t ino, uint32_t gen, uint64_t stamp)
{
	fh->data[0] = FHX_SCHEME;
	fh->data[1] = 0;
	put64(fh->data + 2, ino);
	put32(fh->data + 10, gen);
	put64(fh->data + 14, stamp);
	fh->len = FHX_LEN;
}

/* The entry object ino (seen now as parent/name, with stamp) gets, given
 * the one it has (*r, if have): kept (with this name added: a hard link),
 * moved (the stamp proves it the same object), or a new one with a new
 * generation (a new object, or one nothing can prove the same). *r is what
 * it ends with; -EAGAIN when another thread wrote first. */
static int decide(struct fh_index *x, struct fhx_rec *r, int have, uint64_t ino, uint64_t parent,
		  const char *name, uint64_t stamp)
{
	uint32_t old = r->gen;
	int had = have;

	if (have && r->stamp && stamp && r->stamp != stamp) {
		have = 0; /* the inode number was re-used */
	} else if (have && rec_find(r, parent, name) >= 0) {
		return 0;
	} else if (have && rec_leads_to(x, r, ino)) {
		rec_add(r, parent, name); /* another name of it */
		return rec_put(x, ino, FHX_GEN, old, r);
	} else if (have && !(r->stamp && r->stamp == stamp)) {
		have = 0; /* cannot tell: a new generation, old handles stale */
	}
	/* else: renamed outside the server, which the stamp proves */
	if (!have && getentropy(&r->gen, sizeof(r->gen)) != 0)
		return -errno;
	r->stamp = stamp;
	rec_only(r, parent, name);
	return rec_put(x, ino, had ? FHX_GEN : FHX_ABSENT, old, r);
}

/* See fh_index.h. */
int fh_index_get(struct fh_index *x, int dirfd, const char *name, struct osdep_fh *fh)
{
	int named = name[0] && strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
	struct stat st, dst;
	struct fhx_rec r;
	uint64_t ino, stamp;
	int rc, fd;

	if ((name[0] ? fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) : fstat(dirfd, &st)) < 0)
		return -errno;
	ino = (uint64_t)st.st_ino;
	if (ino == x->root_ino && st.st_dev == x->dev) {
		encode(fh, ino, x->root_gen, 0);
		return 0;
	}
	if (!named) {
		/* a directory named by "", "." or "..": found in its parent */
		fd = strcmp(name, "..") == 0
			     ? openat(dirfd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
			     : fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
		if (fd < 0)
			return -errno;
		rc = ensure_dir(x, fd, 0);
		close(fd);
		if (rc < 0 || (rc = rec_get(x, ino, &r)) < 0)
			return rc == -ENOENT ? -ESTALE : rc;
		encode(fh, ino, r.gen, r.stamp);
		return 0;
	}
	if (strlen(name) > NAME_MAX)
		return -ENAMETOOLONG;
	if (fstat(dirfd, &dst) < 0)
		return -errno;
	if ((rc = ensure_dir(x, dirfd, 0)) < 0)
		return rc;
	stamp = stamp_of(x, dirfd, name);
	for (int tries = 0; tries < 8; tries++) {
		if ((rc = rec_get(x, ino, &r)) < 0 && rc != -ENOENT)
			return rc;
		if ((rc = decide(x, &r, rc == 0, ino, dst.st_ino, name, stamp)) != -EAGAIN)
			break;
	}
	if (rc < 0)
		return rc == -EAGAIN ? -EBUSY : rc;
	encode(fh, ino, r.gen, r.stamp);
	return 0;
}

/* See fh_index.h. */
int fh_index_open_fh(struct fh_index *x, const struct osdep_fh *fh, enum osdep_open_mode mode)
{
	uint64_t ino, stamp;
	struct fhx_rec r;
	struct walk w;
	uint32_t gen;
	int fd, rc;

	if (fh->len != FHX_LEN || fh->data[0] != FHX_SCHEME || fh->data[1] != 0 ||
	    (unsigned)mode > OSDEP_OPEN_RDWR)
		return -EINVAL;
	ino = get64(fh->data + 2);
	gen = get32(fh->data + 10);
	stamp = get64(fh->data + 14);
	if (ino == x->root_ino)
		return gen == x->root_gen ? open_checked(x, x->root_fd, ".", ino, 0, mode, 0)
					  : -ESTALE;
	if ((rc = rec_get(x, ino, &r)) < 0 && rc != -ENOENT)
		return rc;
	if (rc == 0 && r.gen != gen)
		return -ESTALE; /* the entry is of another object now */
	if (rc == 0 && (fd = open_by_names(x, &r, ino, stamp, mode)) != -ESTALE)
		return fd;
	/* moved outside the server, or its entry lost: only a stamp can show
	 * that what a search finds is the same object */
	if (stamp == 0 || !x->stamps || walk_export(x, ino, gen, stamp, &w) < 0)
		return -ESTALE;
	r.gen = gen;
	r.stamp = stamp;
	rec_only(&r, w.parent, w.name);
	rc = rec_put(x, ino, rc == 0 ? FHX_GEN : FHX_ABSENT, gen, &r);
	if (rc == -EAGAIN && (rc = rec_get(x, ino, &r)) == 0 && r.gen != gen)
		return -ESTALE; /* another thread gave the number to another object */
	if (rc < 0)
		return rc == -ENOENT ? -ESTALE : rc;
	return open_by_names(x, &r, ino, stamp, mode);
}

/* See fh_index.h. */
void fh_index_removed(struct fh_index *x, const struct stat *st, int dir, const char *name)
{
	uint64_t ino = (uint64_t)st->st_ino;
	struct stat dst;
	struct fhx_rec r;
	struct walk w;

	if (st->st_dev != x->dev || ino == x->root_ino)
		return;
	if (S_ISDIR(st->st_mode) || st->st_nlink <= 1) {
		rec_put(x, ino, FHX_ANY, 0, NULL);
		return;
	}
	/* one name of several: forget it; if it was the last one known (the
	 * others were made outside the server, or more than FHX_NAMES), find
	 * another now, while the object lives and its number is no other's */
	if (rec_get(x, ino, &r) < 0 || fstat(dir, &dst) < 0 ||
	    rec_find(&r, (uint64_t)dst.st_ino, name) < 0)
		return;
	rec_drop(&r, (uint64_t)dst.st_ino, name);
	if (r.n == 0 && walk_export(x, ino, r.gen, 0, &w) == 0)
		rec_only(&r, w.parent, w.name);
	rec_put(x, ino, FHX_GEN, r.gen, &r);
}

/* See fh_index.h. */
void fh_index_moved(struct fh_index *x, const struct stat *st, int fromdir, const char *from,
		    int todir, const char *to)
{
	struct stat dst;
	struct fhx_rec r;

	if (st->st_dev != x->dev || rec_get(x, (uint64_t)st->st_ino, &r) < 0 ||
	    fstat(todir, &dst) < 0 || strlen(to) > NAME_MAX || ensure_dir(x, todir, 0) < 0)
		return;
	if (from != NULL) {
		struct stat fst;

		if (fstat(fromdir, &fst) == 0)
			rec_drop(&r, (uint64_t)fst.st_ino, from);
	}
	rec_add(&r, (uint64_t)dst.st_ino, to);
	rec_put(x, (uint64_t)st->st_ino, FHX_GEN, r.gen, &r);
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
