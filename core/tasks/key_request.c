/* Digests of start requests kept with idempotency keys (key_request.h). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "base/crypto_lib.h"
#include "tasks/key_request.h"

#define FIELDS 5
#define HEX_PER_FIELD 16

static const char *const field_names[FIELDS] = {"command", "cwd", "timeout",
                                                "stdin", "tty"};

/* Appends the first 8 bytes of SHA-256("taskbox key request v1", name,
 * value, with a NUL after each) to out as 16 hexadecimal digits. */
static int field_digest(const char *name, const char *value, char *out)
{
	static const char domain[] = "taskbox key request v1";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	EVP_MD_CTX *ctx;
	int ok;

	if (tb_crypto_load(NULL, 0) < 0)
		return -1;
	ctx = tb_crypto.MD_CTX_new();
	ok = ctx != NULL &&
	     tb_crypto.DigestInit_ex(ctx, tb_crypto.sha256(), NULL) == 1 &&
	     tb_crypto.DigestUpdate(ctx, domain, sizeof(domain)) == 1 &&
	     tb_crypto.DigestUpdate(ctx, name, strlen(name) + 1) == 1 &&
	     tb_crypto.DigestUpdate(ctx, value, strlen(value) + 1) == 1 &&
	     tb_crypto.DigestFinal_ex(ctx, md, &mdlen) == 1 && mdlen >= 8;
	tb_crypto.MD_CTX_free(ctx);
	if (!ok)
		return -1;
	for (int i = 0; i < HEX_PER_FIELD / 2; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
	return 0;
}

int tb_key_request(const struct tb_sup_start_req *req, char *out)
{
	char timeout[16], tty[48], cwd[4097 + 1];
	const char *stdin_mode = req->stdin_mode ? req->stdin_mode : "null";
	int is_tty = strcmp(stdin_mode, "tty") == 0;
	const char *values[FIELDS];
	char *p = out;

	/* A cwd given and none given differ; "1" marks one given. */
	snprintf(cwd, sizeof(cwd), "%s%s", req->cwd ? "1" : "0",
	         req->cwd ? req->cwd : "");
	snprintf(timeout, sizeof(timeout), "%u", req->timeout_s);
	if (is_tty)
		snprintf(tty, sizeof(tty), "1 %ux%u", req->rows, req->cols);
	else
		snprintf(tty, sizeof(tty), "0");
	values[0] = req->command;
	values[1] = cwd;
	values[2] = timeout;
	values[3] = stdin_mode;
	values[4] = tty;
	memcpy(p, "v1", 2);
	p += 2;
	for (int i = 0; i < FIELDS; i++) {
		*p++ = '-';
		if (field_digest(field_names[i], values[i], p) < 0)
			return -1;
		p += HEX_PER_FIELD;
	}
	*p = '\0';
	return 0;
}

/* Nonzero when s is a digest of this version. */
static int well_formed(const char *s)
{
	if (strlen(s) != TB_KEY_REQUEST_LEN || strncmp(s, "v1", 2) != 0)
		return 0;
	for (int i = 0; i < FIELDS; i++) {
		const char *f = s + 2 + i * (HEX_PER_FIELD + 1);

		if (f[0] != '-' ||
		    strspn(f + 1, "0123456789abcdef") < HEX_PER_FIELD)
			return 0;
	}
	return 1;
}

int tb_key_request_diff(const char *kept, const char *mine, char *what,
                        size_t whatlen)
{
	const char *differ[FIELDS];
	int n = 0;

	if (!well_formed(kept) || !well_formed(mine))
		return -1;
	for (int i = 0; i < FIELDS; i++) {
		size_t at = 3 + (size_t)i * (HEX_PER_FIELD + 1);

		if (memcmp(kept + at, mine + at, HEX_PER_FIELD) != 0)
			differ[n++] = field_names[i];
	}
	if (n == 0)
		return 0;
	what[0] = '\0';
	for (int i = 0; i < n; i++) {
		size_t len = strlen(what);

		snprintf(what + len, whatlen - len, "%s%s",
		         i == 0       ? ""
		         : i == n - 1 ? " and "
		                      : ", ",
		         differ[i]);
	}
	return 1;
}
