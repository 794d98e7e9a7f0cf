/* http_mhd_load (http_mhd.h): dlopen of the library by the soname found at
 * build time, then one dlsym per function. */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>

#include "transport/http_mhd.h"

struct http_mhd mhd;

/* Finds one symbol into *slot; returns 0, or -1 with why. */
static int bind_symbol(void *lib, const char *name, void *slot, char *why,
                       size_t whylen)
{
	void *fn = dlsym(lib, name);

	if (!fn) {
		snprintf(why, whylen, "%s: no symbol %s", TB_MHD_SONAME, name);
		return -1;
	}
	*(void **)slot = fn;
	return 0;
}

#define BIND(name) bind_symbol(h, "MHD_" #name, &mhd.name, why, whylen)

int http_mhd_load(char *why, size_t whylen)
{
	static void *lib;

	if (lib)
		return 0;
	/* RTLD_NODELETE: never unloaded, as a linked library would not be. */
	void *h = dlopen(TB_MHD_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (!h) {
		snprintf(why, whylen, "%s", dlerror());
		return -1;
	}
	if (BIND(start_daemon) || BIND(stop_daemon) || BIND(quiesce_daemon) ||
	    BIND(get_daemon_info) || BIND(get_connection_info) ||
	    BIND(suspend_connection) || BIND(resume_connection) ||
	    BIND(queue_response) || BIND(create_response_from_buffer) ||
	    BIND(create_response_from_callback) ||
	    BIND(create_response_from_buffer_with_free_callback_cls) ||
	    BIND(add_response_header) || BIND(destroy_response) ||
	    BIND(lookup_connection_value) || BIND(get_connection_values_n) ||
	    BIND(is_feature_supported))
		return -1;
	lib = h;
	return 0;
}
