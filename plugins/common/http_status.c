/* The mapping of HTTP statuses to ABI codes (http_status.h). */
#include "config.h"

#include "http_status.h"
#include "taskbox/provider.h"

/* The shared table: what a status means to every plugin. */
static int shared_code(long status)
{
	switch (status) {
	case 400:
	case 422:
		return TASKBOX_E_INVALID;
	case 401:
		return TASKBOX_E_AUTH;
	case 403:
		return TASKBOX_E_PERMISSION;
	case 404:
		return TASKBOX_E_NOT_FOUND;
	case 408:
	case 504:
		return TASKBOX_E_TIMEOUT;
	case 410:
		return TASKBOX_E_GONE;
	case 429:
		return TASKBOX_E_RATE_LIMITED;
	default:
		if (status >= 500)
			return TASKBOX_E_UNAVAILABLE;
		return TASKBOX_E_PROTOCOL;
	}
}

int tb_http_status_code(long status,
                        const struct tb_http_status_override *overrides,
                        size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (overrides[i].status == status)
			return overrides[i].code;
	return shared_code(status);
}
