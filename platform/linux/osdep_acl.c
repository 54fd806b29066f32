/*
 * osdep_acl.c: POSIX access ACLs on Linux, read with libacl and evaluated by
 * common/base/perm.c, for the user-space identity checks (osdep.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/acl.h>
#include <acl/libacl.h>

#include "common/base/osdep.h"

/* perm.h's tag for a libacl one; -1 for one that is not an access entry. */
static int acl_tag(acl_tag_t t)
{
	switch (t) {
	case ACL_USER_OBJ:
		return PERM_ACL_USER_OBJ;
	case ACL_USER:
		return PERM_ACL_USER;
	case ACL_GROUP_OBJ:
		return PERM_ACL_GROUP_OBJ;
	case ACL_GROUP:
		return PERM_ACL_GROUP;
	case ACL_MASK:
		return PERM_ACL_MASK;
	case ACL_OTHER:
		return PERM_ACL_OTHER;
	default:
		return -1;
	}
}

/* One libacl entry as perm.h's; 0, or -1 (errno set) if unreadable. */
static int acl_entry_read(acl_entry_t ae, struct perm_acl_entry *out)
{
	acl_permset_t ps;
	acl_tag_t t;
	void *q;

	if (acl_get_tag_type(ae, &t) < 0 || acl_get_permset(ae, &ps) < 0)
		return -1;
	out->tag = (enum perm_acl_tag)acl_tag(t);
	out->id = 0;
	if (t == ACL_USER || t == ACL_GROUP) {
		if ((q = acl_get_qualifier(ae)) == NULL)
			return -1;
		out->id = t == ACL_USER ? (uint32_t) * (uid_t *)q : (uint32_t) * (gid_t *)q;
		acl_free(q);
	}
	out->perm = (acl_get_perm(ps, ACL_READ) == 1 ? PERM_R : 0) |
		    (acl_get_perm(ps, ACL_WRITE) == 1 ? PERM_W : 0) |
		    (acl_get_perm(ps, ACL_EXECUTE) == 1 ? PERM_X : 0);
	return 0;
}

/* See osdep.h. fd may be an O_PATH one, which the f*xattr calls refuse: the
 * ACL is read through /proc/self/fd, which names the object itself. An ACL
 * equivalent to the mode bits counts as none. */
int osdep_acl_allows(int fd, const struct stat *st, const struct perm_ident *id, unsigned want)
{
	struct perm_acl_entry *ents;
	char path[64];
	acl_entry_t ae;
	size_t n = 0;
	acl_t acl;
	int r, how = ACL_FIRST_ENTRY;

	if (S_ISLNK(st->st_mode))
		return -ENODATA;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if ((acl = acl_get_file(path, ACL_TYPE_ACCESS)) == NULL)
		return errno == ENOTSUP || errno == ENODATA ? -ENODATA : -errno;
	if (acl_equiv_mode(acl, NULL) == 0) {
		acl_free(acl);
		return -ENODATA;
	}
	if ((r = acl_entries(acl)) < 0 || (ents = calloc((size_t)r + 1, sizeof(*ents))) == NULL) {
		acl_free(acl);
		return -ENOMEM;
	}
	while ((r = acl_get_entry(acl, how, &ae)) == 1) {
		how = ACL_NEXT_ENTRY;
		if (acl_entry_read(ae, &ents[n]) < 0) {
			r = -1;
			break;
		}
		if ((int)ents[n].tag >= 0)
			n++;
	}
	r = r < 0 ? -(errno ? errno : EINVAL) : perm_acl_allows(ents, n, st, id, want);
	free(ents);
	acl_free(acl);
	return r;
}
