/*
 * backend_fh.c: file handles. A handle is our 8-byte header (version, length
 * of the platform handle, zeros, export id), the platform's persistent handle
 * and a MAC of both under the server's handle key; every call checks each
 * part: a malformed handle is BADHANDLE, one whose MAC does not match (forged,
 * or made under another key), naming an unknown export or a vanished object is
 * STALE. The MAC is what keeps clients inside their exports: platform handles
 * are easy to forge (an ext4 root directory's is inode 2, generation 0), and a
 * forged one would reach any object on the export's file system.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <openssl/crypto.h>

#include "common/base/log.h"
#include "server/backend_int.h"
#include "server/backend_lock.h"
#include "server/fh_index.h"

/* See backend_int.h. */
int be_fh_get(const struct export *e, int dirfd, const char *name, struct osdep_fh *ofh)
{
	return e->fhx ? fh_index_get(e->fhx, dirfd, name, ofh) : osdep_fh_get(dirfd, name, ofh);
}

/* See backend_int.h. */
int be_fh_open(const struct export *e, const struct osdep_fh *ofh, enum osdep_open_mode mode)
{
	return e->fhx ? fh_index_open_fh(e->fhx, ofh, mode) : osdep_fh_open(e->root_fd, ofh, mode);
}

/* See backend_int.h. */
void be_fh_removed(const struct export *e, const struct stat *st, int dir, const char *name)
{
	if (e->fhx)
		fh_index_removed(e->fhx, st, dir, name);
}

/* See backend_int.h. */
void be_fh_moved(const struct export *e, const struct stat *st, int fromdir, const char *from,
		 int todir, const char *to)
{
	if (e->fhx)
		fh_index_moved(e->fhx, st, fromdir, from, todir, to);
}

/* The MAC of a handle's first len bytes. */
static int fh_mac(const struct integrity_key *k, const unsigned char *fh, size_t len,
		  uint8_t mac[INTEGRITY_MIC_LEN])
{
	struct integrity_mic m;

	if (integrity_mic_begin(k, &m) < 0)
		return -ENOMEM;
	if (integrity_mic_update(&m, fh, len) < 0) {
		integrity_mic_abort(&m);
		return -ENOMEM;
	}
	return integrity_mic_final(&m, mac) < 0 ? -ENOMEM : 0;
}

/* See backend_int.h. */
int be_fh_encode(const struct export *e, const struct osdep_fh *ofh, unsigned char *buf,
		 size_t *len)
{
	uint8_t mac[INTEGRITY_MIC_LEN];

	if (ofh->len == 0 || ofh->len > NFS3_FHSIZE - BE_FH_HDR - BE_FH_MAC)
		return -EOVERFLOW;
	buf[0] = BE_FH_VERSION;
	buf[1] = (unsigned char)ofh->len;
	buf[2] = buf[3] = 0;
	buf[4] = (unsigned char)(e->id >> 24);
	buf[5] = (unsigned char)(e->id >> 16);
	buf[6] = (unsigned char)(e->id >> 8);
	buf[7] = (unsigned char)e->id;
	memcpy(buf + BE_FH_HDR, ofh->data, ofh->len);
	if (fh_mac(e->fh_key, buf, BE_FH_HDR + ofh->len, mac) < 0)
		return -ENOMEM;
	memcpy(buf + BE_FH_HDR + ofh->len, mac, BE_FH_MAC);
	*len = BE_FH_HDR + ofh->len + BE_FH_MAC;
	return 0;
}

/* A handle's header: its export id and the backend's part (ofh); the MAC is
 * not checked here. NFS3_OK or BADHANDLE. */
static nfsstat3 fh_split(const nfs_fh3 *fh, uint32_t *id, struct osdep_fh *ofh)
{
	const unsigned char *p = (const unsigned char *)fh->data.data_val;
	size_t len = fh->data.data_len;

	if (p == NULL || len <= BE_FH_HDR + BE_FH_MAC || len > NFS3_FHSIZE ||
	    p[0] != BE_FH_VERSION || p[1] != len - BE_FH_HDR - BE_FH_MAC || p[2] != 0 || p[3] != 0)
		return NFS3ERR_BADHANDLE;
	*id = (uint32_t)p[4] << 24 | (uint32_t)p[5] << 16 | (uint32_t)p[6] << 8 | p[7];
	ofh->len = (uint32_t)(len - BE_FH_HDR - BE_FH_MAC);
	memcpy(ofh->data, p + BE_FH_HDR, ofh->len);
	return NFS3_OK;
}

/* A split handle's MAC: NFS3_OK, STALE (wrong) or JUKEBOX. */
static nfsstat3 fh_verify(const struct integrity_key *k, const nfs_fh3 *fh)
{
	const unsigned char *p = (const unsigned char *)fh->data.data_val;
	size_t len = fh->data.data_len;
	uint8_t mac[INTEGRITY_MIC_LEN];

	if (fh_mac(k, p, len - BE_FH_MAC, mac) < 0)
		return NFS3ERR_JUKEBOX;
	if (CRYPTO_memcmp(mac, p + len - BE_FH_MAC, BE_FH_MAC) != 0) {
		log_debug("a handle with a wrong MAC: forged, or from another handle key");
		return NFS3ERR_STALE;
	}
	return NFS3_OK;
}

/* See backend_int.h. */
nfsstat3 be_fh_parse(const struct integrity_key *k, const nfs_fh3 *fh, uint32_t *id,
		     struct osdep_fh *ofh)
{
	nfsstat3 st = fh_split(fh, id, ofh);

	return st == NFS3_OK ? fh_verify(k, fh) : st;
}

/* See backend_int.h. */
struct export *be_export_of_fh(struct nfs_backend *be, const nfs_fh3 *fh)
{
	uint32_t id = nfs_backend_fh_export(fh->data.data_val, fh->data.data_len);

	return id ? be_export_by_id(be, id) : NULL;
}

/* See backend_lock.h. */
uint32_t nfs_backend_fh_export(const void *fh, size_t len)
{
	const unsigned char *p = fh;

	if (p == NULL || len <= BE_FH_HDR + BE_FH_MAC || len > NFS3_FHSIZE || p[0] != BE_FH_VERSION)
		return 0;
	return (uint32_t)p[4] << 24 | (uint32_t)p[5] << 16 | (uint32_t)p[6] << 8 | p[7];
}

/* An fd of the given kind for the handle: from the cache, else opened. On an
 * event loop (nowait) only from the cache: opening by handle may read the
 * inode from storage, so the call goes to a worker, which caches the fd. */
static nfsstat3 open_kind(struct nfs_req *req, struct be_obj *o, const struct osdep_fh *ofh,
			  enum osdep_open_mode kind, struct fhc_entry **out)
{
	struct fhcache *c = req->be->fds;
	int fd;

	*out = fhcache_get(c, o->fh, o->fhlen, kind);
	if (*out)
		return NFS3_OK;
	if (req->nowait) {
		req->would_block = 1;
		return NFS3ERR_JUKEBOX;
	}
	fd = be_fh_open(o->exp, ofh, kind);
	if (fd < 0) {
		if (fd == -EINVAL || fd == -EOVERFLOW)
			return NFS3ERR_BADHANDLE;
		if (fd == -EMFILE || fd == -ENFILE || fd == -ENOMEM)
			return NFS3ERR_JUKEBOX;
		if (fd == -ESTALE || fd == -ENOENT || fd == -EOPNOTSUPP || fd == -EPERM)
			return NFS3ERR_STALE;
		return nfs3_errno_to_stat(-fd);
	}
	*out = fhcache_insert(c, o->fh, o->fhlen, kind, fd);
	return *out ? NFS3_OK : NFS3ERR_JUKEBOX;
}

/* Check the object is alive and on the export's file system. */
static nfsstat3 check_alive(struct nfs_req *req, struct be_obj *o)
{
	if (fstat(o->fd, &o->st) < 0)
		return NFS3ERR_STALE;
	if (o->st.st_dev != o->exp->dev || o->st.st_nlink == 0) {
		fhcache_forget(req->be->fds, o->fh, o->fhlen);
		return NFS3ERR_STALE;
	}
	return NFS3_OK;
}

/* Open the regular file a PATH-resolved o names for READ/RDWR. */
static nfsstat3 reopen_file(struct nfs_req *req, struct be_obj *o, const struct osdep_fh *ofh,
			    enum osdep_open_mode kind)
{
	struct fhc_entry *ent;
	nfsstat3 st;

	if (!S_ISREG(o->st.st_mode))
		return S_ISDIR(o->st.st_mode) ? NFS3ERR_ISDIR : NFS3ERR_INVAL;
	st = open_kind(req, o, ofh, kind, &ent);
	if (st != NFS3_OK)
		return st;
	fhcache_put(req->be->fds, o->ent);
	o->ent = ent;
	o->fd = ent->fd;
	return NFS3_OK;
}

/* See backend_int.h. */
nfsstat3 be_resolve(struct nfs_req *req, const nfs_fh3 *fh, enum osdep_open_mode kind,
		    unsigned flags, struct be_obj *o)
{
	struct osdep_fh ofh;
	uint32_t id;
	nfsstat3 st;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	if ((st = fh_split(fh, &id, &ofh)) != NFS3_OK)
		return st;
	o->fhlen = fh->data.data_len;
	memcpy(o->fh, fh->data.data_val, o->fhlen);
	/* The same bytes in the fd cache had their MAC checked when they went in
	 * (only open_kind puts them there, after this check): one HMAC less. */
	o->ent = fhcache_get(req->be->fds, o->fh, o->fhlen, OSDEP_OPEN_PATH);
	if (o->ent == NULL && (st = fh_verify(&req->be->fh_key, fh)) != NFS3_OK)
		return st;
	if ((o->exp = be_export_by_id(req->be, id)) == NULL)
		st = NFS3ERR_STALE;
	else if ((st = be_export_check(req, o->exp, flags)) == NFS3_OK && o->ent == NULL)
		st = open_kind(req, o, &ofh, OSDEP_OPEN_PATH, &o->ent);
	if (st != NFS3_OK) {
		be_release(req, o);
		return st;
	}
	o->fd = o->ent->fd;
	st = check_alive(req, o);
	if (st == NFS3_OK && kind != OSDEP_OPEN_PATH)
		st = reopen_file(req, o, &ofh, kind);
	if (st != NFS3_OK)
		be_release(req, o);
	return st;
}

/* See backend_int.h. */
void be_release(struct nfs_req *req, struct be_obj *o)
{
	if (o->ent)
		fhcache_put(req->be->fds, o->ent);
	o->ent = NULL;
	o->fd = -1;
}

/* See backend_int.h. */
nfsstat3 be_fh_make(const struct export *e, int dirfd, const char *name, nfs_fh3 *out)
{
	unsigned char buf[NFS3_FHSIZE];
	struct osdep_fh ofh;
	size_t len;
	int r;

	if ((r = be_fh_get(e, dirfd, name, &ofh)) < 0 || (r = be_fh_encode(e, &ofh, buf, &len)) < 0)
		return r == -EOVERFLOW ? NFS3ERR_SERVERFAULT : nfs3_errno_to_stat(-r);
	if ((out->data.data_val = malloc(len)) == NULL)
		return NFS3ERR_JUKEBOX;
	memcpy(out->data.data_val, buf, len);
	out->data.data_len = (u_int)len;
	return NFS3_OK;
}

/* See backend_int.h. */
void be_post_fh(const struct export *e, int dirfd, const char *name, post_op_fh3 *out)
{
	out->handle_follows = be_fh_make(e, dirfd, name, &out->post_op_fh3_u.handle) == NFS3_OK;
}

/* See backend_int.h. */
nfsstat3 be_io_allowed(const struct be_obj *o, uid_t uid, int write)
{
	int r;

	if (o->st.st_uid == uid)
		return NFS3_OK;
	r = be_access(o->fd, &o->st, write ? PERM_W : PERM_R);
	if (r < 0 && !write && be_access(o->fd, &o->st, PERM_X) == 0)
		r = 0;
	return r < 0 ? nfs3_errno_to_stat(-r) : NFS3_OK;
}

/* See backend_int.h. A mount path names an export exactly (slashes at the
 * end do not matter). */
struct export *be_export_by_path(struct nfs_backend *be, const char *path)
{
	size_t len = strlen(path);

	while (len > 1 && path[len - 1] == '/')
		len--;
	for (size_t i = 0; i < be->nexports; i++)
		if (strlen(be->exports[i].path) == len &&
		    memcmp(be->exports[i].path, path, len) == 0)
			return &be->exports[i];
	return NULL;
}
