/* tb_lazy_lib_load (lazy_lib.h): dlopen by soname, one dlsym a symbol. */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>

#include "base/lazy_lib.h"

/* Opens and binds lib; the caller holds its lock. */
static int open_lib(struct tb_lazy_lib *lib)
{
	/* RTLD_NODELETE: never unloaded, as a linked library would not be. */
	void *h = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);

	if (!h) {
		snprintf(lib->why, sizeof lib->why, "%s", dlerror());
		return -1;
	}
	for (size_t i = 0; i < lib->n_syms; i++) {
		void *fn = dlsym(h, lib->syms[i].name);
		if (!fn) {
			snprintf(lib->why, sizeof lib->why, "%s: no symbol %s",
			         lib->soname, lib->syms[i].name);
			return -1;
		}
		*(void **)lib->syms[i].slot = fn;
	}
	return 1;
}

int tb_lazy_lib_load(struct tb_lazy_lib *lib, char *err, size_t errlen)
{
	int state;

	pthread_mutex_lock(&lib->lock);
	if (lib->state == 0)
		lib->state = open_lib(lib);
	state = lib->state;
	pthread_mutex_unlock(&lib->lock);
	if (state == 1)
		return 0;
	if (err)
		snprintf(err, errlen, "%s", lib->why);
	return -1;
}
