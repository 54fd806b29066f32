/*
 * fuse_fs_silly.c: "silly rename", as the Linux NFS client does it. NFS has no
 * open state: a file removed on the server is gone, and its handle is stale.
 * So a name that is unlinked (or renamed over) while the file is open here is
 * renamed instead to a hidden name, .nfsXXXXXXXXXXXXXXXXYYYYYYYY (the file id
 * and a counter), in the same directory; the last close removes it, and so
 * does the unmount for what is left. Open descriptors keep reading and
 * writing the file meanwhile, and fstat reports one link less than the server
 * counts (0 for a file that had one name).
 */
#include <stdio.h>
#include <string.h>

#include "client/fuse_fs.h"
#include "common/base/log.h"

/* The node of fh if the kernel knows it (no new node, no count raised). */
static struct nfsfs_node *node_find_locked(struct nfsfs *fs, const struct nfs3c_fh *fh)
{
	struct nfsfs_node *n = fs->nodes[nfs3c_fh_hash(fh) % NFSFS_NODE_BUCKETS];

	while (n && !nfs3c_fh_equal(&n->fh, fh))
		n = n->next;
	return n;
}

/* See fuse_fs.h: one more open file on n. */
void nfsfs_open_ref(struct nfsfs *fs, struct nfsfs_node *n)
{
	pthread_mutex_lock(&fs->lock);
	n->nopen++;
	fs->nopen++;
	pthread_mutex_unlock(&fs->lock);
}

/* Remove n's hidden name, as whoever hid it. */
static int silly_remove(struct nfsfs *fs, const struct nfsfs_silly *s)
{
	int rc = nfs3c_remove(fs->c, &s->cred, &s->dir, s->name);

	if (rc && rc != -ENOENT)
		log_warn("cannot remove %s, a file unlinked while open: %s", s->name,
			 strerror(-rc));
	return rc == -ENOENT ? 0 : rc;
}

/* See fuse_fs.h: one open file less on n; the last one removes its hidden name. */
int nfsfs_open_unref(struct nfsfs *fs, struct nfsfs_node *n)
{
	struct nfsfs_silly s;
	int hidden = 0;

	pthread_mutex_lock(&fs->lock);
	fs->nopen--;
	if (--n->nopen == 0 && n->silly.name[0]) {
		s = n->silly;
		n->silly.name[0] = '\0';
		hidden = 1;
	}
	pthread_mutex_unlock(&fs->lock);
	return hidden ? silly_remove(fs, &s) : 0;
}

/* A hidden name in dir that nothing has yet. */
static int silly_name(struct nfsfs *fs, const struct rpc_cred *cr, const struct nfs3c_fh *dir,
		      uint64_t fileid, char *name, size_t len)
{
	struct nfs3c_fh fh;
	int rc;

	for (int tries = 0; tries < 64; tries++) {
		unsigned seq = __atomic_add_fetch(&fs->silly_seq, 1, __ATOMIC_RELAXED);

		snprintf(name, len, ".nfs%016llx%08x", (unsigned long long)fileid, seq);
		rc = nfs3c_lookup(fs->c, cr, dir, name, &fh, NULL);
		if (rc == -ENOENT)
			return 0;
		if (rc)
			return rc;
	}
	return -EBUSY;
}

/* See fuse_fs.h. */
int nfsfs_silly_rename(struct nfsfs *fs, const struct rpc_cred *cr, const struct nfs3c_fh *dir,
		       const char *name, const struct nfs3c_fh *keep)
{
	struct nfsfs_silly s;
	struct nfsfs_node *n;
	struct nfs3c_fh fh;
	fattr3 a;
	int rc, open, tid;

	if (__atomic_load_n(&fs->nopen, __ATOMIC_RELAXED) == 0)
		return 0;
	rc = nfs3c_lookup(fs->c, cr, dir, name, &fh, &a);
	if (rc || a.type == NF3DIR || (keep && nfs3c_fh_equal(keep, &fh)))
		return rc == -ENOENT ? 0 : rc;
	pthread_mutex_lock(&fs->lock);
	n = node_find_locked(fs, &fh);
	open = n && n->nopen > 0;
	if (open && n->silly.name[0])
		rc = strcmp(n->silly.name, name) == 0 ? -EBUSY : 0;
	pthread_mutex_unlock(&fs->lock);
	if (!open || rc || (n && n->silly.name[0]))
		return rc;
	/* not given up for a killed caller: a RENAME sent and then abandoned
	 * could leave a hidden name that nobody removes */
	tid = nfs3c_caller_set(0);
	rc = silly_name(fs, cr, dir, a.fileid, s.name, sizeof(s.name));
	if (rc == 0)
		rc = nfs3c_rename(fs->c, cr, dir, name, dir, s.name);
	if (rc != 0) {
		nfs3c_caller_set(tid);
		return rc;
	}
	s.dir = *dir;
	s.cred = *cr;
	log_debug("%s is open: renamed to %s until its last close", name, s.name);
	pthread_mutex_lock(&fs->lock);
	if (n->nopen > 0) {
		n->silly = s;
		s.name[0] = '\0';
	}
	pthread_mutex_unlock(&fs->lock);
	/* closed meanwhile: nobody is left to remove it */
	if (s.name[0])
		rc = silly_remove(fs, &s);
	nfs3c_caller_set(tid);
	return rc != 0 ? rc : 1;
}

/* See fuse_fs.h: at unmount, the hidden names of files still open. */
void nfsfs_silly_cleanup(struct nfsfs *fs)
{
	for (unsigned b = 0; b < NFSFS_NODE_BUCKETS; b++) {
		for (struct nfsfs_node *n = fs->nodes[b]; n; n = n->next) {
			if (n->silly.name[0]) {
				silly_remove(fs, &n->silly);
				n->silly.name[0] = '\0';
			}
		}
	}
}

/* See fuse_fs.h: the link count as the opener sees it. */
nlink_t nfsfs_nlink(struct nfsfs *fs, struct nfsfs_node *n, const fattr3 *a)
{
	int hidden;

	pthread_mutex_lock(&fs->lock);
	hidden = n->silly.name[0] != '\0';
	pthread_mutex_unlock(&fs->lock);
	return hidden && a->nlink > 0 ? a->nlink - 1 : a->nlink;
}
