/*
 * backend_ceph_io.c: the CephFS backend's READ, WRITE and COMMIT, on the
 * files backend_ceph_files.c opens; an export's async rule skips the syncs.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/backend_ceph.h"

/* A buffer for READ data: the transport's if it offers one, else malloc. */
static char *read_buf(struct nfs_req *req, size_t len)
{
	return req->get_buf ? req->get_buf(req->buf_opaque, len) : malloc(len);
}

/* READ body: up to count bytes from the file. */
static nfsstat3 ce_read_data(struct nfs_req *req, struct ce_obj *o, const READ3args *a,
			     READ3resok *ok)
{
	size_t count = a->count < req->be->max_io ? a->count : req->be->max_io, done = 0;
	struct ce_file f;
	nfsstat3 st;
	int n = 0;

	if (a->offset > INT64_MAX)
		return NFS3ERR_INVAL;
	if ((st = ce_file_open(o, 0, &f)) != NFS3_OK)
		return st;
	if (count && (ok->data.data_val = read_buf(req, count)) == NULL)
		st = NFS3ERR_JUKEBOX;
	while (st == NFS3_OK && done < count) {
		n = ceph_ll_read(o->ce->cm, f.fh, (int64_t)(a->offset + done), count - done,
				 ok->data.data_val + done);
		if (n < 0)
			st = nfs3_errno_to_stat(-n);
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	ce_file_close(o, &f);
	if (st != NFS3_OK)
		return st;
	ok->data.data_len = (u_int)done;
	ok->count = (count3)done;
	ok->eof = done < count || a->offset + done >= (uint64_t)o->st.st_size;
	return NFS3_OK;
}

/* See backend_ceph.h. READ: up to count bytes (capped at the max I/O size). */
void ce_proc_read(struct nfs_req *req, void *argp, void *resp)
{
	READ3args *a = argp;
	READ3res *r = resp;
	READ3resok *ok = &r->READ3res_u.resok;
	struct ce_obj o;

	if ((r->status = ce_resolve(req, &a->file, 0, &o)) != NFS3_OK)
		return;
	r->status = ce_read_data(req, &o, a, ok);
	if (r->status != NFS3_OK && ok->data.data_val) {
		if (!req->get_buf)
			free(ok->data.data_val);
		ok->data.data_val = NULL;
		ok->data.data_len = 0;
	}
	ce_post_attr(&o, &ok->file_attributes);
	ce_release(&o);
}

/* WRITE body: write all, then make it stable as asked. */
static nfsstat3 ce_write_data(struct nfs_req *req, struct ce_obj *o, const WRITE3args *a,
			      WRITE3resok *ok)
{
	struct ce_file f;
	size_t done = 0;
	nfsstat3 st;
	int n;

	if (a->count > a->data.data_len || a->count > req->be->max_io)
		return NFS3ERR_INVAL;
	if (a->offset > INT64_MAX || a->count > INT64_MAX - a->offset)
		return NFS3ERR_FBIG;
	if (o->st.st_uid != o->uid && (st = ce_check(o, W_OK)) != NFS3_OK)
		return st;
	if ((st = ce_file_open(o, 1, &f)) != NFS3_OK)
		return st;
	while (st == NFS3_OK && done < a->count) {
		n = ceph_ll_write(o->ce->cm, f.fh, (int64_t)(a->offset + done), a->count - done,
				  a->data.data_val + done);
		if (n <= 0)
			st = n < 0 ? nfs3_errno_to_stat(-n) : NFS3ERR_IO;
		else
			done += (size_t)n;
	}
	/* an async export says the data is stable without making it so */
	if (st == NFS3_OK && a->stable != UNSTABLE && !o->rule.async &&
	    (n = ceph_ll_fsync(o->ce->cm, f.fh, a->stable == DATA_SYNC)) < 0)
		st = nfs3_errno_to_stat(-n);
	ce_file_close(o, &f);
	if (st != NFS3_OK)
		return st;
	ok->count = a->count;
	ok->committed = a->stable == UNSTABLE || a->stable == DATA_SYNC ? a->stable : FILE_SYNC;
	memcpy(ok->verf, req->be->write_verf, NFS3_WRITEVERFSIZE);
	return NFS3_OK;
}

/* See backend_ceph.h. WRITE: args->data may point into a transport buffer;
 * it is only read. */
void ce_proc_write(struct nfs_req *req, void *argp, void *resp)
{
	WRITE3args *a = argp;
	WRITE3res *r = resp;
	struct ce_obj o;

	if ((r->status = ce_resolve(req, &a->file, BE_MODIFY, &o)) != NFS3_OK)
		return;
	r->status = ce_write_data(req, &o, a, &r->WRITE3res_u.resok);
	ce_wcc(&o, &r->WRITE3res_u.resok.file_wcc);
	ce_release(&o);
}

/* See backend_ceph.h. COMMIT: earlier UNSTABLE writes of this head reach the
 * cluster's disks (the whole file, whatever the range), for a caller who may
 * write it. */
void ce_proc_commit(struct nfs_req *req, void *argp, void *resp)
{
	COMMIT3args *a = argp;
	COMMIT3res *r = resp;
	struct ce_obj o;
	int e;

	if ((r->status = ce_resolve(req, &a->file, BE_MODIFY, &o)) != NFS3_OK)
		return;
	if (!S_ISREG(o.st.st_mode))
		r->status = S_ISDIR(o.st.st_mode) ? NFS3ERR_ISDIR : NFS3ERR_INVAL;
	else if (o.st.st_uid != o.uid)
		r->status = ce_check(&o, W_OK);
	if (r->status == NFS3_OK && !o.rule.async &&
	    (e = ceph_ll_sync_inode(o.ce->cm, o.in, 0)) < 0)
		r->status = nfs3_errno_to_stat(-e);
	memcpy(r->COMMIT3res_u.resok.verf, req->be->write_verf, NFS3_WRITEVERFSIZE);
	ce_wcc(&o, &r->COMMIT3res_u.resok.file_wcc);
	ce_release(&o);
}
