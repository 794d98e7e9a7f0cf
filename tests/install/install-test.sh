#!/bin/sh
# Installs the build into a temporary root, builds a plugin out of tree
# with nothing but the installed header and `pkg-config --cflags
# taskbox-provider`, and has the installed taskbox load it.
set -eu

builddir=${TASKBOX_BUILDDIR:?run through make check}
cc=${TASKBOX_CC:-cc}
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT

${MAKE:-make} -s -C "$builddir" install DESTDIR="$root/dest" >"$root/install.log" 2>&1 || {
	cat "$root/install.log"
	echo "FAIL: make install"
	exit 1
}

# Where the build's prefix landed inside the temporary root.
pc=$(find "$root/dest" -name taskbox-provider.pc | head -n 1)
bin=$(find "$root/dest" -path '*/bin/taskbox' | head -n 1)
header=$(find "$root/dest" -path '*/include/taskbox/provider.h' | head -n 1)
supervisor=$(find "$root/dest" -path '*/libexec/taskbox/taskbox-supervisor' | head -n 1)
for f in "$pc" "$bin" "$header" "$supervisor"; do
	[ -n "$f" ] || { echo "FAIL: make install left out a file"; exit 1; }
done
echo "installed: $bin, $header, $pc"

PKG_CONFIG_PATH=$(dirname "$pc")
PKG_CONFIG_SYSROOT_DIR="$root/dest"
export PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
cflags=$(pkg-config --cflags taskbox-provider)
echo "pkg-config --cflags taskbox-provider: $cflags"

mkdir "$root/src" "$root/plugins"
cat >"$root/src/outside.c" <<'SRC'
#include <stdio.h>
#include <taskbox/provider.h>

static const struct taskbox_host *the_host;
static int o_init(const struct taskbox_host *host, const char *settings,
                  void **instance, char *errbuf, size_t errlen)
{
	(void)settings;
	(void)errbuf;
	(void)errlen;
	the_host = host;
	*instance = host->alloc(1);
	return *instance ? TASKBOX_OK : TASKBOX_E_NOMEM;
}
static void o_fini(void *instance) { the_host->free(instance); }
static int o_create(void *i, const struct taskbox_create_req *r, char *id,
                    char *e, size_t n)
{ (void)i; (void)r; (void)e; (void)n; snprintf(id, 8, "o-1"); return 0; }
static int o_connect(void *i, const char *id, void **c, char *e, size_t n)
{ (void)id; (void)e; (void)n; *c = i; return 0; }
static void o_close(void *c) { (void)c; }
static int o_exec(void *c, const struct taskbox_exec_req *r,
                  struct taskbox_exec_result *res, char *e, size_t n)
{ (void)c; (void)r; (void)res; (void)e; (void)n; return TASKBOX_E_UNSUPPORTED; }
static int o_read(void *c, const char *p, uint64_t o, size_t l,
                  struct taskbox_buf *d, uint64_t *s, char *e, size_t n)
{ (void)c; (void)p; (void)o; (void)l; (void)d; (void)s; (void)e; (void)n;
  return TASKBOX_E_NOT_FOUND; }
static int o_destroy(void *i, const char *id, char *e, size_t n)
{ (void)i; (void)id; (void)e; (void)n; return 0; }

static const struct taskbox_provider desc = {
	TASKBOX_ABI_MAJOR, TASKBOX_ABI_MINOR, sizeof(struct taskbox_provider),
	"outside", "9.9", "built out of tree",
	{o_init, o_fini, o_create, o_connect, o_close, o_exec, o_read,
	 o_destroy, NULL, NULL}, 0};

TASKBOX_PROVIDER_DEFINE(desc)
SRC
# shellcheck disable=SC2086
$cc -std=c11 -Wall -Wextra -Werror -fPIC -shared $cflags \
	-o "$root/plugins/outside.so" "$root/src/outside.c"

cat >"$root/config.json" <<'JSON'
{"default": "out", "providers": {"out": {"plugin": "outside"}}}
JSON
unset TASKBOX_PLUGIN_PATH TASKBOX_CONFIG
status=0
"$bin" providers --config "$root/config.json" --plugin-dir "$root/plugins" \
	>"$root/out" 2>&1 || status=$?
cat "$root/out"
[ "$status" -eq 0 ] || { echo "FAIL: taskbox providers exited $status"; exit 1; }
grep -Eq "ok +outside +9\.9 +ABI 1\.1 +$root/plugins/outside\.so" "$root/out" ||
	{ echo "FAIL: the outside plugin was not listed as loaded"; exit 1; }
grep -Eq "ok +out \(default\): plugin outside 9\.9" "$root/out" ||
	{ echo "FAIL: the outside instance did not start"; exit 1; }
echo "ok: an out-of-tree plugin built against the installed header loads"
