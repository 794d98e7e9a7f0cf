/* Quotas per principal (the config's "limits"): how many live sandboxes it
 * owns, counted from the providers' own listing so that every replica
 * counts the same, and the longest lifetime it may ask for. */
#ifndef TB_QUOTA_H
#define TB_QUOTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tb_config_limits;
struct tb_principal;

/* Sets the limits the rule reads (borrowed until the next call; NULL:
 * none). Call before serving. */
void tb_quota_set(const struct tb_config_limits *limits);

/* A create admitted by tb_quota_admit; pass it to tb_quota_done. */
struct tb_quota_ticket {
	int stripe; /* the lock held, or -1 */
};

/* Admits a create by who asking for *lifetime_s (given: asked explicitly;
 * else the default, lowered to the principal's cap). Returns 0 with the
 * principal's create lock held in t (one create per principal at a time
 * in this process, so that a count and its create are not split): the
 * caller creates, then calls tb_quota_done. Returns -1 with a message
 * naming the limit, the principal's count and the principal when a limit
 * refuses it, or when the sandboxes cannot be counted (fail closed). */
int tb_quota_admit(const struct tb_principal *who, uint32_t *lifetime_s,
                   bool given, struct tb_quota_ticket *t, char *err,
                   size_t errlen);

/* Releases what tb_quota_admit held. */
void tb_quota_done(struct tb_quota_ticket *t);

#endif /* TB_QUOTA_H */
