/*
 * soft_wire.h: what the soft provider puts on the stream socket.
 *
 * Every message is a fixed 32-byte header, big-endian, followed by `len`
 * payload bytes. Requests (SEND, SEND_INV, WRITE, READ_REQ) carry a sequence
 * number, one per request, in post order; the responder processes them in
 * order and acknowledges cumulatively (ACK seq = last request done), or
 * refuses one with NAK (seq, status) after which both QPs are in error.
 * READ_RESP carries the data of the Read with the same seq. The connection
 * manager messages (HELLO, ACCEPT, REJECT, RTU) carry private data as payload
 * and IRD/ORD in `aux`; HELLO and ACCEPT carry SOFT_WIRE_MAGIC in `addr`.
 */
#ifndef NFSRDMA_SOFT_WIRE_H
#define NFSRDMA_SOFT_WIRE_H

#include <stdint.h>

#define SOFT_HDR_LEN	32
#define SOFT_WIRE_MAGIC 0x4e4653524446310aULL /* "NFSRDF1\n": protocol version 1 */

enum soft_op {
	SOFT_OP_NONE,
	SOFT_OP_HELLO,	   /* active -> passive: connect request + private data */
	SOFT_OP_ACCEPT,	   /* passive -> active: accepted + private data */
	SOFT_OP_REJECT,	   /* passive -> active: rejected + private data */
	SOFT_OP_RTU,	   /* active -> passive: ready to use */
	SOFT_OP_SEND,	   /* payload lands in the next posted Receive */
	SOFT_OP_SEND_INV,  /* a Send that also invalidates `key` at the responder */
	SOFT_OP_WRITE,	   /* payload lands at (key, addr) */
	SOFT_OP_READ_REQ,  /* asks for `aux` bytes at (key, addr) */
	SOFT_OP_READ_RESP, /* the data of Read `seq` */
	SOFT_OP_ACK,	   /* requests up to and including `seq` are done */
	SOFT_OP_NAK,	   /* request `seq` failed with `status` (enum vb_wc_status) */
	SOFT_OP_ERR,	   /* the sender's QP went to error; flush */
	SOFT_OP_CMA_PROBE, /* payload: addresses of words of the sender's (soft_cma.c) */
	SOFT_OP_CMA_OK,	   /* the sender read it: it copies the other's RDMA data */
	SOFT_OP_MAX,
};

struct soft_hdr {
	uint8_t op;
	uint8_t status;
	uint16_t flags;
	uint32_t len; /* payload bytes that follow */
	uint32_t seq;
	uint32_t key;
	uint64_t addr;
	uint32_t aux;
	uint32_t resv;
};

/* flags of a SEND or SEND_INV: the sender will get an answer, which may carry
 * the acknowledgement (VB_SEND_ANSWERED) */
#define SOFT_FLAG_ANSWERED 0x1
/* cross-memory copies (soft_cma.c): on a WRITE, the payload is the
 * initiator's segment list (aux: the data's length) and the responder copies
 * the data itself; on a READ_REQ, the initiator asks to copy the data itself;
 * on a READ_RESP, the payload is the grant to (aux: the data's length) */
#define SOFT_FLAG_CMA 0x2
/* flags of a HELLO or ACCEPT: the sender can copy RDMA data directly */
#define SOFT_FLAG_CMA_ABLE 0x4

void soft_hdr_encode(const struct soft_hdr *h, uint8_t out[SOFT_HDR_LEN]);
void soft_hdr_decode(const uint8_t in[SOFT_HDR_LEN], struct soft_hdr *h);

/* Serial-number order of 32-bit sequence numbers: a <= b. */
static inline int soft_seq_le(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) <= 0;
}

#endif
