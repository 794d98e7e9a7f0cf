/* Writing a whole file into a sandbox: the provider's write_file, or exec
 * in base64 chunks where it has none. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base64.h"
#include "host/provider_stats.h"
#include "tasks/box.h"

/* Base64 text per exec when the provider has no write_file. */
#define CHUNK 65536

/* Runs one step of a write through exec: sh -c script sh path chunk mode. */
static int write_step(struct tb_box *box, const char *script, const char *path,
                      const char *chunk, const char *mode, char *err,
                      size_t errlen)
{
	const char *argv[] = {"sh", "-c",  script, "sh",
	                      path, chunk, mode,   NULL};
	struct taskbox_exec_result res;
	int rc;

	rc = tb_box_exec(box, argv, NULL, 60000, 4096, NULL, NULL, &res, err,
	                 errlen);
	if (rc == TASKBOX_OK && (res.exit_code != 0 || res.timed_out)) {
		snprintf(err, errlen, "sandbox %s: writing %s failed: %.*s",
		         box->id, path,
		         (int)(res.err.len > 300 ? 300 : res.err.len),
		         res.err.data ? (const char *)res.err.data : "");
		rc = TASKBOX_E_IO;
	}
	tb_exec_result_free(&res);
	return rc;
}

/* Writes data through exec in base64 chunks into PATH.tbpart, then renames
 * it over PATH, so a failed write never leaves a half file at PATH. */
static int write_by_exec(struct tb_box *box, const char *path,
                         const unsigned char *data, size_t len, uint32_t mode,
                         char *err, size_t errlen)
{
	static const char first[] =
	    "mkdir -p -- \"$(dirname -- \"$1\")\" && "
	    "printf %s \"$2\" | base64 -d > \"$1.tbpart\"";
	static const char next[] =
	    "printf %s \"$2\" | base64 -d >> \"$1.tbpart\"";
	static const char last[] =
	    "chmod \"$3\" -- \"$1.tbpart\" && mv -f -- \"$1.tbpart\" \"$1\"";
	size_t b64len, off = 0;
	char *b64 = tb_base64_encode(data, len, &b64len);
	char *chunk = malloc(CHUNK + 1);
	char octal[16];
	int rc = TASKBOX_OK;

	if (b64 == NULL || chunk == NULL) {
		free(b64);
		free(chunk);
		snprintf(err, errlen, "out of memory encoding the content");
		return TASKBOX_E_NOMEM;
	}
	snprintf(octal, sizeof(octal), "%o", (unsigned)(mode & 07777));
	do {
		size_t n = b64len - off < CHUNK ? b64len - off : CHUNK;

		memcpy(chunk, b64 + off, n);
		chunk[n] = '\0';
		rc = write_step(box, off == 0 ? first : next, path, chunk,
		                octal, err, errlen);
		off += n;
	} while (rc == TASKBOX_OK && off < b64len);
	if (rc == TASKBOX_OK)
		rc = write_step(box, last, path, "", octal, err, errlen);
	free(chunk);
	free(b64);
	return rc;
}

int tb_box_write(struct tb_box *box, const char *path,
                 const unsigned char *data, size_t len, uint32_t mode,
                 char *err, size_t errlen)
{
	char perr[TASKBOX_ERRBUF_SIZE] = "";
	uint64_t t0;
	int rc;

	if (!box->inst->plugin->ops.write_file)
		return write_by_exec(box, path, data, len, mode, err, errlen);
	t0 = tb_provider_call_start();
	rc = box->inst->plugin->ops.write_file(box->conn, path, data, len, mode,
	                                       perr, sizeof(perr));
	tb_provider_call_end(TB_POP_WRITE_FILE, t0, rc);
	if (rc != TASKBOX_OK)
		snprintf(err, errlen, "sandbox %s: writing %s: %s (%s)",
		         box->id, path, tb_status_text(rc),
		         perr[0] ? perr : "no detail from the provider");
	return rc;
}
