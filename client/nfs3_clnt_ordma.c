/*
 * nfs3_clnt_ordma.c: Optimistic RDMA on the client (issue 23, -o ordma; the
 * slot layout and its check are common/nfs/ordma.h, the side program
 * common/nfs/ordma_prot.x).
 *
 * The client keeps a directory of references, (file, block) -> the address
 * of the server's slot, learnt from MAP after READs it had to send. A READ
 * inside one block it has a reference to is one RDMA Read of that slot; the
 * bytes are used only if the slot names the file and block, is intact, and
 * was filled when the file's change attribute (ctime) was the one the client
 * holds now under its attribute-cache rules (with noac: a GETATTR first), so
 * a block is never staler than a READ under the same rules would give.
 * Anything else is a miss: the reference goes and READ is sent.
 *
 * References belong to the connection MAP was answered on (the key and the
 * addresses are that server process's): on another connection they are not
 * used, so a restarted server is never read with a key it does not know
 * (which would kill the connection). They belong to the credential MAP was
 * made with, too: the server answers MAP only to one who may READ the file,
 * and an RDMA Read is checked by nobody, so another user of the mount (a
 * FUSE mount serves many) reads with READ until its own MAP. The directory
 * is a fixed table where a new reference replaces whatever hashed to its
 * place.
 */
#include <stdlib.h>
#include <string.h>

#include "client/nfs3_clnt_int.h"
#include "common/base/log.h"

#define REFS	     (1u << 16) /* references kept (2 MiB) */
#define MAP_SPAN     (1u << 20) /* MAP asks about this much around a miss */
#define MAP_REGIONS  1024	/* regions remembered as recently asked about */
#define MAP_AGAIN_MS 200	/* a region is asked about again after this */

struct oref {
	uint64_t fh_hash, offset, addr, conn; /* conn 0: empty */
	uint64_t cred;			      /* cred_hash of MAP's caller */
};

struct nfs3c_ordma {
	pthread_mutex_t lock;
	uint64_t conn;	 /* the connection the geometry and references are from */
	int unavailable; /* its server has no Optimistic RDMA for us */
	uint32_t block, slot_size, rkey;
	uint64_t base, length;
	struct oref refs[REFS];
	struct {
		uint64_t fh_hash, region, when_ms;
	} asked[MAP_REGIONS];
};

static const char *const cause_names[NFS3C_ORDMA_CAUSES] = {"hit",    "torn",  "other", "stale",
							    "format", "noref", "error"};

/* See nfs3_clnt.h. */
const char *nfs3c_ordma_cause(unsigned cause)
{
	return cause < NFS3C_ORDMA_CAUSES ? cause_names[cause] : "?";
}

/* See nfs3_clnt_int.h. */
int nfs3c_ordma_init(struct nfs3c *c)
{
	if ((c->ordma = calloc(1, sizeof(*c->ordma))) == NULL)
		return -ENOMEM;
	pthread_mutex_init(&c->ordma->lock, NULL);
	return 0;
}

/* See nfs3_clnt_int.h. */
void nfs3c_ordma_fini(struct nfs3c *c)
{
	if (!c->ordma)
		return;
	pthread_mutex_destroy(&c->ordma->lock);
	free(c->ordma);
	c->ordma = NULL;
}

static struct oref *ref_at(struct nfs3c_ordma *o, uint64_t fh_hash, uint64_t offset)
{
	uint64_t h = (fh_hash ^ (offset * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;

	return &o->refs[(h >> 40) & (REFS - 1)];
}

static uint64_t fh_hash_of(const struct nfs3c_fh *fh)
{
	return ordma_fh_hash(fh->data, fh->len);
}

/* Who a call is made for (cr NULL: the mount's default credential). */
static uint64_t cred_hash(const struct nfs3c *c, const struct rpc_cred *cr)
{
	const struct rpc_cred *k = cr ? cr : &c->p.cred;
	uint32_t n = k->ngids < RPC_MAX_GIDS ? k->ngids : RPC_MAX_GIDS;
	uint32_t v[4 + RPC_MAX_GIDS] = {k->flavor, k->uid, k->gid, n};

	memcpy(v + 4, k->gids, n * sizeof(v[0]));
	return ordma_fh_hash(v, (4 + n) * sizeof(v[0]));
}

static void miss(struct nfs3c *c, unsigned cause)
{
	nfs3c_stat_add(&c->st.ordma_miss[cause], 1);
}

/* The id of the connection in use now, 0 if none. */
static uint64_t conn_now(struct nfs3c *c)
{
	uint64_t id;

	pthread_mutex_lock(&c->lock);
	id = c->conn ? c->conn->id : 0;
	pthread_mutex_unlock(&c->lock);
	return id;
}

/* One RDMA Read of a slot on connection `conn` (and no other). */
static int read_slot(struct nfs3c *c, uint64_t conn, uint64_t addr, uint32_t rkey, void *img,
		     uint32_t len)
{
	struct nfs3c_conn *cn;
	int rc;

	if ((rc = nfs3c_conn_get(c, nfs3c_now_ms() + (uint64_t)c->p.timeout_ms, &cn)) != 0)
		return rc;
	rc = cn->id == conn ? rpc_clnt_read_remote(cn->rpc[0], addr, rkey, img, len) : -ESTALE;
	nfs3c_conn_put(c, cn, rc == -ECONNRESET || rc == -ETIMEDOUT);
	return rc;
}

/* See nfs3_clnt_int.h. */
int nfs3c_ordma_read(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *fh,
		     uint64_t off, void *buf, uint32_t len, uint32_t *got, int *eof)
{
	struct nfs3c_ordma *o = c->ordma;
	uint64_t fh_hash = fh_hash_of(fh), boff, change;
	uint32_t block, slot_size, rkey, slen, n;
	struct oref ref, *r;
	const void *data;
	unsigned char *img;
	fattr3 a;
	int m, rc;

	pthread_mutex_lock(&o->lock);
	block = o->block;
	if (!o->conn || o->unavailable || !block || len == 0 || off % block + len > block) {
		pthread_mutex_unlock(&o->lock);
		return -EAGAIN; /* nothing to try: not a miss */
	}
	boff = off - off % block;
	r = ref_at(o, fh_hash, boff);
	ref = *r;
	slot_size = o->slot_size;
	rkey = o->rkey;
	pthread_mutex_unlock(&o->lock);
	if (ref.conn == 0 || ref.fh_hash != fh_hash || ref.offset != boff ||
	    ref.cred != cred_hash(c, cr)) {
		miss(c, NFS3C_ORDMA_NOREF);
		return -EAGAIN;
	}
	if (nfs3c_getattr(c, cr, fh, 0, &a) != 0) {
		miss(c, NFS3C_ORDMA_ERROR);
		return -EAGAIN;
	}
	change = ordma_change(a.ctime.seconds, a.ctime.nseconds);
	if ((img = malloc(slot_size)) == NULL)
		return -EAGAIN;
	rc = read_slot(c, ref.conn, ref.addr, rkey, img, slot_size);
	m = rc ? NFS3C_ORDMA_ERROR
	       : (int)ordma_slot_check(img, block, fh_hash, boff, change, &data, &slen);
	if (m != ORDMA_HIT) {
		pthread_mutex_lock(&o->lock);
		if (r->conn == ref.conn && r->fh_hash == fh_hash && r->offset == boff)
			r->conn = 0;
		pthread_mutex_unlock(&o->lock);
		free(img);
		miss(c, (unsigned)m);
		return -EAGAIN;
	}
	n = slen > off - boff ? slen - (uint32_t)(off - boff) : 0;
	if (n > len)
		n = len;
	memcpy(buf, (const unsigned char *)data + (off - boff), n);
	free(img);
	*got = n;
	*eof = off + n >= a.size;
	nfs3c_stat_add(&c->st.ordma_hits, 1);
	nfs3c_stat_add(&c->st.bytes_read, n);
	return 0;
}

/* Whether the region around off of the file was asked about lately; marks it
 * asked now if not. */
static int asked_lately(struct nfs3c_ordma *o, uint64_t fh_hash, uint64_t region)
{
	uint64_t now = nfs3c_now_ms();
	unsigned i = (unsigned)(((fh_hash ^ region) * 0x9e3779b97f4a7c15ull) >> 54) % MAP_REGIONS;
	int lately;

	pthread_mutex_lock(&o->lock);
	lately = o->asked[i].fh_hash == fh_hash && o->asked[i].region == region &&
		 now - o->asked[i].when_ms < MAP_AGAIN_MS;
	if (!lately) {
		o->asked[i].fh_hash = fh_hash;
		o->asked[i].region = region;
		o->asked[i].when_ms = now;
	}
	pthread_mutex_unlock(&o->lock);
	return lately;
}

/* Take a MAP's answer, from connection conn, to a call made for cred: the
 * geometry (a new connection drops every older reference), then the
 * references that lie inside. */
static void take_map(struct nfs3c *c, uint64_t conn, uint64_t fh_hash, uint64_t cred,
		     const ORDMAMAP3resok *ok)
{
	struct nfs3c_ordma *o = c->ordma;
	uint32_t bad = 0;

	if (ok->block < ORDMA_BLOCK_MIN || ok->block > ORDMA_BLOCK_MAX ||
	    (ok->block & (ok->block - 1)) || ok->slot_size != ordma_slot_size(ok->block) ||
	    ok->base + ok->length < ok->base) {
		if (nfs3c_first_warning(c, NFS3C_WARN_ORDMA))
			log_warn("server %s: MAP gave a cache of blocks of %u in slots of %u: not "
				 "used",
				 c->host, ok->block, ok->slot_size);
		return;
	}
	pthread_mutex_lock(&o->lock);
	if (o->conn != conn) {
		memset(o->refs, 0, sizeof(o->refs));
		o->conn = conn;
		o->unavailable = 0;
	}
	o->block = ok->block;
	o->slot_size = ok->slot_size;
	o->rkey = ok->rkey;
	o->base = ok->base;
	o->length = ok->length;
	for (u_int i = 0; i < ok->refs.refs_len; i++) {
		const ordma_ref3 *x = &ok->refs.refs_val[i];

		if (x->addr < ok->base || x->addr - ok->base > ok->length ||
		    ok->length - (x->addr - ok->base) < ok->slot_size || x->offset % ok->block) {
			bad++;
			continue;
		}
		*ref_at(o, fh_hash, x->offset) =
			(struct oref){fh_hash, x->offset, x->addr, conn, cred};
	}
	pthread_mutex_unlock(&o->lock);
	if (bad && nfs3c_first_warning(c, NFS3C_WARN_ORDMA))
		log_warn("server %s: MAP gave %u references outside its cache: not used", c->host,
			 bad);
}

/* See nfs3_clnt_int.h. */
void nfs3c_ordma_learn(struct nfs3c *c, const struct rpc_cred *cr, const struct nfs3c_fh *fh,
		       uint64_t off)
{
	struct nfs3c_ordma *o = c->ordma;
	uint64_t fh_hash = fh_hash_of(fh), conn = conn_now(c), cred = cred_hash(c, cr);
	ORDMAMAP3args a = {.offset = off - off % MAP_SPAN, .count = MAP_SPAN};
	ORDMAMAP3res r;
	struct nfs3c_req rq;
	int rc, unavailable;

	pthread_mutex_lock(&o->lock);
	unavailable = o->conn == conn && o->unavailable;
	pthread_mutex_unlock(&o->lock);
	if (!conn || unavailable || asked_lately(o, fh_hash ^ cred, a.offset))
		return;
	memset(&r, 0, sizeof(r));
	nfs3c_fh_to_xdr(fh, &a.file);
	nfs3c_req_init(&rq, ORDMAPROC_MAP, (xdrproc_t)xdr_ORDMAMAP3args, &a,
		       (xdrproc_t)xdr_ORDMAMAP3res, &r);
	rq.call.prog = ORDMA_PROGRAM;
	rq.call.vers = ORDMA_V1;
	rq.call.reply_hint = 64 + ORDMA_MAXREFS * 16; /* more than inline: a Reply chunk */
	rc = nfs3c_call(c, cr, &rq);
	nfs3c_stat_add(&c->st.ordma_maps, 1);
	if (rc == 0 && r.status == NFS3_OK)
		take_map(c, rq.conn->id, fh_hash, cred, &r.ORDMAMAP3res_u.resok);
	if (rc == -EPROTO || (rc == 0 && r.status == NFS3ERR_NOTSUPP)) {
		/* no such program here, or not for this export: READ alone */
		pthread_mutex_lock(&o->lock);
		if (o->conn != conn)
			memset(o->refs, 0, sizeof(o->refs));
		o->conn = conn;
		o->unavailable = 1;
		pthread_mutex_unlock(&o->lock);
		if (nfs3c_first_warning(c, NFS3C_WARN_ORDMA))
			log_warn("server %s: no Optimistic RDMA (%s): reading with READ alone",
				 c->host, rc ? "no such program" : "not on this export");
	}
	if (rc == 0)
		nfs3c_call_done(c, &rq);
}
