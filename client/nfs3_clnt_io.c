/*
 * nfs3_clnt_io.c: READ, WRITE and COMMIT, and the write state of files.
 *
 * An UNSTABLE write is remembered (struct wrec, a copy of its data) with the
 * verifier the server returned, until a COMMIT returns that same verifier. A
 * different verifier, from a COMMIT or a later WRITE, means the server
 * restarted and may have dropped the data: every write remembered under an
 * older verifier is sent again (resend_stale), and the COMMIT is repeated.
 * A newer write over the same bytes replaces the older one's part (cut), so a
 * resend never puts old data over new. Resends run with the file's io lock held
 * exclusively, so no new write to the file is in flight meanwhile.
 */
#include <stdlib.h>
#include <string.h>

#include "client/nfs3_clnt_int.h"
#include "common/base/log.h"

#define COMMIT_ROUNDS	16 /* verifier changes tolerated in one commit */
#define EMPTY_READS_MAX 3  /* READs in a row that bring no data and no end of file */

/* ---- READ ---- */

/* One READ of at most rsize bytes straight into dest. */
static int read_once(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *fh,
		     uint64_t off, void *dest, uint32_t len, uint32_t *got, int *eof)
{
	READ3args a = {.offset = off, .count = len};
	READ3res r;
	struct nfs3c_req rq;
	int rc;

	memset(&r, 0, sizeof(r));
	nfs3c_fh_to_xdr(fh, &a.file);
	nfs3c_req_init(&rq, NFSPROC3_READ, (xdrproc_t)xdr_READ3args, &a, (xdrproc_t)xdr_READ3res,
		       &r);
	rq.call.reply_data = dest;
	rq.call.reply_data_len = len;
	if ((rc = nfs3c_call(c, cr, &rq)) != 0)
		return rc;
	if (r.status == NFS3_OK) {
		READ3resok *ok = &r.READ3res_u.resok;

		nfs3c_attr_post(c, rq.gen, fh, &ok->file_attributes);
		if (ok->data.data_len > len || ok->count != ok->data.data_len) {
			log_err("READ reply of %u bytes (count %u) for %u asked", ok->data.data_len,
				ok->count, len);
			rc = -EIO;
		} else {
			if (ok->data.data_len && ok->data.data_val != dest)
				memcpy(dest, ok->data.data_val, ok->data.data_len);
			*got = ok->data.data_len;
			*eof = ok->eof;
			nfs3c_stat_add(&c->st.bytes_read, ok->data.data_len);
		}
	} else {
		nfs3c_attr_post(c, rq.gen, fh, &r.READ3res_u.resfail.file_attributes);
		rc = nfs3c_errno(r.status);
	}
	nfs3c_call_done(c, &rq);
	return rc;
}

/* See nfs3_clnt.h. */
int nfs3c_read(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *fh, uint64_t off,
	       void *buf, size_t len, size_t *got, int *eof)
{
	size_t done = 0;
	unsigned empty = 0;
	int e = 0, rc = 0;
	uint32_t hit = 0;

	/* a small READ inside one block the server's cache holds: an RDMA Read */
	if (c->ordma && len <= UINT32_MAX &&
	    nfs3c_ordma_read(c, cr, fh, off, buf, (uint32_t)len, &hit, &e) == 0) {
		*got = hit;
		if (eof)
			*eof = e;
		return 0;
	}

	/* A short READ without eof goes on from where it stopped (the server may
	 * send less than asked); one that brings nothing is tried a few times,
	 * then the read fails rather than look like the end of the file. */
	while (done < len && !e) {
		uint32_t piece = len - done > c->rsize ? c->rsize : (uint32_t)(len - done), n = 0;

		rc = read_once(c, cr, fh, off + done, (uint8_t *)buf + done, piece, &n, &e);
		if (rc)
			break;
		done += n;
		empty = n || e ? 0 : empty + 1;
		if (empty == EMPTY_READS_MAX) {
			if (nfs3c_first_warning(c, NFS3C_WARN_EMPTY_READ))
				log_warn("server %s: %u READs at %llu brought no data and no end "
					 "of file",
					 c->host, empty, (unsigned long long)(off + done));
			*got = done;
			return -EIO;
		}
	}
	*got = done;
	if (eof)
		*eof = e;
	if (c->ordma && done && len <= ORDMA_BLOCK_MAX) {
		/* a small READ the cache could serve next time */
		nfs3c_stat_add(&c->st.ordma_fallbacks, 1);
		nfs3c_ordma_learn(c, cr, fh, off);
	}
	return rc; /* a failed piece fails the read: the data before it is no end of file */
}

/* ---- WRITE ---- */

/* One WRITE of at most wsize bytes. */
static int write_once(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *fh,
		      uint64_t off, const void *data, uint32_t len, stable_how how, uint32_t *done,
		      stable_how *committed, uint8_t *verf)
{
	WRITE3args a = {.offset = off, .count = len, .stable = how};
	WRITE3res r;
	struct nfs3c_req rq;
	int rc;

	memset(&r, 0, sizeof(r));
	nfs3c_fh_to_xdr(fh, &a.file);
	a.data.data_len = len;
	a.data.data_val = (char *)data; /* only encoded */
	nfs3c_req_init(&rq, NFSPROC3_WRITE, (xdrproc_t)xdr_WRITE3args, &a, (xdrproc_t)xdr_WRITE3res,
		       &r);
	if ((rc = nfs3c_call(c, cr, &rq)) != 0)
		return rc;
	nfs3c_attr_wcc(c, rq.gen, fh, &r.WRITE3res_u.resok.file_wcc);
	if (r.status == NFS3_OK) {
		WRITE3resok *ok = &r.WRITE3res_u.resok;

		if (ok->count == 0 || ok->count > len) {
			log_err("WRITE of %u bytes acknowledged %u", len, ok->count);
			rc = -EIO;
		}
		*done = ok->count;
		*committed = ok->committed;
		nfs3c_stat_add(&c->st.bytes_written, ok->count);
		memcpy(verf, ok->verf, NFS3_WRITEVERFSIZE);
	} else {
		rc = nfs3c_errno(r.status);
	}
	nfs3c_call_done(c, &rq);
	return rc;
}

/* Send one remembered record again; its verifier becomes the new one. r stays
 * valid meanwhile: records are freed only by writes and resends (excluded by
 * the io lock we hold exclusively) and by commits (excluded by the
 * commit_lock every resend_stale is called under). */
static int resend_one(struct nfs3c *c, const struct rpc_cred *cr, struct nfs3c_file *f,
		      struct wrec *r)
{
	uint8_t verf[NFS3_WRITEVERFSIZE], first[NFS3_WRITEVERFSIZE];
	stable_how committed = UNSTABLE, all = FILE_SYNC;
	uint32_t done = 0;
	int rc = 0, mixed = 0;

	while (done < r->len && rc == 0) {
		uint32_t piece = r->len - done > c->wsize ? c->wsize : r->len - done, n = 0;

		rc = write_once(c, cr, &f->fh, r->off + done, r->data + done, piece, UNSTABLE, &n,
				&committed, verf);
		if (rc == 0 && done == 0)
			memcpy(first, verf, sizeof(first));
		else if (rc == 0 && memcmp(first, verf, sizeof(verf)) != 0)
			mixed = 1;
		if (committed == UNSTABLE)
			all = UNSTABLE;
		done += n;
	}
	nfs3c_stat_add(&c->st.writes_resent, 1);
	if (rc)
		return rc;
	pthread_mutex_lock(&f->lock);
	for (struct wrec *p = f->recs; p; p = p->next) {
		if (p != r)
			continue;
		if (all != UNSTABLE)
			nfs3c_rec_drop(c, f, r); /* the server wrote it stably */
		else if (!mixed)
			memcpy(r->verf, first, NFS3_WRITEVERFSIZE);
		if (all == UNSTABLE)
			r->seq = ++f->seq; /* acknowledged again: only a later COMMIT covers it */
		break;
	}
	nfs3c_set_verf(f, verf);
	if (mixed)
		f->maybe_stale = 1; /* r stays stale, goes again */
	pthread_mutex_unlock(&f->lock);
	return 0;
}

/* Send again every record written under an older verifier than f's latest
 * (f->commit_lock held). */
static int resend_stale(struct nfs3c *c, const struct rpc_cred *cr, struct nfs3c_file *f)
{
	unsigned rounds = 0;
	int rc = 0;

	pthread_rwlock_wrlock(&f->io);
	while (rc == 0) {
		struct wrec *r;

		pthread_mutex_lock(&f->lock);
		for (r = f->recs; r; r = r->next)
			if (memcmp(r->verf, f->verf, NFS3_WRITEVERFSIZE) != 0)
				break;
		pthread_mutex_unlock(&f->lock);
		if (!r)
			break;
		if (++rounds > 1024u + (unsigned)(f->dirty / 4096)) {
			rc = -EIO; /* the verifier never settles */
			break;
		}
		rc = resend_one(c, cr, f, r);
	}
	pthread_rwlock_unlock(&f->io);
	return rc;
}

/* The credential a commit without a caller uses: the last writer's. */
static const struct rpc_cred *commit_cred(struct nfs3c_file *f, const struct rpc_cred *cr)
{
	return cr ? cr : (f->have_cred ? &f->cred : NULL);
}

/* Keep the client's uncommitted bytes within dirty_max. */
static int enforce_budget(struct nfs3c *c, const struct rpc_cred *cr, struct nfs3c_file *f)
{
	int rc = 0;

	if (__atomic_load_n(&c->dirty, __ATOMIC_RELAXED) <= c->p.dirty_max)
		return 0;
	rc = nfs3c_commit(c, cr, f);
	if (rc == 0 && __atomic_load_n(&c->dirty, __ATOMIC_RELAXED) > c->p.dirty_max)
		(void)nfs3c_commit_all(c); /* other files' errors are theirs (f->err) */
	return rc;
}

/* See nfs3_clnt.h: each piece recorded if unstable, stale ones resent. */
int nfs3c_write(struct nfs3c *c, const struct rpc_cred *cr, struct nfs3c_file *f, uint64_t off,
		const void *buf, size_t len, stable_how how)
{
	uint8_t verf[NFS3_WRITEVERFSIZE];
	size_t done = 0;
	int rc = 0, stale = 0;

	if (cr) {
		pthread_mutex_lock(&f->lock);
		f->cred = *cr;
		f->have_cred = 1;
		pthread_mutex_unlock(&f->lock);
	}
	while (done < len && rc == 0) {
		uint32_t piece = len - done > c->wsize ? c->wsize : (uint32_t)(len - done), n = 0;
		const uint8_t *data = (const uint8_t *)buf + done;
		stable_how committed = how;
		struct wdata *d = NULL;

		/* unstable data is copied once, into its record, and sent from there */
		if (how == UNSTABLE && !(d = nfs3c_wdata_copy(c, data, piece))) {
			rc = -ENOMEM;
			break;
		}
		pthread_rwlock_rdlock(&f->io);
		rc = write_once(c, cr, &f->fh, off + done, d ? d->bytes : data, piece, how, &n,
				&committed, verf);
		if (rc == 0)
			rc = nfs3c_record(c, f, off + done, data, d, n, committed == UNSTABLE, verf,
					  &stale);
		else
			nfs3c_wdata_put(c, d);
		pthread_rwlock_unlock(&f->io);
		if (rc == 0 && stale) {
			nfs3c_stat_add(&c->st.verf_changes, 1);
			pthread_mutex_lock(&f->commit_lock); /* before io, as commits take them */
			rc = resend_stale(c, cr, f);
			pthread_mutex_unlock(&f->commit_lock);
		}
		done += n;
	}
	return rc ? rc : enforce_budget(c, cr, f);
}

/* ---- COMMIT ---- */

static int commit_once(struct nfs3c *c, const struct rpc_cred *cr, struct nfs3c_file *f,
		       uint8_t *verf)
{
	COMMIT3args a = {.offset = 0, .count = 0};
	COMMIT3res r;
	struct nfs3c_req rq;
	int rc;

	memset(&r, 0, sizeof(r));
	nfs3c_fh_to_xdr(&f->fh, &a.file);
	nfs3c_req_init(&rq, NFSPROC3_COMMIT, (xdrproc_t)xdr_COMMIT3args, &a,
		       (xdrproc_t)xdr_COMMIT3res, &r);
	if ((rc = nfs3c_call(c, cr, &rq)) != 0)
		return rc;
	nfs3c_attr_wcc(c, rq.gen, &f->fh, &r.COMMIT3res_u.resok.file_wcc);
	if (r.status == NFS3_OK)
		memcpy(verf, r.COMMIT3res_u.resok.verf, NFS3_WRITEVERFSIZE);
	else
		rc = nfs3c_errno(r.status);
	nfs3c_call_done(c, &rq);
	nfs3c_stat_add(&c->st.commits, 1);
	return rc;
}

/* After a COMMIT with verf: forget what it made stable (records acknowledged
 * before it was sent, seq <= snap, with that verifier). Returns whether some
 * record must be sent again. */
/* Forget f's records acknowledged before a COMMIT was sent (seq <= snap),
 * with verifier verf (NULL: any). f->lock held. */
static void recs_drop_through(struct nfs3c *c, struct nfs3c_file *f, uint64_t snap,
			      const uint8_t *verf)
{
	struct wrec *r, *next;

	for (r = f->recs; r; r = next) {
		next = r->next;
		if (r->seq <= snap && (!verf || memcmp(r->verf, verf, NFS3_WRITEVERFSIZE) == 0))
			nfs3c_rec_drop(c, f, r);
	}
}

static int commit_settle(struct nfs3c *c, struct nfs3c_file *f, uint64_t snap, const uint8_t *verf)
{
	int stale;

	pthread_mutex_lock(&f->lock);
	nfs3c_set_verf(f, verf);
	recs_drop_through(c, f, snap, verf);
	stale = nfs3c_any_stale(f);
	pthread_mutex_unlock(&f->lock);
	return stale;
}

/* COMMIT f's writes (cr NULL: as its last writer). What a COMMIT that
 * failed could not make stable is dropped, as Linux's client drops it: kept,
 * it would be tried again at every commit, held for ever, and fail the calls
 * of writers of other files (commit_all); f->err keeps the error for the
 * file's own next commit unless the caller takes it (own). */
static int commit_file(struct nfs3c *c, const struct rpc_cred *cr, struct nfs3c_file *f, int own)
{
	uint8_t verf[NFS3_WRITEVERFSIZE];
	uint64_t snap = 0;
	int rc = -EIO;

	pthread_mutex_lock(&f->commit_lock);
	cr = commit_cred(f, cr);
	for (unsigned round = 0; round < COMMIT_ROUNDS; round++) {
		pthread_mutex_lock(&f->lock);
		snap = f->seq;
		rc = f->recs ? 1 : 0;
		pthread_mutex_unlock(&f->lock);
		if (rc == 0 || (rc = commit_once(c, cr, f, verf)) != 0)
			break;
		if (!commit_settle(c, f, snap, verf))
			break;
		nfs3c_stat_add(&c->st.verf_changes, 1);
		log_info("write verifier changed (server restarted?): writing again");
		if ((rc = resend_stale(c, cr, f)) != 0)
			break;
		rc = -EIO; /* if the rounds run out */
	}
	if (rc && rc != -ESHUTDOWN) /* said once, where they are dropped */
		log_warn("server %s: COMMIT failed (%s): unstable writes lost", c->host,
			 strerror(-rc));
	pthread_mutex_lock(&f->lock);
	if (rc) {
		recs_drop_through(c, f, snap, NULL);
		if (!own)
			f->err = rc;
	}
	if (own) {
		rc = rc ? rc : f->err;
		f->err = 0;
	}
	pthread_mutex_unlock(&f->lock);
	pthread_mutex_unlock(&f->commit_lock);
	return rc;
}

/* See nfs3_clnt.h. */
int nfs3c_commit(struct nfs3c *c, const struct rpc_cred *cr, struct nfs3c_file *f)
{
	return commit_file(c, cr, f, 1);
}

/* See nfs3_clnt.h. */
size_t nfs3c_file_dirty(struct nfs3c_file *f)
{
	size_t n;

	pthread_mutex_lock(&f->lock);
	n = f->dirty;
	pthread_mutex_unlock(&f->lock);
	return n;
}

/* ---- the table of files ---- */

struct nfs3c_file *nfs3c_file_get(struct nfs3c *c, const struct nfs3c_fh *fh)
{
	unsigned b = nfs3c_fh_hash(fh) % NFS3C_FILE_BUCKETS;
	struct nfs3c_file *f;

	pthread_mutex_lock(&c->files_lock);
	for (f = c->files[b]; f; f = f->next)
		if (nfs3c_fh_equal(&f->fh, fh))
			break;
	if (!f && (f = calloc(1, sizeof(*f))) != NULL) {
		f->fh = *fh;
		pthread_rwlock_init(&f->io, NULL);
		pthread_mutex_init(&f->commit_lock, NULL);
		pthread_mutex_init(&f->lock, NULL);
		f->next = c->files[b];
		c->files[b] = f;
	}
	if (f)
		f->refs++;
	pthread_mutex_unlock(&c->files_lock);
	return f;
}

/* Free a write state nobody holds, with whatever it still remembers. */
static void file_free(struct nfs3c *c, struct nfs3c_file *f)
{
	while (f->recs)
		nfs3c_rec_drop(c, f, f->recs);
	pthread_rwlock_destroy(&f->io);
	pthread_mutex_destroy(&f->commit_lock);
	pthread_mutex_destroy(&f->lock);
	free(f);
}

/* Free f if nobody holds it and it has nothing uncommitted. */
static void file_release_if_idle(struct nfs3c *c, struct nfs3c_file *f)
{
	unsigned b = nfs3c_fh_hash(&f->fh) % NFS3C_FILE_BUCKETS;
	int idle;

	pthread_mutex_lock(&c->files_lock);
	pthread_mutex_lock(&f->lock);
	idle = f->refs == 0 && f->recs == NULL;
	pthread_mutex_unlock(&f->lock);
	if (idle) {
		for (struct nfs3c_file **pp = &c->files[b]; *pp; pp = &(*pp)->next) {
			if (*pp == f) {
				*pp = f->next;
				break;
			}
		}
	}
	pthread_mutex_unlock(&c->files_lock);
	if (idle)
		file_free(c, f);
}

/* See nfs3_clnt.h. */
int nfs3c_file_put(struct nfs3c *c, struct nfs3c_file *f, const struct rpc_cred *cr)
{
	int last, rc = 0;

	pthread_mutex_lock(&c->files_lock);
	last = --f->refs == 0;
	if (last)
		f->refs++; /* ours, while committing */
	pthread_mutex_unlock(&c->files_lock);
	if (!last)
		return 0;
	rc = nfs3c_commit(c, cr, f);
	pthread_mutex_lock(&c->files_lock);
	f->refs--;
	pthread_mutex_unlock(&c->files_lock);
	file_release_if_idle(c, f);
	return rc;
}

/* See nfs3_clnt.h: every file of the table, each held while committed. */
int nfs3c_commit_all(struct nfs3c *c)
{
	struct nfs3c_file **v = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	pthread_mutex_lock(&c->files_lock);
	for (unsigned b = 0; b < NFS3C_FILE_BUCKETS; b++) {
		for (struct nfs3c_file *f = c->files[b]; f; f = f->next) {
			if (n == cap) {
				struct nfs3c_file **nv =
					realloc(v, (cap = cap * 2 + 16) * sizeof(*v));

				if (!nv)
					break;
				v = nv;
			}
			if (n < cap) {
				f->refs++;
				v[n++] = f;
			}
		}
	}
	pthread_mutex_unlock(&c->files_lock);
	for (size_t i = 0; i < n; i++) {
		int r = commit_file(c, NULL, v[i], 0);

		rc = rc ? rc : r;
		pthread_mutex_lock(&c->files_lock);
		v[i]->refs--;
		pthread_mutex_unlock(&c->files_lock);
		file_release_if_idle(c, v[i]);
	}
	free(v);
	return rc;
}

/* Free every write state (at unmount, after the last commit). */
void nfs3c_files_fini(struct nfs3c *c)
{
	for (unsigned b = 0; b < NFS3C_FILE_BUCKETS; b++) {
		while (c->files[b]) {
			struct nfs3c_file *f = c->files[b];

			c->files[b] = f->next;
			file_free(c, f);
		}
	}
}
