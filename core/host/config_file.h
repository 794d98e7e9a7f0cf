/* The operator's config file: named provider instances, the default one,
 * and the values the host masks on every page it returns. */
#ifndef TB_CONFIG_FILE_H
#define TB_CONFIG_FILE_H

#include <stdbool.h>
#include <stddef.h>

struct tb_config_limits;

/* An instance's "supervisor": auto (the default), static or python3
 * (sup_native.h says what each runs). */
enum tb_sup_mode {
	TB_SUP_MODE_AUTO,
	TB_SUP_MODE_STATIC,
	TB_SUP_MODE_PYTHON3,
};

struct tb_config_instance {
	char *name;          /* key under "providers" */
	char *plugin;        /* plugin name, e.g. "local" */
	char *settings_json; /* the instance's "settings" object as text */
	enum tb_sup_mode supervisor; /* "supervisor" */
	unsigned watches; /* "watches", or TB_CONFIG_WATCHES_DEFAULT */
	bool watches_set; /* "watches" was given */
};

/* An instance's waits watched in its sandboxes at once (remote_watch.h),
 * unless its "watches" says otherwise (0 to TB_CONFIG_WATCHES_MAX). */
#define TB_CONFIG_WATCHES_DEFAULT 64u
#define TB_CONFIG_WATCHES_MAX 1024

/* "http.oauth": OAuth 2.1 access tokens (docs/oauth.md). */
struct tb_config_oauth {
	char *issuer;
	char *jwks_uri;  /* or NULL: from the issuer's metadata */
	char **audience; /* none: [public_url] */
	size_t n_audience;
	char *principal_claim; /* or NULL: "sub" */
	int leeway_s;          /* -1: not set (60) */
	char *scopes[3];       /* read, run, admin; NULL: taskbox's names */
	char *challenge_scope; /* or NULL: the run scope's name */
};

/* The "http" section: the Streamable HTTP transport's settings. Tokens are
 * never in the file: token_env and token_file name where they are. */
struct tb_config_http {
	char *listen; /* "[ADDR:]PORT", or NULL */
	char *path;   /* the endpoint, or NULL */
	char *token_env;
	char *token_file;
	char **allowed_origins;
	size_t n_allowed_origins;
	char **allowed_hosts;
	size_t n_allowed_hosts;
	unsigned session_idle_s; /* 0: not set */
	unsigned idle_timeout_s;
	unsigned header_timeout_s;
	unsigned body_timeout_s;
	unsigned max_unauthenticated;
	unsigned max_connections;
	unsigned max_inflight;
	unsigned answer_budget_mib;
	char *tls_cert; /* both or neither */
	char *tls_key;
	char *public_url;              /* or NULL; required with oauth */
	struct tb_config_oauth *oauth; /* or NULL */
};

struct tb_config {
	char *source; /* the file it came from, or "(built-in default)" */
	char *default_name;
	struct tb_config_instance *instances;
	size_t n_instances;
	char **mask_values; /* values of mask.values_from_env that are set and
	                       non-empty, resolved at load time */
	size_t n_mask_values;
	struct tb_config_http *http; /* NULL when the file has none */
	char *audit_path;            /* "audit.path" ("-": stderr), or NULL */
	bool audit_reads;            /* "audit.reads" */
	struct tb_config_limits *limits; /* "limits", or NULL: none */
};

/* Finds the config as --config FILE (path, may be NULL), $TASKBOX_CONFIG,
 * $XDG_CONFIG_HOME/taskbox/config.json (or ~/.config/...), else the
 * built-in default (one "local" instance named "local"). Validates it; on
 * error writes every problem, one per line, as "JSON.PATH: rule" into err
 * and returns NULL. */
struct tb_config *tb_config_load(const char *path, char *err, size_t errlen);

/* Parses and validates config text; source names it in messages. */
struct tb_config *tb_config_parse(const char *text, const char *source,
                                  char *err, size_t errlen);

void tb_config_free(struct tb_config *cfg);

#endif /* TB_CONFIG_FILE_H */
