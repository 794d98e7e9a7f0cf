/* libmicrohttpd, loaded when the HTTP transport starts (http_mhd_load):
 * the stdio server never maps it, nor the TLS library and the rest that
 * come with it, whose loading alone took three times what spawning and
 * initializing the stdio server takes. The HTTP files call the library
 * through `mhd.NAME(...)` for each MHD_NAME they use. */
#ifndef TB_HTTP_MHD_H
#define TB_HTTP_MHD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/select.h>
#include <sys/socket.h>

#include <microhttpd.h>

#define HTTP_MHD_FN(name) __typeof__(MHD_##name) *name

struct http_mhd {
	HTTP_MHD_FN(start_daemon);
	HTTP_MHD_FN(stop_daemon);
	HTTP_MHD_FN(quiesce_daemon);
	HTTP_MHD_FN(get_daemon_info);
	HTTP_MHD_FN(get_connection_info);
	HTTP_MHD_FN(suspend_connection);
	HTTP_MHD_FN(resume_connection);
	HTTP_MHD_FN(queue_response);
	HTTP_MHD_FN(create_response_from_buffer);
	HTTP_MHD_FN(create_response_from_callback);
	HTTP_MHD_FN(create_response_from_buffer_with_free_callback_cls);
	HTTP_MHD_FN(add_response_header);
	HTTP_MHD_FN(destroy_response);
	HTTP_MHD_FN(lookup_connection_value);
	HTTP_MHD_FN(get_connection_values_n);
	HTTP_MHD_FN(is_feature_supported);
};

/* The library's functions, set by http_mhd_load. */
extern struct http_mhd mhd;

/* Loads the library (once; later calls return at once). Returns 0, or -1
 * with why (which file, which symbol) in why. */
int http_mhd_load(char *why, size_t whylen);

#endif /* TB_HTTP_MHD_H */
