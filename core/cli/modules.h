/* The server's tool modules, started in one place. */
#ifndef TB_MODULES_H
#define TB_MODULES_H

#include <stdbool.h>

struct tb_config;

/* Registers every module's tools and shutdown hooks, after the provider
 * registry is open and before tb_serve. test_tools adds the fixture tools
 * that only tests list. Returns 0, or -1 after logging why. */
int tb_modules_init(const struct tb_config *cfg, bool test_tools);

/* Frees what the modules kept, once serving has ended. */
void tb_modules_fini(void);

#endif /* TB_MODULES_H */
