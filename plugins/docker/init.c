/* docker provider: the engine's init (HostConfig.Init), which reaps the
 * orphans of a sandbox's commands. The init setting asks for it always
 * (true), never (false) or while the engine has one ("auto"). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "docker.h"

int tb_dk_parse_init(json_t *v, enum tb_dk_init *out)
{
	if (!v)
		*out = TB_DK_INIT_AUTO;
	else if (json_is_true(v))
		*out = TB_DK_INIT_ON;
	else if (json_is_false(v))
		*out = TB_DK_INIT_OFF;
	else if (json_is_string(v) && !strcmp(json_string_value(v), "auto"))
		*out = TB_DK_INIT_AUTO;
	else
		return TASKBOX_E_INVALID;
	return TASKBOX_OK;
}

int tb_dk_want_init(struct tb_dk *dk)
{
	int absent;

	if (dk->init != TB_DK_INIT_AUTO)
		return dk->init == TB_DK_INIT_ON;
	pthread_mutex_lock(&dk->lock);
	absent = dk->init_absent;
	pthread_mutex_unlock(&dk->lock);
	return !absent;
}

int tb_dk_init_missing(const char *msg)
{
	/* podman: "container-init binary not found on the host: stat
	 * /usr/libexec/podman/catatonit: ..."; Docker: "exec: \"docker-init\":
	 * executable file not found in $PATH". */
	return strcasestr(msg, "container-init") ||
	       strcasestr(msg, "docker-init") ||
	       strcasestr(msg, "init binary") || strcasestr(msg, "catatonit") ||
	       strcasestr(msg, "init_path");
}

int tb_dk_init_refused(struct tb_dk *dk, char *errbuf, size_t errlen)
{
	char engine[TASKBOX_ERRBUF_SIZE], line[TASKBOX_ERRBUF_SIZE + 256];
	int first;

	snprintf(engine, sizeof(engine), "%s", errbuf);
	if (dk->init == TB_DK_INIT_ON) {
		tb_dk_fail(TASKBOX_E_UNAVAILABLE, errbuf, errlen,
		           "the engine at %s has no init binary (%s); the "
		           "docker setting init is true: install the engine's "
		           "init (podman: catatonit, Docker: docker-init) or "
		           "set init to \"auto\" or false",
		           dk->host_url, engine);
		return 0;
	}
	pthread_mutex_lock(&dk->lock);
	first = !dk->init_absent;
	dk->init_absent = 1;
	pthread_mutex_unlock(&dk->lock);
	if (first && dk->host && dk->host->log) {
		snprintf(line, sizeof(line),
		         "the engine at %s has no init binary (%s): sandboxes "
		         "are made without one from now on (setting init "
		         "\"auto\"); orphans of their commands stay zombies",
		         dk->host_url, engine);
		dk->host->log(TASKBOX_LOG_WARN, TB_DK_NAME, line);
	}
	return 1;
}
