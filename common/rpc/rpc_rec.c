/* rpc_rec.c: RFC 5531 record marking, shared by the TCP server and client. */
#include <pthread.h>
#include <stdlib.h>
#include <arpa/inet.h>

#include "common/base/net.h"
#include "rpc_tcp.h"

#define LAST_FRAG  0x80000000u
#define REDUCE_MIN 1024 /* bulk items smaller than this are simply copied */

int rpc_rec_read(int fd, size_t max, uint8_t **out, size_t *outlen)
{
	uint8_t *buf = NULL, *nbuf;
	size_t len = 0, frag;
	uint32_t mark;
	int rc;

	for (;;) {
		if ((rc = net_read_full(fd, &mark, 4)) != 0)
			break;
		mark = ntohl(mark);
		frag = mark & ~LAST_FRAG;
		if (frag > max - len) {
			rc = -EMSGSIZE;
			break;
		}
		if (!(nbuf = realloc(buf, len + frag + 1))) {
			rc = -ENOMEM;
			break;
		}
		buf = nbuf;
		if ((rc = net_read_full(fd, buf + len, frag)) != 0)
			break;
		len += frag;
		if (mark & LAST_FRAG) {
			*out = buf;
			*outlen = len;
			return 0;
		}
	}
	free(buf);
	return rc;
}

int rpc_rec_iov(const uint8_t *buf, size_t len, const struct rpc_ddp *ddp, uint32_t *mark,
		struct iovec iov[RPC_REC_IOV_MAX])
{
	static const uint8_t zeros[4];
	size_t total = len, pos = 0;
	int n = 1;

	for (unsigned i = 0; ddp && i < ddp->nitems; i++) {
		const struct rpc_ddp_item *it = &ddp->items[i];
		size_t pad = (4 - (it->len & 3)) & 3;

		iov[n++] = (struct iovec){(void *)(buf + pos), it->pos - pos};
		iov[n++] = (struct iovec){it->data, it->len};
		iov[n++] = (struct iovec){(void *)zeros, pad};
		total += it->len + pad;
		pos = it->pos;
	}
	iov[n++] = (struct iovec){(void *)(buf + pos), len - pos};
	if (total > ~LAST_FRAG)
		return -EMSGSIZE;
	*mark = htonl(LAST_FRAG | (uint32_t)total);
	iov[0] = (struct iovec){(void *)mark, 4};
	return n;
}

int rpc_rec_write(int fd, pthread_mutex_t *wlock, const uint8_t *buf, size_t len,
		  const struct rpc_ddp *ddp)
{
	struct iovec iov[RPC_REC_IOV_MAX];
	uint32_t mark;
	int n = rpc_rec_iov(buf, len, ddp, &mark, iov), rc;

	if (n < 0)
		return n;
	pthread_mutex_lock(wlock);
	rc = net_writev_full(fd, iov, n);
	pthread_mutex_unlock(wlock);
	return rc;
}

int rpc_rec_ddp_put(struct rpc_ddp *ddp, XDR *xdrs, void *data, uint32_t len)
{
	if (len < REDUCE_MIN || ddp->nitems == RPC_DDP_MAX_ITEMS)
		return xdr_opaque(xdrs, data, len) ? 0 : -ENOSPC;
	return rpc_ddp_note(ddp, xdr_getpos(xdrs), data, len);
}
