/* net.h: socket helpers shared by the TCP transport, the control socket and tests. */
#ifndef NFSRDMA_NET_H
#define NFSRDMA_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/uio.h>

/* Listen on host:port (host NULL = any address, IPv6 with IPv4 mapped where possible).
 * Returns the fd or -errno; *err names what failed. */
int net_listen_tcp(const char *host, const char *port, int backlog, const char **err);
/* Connect with a timeout; returns the fd or -errno. */
int net_connect_tcp(const char *host, const char *port, int timeout_ms);
/* The port a socket is bound to (for tests that listen on port 0). */
int net_local_port(int fd);
/* A TCP port free on 127.0.0.1 right now (for tests), or -errno. */
int net_free_port(void);
/* Whether a and b are the same host, ports aside (IPv4 and IPv6). */
bool net_same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b);
/* "address:port" of sa into buf. */
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
