/*
 * integrity.h: the AUTH_NFSRDMA_HMAC integrity flavour's key and MICs.
 *
 * A MIC is HMAC-SHA256 under a shared key read from a file only its owner may
 * read. It covers the RPC header and the arguments (calls) or the results
 * (replies) as the full XDR stream, including the bulk data a transport moved by
 * RDMA, spliced back at its position with its XDR padding. Wire format: see
 * nfsrdma-server(8), "INTEGRITY".
 */
#ifndef NFSRDMA_INTEGRITY_H
#define NFSRDMA_INTEGRITY_H

#include <stddef.h>
#include <stdint.h>

#include "common/base/config.h"

#define INTEGRITY_MIC_LEN   32
#define INTEGRITY_KEY_MIN   CFG_KEY_MIN
#define INTEGRITY_KEY_MAX   CFG_KEY_MAX
#define INTEGRITY_CRED_VERS 2 /* 2: a context id and the sender's clock, for replays */

struct rpc_ddp;
struct evp_mac_ctx_st;

struct integrity_key {
	uint8_t key[INTEGRITY_KEY_MAX];
	size_t len;
	uint32_t id;		     /* key id carried in the credential (for rotation) */
	struct evp_mac_ctx_st *tmpl; /* a keyed HMAC context, duplicated per MIC */
};

/* Load the key from path: INTEGRITY_KEY_MIN..MAX bytes (one trailing newline
 * ignored); the file must be a regular file that group and others cannot access.
 * On error returns -errno and a message in err. */
int integrity_key_load(const char *path, struct integrity_key *k, char *err, size_t errlen);
/* Use raw bytes as the key (tests, and keys from elsewhere). */
int integrity_key_set(struct integrity_key *k, const void *key, size_t len, uint32_t id);
void integrity_key_clear(struct integrity_key *k);

struct integrity_mic {
	struct evp_mac_ctx_st *ctx;
};

int integrity_mic_begin(const struct integrity_key *k, struct integrity_mic *m);
int integrity_mic_update(struct integrity_mic *m, const void *data, size_t len);
/* Feed stream bytes [start, end) of base with the reduced items of ddp spliced in
 * at their positions (each followed by its XDR padding). ddp may be NULL. */
int integrity_mic_update_stream(struct integrity_mic *m, const uint8_t *base, size_t start,
				size_t end, const struct rpc_ddp *ddp);
/* Finish: write the MIC to out and release m. */
int integrity_mic_final(struct integrity_mic *m, uint8_t out[INTEGRITY_MIC_LEN]);
void integrity_mic_abort(struct integrity_mic *m);
/* Constant-time comparison. */
int integrity_mic_equal(const uint8_t a[INTEGRITY_MIC_LEN], const uint8_t b[INTEGRITY_MIC_LEN]);

#endif
