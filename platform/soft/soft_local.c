/*
 * soft_local.c: the local carrier. Both ends of a soft connection to a
 * loopback address are on this host, so the connection need not go through
 * the kernel's TCP stack: a listener on 127.0.0.1, ::1 or a wildcard address
 * also listens on an abstract AF_UNIX name made of its family and port
 * ("nfsrdma-soft:4:PORT", "nfsrdma-soft:6:PORT"), and a connect to 127.0.0.1
 * or ::1 tries that name first, then TCP. On Linux, AF_UNIX moves a MiB in
 * about half the time loopback TCP takes.
 *
 * Abstract names live in the network namespace, as loopback addresses do, but
 * have no owner: anyone may bind a name first. So a connect takes the name's
 * listener only if it runs as root or as the connecting user (SO_PEERCRED;
 * as root only for ports below 1024), else it goes over TCP, and a listener
 * that finds its name taken says so and takes local peers over TCP. Only
 * 127.0.0.1 and ::1 (and wildcards) have names, so a connect reaches the
 * listener that TCP would reach. The server sees a local peer as 127.0.0.1
 * or ::1 (the listener's family) with port 0, and logs it as
 * "127.0.0.1:local-PID". An IPv6 wildcard listener that takes IPv4 too
 * ("::", as net_dual_stack makes it) has both names; one set to IPv6 only
 * has the IPv6 name alone. VB_SOFT_LOCAL_UNIX=0 turns the carrier off
 * (a listener then has no name, a connect goes straight to TCP). Linux only:
 * other systems have no abstract names.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/base/log.h"
#include "soft.h"

#ifdef __linux__
#define LOCAL_NAME "nfsrdma-soft:%c:%u" /* abstract: sun_path[0] is '\0' */

/* The abstract AF_UNIX address of the listeners of this family on this port. */
static socklen_t local_name(int family, unsigned port, struct sockaddr_un *un)
{
	int n;

	memset(un, 0, sizeof(*un));
	un->sun_family = AF_UNIX;
	n = snprintf(un->sun_path + 1, sizeof(un->sun_path) - 1, LOCAL_NAME,
		     family == AF_INET6 ? '6' : '4', port);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

/* The family whose local name an AF_INET or AF_INET6 address has (AF_INET
 * for an IPv4-mapped one), AF_UNSPEC if it is not 127.0.0.1 or ::1 (nor a
 * wildcard address, if any_ok); its port in *port. */
static int local_family(const struct sockaddr *sa, bool any_ok, unsigned *port)
{
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)sa;
		uint32_t a = ntohl(in->sin_addr.s_addr);

		*port = ntohs(in->sin_port);
		return a == INADDR_LOOPBACK || (any_ok && a == INADDR_ANY) ? AF_INET : AF_UNSPEC;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)sa;
		const struct in6_addr *a = &in6->sin6_addr;
		static const uint8_t v4lo[16] = {[10] = 0xff, [11] = 0xff, [12] = 127, [15] = 1};

		*port = ntohs(in6->sin6_port);
		if (memcmp(a->s6_addr, v4lo, sizeof(v4lo)) == 0)
			return AF_INET;
		return IN6_IS_ADDR_LOOPBACK(a) || (any_ok && IN6_IS_ADDR_UNSPECIFIED(a))
			       ? AF_INET6
			       : AF_UNSPEC;
	}
	return AF_UNSPEC;
}

/* The uid and pid of fd's peer (a listener: as of its listen). */
static int peer_cred(int fd, uid_t *uid, pid_t *pid)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0)
		return -1;
	*uid = cr.uid;
	*pid = cr.pid;
	return 0;
}
#endif

#ifdef __linux__
/* A non-blocking AF_UNIX listener under family's local name for port, or -1
 * (said in the log). */
static int local_listen(int family, unsigned port, int backlog)
{
	struct sockaddr_un un;
	socklen_t ulen = local_name(family, port, &un);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd >= 0 && bind(fd, (struct sockaddr *)&un, ulen) == 0 && listen(fd, backlog) == 0)
		return fd;
	if (errno == EADDRINUSE)
		log_warn("port %u: another process holds its local name (@" LOCAL_NAME
			 "): local peers come over TCP",
			 port, family == AF_INET6 ? '6' : '4', port);
	else
		log_info("port %u: no local carrier (%s): local peers come over TCP", port,
			 strerror(errno));
	if (fd >= 0)
		close(fd);
	return -1;
}

/* Whether inet_fd is an IPv6 socket that takes IPv4 too. */
static bool takes_ipv4(int inet_fd)
{
	int only = 1;
	socklen_t len = sizeof(only);

	return getsockopt(inet_fd, IPPROTO_IPV6, IPV6_V6ONLY, &only, &len) == 0 && only == 0;
}
#endif

/* See soft.h. */
void soft_local_listen(struct soft_device *dev, int inet_fd, int backlog,
		       struct soft_local_lsn out[2])
{
#ifdef __linux__
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	unsigned port;
	int family, n = 0;

	if (!dev->local_unix || getsockname(inet_fd, (struct sockaddr *)&ss, &len) < 0)
		return;
	if ((family = local_family((struct sockaddr *)&ss, true, &port)) == AF_UNSPEC)
		return;
	out[n].family = family;
	if ((out[n].fd = local_listen(family, port, backlog)) >= 0)
		n++;
	/* "::" taking IPv4 too takes 127.0.0.1's local peers too */
	if (family == AF_INET6 &&
	    IN6_IS_ADDR_UNSPECIFIED(&((struct sockaddr_in6 *)&ss)->sin6_addr) &&
	    takes_ipv4(inet_fd)) {
		out[n].family = AF_INET;
		out[n].fd = local_listen(AF_INET, port, backlog);
	}
#else
	(void)dev;
	(void)inet_fd;
	(void)backlog;
	(void)out;
#endif
}

/* See soft.h. */
int soft_local_connect(struct soft_device *dev, const struct sockaddr *sa)
{
#ifdef __linux__
	struct sockaddr_un un;
	socklen_t ulen;
	unsigned port;
	int family, fd;
	uid_t uid = 0;
	pid_t pid = 0;

	if (!dev->local_unix || (family = local_family(sa, false, &port)) == AF_UNSPEC)
		return -1;
	ulen = local_name(family, port, &un);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&un, ulen) == 0) {
		if (peer_cred(fd, &uid, &pid) == 0 &&
		    (uid == 0 || (port >= 1024 && uid == geteuid())))
			return fd;
		log_info("port %u: its local name is held by pid %d, uid %u, who may not hold "
			 "the port: over TCP",
			 port, (int)pid, (unsigned)uid);
	}
	/* ECONNREFUSED: no soft listener of this host has the port; EAGAIN:
	 * its backlog is full. Either way TCP says what is really there. */
	if (fd >= 0)
		close(fd);
#else
	(void)dev;
	(void)sa;
#endif
	return -1;
}

/* See soft.h. */
void soft_local_peer(int family, int fd, struct sockaddr_storage *ss, socklen_t *len, char *name,
		     size_t n)
{
	pid_t pid = 0;

	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_addr = in6addr_loopback;
		*len = sizeof(*in6);
	} else {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		in->sin_family = AF_INET;
		in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		*len = sizeof(*in);
	}
#ifdef __linux__
	uid_t uid;

	(void)peer_cred(fd, &uid, &pid); /* pid stays 0 if it cannot be told */
#else
	(void)fd;
#endif
	if (snprintf(name, n, "%s:local-%d", family == AF_INET6 ? "::1" : "127.0.0.1", (int)pid) <
	    0)
		name[0] = '\0';
}
