/*
 * backend_ceph_files.c: the files a CephFS export's READ and WRITE use.
 *
 * libcephfs flushes a file's dirty data and gives capabilities back when the
 * last open reference of a mode goes, so opening the file for each call cost a
 * flush per WRITE and fresh capabilities per READ. What the server opens as
 * itself (for the file's owner, and READ for those who may only execute it)
 * is the same whoever asked, so it stays open in the export's cache (the fd
 * cache of the POSIX backend, fhcache.h, holding Fh pointers), as knfsd keeps
 * its files: at most CE_FILES_MAX idle ones, each closed after CE_FILES_IDLE_MS
 * without a call by a sweeper thread, when its name goes (REMOVE, RENAME over
 * it) and at the unmount. Anyone else opens the file as themselves for the
 * call alone, so the cluster checks their access.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/base/log.h"
#include "server/backend_ceph.h"

/* The ceiling on idle open files per export, and how long one stays idle. */
#define CE_FILES_MAX	 64
#define CE_FILES_IDLE_MS 2000

/* The cache's key for an inode: its number and snapshot id. */
#define CE_KEY_LEN 16

static void file_key(const struct ceph_statx *stx, unsigned char key[CE_KEY_LEN])
{
	memcpy(key, &stx->stx_ino, 8);
	memcpy(key + 8, &stx->stx_dev, 8);
}

/* The cache's closer. */
static void file_close(void *arg, int fd, void *obj)
{
	struct ceph_export *ce = arg;

	(void)fd;
	ceph_ll_close(ce->cm, obj);
}

/* The sweeper: every second, close what has been idle CE_FILES_IDLE_MS. */
static void *sweep_main(void *arg)
{
	struct ceph_export *ce = arg;
	struct timespec until;

	pthread_mutex_lock(&ce->lock);
	while (!ce->sweep_stop) {
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += 1;
		pthread_cond_timedwait(&ce->sweep_cond, &ce->lock, &until);
		if (ce->sweep_stop)
			break;
		pthread_mutex_unlock(&ce->lock);
		fhcache_expire(ce->files, CE_FILES_IDLE_MS);
		pthread_mutex_lock(&ce->lock);
	}
	pthread_mutex_unlock(&ce->lock);
	return NULL;
}

/* See backend_ceph.h. */
void ce_files_start(struct ceph_export *ce)
{
	ce->files = fhcache_create_with(CE_FILES_MAX, file_close, ce);
	if (ce->files && pthread_create(&ce->sweeper, NULL, sweep_main, ce) == 0)
		return;
	log_warn("cannot keep CephFS files open between calls: each READ and WRITE opens its own");
	fhcache_destroy(ce->files);
	ce->files = NULL;
}

/* See backend_ceph.h. */
void ce_files_stop(struct ceph_export *ce)
{
	if (ce->files == NULL)
		return;
	pthread_mutex_lock(&ce->lock);
	ce->sweep_stop = 1;
	pthread_cond_signal(&ce->sweep_cond);
	pthread_mutex_unlock(&ce->lock);
	pthread_join(ce->sweeper, NULL);
	fhcache_destroy(ce->files);
	ce->files = NULL;
}

/* See backend_ceph.h. */
size_t ce_files_count(struct ceph_export *ce)
{
	return ce->files ? fhcache_count(ce->files) : 0;
}

/* o opened by the server itself: from the cache, else opened and cached. */
static nfsstat3 open_own(struct ce_obj *o, int write, struct ce_file *f)
{
	struct fhcache *c = o->ce->files;
	unsigned char key[CE_KEY_LEN];
	int e;

	file_key(&o->stx, key);
	if (c && (f->ent = fhcache_get(c, key, sizeof(key), write)) != NULL) {
		f->fh = f->ent->obj;
		return NFS3_OK;
	}
	e = ceph_ll_open(o->ce->cm, o->in, write ? O_WRONLY : O_RDONLY, &f->fh,
			 ceph_mount_perms(o->ce->cm));
	if (e < 0)
		return nfs3_errno_to_stat(-e);
	if (c == NULL)
		return NFS3_OK;
	/* another thread's entry if it got there first (ours is closed) */
	f->ent = fhcache_insert_obj(c, key, sizeof(key), write, f->fh);
	f->fh = f->ent ? f->ent->obj : NULL;
	return f->ent ? NFS3_OK : NFS3ERR_JUKEBOX;
}

/* See backend_ceph.h. The owner always may (as knfsd and the POSIX backend
 * allow, for writes to a file created read-only), and so may READ whoever may
 * execute the file: then the server's own identity opens it. */
nfsstat3 ce_file_open(struct ce_obj *o, int write, struct ce_file *f)
{
	int e;

	f->fh = NULL;
	f->ent = NULL;
	if (!S_ISREG(o->st.st_mode))
		return S_ISDIR(o->st.st_mode) ? NFS3ERR_ISDIR : NFS3ERR_INVAL;
	if (o->st.st_uid != o->uid) {
		e = ceph_ll_open(o->ce->cm, o->in, write ? O_WRONLY : O_RDONLY, &f->fh, o->perm);
		if (e >= 0)
			return NFS3_OK;
		f->fh = NULL;
		if (write || ce_may(o, X_OK) != 1)
			return nfs3_errno_to_stat(-e);
	}
	return open_own(o, write, f);
}

/* See backend_ceph.h. */
void ce_file_close(struct ce_obj *o, struct ce_file *f)
{
	if (f->ent)
		fhcache_put(o->ce->files, f->ent);
	else if (f->fh)
		ceph_ll_close(o->ce->cm, f->fh);
	f->ent = NULL;
	f->fh = NULL;
}

/* See backend_ceph.h. */
void ce_files_lookup(struct ce_obj *d, const char *name, Inode **in, struct ceph_statx *stx)
{
	*in = NULL;
	if (ce_files_count(d->ce) > 0 &&
	    ceph_ll_lookup(d->ce->cm, d->in, name, in, stx, CEPH_STATX_INO, 0, d->perm) < 0)
		*in = NULL;
}

/* See backend_ceph.h. */
void ce_files_forget(struct ceph_export *ce, Inode *in, const struct ceph_statx *stx, int gone)
{
	unsigned char key[CE_KEY_LEN];

	if (in == NULL)
		return;
	if (gone) {
		file_key(stx, key);
		fhcache_forget(ce->files, key, sizeof(key));
	}
	ceph_ll_put(ce->cm, in);
}
