/*
 * perm.h: POSIX permission checks done in user space, for a server that keeps
 * its own identity while it works for a caller (server.identity =
 * "userspace"): the rights a caller has on an object from its mode bits, or
 * from its POSIX access ACL (POSIX.1e draft 17, as Linux, and illumos's
 * UFS-style aclent_t, evaluate it). Plain code, no OS calls: the ACL's
 * entries come from osdep_acl_rights (common/base/osdep.h).
 */
#ifndef NFSRDMA_PERM_H
#define NFSRDMA_PERM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Rights, as access(2) names them: R_OK 4, W_OK 2, X_OK 1. */
#define PERM_R 4u
#define PERM_W 2u
#define PERM_X 1u

/* A caller: uid, primary gid, and its supplementary groups. */
struct perm_ident {
	uid_t uid;
	gid_t gid;
	size_t ngids;
	const gid_t *gids;
};

/* One entry of an access ACL. */
enum perm_acl_tag {
	PERM_ACL_USER_OBJ,  /* the owner */
	PERM_ACL_USER,	    /* a named user (id) */
	PERM_ACL_GROUP_OBJ, /* the owning group */
	PERM_ACL_GROUP,	    /* a named group (id) */
	PERM_ACL_MASK,	    /* bounds every entry but USER_OBJ and OTHER */
	PERM_ACL_OTHER,
};

struct perm_acl_entry {
	enum perm_acl_tag tag;
	uint32_t id;   /* USER, GROUP: the uid or gid */
	unsigned perm; /* PERM_R | PERM_W | PERM_X */
};

/* Whether id is in group gid (its primary group or a supplementary one). */
int perm_in_group(const struct perm_ident *id, gid_t gid);
/* The rights the mode bits of st give id (root is not special here). */
unsigned perm_mode_rights(const struct stat *st, const struct perm_ident *id);
/* Whether n ACL entries give id all of `want` on an object owned by st's
 * uid and gid: the owner's entry decides for the owner, else a named user's
 * (masked), else, if id is in any group with an entry, whether one of those
 * entries (masked) has all of want, else other's. */
int perm_acl_allows(const struct perm_acl_entry *e, size_t n, const struct stat *st,
		    const struct perm_ident *id, unsigned want);

#endif
