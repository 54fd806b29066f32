/* net.c: TCP sockets: listen, connect with timeout, full reads and writes;
 * UDP sockets of both families and the addresses their datagrams came to. */
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
			net_dual_stack(fd, ai->ai_family);
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

void net_dual_stack(int fd, int family)
{
	int off = 0;

	if (family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
}

bool net_host_is_any6(const char *host)
{
	struct in6_addr a;

	return host && inet_pton(AF_INET6, host, &a) == 1 && IN6_IS_ADDR_UNSPECIFIED(&a);
}

int net_udp_socket(unsigned port, int flags, int *family)
{
	struct sockaddr_in6 s6 = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port)};
	struct sockaddr_in s4 = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC | flags, 0), off = 0, rc;

	if (fd >= 0) {
		*family = AF_INET6;
		if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off)) == 0 &&
		    bind(fd, (struct sockaddr *)&s6, sizeof(s6)) == 0)
			return fd;
		rc = -errno;
		close(fd);
		if (rc != -EADDRNOTAVAIL && rc != -EAFNOSUPPORT)
			return rc; /* the port is taken: so it is on IPv4 too */
	}
	*family = AF_INET;
	if ((fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | flags, 0)) < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&s4, sizeof(s4)) != 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	return fd;
}

int net_udp_pktinfo(int fd, int family)
{
	int one = 1;
	int rc = family == AF_INET6
			 ? setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof(one))
			 : setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one));

	return rc == 0 ? 0 : -errno;
}

ssize_t net_recv_dgram(int fd, void *buf, size_t len, int flags, struct net_dgram_peer *p)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct in6_pktinfo)) +
			 CMSG_SPACE(sizeof(struct in_pktinfo))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	struct msghdr m = {.msg_name = &p->sa,
			   .msg_namelen = sizeof(p->sa),
			   .msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = ctl.buf,
			   .msg_controllen = sizeof(ctl.buf)};
	ssize_t got = recvmsg(fd, &m, flags);

	if (got < 0)
		return -errno;
	p->len = m.msg_namelen;
	memset(&p->to, 0, sizeof(p->to));
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO) {
			struct sockaddr_in6 *t6 = (void *)&p->to;
			struct in6_pktinfo pi;

			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			t6->sin6_family = AF_INET6;
			t6->sin6_addr = pi.ipi6_addr;
		} else if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
			struct sockaddr_in *t4 = (void *)&p->to;
			struct in_pktinfo pi;

			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			t4->sin_family = AF_INET;
			t4->sin_addr = pi.ipi_addr;
		}
	}
	return got;
}

/* m's control data: the one option level/type of len bytes at data, in ctl. */
static void one_cmsg(struct msghdr *m, void *ctl, size_t room, int level, int type,
		     const void *data, size_t len)
{
	struct cmsghdr *c;

	memset(ctl, 0, room);
	m->msg_control = ctl;
	m->msg_controllen = CMSG_SPACE(len);
	c = CMSG_FIRSTHDR(m);
	c->cmsg_level = level;
	c->cmsg_type = type;
	c->cmsg_len = CMSG_LEN(len);
	memcpy(CMSG_DATA(c), data, len);
}

ssize_t net_send_dgram(int fd, const void *buf, size_t len, const struct net_dgram_peer *p)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct in6_pktinfo))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	struct msghdr m = {.msg_name = (void *)&p->sa,
			   .msg_namelen = p->len,
			   .msg_iov = &iov,
			   .msg_iovlen = 1};
	ssize_t sent;

	if (p->to.ss_family == AF_INET6) {
		struct in6_pktinfo pi = {.ipi6_addr =
						 ((const struct sockaddr_in6 *)&p->to)->sin6_addr};

		one_cmsg(&m, ctl.buf, sizeof(ctl), IPPROTO_IPV6, IPV6_PKTINFO, &pi, sizeof(pi));
	} else if (p->to.ss_family == AF_INET) {
		struct in_pktinfo pi = {.ipi_spec_dst =
						((const struct sockaddr_in *)&p->to)->sin_addr};

		one_cmsg(&m, ctl.buf, sizeof(ctl), IPPROTO_IP, IP_PKTINFO, &pi, sizeof(pi));
	}
	sent = sendmsg(fd, &m, 0);
	return sent < 0 ? -errno : sent;
}

bool net_dgram_local(const struct net_dgram_peer *p)
{
	return (p->to.ss_family == AF_INET || p->to.ss_family == AF_INET6) &&
	       net_addr_is_loopback((const struct sockaddr *)&p->to);
}

socklen_t net_addr_loopback4(int family, unsigned port, struct sockaddr_storage *out)
{
	struct sockaddr_in lo = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct sockaddr_storage ss;

	memset(&ss, 0, sizeof(ss));
	memcpy(&ss, &lo, sizeof(lo));
	return net_addr_for(family, &ss, out);
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
	int port;

	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return -errno;
	port = net_addr_port((const struct sockaddr *)&ss);
	return port < 0 ? -EAFNOSUPPORT : port;
}

const char *net_addr_str(const struct sockaddr *sa, char *buf, size_t len)
{
	char host[NET_HOST_STRLEN];
	unsigned port;

	if (sa && sa->sa_family == AF_UNIX) {
		snprintf(buf, len, "local");
		return buf;
	}
	if (sa == NULL || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6)) {
		snprintf(buf, len, "?");
		return buf;
	}
	net_host_str(sa, host, sizeof(host));
	port = ntohs(sa->sa_family == AF_INET ? ((const struct sockaddr_in *)sa)->sin_port
					      : ((const struct sockaddr_in6 *)sa)->sin6_port);
	snprintf(buf, len, strchr(host, ':') ? "[%s]:%u" : "%s:%u", host, port);
	return buf;
}

/* Whether a6 is ::ffff:a.b.c.d. */
static bool v4_mapped(const struct sockaddr_in6 *a6)
{
	return IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr);
}

socklen_t net_addr_unmap(struct sockaddr_storage *ss, socklen_t len)
{
	const struct sockaddr_in6 *a6 = (const void *)ss;
	struct sockaddr_in sin = {.sin_family = AF_INET};

	if (ss->ss_family != AF_INET6 || !v4_mapped(a6))
		return len;
	sin.sin_port = a6->sin6_port;
	memcpy(&sin.sin_addr, &a6->sin6_addr.s6_addr[12], 4);
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, &sin, sizeof(sin));
	return sizeof(sin);
}

socklen_t net_addr_for(int family, const struct sockaddr_storage *ss, struct sockaddr_storage *out)
{
	const struct sockaddr_in *a4 = (const void *)ss;
	struct sockaddr_in6 *o6 = (void *)out;

	memcpy(out, ss, sizeof(*out));
	if (family == AF_INET6 && ss->ss_family == AF_INET) {
		memset(out, 0, sizeof(*out));
		o6->sin6_family = AF_INET6;
		o6->sin6_port = a4->sin_port;
		o6->sin6_addr.s6_addr[10] = o6->sin6_addr.s6_addr[11] = 0xff;
		memcpy(&o6->sin6_addr.s6_addr[12], &a4->sin_addr, 4);
		return sizeof(*o6);
	}
	if (family == AF_INET && ss->ss_family == AF_INET6)
		return net_addr_unmap(out, sizeof(*o6)) == sizeof(struct sockaddr_in)
			       ? sizeof(struct sockaddr_in)
			       : 0;
	if (ss->ss_family != family)
		return 0;
	return family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
}

bool net_addr_is_v6(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET6 && !v4_mapped((const struct sockaddr_in6 *)sa);
}

bool net_addr_is_loopback(const struct sockaddr *sa)
{
	const struct sockaddr_in6 *a6 = (const void *)sa;

	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family != AF_INET6)
		return false;
	return IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr) ||
	       (v4_mapped(a6) && a6->sin6_addr.s6_addr[12] == 127);
}

int net_addr_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)(const void *)sa)->sin_port);
	if (sa->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)(const void *)sa)->sin6_port);
	return -1;
}

void net_addr_set_port(struct sockaddr_storage *ss, unsigned port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
	else if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
}

const char *net_host_str(const struct sockaddr *sa, char *buf, size_t len)
{
	const struct sockaddr_in6 *a6 = (const void *)sa;

	snprintf(buf, len, "?");
	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, buf,
			  (socklen_t)len);
	else if (sa->sa_family == AF_INET6 && v4_mapped(a6))
		inet_ntop(AF_INET, &a6->sin6_addr.s6_addr[12], buf, (socklen_t)len);
	else if (sa->sa_family == AF_INET6 && /* with the scope of a link-local one */
		 getnameinfo(sa, sizeof(*a6), buf, (socklen_t)len, NULL, 0, NI_NUMERICHOST) != 0)
		snprintf(buf, len, "?");
	return buf;
}

/* The IPv4 address (network order) that sa is or maps, into *v4; false if none. */
static bool ipv4_of(const struct sockaddr *sa, uint32_t *v4)
{
	const struct sockaddr_in6 *a6 = (const void *)sa;

	if (sa->sa_family == AF_INET) {
		*v4 = ((const struct sockaddr_in *)sa)->sin_addr.s_addr;
		return true;
	}
	if (sa->sa_family != AF_INET6 || !v4_mapped(a6))
		return false;
	memcpy(v4, &a6->sin6_addr.s6_addr[12], 4);
	return true;
}

bool net_same_ip(const struct sockaddr *a, const struct sockaddr *b)
{
	uint32_t a4 = 0, b4 = 0;
	bool av4 = ipv4_of(a, &a4), bv4 = ipv4_of(b, &b4);

	if (av4 || bv4)
		return av4 && bv4 && a4 == b4;
	return a->sa_family == AF_INET6 && b->sa_family == AF_INET6 &&
	       memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		      &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr)) == 0;
}

bool net_same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	return net_same_ip((const struct sockaddr *)a, (const struct sockaddr *)b);
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
