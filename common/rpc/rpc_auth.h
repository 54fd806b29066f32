/* rpc_auth.h: credential bodies (AUTH_SYS, AUTH_NFSRDMA_HMAC) and the MICs. */
#ifndef NFSRDMA_RPC_AUTH_H
#define NFSRDMA_RPC_AUTH_H

#include "integrity.h"
#include "rpc.h"

#define RPC_NOBODY 65534u

/* What an AUTH_NFSRDMA_HMAC credential says beyond AUTH_SYS: the sender's
 * context (a random id), the call's number in it, the sender's clock. */
struct rpc_integrity_seq {
	uint64_t ctx;
	uint32_t seq;
	uint32_t time; /* seconds since 1970, low 32 bits */
};

/* Encode cred as the body of an AUTH_SYS credential, or of an AUTH_NFSRDMA_HMAC
 * one with is when key is set. *len is the room in body on entry, the length
 * on return. */
int rpc_auth_encode_cred(const struct rpc_cred *cred, const struct integrity_key *key,
			 const struct rpc_integrity_seq *is, uint8_t *body, u_int *len,
			 uint32_t *flavor);

/* Decode a credential. Returns 0, or the auth_stat to refuse it with
 * (AUTH_BADCRED, AUTH_REJECTEDCRED...). AUTH_NONE maps to nobody. */
int rpc_auth_decode_cred(uint32_t flavor, const uint8_t *body, u_int len,
			 const struct integrity_key *key, struct rpc_cred *cred,
			 struct rpc_integrity_seq *is);

/* MIC of a call: buf[0, cred_end) then the argument stream [args_start, end). */
int rpc_call_mic(const struct integrity_key *key, const uint8_t *buf, size_t cred_end,
		 size_t args_start, size_t end, const struct rpc_ddp *ddp,
		 uint8_t mic[INTEGRITY_MIC_LEN]);
/* MIC of a reply: the xid, then the stream from the accept_stat word to end. */
int rpc_reply_mic(const struct integrity_key *key, uint32_t xid, const uint8_t *buf,
		  size_t res_start, size_t end, const struct rpc_ddp *ddp,
		  uint8_t mic[INTEGRITY_MIC_LEN]);

#endif
