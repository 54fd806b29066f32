/*
 * export.c: exports at run time (export.h). The export id goes into every
 * file handle, so it must not change across restarts: it is the configured
 * fsid, or a hash of the export's real path.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "common/base/log.h"
#include "server/export.h"
#include "server/fh_index.h"

/* See export.h. */
uint32_t export_id_for_path(const char *path)
{
	uint32_t h = 2166136261u;

	for (const unsigned char *p = (const unsigned char *)path; *p; p++)
		h = (h ^ *p) * 16777619u;
	return h ? h : 1;
}

/* Copy the client names so the configuration may be freed after create. */
static int copy_clients(struct export *e, const struct nfs_export_conf *conf)
{
	if (conf->nclients == 0)
		return 0;
	e->clients = calloc(conf->nclients, sizeof(*e->clients));
	if (e->clients == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < conf->nclients; i++) {
		e->clients[i] = strdup(conf->clients[i] ? conf->clients[i] : "");
		if (e->clients[i] == NULL)
			return -ENOMEM;
	}
	e->conf.clients = (const char *const *)e->clients;
	return 0;
}

/* Copy the path without trailing slashes; it must be absolute. */
static int copy_path(struct export *e, const char *path)
{
	size_t len;

	if (path == NULL || path[0] != '/') {
		log_err("export '%s': the path must be absolute", path ? path : "(none)");
		return -EINVAL;
	}
	len = strlen(path);
	while (len > 1 && path[len - 1] == '/')
		len--;
	e->path = strndup(path, len);
	return e->path ? 0 : -ENOMEM;
}

/* The export's id: the configured fsid, or a hash of its real path. */
static int set_id(struct export *e)
{
	char real[PATH_MAX];

	if (e->conf.fsid != 0) {
		e->id = e->conf.fsid;
		return 0;
	}
	if (realpath(e->path, real) == NULL)
		return -errno;
	e->id = export_id_for_path(real);
	return 0;
}

/* The OS's own handles: 0, or -ENOTSUP where it has none. */
static int native_handles(struct export *e)
{
	int r = osdep_fh_get(e->root_fd, "", &e->root_fh);

	if (r == -ENOTSUP && e->conf.handles == NFS_FH_AUTO)
		return r;
	if (r < 0) {
		log_err("export '%s': the file system gives no persistent file handles: %s%s",
			e->path, strerror(-r),
			r == -ENOTSUP || r == -EOPNOTSUPP ? " (try server.handles = \"portable\")"
							  : "");
		return r;
	}
	/* open_by_handle_at needs CAP_DAC_READ_SEARCH: say so now, not as
	 * NFS3ERR_STALE on every call later. */
	r = osdep_fh_open(e->root_fd, &e->root_fh, OSDEP_OPEN_PATH);
	if (r < 0) {
		log_err("export '%s': cannot open objects by handle: %s%s", e->path, strerror(-r),
			r == -EPERM ? " (the server needs root, or CAP_DAC_READ_SEARCH)" : "");
		return r;
	}
	close(r);
	return 0;
}

/* Portable handles, through the export's index. */
static int portable_handles(struct export *e)
{
	struct fh_index_params p = {.dir = e->conf.handle_index_dir,
				    .export_id = e->id,
				    .root_fd = e->root_fd,
				    .stamps = 1};
	int r = fh_index_open(&p, &e->fhx);

	if (r < 0)
		return r;
	if ((r = fh_index_get(e->fhx, e->root_fd, "", &e->root_fh)) < 0)
		log_err("export '%s': no handle for the root: %s", e->path, strerror(-r));
	return r;
}

/* How the export acts as the caller (backend_ident.c): native needs an OS
 * whose threads can take on identities of their own. */
static int set_identity(struct export *e)
{
	int native = osdep_cred_native();

	if (e->conf.identity == NFS_ID_NATIVE && !native) {
		log_err("export '%s': server.identity = \"native\", but this OS gives threads no "
			"identity of their own (use \"userspace\" or \"auto\")",
			e->path);
		return -ENOTSUP;
	}
	e->user_ident = e->conf.identity == NFS_ID_USERSPACE ||
			(e->conf.identity == NFS_ID_AUTO && !native);
	return 0;
}

/* See export.h: the POSIX backend's root is a local directory. */
int export_posix_open(struct export *e)
{
	struct stat st;
	int r;

	e->root_fd = open(e->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (e->root_fd < 0 || fstat(e->root_fd, &st) < 0) {
		r = -errno;
		log_err("export '%s': cannot open the directory: %s", e->path, strerror(-r));
		return r;
	}
	e->dev = st.st_dev;
	e->ino = st.st_ino;
	if ((r = set_id(e)) < 0 || (r = set_identity(e)) < 0)
		return r;
	r = e->conf.handles == NFS_FH_PORTABLE ? -ENOTSUP : native_handles(e);
	return r == -ENOTSUP ? portable_handles(e) : r;
}

/* See export.h. */
int export_open(struct export *e, const struct nfs_export_conf *conf)
{
	int r;

	memset(e, 0, sizeof(*e));
	call_gate_init(&e->gate, "export", NULL, "NFS3ERR_JUKEBOX");
	e->root_fd = -1;
	e->conf = *conf;
	e->conf.clients = NULL;
	e->ops = &be_posix_ops;
	if (conf->backend == NFS_BACKEND_CEPHFS) {
#ifdef HAVE_CEPHFS
		e->ops = &be_ceph_ops;
#else
		log_err("export '%s': this server was built without CephFS", conf->path);
		return -ENOTSUP;
#endif
	}
	if ((r = copy_path(e, conf->path)) < 0 || (r = copy_clients(e, conf)) < 0 ||
	    (r = e->ops->open(e)) < 0)
		return r;
	e->conf.path = e->path;
	e->gate.name = e->path;
	memset(&e->conf.ceph, 0, sizeof(e->conf.ceph)); /* the configuration's: not kept */
	log_info("export '%s': %s, id %08x%s%s%s%s", e->path, e->ops->name, e->id,
		 e->fhx ? ", portable handles" : "", e->conf.ro ? ", read-only" : "",
		 e->conf.root_squash ? ", root_squash" : "",
		 e->conf.integrity_required ? ", integrity required" : "");
	return 0;
}

/* See export.h. */
void export_close(struct export *e)
{
	if (e->ops != NULL)
		e->ops->close(e);
	e->ops = NULL;
	if (e->clients)
		for (size_t i = 0; i < e->conf.nclients; i++)
			free(e->clients[i]);
	free(e->clients);
	free(e->path);
	e->clients = NULL;
	e->path = NULL;
	call_gate_destroy(&e->gate);
}

/* See export.h. */
void export_posix_close(struct export *e)
{
	fh_index_close(e->fhx);
	e->fhx = NULL;
	if (e->root_fd >= 0)
		close(e->root_fd);
	e->root_fd = -1;
}

/* See export.h. A call with no address is refused where a list exists. */
int export_rule(const struct export *e, const struct sockaddr *sa, struct nfs_client_rule *r)
{
	memset(r, 0, sizeof(*r));
	if (e->conf.client_rule != NULL) {
		if (sa != NULL && e->conf.client_rule(e->conf.acl, sa, r) != 0)
			return 1;
		memset(r, 0, sizeof(*r));
		return 0;
	}
	if (e->conf.client_allowed != NULL &&
	    (sa == NULL || e->conf.client_allowed(e->conf.acl, sa) == 0))
		return 0;
	r->ro = e->conf.ro;
	r->root_squash = e->conf.root_squash;
	r->all_squash = e->conf.all_squash;
	r->anon_uid = e->conf.anon_uid;
	r->anon_gid = e->conf.anon_gid;
	return 1;
}

/* See export.h. */
int export_client_ok(const struct export *e, const struct sockaddr *sa)
{
	struct nfs_client_rule r;

	return export_rule(e, sa, &r);
}

/* See export.h. */
void export_map_cred(const struct nfs_client_rule *r, const struct nfs_cred *in, uid_t *uid,
		     gid_t *gid, size_t *ngids, gid_t *gids)
{
	int anon = in->flavor == NFS_AUTH_NONE || r->all_squash;
	int squash_root = r->root_squash;
	size_t n = 0;

	if (anon) {
		*uid = r->anon_uid;
		*gid = r->anon_gid;
		*ngids = 0;
		return;
	}
	*uid = squash_root && in->uid == 0 ? r->anon_uid : in->uid;
	*gid = squash_root && in->gid == 0 ? r->anon_gid : in->gid;
	for (uint32_t i = 0; i < in->ngids && i < NFS_CRED_MAX_GIDS; i++)
		gids[n++] = squash_root && in->gids[i] == 0 ? r->anon_gid : in->gids[i];
	*ngids = n;
}
