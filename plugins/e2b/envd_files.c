/* Files through envd: GET /files?path= with a byte Range (envd serves files
 * with Go's http.ServeContent: 206 with Content-Range, 416 past the end;
 * a 200 that ignores the range is streamed, skipped and cut off, never
 * held whole), and POST /files (a raw octet-stream body where envd >=
 * 0.5.7 takes one, else multipart/form-data) followed by a chmod.
 *
 * ServeContent sizes a file with stat, so procfs and sysfs files come back
 * empty: read_file serves /proc and /sys paths with one exec of cat
 * instead, so callers get the real bytes. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2b_int.h"

#define TB_PROCFS_MAX (16u * 1024u * 1024u)

static int read_sink(void *ctx, const unsigned char *p, size_t n)
{
	struct tb_file_read *fr = ctx;
	const struct taskbox_host *host = fr->conn->inst->host;
	struct taskbox_buf *data = fr->data;
	size_t keep;

	fr->seen += n;
	if (fr->resp.status == 200 && fr->skip > 0) {
		size_t drop = fr->skip < n ? (size_t)fr->skip : n;
		fr->skip -= drop;
		p += drop;
		n -= drop;
	}
	keep = n < fr->want ? n : fr->want;
	if (keep > 0) {
		if (data->len + keep > fr->cap) {
			size_t cap = fr->cap ? fr->cap : 4096;
			unsigned char *grown;
			while (cap < data->len + keep)
				cap *= 2;
			grown = host->realloc(data->data, cap);
			if (!grown)
				return TASKBOX_E_NOMEM;
			data->data = grown;
			fr->cap = cap;
		}
		memcpy(data->data + data->len, p, keep);
		data->len += keep;
		fr->want -= keep;
	}
	/* A 200 carries the whole file: stop once the page is in. */
	if (fr->want == 0 && fr->resp.status == 200)
		return -1;
	return 0;
}

/* The total of "bytes a-b/total" or "bytes * /total"; UINT64_MAX if "*". */
static uint64_t range_total(const char *cr)
{
	const char *slash = strrchr(cr, '/');

	if (!slash || slash[1] == '*' || slash[1] == '\0')
		return UINT64_MAX;
	return strtoull(slash + 1, NULL, 10);
}

int tb_envd_is_procfs(const char *path)
{
	return strncmp(path, "/proc/", 6) == 0 ||
	       strncmp(path, "/sys/", 5) == 0;
}

int tb_envd_read_procfs(struct tb_e2b_conn *conn, const char *path,
                        uint64_t offset, size_t length,
                        struct taskbox_buf *data, uint64_t *file_size,
                        char *errbuf, size_t errlen)
{
	const struct taskbox_host *host = conn->inst->host;
	const char *argv[] = {"cat", "--", path, NULL};
	struct taskbox_exec_req req = {0};
	struct taskbox_exec_result res = {0};
	int rc;

	req.struct_size = sizeof req;
	req.argv = argv;
	req.timeout_ms = conn->inst->request_timeout_s * 1000u;
	req.output_limit = TB_PROCFS_MAX;
	res.struct_size = sizeof res;
	rc = tb_envd_exec(conn, &req, &res, errbuf, errlen);
	if (rc != TASKBOX_OK)
		goto out;
	if (res.exit_code != 0) {
		char msg[300];
		size_t n =
		    res.err.len < sizeof msg - 1 ? res.err.len : sizeof msg - 1;
		if (n)
			memcpy(msg, res.err.data, n);
		msg[n] = '\0';
		rc = tb_e2b_fail(
		    errbuf, errlen, NULL, NULL,
		    strstr(msg, "No such file") ? TASKBOX_E_NOT_FOUND
		                                : TASKBOX_E_IO,
		    "read_file %s: %s", path, n ? msg : "cat failed");
		goto out;
	}
	*file_size = res.out_truncated ? UINT64_MAX : res.out.len;
	if (offset < res.out.len) {
		size_t n = res.out.len - (size_t)offset;
		if (n > length)
			n = length;
		data->data = host->alloc(n ? n : 1);
		if (!data->data) {
			rc = tb_e2b_fail(errbuf, errlen, NULL, NULL,
			                 TASKBOX_E_NOMEM,
			                 "read_file: out of memory");
			goto out;
		}
		memcpy(data->data, res.out.data + offset, n);
		data->len = n;
		if (n == 0) {
			host->free(data->data);
			data->data = NULL;
		}
	}
out:
	host->free(res.out.data);
	host->free(res.err.data);
	return rc;
}

/* "/files?path=ESCAPED" (plus the user for an old envd); malloc'd. */
static char *files_url(struct tb_e2b_conn *conn, const char *path)
{
	char *esc = curl_easy_escape(NULL, path, 0);
	char *q, *url;
	size_t n;

	if (!esc)
		return NULL;
	n = strlen(esc) + 40;
	q = malloc(n);
	if (q)
		snprintf(q, n, "/files?path=%s%s", esc,
		         conn->legacy_user ? "&username=user" : "");
	curl_free(esc);
	url = q ? tb_envd_url(conn, q) : NULL;
	free(q);
	return url;
}

int tb_envd_fail(struct tb_e2b_conn *conn, const struct tb_http_resp *resp,
                 const char *what, char *errbuf, size_t errlen)
{
	if (resp->status == 502 || resp->status == 401)
		conn->stale = 1;
	return tb_http_fail(conn->inst, conn->access_token, resp, 1, what,
	                    errbuf, errlen);
}

int tb_envd_read_begin(struct tb_e2b_conn *conn, const char *path,
                       uint64_t offset, size_t length, struct taskbox_buf *data,
                       uint64_t *file_size, struct tb_file_read *fr,
                       char *errbuf, size_t errlen)
{
	char range[80];
	uint64_t last;

	memset(fr, 0, sizeof *fr);
	fr->conn = conn;
	fr->path = path;
	fr->data = data;
	fr->file_size = file_size;
	data->data = NULL;
	data->len = 0;
	*file_size = UINT64_MAX;
	if (!path || !*path)
		return tb_e2b_fail(errbuf, errlen, NULL, NULL,
		                   TASKBOX_E_INVALID,
		                   "read_file: path must be non-empty");
	if (offset > INT64_MAX)
		return tb_e2b_fail(errbuf, errlen, NULL, NULL,
		                   TASKBOX_E_INVALID,
		                   "read_file %s: offset is past 2^63", path);
	last = offset;
	if (length > 0)
		last = (uint64_t)length - 1 > INT64_MAX - offset
		           ? INT64_MAX
		           : offset + (uint64_t)length - 1;
	snprintf(range, sizeof range, "bytes=%" PRIu64 "-%" PRIu64, offset,
	         last);
	fr->url = files_url(conn, path);
	if (!fr->url || tb_envd_headers(conn, &fr->headers) != 0 ||
	    tb_http_header(&fr->headers, "Range", range) != 0)
		return tb_e2b_fail(errbuf, errlen, NULL, NULL, TASKBOX_E_NOMEM,
		                   "read_file: out of memory");
	fr->skip = offset;
	fr->want = length;
	fr->req.method = "GET";
	fr->req.url = fr->url;
	fr->req.headers = fr->headers;
	fr->req.timeout_ms = conn->inst->request_timeout_s * 1000u;
	fr->req.sink = read_sink;
	fr->req.ctx = fr;
	fr->req.retry_429 = 1;
	return TASKBOX_OK;
}

int tb_envd_read_end(struct tb_file_read *fr, int rc, char *errbuf,
                     size_t errlen)
{
	struct tb_http_resp *resp = &fr->resp;

	if (rc != TASKBOX_OK)
		goto out;
	switch (resp->status) {
	case 206:
	case 416: /* at or past the end */
		*fr->file_size = range_total(resp->content_range);
		break;
	case 200:
		if (resp->content_length >= 0)
			*fr->file_size = (uint64_t)resp->content_length;
		else if (fr->want > 0)
			*fr->file_size = fr->seen; /* read to the end */
		break;
	default:
		rc = tb_envd_fail(fr->conn, resp, "read_file", errbuf, errlen);
	}
out:
	if (rc != TASKBOX_OK && fr->data->data) {
		fr->conn->inst->host->free(fr->data->data);
		fr->data->data = NULL;
		fr->data->len = 0;
	}
	return rc;
}

void tb_envd_read_free(struct tb_file_read *fr)
{
	tb_http_resp_free(&fr->resp);
	curl_slist_free_all(fr->headers);
	free(fr->url);
	fr->headers = NULL;
	fr->url = NULL;
}

int tb_envd_read_file(struct tb_e2b_conn *conn, const char *path,
                      uint64_t offset, size_t length, struct taskbox_buf *data,
                      uint64_t *file_size, char *errbuf, size_t errlen)
{
	struct tb_file_read fr;
	int rc;

	if (path && tb_envd_is_procfs(path)) {
		data->data = NULL;
		data->len = 0;
		*file_size = UINT64_MAX;
		return tb_envd_read_procfs(conn, path, offset, length, data,
		                           file_size, errbuf, errlen);
	}
	rc = tb_envd_read_begin(conn, path, offset, length, data, file_size,
	                        &fr, errbuf, errlen);
	if (rc == TASKBOX_OK)
		rc = tb_http_run(conn->inst, &fr.req, &fr.resp, errbuf, errlen);
	rc = tb_envd_read_end(&fr, rc, errbuf, errlen);
	tb_envd_read_free(&fr);
	return rc;
}

/* Sets the permission bits with one exec of chmod. */
static int chmod_path(struct tb_e2b_conn *conn, const char *path, uint32_t mode,
                      char *errbuf, size_t errlen)
{
	const struct taskbox_host *host = conn->inst->host;
	char octal[16];
	const char *argv[] = {"chmod", octal, "--", path, NULL};
	struct taskbox_exec_req req = {0};
	struct taskbox_exec_result res = {0};
	int rc;

	snprintf(octal, sizeof octal, "%04o", (unsigned)mode);
	req.struct_size = sizeof req;
	req.argv = argv;
	req.timeout_ms = conn->inst->request_timeout_s * 1000u;
	req.output_limit = 4096;
	res.struct_size = sizeof res;
	rc = tb_envd_exec(conn, &req, &res, errbuf, errlen);
	if (rc == TASKBOX_OK && res.exit_code != 0)
		rc = tb_e2b_fail(
		    errbuf, errlen, NULL, NULL, TASKBOX_E_IO,
		    "write_file %s: chmod %s failed (exit %d): %.*s", path,
		    octal, res.exit_code, (int)res.err.len,
		    res.err.data ? (const char *)res.err.data : "");
	host->free(res.out.data);
	host->free(res.err.data);
	return rc;
}

int tb_envd_write_file(struct tb_e2b_conn *conn, const char *path,
                       const unsigned char *data, size_t len, uint32_t mode,
                       char *errbuf, size_t errlen)
{
	struct tb_e2b *inst = conn->inst;
	struct curl_slist *headers = NULL;
	struct tb_http_req req = {0};
	struct tb_http_resp resp = {0};
	CURL *easy = NULL;
	curl_mime *mime = NULL;
	char *url = NULL;
	int rc;

	if (!path || !*path)
		return tb_e2b_fail(errbuf, errlen, NULL, NULL,
		                   TASKBOX_E_INVALID,
		                   "write_file: path must be non-empty");
	if (mode > 07777)
		return tb_e2b_fail(errbuf, errlen, NULL, NULL,
		                   TASKBOX_E_INVALID,
		                   "write_file: mode must be at most 07777");
	url = files_url(conn, path);
	if (!url || tb_envd_headers(conn, &headers) != 0)
		goto nomem;
	req.method = "POST";
	req.url = url;
	req.timeout_ms = inst->request_timeout_s * 1000u;
	req.retry_429 = 1;
	if (conn->octet_upload) {
		if (tb_http_header(&headers, "Content-Type",
		                   "application/octet-stream") != 0)
			goto nomem;
		req.body = len ? (const void *)data : "";
		req.body_len = len;
	} else {
		curl_mimepart *part;
		if (!(easy = curl_easy_init()) ||
		    !(mime = curl_mime_init(easy)) ||
		    !(part = curl_mime_addpart(mime)) ||
		    curl_mime_name(part, "file") != CURLE_OK ||
		    curl_mime_filename(part, path) != CURLE_OK ||
		    curl_mime_data(part, len ? (const char *)data : "", len) !=
		        CURLE_OK)
			goto nomem;
		req.mime = mime;
		req.easy = easy;
	}
	req.headers = headers;
	rc = tb_http_run(inst, &req, &resp, errbuf, errlen);
	if (rc == TASKBOX_OK && resp.status != 200 && resp.status != 201)
		rc = tb_envd_fail(conn, &resp, "write_file", errbuf, errlen);
	if (rc == TASKBOX_OK)
		rc = chmod_path(conn, path, mode, errbuf, errlen);
	goto out;
nomem:
	rc = tb_e2b_fail(errbuf, errlen, NULL, NULL, TASKBOX_E_NOMEM,
	                 "write_file: out of memory");
out:
	tb_http_resp_free(&resp);
	curl_slist_free_all(headers);
	curl_mime_free(mime);
	if (easy)
		curl_easy_cleanup(easy);
	free(url);
	return rc;
}
