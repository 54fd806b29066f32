/*
 * backend_lock.c: the lock manager's hook into the backend (backend_lock.h).
 * On a POSIX export the handle is checked by be_resolve (MAC, export, client
 * rules) and the platform handle inside it opened again, so that the lock
 * owner gets an open file description of its own and its locks are the
 * kernel's (F_OFD_SETLK). Each backend opens it its own way
 * (be_ops.open_locked: be_posix_open_locked here, ce_open_locked for CephFS).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "common/base/log.h"
#include "server/backend_int.h"
#include "server/backend_lock.h"

/* The platform handle inside our handle (be_resolve checked it). */
static void platform_fh(const unsigned char *fh, struct osdep_fh *ofh)
{
	ofh->len = fh[1];
	memcpy(ofh->data, fh + BE_FH_HDR, ofh->len);
}

/* See backend_int.h: the errno an NFS status stands for, as backend_lock.h promises. */
int be_lock_errno(nfsstat3 st)
{
	switch (st) {
	case NFS3ERR_ACCES:
	case NFS3ERR_PERM:
		return -EACCES;
	case NFS3ERR_ISDIR:
	case NFS3ERR_INVAL:
		return -EINVAL;
	case NFS3ERR_JUKEBOX:
		return -EMFILE;
	case NFS3ERR_IO:
	case NFS3ERR_SERVERFAULT:
		return -EIO;
	default:
		return -ESTALE;
	}
}

/* Kernel locks on the open file description. */
static int posix_set(struct nfs_lock_file *f, const struct osdep_lock *l)
{
	return osdep_lock_set(f->fd, l);
}

static int posix_test(struct nfs_lock_file *f, struct osdep_lock *l)
{
	return osdep_lock_test(f->fd, l);
}

static void posix_close(struct nfs_lock_file *f)
{
	close(f->fd);
	f->fd = -1;
}

static const struct nfs_lock_ops posix_lock_ops = {
	.set = posix_set,
	.test = posix_test,
	.close = posix_close,
};

/* Whether the caller of req may lock o (backend_lock.h): what it may READ
 * (be_io_allowed: the owner, or a caller who may read or execute o, as
 * Linux's nfsd_permission allows a lock), with its identity taken on. */
static nfsstat3 may_lock(struct nfs_req *req, struct be_obj *o)
{
	struct nfs_client_rule rule;
	nfsstat3 st;

	be_req_rule(req, o->exp, &rule);
	if (rule.no_auth_nlm)
		return NFS3_OK;
	if ((st = be_cred_enter(req, o->exp)) != NFS3_OK)
		return st;
	st = be_io_allowed(o, be_req_uid(req, o->exp), 0);
	be_cred_leave(req);
	return st;
}

/* See backend_int.h (be_posix_ops.open_locked): the platform handle opened
 * again, read-write where the export and the file allow. */
int be_posix_open_locked(struct nfs_req *req, const nfs_fh3 *h, int rights,
			 struct nfs_lock_file *out)
{
	struct osdep_fh ofh;
	struct be_obj o;
	nfsstat3 st;
	int fd = -1, ro = 1;

	st = be_resolve(req, h, OSDEP_OPEN_PATH, 0, &o);
	if (st == NFS3_OK && !S_ISREG(o.st.st_mode))
		st = NFS3ERR_INVAL;
	if (st == NFS3_OK && rights && (st = may_lock(req, &o)) != NFS3_OK)
		be_release(req, &o);
	if (st == NFS3_OK) {
		ro = be_export_check(req, o.exp, BE_MODIFY) != NFS3_OK;
		platform_fh(o.fh, &ofh);
		if (!ro)
			fd = be_fh_open(o.exp, &ofh, OSDEP_OPEN_RDWR);
		if (ro || fd == -EACCES || fd == -EROFS || fd == -EPERM) {
			ro = 1;
			fd = be_fh_open(o.exp, &ofh, OSDEP_OPEN_READ);
		}
		out->dev = o.st.st_dev;
		out->ino = o.st.st_ino;
		be_release(req, &o);
	}
	if (st != NFS3_OK)
		return be_lock_errno(st);
	if (fd < 0)
		return fd == -ENOENT ? -ESTALE : fd;
	out->ops = &posix_lock_ops;
	out->fd = fd;
	out->priv = NULL;
	out->writable = !ro;
	return 0;
}

/* See backend_lock.h: the export's backend opens it its own way. */
int nfs_backend_open_locked(struct nfs_backend *be, const struct nfs_lock_call *c,
			    const struct rpc_req *call, int rights, struct nfs_lock_file *out)
{
	nfs_fh3 h = {.data = {.data_len = (u_int)c->fhlen, .data_val = (char *)c->fh}};
	struct nfs_req req;

	nfs_req_from_rpc(be, call, &req);
	req.nowait = 0; /* never on an event loop (see backend_lock.h) */
	return c->exp == NULL		  ? -ESTALE
	       : c->exp->ops->open_locked ? c->exp->ops->open_locked(&req, &h, rights, out)
					  : -EOPNOTSUPP;
}

/* See backend_lock.h. */
int nfs_backend_lock_enter(struct nfs_backend *be, struct call_gate *turn, const void *fh,
			   size_t fhlen, const struct rpc_req *call, struct nfs_lock_call *c)
{
	nfs_fh3 h = {.data = {.data_len = (u_int)fhlen, .data_val = (char *)fh}};
	int rc;

	nfs_backend_enter(be);
	rc = call_gate_in(turn, 1, __atomic_load_n(&be->storage_timeout_ns, __ATOMIC_RELAXED),
			  fh ? 0 : CALL_GATE_OWN);
	if (rc != 0) {
		nfs_backend_leave(be);
		return rc;
	}
	*c = (struct nfs_lock_call){.fh = fh, .fhlen = fhlen};
	c->exp = fhlen && fhlen <= NFS3_FHSIZE ? be_export_of_fh(be, &h) : NULL;
	if (c->exp && call && c->exp->conf.integrity_required && !call->integrity_ok) {
		log_debug("export '%s': lock call without integrity protection refused",
			  c->exp->path);
		rc = -EACCES;
	} else if (c->exp) {
		rc = be_gate_in(be, &c->exp->gate, 0);
	}
	if (rc != 0) {
		call_gate_out(turn, 0);
		nfs_backend_leave(be);
	}
	return rc;
}

/* See backend_lock.h. */
void nfs_backend_lock_leave(struct nfs_backend *be, struct call_gate *turn, struct nfs_lock_call *c)
{
	if (c->exp)
		call_gate_out(&c->exp->gate, 1);
	call_gate_out(turn, 1);
	nfs_backend_leave(be);
}

/* See backend_lock.h. */
int nfs_backend_export_path(struct nfs_backend *be, uint32_t id, char **path)
{
	struct export *e;
	int rc = -ESTALE;

	nfs_backend_enter(be);
	if ((e = be_export_by_id(be, id)) != NULL)
		rc = (*path = strdup(e->path)) ? 0 : -ENOMEM;
	nfs_backend_leave(be);
	return rc;
}
