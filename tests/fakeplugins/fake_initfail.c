/* Passes every load-time check, then refuses every instance at init. */
#include "fake_ops.h"

static int initfail_init(const struct taskbox_host *host, const char *settings,
                         void **instance, char *errbuf, size_t errlen)
{
	(void)host;
	(void)settings;
	(void)instance;
	snprintf(errbuf, errlen, "settings.endpoint: required");
	return TASKBOX_E_INVALID;
}

static const struct taskbox_provider desc = {
    TASKBOX_ABI_MAJOR,
    TASKBOX_ABI_MINOR,
    sizeof(struct taskbox_provider),
    "fake_initfail",
    "1.0",
    "init always fails",
    {initfail_init, fake_fini, fake_create, fake_connect, fake_close, fake_exec,
     fake_read_file, fake_destroy, NULL, NULL},
    0,
    NULL,
    NULL,
    NULL,
};

TASKBOX_PROVIDER_DEFINE(desc)
