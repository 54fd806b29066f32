/* net.h: socket helpers shared by the TCP transport, the control socket and tests. */
#ifndef NFSRDMA_NET_H
#define NFSRDMA_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/uio.h>

/* Listen on host:port (host NULL = any address, IPv6 with IPv4 mapped where possible;
 * "::" takes IPv4 too, net_dual_stack). Returns the fd or -errno; *err names what failed. */
int net_listen_tcp(const char *host, const char *port, int backlog, const char **err);
/* A UDP socket bound to port (0: any) on every address: IPv6 taking IPv4 too
 * (as IPv4-mapped addresses), or IPv4 where the host has no IPv6. flags
 * (SOCK_NONBLOCK) are added to SOCK_CLOEXEC; *family says which it is.
 * Returns the fd or -errno. */
int net_udp_socket(unsigned port, int flags, int *family);
/* One datagram's ends: who sent it, and which of our addresses it came to
 * (to.ss_family 0: not known, or let the kernel choose when answering). */
struct net_dgram_peer {
	struct sockaddr_storage sa, to;
	socklen_t len;
};
/* Ask the kernel for the address each datagram on fd (of family) came to. */
int net_udp_pktinfo(int fd, int family);
/* recvfrom that also fills p->to (net_udp_pktinfo); bytes or -errno. */
ssize_t net_recv_dgram(int fd, void *buf, size_t len, int flags, struct net_dgram_peer *p);
/* Send buf to p->sa from p->to (when known), so that an answer comes from
 * the address its call went to; bytes or -errno. */
ssize_t net_send_dgram(int fd, const void *buf, size_t len, const struct net_dgram_peer *p);
/* Whether the datagram came to a loopback address (127/8, ::1, IPv4-mapped
 * 127/8): only this host sends those (kernels drop them from the wire). */
bool net_dgram_local(const struct net_dgram_peer *p);
/* 127.0.0.1:port as a socket of family sends to it (IPv4-mapped on AF_INET6)
 * into out; its length. */
socklen_t net_addr_loopback4(int family, unsigned port, struct sockaddr_storage *out);
/* Connect with a timeout; returns the fd or -errno. */
int net_connect_tcp(const char *host, const char *port, int timeout_ms);
/* The port a socket is bound to (for tests that listen on port 0). */
int net_local_port(int fd);
/* A TCP port free on 127.0.0.1 right now (for tests), or -errno. */
int net_free_port(void);
/* Whether a and b are the same host, ports aside (IPv4 and IPv6; an
 * IPv4-mapped IPv6 address is the IPv4 address it maps). */
bool net_same_ip(const struct sockaddr *a, const struct sockaddr *b);
bool net_same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b);
/* An IPv4-mapped IPv6 address (::ffff:a.b.c.d) becomes the IPv4 address it
 * names, in place; other addresses stay. Returns the length of the result
 * (len when unchanged). */
socklen_t net_addr_unmap(struct sockaddr_storage *ss, socklen_t len);
/* ss (IPv4 or IPv6) as an address a socket of family can send to: IPv4 as
 * IPv4-mapped on an AF_INET6 socket, IPv4-mapped as IPv4 on an AF_INET one.
 * Its length, or 0 when it cannot be (IPv6 on an IPv4 socket). */
socklen_t net_addr_for(int family, const struct sockaddr_storage *ss, struct sockaddr_storage *out);
/* An IPv6 socket fd about to be bound takes IPv4 too (IPV6_V6ONLY off,
 * whatever net.ipv6.bindv6only says), so that "::" means every address, as
 * the server's listen addresses document; nothing for other families. */
void net_dual_stack(int fd, int family);
/* Whether the numeric address host is IPv6's any address ("::"), which a
 * listener takes IPv4 on too. */
bool net_host_is_any6(const char *host);
/* Whether sa is a real IPv6 address (not IPv4-mapped). */
bool net_addr_is_v6(const struct sockaddr *sa);
/* Whether sa is a loopback address (127/8, ::1, ::ffff:127/104). */
bool net_addr_is_loopback(const struct sockaddr *sa);
/* The port of an IPv4 or IPv6 address, set. */
void net_addr_set_port(struct sockaddr_storage *ss, unsigned port);
/* The port of an IPv4 or IPv6 address; -1 for another family. */
int net_addr_port(const struct sockaddr *sa);
/* The address of sa without its port into buf (NET_HOST_STRLEN bytes):
 * "192.0.2.1", "2001:db8::1", "fe80::1%eth0", an IPv4-mapped one as IPv4;
 * "?" when sa is neither. */
#define NET_HOST_STRLEN 64
const char *net_host_str(const struct sockaddr *sa, char *buf, size_t len);
/* "address:port" of sa into buf (NET_ADDR_STRLEN bytes): the address as
 * net_host_str gives it, an IPv6 one in brackets ("[2001:db8::1]:2049",
 * "192.0.2.1:2049" for ::ffff:192.0.2.1); "local" for a local socket, "?"
 * for any other. */
#define NET_ADDR_STRLEN (NET_HOST_STRLEN + 8)
const char *net_addr_str(const struct sockaddr *sa, char *buf, size_t len);
/* Read or write exactly len bytes, retrying on EINTR and short transfers; 0 or -errno
 * (-ECONNRESET at end of file). */
int net_read_full(int fd, void *buf, size_t len);
/* On a socket, a peer that hung up gives -EPIPE, never SIGPIPE. */
int net_writev_full(int fd, struct iovec *iov, int iovcnt);
/* Write what the socket takes now, never waiting: *iov and *iovcnt advance
 * past what went out. 0 once everything is out, -EAGAIN when the socket is
 * full, else -errno. *moved says whether any byte went. */
int net_writev_some(int fd, struct iovec **iov, int *iovcnt, int *moved);

#endif
