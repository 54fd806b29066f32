/*
 * nfs3_proc_io.c: READ, WRITE and COMMIT. They use the fd cache's READ/RDWR
 * fds (opened with the server's privileges), so each call checks the caller's
 * right to the file itself; the I/O runs as the caller so that the kernel
 * clears set-id bits and applies reserved-space limits as for a local write.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "common/base/log.h"
#include "server/nfs3_proc.h"

/* The largest READ or WRITE run on an event loop (nowait); larger ones go to
 * a worker. Copying 128 KiB in or out of the page cache holds a loop for
 * about as long as the rest of a call does. */
#define NOWAIT_IO_MAX (128u * 1024)

/* pread until len bytes or end of file; returns bytes read or -errno. */
static ssize_t read_full(int fd, char *buf, size_t len, off_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, buf + done, len - done, off + (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

/* pwrite all of buf; returns 0 or -errno. */
static int write_full(int fd, const char *buf, size_t len, off_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pwrite(fd, buf + done, len - done, off + (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += (size_t)n;
	}
	return 0;
}

/* A buffer for READ data: the transport's if it offers one, else malloc. */
static char *read_buf(struct nfs_req *req, size_t len)
{
	if (req->get_buf)
		return req->get_buf(req->buf_opaque, len);
	return malloc(len);
}

/* READ body, once the caller may read (be_read_enter): fill ok->data. */
static nfsstat3 read_data(struct nfs_req *req, struct be_obj *o, const READ3args *a, READ3resok *ok)
{
	size_t count = a->count < req->be->max_io ? a->count : req->be->max_io;
	uint64_t gen = be_ordma_gen(req, o);
	ssize_t n;

	if (a->offset > INT64_MAX)
		return NFS3ERR_INVAL;
	if (count == 0) {
		ok->eof = a->offset >= (uint64_t)o->st.st_size;
		return NFS3_OK;
	}
	if (req->nowait && count > NOWAIT_IO_MAX) {
		req->would_block = 1; /* not cheap: a worker's */
		return NFS3ERR_JUKEBOX;
	}
	if ((ok->data.data_val = read_buf(req, count)) == NULL)
		return NFS3ERR_JUKEBOX;
	if (req->nowait) {
		/* all of it from the page cache, or the worker reads it */
		int how = 0;

		n = osdep_pread_nowait(o->fd, ok->data.data_val, count, (off_t)a->offset,
				       o->ent ? &o->ent->nowait_how : &how);
		if (n == -EAGAIN || (n >= 0 && (size_t)n < count &&
				     a->offset + (uint64_t)n < (uint64_t)o->st.st_size)) {
			req->would_block = 1;
			return NFS3ERR_JUKEBOX;
		}
	} else {
		n = read_full(o->fd, ok->data.data_val, count, (off_t)a->offset);
	}
	if (n < 0)
		return nfs3_errno_to_stat((int)-n);
	ok->data.data_len = (u_int)n;
	ok->count = (count3)n;
	ok->eof = (size_t)n < count || a->offset + (uint64_t)n >= (uint64_t)o->st.st_size;
	be_ordma_fill(req, o, gen, a->offset, ok->data.data_val, (uint32_t)n);
	return NFS3_OK;
}

/* See nfs3_proc.h. READ: up to count bytes (capped at the max I/O size). */
void nfs3_proc_read(struct nfs_req *req, void *argp, void *resp)
{
	READ3args *a = argp;
	READ3res *r = resp;
	READ3resok *ok = &r->READ3res_u.resok;
	struct be_obj o;

	r->status = be_resolve(req, &a->file, OSDEP_OPEN_READ, 0, &o);
	if (r->status != NFS3_OK)
		return;
	if ((r->status = be_read_enter(req, &o)) == NFS3_OK) {
		r->status = read_data(req, &o, a, ok);
		be_cred_leave(req);
	}
	if (r->status != NFS3_OK && ok->data.data_val) {
		if (!req->get_buf)
			free(ok->data.data_val);
		ok->data.data_val = NULL;
		ok->data.data_len = 0;
	}
	/* The attributes taken when the handle was resolved serve as post-op
	 * attributes when the data returned lies within the size they give (a
	 * READ changes nothing else that a client caches but the atime); data
	 * past that size (the file grew meanwhile) or an error takes them
	 * afresh. One fstat per READ less. */
	if (r->status == NFS3_OK && a->offset + ok->count <= (uint64_t)o.st.st_size)
		be_post_attr_st(o.exp, &o.st, &ok->file_attributes);
	else
		be_post_attr_fd(o.exp, o.fd, &ok->file_attributes);
	be_release(req, &o);
}

/* On an event loop (nowait): whether the WRITE may be tried there: UNSTABLE
 * (or an async export's, which need not sync), at most NOWAIT_IO_MAX, and a
 * file that may take it without waiting. Else would_block, before anything
 * is done, and a worker runs it. */
static int loop_may_write(struct nfs_req *req, const struct be_obj *o, const WRITE3args *a,
			  const struct nfs_client_rule *rule)
{
	if (a->count <= NOWAIT_IO_MAX && (a->stable == UNSTABLE || rule->async) &&
	    !(o->ent && osdep_nowait_never(o->ent->nowait_how)))
		return 1;
	req->would_block = 1;
	return 0;
}

/* On an event loop: write a WRITE's data without waiting; bytes written
 * (fewer when room ran out, as a short pwrite), -errno, or 0 with would_block
 * when nothing could be written without waiting. */
static ssize_t write_nowait(struct nfs_req *req, struct be_obj *o, const WRITE3args *a)
{
	int how = 0;
	ssize_t n = osdep_pwrite_nowait(o->fd, a->data.data_val, a->count, (off_t)a->offset,
					o->ent ? &o->ent->nowait_how : &how);

	if (n == -EAGAIN || n == 0) {
		req->would_block = 1;
		return 0;
	}
	return n;
}

/* WRITE body, once the caller may write (be_write_enter): write and make
 * stable as asked. On an event loop (loop_may_write said yes) a short write
 * is answered as such (NFSv3 lets the client send the rest), not run again
 * on a worker. */
static nfsstat3 write_data(struct nfs_req *req, struct be_obj *o, const WRITE3args *a,
			   const struct nfs_client_rule *rule, WRITE3resok *ok)
{
	ssize_t done = a->count;
	int e = 0;

	if (a->count > a->data.data_len || a->count > req->be->max_io)
		return NFS3ERR_INVAL;
	if (a->offset > INT64_MAX || a->count > INT64_MAX - a->offset)
		return NFS3ERR_FBIG;
	if (a->count && req->nowait) {
		if ((done = write_nowait(req, o, a)) < 0)
			e = (int)done;
		if (req->would_block)
			return NFS3ERR_JUKEBOX;
	} else if (a->count) {
		e = write_full(o->fd, a->data.data_val, a->count, (off_t)a->offset);
	}
	if (e == 0)
		be_wrote(o->fd, &o->st);
	/* an async export says the data is stable without making it so */
	if (e == 0 && a->stable == DATA_SYNC && !rule->async)
		e = osdep_datasync(o->fd);
	else if (e == 0 && a->stable == FILE_SYNC && !rule->async && fsync(o->fd) < 0)
		e = -errno;
	if (e < 0)
		return nfs3_errno_to_stat(-e);
	ok->count = (count3)done;
	ok->committed = a->stable == UNSTABLE || a->stable == DATA_SYNC ? a->stable : FILE_SYNC;
	memcpy(ok->verf, req->be->write_verf, NFS3_WRITEVERFSIZE);
	return NFS3_OK;
}

/* See nfs3_proc.h. WRITE: args->data may point into a transport buffer; it is
 * only read here. */
void nfs3_proc_write(struct nfs_req *req, void *argp, void *resp)
{
	WRITE3args *a = argp;
	WRITE3res *r = resp;
	struct nfs_client_rule rule;
	struct be_obj o;

	r->status = be_resolve(req, &a->file, OSDEP_OPEN_RDWR, BE_MODIFY, &o);
	if (r->status != NFS3_OK)
		return;
	be_req_rule(req, o.exp, &rule);
	if (req->nowait && !loop_may_write(req, &o, a, &rule)) {
		be_release(req, &o);
		return;
	}
	if ((r->status = be_write_enter(req, &o)) == NFS3_OK) {
		be_ordma_forget(req, o.exp, o.fh, o.fhlen);
		r->status = write_data(req, &o, a, &rule, &r->WRITE3res_u.resok);
		be_ordma_forget(req, o.exp, o.fh, o.fhlen);
		be_cred_leave(req);
	}
	if (!req->would_block) /* else it runs again on a worker */
		be_wcc(o.exp, o.fd, &o.st, &r->WRITE3res_u.resok.file_wcc);
	be_release(req, &o);
}

/* See nfs3_proc.h. COMMIT: make earlier UNSTABLE writes stable; the whole
 * file is flushed whatever the range. Only a caller who may write the file
 * may, as on the Linux server. */
void nfs3_proc_commit(struct nfs_req *req, void *argp, void *resp)
{
	COMMIT3args *a = argp;
	COMMIT3res *r = resp;
	struct nfs_client_rule rule;
	struct be_obj o;
	int e;

	r->status = be_resolve(req, &a->file, OSDEP_OPEN_READ, BE_MODIFY, &o);
	if (r->status != NFS3_OK)
		return;
	if ((r->status = be_cred_enter(req, o.exp)) == NFS3_OK) {
		r->status = be_io_allowed(&o, be_req_uid(req, o.exp), 1);
		be_cred_leave(req);
	}
	be_req_rule(req, o.exp, &rule);
	if (r->status == NFS3_OK && !rule.async && (e = osdep_datasync(o.fd)) < 0)
		r->status = nfs3_errno_to_stat(-e);
	memcpy(r->COMMIT3res_u.resok.verf, req->be->write_verf, NFS3_WRITEVERFSIZE);
	be_wcc(o.exp, o.fd, &o.st, &r->COMMIT3res_u.resok.file_wcc);
	be_release(req, &o);
}
