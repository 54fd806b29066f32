/* net.c: TCP sockets: listen, connect with timeout, full reads and writes. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include "net.h"

int net_listen_tcp(const char *host, const char *port, int backlog, const char **err)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC,
				 .ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
	struct addrinfo *res, *ai;
	int fd = -1, rc, one = 1;

	if (host && strcmp(host, "0.0.0.0") == 0)
		hints.ai_family = AF_INET;
	rc = getaddrinfo(host, port, &hints, &res);
	if (rc) {
		*err = gai_strerror(rc);
		return -EADDRNOTAVAIL;
	}
	/* Prefer IPv6 (it takes IPv4 too when host is NULL). */
	for (int pass = 0; pass < 2 && fd < 0; pass++) {
		for (ai = res; ai; ai = ai->ai_next) {
			if ((pass == 0) != (ai->ai_family == AF_INET6))
				continue;
			fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
			if (fd < 0) {
				rc = -errno;
				continue;
			}
			setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
			if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, backlog) == 0)
				break;
			rc = -errno;
			*err = strerror(errno);
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	return fd >= 0 ? fd : rc;
}

/* Wait for a non-blocking connect to finish within timeout_ms. */
static int connect_wait(int fd, int timeout_ms)
{
	struct pollfd pfd = {.fd = fd, .events = POLLOUT};
	int err = 0;
	socklen_t len = sizeof(err);
	int n = poll(&pfd, 1, timeout_ms);

	if (n == 0)
		return -ETIMEDOUT;
	if (n < 0)
		return -errno;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		return -errno;
	return -err;
}

int net_connect_tcp(const char *host, const char *port, int timeout_ms)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
	struct addrinfo *res, *ai;
	int fd = -1, rc = -EHOSTUNREACH, one = 1;

	if (getaddrinfo(host, port, &hints, &res) != 0)
		return -EHOSTUNREACH;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
			    ai->ai_protocol);
		if (fd < 0) {
			rc = -errno;
			continue;
		}
		rc = connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 ? 0 : -errno;
		if (rc == -EINPROGRESS)
			rc = connect_wait(fd, timeout_ms);
		if (rc == 0)
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		return rc;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

int net_free_port(void)
{
	const char *err;
	int fd = net_listen_tcp("127.0.0.1", "0", 1, &err), port;

	if (fd < 0)
		return fd;
	port = net_local_port(fd);
	close(fd);
	return port;
}

int net_local_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return -errno;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return -EAFNOSUPPORT;
}

const char *net_addr_str(const struct sockaddr *sa, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;

	if (sa && sa->sa_family == AF_INET) {
		const struct sockaddr_in *s = (const void *)sa;

		inet_ntop(AF_INET, &s->sin_addr, host, sizeof(host));
		port = ntohs(s->sin_port);
	} else if (sa && sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const void *)sa;

		inet_ntop(AF_INET6, &s->sin6_addr, host, sizeof(host));
		port = ntohs(s->sin6_port);
	} else if (sa && sa->sa_family == AF_UNIX) {
		snprintf(buf, len, "local");
		return buf;
	}
	snprintf(buf, len, "%s:%u", host, port);
	return buf;
}

bool net_same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			      &((const struct sockaddr_in6 *)b)->sin6_addr,
			      sizeof(struct in6_addr)) == 0;
	return false;
}

int net_read_full(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n == 0)
			return -ECONNRESET;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int net_writev_some(int fd, struct iovec **iovp, int *iovcnt, int *moved)
{
	struct iovec *iov = *iovp;
	int rc = 0;

	*moved = 0;
	while (*iovcnt > 0) {
		struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)*iovcnt};
		ssize_t n = sendmsg(fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = errno == EWOULDBLOCK ? -EAGAIN : -errno;
			break;
		}
		*moved |= n > 0;
		while (*iovcnt > 0 && (size_t)n >= iov->iov_len) {
			n -= (ssize_t)iov->iov_len;
			iov++;
			(*iovcnt)--;
		}
		if (*iovcnt > 0) {
			iov->iov_base = (char *)iov->iov_base + n;
			iov->iov_len -= (size_t)n;
		}
	}
	*iovp = iov;
	return rc;
}

int net_writev_full(int fd, struct iovec *iov, int iovcnt)
{
	while (iovcnt > 0) {
		/* a peer that hung up is an error to return, not a SIGPIPE to die of */
		struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)iovcnt};
		ssize_t n = sendmsg(fd, &m, MSG_NOSIGNAL);

		if (n < 0 && errno == ENOTSOCK)
			n = writev(fd, iov, iovcnt);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		while (iovcnt > 0 && (size_t)n >= iov->iov_len) {
			n -= (ssize_t)iov->iov_len;
			iov++;
			iovcnt--;
		}
		if (iovcnt > 0) {
			iov->iov_base = (char *)iov->iov_base + n;
			iov->iov_len -= (size_t)n;
		}
	}
	return 0;
}
