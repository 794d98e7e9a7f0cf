/* The list op (ABI 1.5): GET /v2/sandboxes with a metadata query for the
 * tag taskbox sets at create (and the owner asked for), running and paused
 * sandboxes, page after page as X-Next-Token says. The API filters; every
 * sandbox is checked again here before the host sees it. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2b_int.h"

#define TB_LIST_LIMIT 100       /* the API's largest page */
#define TB_LIST_MAX_PAGES 10000 /* a bound on a service that loops */

/* Hands every sandbox of one page that is taskbox's (and owner's) to each;
 * *stop is set when each asked to stop. */
static int take_page(json_t *arr, const char *owner, taskbox_list_fn each,
                     void *arg, int *stop)
{
	struct taskbox_sandbox_info out;
	struct tb_e2b_info info;
	char id[TASKBOX_SANDBOX_ID_MAX];
	size_t i;

	for (i = 0; i < json_array_size(arr) && !*stop; i++) {
		if (!tb_e2b_info_from_json(json_array_get(arr, i), id, &info))
			continue;
		if (owner && strcmp(info.owner, owner) != 0)
			continue;
		memset(&out, 0, sizeof out);
		out.struct_size = sizeof out;
		tb_e2b_info_out(id, &info, &out);
		*stop = each(arg, &out) != 0;
	}
	return TASKBOX_OK;
}

/* GET one page: after token ("" for the first). */
static int get_page(struct tb_e2b *inst, const char *query, const char *token,
                    struct tb_http_resp *resp, char *errbuf, size_t errlen)
{
	char *etok = tb_e2b_pct(token), *path = NULL;
	size_t n;
	int rc;

	n = strlen(query) + (etok ? strlen(etok) : 0) + 128;
	if (etok)
		path = malloc(n);
	if (!path) {
		free(etok);
		return tb_e2b_fail(errbuf, errlen, NULL, NULL, TASKBOX_E_NOMEM,
		                   "list: out of memory");
	}
	snprintf(path, n,
	         "/v2/sandboxes?metadata=%s&state=running,paused&limit=%d%s%s",
	         query, TB_LIST_LIMIT, token[0] ? "&nextToken=" : "", etok);
	rc = tb_e2b_api_call(inst, "GET", path, NULL, "list", resp, errbuf,
	                     errlen);
	free(path);
	free(etok);
	return rc;
}

int tb_e2b_list(struct tb_e2b *inst, const char *owner, taskbox_list_fn each,
                void *arg, char *errbuf, size_t errlen)
{
	char token[sizeof((struct tb_http_resp *)0)->next_token] = "";
	char *query;
	json_t *arr;
	int rc = TASKBOX_OK, stop = 0, pages;

	if (!each)
		return tb_e2b_fail(errbuf, errlen, NULL, NULL,
		                   TASKBOX_E_INVALID, "list: each is NULL");
	if (owner && *owner && !tb_e2b_valid_owner(owner))
		return tb_e2b_fail(errbuf, errlen, NULL, NULL,
		                   TASKBOX_E_INVALID,
		                   "list: owner must be 1..%d bytes of UTF-8 "
		                   "without control characters",
		                   TASKBOX_OWNER_MAX - 1);
	query = tb_e2b_metadata_query(owner);
	if (!query)
		return tb_e2b_fail(errbuf, errlen, NULL, NULL, TASKBOX_E_NOMEM,
		                   "list: out of memory");
	for (pages = 0; rc == TASKBOX_OK && !stop; pages++) {
		struct tb_http_resp resp = {0};

		if (pages == TB_LIST_MAX_PAGES) {
			rc = tb_e2b_fail(
			    errbuf, errlen, NULL, NULL, TASKBOX_E_PROTOCOL,
			    "list: more than %d pages", TB_LIST_MAX_PAGES);
			break;
		}
		rc = get_page(inst, query, token, &resp, errbuf, errlen);
		if (rc == TASKBOX_OK && resp.status != 200)
			rc = tb_http_fail(inst, NULL, &resp, 0, "list", errbuf,
			                  errlen);
		arr = rc == TASKBOX_OK ? json_loadb(resp.body ? resp.body : "",
		                                    resp.len, 0, NULL)
		                       : NULL;
		if (rc == TASKBOX_OK && !json_is_array(arr))
			rc = tb_e2b_fail(
			    errbuf, errlen, NULL, NULL, TASKBOX_E_PROTOCOL,
			    "list: the answer is not a JSON array");
		if (rc == TASKBOX_OK)
			rc = take_page(arr, owner, each, arg, &stop);
		json_decref(arr);
		if (rc == TASKBOX_OK && !stop && resp.next_token[0]) {
			if (strlen(resp.next_token) + 1 >= sizeof token ||
			    strcmp(resp.next_token, token) == 0)
				rc = tb_e2b_fail(
				    errbuf, errlen, NULL, NULL,
				    TASKBOX_E_PROTOCOL,
				    "list: X-Next-Token is too long or the "
				    "same as the last");
			else
				memcpy(token, resp.next_token,
				       strlen(resp.next_token) + 1);
		} else if (rc == TASKBOX_OK) {
			stop = 1;
		}
		tb_http_resp_free(&resp);
	}
	free(query);
	return rc;
}
