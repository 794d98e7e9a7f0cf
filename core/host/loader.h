/* Plugin modules: finding, loading and checking them. The one place that
 * calls libltdl; every lt_* call holds one mutex. */
#ifndef TB_LOADER_H
#define TB_LOADER_H

#include <stddef.h>
#include "taskbox/provider.h"

/* A loaded module whose descriptor passed every check. */
struct tb_plugin;

/* Where modules are looked for: plugin_dir (may be NULL), then each
 * directory of $TASKBOX_PLUGIN_PATH (colon-separated), then the modules
 * linked into the binary, then the installed plugin directory. Initialises
 * libltdl. Call once before any other function here; not thread-safe.
 * Returns 0, or -1 with the reason in err. */
int tb_loader_init(const char *plugin_dir, char *err, size_t errlen);

/* Declares the modules linked into the binary: symlist is libtool's
 * lt_preloaded_symbols of the program (a const lt_dlsymlist *). Call before
 * tb_loader_init; programs that embed no module do not call it. */
void tb_loader_set_builtin(const void *symlist);

/* Unloads whatever is left and shuts libltdl down. */
void tb_loader_exit(void);

/* Finds module name (NAME.la, else NAME.so) along the search path, loads
 * it and checks its descriptor. Loading a name again returns the same
 * plugin with one more reference. On failure writes one line naming the
 * file and the reason into err and returns NULL. Thread-safe. */
struct tb_plugin *tb_plugin_load(const char *name, char *err, size_t errlen);

/* Like tb_plugin_load for one file (a path with a directory, or
 * "(built in)/NAME" for a module linked into the binary); the module name
 * is the file's base name without its extension. Thread-safe. */
struct tb_plugin *tb_plugin_load_file(const char *path, char *err,
                                      size_t errlen);

/* Drops one reference; the module is unloaded with the last one. Callers
 * hold a reference for as long as any instance of the plugin lives.
 * Thread-safe. */
void tb_plugin_release(struct tb_plugin *plugin);

/* The plugin's checked copy of its descriptor; fields past the plugin's
 * struct_size are zero. Valid while a reference is held. */
const struct taskbox_provider *tb_plugin_desc(const struct tb_plugin *plugin);

/* The file it was loaded from. Valid while a reference is held. */
const char *tb_plugin_file(const struct tb_plugin *plugin);

/* Calls fn once per candidate module along the search path, in search
 * order: every NAME.la (or NAME.so without a NAME.la) of each directory and
 * each module linked into the binary. Not thread-safe. */
void tb_loader_foreach(void (*fn)(const char *name, const char *path,
                                  void *arg),
                       void *arg);

/* The search path as text, for messages. */
const char *tb_loader_path(void);

#endif /* TB_LOADER_H */
