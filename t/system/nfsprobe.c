/*
 * nfsprobe: a few NFSv3 calls over TCP for the daemon tests, around a restart.
 *   nfsprobe before HOST PORT EXPORT STATE   MNT, CREATE "probe", an UNSTABLE
 *       WRITE; saves the file handle and the write verifier in STATE
 *   nfsprobe after HOST PORT EXPORT STATE    GETATTR with the saved handle (it
 *       must still resolve), READ it back, COMMIT: the verifier must differ
 * Prints one line per finding; exits 0 when all hold.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rpc/rpc_tcp.h"
#include "common/nfs/mount_prot.h"
#include "common/nfs/nfs3_prot.h"
#include "common/nfs/nfs_prog.h"

#define DATA "written before the restart, unstable\n"

/* The calls made, so their results (and the transport's buffers) are freed at the end. */
static struct rpc_call made[16];
static unsigned nmade;

static int call(struct rpc_clnt *c, uint32_t prog, uint32_t proc, xdrproc_t xa, void *a,
		xdrproc_t xr, void *r)
{
	struct rpc_call *rc = &made[nmade];
	int e;

	*rc = (struct rpc_call){.prog = prog,
				.vers = 3,
				.proc = proc,
				.xdr_args = xa,
				.args = a,
				.xdr_res = xr,
				.res = r,
				.timeout_ms = 10000};
	e = rpc_clnt_call(c, rc);
	if (e)
		fprintf(stderr, "nfsprobe: call %u/%u: %s\n", prog, proc, strerror(-e));
	else
		nmade++;
	return e;
}

static void free_calls(struct rpc_clnt *c)
{
	while (nmade)
		rpc_clnt_free_res(c, &made[--nmade]);
}

static int mount_root(struct rpc_clnt *c, const char *path, nfs_fh3 *root)
{
	dirpath p = (char *)path;
	static mountres3 r; /* static: freed with the call at the end of main */

	memset(&r, 0, sizeof(r));
	if (call(c, MOUNT_PROGRAM, MOUNTPROC3_MNT, (xdrproc_t)xdr_dirpath, &p,
		 (xdrproc_t)xdr_mountres3, &r) ||
	    r.fhs_status != MNT3_OK)
		return -1;
	root->data.data_len = r.mountres3_u.mountinfo.fhandle.fhandle3_len;
	root->data.data_val = malloc(root->data.data_len);
	memcpy(root->data.data_val, r.mountres3_u.mountinfo.fhandle.fhandle3_val,
	       root->data.data_len);
	return 0;
}

static void hex(FILE *f, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%02x", ((const unsigned char *)p)[i]);
	fputc('\n', f);
}

static size_t unhex(const char *s, unsigned char *out, size_t max)
{
	size_t n = 0;
	unsigned v;

	while (n < max && sscanf(s + 2 * n, "%2x", &v) == 1)
		out[n++] = (unsigned char)v;
	return n;
}

static int before(struct rpc_clnt *c, nfs_fh3 *root, const char *state)
{
	CREATE3args ca = {.where = {*root, "probe"}};
	static CREATE3res cr;
	WRITE3args wa;
	static WRITE3res wr;
	FILE *f;

	memset(&cr, 0, sizeof(cr));
	ca.how.mode = UNCHECKED;
	if (call(c, NFS_PROGRAM, NFSPROC3_CREATE, (xdrproc_t)xdr_CREATE3args, &ca,
		 (xdrproc_t)xdr_CREATE3res, &cr) ||
	    cr.status != NFS3_OK || !cr.CREATE3res_u.resok.obj.handle_follows) {
		puts("create failed");
		return 1;
	}
	memset(&wa, 0, sizeof(wa));
	memset(&wr, 0, sizeof(wr));
	wa.file = cr.CREATE3res_u.resok.obj.post_op_fh3_u.handle;
	wa.count = sizeof(DATA) - 1;
	wa.stable = UNSTABLE;
	wa.data.data_len = wa.count;
	wa.data.data_val = DATA;
	if (call(c, NFS_PROGRAM, NFSPROC3_WRITE, (xdrproc_t)xdr_WRITE3args, &wa,
		 (xdrproc_t)xdr_WRITE3res, &wr) ||
	    wr.status != NFS3_OK) {
		puts("write failed");
		return 1;
	}
	f = fopen(state, "w");
	hex(f, wa.file.data.data_val, wa.file.data.data_len);
	hex(f, wr.WRITE3res_u.resok.verf, NFS3_WRITEVERFSIZE);
	fclose(f);
	printf("wrote %u bytes UNSTABLE, committed: %s\n", wr.WRITE3res_u.resok.count,
	       wr.WRITE3res_u.resok.committed == UNSTABLE ? "no" : "yes");
	return 0;
}

static int after(struct rpc_clnt *c, const char *state)
{
	unsigned char fh[NFS3_FHSIZE], verf[NFS3_WRITEVERFSIZE];
	char line[512], data[128];
	GETATTR3args ga;
	static GETATTR3res gr;
	READ3args ra;
	READ3res rr;
	COMMIT3args ka;
	static COMMIT3res kr;
	int bad = 0;
	FILE *f = fopen(state, "r");

	if (!f || !fgets(line, sizeof(line), f))
		return 1;
	ga.object.data.data_len = (u_int)unhex(line, fh, sizeof(fh));
	ga.object.data.data_val = (char *)fh;
	if (!fgets(line, sizeof(line), f) || unhex(line, verf, sizeof(verf)) != sizeof(verf))
		return 1;
	fclose(f);
	memset(&gr, 0, sizeof(gr));
	if (call(c, NFS_PROGRAM, NFSPROC3_GETATTR, (xdrproc_t)xdr_GETATTR3args, &ga,
		 (xdrproc_t)xdr_GETATTR3res, &gr) ||
	    gr.status != NFS3_OK) {
		printf("handle from before the restart: status %d\n", (int)gr.status);
		bad = 1;
	} else {
		printf("handle from before the restart still resolves\n");
	}
	memset(&ra, 0, sizeof(ra));
	memset(&rr, 0, sizeof(rr));
	ra.file = ga.object;
	ra.count = sizeof(data);
	{
		struct rpc_call rc = {.prog = NFS_PROGRAM,
				      .vers = 3,
				      .proc = NFSPROC3_READ,
				      .xdr_args = (xdrproc_t)xdr_READ3args,
				      .args = &ra,
				      .xdr_res = (xdrproc_t)xdr_READ3res,
				      .res = &rr,
				      .reply_data = data,
				      .reply_data_len = sizeof(data)};

		if (rpc_clnt_call(c, &rc) == 0 && rr.status == NFS3_OK &&
		    rr.READ3res_u.resok.count == sizeof(DATA) - 1 &&
		    memcmp(rr.READ3res_u.resok.data.data_val, DATA, sizeof(DATA) - 1) == 0) {
			printf("the data written before the restart reads back\n");
		} else {
			printf("the data written before the restart is not there\n");
			bad = 1;
		}
		rpc_clnt_free_res(c, &rc);
	}
	memset(&ka, 0, sizeof(ka));
	memset(&kr, 0, sizeof(kr));
	ka.file = ga.object;
	if (call(c, NFS_PROGRAM, NFSPROC3_COMMIT, (xdrproc_t)xdr_COMMIT3args, &ka,
		 (xdrproc_t)xdr_COMMIT3res, &kr) ||
	    kr.status != NFS3_OK) {
		puts("commit failed");
		bad = 1;
	} else if (memcmp(kr.COMMIT3res_u.resok.verf, verf, sizeof(verf)) == 0) {
		puts("the write verifier did not change across the restart");
		bad = 1;
	} else {
		puts("the write verifier changed across the restart");
	}
	return bad;
}

int main(int argc, char **argv)
{
	struct rpc_clnt *c;
	nfs_fh3 root;
	int rc;

	if (argc != 6 || (strcmp(argv[1], "before") && strcmp(argv[1], "after"))) {
		fprintf(stderr, "usage: nfsprobe before|after HOST PORT EXPORT STATE\n");
		return 2;
	}
	if (rpc_tcp_clnt_create(argv[2], argv[3], 5000, 1 << 20, &c) != 0) {
		fprintf(stderr, "nfsprobe: cannot connect to %s:%s\n", argv[2], argv[3]);
		return 1;
	}
	c->cred.uid = c->cred.gid = 0;
	if (mount_root(c, argv[4], &root) != 0) {
		puts("mount failed");
		rpc_clnt_destroy(c);
		return 1;
	}
	rc = !strcmp(argv[1], "before") ? before(c, &root, argv[5]) : after(c, argv[5]);
	free_calls(c);
	free(root.data.data_val);
	rpc_clnt_destroy(c);
	return rc;
}
