/* Long arguments kept out of the exec URL. pods/exec carries argv in the
 * query string, and URLs are limited (64 KiB in many servers, 8-16 KiB in
 * some proxies), while the host passes its supervisor's source and 64 KiB
 * writes as arguments. An argument longer than TB_K8S_SPILL_MIN goes to a
 * content-addressed file in the pod (HOME/.taskbox/args/SHA1, written once
 * with write_file) and the wrapper reads it back into its place. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "k8s_int.h"

#define ARG_PREFIX "\001taskbox-argfile:"

/* Rebuilds "$@" with each prefixed argument replaced by its file's text;
 * exits 96 (before the pid marker) when a file is missing. */
const char tb_k8s_spill_prelude[] =
    "P=$(printf '\\001taskbox-argfile:'); n=$#; i=0; while [ $i -lt $n ]; "
    "do a=$1; shift; case $a in \"$P\"*) f=${a#\"$P\"}; [ -f \"$f\" ] || "
    "exit 96; a=$(cat \"$f\"; echo x); a=${a%x};; esac; set -- \"$@\" "
    "\"$a\"; i=$((i+1)); done; ";

static void sha1_hex(const char *s, size_t n, char *out)
{
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned int dlen = 0, i;

	EVP_Digest(s, n, d, &dlen, EVP_sha1(), NULL);
	for (i = 0; i < dlen; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
	out[2 * dlen] = '\0';
}

int tb_k8s_spill(const struct tb_k8s_conn *c, const char **argv,
                 struct tb_k8s_spilled *sp)
{
	size_t i;

	memset(sp, 0, sizeof *sp);
	for (i = 0; argv[i]; i++) {
		size_t n = strlen(argv[i]);
		char hex[41], *ref;
		struct tb_k8s_argfile *f;

		if (n < TB_K8S_SPILL_MIN)
			continue;
		if (sp->count == TB_K8S_SPILL_MAX)
			break;
		f = &sp->files[sp->count];
		sha1_hex(argv[i], n, hex);
		snprintf(f->path, sizeof f->path, "%s/.taskbox/args/%s",
		         c->inst->workdir, hex);
		ref = malloc(strlen(ARG_PREFIX) + strlen(f->path) + 1);
		if (!ref)
			return -1;
		sprintf(ref, "%s%s", ARG_PREFIX, f->path);
		f->text = argv[i];
		f->len = n;
		f->ref = ref;
		argv[i] = ref;
		sp->count++;
	}
	return 0;
}

int tb_k8s_spill_upload(struct tb_k8s_conn *c, const struct tb_k8s_spilled *sp,
                        char *errbuf, size_t errlen)
{
	size_t i;
	int rc;

	for (i = 0; i < sp->count; i++) {
		rc = tb_k8s_write_file(c, sp->files[i].path,
		                       (const unsigned char *)sp->files[i].text,
		                       sp->files[i].len, 0600, errbuf, errlen);
		if (rc != TASKBOX_OK)
			return rc;
	}
	return TASKBOX_OK;
}

void tb_k8s_spill_free(struct tb_k8s_spilled *sp)
{
	size_t i;

	for (i = 0; i < sp->count; i++)
		free(sp->files[i].ref);
	memset(sp, 0, sizeof *sp);
}
