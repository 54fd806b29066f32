/*
 * nfs3_xdr_test: the generated XDR routines enforce the caps written into
 * nfs3_prot.x and mount_prot.x: a name over 255 bytes, a handle over 64, WRITE
 * data over 16 MiB or a path over the limit fail to decode (before any large
 * allocation), and what fits round-trips unchanged.
 */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "server/nfs3.h"

/* Append a big-endian word to a buffer. */
static size_t put32(unsigned char *b, size_t off, uint32_t v)
{
	uint32_t be = htonl(v);

	memcpy(b + off, &be, 4);
	return off + 4;
}

/* Decode len bytes of buf with proc into obj (size bytes); the result. */
static int decode(xdrproc_t proc, const unsigned char *buf, size_t len, void *obj, size_t size)
{
	XDR x;
	int ok;

	memset(obj, 0, size);
	xdrmem_create(&x, (char *)buf, (u_int)len, XDR_DECODE);
	ok = proc(&x, obj);
	xdr_destroy(&x);
	xdr_free(proc, obj);
	return ok;
}

/* A handle of hlen bytes and a name of nlen bytes, as LOOKUP3args on the wire. */
static size_t lookup_args(unsigned char *b, uint32_t hlen, uint32_t nlen)
{
	size_t off = put32(b, 0, hlen);

	memset(b + off, 1, (hlen + 3) & ~3u);
	off += (hlen + 3) & ~3u;
	off = put32(b, off, nlen);
	memset(b + off, 'a', (nlen + 3) & ~3u);
	return off + ((nlen + 3) & ~3u);
}

/* Names and handles at and over their caps. */
static void caps_on_names_and_handles(void **state)
{
	unsigned char b[1024];
	LOOKUP3args a;

	assert_true(decode((xdrproc_t)xdr_LOOKUP3args, b, lookup_args(b, 64, 255), &a, sizeof(a)));
	assert_false(decode((xdrproc_t)xdr_LOOKUP3args, b, lookup_args(b, 64, 256), &a, sizeof(a)));
	assert_false(decode((xdrproc_t)xdr_LOOKUP3args, b, lookup_args(b, 65, 1), &a, sizeof(a)));
	/* a length far past the buffer fails without reading or allocating it */
	put32(b, 0, 0xfffffff0u);
	assert_false(decode((xdrproc_t)xdr_LOOKUP3args, b, 64, &a, sizeof(a)));
}

/* A name with a NUL byte inside is refused, not cut to "ab"; the same bytes
 * without it decode; a MOUNT path likewise. */
static void nul_in_names(void **state)
{
	unsigned char b[1024];
	size_t len = lookup_args(b, 8, 5), name = len - 8; /* "aaaaa" + 3 pad bytes */
	LOOKUP3args a;
	dirpath p;

	assert_true(decode((xdrproc_t)xdr_LOOKUP3args, b, len, &a, sizeof(a)));
	b[name + 2] = '\0';
	assert_false(decode((xdrproc_t)xdr_LOOKUP3args, b, len, &a, sizeof(a)));
	put32(b, 0, 4);
	memcpy(b + 4, "/x\0y", 4);
	assert_false(decode((xdrproc_t)xdr_dirpath, b, 8, &p, sizeof(p)));
	memcpy(b + 4, "/x/y", 4);
	assert_true(decode((xdrproc_t)xdr_dirpath, b, 8, &p, sizeof(p)));
}

/* WRITE data of len bytes (all present in the buffer) decodes only up to the
 * 16 MiB cap; with stable_how how, through the server's checked decoder. */
static int write_decodes_how(uint32_t len, uint32_t how)
{
	size_t size = 32 + (size_t)NFS3_MAXDATA + 8;
	unsigned char *b = calloc(1, size);
	WRITE3args a;
	size_t off = put32(b, 0, 8);
	int ok;

	assert_non_null(b);
	off += 8;
	off = put32(b, off, 0); /* offset, two words */
	off = put32(b, off, 0);
	off = put32(b, off, len);
	off = put32(b, off, how);
	off = put32(b, off, len);
	ok = decode((xdrproc_t)xdr_WRITE3args_checked, b, off + ((len + 3) & ~3u), &a, sizeof(a));
	free(b);
	return ok;
}

static int write_decodes(uint32_t len)
{
	return write_decodes_how(len, UNSTABLE);
}

/* stable_how 0, 1 and 2 decode; 3 and past are garbage (not FILE_SYNC). */
static void stable_how_checked(void **state)
{
	for (uint32_t how = UNSTABLE; how <= FILE_SYNC; how++)
		assert_true(write_decodes_how(16, how));
	assert_false(write_decodes_how(16, 3));
	assert_false(write_decodes_how(16, 0x80000000u));
}

/* WRITE data: 16 MiB is the cap. */
static void cap_on_write_data(void **state)
{
	assert_true(write_decodes(NFS3_MAXDATA));
	assert_false(write_decodes(NFS3_MAXDATA + 1));
}

/* MOUNT paths are capped at MNTPATHLEN. */
static void cap_on_mount_path(void **state)
{
	unsigned char *b = calloc(1, 4 + MNTPATHLEN + 8);
	dirpath p;

	memset(b + 4, 'a', MNTPATHLEN + 4); /* a path, not a run of NULs (refused) */
	put32(b, 0, MNTPATHLEN);
	assert_true(decode((xdrproc_t)xdr_dirpath, b, 4 + MNTPATHLEN, &p, sizeof(p)));
	put32(b, 0, MNTPATHLEN + 1);
	assert_false(decode((xdrproc_t)xdr_dirpath, b, 4 + MNTPATHLEN + 4, &p, sizeof(p)));
	free(b);
}

/* Run the group (TAP output when CMOCKA_MESSAGE_OUTPUT=TAP). */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(caps_on_names_and_handles), cmocka_unit_test(cap_on_write_data),
		cmocka_unit_test(stable_how_checked),	     cmocka_unit_test(nul_in_names),
		cmocka_unit_test(cap_on_mount_path),
	};
	return cmocka_run_group_tests_name("nfs3_xdr", tests, NULL, NULL);
}
