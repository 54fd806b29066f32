/*
 * backend_ceph_snap.c: directories of snapshots that a head knows by handle
 * alone (after a restart, or a handle another head gave). libcephfs names a
 * snapshot's directory to the MDS by its path from the .snap it was reached
 * through; one it found by number (ceph_ll_lookup_vino) has no such path,
 * and it names it by number, which the MDS takes for the live directory:
 * LOOKUP and READDIR in it would give the live entries. So such a directory
 * is reached the way a client walks to it before it is used. Its own .snap
 * lists every snapshot it is in: one taken of it by its name, one taken of
 * an ancestor as _NAME_INO. The first is reached through that .snap; for
 * the second, the directory's live parent is reached so in the snapshot,
 * and the directory found in it, up to the directory the snapshot was
 * taken of or the export's root. Where that fails (a directory moved or
 * removed since, a parent of more than LINK_SCAN_MAX entries, or one more
 * than LINK_DEPTH_MAX levels up), the directory is reached through its own
 * .snap as if the snapshot had been taken of it: the right entries, but
 * ".." is then that .snap.
 */
#include <dirent.h>
#include <errno.h>
#include <string.h>

#include "server/backend_ceph.h"

#define LINK_DEPTH_MAX 64
#define LINK_SCAN_MAX  4096

/* The attributes of directory in's "..", as libcephfs answers it, in *up:
 * 1 where that is in itself (the CephFS root), 0, or -errno. */
static int dotdot(struct ceph_mount_info *cm, Inode *in, struct ceph_statx *up)
{
	Inode *p;
	int r = ceph_ll_lookup(cm, in, "..", &p, up, CEPH_STATX_INO, 0, ceph_mount_perms(cm));

	if (r < 0)
		return r;
	ceph_ll_put(cm, p);
	return p == in;
}

/* Whether in, a directory of a snapshot, is linked to it: its ".." is then
 * its parent in the snapshot, or the .snap, which libcephfs knows; an
 * unlinked one's the MDS answers with the live parent (itself at the CephFS
 * root). */
static int linked(struct ceph_mount_info *cm, Inode *in)
{
	struct ceph_statx up;

	return dotdot(cm, in, &up) == 0 && up.stx_dev != CEPH_NOSNAP;
}

/* The name in dir of inode ino of snapshot snap, in *de, among its first
 * LINK_SCAN_MAX entries: 0, or -errno (-ESTALE: not there). */
static int find_name(struct ceph_mount_info *cm, Inode *dir, uint64_t ino, uint64_t snap,
		     struct dirent *de)
{
	struct ceph_dir_result *dr;
	struct ceph_statx stx;
	unsigned n = 0;
	int r;

	if ((r = ceph_ll_opendir(cm, dir, &dr, ceph_mount_perms(cm))) < 0)
		return r;
	while ((r = ceph_readdirplus_r(cm, dr, de, &stx, CEPH_STATX_INO, 0, NULL)) > 0 &&
	       (stx.stx_ino != ino || stx.stx_dev != snap) && ++n < LINK_SCAN_MAX)
		;
	ceph_ll_releasedir(cm, dr);
	return r < 0 ? r : r == 0 || n == LINK_SCAN_MAX ? -ESTALE : 0;
}

/* Look up name in dir, which must be inode ino of snapshot snap, into *in
 * for the reference *in held: 0, or -errno. */
static int link_by(struct ceph_mount_info *cm, Inode *dir, const char *name, uint64_t ino,
		   uint64_t snap, Inode **in)
{
	struct ceph_statx stx;
	Inode *found;
	int r;

	r = ceph_ll_lookup(cm, dir, name, &found, &stx, CEPH_STATX_INO, 0, ceph_mount_perms(cm));
	if (r < 0)
		return r;
	if (stx.stx_ino != ino || stx.stx_dev != snap) { /* changed meanwhile */
		ceph_ll_put(cm, found);
		return -ESTALE;
	}
	ceph_ll_put(cm, *in);
	*in = found;
	return 0;
}

/* Whether a name in a .snap is one of an ancestor's snapshots: _NAME_INO. */
static int inherited(const char *name)
{
	const char *u = strrchr(name, '_');

	return name[0] == '_' && u && u > name + 1 && u[1] &&
	       strspn(u + 1, "0123456789") == strlen(u + 1);
}

/* Whether an error of the walk up means that it cannot link this way (the
 * .snap is the way then), not that the cluster failed. */
static int no_way(int r)
{
	return r == -ESTALE || r == -ENOENT;
}

static int link_dir(struct ceph_export *ce, uint64_t ino, uint64_t snap, Inode **in,
		    unsigned depth);

/* Link *in, directory ino of snapshot snap, from its live parent as it is in
 * the snapshot: 0, or -errno. */
static int link_from_parent(struct ceph_export *ce, uint64_t ino, uint64_t snap, Inode **in,
			    unsigned depth)
{
	struct ceph_mount_info *cm = ce->cm;
	struct ceph_statx up;
	struct dirent de;
	Inode *head, *p;
	int r;

	if ((r = ceph_ll_lookup_vino(cm, (vinodeno_t){{ino}, {CEPH_NOSNAP}}, &head)) < 0)
		return r;
	r = dotdot(cm, head, &up);
	ceph_ll_put(cm, head);
	if (r != 0)
		return r < 0 ? r : -ESTALE; /* (the CephFS root) */
	if ((r = ceph_ll_lookup_vino(cm, (vinodeno_t){{up.stx_ino}, {snap}}, &p)) < 0)
		return r;
	if ((r = link_dir(ce, up.stx_ino, snap, &p, depth + 1)) == 0 &&
	    (r = find_name(cm, p, ino, snap, &de)) == 0)
		r = link_by(cm, p, de.d_name, ino, snap, in);
	ceph_ll_put(cm, p);
	return r;
}

/* Link *in, directory ino of snapshot snap, depth levels above the
 * directory a handle named. */
static int link_dir(struct ceph_export *ce, uint64_t ino, uint64_t snap, Inode **in, unsigned depth)
{
	struct ceph_mount_info *cm = ce->cm;
	struct dirent de;
	Inode *sd;
	int r;

	if (linked(cm, *in))
		return 0;
	if ((r = ceph_ll_lookup_vino(cm, (vinodeno_t){{ino}, {CE_SNAPDIR}}, &sd)) < 0)
		return r == -ENOENT ? -ESTALE : r;
	if ((r = find_name(cm, sd, ino, snap, &de)) == 0) {
		r = -ESTALE;
		if (inherited(de.d_name) && ino != ce->root_ino && depth < LINK_DEPTH_MAX)
			r = link_from_parent(ce, ino, snap, in, depth);
		if (no_way(r))
			r = link_by(cm, sd, de.d_name, ino, snap, in);
	}
	ceph_ll_put(cm, sd);
	return r;
}

/* See backend_ceph.h. */
int ce_snap_link(struct ce_obj *d)
{
	return link_dir(d->ce, d->stx.stx_ino, d->stx.stx_dev, &d->in, 0);
}
