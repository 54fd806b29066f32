/* integrity.c: HMAC-SHA256 MICs for the AUTH_NFSRDMA_HMAC flavour (OpenSSL EVP_MAC). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "integrity.h"
#include "rpc.h"

/* A keyed HMAC-SHA256 context that each MIC duplicates (cheaper than re-keying). */
static int make_template(struct integrity_key *k)
{
	EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA256", 0),
		OSSL_PARAM_construct_end(),
	};
	int rc = -EIO;

	if (!mac)
		return -ENOSYS;
	k->tmpl = EVP_MAC_CTX_new(mac);
	if (k->tmpl && EVP_MAC_init(k->tmpl, k->key, k->len, params) == 1)
		rc = 0;
	EVP_MAC_free(mac);
	if (rc) {
		EVP_MAC_CTX_free(k->tmpl);
		k->tmpl = NULL;
	}
	return rc;
}

int integrity_key_set(struct integrity_key *k, const void *key, size_t len, uint32_t id)
{
	memset(k, 0, sizeof(*k));
	if (len < INTEGRITY_KEY_MIN || len > INTEGRITY_KEY_MAX)
		return -EINVAL;
	memcpy(k->key, key, len);
	k->len = len;
	k->id = id;
	return make_template(k);
}

int integrity_key_load(const char *path, struct integrity_key *k, char *err, size_t errlen)
{
	uint8_t buf[INTEGRITY_KEY_MAX + 2];
	struct stat st;
	ssize_t n;
	int fd, rc;

	memset(k, 0, sizeof(*k));
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return rc;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		close(fd);
		return -EINVAL;
	}
	if (st.st_mode & 077) {
		snprintf(err, errlen,
			 "%s: key file must not be accessible to group or others (mode %03o)", path,
			 (unsigned)(st.st_mode & 0777));
		close(fd);
		return -EPERM;
	}
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	if (n < INTEGRITY_KEY_MIN || n > INTEGRITY_KEY_MAX) {
		snprintf(err, errlen, "%s: key must be %d to %d bytes", path, INTEGRITY_KEY_MIN,
			 INTEGRITY_KEY_MAX);
		return -EINVAL;
	}
	rc = integrity_key_set(k, buf, (size_t)n, 0);
	OPENSSL_cleanse(buf, sizeof(buf));
	if (rc)
		snprintf(err, errlen, "%s: HMAC-SHA256 unavailable in OpenSSL", path);
	return rc;
}

void integrity_key_clear(struct integrity_key *k)
{
	EVP_MAC_CTX_free(k->tmpl);
	OPENSSL_cleanse(k, sizeof(*k));
}

int integrity_mic_begin(const struct integrity_key *k, struct integrity_mic *m)
{
	m->ctx = k->tmpl ? EVP_MAC_CTX_dup(k->tmpl) : NULL;
	return m->ctx ? 0 : -ENOMEM;
}

int integrity_mic_update(struct integrity_mic *m, const void *data, size_t len)
{
	return EVP_MAC_update(m->ctx, data, len) == 1 ? 0 : -EIO;
}

int integrity_mic_update_stream(struct integrity_mic *m, const uint8_t *base, size_t start,
				size_t end, const struct rpc_ddp *ddp)
{
	static const uint8_t zeros[4];
	size_t pos = start;
	int rc = 0;

	for (unsigned i = 0; ddp && i < ddp->nitems && rc == 0; i++) {
		const struct rpc_ddp_item *it = &ddp->items[i];

		if (it->pos < pos || it->pos > end)
			return -EINVAL;
		rc = integrity_mic_update(m, base + pos, it->pos - pos);
		if (rc == 0)
			rc = integrity_mic_update(m, it->data, it->len);
		if (rc == 0 && (it->len & 3))
			rc = integrity_mic_update(m, zeros, 4 - (it->len & 3));
		pos = it->pos;
	}
	if (rc == 0)
		rc = integrity_mic_update(m, base + pos, end - pos);
	return rc;
}

int integrity_mic_final(struct integrity_mic *m, uint8_t out[INTEGRITY_MIC_LEN])
{
	size_t len = 0;
	int ok = EVP_MAC_final(m->ctx, out, &len, INTEGRITY_MIC_LEN);

	EVP_MAC_CTX_free(m->ctx);
	m->ctx = NULL;
	return ok == 1 && len == INTEGRITY_MIC_LEN ? 0 : -EIO;
}

void integrity_mic_abort(struct integrity_mic *m)
{
	EVP_MAC_CTX_free(m->ctx);
	m->ctx = NULL;
}

int integrity_mic_equal(const uint8_t a[INTEGRITY_MIC_LEN], const uint8_t b[INTEGRITY_MIC_LEN])
{
	return CRYPTO_memcmp(a, b, INTEGRITY_MIC_LEN) == 0;
}
