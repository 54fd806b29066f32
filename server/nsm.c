/*
 * nsm.c: the server's own status monitor (NSM, program 100024, the part of
 * rpc.statd a lock server needs). The lock manager records each client that
 * takes a lock or waits for one as a file in the state directory
 * (server.nsm.state_dir), named after the client and holding its address; the
 * file goes when the client has held nothing for a while. The directory also
 * keeps our state number, odd while we run and one step further at every
 * start. At start every recorded client is sent SM_NOTIFY with the new
 * number, so that it reclaims its locks in the grace period. A client that
 * tells us it rebooted (SM_NOTIFY to us) loses every lock it held here.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "common/base/log.h"
#include "common/base/net.h"
#include "server/backend.h"
#include "server/nlm_int.h"

#define NSM_PREFIX    "c-" /* a client's file: c-HEX(name) */
#define NSM_STATEFILE "state"

/* The file of client name: DIR/c-HEX(name). */
static int client_path(const struct nlm *n, const char *name, char *buf, size_t len)
{
	size_t off = (size_t)snprintf(buf, len, "%s/" NSM_PREFIX, n->state_dir);

	for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
		if (off + 3 > len)
			return -ENAMETOOLONG;
		off += (size_t)snprintf(buf + off, len - off, "%02x", *p);
	}
	return 0;
}

/* Write text to path, durably (a new file renamed over the old). */
static int write_file(const char *path, const char *text)
{
	char tmp[4200];
	int fd, rc = 0;
	size_t len = strlen(text);

	snprintf(tmp, sizeof(tmp), "%s.new", path);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len || fsync(fd) < 0)
		rc = -errno;
	close(fd);
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc;
}

/* See nlm_int.h. The file is written and synced without nlm->lock: a slow
 * disk holds only this turn. h stays (the caller holds something of it or
 * pins it), and it counts as monitored meanwhile, so that a notified
 * client's file is not removed under it (notified). */
void nsm_monitor(struct nlm *n, struct nlm_host *h)
{
	char path[4200], addr[NET_HOST_STRLEN] = "", text[NET_HOST_STRLEN + 2];
	int rc;

	if (h->monitored)
		return;
	if (h->addr.ss_family == AF_INET || h->addr.ss_family == AF_INET6)
		net_host_str((const struct sockaddr *)&h->addr, addr, sizeof(addr));
	snprintf(text, sizeof(text), "%s\n", addr);
	if ((rc = client_path(n, h->name, path, sizeof(path))) == 0) {
		h->monitored = 1;
		pthread_mutex_unlock(&n->lock);
		rc = write_file(path, text);
		pthread_mutex_lock(&n->lock);
	}
	if (rc) {
		h->monitored = 0;
		log_warn("NSM: cannot record client '%s' in %s: %s (it will not hear of our "
			 "restart)",
			 h->name, n->state_dir, strerror(-rc));
	}
}

/* See nlm_int.h. */
void nsm_unmonitor(struct nlm *n, struct nlm_host *h)
{
	char path[4200];

	if (client_path(n, h->name, path, sizeof(path)) == 0 && unlink(path) < 0 && errno != ENOENT)
		log_warn("NSM: cannot remove %s: %s", path, strerror(errno));
	h->monitored = 0;
}

/* Our previous state number, and the next (odd: we are up). */
static int bump_state(struct nlm *n)
{
	char path[4200], text[32];
	long old = 0;
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/" NSM_STATEFILE, n->state_dir);
	if ((f = fopen(path, "r")) != NULL) {
		if (fscanf(f, "%ld", &old) != 1 || old < 0 || old > INT32_MAX - 2) {
			log_warn("NSM: %s holds no state number: starting again from 1", path);
			old = 0;
		}
		fclose(f);
	}
	n->nsm_state = (int32_t)(old % 2 ? old + 2 : old + 1);
	snprintf(text, sizeof(text), "%d\n", (int)n->nsm_state);
	if ((rc = write_file(path, text)) != 0)
		log_err("NSM: cannot write %s: %s", path, strerror(-rc));
	return rc;
}

/* What a notified client's file becomes: gone, unless the client has locks
 * here again (then it stays recorded). */
static void notified(struct nlm *n, void *arg, int ok, void *res)
{
	char *name = arg;
	struct nlm_host *h;
	char path[4200];

	(void)res;
	if (ok < 0) { /* stopping: the client stays recorded, and hears at the next start */
		free(name);
		return;
	}
	pthread_mutex_lock(&n->lock);
	h = nlm_host_find(n, name, NULL);
	if (!ok)
		log_warn("NSM: client '%s' did not answer SM_NOTIFY: forgotten", name);
	if ((h == NULL || !h->monitored) && client_path(n, name, path, sizeof(path)) == 0)
		unlink(path);
	pthread_mutex_unlock(&n->lock);
	free(name);
}

/* A client's name from its file name (c-HEX), into buf. */
static int name_of(const char *file, char *buf, size_t len)
{
	size_t hexlen = strlen(file) - strlen(NSM_PREFIX), i;

	if (strncmp(file, NSM_PREFIX, strlen(NSM_PREFIX)) != 0 || hexlen % 2 || hexlen == 0 ||
	    hexlen / 2 >= len || strchr(file, '.') != NULL)
		return -EINVAL;
	for (i = 0; i < hexlen / 2; i++) {
		unsigned v;

		if (sscanf(file + strlen(NSM_PREFIX) + 2 * i, "%2x", &v) != 1 || v == 0)
			return -EINVAL;
		buf[i] = (char)v;
	}
	buf[i] = '\0';
	return 0;
}

/* SM_NOTIFY to the client recorded in file. */
static void notify_one(struct nlm *n, const char *file)
{
	char name[SM_MAXSTRLEN + 1], path[4200], addr[NET_HOST_STRLEN] = "";
	nsm_stat_chge sc = {.mon_name = n->name, .state = n->nsm_state};
	struct addrinfo hints = {.ai_flags = AI_NUMERICHOST, .ai_socktype = SOCK_DGRAM}, *ai;
	char *arg;
	FILE *f;
	int rc;

	if (name_of(file, name, sizeof(name)) != 0)
		return;
	snprintf(path, sizeof(path), "%s/%s", n->state_dir, file);
	if ((f = fopen(path, "r")) != NULL) {
		if (fscanf(f, "%63s", addr) != 1)
			addr[0] = '\0';
		fclose(f);
	}
	/* an IPv4 or IPv6 address, a link-local one with its scope ("fe80::1%eth0") */
	if (getaddrinfo(addr, NULL, &hints, &ai) != 0) {
		log_warn("NSM: %s names no IP address: '%s' not notified", path, name);
		unlink(path);
		return;
	}
	if ((arg = strdup(name)) != NULL) {
		log_info("NSM: telling '%s' (%s) we restarted (state %d)", name, addr,
			 n->nsm_state);
		rc = nlm_cb_call(n, ai->ai_addr, ai->ai_addrlen, NSM_PROGRAM, NSM_V1, NSM_NOTIFY,
				 (xdrproc_t)xdr_nsm_stat_chge, &sc, NULL, 0, notified, arg);
		if (rc != 0)
			free(arg);
	}
	freeaddrinfo(ai);
}

/* See nlm_int.h. */
int nsm_start(struct nlm *n)
{
	struct dirent *d;
	DIR *dir;
	int rc;

	if (mkdir(n->state_dir, 0755) < 0 && errno != EEXIST) {
		rc = -errno;
		log_err("NSM: cannot make the state directory %s: %s", n->state_dir,
			strerror(errno));
		return rc;
	}
	if ((rc = bump_state(n)) != 0)
		return rc;
	if ((dir = opendir(n->state_dir)) == NULL) {
		rc = -errno;
		log_err("NSM: cannot read %s: %s", n->state_dir, strerror(errno));
		return rc;
	}
	while ((d = readdir(dir)) != NULL)
		if (strncmp(d->d_name, NSM_PREFIX, strlen(NSM_PREFIX)) == 0)
			notify_one(n, d->d_name);
	closedir(dir);
	log_notice("NSM: state %d, state directory %s", n->nsm_state, n->state_dir);
	return 0;
}

/* h rebooted: what it held is dropped at each export's next turn. */
static void rebooted(struct nlm *n, struct nlm_host *h, int32_t state)
{
	log_notice("NSM: client '%s' rebooted (state %d): its locks are released at each export's "
		   "next turn",
		   h->name, (int)state);
	n->reboots++;
	nlm_host_mark_drop(n, h);
}

/* See nlm_int.h. The client is found by the name it gives (at any address:
 * a client that rebooted may come back on another); a client that names
 * itself otherwise than in its lock calls (an address for a name) is found
 * by the address the notice came from. Only a peer that some export takes
 * calls from is heard. */
void nsm_rebooted(struct nlm *n, const char *name, const struct sockaddr *peer, int32_t state)
{
	struct nlm_host *h;
	int found = 0, marked = 0;

	if (peer == NULL || !nfs_backend_peer_known(n->be, peer)) {
		log_info("NSM: SM_NOTIFY for '%s' from a peer no export knows: ignored", name);
		return;
	}
	pthread_mutex_lock(&n->lock);
	for (h = n->hosts; h; h = h->next) {
		if (strcmp(h->name, name) == 0) {
			rebooted(n, h, state);
			found = 1;
		}
	}
	for (h = n->hosts; !found && h; h = h->next) {
		if (net_same_ip(peer, (const struct sockaddr *)&h->addr)) {
			rebooted(n, h, state);
			marked = 1;
		}
	}
	pthread_mutex_unlock(&n->lock);
	if (found || marked)
		nlm_cb_kick(n); /* each export's next turn drops it */
}
