/* Ops shared by the fake plugins the loader tests load. Each fake plugin
 * is one .c file that includes this and defines its descriptor. */
#ifndef FAKE_OPS_H
#define FAKE_OPS_H

#include <stdio.h>
#include <string.h>

#include "taskbox/provider.h"

struct fake_instance {
	const struct taskbox_host *host;
};

/* Accepts any settings object except one mentioning "fail", which it
 * rejects naming the setting, as a real plugin would. */
static int fake_init(const struct taskbox_host *host, const char *settings,
                     void **instance, char *errbuf, size_t errlen)
{
	struct fake_instance *fi;

	if (!settings || settings[0] != '{') {
		snprintf(errbuf, errlen, "settings: must be a JSON object");
		return TASKBOX_E_INVALID;
	}
	if (strstr(settings, "\"fail\"")) {
		snprintf(errbuf, errlen, "settings.fail: unknown setting");
		return TASKBOX_E_INVALID;
	}
	fi = (struct fake_instance *)host->alloc(sizeof *fi);
	if (!fi) {
		snprintf(errbuf, errlen, "out of memory");
		return TASKBOX_E_NOMEM;
	}
	fi->host = host;
	*instance = fi;
	return TASKBOX_OK;
}

static void fake_fini(void *instance)
{
	struct fake_instance *fi = (struct fake_instance *)instance;

	fi->host->free(fi);
}

static int fake_create(void *instance, const struct taskbox_create_req *req,
                       char *id, char *errbuf, size_t errlen)
{
	(void)instance;
	(void)req;
	(void)errbuf;
	(void)errlen;
	snprintf(id, TASKBOX_SANDBOX_ID_MAX, "fake-1");
	return TASKBOX_OK;
}

static int fake_connect(void *instance, const char *sandbox_id, void **conn,
                        char *errbuf, size_t errlen)
{
	if (strcmp(sandbox_id, "fake-1") != 0) {
		snprintf(errbuf, errlen, "no sandbox %s", sandbox_id);
		return TASKBOX_E_NOT_FOUND;
	}
	*conn = instance;
	return TASKBOX_OK;
}

static void fake_close(void *conn)
{
	(void)conn;
}

/* Writes argv joined by spaces to stdout, through the host's allocator. */
static int fake_exec(void *conn, const struct taskbox_exec_req *req,
                     struct taskbox_exec_result *res, char *errbuf,
                     size_t errlen)
{
	struct fake_instance *fi = (struct fake_instance *)conn;
	size_t len = 0;

	for (size_t i = 0; req->argv[i]; i++)
		len += strlen(req->argv[i]) + 1;
	res->out.data = (unsigned char *)fi->host->alloc(len ? len : 1);
	if (!res->out.data) {
		snprintf(errbuf, errlen, "out of memory");
		return TASKBOX_E_NOMEM;
	}
	for (size_t i = 0; req->argv[i]; i++) {
		size_t n = strlen(req->argv[i]);
		if (i)
			res->out.data[res->out.len++] = ' ';
		memcpy(res->out.data + res->out.len, req->argv[i], n);
		res->out.len += n;
	}
	res->exit_code = 0;
	return TASKBOX_OK;
}

static int fake_read_file(void *conn, const char *path, uint64_t offset,
                          size_t length, struct taskbox_buf *data,
                          uint64_t *file_size, char *errbuf, size_t errlen)
{
	(void)conn;
	(void)offset;
	(void)length;
	(void)data;
	*file_size = 0;
	snprintf(errbuf, errlen, "no file %s", path);
	return TASKBOX_E_NOT_FOUND;
}

static int fake_destroy(void *instance, const char *sandbox_id, char *errbuf,
                        size_t errlen)
{
	(void)instance;
	snprintf(errbuf, errlen, "no sandbox %s", sandbox_id);
	return TASKBOX_E_NOT_FOUND;
}

static int fake_renew(void *conn, uint32_t lifetime_s, char *errbuf,
                      size_t errlen)
{
	(void)conn;
	(void)lifetime_s;
	(void)errbuf;
	(void)errlen;
	return TASKBOX_OK;
}

#define FAKE_OPS                                                               \
	{                                                                      \
		fake_init, fake_fini, fake_create, fake_connect, fake_close,   \
		    fake_exec, fake_read_file, fake_destroy, NULL, fake_renew  \
	}

#endif /* FAKE_OPS_H */
