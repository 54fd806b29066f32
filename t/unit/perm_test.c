/*
 * perm_test: the user-space permission rules of common/base/perm.c, which
 * server.identity = "userspace" decides with: mode bits (the owner's class
 * alone for the owner), supplementary groups, and POSIX access ACLs (the
 * named user's entry under the mask, one group entry having all of what is
 * asked, the owner's entry unmasked).
 */
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "common/base/perm.h"

static struct stat obj(mode_t mode, uid_t uid, gid_t gid)
{
	struct stat st;

	memset(&st, 0, sizeof(st));
	st.st_mode = S_IFREG | mode;
	st.st_uid = uid;
	st.st_gid = gid;
	return st;
}

static void mode_bits(void **state)
{
	static const gid_t extra[] = {70, 80};
	struct perm_ident owner = {1000, 100, 0, NULL}, member = {2000, 200, 2, extra},
			  stranger = {3000, 300, 0, NULL};
	struct stat st = obj(0074, 1000, 80);

	(void)state;
	/* the owner's class alone: none, though group and other have more */
	assert_int_equal(perm_mode_rights(&st, &owner), 0);
	/* a supplementary group counts as the group */
	assert_int_equal(perm_mode_rights(&st, &member), 7);
	assert_int_equal(perm_mode_rights(&st, &stranger), 4);
	assert_true(perm_in_group(&member, 70));
	assert_true(perm_in_group(&member, 200));
	assert_false(perm_in_group(&member, 300));
}

static void acl_named_user_is_masked(void **state)
{
	const struct perm_acl_entry acl[] = {
		{PERM_ACL_USER_OBJ, 0, 6}, {PERM_ACL_USER, 1000, 7}, {PERM_ACL_GROUP_OBJ, 0, 4},
		{PERM_ACL_MASK, 0, 5},	   {PERM_ACL_OTHER, 0, 0},
	};
	struct perm_ident named = {1000, 100, 0, NULL}, stranger = {3000, 300, 0, NULL},
			  owner = {500, 500, 0, NULL};
	struct stat st = obj(0650, 500, 50);

	(void)state;
	assert_true(perm_acl_allows(acl, 5, &st, &named, PERM_R | PERM_X));
	assert_false(perm_acl_allows(acl, 5, &st, &named, PERM_W)); /* masked */
	assert_false(perm_acl_allows(acl, 5, &st, &stranger, PERM_R));
	/* the owner's entry is not masked, and is all the owner gets */
	assert_true(perm_acl_allows(acl, 5, &st, &owner, PERM_R | PERM_W));
	assert_false(perm_acl_allows(acl, 5, &st, &owner, PERM_X));
}

static void acl_one_group_entry_must_grant_all(void **state)
{
	const struct perm_acl_entry acl[] = {
		{PERM_ACL_USER_OBJ, 0, 7}, {PERM_ACL_GROUP_OBJ, 0, 4}, {PERM_ACL_GROUP, 60, 2},
		{PERM_ACL_MASK, 0, 7},	   {PERM_ACL_OTHER, 0, 1},
	};
	static const gid_t in60[] = {60};
	struct perm_ident both = {2000, 50, 1, in60}, none = {3000, 300, 0, NULL};
	struct stat st = obj(0741, 500, 50);

	(void)state;
	assert_true(perm_acl_allows(acl, 5, &st, &both, PERM_R));
	assert_true(perm_acl_allows(acl, 5, &st, &both, PERM_W));
	/* R from one group and W from another is not RW */
	assert_false(perm_acl_allows(acl, 5, &st, &both, PERM_R | PERM_W));
	/* in a group with an entry: other's X does not apply */
	assert_false(perm_acl_allows(acl, 5, &st, &both, PERM_X));
	assert_true(perm_acl_allows(acl, 5, &st, &none, PERM_X));
	assert_false(perm_acl_allows(acl, 5, &st, &none, PERM_R));
}

static void acl_mask_bounds_groups(void **state)
{
	const struct perm_acl_entry acl[] = {
		{PERM_ACL_USER_OBJ, 0, 7},
		{PERM_ACL_GROUP_OBJ, 0, 7},
		{PERM_ACL_MASK, 0, 4},
		{PERM_ACL_OTHER, 0, 7},
	};
	struct perm_ident member = {2000, 50, 0, NULL};
	struct stat st = obj(0747, 500, 50);

	(void)state;
	assert_true(perm_acl_allows(acl, 4, &st, &member, PERM_R));
	/* the mask takes W away, and other's rwx is not a fallback */
	assert_false(perm_acl_allows(acl, 4, &st, &member, PERM_W));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mode_bits),
		cmocka_unit_test(acl_named_user_is_masked),
		cmocka_unit_test(acl_one_group_entry_must_grant_all),
		cmocka_unit_test(acl_mask_bounds_groups),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
