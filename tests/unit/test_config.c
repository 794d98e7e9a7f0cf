/* The config validator: every rule, with the JSON path in each message,
 * and the lookup order. */
#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/config_file.h"

static char err[8192];

/* Parses text expecting failure; every line of want must appear. */
static void expect_problems(const char *text, const char *const *want)
{
	struct tb_config *cfg =
	    tb_config_parse(text, "t.json", err, sizeof err);

	cr_assert_null(cfg, "accepted: %s", text);
	for (; *want; want++)
		cr_assert(strstr(err, *want), "missing \"%s\" in:\n%s", *want,
		          err);
}

#define PROBLEMS(text, ...)                                                    \
	do {                                                                   \
		static const char *const want_[] = {__VA_ARGS__, NULL};        \
		expect_problems(text, want_);                                  \
	} while (0)

Test(config, accepts_the_documented_shape)
{
	struct tb_config *cfg;

	setenv("TB_TEST_TOKEN", "s3cret", 1);
	unsetenv("TB_TEST_UNSET");
	cfg = tb_config_parse(
	    "{\"default\": \"work\", \"providers\": {"
	    "\"work\": {\"plugin\": \"local\", \"settings\": {}},"
	    "\"box\": {\"plugin\": \"docker\", \"settings\": {\"image\": "
	    "\"python:3.12-slim\", \"host\": "
	    "\"unix:///var/run/docker.sock\"}}},"
	    "\"mask\": {\"values_from_env\": [\"TB_TEST_TOKEN\", "
	    "\"TB_TEST_UNSET\"]}}",
	    "t.json", err, sizeof err);
	cr_assert_not_null(cfg, "%s", err);
	cr_assert_str_eq(cfg->source, "t.json");
	cr_assert_str_eq(cfg->default_name, "work");
	cr_assert_eq(cfg->n_instances, 2);
	cr_assert_str_eq(cfg->instances[0].name, "work");
	cr_assert_str_eq(cfg->instances[0].plugin, "local");
	cr_assert_str_eq(cfg->instances[0].settings_json, "{}");
	cr_assert_str_eq(cfg->instances[1].name, "box");
	cr_assert_str_eq(cfg->instances[1].settings_json,
	                 "{\"host\":\"unix:///var/run/docker.sock\","
	                 "\"image\":\"python:3.12-slim\"}");
	cr_assert_eq(cfg->n_mask_values, 1, "unset variables mask nothing");
	cr_assert_str_eq(cfg->mask_values[0], "s3cret");
	tb_config_free(cfg);
}

Test(config, settings_default_to_an_empty_object)
{
	struct tb_config *cfg = tb_config_parse(
	    "{\"default\": \"a\", \"providers\": {\"a\": {\"plugin\": \"x\"}}}",
	    "t", err, sizeof err);

	cr_assert_not_null(cfg, "%s", err);
	cr_assert_str_eq(cfg->instances[0].settings_json, "{}");
	cr_assert_eq(cfg->n_mask_values, 0);
	tb_config_free(cfg);
}

Test(config, invalid_json_names_file_line_and_column)
{
	PROBLEMS("{\n  \"default\": ,\n}", "t.json:2:14: invalid JSON: ");
}

Test(config, duplicate_keys_are_rejected)
{
	PROBLEMS("{\"default\": \"a\", \"default\": \"a\", \"providers\": {}}",
	         "t.json:1:", "duplicate");
}

Test(config, root_must_be_an_object)
{
	PROBLEMS("[1]", "$: must be an object, not an array");
	PROBLEMS("\"x\"", "$: must be an object, not a string");
}

Test(config, unknown_keys_at_the_root)
{
	PROBLEMS(
	    "{\"default\": \"a\", \"providers\": {\"a\": {\"plugin\": "
	    "\"x\"}}, \"quotas\": {}}",
	    "$.quotas: unknown key (allowed: default, providers, mask, http, "
	    "audit, limits)");
}

Test(config, audit_section)
{
	struct tb_config *cfg = tb_config_parse(
	    "{\"default\": \"a\", \"providers\": {\"a\": {\"plugin\": "
	    "\"x\"}}, \"audit\": {\"path\": \"/var/log/tb.log\", "
	    "\"reads\": true}}",
	    "t.json", err, sizeof err);

	cr_assert_not_null(cfg, "%s", err);
	cr_assert_str_eq(cfg->audit_path, "/var/log/tb.log");
	cr_assert(cfg->audit_reads);
	tb_config_free(cfg);
	PROBLEMS("{\"default\": \"a\", \"providers\": {\"a\": {\"plugin\": "
	         "\"x\"}}, \"audit\": {\"reads\": 1, \"file\": \"x\"}}",
	         "$.audit.path: required: a file to append records to, or "
	         "\"-\" for stderr",
	         "$.audit.reads: must be true or false, not a number",
	         "$.audit.file: unknown key (allowed: path, reads)");
	PROBLEMS("{\"default\": \"a\", \"providers\": {\"a\": {\"plugin\": "
	         "\"x\"}}, \"audit\": \"/tmp/x\"}",
	         "$.audit: must be an object, not a string");
}

Test(config, keys_starting_with_two_slashes_are_comments)
{
	struct tb_config *cfg = tb_config_parse(
	    "{\"//\": \"what this file is\", \"default\": \"a\", "
	    "\"providers\": {\"a\": {\"// why\": [\"one\", \"two\"], "
	    "\"plugin\": \"x\"}}, \"http\": {\"//\": \"port\", "
	    "\"listen\": \"8414\"}, \"mask\": {\"//\": \"\"}}",
	    "t.json", err, sizeof err);

	cr_assert_not_null(cfg, "%s", err);
	cr_assert_str_eq(cfg->instances[0].plugin, "x");
	tb_config_free(cfg);
}

Test(config, a_comment_holds_text_only)
{
	PROBLEMS("{\"//\": 1, \"default\": \"a\", \"providers\": {\"a\": "
	         "{\"plugin\": \"x\", \"// n\": [\"ok\", {}]}}}",
	         "$[\"//\"]: a comment (a key starting with //) must be a "
	         "string or an array of strings",
	         "$.providers.a[\"// n\"]: a comment");
}

Test(config, unknown_keys_in_an_instance)
{
	PROBLEMS("{\"default\": \"a\", \"providers\": {\"a\": {\"plugin\": "
	         "\"x\", \"token\": \"abc\"}}}",
	         "$.providers.a.token: unknown key (allowed: plugin, settings, "
	         "supervisor, watches)");
}

Test(config, unknown_keys_in_mask)
{
	PROBLEMS("{\"default\": \"a\", \"providers\": {\"a\": {\"plugin\": "
	         "\"x\"}}, \"mask\": {\"values\": [\"abc\"]}}",
	         "$.mask.values: unknown key (allowed: values_from_env)");
}

Test(config, odd_keys_are_quoted_in_paths)
{
	PROBLEMS("{\"default\": \"a\", \"providers\": {\"a\": {\"plugin\": "
	         "\"x\"}}, \"my key\": 1}",
	         "$[\"my key\"]: unknown key");
}

Test(config, default_is_required)
{
	PROBLEMS("{\"providers\": {\"a\": {\"plugin\": \"x\"}}}",
	         "$.default: required");
}

Test(config, default_must_be_a_string)
{
	PROBLEMS("{\"default\": 1, \"providers\": {\"a\": {\"plugin\": "
	         "\"x\"}}}",
	         "$.default: must be a string, not a number");
}

Test(config, default_must_name_an_instance)
{
	PROBLEMS("{\"default\": \"b\", \"providers\": {\"a\": {\"plugin\": "
	         "\"x\"}}}",
	         "$.default: must name an instance under $.providers (\"b\" "
	         "is not one)");
}

Test(config, providers_is_required_and_an_object)
{
	PROBLEMS("{\"default\": \"a\"}", "$.providers: required");
	PROBLEMS("{\"default\": \"a\", \"providers\": []}",
	         "$.providers: must be an object, not an array");
	PROBLEMS("{\"default\": \"a\", \"providers\": {}}",
	         "$.providers: must name at least one instance");
}

Test(config, instance_names_follow_the_rule)
{
	PROBLEMS("{\"default\": \"Work\", \"providers\": {\"Work\": "
	         "{\"plugin\": \"x\"}}}",
	         "$.providers.Work: instance name must match "
	         "^[a-z][a-z0-9_-]{0,31}$");
	PROBLEMS("{\"default\": \"1a\", \"providers\": {\"1a\": "
	         "{\"plugin\": \"x\"}}}",
	         "$.providers.1a: instance name must match");
	PROBLEMS(
	    "{\"default\": \"a\", \"providers\": {\"a\": {\"plugin\": "
	    "\"x\"}, \"abcdefghijabcdefghijabcdefghijabc\": {\"plugin\": "
	    "\"x\"}}}",
	    "$.providers.abcdefghijabcdefghijabcdefghijabc: instance name");
}

Test(config, instance_names_may_use_dash_and_underscore)
{
	struct tb_config *cfg = tb_config_parse(
	    "{\"default\": \"a-b_c9\", \"providers\": {\"a-b_c9\": "
	    "{\"plugin\": \"x\"}, \"abcdefghijabcdefghijabcdefghijab\": "
	    "{\"plugin\": \"x\"}}}",
	    "t", err, sizeof err);

	cr_assert_not_null(cfg, "%s", err);
	tb_config_free(cfg);
}

Test(config, an_instance_must_be_an_object)
{
	PROBLEMS("{\"default\": \"a\", \"providers\": {\"a\": \"local\"}}",
	         "$.providers.a: must be an object, not a string");
}

Test(config, plugin_is_required_a_string_and_a_name)
{
	PROBLEMS("{\"default\": \"a\", \"providers\": {\"a\": {}}}",
	         "$.providers.a.plugin: required");
	PROBLEMS("{\"default\": \"box\", \"providers\": {\"box\": "
	         "{\"plugin\": 7}}}",
	         "$.providers.box.plugin: must be a string, not a number");
	PROBLEMS("{\"default\": \"a\", \"providers\": {\"a\": {\"plugin\": "
	         "\"my-plugin\"}}}",
	         "$.providers.a.plugin: must match ^[a-z][a-z0-9_]{0,31}$");
	PROBLEMS("{\"default\": \"a\", \"providers\": {\"a\": {\"plugin\": "
	         "\"../../lib/evil\"}}}",
	         "$.providers.a.plugin: must match");
}

Test(config, settings_must_be_an_object)
{
	PROBLEMS("{\"default\": \"a\", \"providers\": {\"a\": {\"plugin\": "
	         "\"x\", \"settings\": \"{}\"}}}",
	         "$.providers.a.settings: must be an object, not a string");
}

Test(config, supervisor_is_auto_static_or_python3)
{
	struct tb_config *cfg = tb_config_parse(
	    "{\"default\": \"a\", \"providers\": {"
	    "\"a\": {\"plugin\": \"x\", \"supervisor\": \"static\"},"
	    "\"b\": {\"plugin\": \"x\", \"supervisor\": \"auto\"},"
	    "\"c\": {\"plugin\": \"x\"},"
	    "\"d\": {\"plugin\": \"x\", \"supervisor\": \"python3\"}}}",
	    "t.json", err, sizeof err);

	cr_assert_not_null(cfg, "%s", err);
	cr_assert_eq(cfg->instances[0].supervisor, TB_SUP_MODE_STATIC);
	cr_assert_eq(cfg->instances[1].supervisor, TB_SUP_MODE_AUTO);
	cr_assert_eq(cfg->instances[2].supervisor, TB_SUP_MODE_AUTO);
	cr_assert_eq(cfg->instances[3].supervisor, TB_SUP_MODE_PYTHON3);
	tb_config_free(cfg);
}

Test(config, supervisor_must_be_auto_static_or_python3)
{
	PROBLEMS("{\"default\": \"a\", \"providers\": {\"a\": {\"plugin\": "
	         "\"x\", \"supervisor\": \"native\"}}}",
	         "$.providers.a.supervisor: must be \"auto\", \"static\" or "
	         "\"python3\"");
	PROBLEMS("{\"default\": \"a\", \"providers\": {\"a\": {\"plugin\": "
	         "\"x\", \"supervisor\": true}}}",
	         "$.providers.a.supervisor: must be a string, not a boolean");
}

Test(config, watches_default_to_64_and_take_0_to_1024)
{
	struct tb_config *cfg =
	    tb_config_parse("{\"default\": \"a\", \"providers\": {"
	                    "\"a\": {\"plugin\": \"x\"},"
	                    "\"b\": {\"plugin\": \"x\", \"watches\": 0},"
	                    "\"c\": {\"plugin\": \"x\", \"watches\": 1024}}}",
	                    "t.json", err, sizeof err);

	cr_assert_not_null(cfg, "%s", err);
	cr_assert_eq(cfg->instances[0].watches, 64);
	cr_assert_eq(cfg->instances[1].watches, 0);
	cr_assert_eq(cfg->instances[2].watches, 1024);
	tb_config_free(cfg);
}

Test(config, watches_must_be_an_integer_in_range)
{
	static const char *const bad[] = {"-1",    "1025", "4.5",
	                                  "\"8\"", "true", "null"};

	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char text[256];

		snprintf(text, sizeof text,
		         "{\"default\": \"a\", \"providers\": {\"a\": "
		         "{\"plugin\": \"x\", \"watches\": %s}}}",
		         bad[i]);
		PROBLEMS(text,
		         "$.providers.a.watches: must be an integer "
		         "0..1024 (waits watched at once; 0 watches none)");
	}
}

Test(config, mask_must_be_an_object_with_an_array)
{
	PROBLEMS("{\"default\": \"a\", \"providers\": {\"a\": {\"plugin\": "
	         "\"x\"}}, \"mask\": []}",
	         "$.mask: must be an object, not an array");
	PROBLEMS("{\"default\": \"a\", \"providers\": {\"a\": {\"plugin\": "
	         "\"x\"}}, \"mask\": {\"values_from_env\": \"TOKEN\"}}",
	         "$.mask.values_from_env: must be an array of environment "
	         "variable names, not a string");
}

Test(config, mask_takes_names_never_values)
{
	PROBLEMS("{\"default\": \"a\", \"providers\": {\"a\": {\"plugin\": "
	         "\"x\"}}, \"mask\": {\"values_from_env\": [\"OK_1\", "
	         "\"ghp_abc-123\", 5, \"1X\"]}}",
	         "$.mask.values_from_env[1]: must be an environment variable "
	         "name matching ^[A-Za-z_][A-Za-z0-9_]*$",
	         "$.mask.values_from_env[2]: must be a string, not a number",
	         "$.mask.values_from_env[3]: must be an environment variable");
	cr_assert_null(strstr(err, "values_from_env[0]"), "%s", err);
}

Test(config, every_problem_is_reported_one_per_line)
{
	unsigned lines = 1;

	PROBLEMS("{\"default\": 3, \"providers\": {\"a\": {\"plugin\": 1, "
	         "\"x\": 2}}, \"y\": null}",
	         "$.y: unknown key", "$.providers.a.x: unknown key",
	         "$.providers.a.plugin: must be a string, not a number",
	         "$.default: must be a string, not a number");
	for (const char *c = err; *c; c++)
		lines += *c == '\n';
	cr_assert_eq(lines, 4, "%s", err);
}

Test(config, a_small_buffer_truncates_cleanly)
{
	char small[16];

	cr_assert_null(tb_config_parse("[]", "t", small, sizeof small));
	cr_assert_str_eq(small, "$: must be an o");
}

/* Writes text to dir/name and returns the path (static storage). */
static const char *write_file(const char *dir, const char *name,
                              const char *text)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	fclose(f);
	return path;
}

static char home[] = "/tmp/tb-config-XXXXXX";

static void make_home(void)
{
	char sub[600];

	cr_assert_not_null(mkdtemp(home));
	snprintf(sub, sizeof sub, "%s/taskbox", home);
	cr_assert_eq(mkdir(sub, 0700), 0);
	unsetenv("TASKBOX_CONFIG");
	setenv("XDG_CONFIG_HOME", home, 1);
}

static void remove_home(void)
{
	char cmd[600];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", home);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(lookup, .init = make_home, .fini = remove_home);

Test(lookup, built_in_default_when_nothing_is_found)
{
	struct tb_config *cfg = tb_config_load(NULL, err, sizeof err);

	cr_assert_not_null(cfg, "%s", err);
	cr_assert_str_eq(cfg->source, "(built-in default)");
	cr_assert_str_eq(cfg->default_name, "local");
	cr_assert_eq(cfg->n_instances, 1);
	cr_assert_str_eq(cfg->instances[0].plugin, "local");
	tb_config_free(cfg);
}

Test(lookup, xdg_config_home_is_used)
{
	struct tb_config *cfg;

	write_file(home, "taskbox/config.json",
	           "{\"default\": \"xdg\", \"providers\": {\"xdg\": "
	           "{\"plugin\": \"local\"}}}");
	cfg = tb_config_load(NULL, err, sizeof err);
	cr_assert_not_null(cfg, "%s", err);
	cr_assert_str_eq(cfg->default_name, "xdg");
	cr_assert(strstr(cfg->source, "/taskbox/config.json"));
	tb_config_free(cfg);
}

Test(lookup, taskbox_config_beats_xdg)
{
	struct tb_config *cfg;

	write_file(home, "taskbox/config.json",
	           "{\"default\": \"xdg\", \"providers\": {\"xdg\": "
	           "{\"plugin\": \"local\"}}}");
	setenv("TASKBOX_CONFIG",
	       write_file(home, "env.json",
	                  "{\"default\": \"env\", \"providers\": {\"env\": "
	                  "{\"plugin\": \"local\"}}}"),
	       1);
	cfg = tb_config_load(NULL, err, sizeof err);
	cr_assert_not_null(cfg, "%s", err);
	cr_assert_str_eq(cfg->default_name, "env");
	tb_config_free(cfg);
}

Test(lookup, the_option_beats_everything)
{
	struct tb_config *cfg;
	char path[512];

	setenv("TASKBOX_CONFIG",
	       write_file(home, "env.json",
	                  "{\"default\": \"env\", \"providers\": {\"env\": "
	                  "{\"plugin\": \"local\"}}}"),
	       1);
	snprintf(path, sizeof path, "%s",
	         write_file(home, "opt.json",
	                    "{\"default\": \"opt\", \"providers\": {\"opt\": "
	                    "{\"plugin\": \"local\"}}}"));
	cfg = tb_config_load(path, err, sizeof err);
	cr_assert_not_null(cfg, "%s", err);
	cr_assert_str_eq(cfg->default_name, "opt");
	cr_assert_str_eq(cfg->source, path);
	tb_config_free(cfg);
}

Test(lookup, a_missing_named_file_is_an_error)
{
	char path[512];

	snprintf(path, sizeof path, "%s/nope.json", home);
	cr_assert_null(tb_config_load(path, err, sizeof err));
	cr_assert(strstr(err, "nope.json: cannot open: No such file"), "%s",
	          err);
	setenv("TASKBOX_CONFIG", path, 1);
	cr_assert_null(tb_config_load(NULL, err, sizeof err));
}

Test(lookup, home_dot_config_without_xdg)
{
	struct tb_config *cfg;
	char dir[600];

	unsetenv("XDG_CONFIG_HOME");
	setenv("HOME", home, 1);
	snprintf(dir, sizeof dir, "%s/.config", home);
	cr_assert_eq(mkdir(dir, 0700), 0);
	snprintf(dir, sizeof dir, "%s/.config/taskbox", home);
	cr_assert_eq(mkdir(dir, 0700), 0);
	write_file(home, ".config/taskbox/config.json",
	           "{\"default\": \"h\", \"providers\": {\"h\": "
	           "{\"plugin\": \"local\"}}}");
	cfg = tb_config_load(NULL, err, sizeof err);
	cr_assert_not_null(cfg, "%s", err);
	cr_assert_str_eq(cfg->default_name, "h");
	tb_config_free(cfg);
}
