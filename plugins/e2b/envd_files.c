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

struct read_state {
	const struct taskbox_host *host;
	struct tb_http_resp *resp;
	struct taskbox_buf *data;
	size_t cap;
	uint64_t skip; /* bytes still to drop (a 200 from offset 0) */
	size_t want;   /* bytes still to keep */
	uint64_t seen; /* body bytes seen */
	int nomem;
};

static int read_sink(void *ctx, const unsigned char *p, size_t n)
{
	struct read_state *rs = ctx;
	size_t keep;

	rs->seen += n;
	if (rs->resp->status == 200 && rs->skip > 0) {
		size_t drop = rs->skip < n ? (size_t)rs->skip : n;
		rs->skip -= drop;
		p += drop;
		n -= drop;
	}
	keep = n < rs->want ? n : rs->want;
	if (keep > 0) {
		if (rs->data->len + keep > rs->cap) {
			size_t cap = rs->cap ? rs->cap : 4096;
			unsigned char *grown;
			while (cap < rs->data->len + keep)
				cap *= 2;
			grown = rs->host->realloc(rs->data->data, cap);
			if (!grown) {
				rs->nomem = 1;
				return TASKBOX_E_NOMEM;
			}
			rs->data->data = grown;
			rs->cap = cap;
		}
		memcpy(rs->data->data + rs->data->len, p, keep);
		rs->data->len += keep;
		rs->want -= keep;
	}
	/* A 200 carries the whole file: stop once the page is in. */
	if (rs->want == 0 && rs->resp->status == 200)
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

static int is_procfs(const char *path)
{
	return strncmp(path, "/proc/", 6) == 0 ||
	       strncmp(path, "/sys/", 5) == 0;
}

/* /proc and /sys through `cat`, then the page cut out of it. */
static int read_procfs(struct tb_e2b_conn *conn, const char *path,
                       uint64_t offset, size_t length, struct taskbox_buf *data,
                       uint64_t *file_size, char *errbuf, size_t errlen)
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

int tb_envd_read_file(struct tb_e2b_conn *conn, const char *path,
                      uint64_t offset, size_t length, struct taskbox_buf *data,
                      uint64_t *file_size, char *errbuf, size_t errlen)
{
	struct tb_e2b *inst = conn->inst;
	struct curl_slist *headers = NULL;
	struct tb_http_req req = {0};
	struct tb_http_resp resp = {0};
	struct read_state rs = {0};
	char range[80], *url = NULL;
	uint64_t last;
	int rc;

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
		                   "read_file: offset is past 2^63");
	if (is_procfs(path))
		return read_procfs(conn, path, offset, length, data, file_size,
		                   errbuf, errlen);
	last = offset;
	if (length > 0)
		last = (uint64_t)length - 1 > INT64_MAX - offset
		           ? INT64_MAX
		           : offset + (uint64_t)length - 1;
	snprintf(range, sizeof range, "bytes=%" PRIu64 "-%" PRIu64, offset,
	         last);
	url = files_url(conn, path);
	if (!url || tb_envd_headers(conn, &headers) != 0 ||
	    tb_http_header(&headers, "Range", range) != 0) {
		rc = tb_e2b_fail(errbuf, errlen, NULL, NULL, TASKBOX_E_NOMEM,
		                 "read_file: out of memory");
		goto out;
	}
	rs.host = inst->host;
	rs.resp = &resp;
	rs.data = data;
	rs.skip = offset;
	rs.want = length;
	req.method = "GET";
	req.url = url;
	req.headers = headers;
	req.timeout_ms = inst->request_timeout_s * 1000u;
	req.sink = read_sink;
	req.ctx = &rs;
	req.retry_429 = 1;
	rc = tb_http_run(inst, &req, &resp, errbuf, errlen);
	if (rc != TASKBOX_OK)
		goto out;
	switch (resp.status) {
	case 206:
		*file_size = range_total(resp.content_range);
		break;
	case 416: /* at or past the end */
		*file_size = range_total(resp.content_range);
		break;
	case 200:
		if (resp.content_length >= 0)
			*file_size = (uint64_t)resp.content_length;
		else if (rs.want > 0)
			*file_size = rs.seen; /* read to the end */
		break;
	default:
		rc = tb_http_fail(inst, conn->access_token, &resp, 1,
		                  "read_file", errbuf, errlen);
	}
out:
	if (rc != TASKBOX_OK && data->data) {
		inst->host->free(data->data);
		data->data = NULL;
		data->len = 0;
	}
	tb_http_resp_free(&resp);
	curl_slist_free_all(headers);
	free(url);
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
		rc = tb_http_fail(inst, conn->access_token, &resp, 1,
		                  "write_file", errbuf, errlen);
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
