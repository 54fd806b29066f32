/*
 * verbs_registry_test: vb_windowless_provider (common/verbs.h) names the
 * provider a configuration's rdma.provider may open that has no memory
 * windows (as the verbs provider built against illumos's OFED libibverbs),
 * and nothing when every such provider has them: "auto" and device names may
 * open any provider, a provider's name only that one. The providers built
 * here all have windows.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "common/verbs.h"

static int fake_alloc_mw(struct vb_pd *pd, struct vb_mw **out)
{
	return -1;
}

static const struct vb_ops with = {.name = "with", .alloc_mw = fake_alloc_mw};
static const struct vb_ops without = {.name = "without"};

static void names_the_windowless(void **state)
{
	const struct vb_ops *const both[] = {&without, &with, NULL};
	const struct vb_ops *const good[] = {&with, NULL};

	assert_ptr_equal(vb_windowless_provider(both, "auto"), &without);
	assert_ptr_equal(vb_windowless_provider(both, NULL), &without);
	assert_ptr_equal(vb_windowless_provider(both, "mlx5_0"), &without);
	assert_ptr_equal(vb_windowless_provider(both, "without"), &without);
	assert_null(vb_windowless_provider(both, "with"));
	assert_null(vb_windowless_provider(good, "auto"));
	assert_null(vb_windowless_provider(good, "mlx5_0"));
}

static void built_providers_have_windows(void **state)
{
	for (size_t i = 0; vb_providers[i]; i++)
		assert_non_null(vb_providers[i]->alloc_mw);
	assert_null(vb_windowless_provider(NULL, "auto"));
	assert_null(vb_windowless_provider(NULL, "soft"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(names_the_windowless),
		cmocka_unit_test(built_providers_have_windows),
	};

	return cmocka_run_group_tests_name("verbs_registry", tests, NULL, NULL);
}
