/* One-line error messages for the ABI's errbuf (error_message.h). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "error_message.h"

/* Replaces every occurrence of secret in msg with "****", in place. */
static void scrub(char *msg, const char *secret)
{
	size_t slen, put;
	char *from = msg, *at;

	if (!secret || !*secret)
		return;
	slen = strlen(secret);
	put = slen < 4 ? slen : 4;
	while ((at = strstr(from, secret)) != NULL) {
		memset(at, '*', put);
		if (slen > put)
			memmove(at + put, at + slen, strlen(at + slen) + 1);
		from = at + put;
	}
}

void tb_error_message_v(char *errbuf, size_t errlen, const char *secret1,
                        const char *secret2, const char *fmt, va_list ap)
{
	char msg[1024];
	char *p;

	if (!errbuf || errlen == 0)
		return;
	vsnprintf(msg, sizeof msg, fmt, ap);
	/* Scrub before truncating, so no prefix of a secret survives. */
	scrub(msg, secret1);
	scrub(msg, secret2);
	for (p = msg; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	snprintf(errbuf, errlen, "%s", msg);
}
