/* Plugin modules over libltdl: the search path, loading, reference counts.
 * Every lt_* call below holds `lock`. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <ltdl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/loader.h"
#include "base/log.h"
#include "host/provider_check.h"

#ifndef PKGLIBDIR
#error "PKGLIBDIR must name the installed plugin directory"
#endif

/* The search-path slot and file prefix of modules linked into the binary. */
#define BUILTIN "(built in)"

struct tb_plugin {
	struct tb_plugin *next;
	char *file; /* what it was loaded from; the identity of a plugin */
	lt_dlhandle handle;
	unsigned refs;
	struct taskbox_provider desc; /* checked, zero past struct_size */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct tb_plugin *loaded;
static const lt_dlsymlist *builtin_symbols;
static char **dirs; /* the search path; BUILTIN marks the linked-in slot */
static size_t n_dirs;
static char *path_text;
static int ready;

void tb_loader_set_builtin(const void *symlist)
{
	builtin_symbols = symlist;
}

static int add_dir(const char *dir, size_t len)
{
	char **grown;

	if (len == 0)
		return 0;
	grown = realloc(dirs, (n_dirs + 1) * sizeof *dirs);
	if (!grown)
		return -1;
	dirs = grown;
	dirs[n_dirs] = strndup(dir, len);
	if (!dirs[n_dirs])
		return -1;
	n_dirs++;
	return 0;
}

/* Joins the search path into path_text for messages. */
static int build_path_text(void)
{
	size_t len = 1;

	for (size_t i = 0; i < n_dirs; i++)
		len += strlen(dirs[i]) + 1;
	path_text = calloc(1, len);
	if (!path_text)
		return -1;
	for (size_t i = 0; i < n_dirs; i++) {
		if (i)
			strcat(path_text, ":");
		strcat(path_text, dirs[i]);
	}
	return 0;
}

int tb_loader_init(const char *plugin_dir, char *err, size_t errlen)
{
	const char *env = getenv("TASKBOX_PLUGIN_PATH");
	int rc;

	if (plugin_dir && add_dir(plugin_dir, strlen(plugin_dir)) < 0)
		goto nomem;
	while (env && *env) {
		const char *colon = strchr(env, ':');
		size_t len = colon ? (size_t)(colon - env) : strlen(env);
		if (add_dir(env, len) < 0)
			goto nomem;
		env = colon ? colon + 1 : NULL;
	}
	if (builtin_symbols && add_dir(BUILTIN, strlen(BUILTIN)) < 0)
		goto nomem;
	if (add_dir(PKGLIBDIR, strlen(PKGLIBDIR)) < 0 || build_path_text() < 0)
		goto nomem;

	pthread_mutex_lock(&lock);
	rc = builtin_symbols ? lt_dlpreload_default(builtin_symbols) : 0;
	if (rc == 0)
		rc = lt_dlinit();
	if (rc != 0)
		snprintf(err, errlen, "cannot start libltdl: %s", lt_dlerror());
	pthread_mutex_unlock(&lock);
	if (rc != 0)
		return -1;
	ready = 1;
	return 0;
nomem:
	snprintf(err, errlen, "out of memory");
	return -1;
}

void tb_loader_exit(void)
{
	int busy = 0;

	pthread_mutex_lock(&lock);
	for (struct tb_plugin *p = loaded; p; p = p->next) {
		tb_log(TB_LOG_WARN, "%s: still in use at exit, left loaded",
		       p->file);
		busy = 1;
	}
	/* lt_dlexit would unload plugins still in use. */
	if (ready && !busy)
		lt_dlexit();
	ready = 0;
	pthread_mutex_unlock(&lock);
	for (size_t i = 0; i < n_dirs; i++)
		free(dirs[i]);
	free(dirs);
	free(path_text);
	dirs = NULL;
	path_text = NULL;
	n_dirs = 0;
}

const char *tb_loader_path(void)
{
	return path_text ? path_text : "";
}

/* True when s ends with suffix. */
static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* The module name of path: its base name without .la or .so. Returns a new
 * string or NULL when out of memory. */
static char *module_name(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t len;

	base = base ? base + 1 : path;
	len = strlen(base);
	if (ends_with(base, ".la") || ends_with(base, ".so"))
		len -= 3;
	return strndup(base, len);
}

/* True when the binary embeds a module called name. */
static int builtin_has(const char *name)
{
	size_t len = strlen(name);

	if (!builtin_symbols)
		return 0;
	for (const lt_dlsymlist *s = builtin_symbols; s->name; s++)
		if (!s->address && strncmp(s->name, name, len) == 0 &&
		    strcmp(s->name + len, ".a") == 0)
			return 1;
	return 0;
}

/* Opens a module linked into the binary. Holds lock. */
static lt_dlhandle open_builtin(const char *name)
{
	lt_dladvise advise;
	lt_dlhandle handle = NULL;

	if (lt_dladvise_init(&advise) != 0)
		return NULL;
	if (lt_dladvise_preload(&advise) == 0 && lt_dladvise_ext(&advise) == 0)
		handle = lt_dlopenadvise(name, advise);
	lt_dladvise_destroy(&advise);
	return handle;
}

/* Loads and checks one file. Holds lock. */
static struct tb_plugin *load_locked(const char *file, char *err, size_t errlen)
{
	char reason[256];
	struct tb_plugin *p;
	taskbox_provider_entry_fn entry;
	char *name = NULL;
	lt_dlhandle handle = NULL;
	void *sym;
	int is_builtin = strncmp(file, BUILTIN "/", strlen(BUILTIN) + 1) == 0;

	for (p = loaded; p; p = p->next) {
		if (strcmp(p->file, file) == 0) {
			p->refs++;
			return p;
		}
	}
	name = module_name(file);
	if (!name) {
		snprintf(err, errlen, "%s: out of memory", file);
		return NULL;
	}
	if (!tb_plugin_name_valid(name)) {
		snprintf(err, errlen,
		         "%s: module name \"%s\" must match "
		         "^[a-z][a-z0-9_]{0,31}$",
		         file, name);
		goto fail;
	}
	handle = is_builtin ? open_builtin(name) : lt_dlopen(file);
	if (!handle) {
		const char *why = lt_dlerror();
		snprintf(err, errlen, "%s: cannot load: %s", file,
		         why ? why : "unknown error");
		goto fail;
	}
	sym = lt_dlsym(handle, TASKBOX_PROVIDER_ENTRY_NAME);
	if (!sym) {
		snprintf(err, errlen,
		         "%s: no %s symbol (not a taskbox plugin, or built for "
		         "another ABI major)",
		         file, TASKBOX_PROVIDER_ENTRY_NAME);
		goto fail;
	}
	/* A function pointer travels through lt_dlsym's void *. */
	memcpy(&entry, &sym, sizeof entry);
	p = calloc(1, sizeof *p);
	if (!p || !(p->file = strdup(file))) {
		free(p);
		snprintf(err, errlen, "%s: out of memory", file);
		goto fail;
	}
	if (tb_provider_check(entry(), name, &p->desc, reason, sizeof reason) <
	    0) {
		snprintf(err, errlen, "%s: %s", file, reason);
		free(p->file);
		free(p);
		goto fail;
	}
	p->handle = handle;
	p->refs = 1;
	p->next = loaded;
	loaded = p;
	free(name);
	return p;
fail:
	if (handle)
		lt_dlclose(handle);
	free(name);
	return NULL;
}

struct tb_plugin *tb_plugin_load_file(const char *path, char *err,
                                      size_t errlen)
{
	struct tb_plugin *p;

	pthread_mutex_lock(&lock);
	p = load_locked(path, err, errlen);
	pthread_mutex_unlock(&lock);
	return p;
}

/* The first file along the search path that provides module name, as a
 * new string; NULL when there is none (errno ENOENT) or out of memory. */
static char *resolve(const char *name)
{
	static const char *const exts[] = {".la", ".so"};
	char *file;

	for (size_t i = 0; i < n_dirs; i++) {
		if (strcmp(dirs[i], BUILTIN) == 0) {
			if (!builtin_has(name))
				continue;
			if (asprintf(&file, "%s/%s", BUILTIN, name) < 0)
				return NULL;
			return file;
		}
		for (size_t e = 0; e < 2; e++) {
			if (asprintf(&file, "%s/%s%s", dirs[i], name, exts[e]) <
			    0)
				return NULL;
			if (access(file, F_OK) == 0)
				return file;
			free(file);
		}
	}
	errno = ENOENT;
	return NULL;
}

struct tb_plugin *tb_plugin_load(const char *name, char *err, size_t errlen)
{
	struct tb_plugin *p;
	char *file;

	if (!tb_plugin_name_valid(name)) {
		snprintf(err, errlen,
		         "plugin name \"%.64s\" must match "
		         "^[a-z][a-z0-9_]{0,31}$",
		         name ? name : "");
		return NULL;
	}
	file = resolve(name);
	if (!file) {
		if (errno == ENOENT)
			snprintf(err, errlen,
			         "plugin \"%s\" not found (searched %s)", name,
			         tb_loader_path());
		else
			snprintf(err, errlen, "plugin \"%s\": out of memory",
			         name);
		return NULL;
	}
	p = tb_plugin_load_file(file, err, errlen);
	free(file);
	return p;
}

void tb_plugin_release(struct tb_plugin *plugin)
{
	struct tb_plugin **pp;

	if (!plugin)
		return;
	pthread_mutex_lock(&lock);
	if (--plugin->refs == 0) {
		for (pp = &loaded; *pp != plugin; pp = &(*pp)->next)
			;
		*pp = plugin->next;
		lt_dlclose(plugin->handle);
		free(plugin->file);
		free(plugin);
	}
	pthread_mutex_unlock(&lock);
}

const struct taskbox_provider *tb_plugin_desc(const struct tb_plugin *plugin)
{
	return &plugin->desc;
}

const char *tb_plugin_file(const struct tb_plugin *plugin)
{
	return plugin->file;
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Calls fn for the modules of one directory, sorted by file name. */
static void foreach_in_dir(const char *dir,
                           void (*fn)(const char *, const char *, void *),
                           void *arg)
{
	char **names = NULL, **grown, *file;
	size_t n = 0;
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (!ends_with(de->d_name, ".la") &&
		    !ends_with(de->d_name, ".so"))
			continue;
		grown = realloc(names, (n + 1) * sizeof *names);
		if (!grown)
			break;
		names = grown;
		if (!(names[n] = strdup(de->d_name)))
			break;
		n++;
	}
	closedir(d);
	if (n > 1)
		qsort(names, n, sizeof *names, compare_names);
	for (size_t i = 0; i < n; i++) {
		char *mod = module_name(names[i]);
		int shadowed = 0;
		/* NAME.so is reached through NAME.la when both exist. */
		if (mod && ends_with(names[i], ".so"))
			for (size_t j = 0; j < n; j++)
				if (ends_with(names[j], ".la") &&
				    strlen(names[j]) == strlen(mod) + 3 &&
				    strncmp(names[j], mod, strlen(mod)) == 0)
					shadowed = 1;
		if (mod && !shadowed &&
		    asprintf(&file, "%s/%s", dir, names[i]) >= 0) {
			fn(mod, file, arg);
			free(file);
		}
		free(mod);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

void tb_loader_foreach(void (*fn)(const char *name, const char *path,
                                  void *arg),
                       void *arg)
{
	char *file;

	for (size_t i = 0; i < n_dirs; i++) {
		if (strcmp(dirs[i], BUILTIN) != 0) {
			foreach_in_dir(dirs[i], fn, arg);
			continue;
		}
		for (const lt_dlsymlist *s = builtin_symbols; s && s->name;
		     s++) {
			char *mod;
			if (s->address || !ends_with(s->name, ".a"))
				continue;
			mod = strndup(s->name, strlen(s->name) - 2);
			if (mod &&
			    asprintf(&file, "%s/%s", BUILTIN, mod) >= 0) {
				fn(mod, file, arg);
				free(file);
			}
			free(mod);
		}
	}
}
