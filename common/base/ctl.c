/* ctl.c: the control socket (see ctl.h). Its own event loop; answers are short. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "common/base/evloop.h"
#include "common/base/log.h"
#include "common/base/ctl.h"

struct ctl {
	int fd;
	dev_t dev; /* the socket file bound, removed at stop only if still there */
	ino_t ino;
	struct evloop *loop;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	ctl_handler fn;
	void *arg;
};

/* Read one command line (with a deadline), run it, write the answer. */
static void serve_one(struct ctl *c, int fd)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	char cmd[64];
	ssize_t n = 0;
	FILE *out;

	if (poll(&pfd, 1, 2000) > 0)
		n = read(fd, cmd, sizeof(cmd) - 1);
	if (n <= 0) {
		close(fd);
		return;
	}
	cmd[n] = '\0';
	cmd[strcspn(cmd, "\r\n")] = '\0';
	out = fdopen(fd, "w");
	if (!out) {
		close(fd);
		return;
	}
	c->fn(cmd, out, c->arg);
	fclose(out);
}

/* The socket is readable: one client, one command. */
static void ctl_ready(void *arg)
{
	struct ctl *c = arg;
	int fd = accept4(c->fd, NULL, NULL, SOCK_CLOEXEC);

	if (fd >= 0)
		serve_one(c, fd);
}

/* See ctl.h: whether path is free for a control socket (nothing there, or a
 * socket nobody answers on: refused). Never blocks: a listener whose
 * backlog is full (a stopped server) counts as answering. */
int ctl_check_free(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat st;
	int fd, rc;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode)) {
		log_err("control socket %s: a file that is not a socket is there", path);
		return -EEXIST;
	}
	strcpy(sa.sun_path, path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0)
		return -errno;
	rc = connect(fd, (const struct sockaddr *)&sa, sizeof(sa)) == 0 ? 0 : errno;
	close(fd);
	if (rc == ECONNREFUSED)
		return 0; /* stale: left by a server that is gone */
	if (rc == 0 || rc == EAGAIN || rc == EINPROGRESS) {
		log_err("control socket %s: another server answers there (a second server needs "
			"a server.control_socket of its own)",
			path);
		return -EADDRINUSE;
	}
	log_err("control socket %s: %s", path, strerror(rc));
	return -rc;
}

int ctl_start(const char *path, mode_t mode, ctl_handler fn, void *arg, struct ctl **out)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat st;
	struct ctl *c;
	int rc;

	if ((rc = ctl_check_free(path)) != 0)
		return rc; /* -ENAMETOOLONG too */
	if (!(c = calloc(1, sizeof(*c))))
		return -ENOMEM;
	strcpy(sa.sun_path, path);
	strcpy(c->path, path);
	c->fn = fn;
	c->arg = arg;
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	unlink(path); /* a stale socket from a previous run, if any (checked above) */
	if (c->fd < 0 || bind(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(path, mode) < 0 || listen(c->fd, 8) < 0 || lstat(path, &st) < 0) {
		rc = -errno;
		log_err("control socket %s: %s", path, strerror(errno));
		if (c->fd >= 0)
			close(c->fd);
		free(c);
		return rc;
	}
	c->dev = st.st_dev;
	c->ino = st.st_ino;
	if ((rc = evloop_serve_fd(c->fd, ctl_ready, c, "nfsrdma-ctl", &c->loop)) != 0) {
		close(c->fd);
		unlink(path);
		free(c);
		return rc;
	}
	*out = c;
	return 0;
}

void ctl_stop(struct ctl *c)
{
	struct stat st;

	if (!c)
		return;
	evloop_destroy(c->loop);
	close(c->fd);
	/* not a socket that another server has put there since */
	if (lstat(c->path, &st) == 0 && st.st_dev == c->dev && st.st_ino == c->ino)
		unlink(c->path);
	free(c);
}

int ctl_query(const char *path, const char *cmd, FILE *out)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char buf[4096], line[80];
	ssize_t n;
	int fd, len;

	len = snprintf(line, sizeof(line), "%s\n", cmd);
	if (strlen(path) >= sizeof(sa.sun_path) || len >= (int)sizeof(line))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int rc = -errno;

		if (fd >= 0)
			close(fd);
		return rc;
	}
	/* one send, without SIGPIPE: the server may answer and close at once */
	if (send(fd, line, (size_t)len, MSG_NOSIGNAL) != len) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	shutdown(fd, SHUT_WR);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, out);
	close(fd);
	return 0;
}
