/*
 * rpcrdma_hdr.c: the RPC-over-RDMA version 1 header codec (RFC 8166); the
 * RFC 8797 connection private data is in rpcrdma_cm_private.c. Wire rules and
 * caps: rpcrdma_hdr.h.
 *
 * Decoding is two passes over a scratch copy of the cursor: parse the XDR
 * (counts capped before any loop, every read bounds-checked), then check the
 * rules that span entries (positions, totals) with the same functions the
 * encoder uses, so that what decodes always encodes and vice versa.
 */
#include <errno.h>
#include <string.h>

#include "common/base/log.h"
#include "rpcrdma_hdr.h"

/* ------------------------------------------------------------------ rules */

/* A segment's end (offset + length) must fit in 64 bits, so that nobody's
 * bounds check on it can wrap. */
static int seg_check(const struct rpcrdma_seg *s, const char **why)
{
	if (s->offset > UINT64_MAX - s->length) {
		*why = "segment offset + length exceeds 2^64 - 1";
		return -EBADMSG;
	}
	return 0;
}

/* Add len to a chunk's running total; refuse a total over UINT32_MAX. */
static int total_add(uint64_t *total, uint32_t len, const char **why)
{
	if (__builtin_add_overflow(*total, (uint64_t)len, total) || *total > UINT32_MAX) {
		*why = "chunk total length exceeds 2^32 - 1";
		return -E2BIG;
	}
	return 0;
}

/* Total length of a Write chunk (or the Reply chunk), capped count first. */
static int chunk_total(const struct rpcrdma_write_chunk *wc, uint64_t *total, const char **why)
{
	int r;

	*total = 0;
	if (wc->nsegs > RPCRDMA_MAX_CHUNK_SEGS) {
		*why = "chunk has more segments than RPCRDMA_MAX_CHUNK_SEGS";
		return -E2BIG;
	}
	for (uint32_t i = 0; i < wc->nsegs; i++)
		if ((r = total_add(total, wc->segs[i].length, why)) != 0)
			return r;
	return 0;
}

/* All the rules for one Write chunk (or the Reply chunk). */
static int chunk_check(const struct rpcrdma_write_chunk *wc, const char **why)
{
	uint64_t total;
	int r = chunk_total(wc, &total, why);

	for (uint32_t i = 0; r == 0 && i < wc->nsegs; i++)
		r = seg_check(&wc->segs[i], why);
	return r;
}

/* Check one Read list entry against the one before it (prev, or NULL). */
static int read_seg_check(const struct rpcrdma_read_seg *rs, const struct rpcrdma_read_seg *prev,
			  const char **why)
{
	if (rs->position % 4 != 0) {
		*why = "Read position is not a multiple of 4";
		return -EBADMSG;
	}
	if (prev && rs->position < prev->position) {
		*why = "Read positions decrease";
		return -EBADMSG;
	}
	return seg_check(&rs->seg, why);
}

/* Check the Read list and split it into Read chunks (out may be NULL). */
static int read_groups(const struct rpcrdma_hdr *h, struct rpcrdma_read_chunk *out, uint32_t *n,
		       const char **why)
{
	struct rpcrdma_read_chunk grp = {0};
	uint32_t ngroups = 0;
	int r;

	if (h->nreads > RPCRDMA_MAX_READ_SEGS) {
		*why = "Read list has more segments than RPCRDMA_MAX_READ_SEGS";
		return -E2BIG;
	}
	for (uint32_t i = 0; i < h->nreads; i++) {
		const struct rpcrdma_read_seg *rs = &h->reads[i];

		if ((r = read_seg_check(rs, i ? rs - 1 : NULL, why)) != 0)
			return r;
		if (i == 0 || rs->position != grp.position) {
			if (i > 0 && out)
				out[ngroups - 1] = grp;
			grp = (struct rpcrdma_read_chunk){.position = rs->position, .first = i};
			ngroups++;
		}
		grp.nsegs++;
		if ((r = total_add(&grp.length, rs->seg.length, why)) != 0)
			return r;
	}
	if (ngroups > 0 && out)
		out[ngroups - 1] = grp;
	if (n)
		*n = ngroups;
	return 0;
}

/* The rules for the three chunk lists of RDMA_MSG, RDMA_NOMSG and RDMA_MSGP. */
static int lists_check(const struct rpcrdma_hdr *h, const char **why)
{
	int r;

	if ((r = read_groups(h, NULL, NULL, why)) != 0)
		return r;
	if (h->nwrites > RPCRDMA_MAX_WRITE_CHUNKS) {
		*why = "Write list has more chunks than RPCRDMA_MAX_WRITE_CHUNKS";
		return -E2BIG;
	}
	for (uint32_t i = 0; i < h->nwrites; i++)
		if ((r = chunk_check(&h->writes[i], why)) != 0)
			return r;
	return h->has_reply ? chunk_check(&h->reply, why) : 0;
}

/* An RDMA_DONE has no body, so nothing to check. */
static int none_check(const struct rpcrdma_hdr *h, const char **why)
{
	return 0;
}

/* RDMA_ERROR carries one of the two error codes of version 1. */
static int error_check(const struct rpcrdma_hdr *h, const char **why)
{
	if (h->err != RPCRDMA_ERR_VERS && h->err != RPCRDMA_ERR_CHUNK) {
		*why = "unknown rdma_err";
		return -EBADMSG;
	}
	return 0;
}

/* ----------------------------------------------------------------- decode */

/* An XDR optional-data discriminator: exactly 0 or 1. */
static int get_bool(struct cur *c, bool *b, const char **why)
{
	uint32_t v;

	if (cur_get_u32(c, &v) != 0) {
		*why = "short: list discriminator missing";
		return -EBADMSG;
	}
	if (v > 1) {
		*why = "list discriminator is neither 0 nor 1";
		return -EBADMSG;
	}
	*b = v == 1;
	return 0;
}

/* One segment: handle, length, offset. */
static int get_seg(struct cur *c, struct rpcrdma_seg *s, const char **why)
{
	if (cur_get_u32(c, &s->handle) != 0 || cur_get_u32(c, &s->length) != 0 ||
	    cur_get_u64(c, &s->offset) != 0) {
		*why = "short: segment cut off";
		return -EBADMSG;
	}
	return 0;
}

/* The Read list: entries until a 0 discriminator, refused past the cap. */
static int get_read_list(struct cur *c, struct rpcrdma_hdr *h, const char **why)
{
	bool more;
	int r;

	for (;;) {
		if ((r = get_bool(c, &more, why)) != 0 || !more)
			return r;
		if (h->nreads == RPCRDMA_MAX_READ_SEGS) {
			*why = "Read list longer than RPCRDMA_MAX_READ_SEGS";
			return -E2BIG;
		}
		if (cur_get_u32(c, &h->reads[h->nreads].position) != 0) {
			*why = "short: Read position cut off";
			return -EBADMSG;
		}
		if ((r = get_seg(c, &h->reads[h->nreads].seg, why)) != 0)
			return r;
		h->nreads++;
	}
}

/* A counted array of segments; the count is capped before the loop. */
static int get_write_chunk(struct cur *c, struct rpcrdma_write_chunk *wc, const char **why)
{
	uint32_t n;
	int r;

	if (cur_get_u32(c, &n) != 0) {
		*why = "short: segment count missing";
		return -EBADMSG;
	}
	if (n > RPCRDMA_MAX_CHUNK_SEGS) {
		*why = "segment count over RPCRDMA_MAX_CHUNK_SEGS";
		return -E2BIG;
	}
	if (cur_left(c) < (size_t)n * RPCRDMA_SEG_LEN) {
		*why = "short: fewer segments than the count says";
		return -EBADMSG;
	}
	for (uint32_t i = 0; i < n; i++)
		if ((r = get_seg(c, &wc->segs[i], why)) != 0)
			return r;
	wc->nsegs = n;
	return 0;
}

/* The Write list: chunks until a 0 discriminator, refused past the cap. */
static int get_write_list(struct cur *c, struct rpcrdma_hdr *h, const char **why)
{
	bool more;
	int r;

	for (;;) {
		if ((r = get_bool(c, &more, why)) != 0 || !more)
			return r;
		if (h->nwrites == RPCRDMA_MAX_WRITE_CHUNKS) {
			*why = "Write list longer than RPCRDMA_MAX_WRITE_CHUNKS";
			return -E2BIG;
		}
		if ((r = get_write_chunk(c, &h->writes[h->nwrites], why)) != 0)
			return r;
		h->nwrites++;
	}
}

/* Read list, Write list, optional Reply chunk; then the cross-entry rules. */
static int decode_lists(struct cur *c, struct rpcrdma_hdr *h, const char **why)
{
	int r;

	if ((r = get_read_list(c, h, why)) != 0 || (r = get_write_list(c, h, why)) != 0 ||
	    (r = get_bool(c, &h->has_reply, why)) != 0)
		return r;
	if (h->has_reply && (r = get_write_chunk(c, &h->reply, why)) != 0)
		return r;
	return lists_check(h, why);
}

/* RDMA_MSGP: rdma_align, rdma_thresh, then the lists. */
static int decode_msgp(struct cur *c, struct rpcrdma_hdr *h, const char **why)
{
	if (cur_get_u32(c, &h->align) != 0 || cur_get_u32(c, &h->thresh) != 0) {
		*why = "short: RDMA_MSGP align/thresh cut off";
		return -EBADMSG;
	}
	return decode_lists(c, h, why);
}

/* RDMA_DONE: no body. */
static int decode_none(struct cur *c, struct rpcrdma_hdr *h, const char **why)
{
	return 0;
}

/* RDMA_ERROR: rdma_err, and for ERR_VERS the supported version range. */
static int decode_error(struct cur *c, struct rpcrdma_hdr *h, const char **why)
{
	int r;

	if (cur_get_u32(c, &h->err) != 0) {
		*why = "short: rdma_err missing";
		return -EBADMSG;
	}
	if ((r = error_check(h, why)) != 0 || h->err != RPCRDMA_ERR_VERS)
		return r;
	if (cur_get_u32(c, &h->vers_low) != 0 || cur_get_u32(c, &h->vers_high) != 0) {
		*why = "short: ERR_VERS range cut off";
		return -EBADMSG;
	}
	return 0;
}

/* ----------------------------------------------------------------- encode */

/* The encoders below run only after the whole length was found to fit, so
 * their puts cannot fail; they still pass on any error. */

/* One segment: handle, length, offset. */
static int put_seg(struct wcur *w, const struct rpcrdma_seg *s)
{
	int r;

	if ((r = wcur_put_u32(w, s->handle)) != 0 || (r = wcur_put_u32(w, s->length)) != 0)
		return r;
	return wcur_put_u64(w, s->offset);
}

/* A counted array of segments. */
static int put_write_chunk(struct wcur *w, const struct rpcrdma_write_chunk *wc)
{
	int r = wcur_put_u32(w, wc->nsegs);

	for (uint32_t i = 0; r == 0 && i < wc->nsegs; i++)
		r = put_seg(w, &wc->segs[i]);
	return r;
}

/* Read list, Write list, Reply chunk, each ending with its 0 discriminator. */
static int encode_lists(struct wcur *w, const struct rpcrdma_hdr *h)
{
	int r = 0;

	for (uint32_t i = 0; r == 0 && i < h->nreads; i++) {
		if ((r = wcur_put_u32(w, 1)) == 0 &&
		    (r = wcur_put_u32(w, h->reads[i].position)) == 0)
			r = put_seg(w, &h->reads[i].seg);
	}
	if (r == 0)
		r = wcur_put_u32(w, 0);
	for (uint32_t i = 0; r == 0 && i < h->nwrites; i++) {
		if ((r = wcur_put_u32(w, 1)) == 0)
			r = put_write_chunk(w, &h->writes[i]);
	}
	if (r == 0)
		r = wcur_put_u32(w, 0);
	if (r == 0)
		r = wcur_put_u32(w, h->has_reply);
	if (r == 0 && h->has_reply)
		r = put_write_chunk(w, &h->reply);
	return r;
}

/* RDMA_MSGP: rdma_align, rdma_thresh, then the lists. */
static int encode_msgp(struct wcur *w, const struct rpcrdma_hdr *h)
{
	int r;

	if ((r = wcur_put_u32(w, h->align)) != 0 || (r = wcur_put_u32(w, h->thresh)) != 0)
		return r;
	return encode_lists(w, h);
}

/* RDMA_DONE: no body. */
static int encode_none(struct wcur *w, const struct rpcrdma_hdr *h)
{
	return 0;
}

/* RDMA_ERROR: rdma_err, and for ERR_VERS the range. */
static int encode_error(struct wcur *w, const struct rpcrdma_hdr *h)
{
	int r = wcur_put_u32(w, h->err);

	if (r == 0 && h->err == RPCRDMA_ERR_VERS && (r = wcur_put_u32(w, h->vers_low)) == 0)
		r = wcur_put_u32(w, h->vers_high);
	return r;
}

/* ------------------------------------------------------- lengths, equality */

/* Encoded bytes of the three lists (h already checked). */
static size_t lists_len(const struct rpcrdma_hdr *h)
{
	size_t n = 4 + (size_t)h->nreads * (8 + RPCRDMA_SEG_LEN) + 4 + 4;

	for (uint32_t i = 0; i < h->nwrites; i++)
		n += 8 + (size_t)h->writes[i].nsegs * RPCRDMA_SEG_LEN;
	if (h->has_reply)
		n += 4 + (size_t)h->reply.nsegs * RPCRDMA_SEG_LEN;
	return n;
}

/* RDMA_MSGP adds rdma_align and rdma_thresh. */
static size_t msgp_len(const struct rpcrdma_hdr *h)
{
	return 8 + lists_len(h);
}

/* RDMA_DONE has no body. */
static size_t none_len(const struct rpcrdma_hdr *h)
{
	return 0;
}

/* RDMA_ERROR: rdma_err, plus the range for ERR_VERS. */
static size_t error_len(const struct rpcrdma_hdr *h)
{
	return h->err == RPCRDMA_ERR_VERS ? 12 : 4;
}

/* Two segments are the same. */
static bool seg_equal(const struct rpcrdma_seg *a, const struct rpcrdma_seg *b)
{
	return a->handle == b->handle && a->length == b->length && a->offset == b->offset;
}

/* Two chunks have the same segments. */
static bool chunk_equal(const struct rpcrdma_write_chunk *a, const struct rpcrdma_write_chunk *b)
{
	if (a->nsegs != b->nsegs || a->nsegs > RPCRDMA_MAX_CHUNK_SEGS)
		return false;
	for (uint32_t i = 0; i < a->nsegs; i++)
		if (!seg_equal(&a->segs[i], &b->segs[i]))
			return false;
	return true;
}

/* Same three lists. */
static bool lists_equal(const struct rpcrdma_hdr *a, const struct rpcrdma_hdr *b)
{
	if (a->nreads != b->nreads || a->nreads > RPCRDMA_MAX_READ_SEGS ||
	    a->nwrites != b->nwrites || a->nwrites > RPCRDMA_MAX_WRITE_CHUNKS ||
	    a->has_reply != b->has_reply)
		return false;
	for (uint32_t i = 0; i < a->nreads; i++)
		if (a->reads[i].position != b->reads[i].position ||
		    !seg_equal(&a->reads[i].seg, &b->reads[i].seg))
			return false;
	for (uint32_t i = 0; i < a->nwrites; i++)
		if (!chunk_equal(&a->writes[i], &b->writes[i]))
			return false;
	return !a->has_reply || chunk_equal(&a->reply, &b->reply);
}

/* Same RDMA_MSGP body. */
static bool msgp_equal(const struct rpcrdma_hdr *a, const struct rpcrdma_hdr *b)
{
	return a->align == b->align && a->thresh == b->thresh && lists_equal(a, b);
}

/* RDMA_DONE bodies are always equal. */
static bool none_equal(const struct rpcrdma_hdr *a, const struct rpcrdma_hdr *b)
{
	return true;
}

/* Same RDMA_ERROR body. */
static bool error_equal(const struct rpcrdma_hdr *a, const struct rpcrdma_hdr *b)
{
	if (a->err != b->err)
		return false;
	return a->err != RPCRDMA_ERR_VERS ||
	       (a->vers_low == b->vers_low && a->vers_high == b->vers_high);
}

/* ------------------------------------------------------------- dispatch */

/* What each rdma_proc carries, and how to handle its body. */
static const struct proc_ops {
	const char *name;
	int (*decode)(struct cur *c, struct rpcrdma_hdr *h, const char **why);
	int (*check)(const struct rpcrdma_hdr *h, const char **why);
	int (*encode)(struct wcur *w, const struct rpcrdma_hdr *h);
	size_t (*body_len)(const struct rpcrdma_hdr *h);
	bool (*equal)(const struct rpcrdma_hdr *a, const struct rpcrdma_hdr *b);
} procs[RPCRDMA_NPROCS] = {
	[RPCRDMA_MSG] = {"RDMA_MSG", decode_lists, lists_check, encode_lists, lists_len,
			 lists_equal},
	[RPCRDMA_NOMSG] = {"RDMA_NOMSG", decode_lists, lists_check, encode_lists, lists_len,
			   lists_equal},
	[RPCRDMA_MSGP] = {"RDMA_MSGP", decode_msgp, lists_check, encode_msgp, msgp_len, msgp_equal},
	[RPCRDMA_DONE] = {"RDMA_DONE", decode_none, none_check, encode_none, none_len, none_equal},
	[RPCRDMA_ERROR] = {"RDMA_ERROR", decode_error, error_check, encode_error, error_len,
			   error_equal},
};

/* Name of an rdma_proc for logs. */
const char *rpcrdma_proc_name(uint32_t proc)
{
	return proc < RPCRDMA_NPROCS ? procs[proc].name : "?";
}

/* Reset every scalar so that fields of other procs read as zero. */
void rpcrdma_hdr_init(struct rpcrdma_hdr *h, uint32_t xid, uint32_t credit, uint32_t proc)
{
	h->xid = xid;
	h->vers = RPCRDMA_VERSION;
	h->credit = credit;
	h->proc = proc;
	h->align = h->thresh = 0;
	h->nreads = h->nwrites = 0;
	h->has_reply = false;
	h->reply.nsegs = 0;
	h->err = h->vers_low = h->vers_high = 0;
}

/* Parse into h from a scratch cursor; the caller commits it on success. */
static int decode(struct cur *t, struct rpcrdma_hdr *h, const char **why)
{
	uint32_t xid, vers, credit, proc;

	if (cur_get_u32(t, &xid) != 0 || cur_get_u32(t, &vers) != 0 ||
	    cur_get_u32(t, &credit) != 0 || cur_get_u32(t, &proc) != 0) {
		*why = "short: fewer than the 4 fixed words";
		return -EBADMSG;
	}
	if (vers != RPCRDMA_VERSION) {
		*why = "rdma_vers is not 1";
		return -EPROTONOSUPPORT;
	}
	if (proc >= RPCRDMA_NPROCS) {
		*why = "unknown rdma_proc";
		return -EINVAL;
	}
	rpcrdma_hdr_init(h, xid, credit, proc);
	return procs[proc].decode(t, h, why);
}

/* Decode one header; all or nothing (see rpcrdma_hdr.h for the results). */
int rpcrdma_hdr_decode(struct cur *c, struct rpcrdma_hdr *h)
{
	struct cur t = *c;
	const char *why = "?";
	int r = decode(&t, h, &why);

	if (r != 0) {
		uint32_t xid = 0;

		(void)rpcrdma_hdr_peek_xid(c, &xid);
		log_debug("refused header xid 0x%08x at byte %zu of %zu: %s", xid, t.pos, t.len,
			  why);
		return r;
	}
	*c = t;
	return 0;
}

/* The first word of a header is its xid, whatever else is wrong with it. */
int rpcrdma_hdr_peek_xid(const struct cur *c, uint32_t *xid)
{
	return cur_peek_u32(c, xid);
}

/* Whether h is one this codec would put on the wire. */
static int hdr_check(const struct rpcrdma_hdr *h, const char **why)
{
	if (h->vers != RPCRDMA_VERSION) {
		*why = "version is not 1";
		return -EINVAL;
	}
	if (h->proc >= RPCRDMA_NPROCS) {
		*why = "unknown rdma_proc";
		return -EINVAL;
	}
	return procs[h->proc].check(h, why) ? -EINVAL : 0;
}

/* Encoded length of h, or 0 if h is invalid. */
size_t rpcrdma_hdr_encoded_len(const struct rpcrdma_hdr *h)
{
	const char *why;

	if (hdr_check(h, &why) != 0)
		return 0;
	return RPCRDMA_HDR_FIXED_LEN + procs[h->proc].body_len(h);
}

/* Encode h: checked first, sized next, then written in one go. */
int rpcrdma_hdr_encode(struct wcur *w, const struct rpcrdma_hdr *h)
{
	const char *why = "?";
	int r;

	if (hdr_check(h, &why) != 0) {
		log_err("cannot encode %s xid 0x%08x: %s", rpcrdma_proc_name(h->proc), h->xid, why);
		return -EINVAL;
	}
	if (RPCRDMA_HDR_FIXED_LEN + procs[h->proc].body_len(h) > wcur_left(w))
		return -ENOSPC;
	if ((r = wcur_put_u32(w, h->xid)) != 0 || (r = wcur_put_u32(w, h->vers)) != 0 ||
	    (r = wcur_put_u32(w, h->credit)) != 0 || (r = wcur_put_u32(w, h->proc)) != 0)
		return r;
	return procs[h->proc].encode(w, h);
}

/* RDMA_ERROR/ERR_VERS announcing the versions this side speaks. */
int rpcrdma_encode_err_vers(struct wcur *w, uint32_t xid, uint32_t credit, uint32_t low,
			    uint32_t high)
{
	struct rpcrdma_hdr h;

	rpcrdma_hdr_init(&h, xid, credit, RPCRDMA_ERROR);
	h.err = RPCRDMA_ERR_VERS;
	h.vers_low = low;
	h.vers_high = high;
	return rpcrdma_hdr_encode(w, &h);
}

/* RDMA_ERROR/ERR_CHUNK: the answer to any malformed header with a known xid. */
int rpcrdma_encode_err_chunk(struct wcur *w, uint32_t xid, uint32_t credit)
{
	struct rpcrdma_hdr h;

	rpcrdma_hdr_init(&h, xid, credit, RPCRDMA_ERROR);
	h.err = RPCRDMA_ERR_CHUNK;
	return rpcrdma_hdr_encode(w, &h);
}

/* RDMA_DONE: a Read-Read client releasing the server's reply buffers. */
int rpcrdma_encode_done(struct wcur *w, uint32_t xid, uint32_t credit)
{
	struct rpcrdma_hdr h;

	rpcrdma_hdr_init(&h, xid, credit, RPCRDMA_DONE);
	return rpcrdma_hdr_encode(w, &h);
}

/* Total length of a Write chunk, or -E2BIG. */
int rpcrdma_write_chunk_len(const struct rpcrdma_write_chunk *wc, uint64_t *len)
{
	const char *why;

	return chunk_total(wc, len, &why);
}

/* The Read chunks of h's Read list. */
int rpcrdma_read_chunks(const struct rpcrdma_hdr *h, struct rpcrdma_read_chunk *out, uint32_t *n)
{
	const char *why;

	return read_groups(h, out, n, &why);
}

/* Fold one segment's handle into *handle (*n segments seen so far); false
 * once two differ. */
static bool same_handle(uint32_t seg_handle, uint32_t *handle, uint32_t *n)
{
	if ((*n)++ == 0)
		*handle = seg_handle;
	return *handle == seg_handle;
}

/* See rpcrdma_hdr.h. */
bool rpcrdma_hdr_one_handle(const struct rpcrdma_hdr *h, uint32_t *handle)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < h->nreads; i++)
		if (!same_handle(h->reads[i].seg.handle, handle, &n))
			return false;
	for (uint32_t k = 0; k < h->nwrites; k++)
		for (uint32_t s = 0; s < h->writes[k].nsegs; s++)
			if (!same_handle(h->writes[k].segs[s].handle, handle, &n))
				return false;
	for (uint32_t s = 0; h->has_reply && s < h->reply.nsegs; s++)
		if (!same_handle(h->reply.segs[s].handle, handle, &n))
			return false;
	return n > 0 && *handle != 0; /* 0 names no key (a receive's "none") */
}

/* Same fixed words and same body for the proc. */
bool rpcrdma_hdr_equal(const struct rpcrdma_hdr *a, const struct rpcrdma_hdr *b)
{
	if (a->xid != b->xid || a->vers != b->vers || a->credit != b->credit || a->proc != b->proc)
		return false;
	return a->proc < RPCRDMA_NPROCS && procs[a->proc].equal(a, b);
}
