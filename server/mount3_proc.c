/*
 * mount3_proc.c: MOUNT v3 (RFC 1813 appendix I): MNT hands out an export's
 * root handle (after the export's client and integrity rules), and the mount
 * list that DUMP shows is kept in memory, bounded, keyed by the client's
 * numeric address. Only an export's own path can be mounted, not a directory
 * below it.
 */
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/log.h"
#include "server/backend_int.h"

/* The client's numeric address, the mount list's key. */
static void client_host(const struct nfs_req *req, char *buf, size_t len)
{
	if (req->client == NULL || req->client_len == 0 ||
	    getnameinfo(req->client, req->client_len, buf, (socklen_t)len, NULL, 0,
			NI_NUMERICHOST) != 0)
		snprintf(buf, len, "unknown");
}

/* Add host:path to the mount list unless it is there (or the list is full). */
static void mounts_add(struct nfs_backend *be, const char *host, const char *path)
{
	struct be_mount *m;

	pthread_mutex_lock(&be->mnt_lock);
	for (size_t i = 0; i < be->nmounts; i++)
		if (strcmp(be->mounts[i].host, host) == 0 && strcmp(be->mounts[i].path, path) == 0)
			goto out;
	if (be->nmounts >= BE_MOUNTS_MAX) {
		log_warn("mount list full (%d): %s:%s not recorded", BE_MOUNTS_MAX, host, path);
		goto out;
	}
	m = realloc(be->mounts, (be->nmounts + 1) * sizeof(*m));
	if (m == NULL)
		goto out;
	be->mounts = m;
	m[be->nmounts].host = strdup(host);
	m[be->nmounts].path = strdup(path);
	if (m[be->nmounts].host && m[be->nmounts].path)
		be->nmounts++;
	else {
		free(m[be->nmounts].host);
		free(m[be->nmounts].path);
	}
out:
	pthread_mutex_unlock(&be->mnt_lock);
}

/* Remove host's entries for path (every entry of host if path is NULL). */
static void mounts_del(struct nfs_backend *be, const char *host, const char *path)
{
	size_t i = 0;

	pthread_mutex_lock(&be->mnt_lock);
	while (i < be->nmounts) {
		struct be_mount *m = &be->mounts[i];

		if (strcmp(m->host, host) == 0 && (path == NULL || strcmp(m->path, path) == 0)) {
			free(m->host);
			free(m->path);
			*m = be->mounts[--be->nmounts];
		} else {
			i++;
		}
	}
	pthread_mutex_unlock(&be->mnt_lock);
}

/* NULL: nothing to do. */
static void mount3_proc_null(struct nfs_req *req, void *argp, void *resp)
{
}

/* MNT body: the root handle and the flavors the export accepts. */
static mountstat3 mnt_export(struct nfs_req *req, const char *path, mountres3_ok *ok)
{
	struct export *e = be_export_by_path(req->be, path);
	unsigned char fh[NFS3_FHSIZE];
	char host[NI_MAXHOST];
	size_t len;

	if (e == NULL)
		return MNT3ERR_NOENT;
	if (be_export_check(req, e, 0) != NFS3_OK)
		return MNT3ERR_ACCES;
	if (be_fh_encode(e, &e->root_fh, fh, &len) < 0)
		return MNT3ERR_SERVERFAULT;
	ok->fhandle.fhandle3_val = malloc(len);
	ok->auth_flavors.auth_flavors_val = malloc(sizeof(int));
	if (ok->fhandle.fhandle3_val == NULL || ok->auth_flavors.auth_flavors_val == NULL)
		return MNT3ERR_SERVERFAULT;
	memcpy(ok->fhandle.fhandle3_val, fh, len);
	ok->fhandle.fhandle3_len = (u_int)len;
	ok->auth_flavors.auth_flavors_val[0] = NFS_AUTH_SYS;
	ok->auth_flavors.auth_flavors_len = 1;
	client_host(req, host, sizeof(host));
	mounts_add(req->be, host, e->path);
	return MNT3_OK;
}

/* MNT: mount an export by its path. */
static void mount3_proc_mnt(struct nfs_req *req, void *argp, void *resp)
{
	dirpath *path = argp;
	mountres3 *r = resp;

	r->fhs_status = *path ? mnt_export(req, *path, &r->mountres3_u.mountinfo) : MNT3ERR_INVAL;
	if (r->fhs_status != MNT3_OK) {
		free(r->mountres3_u.mountinfo.fhandle.fhandle3_val);
		free(r->mountres3_u.mountinfo.auth_flavors.auth_flavors_val);
		memset(&r->mountres3_u, 0, sizeof(r->mountres3_u));
		log_info("MNT '%s' refused: %d", *path ? *path : "", (int)r->fhs_status);
	}
}

/* DUMP: the mount list (what clients said they mounted). */
static void mount3_proc_dump(struct nfs_req *req, void *argp, void *resp)
{
	struct nfs_backend *be = req->be;
	mountlist *tail = resp;

	pthread_mutex_lock(&be->mnt_lock);
	for (size_t i = 0; i < be->nmounts; i++) {
		struct mountbody *b = calloc(1, sizeof(*b));

		if (b == NULL)
			break;
		b->ml_hostname = strdup(be->mounts[i].host);
		b->ml_directory = strdup(be->mounts[i].path);
		*tail = b;
		tail = &b->ml_next;
		if (b->ml_hostname == NULL || b->ml_directory == NULL)
			break;
	}
	pthread_mutex_unlock(&be->mnt_lock);
}

/* UMNT: forget this client's mount of a path. */
static void mount3_proc_umnt(struct nfs_req *req, void *argp, void *resp)
{
	dirpath *path = argp;
	char host[NI_MAXHOST];
	struct export *e;

	if (*path == NULL)
		return;
	client_host(req, host, sizeof(host));
	e = be_export_by_path(req->be, *path);
	mounts_del(req->be, host, e ? e->path : *path);
}

/* UMNTALL: forget every mount of this client. */
static void mount3_proc_umntall(struct nfs_req *req, void *argp, void *resp)
{
	char host[NI_MAXHOST];

	client_host(req, host, sizeof(host));
	mounts_del(req->be, host, NULL);
}

/* The export's client list as MOUNT groups. */
static mntgroups export_groups(const struct export *e)
{
	mntgroups head = NULL, *tail = &head;

	for (size_t i = 0; i < e->conf.nclients; i++) {
		struct groupnode *g = calloc(1, sizeof(*g));

		if (g == NULL || (g->gr_name = strdup(e->clients[i])) == NULL) {
			free(g);
			break;
		}
		*tail = g;
		tail = &g->gr_next;
	}
	return head;
}

/* EXPORT: every export and its client list. */
static void mount3_proc_export(struct nfs_req *req, void *argp, void *resp)
{
	struct nfs_backend *be = req->be;
	mntexports *tail = resp;

	for (size_t i = 0; i < be->nexports; i++) {
		struct exportnode *x = calloc(1, sizeof(*x));

		if (x == NULL)
			break;
		*tail = x;
		tail = &x->ex_next;
		if ((x->ex_dir = strdup(be->exports[i].path)) == NULL)
			break;
		x->ex_groups = export_groups(&be->exports[i]);
	}
}

#define PROC(n, fn)                                                                                \
	{                                                                                          \
		&mount3_xdr_procs[MOUNTPROC3_##n], fn, 0                                           \
	}

/* See nfs3.h. Indexed by procedure number. */
const struct nfs_proc mount3_procs[MOUNT3_NPROCS] = {
	PROC(NULL, mount3_proc_null),	    PROC(MNT, mount3_proc_mnt),
	PROC(DUMP, mount3_proc_dump),	    PROC(UMNT, mount3_proc_umnt),
	PROC(UMNTALL, mount3_proc_umntall), PROC(EXPORT, mount3_proc_export),
};
