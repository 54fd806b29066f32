/*
 * fh_index_test: portable file handles (server/fh_index.h) keep their
 * promises: a handle opens its own object after a restart, after renames
 * through the server and (with stamps) outside it, and after its index entry
 * is lost; it is ESTALE, never another object, after a remove, a re-used
 * inode number, a stamp that does not match, a rename outside the server
 * without stamps, or an index made for another directory; a malformed handle
 * is EINVAL; a stale handle repeated does not walk the export each time.
 * Each test runs with stamps (the birth time, where the file system here has
 * one) and without (as on a file system or OS that gives none).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include <sys/stat.h>

#include "server/fh_index.h"

struct fx {
	char dir[PATH_MAX - 16]; /* the export */
	char index[PATH_MAX];	 /* its index directory */
	int root;
	int stamps;
	struct fh_index *x;
};

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path) < 0 ? -1 : 0;
}

static void fx_open(struct fx *f)
{
	struct fh_index_params p = {
		.dir = f->index, .export_id = 0x1234, .root_fd = f->root, .stamps = f->stamps};

	assert_int_equal(fh_index_open(&p, &f->x), 0);
}

static void fx_init(struct fx *f, int stamps)
{
	const char *tmp = getenv("TMPDIR");

	memset(f, 0, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "%s/nfsrdma-fhx-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->index, sizeof(f->index), "%s.index", f->dir);
	f->root = open(f->dir, O_RDONLY | O_DIRECTORY);
	assert_true(f->root >= 0);
	f->stamps = stamps;
	fx_open(f);
}

static void fx_fini(struct fx *f)
{
	fh_index_close(f->x);
	close(f->root);
	nftw(f->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	nftw(f->index, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Close and open the index again, as a restart of the server does. */
static void fx_restart(struct fx *f)
{
	fh_index_close(f->x);
	fx_open(f);
}

/* Make a file dir/name (dir relative to the export; "" is its root). */
static void mkfile(struct fx *f, const char *path)
{
	int fd = openat(f->root, path, O_CREAT | O_EXCL | O_WRONLY, 0644);

	assert_true(fd >= 0);
	close(fd);
}

/* The handle of export-relative path (its parent opened by path). */
static void handle_of(struct fx *f, const char *path, struct osdep_fh *fh)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int d;

	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
	d = openat(f->root, dir, O_RDONLY | O_DIRECTORY);
	assert_true(d >= 0);
	assert_int_equal(fh_index_get(f->x, d, slash ? slash + 1 : path, fh), 0);
	close(d);
}

/* Whether fh opens to the object at export-relative path: 1; -errno when
 * it does not open; 0 when it opens something else. */
static int opens_to(struct fx *f, const struct osdep_fh *fh, const char *path)
{
	struct stat a, b;
	int fd = fh_index_open_fh(f->x, fh, OSDEP_OPEN_PATH), same;

	if (fd < 0)
		return fd;
	assert_int_equal(fstatat(f->root, path, &b, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(fstat(fd, &a), 0);
	same = a.st_ino == b.st_ino && a.st_dev == b.st_dev;
	close(fd);
	return same;
}

/* Handles of files, directories and symlinks open to them, read and
 * read-write too, and after a restart; the root's handle is the same twice. */
static void round_trip(void **state)
{
	int stamps = *(const int *)*state;
	struct osdep_fh root1, root2, d, file, link;
	struct fx f;
	char buf[4];
	int fd;

	fx_init(&f, stamps);
	assert_int_equal(mkdirat(f.root, "a", 0755), 0);
	assert_int_equal(mkdirat(f.root, "a/b", 0755), 0);
	mkfile(&f, "a/b/file");
	assert_int_equal(symlinkat("file", f.root, "a/b/link"), 0);
	assert_int_equal(fh_index_get(f.x, f.root, "", &root1), 0);
	handle_of(&f, "a/b", &d);
	handle_of(&f, "a/b/file", &file);
	handle_of(&f, "a/b/link", &link);
	assert_int_equal(opens_to(&f, &d, "a/b"), 1);
	assert_int_equal(opens_to(&f, &file, "a/b/file"), 1);
	assert_int_equal(opens_to(&f, &link, "a/b/link"), 1);
	fd = fh_index_open_fh(f.x, &file, OSDEP_OPEN_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "abc", 3), 3);
	close(fd);
	fx_restart(&f);
	assert_int_equal(fh_index_get(f.x, f.root, "", &root2), 0);
	assert_int_equal(root1.len, root2.len);
	assert_memory_equal(root1.data, root2.data, root1.len);
	assert_int_equal(opens_to(&f, &root1, "."), 1);
	assert_int_equal(opens_to(&f, &file, "a/b/file"), 1);
	fd = fh_index_open_fh(f.x, &file, OSDEP_OPEN_READ);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, sizeof(buf)), 3);
	close(fd);
	/* "." and ".." give the handles of what they name */
	{
		struct osdep_fh dot, dotdot;
		int b = openat(f.root, "a/b", O_RDONLY | O_DIRECTORY);

		assert_int_equal(fh_index_get(f.x, b, ".", &dot), 0);
		assert_int_equal(fh_index_get(f.x, b, "..", &dotdot), 0);
		assert_int_equal(dot.len, d.len);
		assert_memory_equal(dot.data, d.data, d.len);
		assert_int_equal(opens_to(&f, &dotdot, "a"), 1);
		close(b);
	}
	fx_fini(&f);
}

/* Renames the server makes (it tells the index) keep handles, of the object
 * and of what is below a renamed directory, with or without stamps. */
static void renames_through_server(void **state)
{
	int stamps = *(const int *)*state;
	struct osdep_fh file, dir;
	struct stat st;
	struct fx f;

	fx_init(&f, stamps);
	assert_int_equal(mkdirat(f.root, "d", 0755), 0);
	mkfile(&f, "d/file");
	handle_of(&f, "d", &dir);
	handle_of(&f, "d/file", &file);
	/* the directory, renamed and told */
	assert_int_equal(fstatat(f.root, "d", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(renameat(f.root, "d", f.root, "e"), 0);
	fh_index_moved(f.x, &st, f.root, "d", f.root, "e");
	/* the file, moved to another directory and told */
	assert_int_equal(mkdirat(f.root, "g", 0755), 0);
	assert_int_equal(fstatat(f.root, "e/file", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(renameat(f.root, "e/file", f.root, "g/moved"), 0);
	{
		int e = openat(f.root, "e", O_RDONLY | O_DIRECTORY);
		int g = openat(f.root, "g", O_RDONLY | O_DIRECTORY);

		fh_index_moved(f.x, &st, e, "file", g, "moved");
		close(g);
		close(e);
	}
	fx_restart(&f);
	assert_int_equal(opens_to(&f, &dir, "e"), 1);
	assert_int_equal(opens_to(&f, &file, "g/moved"), 1);
	fx_fini(&f);
}

/* Hard links through the server: a handle survives the removal of any of
 * its names while one stays, with or without stamps (the newest name is
 * kept; removing the one kept finds another while the file is alive). */
static void hard_links(void **state)
{
	int stamps = *(const int *)*state;
	struct stat st;
	struct osdep_fh h;
	struct fx f;

	fx_init(&f, stamps);
	mkfile(&f, "a");
	handle_of(&f, "a", &h);
	/* LINK a -> b, then REMOVE a: as nfs3_proc_link and _remove tell it */
	assert_int_equal(linkat(f.root, "a", f.root, "b", 0), 0);
	assert_int_equal(fstatat(f.root, "a", &st, 0), 0);
	fh_index_moved(f.x, &st, -1, NULL, f.root, "b");
	assert_int_equal(fstatat(f.root, "a", &st, 0), 0);
	assert_int_equal(unlinkat(f.root, "a", 0), 0);
	fh_index_removed(f.x, &st, f.root, "a");
	assert_int_equal(opens_to(&f, &h, "b"), 1);
	/* a name made outside the server, then the known one removed through it */
	assert_int_equal(mkdirat(f.root, "sub", 0755), 0);
	assert_int_equal(linkat(f.root, "b", f.root, "sub/c", 0), 0);
	assert_int_equal(fstatat(f.root, "b", &st, 0), 0);
	assert_int_equal(unlinkat(f.root, "b", 0), 0);
	fh_index_removed(f.x, &st, f.root, "b");
	fx_restart(&f);
	assert_int_equal(opens_to(&f, &h, "sub/c"), 1);
	fx_fini(&f);
}

/* A rename the server did not make: with stamps the export is searched and
 * the object found again (once: the index learns its place); without stamps
 * the handle is stale. A handle repeated while stale does not search again. */
static void renames_outside(void **state)
{
	int stamps = *(const int *)*state;
	struct fh_index_stats s0, s1;
	struct osdep_fh file, gone;
	struct fx f;

	fx_init(&f, stamps);
	assert_int_equal(mkdirat(f.root, "d", 0755), 0);
	assert_int_equal(mkdirat(f.root, "d/sub", 0755), 0);
	mkfile(&f, "d/sub/file");
	mkfile(&f, "gone");
	handle_of(&f, "d/sub/file", &file);
	handle_of(&f, "gone", &gone);
	assert_int_equal(renameat(f.root, "d", f.root, "x"), 0); /* a directory above it */
	assert_int_equal(renameat(f.root, "x/sub/file", f.root, "x/sub/renamed"), 0);
	assert_int_equal(unlinkat(f.root, "gone", 0), 0);
	fh_index_stats(f.x, &s0);
	if (stamps) {
		assert_int_equal(opens_to(&f, &file, "x/sub/renamed"), 1);
		assert_int_equal(opens_to(&f, &file, "x/sub/renamed"), 1);
		fh_index_stats(f.x, &s1);
		assert_int_equal(s1.walks - s0.walks, 1);
		assert_int_equal(s1.found - s0.found, 1);
		/* a removed file: one search, then remembered */
		assert_int_equal(opens_to(&f, &gone, "."), -ESTALE);
		assert_int_equal(opens_to(&f, &gone, "."), -ESTALE);
		fh_index_stats(f.x, &s0);
		assert_int_equal(s0.walks - s1.walks, 1);
		assert_int_equal(s0.found, s1.found);
	} else {
		assert_int_equal(opens_to(&f, &file, "x/sub/renamed"), -ESTALE);
		assert_int_equal(opens_to(&f, &gone, "."), -ESTALE);
		fh_index_stats(f.x, &s1);
		assert_int_equal(s1.walks, s0.walks); /* nothing could prove it: no search */
	}
	fx_fini(&f);
}

/* Make file "victim" and take its handle (*old); remove it (telling the
 * index when server) and make a new file, named "victim" again (same_name) or
 * "new"; until the new file gets the removed one's inode number (*name then
 * says which it is), at most 200 times, each with a fresh victim: other
 * processes making files may take a freed number first. */
static void victim_reused(struct fx *f, int server, int same_name, struct osdep_fh *old, char *name,
			  size_t len)
{
	struct stat was, now;
	char away[32];

	for (int i = 0; i < 200; i++) {
		mkfile(f, "victim");
		handle_of(f, "victim", old);
		assert_int_equal(fstatat(f->root, "victim", &was, 0), 0);
		if (server)
			fh_index_removed(f->x, &was, f->root, "victim");
		assert_int_equal(unlinkat(f->root, "victim", 0), 0);
		usleep(1000); /* a later birth time, on clocks of coarse steps */
		snprintf(name, len, "%s", same_name ? "victim" : "new");
		mkfile(f, name);
		assert_int_equal(fstatat(f->root, name, &now, 0), 0);
		if (now.st_ino == was.st_ino)
			return;
		snprintf(away, sizeof(away), "away%d", i);
		assert_int_equal(renameat(f->root, name, f->root, away), 0);
	}
	fail_msg("no inode number was re-used in 200 tries");
}

/* A file removed, through the server (which tells the index) or outside it,
 * and its inode number re-used: the old handle is stale, never the new file,
 * with or without stamps. Through the server that holds even under the same
 * name, and the new file's handle differs and opens to it; outside it, under
 * another name (the same name can only be told apart by stamps: see
 * stamps_tell_same_name_apart). */
static void reused_after_remove(int stamps, int server)
{
	struct osdep_fh old, fresh;
	char name[32];
	struct fx f;

	fx_init(&f, stamps);
	victim_reused(&f, server, server, &old, name, sizeof(name));
	assert_int_equal(opens_to(&f, &old, name), -ESTALE);
	if (server) {
		handle_of(&f, name, &fresh);
		assert_memory_not_equal(old.data, fresh.data, old.len);
		assert_int_equal(opens_to(&f, &fresh, name), 1);
		assert_int_equal(opens_to(&f, &old, name), -ESTALE);
	}
	fx_fini(&f);
}

static void reused_after_server_remove(void **state)
{
	reused_after_remove(*(const int *)*state, 1);
}

static void reused_after_outside_remove(void **state)
{
	reused_after_remove(*(const int *)*state, 0);
}

/* With stamps, a re-used inode number under the SAME name is told apart by
 * its birth time: stale. (Without stamps nothing can tell them apart; see
 * fh_index.h.) A handle whose stamp was altered is stale too. */
static void stamps_tell_same_name_apart(void **state)
{
	struct osdep_fh old, forged;
	char name[32];
	struct fx f;

	fx_init(&f, 1);
	mkfile(&f, "file");
	handle_of(&f, "file", &old);
	forged = old;
	forged.data[old.len - 1] ^= 1;
	assert_int_equal(opens_to(&f, &forged, "file"), -ESTALE);
	victim_reused(&f, 0, 1, &old, name, sizeof(name));
	assert_int_equal(opens_to(&f, &old, name), -ESTALE);
	fx_fini(&f);
}

/* An index entry lost (as a crash may lose the last writes): with stamps the
 * object is found again by a search, without them the handle is stale. */
static void lost_entry(void **state)
{
	int stamps = *(const int *)*state;
	struct osdep_fh file;
	struct stat st;
	struct fx f;

	fx_init(&f, stamps);
	assert_int_equal(mkdirat(f.root, "d", 0755), 0);
	mkfile(&f, "d/file");
	handle_of(&f, "d/file", &file);
	assert_int_equal(fstatat(f.root, "d/file", &st, 0), 0);
	fh_index_removed(f.x, &st, f.root, "d/file"); /* the entry goes; the file stays */
	fx_restart(&f);
	assert_int_equal(opens_to(&f, &file, "d/file"), stamps ? 1 : -ESTALE);
	fx_fini(&f);
}

/* Malformed handles are EINVAL; an index made for another directory (the
 * export's path changed, its id did not) starts afresh: old handles stale. */
static void malformed_and_other_root(void **state)
{
	struct osdep_fh fh, bad;
	struct fx f;
	char other[PATH_MAX];
	int fd;

	fx_init(&f, 1);
	mkfile(&f, "file");
	handle_of(&f, "file", &fh);
	bad = fh;
	bad.len--;
	assert_int_equal(fh_index_open_fh(f.x, &bad, OSDEP_OPEN_PATH), -EINVAL);
	bad = fh;
	bad.data[0] = 'X';
	assert_int_equal(fh_index_open_fh(f.x, &bad, OSDEP_OPEN_PATH), -EINVAL);
	assert_int_equal(fh_index_open_fh(f.x, &fh, (enum osdep_open_mode)7), -EINVAL);
	/* the same index file over another directory */
	fh_index_close(f.x);
	snprintf(other, sizeof(other), "%s/other", f.dir);
	assert_int_equal(mkdir(other, 0755), 0);
	fd = f.root;
	f.root = open(other, O_RDONLY | O_DIRECTORY);
	fx_open(&f);
	assert_int_equal(fh_index_open_fh(f.x, &fh, OSDEP_OPEN_PATH), -ESTALE);
	fh_index_close(f.x);
	close(f.root);
	f.root = fd;
	fx_open(&f);
	/* back on the first directory the index starts afresh again: the entry
	 * is lost, and the handle's birth time finds the file once more */
	assert_int_equal(opens_to(&f, &fh, "file"), 1);
	fx_fini(&f);
}

/* Two opens of one index (a reload opens the new exports before it closes
 * the old) share it; it stays usable until the last close. */
static void shared_by_reload(void **state)
{
	struct fh_index_params p;
	struct fh_index *second;
	struct osdep_fh fh;
	struct fx f;

	fx_init(&f, 1);
	mkfile(&f, "file");
	handle_of(&f, "file", &fh);
	p = (struct fh_index_params){
		.dir = f.index, .export_id = 0x1234, .root_fd = f.root, .stamps = 1};
	assert_int_equal(fh_index_open(&p, &second), 0);
	assert_ptr_equal(second, f.x);
	fh_index_close(f.x);
	f.x = second;
	assert_int_equal(opens_to(&f, &fh, "file"), 1);
	fx_fini(&f);
}

/* Whether a file removed here leaves its inode number to the next one made
 * (ext4 and XFS do, tmpfs does not): what the re-use tests need. */
static int inode_reuse_seen(const char *tmp)
{
	char dir[PATH_MAX], a[PATH_MAX + 8], b[PATH_MAX + 8];
	struct stat sa, sb;
	int seen = 0, fd;

	snprintf(dir, sizeof(dir), "%s/nfsrdma-reuse-XXXXXX", tmp);
	if (mkdtemp(dir) == NULL)
		return 0;
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	for (int i = 0; i < 20 && !seen; i++) {
		if ((fd = open(a, O_CREAT | O_WRONLY, 0600)) < 0)
			break;
		close(fd);
		stat(a, &sa);
		unlink(a);
		if ((fd = open(b, O_CREAT | O_WRONLY, 0600)) < 0)
			break;
		close(fd);
		seen = stat(b, &sb) == 0 && sb.st_ino == sa.st_ino;
		unlink(b);
	}
	rmdir(dir);
	return seen;
}

/* Each test runs with the birth times the file system gives (stamps) and
 * without (as where the OS gives none): its state says which. */
static const int stamps_on = 1, stamps_off = 0;
#define WITH(f, on)                                                                                \
	{                                                                                          \
#f "_" #on, f, NULL, NULL, (void *)&stamps_##on                                    \
	}

/* fh_index_test [stamps|reuse]: the tests that need neither; those that need
 * birth times; those that need a file system that re-uses inode numbers.
 * Where the need is not met the program skips as a whole (one TAP plan). */
int main(int argc, char **argv)
{
	const struct CMUnitTest plain[] = {
		WITH(round_trip, on),
		WITH(round_trip, off),
		WITH(renames_through_server, on),
		WITH(renames_through_server, off),
		WITH(hard_links, on),
		WITH(hard_links, off),
		WITH(renames_outside, off),
		WITH(lost_entry, off),
		cmocka_unit_test(malformed_and_other_root),
		cmocka_unit_test(shared_by_reload),
	};
	const struct CMUnitTest stamps[] = {
		WITH(renames_outside, on),
		WITH(lost_entry, on),
	};
	const struct CMUnitTest reuse[] = {
		WITH(reused_after_server_remove, on),
		WITH(reused_after_server_remove, off),
		WITH(reused_after_outside_remove, on),
		WITH(reused_after_outside_remove, off),
		cmocka_unit_test(stamps_tell_same_name_apart),
	};
	const char *tmp = getenv("TMPDIR"), *what = argc > 1 ? argv[1] : "";
	uint64_t stamp;
	int have_stamps;

	tmp = tmp && *tmp ? tmp : "/tmp";
	have_stamps = osdep_fh_stamp(AT_FDCWD, tmp, &stamp) == 0;
	if (strcmp(what, "stamps") == 0 || strcmp(what, "reuse") == 0) {
		if (!have_stamps) {
			printf("1..0 # SKIP the file system of %s records no birth times\n", tmp);
			return 0;
		}
		if (strcmp(what, "stamps") == 0)
			return cmocka_run_group_tests_name("fh_index stamps", stamps, NULL, NULL);
		if (!inode_reuse_seen(tmp)) {
			printf("1..0 # SKIP the file system of %s does not re-use inode numbers\n",
			       tmp);
			return 0;
		}
		return cmocka_run_group_tests_name("fh_index reuse", reuse, NULL, NULL);
	}
	return cmocka_run_group_tests_name("fh_index", plain, NULL, NULL);
}
