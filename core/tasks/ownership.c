/* Whose sandbox (see ownership.h). */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/principal.h"
#include "host/provider_stats.h"
#include "tasks/ownership.h"

bool tb_owner_is_admin(const struct tb_principal *who)
{
	return who && (who->scopes & TB_SCOPE_ADMIN);
}

bool tb_owner_may_reach(const struct tb_principal *who, const char *owner)
{
	if (tb_owner_is_admin(who))
		return true;
	return who && owner && owner[0] && strcmp(who->name, owner) == 0;
}

int tb_box_describe(struct tb_box *box, struct taskbox_sandbox_info *info,
                    char *err, size_t errlen)
{
	char perr[TASKBOX_ERRBUF_SIZE] = "";
	int rc;

	memset(info, 0, sizeof *info);
	info->struct_size = sizeof *info;
	if (!box->inst->plugin->describe) {
		snprintf(info->id, sizeof info->id, "%s", box->ref.native);
		return TASKBOX_OK;
	}
	uint64_t t0 = tb_provider_call_start();
	rc = box->inst->plugin->describe(box->conn, info, perr, sizeof perr);
	tb_provider_call_end(TB_POP_DESCRIBE, t0, rc);
	info->id[sizeof info->id - 1] = '\0';
	info->owner[sizeof info->owner - 1] = '\0';
	if (rc == TASKBOX_E_NOT_FOUND)
		tb_box_not_found(box, err, errlen);
	else if (rc != TASKBOX_OK)
		snprintf(err, errlen, "sandbox %s: describe: %s (%s)", box->id,
		         tb_status_text(rc),
		         perr[0] ? perr : "no detail from the provider");
	return rc;
}

int tb_box_check_owner(struct tb_box *box, const struct tb_principal *who,
                       bool *foreign, char *err, size_t errlen)
{
	struct taskbox_sandbox_info info;
	int rc;

	if (foreign)
		*foreign = false;
	if (tb_owner_is_admin(who))
		return TASKBOX_OK;
	rc = tb_box_describe(box, &info, err, errlen);
	if (rc == TASKBOX_OK && !tb_owner_may_reach(who, info.owner)) {
		if (foreign)
			*foreign = true;
		tb_box_not_found(box, err, errlen);
		rc = TASKBOX_E_NOT_FOUND;
	}
	if (rc != TASKBOX_OK)
		tb_box_close(box);
	return rc;
}

int tb_box_open_as(const char *sandbox_id, const char *field,
                   const struct tb_principal *who, struct tb_box *box,
                   char *err, size_t errlen)
{
	int rc = tb_box_open(sandbox_id, field, box, err, errlen);

	return rc == TASKBOX_OK
	           ? tb_box_check_owner(box, who, NULL, err, errlen)
	           : rc;
}

struct list_filter {
	const char *owner;
	int64_t now;
	taskbox_list_fn each;
	void *arg;
};

/* Passes on the live sandboxes of the owner asked for (all when none). */
static int filtered(void *arg, const struct taskbox_sandbox_info *info)
{
	struct list_filter *f = arg;

	if (f->owner && strncmp(info->owner, f->owner, sizeof info->owner))
		return 0;
	if (info->expires_s > 0 && info->expires_s <= f->now)
		return 0; /* expired: on its way out, counted and listed no more
		           */
	return f->each(f->arg, info);
}

int tb_instance_list(const struct tb_instance *inst, const char *owner,
                     taskbox_list_fn each, void *arg, char *err, size_t errlen)
{
	struct list_filter f = {owner, (int64_t)time(NULL), each, arg};
	char perr[TASKBOX_ERRBUF_SIZE] = "";
	int rc;

	if (!inst->plugin->list) {
		snprintf(err, errlen,
		         "provider instance %s cannot list its sandboxes (its "
		         "plugin %s offers no list, an op of ABI 1.5)",
		         inst->name, inst->plugin->name);
		return TASKBOX_E_UNSUPPORTED;
	}
	uint64_t t0 = tb_provider_call_start();
	rc = inst->plugin->list(inst->handle, owner, filtered, &f, perr,
	                        sizeof perr);
	tb_provider_call_end(TB_POP_LIST, t0, rc);
	if (rc != TASKBOX_OK)
		snprintf(err, errlen, "provider instance %s: list: %s (%s)",
		         inst->name, tb_status_text(rc),
		         perr[0] ? perr : "no detail from the provider");
	return rc;
}
