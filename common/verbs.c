/* verbs.c: open a device through the provider registry; names for statuses and events. */
#include <string.h>

#include "common/base/log.h"
#include "verbs.h"

/* Try one provider; -ENODEV when it has no such device (or no device at all). */
static int try_open(const struct vb_ops *ops, const char *name, struct vb_device **out)
{
	int rc = ops->open(name, out);

	if (rc == 0)
		log_info("opened %s device %s", ops->name, (*out)->name);
	return rc;
}

int vb_open(const char *spec, struct vb_device **out)
{
	int rc = -ENODEV;

	*out = NULL;
	if (spec == NULL || strcmp(spec, "auto") == 0) {
		for (size_t i = 0; vb_providers[i]; i++)
			if ((rc = try_open(vb_providers[i], NULL, out)) == 0)
				return 0;
		return rc;
	}
	for (size_t i = 0; vb_providers[i]; i++) {
		if (strcmp(spec, vb_providers[i]->name) == 0)
			return try_open(vb_providers[i], NULL, out);
	}
	for (size_t i = 0; vb_providers[i]; i++) {
		rc = try_open(vb_providers[i], spec, out);
		if (rc != -ENODEV)
			return rc;
	}
	return -ENODEV;
}

/* See verbs.h: a provider's name means it alone; "auto" or a device name,
 * any of them. */
const struct vb_ops *vb_windowless_provider(const struct vb_ops *const *list, const char *spec)
{
	int named = 0;

	list = list ? list : vb_providers;
	for (size_t i = 0; spec && list[i]; i++)
		named |= strcmp(spec, list[i]->name) == 0;
	for (size_t i = 0; list[i]; i++)
		if ((!named || strcmp(spec, list[i]->name) == 0) && list[i]->alloc_mw == NULL)
			return list[i];
	return NULL;
}

void vb_close(struct vb_device *dev)
{
	if (dev)
		dev->ops->close(dev);
}

const char *vb_wc_status_str(enum vb_wc_status status)
{
	static const char *const names[] = {
		[VB_WC_SUCCESS] = "success",
		[VB_WC_LOC_LEN_ERR] = "local length error",
		[VB_WC_LOC_PROT_ERR] = "local protection error",
		[VB_WC_REM_ACCESS_ERR] = "remote access error",
		[VB_WC_REM_INV_REQ_ERR] = "remote invalid request",
		[VB_WC_REM_OP_ERR] = "remote operation error",
		[VB_WC_RNR_RETRY_EXC_ERR] = "receiver not ready, retries exceeded",
		[VB_WC_RETRY_EXC_ERR] = "transport retries exceeded",
		[VB_WC_WR_FLUSH_ERR] = "flushed",
		[VB_WC_MW_BIND_ERR] = "memory window bind error",
		[VB_WC_GENERAL_ERR] = "general error",
	};
	return (unsigned)status < sizeof(names) / sizeof(names[0]) && names[status]
		       ? names[status]
		       : "unknown status";
}

const char *vb_cm_event_str(enum vb_cm_event_type type)
{
	static const char *const names[] = {
		[VB_CM_CONNECT_REQUEST] = "connect request",
		[VB_CM_ESTABLISHED] = "established",
		[VB_CM_REJECTED] = "rejected",
		[VB_CM_UNREACHABLE] = "unreachable",
		[VB_CM_DISCONNECTED] = "disconnected",
		[VB_CM_ERROR] = "error",
	};
	return (unsigned)type < sizeof(names) / sizeof(names[0]) ? names[type] : "unknown event";
}
