/* Leveled logging to stderr, one line per call. */
#include "config.h" /* autoconf */

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"

static int threshold = -1;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const level_names[] = {"error", "warn", "info", "debug"};

int tb_log_parse_level(const char *name)
{
	for (int i = 0; i < 4; i++)
		if (name && strcmp(name, level_names[i]) == 0)
			return i;
	return -1;
}

void tb_log_set_level(enum tb_log_level level)
{
	__atomic_store_n(&threshold, (int)level, __ATOMIC_RELAXED);
}

/* The threshold: set explicitly, else $TASKBOX_LOG, else warn. */
static int current_threshold(void)
{
	int t = __atomic_load_n(&threshold, __ATOMIC_RELAXED);
	if (t >= 0)
		return t;
	t = tb_log_parse_level(getenv("TASKBOX_LOG"));
	if (t < 0)
		t = TB_LOG_WARN;
	__atomic_store_n(&threshold, t, __ATOMIC_RELAXED);
	return t;
}

static void log_line(enum tb_log_level level, const char *fmt, va_list ap)
{
	char line[2048];

	vsnprintf(line, sizeof line, fmt, ap);
	pthread_mutex_lock(&log_lock);
	fprintf(stderr, "taskbox: %s: %s\n", level_names[level], line);
	pthread_mutex_unlock(&log_lock);
}

void tb_log(enum tb_log_level level, const char *fmt, ...)
{
	va_list ap;

	if ((int)level > current_threshold())
		return;
	va_start(ap, fmt);
	log_line(level, fmt, ap);
	va_end(ap);
}

void tb_log_always(enum tb_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_line(level, fmt, ap);
	va_end(ap);
}
