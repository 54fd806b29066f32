/*
 * nfs3_proc.h: the NFSv3 procedure functions, spread over nfs3_proc*.c by
 * theme and gathered into the table in nfs3_proc.c.
 */
#ifndef NFSRDMA_NFS3_PROC_H
#define NFSRDMA_NFS3_PROC_H

#include "server/backend_int.h"

/* READDIR/READDIRPLUS: at most this many entries per reply, as the XDR
 * routines encode and free the entry list recursively. */
#define NFS3_READDIR_MAX_ENTRIES 2048

/* XDR sizes: a reply's fixed part (status, post_op_attr, verifier, list end,
 * eof); an entry's (list link, fileid, name, cookie); READDIRPLUS extras
 * (post_op_attr, post_op_fh3 header). */
#define RD_BASE	      (4 + 4 + 84 + 8 + 4 + 4)
#define RD_ENTRY(len) (4 + 8 + 4 + (((len) + 3) & ~(size_t)3) + 8)
#define RD_PLUS_EXTRA (4 + 84 + 4 + 4 + NFS3_FHSIZE)

/* Apply sattr3 to the object fd refers to (stat st), as the caller's identity
 * in force: size (regular files; fd must be writable), owner, mode, times. */
nfsstat3 nfs3_sattr_apply(int fd, const struct stat *st, const sattr3 *sa);

/* Resolve a directory handle (NOTDIR if it is not one). */
nfsstat3 nfs3_dir_resolve(struct nfs_req *req, const nfs_fh3 *fh, unsigned flags, struct be_obj *d);

void nfs3_proc_read(struct nfs_req *req, void *argp, void *resp);
void nfs3_proc_write(struct nfs_req *req, void *argp, void *resp);
void nfs3_proc_commit(struct nfs_req *req, void *argp, void *resp);
void nfs3_proc_create(struct nfs_req *req, void *argp, void *resp);
void nfs3_proc_mkdir(struct nfs_req *req, void *argp, void *resp);
void nfs3_proc_symlink(struct nfs_req *req, void *argp, void *resp);
void nfs3_proc_mknod(struct nfs_req *req, void *argp, void *resp);
void nfs3_proc_remove(struct nfs_req *req, void *argp, void *resp);
void nfs3_proc_rmdir(struct nfs_req *req, void *argp, void *resp);
void nfs3_proc_rename(struct nfs_req *req, void *argp, void *resp);
void nfs3_proc_link(struct nfs_req *req, void *argp, void *resp);
void nfs3_proc_readdir(struct nfs_req *req, void *argp, void *resp);
void nfs3_proc_readdirplus(struct nfs_req *req, void *argp, void *resp);
/* Free a READDIR/READDIRPLUS entry list without recursion. */
void nfs3_readdir_free(READDIR3res *res);
void nfs3_readdirplus_free(READDIRPLUS3res *res);

#endif
