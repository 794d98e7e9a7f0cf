/* A call's sandbox opened for its principal: the owner check of
 * tasks/ownership.h, with a refusal marked on the call for the audit
 * trail. */
#include "config.h"

#include "tasks/ownership.h"
#include "tools/tool.h"

int tb_call_connect_box(tb_call *call, struct tb_box *box, char *err,
                        size_t errlen)
{
	bool foreign = false;
	int rc = tb_box_connect(box, err, errlen);

	if (rc != TASKBOX_OK)
		return rc;
	rc = tb_box_check_owner(box, call->principal, &foreign, err, errlen);
	if (foreign)
		call->refusal = "not_owner";
	return rc;
}

int tb_call_open_box(tb_call *call, const char *sandbox_id, const char *field,
                     struct tb_box *box, char *err, size_t errlen)
{
	if (tb_box_resolve(sandbox_id, field, box, err, errlen) < 0)
		return TASKBOX_E_INVALID;
	return tb_call_connect_box(call, box, err, errlen);
}
