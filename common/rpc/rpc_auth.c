/* rpc_auth.c: AUTH_SYS and AUTH_NFSRDMA_HMAC credential bodies. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rpc_auth.h"

#define MACHNAME_MAX 255

/* The AUTH_SYS part: stamp, machine name, uid, gid, gids (RFC 5531 appendix A). */
static bool_t xdr_sys_body(XDR *xdrs, struct rpc_cred *cred, char *machname)
{
	u_int stamp = 0, n = cred->ngids;
	char *name = machname;

	if (!xdr_u_int(xdrs, &stamp) || !xdr_string(xdrs, &name, MACHNAME_MAX) ||
	    !xdr_u_int(xdrs, &cred->uid) || !xdr_u_int(xdrs, &cred->gid) || !xdr_u_int(xdrs, &n))
		return FALSE;
	if (n > RPC_MAX_GIDS)
		return FALSE;
	cred->ngids = n;
	for (u_int i = 0; i < n; i++)
		if (!xdr_u_int(xdrs, &cred->gids[i]))
			return FALSE;
	return TRUE;
}

static const char *hostname(void)
{
	static char name[MACHNAME_MAX + 1];

	if (name[0] == '\0' && gethostname(name, MACHNAME_MAX) != 0)
		strcpy(name, "nfsrdma");
	return name;
}

/* The integrity credential's own words, either way: version, key id,
 * context, sequence number, time. */
static bool_t xdr_integrity_seq(XDR *xdrs, u_int *vers, u_int *key_id, struct rpc_integrity_seq *is)
{
	uint64_t ctx = is->ctx;
	u_int seq = is->seq, time = is->time;

	if (!xdr_u_int(xdrs, vers) || !xdr_u_int(xdrs, key_id) || !xdr_uint64_t(xdrs, &ctx) ||
	    !xdr_u_int(xdrs, &seq) || !xdr_u_int(xdrs, &time))
		return FALSE;
	*is = (struct rpc_integrity_seq){.ctx = ctx, .seq = seq, .time = time};
	return TRUE;
}

int rpc_auth_encode_cred(const struct rpc_cred *cred, const struct integrity_key *key,
			 const struct rpc_integrity_seq *is, uint8_t *body, u_int *len,
			 uint32_t *flavor)
{
	struct rpc_integrity_seq mine = is ? *is : (struct rpc_integrity_seq){0};
	struct rpc_cred c = *cred;
	char machname[MACHNAME_MAX + 1];
	u_int vers = INTEGRITY_CRED_VERS, key_id = key ? key->id : 0;
	bool_t ok = TRUE;
	XDR xdrs;

	snprintf(machname, sizeof(machname), "%s", hostname());
	xdrmem_create(&xdrs, (char *)body, *len, XDR_ENCODE);
	if (key)
		ok = xdr_integrity_seq(&xdrs, &vers, &key_id, &mine);
	ok = ok && xdr_sys_body(&xdrs, &c, machname);
	*len = xdr_getpos(&xdrs);
	xdr_destroy(&xdrs);
	*flavor = key ? AUTH_NFSRDMA_HMAC : AUTH_SYS;
	return ok ? 0 : -ENOSPC;
}

int rpc_auth_decode_cred(uint32_t flavor, const uint8_t *body, u_int len,
			 const struct integrity_key *key, struct rpc_cred *cred,
			 struct rpc_integrity_seq *is)
{
	char machname[MACHNAME_MAX + 1];
	u_int vers, key_id;
	bool_t ok;
	XDR xdrs;

	memset(cred, 0, sizeof(*cred));
	cred->flavor = flavor;
	memset(is, 0, sizeof(*is));
	if (flavor == AUTH_NONE) {
		cred->uid = cred->gid = RPC_NOBODY;
		return 0;
	}
	if (flavor != AUTH_SYS && flavor != AUTH_NFSRDMA_HMAC)
		return AUTH_REJECTEDCRED;
	if (flavor == AUTH_NFSRDMA_HMAC && key == NULL)
		return AUTH_REJECTEDCRED; /* this server has no key: ask for another flavour */
	xdrmem_create(&xdrs, (char *)body, len, XDR_DECODE);
	ok = TRUE;
	if (flavor == AUTH_NFSRDMA_HMAC) {
		ok = xdr_integrity_seq(&xdrs, &vers, &key_id, is) && vers == INTEGRITY_CRED_VERS &&
		     key_id == key->id;
	}
	ok = ok && xdr_sys_body(&xdrs, cred, machname) && xdr_getpos(&xdrs) == len;
	xdr_destroy(&xdrs);
	cred->flavor = flavor;
	return ok ? 0 : AUTH_BADCRED;
}
