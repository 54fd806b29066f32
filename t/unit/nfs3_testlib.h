/*
 * nfs3_testlib.h: helpers the backend tests share: a scratch export under
 * $TMPDIR, and calls that go through the XDR routines both ways, as the RPC
 * layer would drive them.
 */
#ifndef NFSRDMA_NFS3_TESTLIB_H
#define NFSRDMA_NFS3_TESTLIB_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

#include "server/nfs3.h"

struct tenv {
	char dir[PATH_MAX];	  /* the scratch export */
	char index_dir[PATH_MAX]; /* its portable handles' index, beside it */
	struct nfs_export_conf conf;
	struct nfs_backend *be;
	struct nfs_req req;
	struct sockaddr_in client;
	nfs_fh3 root;
	char fh_key[33]; /* the handle key (32 bytes): kept across tenv_restart */
};

/* Call first in main: when this process cannot open files by handle
 * (open_by_handle_at needs CAP_DAC_READ_SEARCH) or switch identities (needs
 * root), print a TAP plan that skips the whole program with the reason, and
 * exit 0. cmocka 1.1 prints a skipped test as "not ok # SKIP", which the
 * automake TAP driver counts as a failure, so skips are per program. */
void tenv_require_root(void);

/* A fresh scratch directory, conf defaults (rw, no squash, anon 65534), the
 * caller root over AUTH_SYS from 192.0.2.1. Call tenv_start after tweaking.
 * NFSRDMA_TEST_HANDLES=portable in the environment gives the export portable
 * handles (server/fh_index.h), so that a test runs again with them. */
void tenv_init(struct tenv *t);
/* Create the backend with t->fh_key and MNT the export's root handle; 0 or a
 * negative errno. */
int tenv_start(struct tenv *t);
/* Destroy and re-create the backend, as a server restart does. */
int tenv_restart(struct tenv *t);
/* Destroy everything and remove the scratch directory. */
void tenv_fini(struct tenv *t);

/* Run an NFSv3 procedure: args are encoded and decoded, the procedure runs,
 * the result is encoded, the server side freed, and decoded into res (free it
 * with tfree). Fails the test if XDR fails. */
void tcall(struct tenv *t, int proc, void *args, void *res);
void tcall_req(struct tenv *t, struct nfs_req *req, int proc, void *args, void *res);
void tfree(int proc, void *res);
/* The same for MOUNT v3. */
void tcall_mnt(struct tenv *t, int proc, void *args, void *res);
void tfree_mnt(int proc, void *res);

/* Wait until path's ctime is 2 s old: the server keeps the kernel's
 * permission answers only for files whose ctime has settled. */
void t_settle_ctime(const char *path);

/* Handles. */
void fh_copy(nfs_fh3 *dst, const nfs_fh3 *src);
void fh_free(nfs_fh3 *fh);

/* Shorthands returning the status; *out (if not NULL) gets the handle. */
nfsstat3 t_lookup(struct tenv *t, const nfs_fh3 *dir, const char *name, nfs_fh3 *out);
nfsstat3 t_create(struct tenv *t, const nfs_fh3 *dir, const char *name, uint32_t mode,
		  nfs_fh3 *out);
nfsstat3 t_mkdir(struct tenv *t, const nfs_fh3 *dir, const char *name, nfs_fh3 *out);
nfsstat3 t_write(struct tenv *t, const nfs_fh3 *fh, uint64_t off, const void *data, size_t len,
		 stable_how how);
/* Read up to len bytes into buf; *got the bytes read. */
nfsstat3 t_read(struct tenv *t, const nfs_fh3 *fh, uint64_t off, void *buf, size_t len,
		size_t *got);
nfsstat3 t_getattr(struct tenv *t, const nfs_fh3 *fh, fattr3 *out);
/* REMOVE of dir/name; RENAME of dir/from to dir/to. */
nfsstat3 t_remove(struct tenv *t, const nfs_fh3 *dir, const char *name);
nfsstat3 t_rename(struct tenv *t, const nfs_fh3 *dir, const char *from, const char *to);

/* Path of name inside the scratch export. */
const char *tpath(struct tenv *t, const char *name);

#endif
