/* A shared library opened when it is first needed, by its soname, with the
 * symbols a caller uses found into a table of function pointers: what a
 * process that never needs the library never maps (nor runs its
 * constructors). Thread-safe; a library once opened is never closed. */
#ifndef TB_LAZY_LIB_H
#define TB_LAZY_LIB_H

#include <pthread.h>
#include <stddef.h>

struct tb_lazy_sym {
	const char *name; /* the symbol */
	void *slot;       /* where its address goes (a function pointer) */
};

struct tb_lazy_lib {
	const char *soname;
	const struct tb_lazy_sym *syms;
	size_t n_syms;
	/* below: tb_lazy_lib_load's, zero to start (TB_LAZY_LIB_INIT) */
	pthread_mutex_t lock;
	int state; /* 0 not tried yet, 1 loaded, -1 failed */
	char why[256];
};

#define TB_LAZY_LIB_INIT(soname_, syms_)                                       \
	{                                                                      \
		.soname = (soname_), .syms = (syms_),                          \
		.n_syms = sizeof(syms_) / sizeof((syms_)[0]),                  \
		.lock = PTHREAD_MUTEX_INITIALIZER                              \
	}

/* Opens lib and fills every slot, the first time; later calls return the
 * first one's result. 0, or -1 with why in err (the soname and what
 * failed). */
int tb_lazy_lib_load(struct tb_lazy_lib *lib, char *err, size_t errlen);

#endif /* TB_LAZY_LIB_H */
