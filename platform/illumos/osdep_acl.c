/*
 * osdep_acl.c: access ACLs on illumos for the user-space identity checks
 * (osdep.h): UFS and tmpfs keep POSIX-draft ACLs (aclent_t), evaluated by
 * common/base/perm.c; ZFS keeps NFSv4-style ACEs (ace_t), evaluated here in
 * order, the first ACE that speaks of a right deciding it. Compiled and
 * link-checked only (scripts/check-illumos.sh): nothing here has run.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/acl.h>

#include "common/base/osdep.h"

/* Bounds of an ACL read here (illumos allows MAX_ACL_ENTRIES, 1024). */
#define ACL_MAX 1024

/* The aclent_t ACL of fd: 1/0 as osdep.h says, -ENOTSUP if the file
 * system keeps ACEs instead. */
static int aclent_allows(int fd, const struct stat *st, const struct perm_ident *id, unsigned want)
{
	struct perm_acl_entry *ents;
	aclent_t *a;
	size_t n = 0;
	int cnt, r;

	if ((cnt = facl(fd, GETACLCNT, 0, NULL)) < 0)
		return errno == ENOSYS || errno == ENOTSUP ? -ENOTSUP : -errno;
	if (cnt <= MIN_ACL_ENTRIES) /* owner, group, other: the mode bits */
		return -ENODATA;
	if (cnt > ACL_MAX)
		return -E2BIG;
	a = calloc((size_t)cnt, sizeof(*a));
	ents = calloc((size_t)cnt, sizeof(*ents));
	r = a && ents ? facl(fd, GETACL, cnt, a) : (errno = ENOMEM, -1);
	for (int i = 0; i < r; i++) {
		static const struct {
			int type;
			enum perm_acl_tag tag;
		} map[] = {{USER_OBJ, PERM_ACL_USER_OBJ},   {USER, PERM_ACL_USER},
			   {GROUP_OBJ, PERM_ACL_GROUP_OBJ}, {GROUP, PERM_ACL_GROUP},
			   {CLASS_OBJ, PERM_ACL_MASK},	    {OTHER_OBJ, PERM_ACL_OTHER}};

		for (size_t k = 0; k < sizeof(map) / sizeof(map[0]); k++)
			if (a[i].a_type == map[k].type)
				ents[n++] = (struct perm_acl_entry){map[k].tag, (uint32_t)a[i].a_id,
								    (unsigned)a[i].a_perm & 7u};
	}
	r = r < 0 ? -errno : perm_acl_allows(ents, n, st, id, want);
	free(a);
	free(ents);
	return r;
}

/* Whether ACE a speaks of id on an object owned as st says. */
static int ace_matches(const ace_t *a, const struct stat *st, const struct perm_ident *id)
{
	uint16_t f = a->a_flags;

	if (f & ACE_OWNER)
		return id->uid == st->st_uid;
	if (f & ACE_EVERYONE)
		return 1;
	if ((f & ACE_GROUP) && (f & ACE_IDENTIFIER_GROUP))
		return perm_in_group(id, st->st_gid);
	if (f & ACE_IDENTIFIER_GROUP)
		return perm_in_group(id, (gid_t)a->a_who);
	return id->uid == (uid_t)a->a_who;
}

/* The ace_t ACL of fd, as ZFS evaluates it for read, write, execute: each
 * right wanted is decided by the first matching ALLOW or DENY that names it;
 * a right no ACE names is denied. */
static int ace_allows(int fd, const struct stat *st, const struct perm_ident *id, unsigned want)
{
	uint32_t need = 0, allowed = 0, decided = 0;
	ace_t *a;
	int cnt, r;

	if ((cnt = facl(fd, ACE_GETACLCNT, 0, NULL)) < 0)
		return errno == ENOSYS || errno == ENOTSUP ? -ENODATA : -errno;
	if (cnt > ACL_MAX)
		return -E2BIG;
	if ((a = calloc((size_t)cnt + 1, sizeof(*a))) == NULL)
		return -ENOMEM;
	if ((r = facl(fd, ACE_GETACL, cnt, a)) < 0) {
		r = -errno;
		free(a);
		return r;
	}
	need = (want & PERM_R ? ACE_READ_DATA : 0) |
	       (want & PERM_W ? ACE_WRITE_DATA | ACE_APPEND_DATA : 0) |
	       (want & PERM_X ? ACE_EXECUTE : 0);
	for (int i = 0; i < r && (decided & need) != need; i++) {
		uint32_t bits = a[i].a_access_mask & need & ~decided;

		if ((a[i].a_flags & ACE_INHERIT_ONLY_ACE) || !bits || !ace_matches(&a[i], st, id))
			continue;
		if (a[i].a_type == ACE_ACCESS_ALLOWED_ACE_TYPE)
			allowed |= bits;
		if (a[i].a_type == ACE_ACCESS_ALLOWED_ACE_TYPE ||
		    a[i].a_type == ACE_ACCESS_DENIED_ACE_TYPE)
			decided |= bits;
	}
	free(a);
	return (allowed & need) == need;
}

/* See osdep.h. */
int osdep_acl_allows(int fd, const struct stat *st, const struct perm_ident *id, unsigned want)
{
	int r;

	if (S_ISLNK(st->st_mode))
		return -ENODATA;
	r = aclent_allows(fd, st, id, want);
	return r == -ENOTSUP ? ace_allows(fd, st, id, want) : r;
}
