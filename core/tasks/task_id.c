/* Task ids from getrandom(2); idempotency keys. */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/random.h>

#include "tasks/task_id.h"

int tb_task_id_new(char *out)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char raw[TB_TASK_ID_LEN / 2];
	size_t got = 0;
	size_t i;

	while (got < sizeof(raw)) {
		ssize_t n = getrandom(raw + got, sizeof(raw) - got, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		got += (size_t)n;
	}
	for (i = 0; i < sizeof(raw); i++) {
		out[2 * i] = hex[raw[i] >> 4];
		out[2 * i + 1] = hex[raw[i] & 15];
	}
	out[TB_TASK_ID_LEN] = '\0';
	return 0;
}

int tb_task_id_valid(const char *s)
{
	size_t i;

	if (s == NULL)
		return 0;
	for (i = 0; i < TB_TASK_ID_LEN; i++) {
		char c = s[i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return 0;
	}
	return s[TB_TASK_ID_LEN] == '\0';
}

bool tb_task_key_valid(const char *key)
{
	size_t n =
	    strspn(key, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	                "0123456789_.-");

	return n > 0 && n <= TB_TASK_KEY_MAX && key[n] == '\0';
}
