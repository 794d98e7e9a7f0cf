#!/bin/sh
# The public header compiles on its own, and a plugin using its entry macro
# compiles, as C99 and C11 with -pedantic -Wall -Wextra -Werror and as C++.
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
    TASKBOX_FEATURE_HOST_EXEC, 0};

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
	for f in alone plugin plugin10; do
		run $cc -std=$std $strict -o "$tmp/$f-$std.o" "$tmp/$f.c"
	done
done
for std in c++11 c++17; do
	for f in alone plugin; do
		run $cxx -std=$std $strict -o "$tmp/$f-$std.o" "$tmp/$f.cc"
	done
done
if [ "$fail" -eq 0 ]; then
	nm "$tmp/plugin-c99.o" | grep -q ' T taskbox_provider_entry_v1$' ||
		{ echo "FAIL: C entry symbol missing"; fail=1; }
	nm "$tmp/plugin-c++17.o" | grep -q ' T taskbox_provider_entry_v1$' ||
		{ echo "FAIL: C++ entry symbol is not extern \"C\""; fail=1; }
fi
exit $fail
