/*
 * perm.c: see perm.h.
 */
#include "common/base/perm.h"

/* See perm.h. */
int perm_in_group(const struct perm_ident *id, gid_t gid)
{
	if (id->gid == gid)
		return 1;
	for (size_t i = 0; i < id->ngids; i++)
		if (id->gids[i] == gid)
			return 1;
	return 0;
}

/* See perm.h. The owner gets the owner's bits only, even where the group's
 * or other's give more, as the kernel decides. */
unsigned perm_mode_rights(const struct stat *st, const struct perm_ident *id)
{
	if (id->uid == st->st_uid)
		return (st->st_mode >> 6) & 7u;
	if (perm_in_group(id, st->st_gid))
		return (st->st_mode >> 3) & 7u;
	return st->st_mode & 7u;
}

/* See perm.h. With several matching group entries one of them must have all
 * of want (POSIX.1e 23.1.5): R from one group and W from another is no RW. */
int perm_acl_allows(const struct perm_acl_entry *e, size_t n, const struct stat *st,
		    const struct perm_ident *id, unsigned want)
{
	unsigned mask = 7u, other = 0, user = 0;
	int group_hit = 0, group_ok = 0, user_hit = 0;

	want &= 7u;
	if (id->uid == st->st_uid) {
		/* the owner's entry; an ACL without one: the mode's bits */
		for (size_t i = 0; i < n; i++)
			if (e[i].tag == PERM_ACL_USER_OBJ)
				return (e[i].perm & want) == want;
		return (((st->st_mode >> 6) & 7u) & want) == want;
	}
	for (size_t i = 0; i < n; i++) {
		int in = 0;

		switch (e[i].tag) {
		case PERM_ACL_USER_OBJ:
			break;
		case PERM_ACL_USER:
			if (id->uid == (uid_t)e[i].id) {
				user = e[i].perm;
				user_hit = 1;
			}
			break;
		case PERM_ACL_GROUP_OBJ:
			in = perm_in_group(id, st->st_gid);
			break;
		case PERM_ACL_GROUP:
			in = perm_in_group(id, (gid_t)e[i].id);
			break;
		case PERM_ACL_MASK:
			mask = e[i].perm;
			break;
		case PERM_ACL_OTHER:
			other = e[i].perm;
			break;
		}
		if (in) {
			group_hit = 1;
			group_ok |= (e[i].perm & want) == want;
		}
	}
	if (user_hit)
		return (user & mask & want) == want;
	if (group_hit)
		return group_ok && (mask & want) == want;
	return (other & want) == want;
}
