/*
 * fh_index.h: portable file handles for the POSIX backend, for an OS without
 * name_to_handle_at/open_by_handle_at (illumos) or where the configuration
 * asks for them (server.handles = "portable").
 *
 * A handle names (inode number, generation, stamp). The generation is a
 * random number the index gave the object when it first handed out its
 * handle; the stamp is the object's birth time where the file system records
 * one (osdep_fh_stamp), else 0. A persistent index per export (LMDB, under
 * server.handle_index_dir) maps the inode number to the generation and to
 * where the object was last seen: its parent directory's inode number and its
 * name. Opening a handle walks those names from the export's root and checks
 * that the object found has the inode number (and the stamp) the handle
 * names. What survives what:
 *  - a restart of the server: everything (the index is on disk);
 *  - a rename, link or remove through the server: the index follows it (it
 *    keeps up to four names of a file with hard links; a removed object's
 *    entry goes, so a re-used inode number gets a new generation);
 *  - a rename outside the server: with stamps, the export is walked to find
 *    the inode number again and the stamp proves it is the same object; without
 *    stamps the handle is stale;
 *  - an inode number re-used after a delete outside the server: with stamps
 *    the stamp differs (stale); without them, only where the new object took
 *    the old one's name too is it taken for the old one (nothing tells them
 *    apart then, as on any file system without generation numbers);
 *  - a lost index entry (a crash of the machine loses the last seconds of
 *    writes, which are not waited for): with stamps, found again by walking;
 *    without them, stale.
 * Every answer is a handle of the same object or ESTALE, except the case said.
 */
#ifndef NFSRDMA_FH_INDEX_H
#define NFSRDMA_FH_INDEX_H

#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "common/base/osdep.h"

struct fh_index;

struct fh_index_params {
	const char *dir;    /* directory of the index files, made if missing */
	uint32_t export_id; /* names the index file: <dir>/<id>.lmdb */
	int root_fd;	    /* the export's root (duplicated, not taken) */
	int stamps;	    /* use osdep_fh_stamp (0: as if the OS gave none) */
	uint64_t walk_max;  /* entries one search of the export may visit */
};

/* Open (or make) the export's index. Two exports of one server reloaded side
 * by side share it. 0 or a negative errno, logged with what is wrong. */
int fh_index_open(const struct fh_index_params *p, struct fh_index **out);
/* Drop one reference; the last closes the index after writing it out. */
void fh_index_close(struct fh_index *x);

/* The handle of dirfd/name (name "", "." or "..": as osdep_fh_get), recorded
 * in the index. 0, -ENOSPC when the index is full, or another -errno. */
int fh_index_get(struct fh_index *x, int dirfd, const char *name, struct osdep_fh *fh);
/* Open what fh names (as osdep_fh_open): an fd, -ESTALE when it is gone or
 * cannot be proved to be the same object, -EINVAL when fh is malformed. */
int fh_index_open_fh(struct fh_index *x, const struct osdep_fh *fh, enum osdep_open_mode mode);

/* The server removed dir/name, which was st (as it was before): its last name
 * (or a directory) is forgotten with its entry; of a file with other names,
 * that name only (and when it was the last one known, another is found by a
 * search). */
void fh_index_removed(struct fh_index *x, const struct stat *st, int dir, const char *name);
/* The server renamed st from fromdir/from to todir/to, or (from NULL) made
 * todir/to another name of it (a hard link): it is found there now. */
void fh_index_moved(struct fh_index *x, const struct stat *st, int fromdir, const char *from,
		    int todir, const char *to);

struct fh_index_stats {
	uint64_t entries; /* objects in the index */
	uint64_t walks;	  /* searches of the export for a lost object */
	uint64_t found;	  /* of them, those that found it */
};
void fh_index_stats(struct fh_index *x, struct fh_index_stats *out);

#endif
