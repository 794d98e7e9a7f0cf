/* Leveled logging to stderr. stdout carries protocol messages only. */
#ifndef TB_LOG_H
#define TB_LOG_H

enum tb_log_level {
	TB_LOG_ERROR = 0,
	TB_LOG_WARN = 1,
	TB_LOG_INFO = 2,
	TB_LOG_DEBUG = 3,
};

/* Sets the threshold; messages above it are dropped. Default: TB_LOG_WARN,
 * or $TASKBOX_LOG (error, warn, info, debug) when set. */
void tb_log_set_level(enum tb_log_level level);

/* Parses "error", "warn", "info" or "debug"; returns -1 on anything else. */
int tb_log_parse_level(const char *name);

/* Writes one line "taskbox: LEVEL: message" to stderr. Thread-safe. */
void tb_log(enum tb_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* tb_log whatever the threshold: for the rare line an operator or a test
 * must always see (where a server listens). */
void tb_log_always(enum tb_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif /* TB_LOG_H */
