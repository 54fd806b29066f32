/*
 * soft_listen.c: the soft provider's listeners: a listening socket (TCP, or
 * AF_UNIX for "unix:/path") per vb_listener; accepted sockets become conns
 * that wait for the peer's HELLO (soft_cm.c) before CONNECT_REQUEST is raised.
 * A listener on a loopback or wildcard address also takes local peers on an
 * AF_UNIX socket (soft_local.c).
 * Out of descriptors, a listener gives up a spare one to accept the waiting
 * peer and close it at once (as libuv does): the peer is refused, and the
 * engine does not spin on a listening socket that stays readable.
 */
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/base/log.h"
#include "common/base/net.h"
#include "soft.h"

/* Create, bind and listen on the first address of host:port that works. */
static int listen_inet(const char *host, const char *port, int backlog)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE}, *res, *ai;
	int fd = -1, err, one = 1;

	if ((err = getaddrinfo(host, port, &hints, &res)) != 0) {
		log_err("cannot resolve %s:%s: %s", host ? host : "*", port, gai_strerror(err));
		return -EADDRNOTAVAIL;
	}
	err = EADDRNOTAVAIL;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			err = errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		net_dual_stack(fd, ai->ai_family);
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, backlog) == 0)
			break;
		err = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		log_err("cannot listen on %s:%s: %s", host ? host : "*", port, strerror(err));
		return -err;
	}
	return fd;
}

/* Listen on "unix:/path", replacing a stale socket file there. */
static int listen_unix(const char *host, int backlog)
{
	struct sockaddr_storage ss;
	socklen_t len;
	struct stat st;
	int fd, rc;

	if ((rc = soft_unix_addr(host, &ss, &len)) != 0)
		return rc;
	const char *path = ((struct sockaddr_un *)&ss)->sun_path;
	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
		unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, backlog) < 0) {
		rc = -errno;
		log_err("cannot listen on %s: %s", host, strerror(errno));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	return fd;
}

/* Close what a listener holds and free it; the engine no longer watches it. */
static void listener_free(struct soft_listener *l)
{
	close(l->fd);
	for (int i = 0; i < 2; i++)
		if (l->local[i].fd >= 0)
			close(l->local[i].fd);
	wakefd_close(&l->ev);
	if (l->spare_fd >= 0)
		close(l->spare_fd);
	pthread_mutex_destroy(&l->lock);
	free(l);
}

/* Listen on host:port (or unix:/path); CONNECT_REQUESTs come on the listener fd. */
int soft_listen(struct vb_device *dev, const char *host, const char *port, int backlog,
		struct vb_listener **out)
{
	bool is_unix = host && strncmp(host, SOFT_UNIX_PREFIX, strlen(SOFT_UNIX_PREFIX)) == 0;
	struct soft_listener *l;
	int fd, rc;

	if (!is_unix && port == NULL) {
		log_err("listen needs a port");
		return -EINVAL;
	}
	if (backlog <= 0)
		backlog = 128;
	fd = is_unix ? listen_unix(host, backlog) : listen_inet(host, port, backlog);
	if (fd < 0)
		return fd;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	l = calloc(1, sizeof(*l));
	if (l == NULL || wakefd_open(&l->ev, true) != 0) {
		free(l);
		close(fd);
		return -ENOMEM;
	}
	l->fd = fd;
	for (int i = 0; i < 2; i++)
		l->local[i] = (struct soft_local_lsn){
			.po.type = SOFT_POLL_LOCAL_LISTENER, .l = l, .fd = -1};
	if (!is_unix)
		soft_local_listen(soft_dev(dev), fd, backlog, l->local);
	l->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	l->hello_ms = soft_env_uint("VB_SOFT_HELLO_TIMEOUT_MS", 10000, 1, 3600000);
	l->po.type = SOFT_POLL_LISTENER;
	l->base.dev = dev;
	pthread_mutex_init(&l->lock, NULL);
	soft_list_init(&l->pending);
	soft_list_init(&l->requests);
	if ((rc = soft_engine_watch(soft_dev(dev)->eng, fd, &l->po, POLLER_IN)) != 0) {
		listener_free(l);
		return rc;
	}
	for (int i = 0; i < 2; i++) {
		struct soft_local_lsn *ll = &l->local[i];

		if (ll->fd >= 0 &&
		    soft_engine_watch(soft_dev(dev)->eng, ll->fd, &ll->po, POLLER_IN) != 0) {
			close(ll->fd); /* local peers come over TCP */
			ll->fd = -1;
		}
	}
	*out = &l->base;
	return 0;
}

/* Readable while CONNECT_REQUESTs wait. */
int soft_listener_fd(struct vb_listener *l)
{
	return ((struct soft_listener *)l)->ev.rfd;
}

/* Engine: accept failed with err. Returns whether to go on accepting. */
static bool accept_failed(struct soft_listener *l, int lfd, int err)
{
	int fd;

	if (err == EINTR)
		return true;
	if (err == EAGAIN || err == EWOULDBLOCK)
		return false;
	if ((err != EMFILE && err != ENFILE) || l->spare_fd < 0) {
		log_err("accept: %s", strerror(err));
		return false;
	}
	close(l->spare_fd);
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd >= 0)
		close(fd);
	l->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	log_warn("accept: %s: a connection refused", strerror(err));
	return fd >= 0;
}

/* Engine: take new sockets (from the local carrier's listener local if not
 * NULL); each waits for its HELLO on the listener's pending list. */
void soft_listener_io(struct soft_listener *l, struct soft_local_lsn *local)
{
	struct soft_device *dev = soft_dev(l->base.dev);
	int lfd = local ? local->fd : l->fd;
	struct sockaddr_storage ss;

	for (;;) {
		socklen_t len = sizeof(ss);
		int fd = accept4(lfd, (struct sockaddr *)&ss, &len, SOCK_CLOEXEC);
		struct soft_conn *c;

		if (fd < 0) {
			if (!accept_failed(l, lfd, errno))
				return;
			continue;
		}
		if ((c = soft_conn_new(dev)) == NULL) {
			log_err("out of memory for a new connection");
			close(fd);
			continue;
		}
		soft_tune_socket(dev, fd, ss.ss_family);
		if (local)
			soft_local_peer(local->family, fd, &ss, &len, c->base.peer,
					sizeof(c->base.peer));
		else
			soft_addr_name((struct sockaddr *)&ss, len, c->base.peer,
				       sizeof(c->base.peer));
		memcpy(&c->base.peer_addr, &ss, len);
		c->base.peer_addr_len = len;
		c->fd = fd;
		c->cm = SOFT_CM_WAIT_HELLO;
		c->listener = l;
		pthread_mutex_lock(&l->lock);
		soft_list_add_tail(&l->pending, &c->lnode);
		l->nconns++;
		pthread_mutex_unlock(&l->lock);
		if (l->nconns > SOFT_MAX_PENDING) {
			log_warn("%s: more than %u connections not yet accepted; dropping",
				 c->base.peer, SOFT_MAX_PENDING);
			soft_cm_reap(c);
		} else if (soft_engine_watch(dev->eng, fd, &c->po, POLLER_IN | POLLER_OUT) != 0) {
			soft_cm_reap(c);
		} else {
			soft_engine_timer(dev->eng, c, l->hello_ms);
		}
	}
}

/* Engine: free a conn the listener still owns. */
void soft_cm_reap(struct soft_conn *c)
{
	struct soft_listener *l = c->listener;

	pthread_mutex_lock(&l->lock);
	soft_list_del(&c->lnode);
	l->nconns--;
	pthread_mutex_unlock(&l->lock);
	soft_engine_unwatch(c->dev->eng, c->fd);
	soft_engine_forget(c->dev->eng, c);
	soft_conn_free(c);
}

/* Hand out the next CONNECT_REQUEST; the app owns ev->conn from now on. */
int soft_listener_get_event(struct vb_listener *lb, struct vb_cm_event *ev)
{
	struct soft_listener *l = (struct soft_listener *)lb;
	struct soft_list *n;
	struct soft_conn *c;

	pthread_mutex_lock(&l->lock);
	n = soft_list_pop(&l->requests);
	if (n)
		l->nconns--;
	if (n && wakefd_take(&l->ev) != 1)
		log_err("listener event: none to take");
	pthread_mutex_unlock(&l->lock);
	if (n == NULL)
		return -EAGAIN;
	c = soft_container_of(n, struct soft_conn, lnode);
	pthread_mutex_lock(&c->lock);
	*ev = c->req;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

/* Engine: close the listening socket and free the conns never handed out. */
static void listener_teardown(void *arg)
{
	struct soft_listener *l = arg;
	struct soft_list *lists[] = {&l->pending, &l->requests}, *n;

	soft_engine_unwatch(soft_dev(l->base.dev)->eng, l->fd);
	for (int i = 0; i < 2; i++)
		if (l->local[i].fd >= 0)
			soft_engine_unwatch(soft_dev(l->base.dev)->eng, l->local[i].fd);
	for (int i = 0; i < 2; i++) {
		while ((n = soft_list_pop(lists[i])) != NULL) {
			struct soft_conn *c = soft_container_of(n, struct soft_conn, lnode);

			soft_engine_unwatch(c->dev->eng, c->fd);
			soft_engine_forget(c->dev->eng, c);
			soft_conn_free(c);
		}
	}
}

/* Stop listening; conns never handed out are freed by the engine. */
int soft_listener_destroy(struct vb_listener *lb)
{
	struct soft_listener *l = (struct soft_listener *)lb;

	soft_engine_call(soft_dev(lb->dev)->eng, listener_teardown, l);
	listener_free(l);
	return 0;
}
