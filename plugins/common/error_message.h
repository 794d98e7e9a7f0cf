/* One-line error messages for the ABI's errbuf, shared by the plugins.
 * Compiled into each plugin (a plugin links no core code), so every name
 * here is hidden. */
#ifndef TB_PLUGIN_ERROR_MESSAGE_H
#define TB_PLUGIN_ERROR_MESSAGE_H

#include <stdarg.h>
#include <stddef.h>

/* Formats fmt with ap into errbuf (at most errlen bytes) as one line: each
 * occurrence of secret1 and secret2 (NULL or "": none) becomes "****" and
 * newlines, carriage returns and tabs become spaces. No-op without errbuf. */
__attribute__((visibility("hidden"))) __attribute__((format(printf, 5, 0))) void
tb_error_message_v(char *errbuf, size_t errlen, const char *secret1,
                   const char *secret2, const char *fmt, va_list ap);

#endif /* TB_PLUGIN_ERROR_MESSAGE_H */
