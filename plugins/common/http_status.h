/* The mapping of HTTP statuses to ABI codes shared by the plugins that
 * speak HTTP. Compiled into each plugin (a plugin links no core code), so
 * every name here is hidden. */
#ifndef TB_PLUGIN_HTTP_STATUS_H
#define TB_PLUGIN_HTTP_STATUS_H

#include <stddef.h>

/* One status a plugin maps apart from the shared table. */
struct tb_http_status_override {
	long status;
	int code; /* a TASKBOX_E_* code */
};

/* The ABI code for status: the first entry of overrides (n of them; NULL
 * when n is 0) naming it, else the shared table (other 5xx: unavailable,
 * anything else unknown: a protocol error). */
__attribute__((visibility("hidden"))) int
tb_http_status_code(long status,
                    const struct tb_http_status_override *overrides, size_t n);

#endif /* TB_PLUGIN_HTTP_STATUS_H */
