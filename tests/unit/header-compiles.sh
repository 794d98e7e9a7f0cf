#!/bin/sh
# The public header compiles on its own, and a plugin using its entry macro
# compiles, as C99 and C11 with -pedantic -Wall -Wextra -Werror and as C++;
# so do the ABI 1.5 declarations a plugin writes (describe and list with
# struct taskbox_sandbox_info and taskbox_list_fn, create_req.owner).
set -eu

cc=${TASKBOX_CC:-cc}
cxx=${TASKBOX_CXX:-c++}
inc="$TASKBOX_SRCDIR/include"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/plugin.c" <<'SRC'
#include <taskbox/provider.h>

static const struct taskbox_provider desc = {
    TASKBOX_ABI_MAJOR, TASKBOX_ABI_MINOR, sizeof(struct taskbox_provider),
    "check", "1", "header check", {0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    TASKBOX_FEATURE_HOST_EXEC, 0, 0, 0};

TASKBOX_PROVIDER_DEFINE(desc)
SRC
# A 1.5 plugin's describe and list: the struct, the callback type, the
# owner of a create request, and both ops in the descriptor.
cat >"$tmp/plugin15.c" <<'SRC'
#include <string.h>
#include <taskbox/provider.h>

static int check_create(void *instance, const struct taskbox_create_req *req,
                        char *id, char *errbuf, size_t errlen)
{
	const char *owner = req->struct_size >=
	                            offsetof(struct taskbox_create_req, owner) +
	                                sizeof req->owner
	                        ? req->owner
	                        : NULL;

	(void)instance;
	(void)errbuf;
	(void)errlen;
	id[0] = (char)(owner && owner[0] ? 'o' : 'n');
	id[1] = '\0';
	return TASKBOX_OK;
}

static void fill(struct taskbox_sandbox_info *info)
{
	info->struct_size = sizeof *info;
	strcpy(info->id, "x");
	strcpy(info->owner, "alice@example.org");
	info->created_s = (int64_t)1;
	info->expires_s = (int64_t)0;
}

static int check_describe(void *conn, struct taskbox_sandbox_info *info,
                          char *errbuf, size_t errlen)
{
	(void)conn;
	(void)errbuf;
	(void)errlen;
	fill(info);
	return TASKBOX_OK;
}

static int check_list(void *instance, const char *owner,
                      taskbox_list_fn each, void *arg, char *errbuf,
                      size_t errlen)
{
	struct taskbox_sandbox_info info;

	(void)instance;
	(void)owner;
	(void)errbuf;
	(void)errlen;
	memset(&info, 0, sizeof info);
	fill(&info);
	(void)each(arg, &info);
	return TASKBOX_OK;
}

static const struct taskbox_provider desc = {
    TASKBOX_ABI_MAJOR, TASKBOX_ABI_MINOR, sizeof(struct taskbox_provider),
    "check", "1", "a 1.5 plugin",
    {0, 0, check_create, 0, 0, 0, 0, 0, 0, 0},
    0, 0, check_describe, check_list};

TASKBOX_PROVIDER_DEFINE(desc)
SRC
# A plugin written for ABI 1.0 (designated fields, no features) still
# compiles, and reports the struct_size of 1.0.
cat >"$tmp/plugin10.c" <<'SRC'
#include <taskbox/provider.h>

static const struct taskbox_provider desc = {
    .abi_major = 1,
    .abi_minor = 0,
    .struct_size = offsetof(struct taskbox_provider, features),
    .name = "check",
    .version = "1",
    .description = "a 1.0 plugin"};

TASKBOX_PROVIDER_DEFINE(desc)
SRC
cp "$tmp/plugin.c" "$tmp/plugin.cc"
cp "$tmp/plugin15.c" "$tmp/plugin15.cc"
echo '#include <taskbox/provider.h>' >"$tmp/alone.c"
cp "$tmp/alone.c" "$tmp/alone.cc"

fail=0
run() {
	if "$@" 2>"$tmp/err"; then
		echo "ok: $*"
	else
		echo "FAIL: $*"
		cat "$tmp/err"
		fail=1
	fi
}

strict="-pedantic -Wall -Wextra -Werror -I$inc -c"
for std in c99 c11; do
	for f in alone plugin plugin10 plugin15; do
		run $cc -std=$std $strict -o "$tmp/$f-$std.o" "$tmp/$f.c"
	done
done
for std in c++11 c++17; do
	for f in alone plugin plugin15; do
		run $cxx -std=$std $strict -o "$tmp/$f-$std.o" "$tmp/$f.cc"
	done
done
if [ "$fail" -eq 0 ]; then
	nm "$tmp/plugin-c99.o" | grep -q ' T taskbox_provider_entry_v1$' ||
		{ echo "FAIL: C entry symbol missing"; fail=1; }
	nm "$tmp/plugin-c++17.o" | grep -q ' T taskbox_provider_entry_v1$' ||
		{ echo "FAIL: C++ entry symbol is not extern \"C\""; fail=1; }
	nm "$tmp/plugin15-c++17.o" | grep -q ' T taskbox_provider_entry_v1$' ||
		{ echo "FAIL: the 1.5 C++ plugin's entry is not extern \"C\""; fail=1; }
fi
exit $fail
