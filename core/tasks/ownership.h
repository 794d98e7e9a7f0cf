/* Whose sandbox: the tasks layer's rule that a principal reaches only the
 * sandboxes it owns (an admin reaches every one), read from what the
 * provider recorded at create (ABI 1.5 describe), never from this
 * process's memory. A sandbox that is not the caller's is answered exactly
 * as one that does not exist. */
#ifndef TB_OWNERSHIP_H
#define TB_OWNERSHIP_H

#include <stdbool.h>
#include <stddef.h>

#include "tasks/box.h"

struct tb_principal;

/* Whether who reaches a sandbox recorded as owner's ("" for none: made
 * before owners were recorded, or by a plugin that cannot record one). */
bool tb_owner_may_reach(const struct tb_principal *who, const char *owner);

/* Whether who is an admin (reaches every sandbox without asking). */
bool tb_owner_is_admin(const struct tb_principal *who);

/* Fills info for an open box through the plugin's describe; a plugin
 * without it gives id only and owner "". Returns the provider's status,
 * with a message naming the sandbox on failure. */
int tb_box_describe(struct tb_box *box, struct taskbox_sandbox_info *info,
                    char *err, size_t errlen);

/* Checks an open box against who. Returns TASKBOX_OK when who may reach
 * it; else closes the box and returns TASKBOX_E_NOT_FOUND with
 * tb_box_not_found's message (or the provider's status when describe
 * failed), and sets *foreign (when not NULL) when the sandbox exists but
 * is someone else's. */
int tb_box_check_owner(struct tb_box *box, const struct tb_principal *who,
                       bool *foreign, char *err, size_t errlen);

/* Resolves, connects and checks the owner: tb_box_open for a call made by
 * who. Returns like tb_box_open. */
int tb_box_open_as(const char *sandbox_id, const char *field,
                   const struct tb_principal *who, struct tb_box *box,
                   char *err, size_t errlen);

/* Lists inst's live sandboxes through the plugin's list (owner NULL:
 * every owner's; else only owner's, checked here again; one whose expiry
 * has passed is left out), calling each for each. Returns the provider's status
 * (TASKBOX_E_UNSUPPORTED when the plugin cannot list), with a message naming
 * the instance on failure. */
int tb_instance_list(const struct tb_instance *inst, const char *owner,
                     taskbox_list_fn each, void *arg, char *err, size_t errlen);

#endif /* TB_OWNERSHIP_H */
