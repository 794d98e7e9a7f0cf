/* Whose sandbox, piece by piece: who reaches which owner, the owner check
 * on an open box (another's is answered as a missing one), listing through
 * a plugin's list, the "limits" section, and quotas counted from the
 * provider's listing (fake_owners keeps its sandboxes in memory). */
#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/principal.h"
#include "host/config_file.h"
#include "host/config_limits.h"
#include "host/loader.h"
#include "host/registry.h"
#include "tasks/box.h"
#include "tasks/ownership.h"
#include "tasks/quota.h"

static char err[4096];
static struct tb_config *cfg;

static struct tb_principal who(const char *name, unsigned scopes)
{
	struct tb_principal p;

	memset(&p, 0, sizeof p);
	cr_assert(tb_principal_set_name(&p, name));
	p.scopes = tb_scopes_close(scopes);
	p.how = TB_AUTH_STATIC;
	return p;
}

static void open_registry(const char *text)
{
	unsetenv("TASKBOX_PLUGIN_PATH");
	cr_assert_eq(
	    tb_loader_init(getenv("TASKBOX_FAKEPLUGIN_DIR"), err, sizeof err),
	    0, "%s", err);
	cfg = tb_config_parse(text, "test", err, sizeof err);
	cr_assert_not_null(cfg, "%s", err);
	cr_assert_eq(tb_registry_open(cfg, err, sizeof err), 0, "%s", err);
	tb_quota_set(cfg->limits);
}

static void close_registry(void)
{
	tb_quota_set(NULL);
	tb_registry_close();
	tb_config_free(cfg);
	cfg = NULL;
	tb_loader_exit();
}

/* Makes a sandbox on instance inst owned by owner; its full id into id. */
static void make(const char *inst, const char *owner, char *id)
{
	const struct tb_instance *in = tb_registry_find(inst);
	struct taskbox_create_req req;
	char native[TASKBOX_SANDBOX_ID_MAX];

	memset(&req, 0, sizeof req);
	req.struct_size = sizeof req;
	req.owner = owner;
	cr_assert_eq(
	    in->plugin->ops.create(in->handle, &req, native, err, sizeof err),
	    TASKBOX_OK, "%s", err);
	cr_assert_eq(
	    tb_sandbox_ref_format(inst, native, id, TB_SANDBOX_REF_MAX), 0);
}

Test(owner, who_reaches_what)
{
	struct tb_principal alice = who("alice", TB_SCOPE_RUN);
	struct tb_principal reader = who("alice", TB_SCOPE_READ);
	struct tb_principal root = who("root", TB_SCOPE_ADMIN);

	cr_assert(tb_owner_may_reach(&alice, "alice"));
	cr_assert(tb_owner_may_reach(&reader, "alice"));
	cr_assert_not(tb_owner_may_reach(&alice, "bob"));
	cr_assert_not(tb_owner_may_reach(&alice, "alice2"));
	cr_assert_not(tb_owner_may_reach(&alice, "alic"));
	cr_assert_not(tb_owner_may_reach(&alice, ""), "no owner: admins only");
	cr_assert_not(tb_owner_may_reach(NULL, "alice"));
	cr_assert(tb_owner_may_reach(&root, "bob"));
	cr_assert(tb_owner_may_reach(&root, ""));
	cr_assert(tb_owner_is_admin(&root));
	cr_assert_not(tb_owner_is_admin(&alice));
}

static const char two_instances[] =
    "{\"default\": \"own\", \"providers\": {"
    "\"own\": {\"plugin\": \"fake_owners\"},"
    "\"old\": {\"plugin\": \"fake_good\"}},"
    "\"limits\": {\"max_sandbox_timeout_s\": 600,"
    " \"principals\": {\"bob\": {\"max_sandboxes\": 2},"
    "                  \"carol\": {\"max_sandbox_timeout_s\": 60}}}}";

Test(owner, another_principals_sandbox_is_answered_as_a_missing_one,
     .init = NULL)
{
	struct tb_principal alice = who("alice", TB_SCOPE_RUN);
	struct tb_principal bob = who("bob", TB_SCOPE_RUN);
	struct tb_principal root = who("root", TB_SCOPE_ADMIN);
	char id[TB_SANDBOX_REF_MAX], none[TB_SANDBOX_REF_MAX];
	char theirs[TB_ERR_MAX], missing[TB_ERR_MAX];
	struct tb_box box;
	bool foreign = false;

	open_registry(two_instances);
	make("own", "alice", id);
	snprintf(none, sizeof none, "own:own-999");
	cr_assert_eq(
	    tb_box_open_as(id, "sandbox_id", &alice, &box, err, sizeof err),
	    TASKBOX_OK, "%s", err);
	tb_box_close(&box);
	cr_assert_eq(
	    tb_box_open_as(id, "sandbox_id", &root, &box, err, sizeof err),
	    TASKBOX_OK, "%s", err);
	tb_box_close(&box);
	cr_assert_eq(tb_box_open(id, "sandbox_id", &box, err, sizeof err),
	             TASKBOX_OK);
	cr_assert_eq(
	    tb_box_check_owner(&box, &bob, &foreign, theirs, sizeof theirs),
	    TASKBOX_E_NOT_FOUND);
	cr_assert(foreign);
	cr_assert_null(box.conn, "closed on refusal");
	cr_assert_eq(tb_box_open_as(none, "sandbox_id", &bob, &box, missing,
	                            sizeof missing),
	             TASKBOX_E_NOT_FOUND);
	/* The same words once the ids are one. */
	char *at = strstr(theirs, id);
	cr_assert_not_null(at);
	cr_assert_str_eq(at + strlen(id), strstr(missing, none) + strlen(none));
	cr_assert_eq(at - theirs, strstr(missing, none) - missing);
	close_registry();
}

Test(owner, an_old_plugins_sandboxes_are_reached_by_admins_only)
{
	struct tb_principal alice = who("alice", TB_SCOPE_RUN);
	struct tb_principal root = who("root", TB_SCOPE_ADMIN);
	struct tb_box box;

	open_registry(two_instances);
	cr_assert_eq(tb_box_open_as("old:fake-1", "sandbox_id", &alice, &box,
	                            err, sizeof err),
	             TASKBOX_E_NOT_FOUND, "%s", err);
	cr_assert_eq(tb_box_open_as("old:fake-1", "sandbox_id", &root, &box,
	                            err, sizeof err),
	             TASKBOX_OK, "%s", err);
	tb_box_close(&box);
	close_registry();
}

static int count_cb(void *arg, const struct taskbox_sandbox_info *info)
{
	(void)info;
	++*(int *)arg;
	return 0;
}

static int stop_cb(void *arg, const struct taskbox_sandbox_info *info)
{
	(void)info;
	++*(int *)arg;
	return 1;
}

Test(owner, listing_filters_by_owner_and_names_an_instance_that_cannot)
{
	char id[TB_SANDBOX_REF_MAX];
	int n = 0;

	open_registry(two_instances);
	make("own", "alice", id);
	make("own", "alice", id);
	make("own", "bob", id);
	make("own", NULL, id);
	cr_assert_eq(tb_instance_list(tb_registry_find("own"), "alice",
	                              count_cb, &n, err, sizeof err),
	             TASKBOX_OK);
	cr_assert_eq(n, 2);
	n = 0;
	cr_assert_eq(tb_instance_list(tb_registry_find("own"), NULL, count_cb,
	                              &n, err, sizeof err),
	             TASKBOX_OK);
	cr_assert_eq(n, 4);
	n = 0;
	tb_instance_list(tb_registry_find("own"), NULL, stop_cb, &n, err,
	                 sizeof err);
	cr_assert_eq(n, 1, "each's nonzero stops the listing");
	cr_assert_eq(tb_instance_list(tb_registry_find("old"), NULL, count_cb,
	                              &n, err, sizeof err),
	             TASKBOX_E_UNSUPPORTED);
	cr_assert(strstr(err, "old") && strstr(err, "offers no list"), "%s",
	          err);
	close_registry();
}

Test(limits, defaults_overrides_and_rules)
{
	struct tb_config *c =
	    tb_config_parse("{\"default\": \"x\", \"providers\": {\"x\": "
	                    "{\"plugin\": \"local\"}},"
	                    "\"limits\": {\"max_sandboxes\": 5,"
	                    " \"principals\": {\"bob\": {\"max_sandboxes\": 1},"
	                    " \"carol\": {\"max_sandbox_timeout_s\": 60}}}}",
	                    "t", err, sizeof err);
	cr_assert_not_null(c, "%s", err);
	struct tb_limit_set d = tb_limits_for(c->limits, "alice");
	cr_assert_eq(d.max_sandboxes, 5);
	cr_assert_eq(d.max_sandbox_timeout_s, TB_LIMIT_NONE);
	cr_assert_eq(tb_limits_for(c->limits, "bob").max_sandboxes, 1);
	struct tb_limit_set carol = tb_limits_for(c->limits, "carol");
	cr_assert_eq(carol.max_sandboxes, 5, "unset fields keep the default");
	cr_assert_eq(carol.max_sandbox_timeout_s, 60);
	tb_config_free(c);
	cr_assert_eq(tb_limits_for(NULL, "x").max_sandboxes, TB_LIMIT_NONE);

	static const char *const bad[][2] = {
	    {"{\"limits\": 3}", "$.limits: must be an object"},
	    {"{\"limits\": {\"max_sandboxes\": -1}}", "max_sandboxes: must be"},
	    {"{\"limits\": {\"max_sandbox_timeout_s\": 0}}",
	     "max_sandbox_timeout_s: must be"},
	    {"{\"limits\": {\"max_sandbox_timeout_s\": 86401}}",
	     "max_sandbox_timeout_s: must be"},
	    {"{\"limits\": {\"max_sandboxes\": \"2\"}}", "max_sandboxes"},
	    {"{\"limits\": {\"maxsandboxes\": 2}}", "maxsandboxes"},
	    {"{\"limits\": {\"principals\": []}}", "$.limits.principals"},
	    {"{\"limits\": {\"principals\": {\"bob\": {\"principals\": {}}}}}",
	     "$.limits.principals.bob"},
	    {"{\"limits\": {\"principals\": {\"bob\": 1}}}",
	     "$.limits.principals.bob: must be an object"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cr_assert_null(tb_config_parse(bad[i][0], "t", err, sizeof err),
		               "accepted %s", bad[i][0]);
		cr_assert(strstr(err, bad[i][1]), "%s: want \"%s\" in %s",
		          bad[i][0], bad[i][1], err);
	}
}

Test(quota, lifetimes_past_the_cap_are_refused_or_lowered)
{
	struct tb_principal alice = who("alice", TB_SCOPE_RUN);
	struct tb_principal carol = who("carol", TB_SCOPE_RUN);
	struct tb_quota_ticket t;
	uint32_t life;

	open_registry(two_instances);
	life = 601;
	cr_assert_eq(tb_quota_admit(&alice, &life, true, &t, err, sizeof err),
	             -1);
	cr_assert(strstr(err, "timeout: 601 s is past max_sandbox_timeout_s, "
	                      "600 s for principal alice"),
	          "%s", err);
	life = 600;
	cr_assert_eq(tb_quota_admit(&alice, &life, true, &t, err, sizeof err),
	             0, "%s", err);
	tb_quota_done(&t);
	life = 3600;
	cr_assert_eq(tb_quota_admit(&carol, &life, false, &t, err, sizeof err),
	             0);
	cr_assert_eq(life, 60, "a default past the cap is lowered to it");
	tb_quota_done(&t);
	close_registry();
}

Test(quota, counts_from_the_listing_and_fails_closed_when_it_cannot)
{
	struct tb_principal bob = who("bob", TB_SCOPE_RUN);
	struct tb_quota_ticket t;
	char id[TB_SANDBOX_REF_MAX];
	uint32_t life = 60;

	open_registry("{\"default\": \"own\", \"providers\": {"
	              "\"own\": {\"plugin\": \"fake_owners\"}},"
	              "\"limits\": {\"principals\": {\"bob\": "
	              "{\"max_sandboxes\": 2}}}}");
	make("own", "bob", id);
	make("own", "alice", id);
	cr_assert_eq(tb_quota_admit(&bob, &life, true, &t, err, sizeof err), 0,
	             "%s", err);
	tb_quota_done(&t);
	make("own", "bob", id);
	cr_assert_eq(tb_quota_admit(&bob, &life, true, &t, err, sizeof err),
	             -1);
	cr_assert_str_eq(err, "max_sandboxes: principal bob owns 2 live "
	                      "sandboxes, its limit is 2; kill_sandbox one "
	                      "first");
	/* Destroyed: counted no more. */
	const struct tb_instance *in = tb_registry_find("own");
	cr_assert_eq(in->plugin->ops.destroy(in->handle, strchr(id, ':') + 1,
	                                     err, sizeof err),
	             TASKBOX_OK);
	cr_assert_eq(tb_quota_admit(&bob, &life, true, &t, err, sizeof err), 0,
	             "%s", err);
	tb_quota_done(&t);
	close_registry();

	open_registry(two_instances);
	cr_assert_eq(tb_quota_admit(&bob, &life, true, &t, err, sizeof err),
	             -1);
	cr_assert(strstr(err, "max_sandboxes: bob's sandboxes cannot be "
	                      "counted, so none is created") &&
	              strstr(err, "old"),
	          "%s", err);
	close_registry();
}
