/*
 * fuzz_nlm: libFuzzer target for the server's lock manager and status monitor
 * (NLM v4, NSM v1) as a hostile client reaches them. Each input is one RPC
 * call, dispatched (rpc_dispatch) to the real procedures over a POSIX export
 * in a scratch directory, so what is fuzzed is the arguments' decoding and
 * everything the procedures do with them: lock owners, byte ranges merged and
 * split, shares, blocked requests, the limits per client, reboots (SM_NOTIFY,
 * FREE_ALL) and the answers. State carries over from one input to the next,
 * within the limits, as it would from one call to the next.
 *
 * File handles: a 4-byte netobj "FH@0" .. "FH@3" in the input stands for the
 * handle of scratch file 0 .. 3, so that the seeds in t/fuzz/corpus/nlm stay
 * valid whatever the handles are on this machine. Calls back to clients
 * (GRANTED, the _RES answers) go to a client rpcbind port where nothing
 * listens. Built by `make fuzz`, run by `make fuzz-run`; needs to run as root
 * (the backend opens files by handle).
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/stat.h>

#include "common/base/log.h"
#include "common/rpc/rpc.h"
#include "server/nfs3.h"
#include "server/nlm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NFILES	    4
#define MARK	    "FH@"
#define REPLY_CAP   65536
#define CALL_MAX    (1u << 20)
#define UNUSED_PORT 9 /* discard: nothing answers a call back there */

static struct nfs_backend *be;
static struct rpc_server *srv;
static struct sockaddr_in peer;
static unsigned char fh[NFILES][NFS3_FHSIZE];
static unsigned fh_len[NFILES];

/* Run a MOUNT or NFS procedure directly, as the server would. */
static void run(const struct nfs_proc *p, struct nfs_req *req, void *args, void *res)
{
	memset(res, 0, p->wire->res_size);
	p->fn(req, args, res);
}

/* The handle of the export's root (MNT), then of file i (CREATE). */
static void make_handles(const char *dir)
{
	struct nfs_req req = {.be = be,
			      .client = (const struct sockaddr *)&peer,
			      .client_len = sizeof(peer),
			      .cred = {.flavor = NFS_AUTH_SYS}};
	char *path = (char *)dir;
	mountres3 mres;
	nfs_fh3 root;

	run(&mount3_procs[MOUNTPROC3_MNT], &req, &path, &mres);
	if (mres.fhs_status != MNT3_OK)
		abort();
	root.data.data_len = mres.mountres3_u.mountinfo.fhandle.fhandle3_len;
	root.data.data_val = mres.mountres3_u.mountinfo.fhandle.fhandle3_val;
	for (int i = 0; i < NFILES; i++) {
		char name[8];
		CREATE3args a = {.where = {.dir = root, .name = name}, .how = {.mode = UNCHECKED}};
		CREATE3res r;
		nfs_fh3 *h;

		snprintf(name, sizeof(name), "f%d", i);
		a.how.createhow3_u.obj_attributes.mode.set_it = TRUE;
		a.how.createhow3_u.obj_attributes.mode.set_mode3_u.mode = 0666;
		run(&nfs3_procs[NFSPROC3_CREATE], &req, &a, &r);
		h = &r.CREATE3res_u.resok.obj.post_op_fh3_u.handle;
		if (r.status != NFS3_OK || !r.CREATE3res_u.resok.obj.handle_follows ||
		    h->data.data_len > NFS3_FHSIZE)
			abort();
		memcpy(fh[i], h->data.data_val, h->data.data_len);
		fh_len[i] = h->data.data_len;
		nfs_proc_free_res(&nfs3_procs[NFSPROC3_CREATE], &req, &r);
	}
	nfs_proc_free_res(&mount3_procs[MOUNTPROC3_MNT], &req, &mres);
}

static char dir[] = "/tmp/nfsrdma-fuzz-nlm-XXXXXX";

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* At exit: the scratch export goes (the lock manager's descriptors with the process). */
static void remove_scratch(void)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The export, the lock manager and a server with NLM and NSM, made once. */
static void setup(void)
{
	static char sm[PATH_MAX];
	static struct nfs_export_conf conf;
	struct rpc_server_params sp = {.threads = 1};
	struct nlm_params np = {.grace_s = 0,
				.clients_max = 8,
				.owners_per_client = 16,
				.locks_per_client = 64,
				.blocked_per_client = 8,
				.blocked_timeout_s = 2,
				.callback_retries = 1,
				.client_rpcbind_port = UNUSED_PORT,
				.name = "fuzz-server"};
	struct nlm *n;

	log_set_level(LOG_LVL_ERR);
	if (!mkdtemp(dir) || chmod(dir, 0755) != 0)
		abort();
	atexit(remove_scratch);
	snprintf(sm, sizeof(sm), "%s/.sm", dir);
	np.state_dir = sm;
	conf.path = dir;
	conf.anon_uid = conf.anon_gid = 65534;
	if (nfs_backend_create(&conf, 1, 1 << 20, &be) != 0 ||
	    nfs_backend_set_handle_key(be, "fuzz_nlm: a handle key, 32 bytes", 32) != 0)
		abort();
	peer.sin_family = AF_INET;
	peer.sin_port = htons(700);
	peer.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	make_handles(dir);
	if (nlm_create(&np, be, &n) != 0 || rpc_server_create(&sp, &srv) != 0 ||
	    nlm_register(srv, n) != 0)
		abort();
}

/* The call with each marker netobj (length 4, "FH@i") replaced by handle i. */
static size_t expand(const uint8_t *in, size_t len, uint8_t *out)
{
	size_t o = 0;

	for (size_t i = 0; i < len;) {
		unsigned k;

		if (i + 8 <= len && i % 4 == 0 && !memcmp(in + i, "\0\0\0\4" MARK, 7) &&
		    (k = in[i + 7] - '0') < NFILES) {
			uint32_t be_len = htonl(fh_len[k]);

			memcpy(out + o, &be_len, 4);
			memcpy(out + o + 4, fh[k], fh_len[k]);
			o += 4 + fh_len[k];
			while (o % 4)
				out[o++] = 0;
			i += 8;
			continue;
		}
		out[o++] = in[i++];
	}
	return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t reply[REPLY_CAP], *call;
	struct rpc_xreq x;
	int rc;

	if (!srv)
		setup();
	if (size > CALL_MAX / (4 + NFS3_FHSIZE) * 8)
		return 0;
	if (!call && !(call = malloc(CALL_MAX)))
		abort();
	memset(&x, 0, sizeof(x));
	x.call = call;
	x.call_len = expand(data, size, call);
	x.peer = (const struct sockaddr *)&peer;
	x.peer_len = sizeof(peer);
	x.xprt = RPC_XPRT_UDP;
	x.reply = reply;
	x.reply_cap = sizeof(reply);
	rc = rpc_dispatch(srv, &x);
	if (rc == 0 && x.reply_len > x.reply_cap)
		abort();
	if (rc != -EBADMSG)
		rpc_dispatch_done(srv, &x);
	return 0;
}
