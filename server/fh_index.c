/*
 * fh_index.c: portable file handles (fh_index.h): handing out a handle for a
 * name, opening the object a handle names by the names its entry holds
 * (fh_index_store.c keeps the entries), and searching the export for an
 * object whose names no longer lead to it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "common/base/log.h"
#include "server/fh_index_int.h"

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

/* Make sure directory dir (st: its stat) and those above it up to the root
 * have entries (a directory the server met through a path it did not hand
 * out, or whose entry was lost): each missing one is found by name in "..". */
static int ensure_dir(struct fh_index *x, int dir, const struct stat *st, int depth)
{
	char name[NAME_MAX + 1];
	struct stat pst;
	struct fhx_rec r;
	int pdir, rc;

	if ((uint64_t)st->st_ino == x->root_ino || st->st_dev != x->dev)
		return st->st_dev == x->dev ? 0 : -EXDEV;
	if ((rc = rec_get(x, (uint64_t)st->st_ino, &r)) != -ENOENT)
		return rc;
	if (depth > FHX_DEPTH_MAX)
		return -ELOOP;
	if ((pdir = openat(dir, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -errno;
	if (fstat(pdir, &pst) < 0)
		rc = -errno;
	else if ((rc = name_in_parent(x, pdir, (uint64_t)st->st_ino, name, sizeof(name))) == 0 &&
		 (rc = ensure_dir(x, pdir, &pst, depth + 1)) == 0 &&
		 (rc = getentropy(&r.gen, sizeof(r.gen)) != 0 ? -errno : 0) == 0) {
		r.stamp = stamp_of(x, pdir, name);
		rec_only(&r, (uint64_t)pst.st_ino, name);
		rc = rec_put(x, (uint64_t)st->st_ino, FHX_ABSENT, 0, &r);
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
			     : dirfd;
		if (fd < 0)
			return -errno;
		rc = ensure_dir(x, fd, &st, 0);
		if (fd != dirfd)
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
	if ((rc = ensure_dir(x, dirfd, &dst, 0)) < 0)
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
	    fstat(todir, &dst) < 0 || strlen(to) > NAME_MAX || ensure_dir(x, todir, &dst, 0) < 0)
		return;
	if (from != NULL) {
		struct stat fst;

		if (fstat(fromdir, &fst) == 0)
			rec_drop(&r, (uint64_t)fst.st_ino, from);
	}
	rec_add(&r, (uint64_t)dst.st_ino, to);
	rec_put(x, (uint64_t)st->st_ino, FHX_GEN, r.gen, &r);
}
