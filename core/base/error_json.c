/* The body of a tool error result, {"error": message}, for every layer
 * that builds tool-shaped results. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error_json.h"
#include "base/utf8_page.h"

int tb_result_or_oom(json_t **result)
{
	if (*result)
		return 0;
	*result = tb_error_json("out of memory building the result");
	return 1;
}

static tb_error_filter_fn filter;

void tb_error_json_set_filter(tb_error_filter_fn fn)
{
	filter = fn;
}

json_t *tb_error_json(const char *message)
{
	const unsigned char *in = (const unsigned char *)message;
	unsigned char *filtered = NULL;
	size_t len = strlen(message);
	json_t *text;

	/* Messages may quote a client's input (a path, a cwd) and so a
	 * masked value. */
	if (filter) {
		if (filter(in, len, &filtered, &len) < 0)
			return NULL;
		in = filtered;
	}
	text = tb_utf8_page_json(in, len);
	free(filtered);

	/* Messages may quote bytes a plugin or a sandbox produced. */
	return text ? json_pack("{s:o}", "error", text) : NULL;
}

json_t *tb_error_jsonf(const char *fmt, ...)
{
	char buf[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return tb_error_json(buf);
}
