/* Who is calling, in pieces: the token sources' parser (principals,
 * scopes, line numbers in errors, never a token), the bearer header, the
 * constant-time match, the challenges of 401 and 403, the resource
 * metadata and the scopes each message needs. */
#include "config.h"

#include <criterion/criterion.h>
#include <string.h>

#include "base/principal.h"
#include "protocol/mcp.h"
#include "tools/tasks.h"
#include "transport/http_challenge.h"
#include "transport/http_tokens.h"

static struct tb_http_credentials creds;
static char why[256];

static void parse_fini(void)
{
	tb_http_credentials_free(&creds);
}

TestSuite(token_file, .fini = parse_fini);

Test(token_file, alone_is_operator_with_every_scope)
{
	cr_assert_eq(
	    tb_http_credentials_parse(
	        &creds, " a1 ,b2,,\nc3\r\n\n# a comment\n", why, sizeof why),
	    0, "%s", why);
	cr_assert_eq(creds.n, 3);
	cr_assert_str_eq(creds.v[0].token, "a1");
	cr_assert_str_eq(creds.v[1].token, "b2");
	cr_assert_str_eq(creds.v[2].token, "c3");
	for (size_t i = 0; i < 3; i++) {
		cr_assert_str_eq(creds.v[i].who.name, "operator");
		cr_assert_eq(creds.v[i].who.scopes, TB_SCOPES_ALL);
		cr_assert_eq(creds.v[i].who.how, TB_AUTH_STATIC);
	}
}

Test(token_file, named_principals_and_scopes)
{
	const char *text = "tok-alice alice\n"
	                   "tok-bob\tbob taskbox:read # reads only\n"
	                   "tok-root root@example.org taskbox:admin\n"
	                   "tok-two two taskbox:read taskbox:run\n";

	cr_assert_eq(tb_http_credentials_parse(&creds, text, why, sizeof why),
	             0, "%s", why);
	cr_assert_eq(creds.n, 4);
	cr_assert_str_eq(creds.v[0].who.name, "alice");
	cr_assert_eq(creds.v[0].who.scopes, TB_SCOPE_READ | TB_SCOPE_RUN);
	cr_assert_str_eq(creds.v[0].who.token_id, "alice");
	cr_assert_str_eq(creds.v[1].token, "tok-bob");
	cr_assert_eq(creds.v[1].who.scopes, TB_SCOPE_READ);
	cr_assert_str_eq(creds.v[2].who.name, "root@example.org");
	cr_assert_eq(creds.v[2].who.scopes, TB_SCOPES_ALL);
	cr_assert_eq(creds.v[3].who.scopes, TB_SCOPE_READ | TB_SCOPE_RUN);
}

/* Parses text and expects a refusal whose message holds rule and never
 * secret. */
static void refused(const char *text, const char *rule, const char *secret)
{
	tb_http_credentials_free(&creds);
	cr_assert_eq(tb_http_credentials_parse(&creds, text, why, sizeof why),
	             -1, "accepted: %s", text);
	cr_assert(strstr(why, rule), "\"%s\" lacks \"%s\"", why, rule);
	cr_assert_null(strstr(why, secret), "\"%s\" shows the token", why);
}

Test(token_file, bad_lines_name_their_number_never_the_token)
{
	refused("ok1\nsecret-1 alice\nsecret-1 bob\n",
	        "line 3: a token given before", "secret-1");
	refused("secret-2,secret-2\n", "line 1: a token given before",
	        "secret-2");
	refused("\n\nsecret-3 al!ce\n", "line 3: a principal is 1 to 64",
	        "secret-3");
	refused("secret-4 alice taskbox:write\n", "line 1: field 3: a scope is",
	        "secret-4");
	refused(
	    "secret-5 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaa\n",
	    "line 1: a principal is 1 to 64", "secret-5");
	refused("secret-6\x01x alice\n", "line 1: a field holds a byte",
	        "secret-6");
}

Test(token_file, a_token_seen_in_an_earlier_source_is_refused)
{
	cr_assert_eq(tb_http_credentials_parse(&creds, "t-1", why, sizeof why),
	             0);
	cr_assert_eq(tb_http_credentials_parse(&creds, "x y\nt-1 carol", why,
	                                       sizeof why),
	             -1);
	cr_assert(strstr(why, "line 2: a token given before"), "%s", why);
}

Test(bearer, header_forms)
{
	const char *tok;
	size_t len;

	cr_assert(tb_http_bearer("Bearer alpha-123", &tok, &len));
	cr_assert_eq(len, 9);
	cr_assert(tb_http_bearer("bearer  alpha-123 ", &tok, &len));
	cr_assert_eq(len, 9);
	cr_assert_eq(strncmp(tok, "alpha-123", len), 0);
	cr_assert_not(tb_http_bearer("Basic alpha-123", &tok, &len));
	cr_assert_not(tb_http_bearer("Bearer ", &tok, &len));
	cr_assert_not(tb_http_bearer("alpha-123", &tok, &len));
	cr_assert_not(tb_http_bearer(NULL, &tok, &len));
}

Test(bearer, find_compares_whole_tokens)
{
	cr_assert_eq(
	    tb_http_credentials_parse(
	        &creds, "alpha-123 alice\nbeta-4567890 bob", why, sizeof why),
	    0);
	const struct tb_http_credential *c =
	    tb_http_credential_find(creds.v, creds.n, "beta-4567890", 12);
	cr_assert_not_null(c);
	cr_assert_str_eq(c->who.name, "bob");
	cr_assert_null(
	    tb_http_credential_find(creds.v, creds.n, "alpha-12", 8));
	cr_assert_null(
	    tb_http_credential_find(creds.v, creds.n, "alpha-1234", 10));
	cr_assert_null(tb_http_credential_find(creds.v, creds.n, "", 0));
	tb_http_credentials_free(&creds);
	cr_assert(tb_http_token_equal("alpha-123", 9, "alpha-123"));
	cr_assert_not(tb_http_token_equal("alpha-124", 9, "alpha-123"));
}

static const struct tb_http_auth_view plain = {0};
static const struct tb_http_auth_view oauth = {
    .public_url = "https://mcp.example.com/team/mcp",
    .issuer = "https://id.example.com",
};
static const struct tb_http_auth_view renamed = {
    .public_url = "https://mcp.example.com",
    .issuer = "https://id.example.com",
    .scope_names = {"api://tb/read", "api://tb/run", "api://tb/admin"},
    .challenge_scope = "api://tb/read",
};

Test(challenge, metadata_url)
{
	char url[256];

	cr_assert_eq(tb_http_metadata_url(oauth.public_url, url, sizeof url),
	             0);
	cr_assert_str_eq(url, "https://mcp.example.com/.well-known/"
	                      "oauth-protected-resource/team/mcp");
	cr_assert_eq(
	    tb_http_metadata_url("http://127.0.0.1:8414/", url, sizeof url), 0);
	cr_assert_str_eq(
	    url, "http://127.0.0.1:8414/.well-known/oauth-protected-resource");
	cr_assert_eq(tb_http_metadata_url("ftp://x/y", url, sizeof url), -1);
	cr_assert_eq(tb_http_metadata_url("https:///y", url, sizeof url), -1);
}

Test(challenge, unauthorized)
{
	char out[1024];

	tb_http_challenge_401(&plain, "invalid_token", "expired", out,
	                      sizeof out);
	cr_assert_str_eq(out, "Bearer realm=\"taskbox\"");
	tb_http_challenge_401(&oauth, NULL, NULL, out, sizeof out);
	cr_assert_str_eq(out,
	                 "Bearer resource_metadata=\"https://mcp.example.com/"
	                 ".well-known/oauth-protected-resource/team/mcp\", "
	                 "scope=\"taskbox:run\"");
	tb_http_challenge_401(&renamed, "invalid_token",
	                      "the token has \"expired\"\\", out, sizeof out);
	cr_assert_str_eq(out,
	                 "Bearer resource_metadata=\"https://mcp.example.com/"
	                 ".well-known/oauth-protected-resource\", "
	                 "scope=\"api://tb/read\", error=\"invalid_token\", "
	                 "error_description=\"the token has 'expired'/\"");
}

Test(challenge, insufficient_scope_names_every_scope_needed)
{
	char out[1024];

	tb_http_challenge_403(&plain, TB_SCOPE_RUN, out, sizeof out);
	cr_assert_str_eq(out, "Bearer realm=\"taskbox\", "
	                      "error=\"insufficient_scope\", "
	                      "scope=\"taskbox:read taskbox:run\"");
	tb_http_challenge_403(&renamed, TB_SCOPE_READ, out, sizeof out);
	cr_assert_str_eq(
	    out, "Bearer error=\"insufficient_scope\", "
	         "scope=\"api://tb/read\", resource_metadata=\"https://"
	         "mcp.example.com/.well-known/oauth-protected-resource\"");
}

Test(challenge, resource_metadata_document)
{
	json_t *doc = tb_http_resource_metadata(&renamed);
	char *text = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);

	cr_assert_str_eq(
	    text, "{\"authorization_servers\":[\"https://id.example.com\"],"
	          "\"bearer_methods_supported\":[\"header\"],"
	          "\"resource\":\"https://mcp.example.com\","
	          "\"resource_name\":\"taskbox\","
	          "\"scopes_supported\":[\"api://tb/read\",\"api://tb/run\","
	          "\"api://tb/admin\"]}");
	free(text);
	json_decref(doc);
	cr_assert_null(tb_http_resource_metadata(&plain));
}

Test(scopes, each_message_needs_its_scope)
{
	json_t *get = json_pack("{s:s}", "name", "get_task");
	json_t *start = json_pack("{s:s}", "name", "start_task");
	json_t *nope = json_pack("{s:s}", "name", "no_such_tool");

	cr_assert_eq(tb_task_tools_register(), 0);
	cr_assert_eq(tb_mcp_scope_needed("tools/call", get), TB_SCOPE_READ);
	cr_assert_eq(tb_mcp_scope_needed("tools/call", start), TB_SCOPE_RUN);
	cr_assert_eq(tb_mcp_scope_needed("tools/call", nope), 0);
	cr_assert_eq(tb_mcp_scope_needed("tasks/list", NULL), TB_SCOPE_READ);
	cr_assert_eq(tb_mcp_scope_needed("tasks/result", NULL), TB_SCOPE_READ);
	cr_assert_eq(tb_mcp_scope_needed("tasks/cancel", NULL), TB_SCOPE_RUN);
	cr_assert_eq(tb_mcp_scope_needed("tools/list", NULL), 0);
	cr_assert_eq(tb_mcp_scope_needed("ping", NULL), 0);
	json_decref(get);
	json_decref(start);
	json_decref(nope);
}
